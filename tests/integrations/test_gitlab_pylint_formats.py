"""``--format gitlab`` (GitLab Code Quality) and ``--format pylint`` (pylint's parseable lines),
against their documented shapes; and a path that does not exist, ``E902``, in every format."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from torchlint.finding import Finding, Severity
from torchlint.formats import FORMAT_NAMES
from torchlint.rule import rules_by_code

# GitLab's Code Quality report (docs.gitlab.com/ci/testing/code_quality, "Code Quality report
# format"): an array of issues, each with these required fields; severity one of GitLab's five;
# a path relative to the repository root; the first line, 1-based.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": r"^(?!/)(?!\./)"},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1},
                                             "end": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}
# pylint's --output-format=parseable: "{path}:{line}: [{msg_id}({symbol}), {obj}] {msg}"
PYLINT_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+): \[(?P<code>[A-Z]+\d+)\((?P<name>[a-z0-9-]+)\), "
                         r"(?P<obj>[^\]]*)\] (?P<message>.+)$")


def test_gitlab_report_of_every_rule(every_rule_project, run_cli):
    root, written = every_rule_project
    result = run_cli(root, "check", "--format", "gitlab", "--select", "ALL")
    assert result.code == 1, result.err
    issues = json.loads(result.out)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len({i["fingerprint"] for i in issues}) == len(issues), "fingerprints must be unique in a report"
    json_findings = json.loads(run_cli(root, "check", "--format", "json", "--select", "ALL").out)
    assert len(issues) == len(json_findings)
    for issue, finding in zip(issues, json_findings):
        rule = rules_by_code()[issue["check_name"]]
        assert issue["check_name"] == finding["rule"]
        assert issue["severity"] == ("major" if rule.severity is Severity.ERROR else "minor")
        assert issue["location"]["path"] == finding["path"] and issue["location"]["path"] in written
        assert issue["location"]["lines"] == {"begin": finding["line"], "end": finding["end_line"]}
        assert issue["description"] == f"{finding['rule']} [{finding['name']}] {finding['message']}"


def test_gitlab_fingerprints_are_stable_when_lines_are_added_above(tmp_path, run_cli):
    source = ("import torch\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\nopt2 = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "args = argparse.ArgumentParser().parse_args()\n")
    (tmp_path / "train.py").write_text(source)
    before = json.loads(run_cli(tmp_path, "check", "--format", "gitlab").out)
    (tmp_path / "train.py").write_text("# a comment\n\n" + source)
    after = json.loads(run_cli(tmp_path, "check", "--format", "gitlab").out)
    assert [i["fingerprint"] for i in before] == [i["fingerprint"] for i in after]
    assert len({i["fingerprint"] for i in before}) == 2  # two identical findings in one file differ
    assert [i["location"]["lines"]["begin"] for i in after] == [4, 5]


def test_a_clean_gitlab_report_is_an_empty_array(tmp_path, run_cli):
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_cli(tmp_path, "check", "--format", "gitlab")
    assert result.code == 0 and json.loads(result.out) == []


def test_pylint_lines_of_every_rule(every_rule_project, run_cli):
    root, written = every_rule_project
    result = run_cli(root, "check", "--format", "pylint", "--select", "ALL")
    assert result.code == 1, result.err
    json_findings = json.loads(run_cli(root, "check", "--format", "json", "--select", "ALL").out)
    lines = result.out.splitlines()
    assert len(lines) == len(json_findings)
    for line, finding in zip(lines, json_findings):
        match = PYLINT_LINE.match(line)
        assert match, line
        assert (match["path"], int(match["line"]), match["code"], match["name"], match["obj"], match["message"]) == \
            (finding["path"], finding["line"], finding["rule"], finding["name"], "", finding["message"])


def test_pylint_escapes_what_a_terminal_would_act_on(tmp_path, run_cli):
    from torchlint.config import Settings
    from torchlint.formats import Report, render
    from torchlint.run import RunResult

    f = Finding("TL000", "syntax-error", Severity.ERROR, "a\nb.py", 3, 1, 3, 2, "bad \x1b[31m thing")
    report = Report(RunResult([f], [], ["a\nb.py"]), Settings(enabled=frozenset({"TL000"}), rule_options={}), tmp_path)
    assert render("pylint", report) == "a\\nb.py:3: [TL000(syntax-error), ] bad \\x1b[31m thing\n"


def test_a_notebook_finding_in_pylint_and_gitlab(tmp_path, run_cli):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": ["import torch\n", "lr = 0.01\n", "opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"]}]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1)
    (tmp_path / "nb.ipynb").write_text(text)
    raw_line = next(n for n, line in enumerate(text.splitlines(), 1) if "lr=0.1" in line)
    out = run_cli(tmp_path, "check", "--format", "pylint").out
    assert out.startswith(f"nb.ipynb:{raw_line}: [TL004(hard-coded-hyperparameter), ] ")
    assert out.rstrip().endswith("(cell 2, line 3)")
    [issue] = json.loads(run_cli(tmp_path, "check", "--format", "gitlab").out)
    assert issue["location"]["lines"]["begin"] == raw_line and issue["description"].endswith("(cell 2)")


# -- E902: a path named on the command line that does not exist -------------------------------

@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_missing_path_is_E902_in_every_format(tmp_path, run_cli, fmt, validate_sarif):
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = run_cli(tmp_path, "check", "--format", fmt, "ok.py", "gone.py")
    assert result.code == 2
    if fmt != "sarif":  # (its driver describes every enabled rule, TL000 included)
        assert "syntax-error" not in result.out and "TL000" not in result.out
    message = "No such file or directory (os error 2)"
    if fmt in ("full", "concise"):
        assert f"gone.py:1:1: E902 [io-error] {message}" in result.out
    elif fmt in ("json", "json-lines"):
        [finding] = json.loads(result.out) if fmt == "json" else [json.loads(result.out)]
        assert (finding["rule"], finding["name"], finding["path"], finding["message"]) == \
            ("E902", "io-error", "gone.py", message)
    elif fmt == "github":
        assert result.out == f"::error file=gone.py,line=1,col=1,endLine=1,endColumn=2,title=torchlint (E902)::{message}\n"
    elif fmt == "gitlab":
        [issue] = json.loads(result.out)
        assert issue["check_name"] == "E902" and issue["location"] == {"path": "gone.py", "lines": {"begin": 1, "end": 1}}
    elif fmt == "pylint":
        assert result.out == f"gone.py:1: [E902(io-error), ] {message}\n"
    elif fmt == "junit":
        [failure] = ET.fromstring(result.out).iter("failure")
        assert failure.get("type") == "E902" and failure.get("message") == message
    elif fmt == "sarif":
        doc = json.loads(result.out)
        validate_sarif(doc)
        [run] = doc["runs"]
        assert run["results"] == []  # nothing to point at in a file that does not exist
        [invocation] = run["invocations"]
        assert invocation["executionSuccessful"] is False
        assert invocation["toolExecutionNotifications"] == [
            {"level": "error", "message": {"text": f"gone.py: {message}"}, "descriptor": {"id": "E902"}}]
    else:  # pragma: no cover - a new format must say how it shows E902
        pytest.fail(f"no E902 check for --format {fmt}")


def test_E902_whatever_is_selected(tmp_path, run_cli):
    result = run_cli(tmp_path, "check", "--format", "concise", "--select", "TL001", "--ignore", "TL000", "nope/")
    assert result.code == 2 and "nope/:1:1: E902 [io-error]" in result.out
    assert Path(tmp_path / "nope").exists() is False
