"""The command line: exit codes, formats, selection, files, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from torchlint import __version__
from torchlint.rule import all_rules

BAD = "def train(:\n    pass\n"
GOOD = "import torch\n\nx = torch.zeros(3)\n"


def test_clean_run_exits_0(project, run):
    project.write("ok.py", GOOD)
    code, out, err = run("check", ".")
    assert code == 0
    assert "All checks passed!" in out
    assert err == ""


def test_findings_exit_1_with_ruff_style_line_and_frame(project, run):
    project.write("bad.py", BAD)
    code, out, _ = run("check", ".")
    assert code == 1
    assert out.splitlines()[0] == "bad.py:1:11: TL000 [syntax-error] syntax error: invalid syntax; nothing in this file was checked"
    assert "1 | def train(:" in out
    assert "^ TL000" in out
    assert out.rstrip().endswith("Found 1 problem (1 error, 0 warnings). Checked 1 file.")


def test_shorthand_without_subcommand(project, run):
    project.write("bad.py", BAD)
    assert run("bad.py")[0] == 1
    assert run(".")[0] == 1


def test_default_path_is_current_directory(project, run):
    project.write("sub/bad.py", BAD)
    code, out, _ = run("check")
    assert code == 1
    assert out.startswith("sub/bad.py:1:11:")


def test_exit_zero(project, run):
    project.write("bad.py", BAD)
    assert run("check", "--exit-zero", ".")[0] == 0


def test_concise_format(project, run):
    project.write("bad.py", BAD)
    code, out, _ = run("check", "--format", "concise", ".")
    assert code == 1
    assert out.splitlines() == [
        "bad.py:1:11: TL000 [syntax-error] syntax error: invalid syntax; nothing in this file was checked",
        "Found 1 problem (1 error, 0 warnings). Checked 1 file.",
    ]


def test_quiet_drops_summary(project, run):
    project.write("bad.py", BAD)
    _, out, _ = run("check", "--format", "concise", "--quiet", ".")
    assert len(out.splitlines()) == 1


def test_json_format_keys_and_values(project, run):
    project.write("pkg/bad.py", BAD)
    code, out, _ = run("check", "--format", "json", ".")
    assert code == 1
    data = json.loads(out)
    # the fingerprint is the one a baseline records for the finding
    run("check", "--write-baseline", "baseline.json", ".")
    [entry] = json.loads((project.root / "baseline.json").read_text())["findings"]
    assert data == [
        {
            "rule": "TL000",
            "name": "syntax-error",
            "severity": "error",
            "path": "pkg/bad.py",
            "line": 1,
            "column": 11,
            "end_line": 1,
            "end_column": 12,
            "message": "syntax error: invalid syntax; nothing in this file was checked",
            "url": "https://github.com/torchlint/torchlint/blob/main/rules/TL000-syntax-error.md",
            "fingerprint": entry["fingerprint"],
        }
    ]
    assert entry["fingerprint"].endswith(":1")


def test_json_lines_format(project, run):
    project.write("a.py", BAD)
    project.write("b.py", BAD)
    _, out, _ = run("check", "--format", "json-lines", ".")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["path"] for r in rows] == ["a.py", "b.py"]


def test_json_clean_is_empty_array(project, run):
    project.write("ok.py", GOOD)
    code, out, _ = run("check", "--format", "json", ".")
    assert code == 0 and json.loads(out) == []


def test_output_file(project, run):
    project.write("bad.py", BAD)
    code, out, _ = run("check", "--format", "json", "-o", "report.json", ".")
    assert code == 1 and out == ""
    assert json.loads((project.root / "report.json").read_text())[0]["rule"] == "TL000"


def test_statistics(project, run):
    project.write("a.py", BAD)
    project.write("b.py", BAD)
    code, out, _ = run("check", "--statistics", ".")
    assert code == 1
    assert out.splitlines()[0].split("\t") == ["    2", "TL000", "-", "[syntax-error]"]


def test_unknown_format_is_usage_error(project, run):
    code, _, err = run("check", "--format", "xml", ".")
    assert code == 2 and "unknown format" in err


def test_unknown_rule_code_in_select_is_an_error(project, run):
    project.write("ok.py", GOOD)
    code, out, err = run("check", "--select", "TL999", ".")
    assert code == 2
    assert "unknown rule code or prefix 'TL999'" in err
    assert "Traceback" not in err


def test_unknown_rule_in_ignore_is_an_error(project, run):
    assert run("check", "--ignore", "XYZ1", ".")[0] == 2


def test_ignore_removes_rule(project, run):
    project.write("bad.py", BAD)
    assert run("check", "--ignore", "TL000", ".")[0] == 0


def test_select_prefix_and_all(project, run):
    project.write("bad.py", BAD)
    assert run("check", "--select", "TL0", ".")[0] == 1
    assert run("check", "--select", "ALL", ".")[0] == 1
    assert run("check", "--select", "all", ".")[0] == 1


def test_missing_path_is_usage_error(project, run):
    code, _, err = run("check", "nope.py")
    assert code == 2 and "nope.py: no such file or directory" in err


def test_unknown_flag_is_usage_error(project, run):
    code, _, err = run("check", "--frobnicate")
    assert code == 2 and "unrecognized arguments" in err


def test_show_files(project, run):
    project.write("a.py", GOOD)
    project.write("pkg/b.pyi", GOOD)
    project.write("notes.txt", "x")
    code, out, _ = run("check", "--show-files", ".")
    assert code == 0
    assert out.splitlines() == ["a.py", "pkg/b.pyi"]


def test_version(run, capsys):
    with pytest.raises(SystemExit) as exc:
        run("--version")
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"torchlint {__version__}"


def test_rules_lists_every_rule(run):
    code, out, _ = run("rules")
    assert code == 0
    for rule in all_rules():
        assert any(line.startswith(f"{rule.code} ") and rule.name in line for line in out.splitlines())


def test_rules_json(run):
    code, out, _ = run("rules", "--format", "json")
    data = json.loads(out)
    assert [d["code"] for d in data] == [d["rule"] for d in data] == [r.code for r in all_rules()]
    assert set(data[0]) == {"code", "name", "summary", "severity", "default_enabled", "fixable", "options", "url",
                            "rule", "default"}  # rule and default: the earlier names, kept
    assert data[1]["url"].endswith(f"/rules/{data[1]['rule']}-{data[1]['name']}.md")
    assert run("rules", "--output-format", "json")[1] == out


def test_rule_page_by_code_and_name(run):
    code, out, _ = run("rule", "TL000")
    assert code == 0 and out.startswith("# TL000 syntax-error")
    assert run("rule", "syntax-error")[1] == out
    assert run("rule", "tl000")[1] == out


def test_unknown_rule_page(run):
    code, _, err = run("rule", "TL999")
    assert code == 2 and "unknown rule" in err


def test_console_script_runs_without_traceback(tmp_path):
    """The real entry point, in a subprocess: bad usage gives one line and exit 2."""
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--select", "NOPE", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("torchlint: error:")
    assert "Traceback" not in proc.stderr
