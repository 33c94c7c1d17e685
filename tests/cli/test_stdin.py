"""``torchlint check -``: standard input, named by ``--stdin-filename``."""

from __future__ import annotations

import io
import json
import sys

import pytest

BUGGY = "import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n"
TL001 = ("opt.step() in this loop applies gradients that were never cleared, so they add up across iterations; "
         "call opt.zero_grad() once per iteration")


@pytest.fixture
def stdin(monkeypatch):
    def give(data: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    return give


def test_standard_input_is_linted_as_dash(project, run, stdin):
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL001"]\n')
    stdin(BUGGY)
    code, out, err = run("check", "-", "--no-cache")
    assert (code, err) == (1, "")
    assert out.startswith(f"-:5:5: TL001 [missing-zero-grad] {TL001}\n  |\n4 |     loss.backward()\n5 |     opt.step()\n")


def test_stdin_filename_names_the_file_and_its_settings_apply(project, run, stdin):
    project.write("train.py", "print('what is on disk is not linted')\n")
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL001", "TL006"]\n'
                                    '[tool.torchlint.per-file-ignores]\n"scripts/*" = ["TL006"]\n')
    project.write("sub/pyproject.toml", '[tool.torchlint]\nselect = ["TL006"]\n')
    stdin(BUGGY)
    _, out, _ = run("check", "-", "--stdin-filename", "train.py", "--format", "json", "--no-cache")
    assert [(o["path"], o["rule"], o["line"]) for o in json.loads(out)] == [("train.py", "TL006", 2), ("train.py", "TL001", 5)]
    stdin(BUGGY)  # per-file-ignores match the name given
    _, out, _ = run("check", "-", "--stdin-filename", "scripts/new.py", "--format", "concise", "--no-cache")
    assert out.splitlines() == [f"scripts/new.py:5:5: TL001 [missing-zero-grad] {TL001}",
                                "Found 1 problem (1 error, 0 warnings). Checked 1 file.",
                                "1 fixable with --fix --unsafe-fixes"]
    stdin(BUGGY)  # the nearest configuration of that path
    _, out, _ = run("check", "-", "--stdin-filename", "sub/new.py", "--format", "concise", "--no-cache")
    assert [line.split(" ")[:2] for line in out.splitlines()[:-1]] == [["sub/new.py:2:1:", "TL006"]]


def test_a_notebook_on_standard_input(project, run, stdin):
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL001"]\n')
    cells = [{"cell_type": "code", "source": "%matplotlib inline\n", "metadata": {}, "outputs": []},
             {"cell_type": "code", "source": BUGGY, "metadata": {}, "outputs": []}]
    stdin(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    _, out, _ = run("check", "-", "--stdin-filename", "nb.ipynb", "--format", "concise", "--no-cache")
    assert out.splitlines()[0] == f"nb.ipynb:cell 2:line 5:5: TL001 [missing-zero-grad] {TL001}"


@pytest.mark.parametrize("args, message", [
    (("-", "a.py"), "- (standard input) cannot be linted with other paths"),
    (("a.py", "--stdin-filename", "b.py"), "--stdin-filename names standard input: pass - as the path"),
    (("-", "--stdin-filename", ""), "--stdin-filename: empty file name"),
    (("-", "--add-noqa"), "--add-noqa cannot be used with --write-baseline, --show-files or - (standard input)"),
])
def test_misuse_is_one_line(project, run, stdin, args, message):
    project.write("a.py", "x = 1\n")
    stdin(BUGGY)
    assert run("check", *args) == (2, "", f"torchlint: error: {message}\n")
