"""``--statistics`` counts, per rule, the findings ``--fix`` would fix (ruff's ``[*]``): with this
run's settings, and with ``--unsafe-fixes``."""

from __future__ import annotations

import json

# TL004 (a warning) on line 4
# (TL004 on line 4: the script reads its settings from the command line)
WARNS = ("import torch\n\nmodel = torch.nn.Linear(2, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
         "import argparse\nargs = argparse.ArgumentParser().parse_args()\n")
# TL002 with a safe fix, TL001 with an unsafe one
FIXABLE = """\
import torch


def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""


def test_statistics_count_what_fix_would_fix(project, run):
    project.write("train.py", FIXABLE)
    project.write("warn.py", WARNS)
    code, out, _ = run("check", "--statistics", "--select", "TL001,TL002,TL004", ".")
    rows = [line.split("\t") for line in out.splitlines()[:-1]]
    assert rows == [["    1", "TL001", "[ ] 1 fixable with --unsafe-fixes", "[missing-zero-grad]"],
                    ["    1", "TL002", "[*] 1 fixable", "[loss-kept-with-graph]"],
                    ["    1", "TL004", "-", "[hard-coded-hyperparameter]"]]
    code, out, _ = run("check", "--statistics", "--unsafe-fixes", "--select", "TL001,TL002", ".")
    assert [line.split("\t")[2] for line in out.splitlines()[:-1]] == ["[*] 1 fixable", "[*] 1 fixable"]
    code, out, _ = run("check", "--statistics", "--format", "json", "--select", "TL001,TL002", ".")
    assert [(r["code"], r["fixable"], r["fixable_unsafe"]) for r in json.loads(out)] == \
        [("TL001", 0, 1), ("TL002", 1, 1)]
    project.write("pyproject.toml", "[tool.torchlint]\nunfixable = ['TL002']\n")
    code, out, _ = run("check", "--statistics", "--format", "json", "--select", "TL001,TL002", ".")
    assert [(r["code"], r["fixable"], r["fixable_unsafe"]) for r in json.loads(out)] == \
        [("TL001", 0, 1), ("TL002", 0, 0)]
