"""Output is safe and whole (issue 10, items 7, 10, 11, 12): file names that are not UTF-8
in every format, reports written whole or not at all and never over a linted file, control
characters escaped in the text formats, messages on one line, code frames of bounded width.

Hostile names and sources are made at test time."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from torchlint.cli import main
from torchlint.finding import Finding, Severity

BAD = "def train(:\n    pass\n"
FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "junit")


@pytest.fixture
def tree(project):
    project.write("pyproject.toml", "[tool.torchlint]\n")
    return project


def _run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- item 7: file names that are not UTF-8 -----------------------------------------------------

@pytest.fixture
def undecodable(tree):
    name = b"bad\xff.py"
    try:
        with open(os.fsencode(str(tree.root)) + b"/" + name, "wb") as handle:
            handle.write(BAD.encode())
    except OSError as exc:  # a file system that insists on UTF-8 names
        pytest.skip(f"cannot create a file named {name!r}: {exc}")
    return tree


@pytest.mark.parametrize("fmt", FORMATS)
def test_undecodable_file_name_in_every_format(undecodable, capsys, fmt):
    code, out, err = _run(capsys, "--format", fmt, ".")
    assert code == 1, err
    code, _, err = _run(capsys, "--format", fmt, "-o", "report.out", ".")
    assert code == 1, err
    written = (undecodable.root / "report.out").read_bytes().decode("utf-8")  # valid UTF-8
    assert written == out
    if fmt == "sarif":
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(out)["runs"][0]["results"]]
        assert uris == ["bad%FF.py"]  # the raw byte, percent-encoded
    elif fmt in ("json", "json-lines"):
        first = json.loads(out.splitlines()[0] if fmt == "json-lines" else out)
        path = (first if fmt == "json-lines" else first[0])["path"]
        assert path == "bad\\xff.py"
    else:
        assert "bad\\xff.py" in out


def test_undecodable_file_name_in_a_baseline(undecodable, capsys):
    code, _, err = _run(capsys, "--write-baseline", "base.json", ".")
    assert code == 0, err
    data = json.loads((undecodable.root / "base.json").read_text(encoding="utf-8"))
    assert [e["path"] for e in data["findings"]] == ["bad\\xff.py"]
    code, out, _ = _run(capsys, "--baseline", "base.json", ".")
    assert code == 0 and "All checks passed!" in out  # the escaped path matches again


def test_escapes_are_reversible():
    from torchlint.finding import escape_path, escape_text

    raw = os.fsdecode(b"a\\b\xff\n.py")
    shown = escape_path(raw)
    assert shown == "a\\\\b\\xff\\n.py"
    assert escape_text("x\x1b]0;t\x07\u202e") == "x\\x1b]0;t\\x07\\u202e"


# -- item 10: whole reports, never over a linted file ----------------------------------------

def test_failed_write_leaves_the_previous_report(tree, capsys, monkeypatch):
    tree.write("bad.py", BAD)
    report = tree.write("report.txt", "previous report\n")

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    code, _, err = _run(capsys, "-o", "report.txt", ".")
    assert code == 2
    assert err.splitlines()[-1] == "torchlint: error: cannot write report.txt: No space left on device"
    assert report.read_text() == "previous report\n"
    assert sorted(p.name for p in tree.root.iterdir()) == ["bad.py", "pyproject.toml", "report.txt"]  # no temp left


def test_failed_baseline_write_leaves_the_previous_baseline(tree, capsys, monkeypatch):
    tree.write("bad.py", BAD)
    base = tree.write("base.json", '{"torchlint-baseline": 1, "findings": []}\n')
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    code, _, err = _run(capsys, "--write-baseline", "base.json", ".")
    assert code == 2 and "cannot write" in err
    assert base.read_text() == '{"torchlint-baseline": 1, "findings": []}\n'


def test_report_keeps_its_permissions_and_a_new_one_follows_the_umask(tree, capsys):
    tree.write("bad.py", BAD)
    report = tree.write("report.txt", "old\n")
    os.chmod(report, 0o640)
    assert _run(capsys, "-o", "report.txt", ".")[0] == 1
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o640
    assert report.read_text().startswith("bad.py:1:11: TL000")
    mask = os.umask(0o022)
    try:
        assert _run(capsys, "-o", "new.txt", ".")[0] == 1
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(tree.root / "new.txt").st_mode) == 0o644


def test_report_to_a_device_is_written_not_replaced(tree, capsys):
    tree.write("bad.py", BAD)
    assert _run(capsys, "-o", os.devnull, ".")[0] == 1
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_output_naming_a_linted_file_is_refused(tree, capsys, option):
    source = tree.write("bad.py", BAD)
    code, _, err = _run(capsys, option, "bad.py", ".")
    assert code == 2
    assert err.strip() == f"torchlint: error: {'--output-file' if option == '-o' else option} bad.py: " \
                          "is one of the files being linted; not overwritten"
    assert source.read_text() == BAD


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_empty_output_name_is_an_error(tree, capsys, option):
    tree.write("bad.py", BAD)
    code, out, err = _run(capsys, option, "", ".")
    assert (code, out) == (2, "")
    assert err.strip().endswith(": empty file name")


# -- item 11: control characters ----------------------------------------------------------------

def test_newline_in_a_file_name_cannot_inject_a_workflow_command(tree, capsys):
    tree.write("x\n::error file=a.py,line=1::injected.py", BAD)
    for fmt in ("concise", "full", "github"):
        code, out, _ = _run(capsys, "--format", fmt, ".")
        assert code == 1
        assert not [line for line in out.splitlines() if line.startswith("::error file=a.py")], fmt
    _, out, _ = _run(capsys, "--format", "github", ".")
    assert len(out.splitlines()) == 1


ESC_SOURCE = '''
import torch
losses = []
for batch in loader:
    loss = model(batch)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss + len("\x1b]0;owned\x07\x1b[2J"))
'''


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "junit"])
def test_escape_sequences_from_source_never_reach_the_terminal(tree, capsys, fmt):
    tree.write("train.py", ESC_SOURCE)
    code, out, _ = _run(capsys, "--select", "TL002", "--format", fmt, ".")
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out


def test_json_keeps_the_exact_message(tree, capsys):
    tree.write("train.py", ESC_SOURCE)
    _, out, _ = _run(capsys, "--select", "TL002", "--format", "json", ".")
    assert "\x1b]0;owned\x07" in json.loads(out)[0]["message"]


def test_message_quoting_a_multi_line_expression_is_one_line(tree, capsys):
    tree.write("train.py", """\
        import torch
        losses = []
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            (losses
             ).append(loss)
        """)
    _, out, _ = _run(capsys, "--select", "TL002", "--format", "json", ".")
    message = json.loads(out)[0]["message"]
    assert message.startswith("`(losses ).append(loss)` keeps")
    from torchlint.finding import one_line

    assert one_line("a(\n    b,\r\n    c)") == "a( b, c)"


# -- item 12: code frames of bounded width ----------------------------------------------------

def test_long_line_frame_is_a_window_around_the_column(tree, capsys):
    tree.write("long.py", "x = " + "1 + " * 25_000 + ")\n")  # ~100 KB line, syntax error at its end
    code, out, _ = _run(capsys, ".")
    assert code == 1
    assert len(out) < 2_000
    frame_lines = [line for line in out.splitlines() if "|" in line]
    assert all(len(line) < 220 for line in frame_lines)
    source_line = next(line for line in frame_lines if line.startswith("1 |"))
    caret_line = next(line for line in frame_lines if "^" in line)
    assert source_line.startswith("1 | \u2026") and source_line.endswith(")")
    assert caret_line.index("^") == source_line.index(")")


def test_many_findings_on_one_long_line_stay_bounded(tmp_path):
    from torchlint.formats.text import frame

    line = "y = f(" + "a, " * 32_000 + ")"
    findings = [Finding("TL004", "x", Severity.WARNING, "m.py", 1, c, 1, c + 1, "m") for c in range(7, 96_000, 97)]
    total = sum(len(frame(f, [line], color=False)) for f in findings)
    assert total < len(findings) * 700  # about 3 lines of at most ~210 characters each
    middle = frame(findings[500], [line], color=False).splitlines()
    assert middle[1].startswith("1 | \u2026") and middle[1].endswith("\u2026")
    caret = middle[2].index("^")
    assert caret == len("1 | \u2026") + 200 // 3  # the column sits a third of the way into the window
    assert middle[1][caret] == line[findings[500].column - 1]
