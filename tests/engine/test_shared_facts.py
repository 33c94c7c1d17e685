"""A rule that skips test files but whose project pass reads them (``Rule.shared_facts``) runs
there only for those facts (``Rule.reports`` False): the facts it keeps, and every finding of
the project, must be what running it in full there gives."""

from __future__ import annotations

import textwrap

import pytest

from torchlint import engine
from torchlint.engine import analyze_source
from torchlint.rule import all_rules
from torchlint.testing import lint_tree
from tests.rules.cases import cases_of

SKIPPING = [r for r in all_rules() if r.skips_test_files and r.has_project_pass()]
_RUN_AS = engine._run_as


def _in_full(rule, path, text, options):
    """``engine._run_as`` as if no file were a test file: every rule reports everywhere."""
    return _RUN_AS(rule, "src/model.py", text, options)


def _cases(rule) -> list[str]:
    valid, invalid = cases_of(rule)
    return [textwrap.dedent(c.code) for c in [*valid, *invalid]]


def test_the_rules_that_share_facts():
    # The catalogue as it stands: a new skipping rule with a project pass joins the tests below.
    assert {r.code: r.shared_facts for r in SKIPPING} == {
        "TL002": (),  # an accumulator class in a test file is no evidence about the project's code
        "TL003": ("called", "imported", "differentiates"),
        "TL004": ("inits", "lr_overwritten"),
        "TL006": ("defined", "helpers", "classes", "on_import"),
        "TL010": (),
        "TL011": (),  # its classes' layers are demanded of the file defining them (test_demanded_facts)
        "TL016": ("written",),
        # a test file's model classes (how their forward ends) and the calls it makes, which
        # another file's loss may be fed through
        "TL009": ("ends", "calls"),
        "TL022": ("ends", "calls"),
        "TL023": ("ends", "calls"),
    }


@pytest.mark.parametrize("rule", SKIPPING, ids=lambda r: r.code)
def test_a_test_files_facts_are_the_shared_part_of_a_full_run(rule, monkeypatch):
    enabled = frozenset({rule.code})
    compared = 0
    for code in _cases(rule):
        data = code.encode("utf-8")
        quiet = analyze_source("tests/test_case.py", data, enabled)
        with monkeypatch.context() as m:
            m.setattr(engine, "_run_as", _in_full)
            full = analyze_source("tests/test_case.py", data, enabled)
        facts = full.record.facts.get(rule.code)
        shared = {key: facts[key] for key in rule.shared_facts if key in facts} if facts else None
        assert quiet.record.facts.get(rule.code) == (shared or None), code
        assert quiet.findings == []
        compared += bool(shared)
    # A rule that shares facts has cases that give them; one that shares none is not run.
    assert compared if rule.shared_facts else not any(
        analyze_source("tests/test_case.py", c.encode(), enabled).record.facts for c in _cases(rule))


@pytest.mark.parametrize("rule", SKIPPING, ids=lambda r: r.code)
def test_the_projects_findings_do_not_change(rule, monkeypatch):
    # Every case of the rule twice in one project, in a package and in its tests: the findings
    # (outside the tests: the run layer drops those) are those of a run where the rule runs in
    # full on the test files too.
    files = {}
    for i, code in enumerate(_cases(rule)):
        files[f"pkg/case_{i}.py"] = code
        files[f"tests/test_case_{i}.py"] = code
    quiet = lint_tree(files, select=[rule.code], dedent=False, each_alone=False)
    monkeypatch.setattr(engine, "_run_as", _in_full)
    full = lint_tree(files, select=[rule.code], dedent=False, each_alone=False)
    assert quiet == full
    assert quiet, "the cases give findings, or this test proves nothing"


# (rule, the file that reads the facts, a test file whose shared facts change its findings)
_EVAL_HELPER = "import torch\n\ndef evaluate(model, x):\n    model.eval()\n    return model(x)\n"
_PROTECTING_TEST = ("import torch\nfrom pkg.evaluation import evaluate\n\n"
                    "def test_evaluate(model, x):\n    with torch.no_grad():\n        evaluate(model, x)\n")
_LR_MODEL = ("import torch\n\nclass TinyLM(torch.nn.Module):\n    def configure_optimizers(self):\n"
             "        return torch.optim.AdamW(self.parameters(), lr=3e-4)\n")
_LR_TEST = ("from pkg.model import TinyLM\n\ndef test_schedule(loader, schedule):\n    model = TinyLM()\n"
            "    optimizer = model.configure_optimizers()\n    for step, x in enumerate(loader):\n"
            "        for group in optimizer.param_groups:\n            group[\"lr\"] = schedule(step)\n"
            "        model(x).sum().backward()\n        optimizer.step()\n")
_CLI = "import argparse\nargs = argparse.ArgumentParser().parse_args()\n"  # the project reads a command line
_SEEDING = "import torch\n\ndef fix_everything(seed):\n    torch.manual_seed(seed)\n"
_TRAIN = ("from test_utils.seeding import fix_everything\n\ndef train(model, loader, optimizer):\n"
          "    for x, y in loader:\n        model(x).backward()\n        optimizer.step()\n\n"
          "if __name__ == '__main__':\n    fix_everything(0)\n    train(model, loader, optimizer)\n")
_PLAIN = ("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.fc = nn.Linear(8, 2)\n")
_EVALUATE = ("import torch\nfrom testing.models import Net\n\nmodel = Net()\nmodel.load_state_dict(torch.load(\"net.pt\"))\n"
             "with torch.no_grad():\n    for x, y in test_loader:\n        model(x)\n")
_WRITER = ("import torch\n\ndef test_save(model, output_dir, epochs):\n    for epoch in range(epochs):\n"
           "        torch.save(model.state_dict(), output_dir / f\"{epoch}epoch.pth\")\n")
_READER = ("import torch\n\ndef average(output_dir, best):\n"
           "    return [torch.load(output_dir / f\"{e}epoch.pth\", weights_only=False) for e in best]\n")
CROSS_FILE = [
    ("TL003", {"pkg/evaluation.py": _EVAL_HELPER}, {"tests/test_evaluation.py": _PROTECTING_TEST}),
    ("TL004", {"pkg/__init__.py": "", "pkg/model.py": _LR_MODEL, "pkg/cli.py": _CLI}, {"tests/test_schedule.py": _LR_TEST}),
    ("TL006", {"train.py": _TRAIN}, {"test_utils/seeding.py": _SEEDING}),
    ("TL011", {"evaluate.py": _EVALUATE}, {"testing/models.py": _PLAIN}),
    ("TL016", {"pkg/average.py": _READER}, {"tests/test_save.py": _WRITER}),
]


@pytest.mark.parametrize("code, package, tests", CROSS_FILE, ids=[c[0] for c in CROSS_FILE])
def test_a_test_files_shared_facts_still_count_for_other_files(code, package, tests, monkeypatch):
    alone = lint_tree(package, select=[code])
    assert alone, "the package alone has a finding the test file's facts settle"
    assert lint_tree({**package, **tests}, select=[code]) == []
    monkeypatch.setattr(engine, "_run_as", _in_full)
    assert lint_tree({**package, **tests}, select=[code], each_alone=False) == []


_STYLE_TRANSFER = """
import torch

class Warmup(torch.optim.Optimizer):
    def __init__(self, params, lr, warmup):
        super().__init__(params, {"lr": lr})

def fit(model, image, steps):
    model.eval()
    image.requires_grad_(True)
    opt = torch.optim.LBFGS([image], lr=1)
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = 0.1 * step
        model(image).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize("optimises_inputs", [True, False])
def test_tl004_keeps_no_facts_of_a_test_that_optimises_its_inputs(optimises_inputs, monkeypatch):
    # TL004 stores nothing of a file whose optimizers are over plain tensors (style transfer):
    # where it keeps only shared facts it must find that optimizer without its walk's notes.
    code = _STYLE_TRANSFER if optimises_inputs else _STYLE_TRANSFER.replace("[image]", "model.parameters()")
    quiet = analyze_source("tests/test_style.py", code.encode(), frozenset({"TL004"}))
    monkeypatch.setattr(engine, "_run_as", _in_full)
    full = analyze_source("tests/test_style.py", code.encode(), frozenset({"TL004"}))
    shared = {k: v for k, v in (full.record.facts.get("TL004") or {}).items() if k in ("inits", "lr_overwritten")}
    assert quiet.record.facts.get("TL004") == (shared or None)
    assert bool(shared) is not optimises_inputs
