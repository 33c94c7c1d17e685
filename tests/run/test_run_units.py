"""The pieces of ``torchlint run`` that need no torch: the command line, where a kept graph
is reported, which static finding an observation confirms, and the file mapping."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from torchlint.cli import _run_command, parse_arguments
from torchlint.errors import UsageError
from torchlint.finding import Finding, Severity
from torchlint.trace.child.fence import Files
from torchlint.trace.dryrun import _keeping_line, _region, merge


def test_run_is_check_with_run_and_the_script_arguments(project):
    project.write("train.py", "print('hi')\n")
    argv = _run_command(["--steps", "2", "train.py", "--", "--epochs", "3", "--name", "a b"])
    assert argv == ["check", "--steps", "2", "train.py", "--run", "train.py", "--run-args",
                    "--epochs 3 --name 'a b'"]
    args = parse_arguments(["run", "--synthetic-data", "train.py", "--", "--lr", "0.1"])
    assert (args.run, args.run_args, args.synthetic_data, args.steps, args.paths) == (
        "train.py", "--lr 0.1", True, 3, ["train.py"])


@pytest.mark.parametrize("argv", [[], ["a.py", "b.py"], ["--steps", "2"]])
def test_run_needs_exactly_one_script(argv):
    with pytest.raises(UsageError, match="give one script"):
        _run_command(argv)


def test_run_needs_the_script_to_exist(project):
    with pytest.raises(UsageError, match="run: missing.py: no such file"):
        _run_command(["missing.py"])


def test_run_rejects_a_zero_bound(project):
    project.write("train.py", "print('hi')\n")
    with pytest.raises(UsageError):
        parse_arguments(["run", "--steps", "0", "train.py"])


SCRIPT = textwrap.dedent("""\
    import torch
    total = 0
    losses = []
    for epoch in range(3):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            total += loss
            losses.append(loss)

    def fit(self):
        for batch in self.loader:
            loss = self.step(batch)
            loss.backward()
            self.opt.step()

    def step(self, batch):
        loss = self.model(batch)
        self.outputs.append(loss)
        return loss
    """)


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


def test_kept_graph_is_reported_where_the_name_grows(script):
    assert _keeping_line(script, {"code": "TL002", "file": str(script), "line": 8, "message": "",
                                  "name": "total", "region": [1, 8]}) == 9
    assert _keeping_line(script, {"code": "TL002", "file": str(script), "line": 8, "message": "",
                                  "name": "losses", "region": [1, 8]}) == 10
    # an attribute is appended to in another method: found wherever it is
    assert _keeping_line(script, {"code": "TL002", "file": str(script), "line": 16, "message": "",
                                  "name": "module.outputs", "region": [12, 16]}) == 20
    # nothing keeps it in the loop: the step's line
    assert _keeping_line(script, {"code": "TL002", "file": str(script), "line": 8, "message": "",
                                  "name": "other", "region": [1, 8]}) == 8


def test_region_is_the_outermost_loop_of_the_function(script):
    assert _region(str(script), 9) == _region(str(script), 6) == (4, 10)
    assert _region(str(script), 15) == (13, 16)
    assert _region(str(script), 20) == (18, 21)  # no loop: the function
    assert _region(str(script), 2) == (0, 0)  # module level, no loop


def _finding(rule: str, line: int, message: str = "m", **extra) -> Finding:
    return Finding(rule, "name", Severity.WARNING, "train.py", line, 1, line, 2, message, extra=extra)


def test_merge_confirms_the_static_finding_of_the_same_loop(script, tmp_path):
    static = [_finding("TL001", 8), _finding("TL002", 9), _finding("TL010", 2)]
    observed = [_finding("TL001", 7, "run says", run=True), _finding("TL101", 2, "cpu tensor", run=True),
                _finding("TL002", 19, "outputs", run=True)]
    merged = merge(static, observed, tmp_path)
    by_line = {(f.rule, f.line): f for f in merged}
    assert by_line[("TL001", 8)].confirmed and by_line[("TL001", 8)].extra["run"] == "run says"
    assert by_line[("TL010", 2)].confirmed  # TL101 confirms TL010 at its line
    assert not by_line[("TL002", 9)].confirmed  # the run's TL002 is in another function
    assert ("TL001", 7) not in by_line and ("TL101", 2) not in by_line
    assert by_line[("TL002", 19)].extra["run"] is True
    assert len(merged) == 4


def test_files_outside_the_temporary_directory_are_mapped_into_it(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    files = Files(str(work))
    outside = tmp_path / "project" / "model.pt"
    target = files.mapped(str(outside))
    assert target.startswith(str(work.resolve()) + os.sep) and target.endswith("model.pt")
    assert files.read(str(outside)) == target  # read back where it was written
    inside = str(work / "log.txt")
    assert files.mapped(inside) == inside
    assert files.mapped(3) == 3  # a file descriptor
    assert files.read(str(tmp_path / "never-written")) == str(tmp_path / "never-written")
