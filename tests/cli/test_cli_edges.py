"""Issue 13, item 4: the edges of daily CLI use, and item 3's --add-noqa."""

from __future__ import annotations

import io
import json

import pytest

from torchlint.cli import Progress, progress_line, wants_progress

BAD = "def train(:\n    pass\n"
GOOD = "import torch\n\nx = torch.zeros(3)\n"
# TL004 (a warning) on line 4, in a script that reads its settings from the command line; nothing else
WARNS = ("import torch\n\nmodel = torch.nn.Linear(2, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
         "import argparse\nargs = argparse.ArgumentParser().parse_args()\n")


def test_a_missing_path_among_others_is_an_error_and_the_others_are_linted(project, run):
    project.write("bad.py", BAD)
    code, out, err = run("check", "--format", "concise", "nope.py", "bad.py")
    assert code == 2
    assert "torchlint: error: nope.py: no such file or directory" in err
    assert "bad.py:1:11: TL000" in out  # still linted
    assert "nope.py:1:1: E902 [io-error] No such file or directory (os error 2)" in out  # as ruff reports it


def test_a_missing_path_is_a_finding_in_json(project, run):
    project.write("ok.py", GOOD)
    code, out, _ = run("check", "--format", "json", "ok.py", "gone/x.py")
    assert code == 2
    [finding] = json.loads(out)
    assert (finding["path"], finding["rule"], finding["name"], finding["severity"]) == \
        ("gone/x.py", "E902", "io-error", "error")
    assert finding["message"] == "No such file or directory (os error 2)" and finding["url"] is None


def test_a_mistyped_subcommand_is_named(project, run):
    code, out, err = run("chek", ".")
    assert code == 2
    assert "unknown command 'chek', did you mean 'check'?" in err
    assert run("ruls")[2].count("did you mean 'rules'?") == 1
    assert run("tarce")[2].count("did you mean 'trace'?") == 1


def test_an_existing_path_named_like_a_subcommand_is_linted(project, run):
    project.write("chek", GOOD)  # a directory or file of that name is a path
    assert "unknown command" not in run("chek")[2]


def test_an_unknown_option_of_check_gives_checks_usage(project, run):
    code, _, err = run("check", "--fixx", ".")
    assert code == 2
    assert err.startswith("usage: torchlint check ")
    assert "unrecognized arguments: --fixx" in err
    code, _, err = run("--fixx")  # the shorthand is `check` too
    assert code == 2 and err.startswith("usage: torchlint check ")


@pytest.mark.parametrize("fmt", ["json", "json-lines"])
def test_statistics_honour_json_formats(project, run, fmt):
    project.write("a.py", BAD)
    project.write("b.py", BAD)
    project.write("c.py", WARNS)
    code, out, _ = run("check", "--statistics", "--format", fmt, ".")
    assert code == 1
    rows = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
    assert rows == [{"code": "TL000", "name": "syntax-error", "severity": "error", "count": 2,
                     "fixable": 0, "fixable_unsafe": 0},
                    {"code": "TL004", "name": "hard-coded-hyperparameter", "severity": "warning", "count": 1,
                     "fixable": 0, "fixable_unsafe": 0}]


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit"])
def test_statistics_refuse_formats_that_cannot_hold_them(project, run, fmt):
    project.write("a.py", BAD)
    code, out, err = run("check", "--statistics", "--format", fmt, ".")
    assert code == 2 and out == ""
    assert f"--statistics cannot be shown as --format {fmt}" in err


def test_selecting_a_traced_rule_without_trace_says_it_needs_trace(project, run):
    project.write("ok.py", GOOD)
    for selector in ("TL100", "shape-mismatch", "TL1"):
        code, _, err = run("check", "--select", selector, ".")
        assert code == 0
        assert "torchlint: warning: TL100 (shape-mismatch) needs --trace" in err
    assert "needs --trace" not in run("check", "--select", "ALL", ".")[2]
    assert "needs --trace" not in run("check", "--select", "TL001", ".")[2]


def test_no_python_files_found(project, run):
    project.write("notes.txt", "x")
    code, out, err = run("check", ".")
    assert code == 0
    assert "torchlint: warning: No Python files found under the given paths" in err
    assert "No Python files" not in run("check", "-q", ".")[2]
    project.write("ok.py", GOOD)
    assert "No Python files" not in run("check", ".")[2]


def test_summary_says_how_many_files_were_checked(project, run):
    project.write("a.py", GOOD)
    project.write("b.py", GOOD)
    assert run("check", ".")[1].splitlines()[-1] == "All checks passed! Checked 2 files."
    project.write("c.py", BAD)
    assert run("check", "--format", "concise", ".")[1].splitlines()[-1] == \
        "Found 1 problem (1 error, 0 warnings). Checked 3 files."


def test_rule_names_are_accepted_wherever_codes_are(project, run):
    project.write("bad.py", BAD)
    project.write("c.py", WARNS)
    _, out, _ = run("check", "--format", "concise", "--select", "syntax-error", ".")
    assert "TL000" in out and "TL004" not in out
    _, out, _ = run("check", "--format", "concise", "--ignore", "hard-coded-hyperparameter", ".")
    assert "TL000" in out and "TL004" not in out
    _, out, _ = run("check", "--format", "concise", "--select", "TL001", "--extend-select", "syntax-error", ".")
    assert "TL000" in out
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["hard-coded-hyperparameter"]\n'
                                    '[tool.torchlint.per-file-ignores]\n"bad.py" = ["syntax-error"]\n')
    code, out, _ = run("check", "--format", "concise", "--select", "syntax-error,TL004", ".")
    assert code == 1 and "TL004" in out and "bad.py" not in out


def test_a_baseline_run_says_how_many_findings_it_hid(project, run):
    project.write("bad.py", BAD)
    project.write("c.py", WARNS)
    assert run("check", "--write-baseline", "base.json", ".")[0] == 0
    code, _, err = run("check", "--baseline", "base.json", ".")
    assert code == 0
    assert "torchlint: 2 finding(s) hidden by the baseline base.json" in err
    assert "hidden by the baseline" not in run("check", "-q", "--baseline", "base.json", ".")[2]


def test_fail_on_error_ignores_warnings(project, run):
    project.write("c.py", WARNS)
    assert run("check", ".")[0] == 1
    assert run("check", "--fail-on", "warning", ".")[0] == 1
    code, out, _ = run("check", "--fail-on", "error", ".")
    assert code == 0 and "TL004" in out  # still reported
    project.write("bad.py", BAD)
    assert run("check", "--fail-on", "error", ".")[0] == 1
    assert run("check", "--fail-on", "fatal", ".")[0] == 2


# -- the progress bar ----------------------------------------------------------------------------

class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_line_rendering():
    assert progress_line(0, 4, width=8) == "[>       ] 0/4 files"
    assert progress_line(2, 4, width=8) == "[====>   ] 2/4 files"
    assert progress_line(4, 4, width=8) == "[========] 4/4 files"
    assert progress_line(0, 0, width=8) == "[========] 0/0 files"


def test_progress_only_on_a_terminal_and_not_quiet(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    assert wants_progress(_Stream(True), quiet=False)
    assert not wants_progress(_Stream(True), quiet=True)
    assert not wants_progress(_Stream(False), quiet=False)
    assert not wants_progress(object(), quiet=False)  # no isatty at all
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_progress(_Stream(True), quiet=False)


def test_progress_appears_only_after_the_delay_and_is_erased():
    now = [0.0]
    stream = _Stream(True)
    progress = Progress(stream, 3, delay=1.0, interval=0.1, clock=lambda: now[0])
    progress(1)
    progress.close()
    assert stream.getvalue() == ""  # a fast run draws nothing and erases nothing
    now[0] = 1.5
    progress(2)
    now[0] = 1.52
    progress(2)  # within the interval: not redrawn
    progress(3)  # the last file is always drawn
    progress.close()
    assert stream.getvalue() == "\r" + progress_line(2, 3) + "\r" + progress_line(3, 3) + "\r\033[K"


def test_check_draws_no_progress_when_stderr_is_not_a_terminal(project, run):
    project.write("ok.py", GOOD)
    assert "files" not in run("check", ".")[2]


# -- --add-noqa -----------------------------------------------------------------------------------

MULTI = (
    "import torch\r\n"
    "\r\n"
    "model = torch.nn.Linear(2, 2)\r\n"
    "optimizer = torch.optim.SGD(\r\n"
    "    model.parameters(),\r\n"
    "    lr=0.1,  # tuned\r\n"
    "    momentum=0.9,\r\n"
    ")\r\n"
    "other = torch.optim.SGD(model.parameters(), lr=0.2)  # noqa: E501\r\n"
    "args = argparse.ArgumentParser().parse_args()\r\n"
)


def test_add_noqa_silences_every_finding_once(project, run):
    path = project.write("train.py", MULTI.encode())
    before = run("check", "--format", "json", ".")
    lines = sorted({f["line"] for f in json.loads(before[1])})
    assert before[0] == 1 and lines == [6, 7, 9]
    code, out, err = run("check", "--add-noqa", ".")
    assert code == 0 and out == ""
    assert "torchlint: added 3 noqa comments" in err
    assert path.read_bytes() == MULTI.replace(
        "lr=0.1,  # tuned", "lr=0.1,  # tuned  # noqa: TL004").replace(
        "momentum=0.9,", "momentum=0.9,  # noqa: TL004").replace(
        "# noqa: E501", "# noqa: E501, TL004").encode()
    assert run("check", "--extend-select", "TL901", ".")[0] == 0  # silenced, and every code used
    assert run("check", "--add-noqa", ".")[2].startswith("torchlint: added 0 noqa comments")
    assert path.read_bytes().count(b"noqa") == 3


def test_add_noqa_keeps_bytes_that_are_not_utf8(project, run):
    text = b"import torch\n# caf\xe9\noptimizer = torch.optim.SGD([], lr=0.1)\nargs = argparse.ArgumentParser().parse_args()\n"
    path = project.write("train.py", b"# -*- coding: latin-1 -*-\n" + text)
    assert run("check", "--add-noqa", ".")[0] == 0
    assert path.read_bytes() == b"# -*- coding: latin-1 -*-\n" + text.replace(b"lr=0.1)", b"lr=0.1)  # noqa: TL004")


def test_add_noqa_cannot_be_combined_with_write_baseline(project, run):
    project.write("ok.py", GOOD)
    assert run("check", "--add-noqa", "--write-baseline", "b.json", ".")[0] == 2


def test_a_sigterm_whose_exception_python_swallowed_still_ends_the_command():
    """A handler's exception raised in a finalizer or an at-fork hook is printed as "Exception
    ignored" and lost; the command still ends as terminated when it returns."""
    import os
    import signal

    from torchlint import cli
    from torchlint.errors import Terminated

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated):
        with cli._sigterm_interrupts():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):  # the handler runs at the next bytecode boundary
                    pass
            except Terminated:
                pass  # as Python does where it cannot raise
    assert signal.getsignal(signal.SIGTERM) == before
