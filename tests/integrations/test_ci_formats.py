"""``--format github`` (workflow annotations), ``--format junit`` and ``--format json-lines``,
from the real CLI."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from integrations_support import CLEAN_SOURCE, RULES

from torchlint.config import Settings
from torchlint.run import RunResult
from torchlint.finding import Finding, Severity
from torchlint.formats import FORMAT_NAMES, Report
from torchlint.formats.github import annotation, escape_data, escape_property, render_github
from torchlint.formats.junit import render_junit
from torchlint.rule import rules_by_code

ANNOTATION = re.compile(
    r"^::(?P<level>error|warning) file=(?P<file>[^,:]+),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"endLine=(?P<end_line>\d+),endColumn=(?P<end_col>\d+),title=torchlint \((?P<rule>TL\d{3})\)::(?P<message>.+)$"
)


def _json(run_cli, cwd: Path, *args: str) -> list[dict]:
    result = run_cli(cwd, "check", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_new_formats_are_registered(tmp_path, run_cli):
    for name in ("sarif", "github", "junit", "json-lines"):
        assert name in FORMAT_NAMES
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    for name in FORMAT_NAMES:
        assert run_cli(tmp_path, "check", "--format", name).code == 0, name
    bad = run_cli(tmp_path, "check", "--format", "codeclimate")
    assert bad.code == 2 and "sarif" in bad.err and "Traceback" not in bad.err


# -- github --------------------------------------------------------------------------------

def test_github_annotations_for_every_rule(every_rule_project, run_cli):
    root, written = every_rule_project
    result = run_cli(root, "check", "--format", "github", "--select", "ALL")
    assert result.code == 1
    expected = _json(run_cli, root, "--select", "ALL")
    lines = result.out.splitlines()
    assert len(lines) == len(expected) > 0
    severities = {r.code: r.severity for r in RULES}
    for line, finding in zip(lines, expected):
        match = ANNOTATION.match(line)
        assert match, line
        assert match["level"] == ("error" if severities[match["rule"]] is Severity.ERROR else "warning")
        assert (match["file"], int(match["line"]), int(match["col"]), int(match["end_line"]), int(match["end_col"]),
                match["rule"]) == (finding["path"], finding["line"], finding["column"], finding["end_line"],
                                   finding["end_column"], finding["rule"])
        assert match["message"] == escape_data(finding["message"])
    assert {ANNOTATION.match(line)["rule"] for line in lines} == {r.code for r in RULES}


def test_github_clean_run_prints_nothing(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    result = run_cli(tmp_path, "check", "--format", "github")
    assert (result.code, result.out) == (0, "")


def test_github_escaping():
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("a:b,c%d\ne\r") == "a%3Ab%2Cc%25d%0Ae%0D"
    tl000 = rules_by_code()["TL000"]
    f = Finding("TL000", tl000.name, Severity.WARNING, "dir,x/we:ird%.py", 3, 5, 4, 2, "50% of\nlines: bad, really")
    assert annotation(f) == (
        "::warning file=dir%2Cx/we%3Aird%25.py,line=3,col=5,endLine=4,endColumn=2,title=torchlint (TL000)"
        "::50%25 of%0Alines: bad, really"
    )
    g = Finding("TL000", tl000.name, Severity.ERROR, "t.py", 1, 1, 1, 2, "m")
    assert annotation(g).startswith("::error file=t.py,")
    report = Report(RunResult([f, g], [], ["t.py"]), Settings(enabled=frozenset({"TL000"}), rule_options={}), Path.cwd())
    assert render_github(report).splitlines() == [annotation(f), annotation(g)]


# -- junit ---------------------------------------------------------------------------------

def _parse_junit(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    return root


def _check_counts(root: ET.Element) -> None:
    total_tests = total_failures = 0
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        failures = [c for c in cases if c.find("failure") is not None]
        assert int(suite.get("tests")) == len(cases) >= 1
        assert int(suite.get("failures")) == len(failures)
        assert int(suite.get("errors")) == 0
        total_tests += len(cases)
        total_failures += len(failures)
    assert int(root.get("tests")) == total_tests
    assert int(root.get("failures")) == total_failures


def test_junit_for_every_rule(every_rule_project, run_cli):
    root, written = every_rule_project
    result = run_cli(root, "check", "--format", "junit", "--select", "ALL")
    assert result.code == 1
    expected = _json(run_cli, root, "--select", "ALL")
    tree = _parse_junit(result.out)
    _check_counts(tree)
    assert int(tree.get("failures")) == len(expected)
    suites = {s.get("name"): s for s in tree.findall("testsuite")}
    assert set(suites) == set(written) | {"clean.py"}
    assert int(suites["clean.py"].get("failures")) == 0
    failures = []
    for suite in tree.findall("testsuite"):
        for case in suite.findall("testcase"):
            failure = case.find("failure")
            if failure is not None:
                assert case.get("classname") == suite.get("name") == case.get("file")
                failures.append((suite.get("name"), int(case.get("line")), failure.get("type"), failure.get("message")))
    assert sorted(failures) == sorted((f["path"], f["line"], f["rule"], f["message"]) for f in expected)


def test_junit_clean_run(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    (tmp_path / "b.py").write_text(CLEAN_SOURCE)
    result = run_cli(tmp_path, "check", "--format", "junit", "--output-file", "report.xml")
    assert result.code == 0
    tree = _parse_junit((tmp_path / "report.xml").read_text(encoding="utf-8"))
    _check_counts(tree)
    assert (tree.get("tests"), tree.get("failures")) == ("2", "0")


def test_junit_survives_characters_xml_cannot_carry(tmp_path):
    tl000 = rules_by_code()["TL000"]
    f = Finding("TL000", tl000.name, Severity.ERROR, "a&b<c>.py", 1, 1, 1, 2, 'bad \x00\x1b "quoted" & <tagged> \ud800')
    report = Report(RunResult([f], [], ["a&b<c>.py"]), Settings(enabled=frozenset({"TL000"}), rule_options={}), tmp_path)
    tree = _parse_junit(render_junit(report))
    failure = tree.find("testsuite/testcase/failure")
    assert '"quoted" & <tagged>' in failure.get("message")
    assert tree.find("testsuite").get("name") == "a&b<c>.py"


# -- json-lines ------------------------------------------------------------------------------

def test_json_lines_matches_json(every_rule_project, run_cli):
    root, _ = every_rule_project
    result = run_cli(root, "check", "--format", "json-lines", "--select", "ALL")
    assert result.code == 1
    objects = [json.loads(line) for line in result.out.splitlines()]
    assert objects == _json(run_cli, root, "--select", "ALL")
    keys = {"rule", "name", "severity", "path", "line", "column", "end_line", "end_column", "message"}
    assert objects and all(keys <= set(o) for o in objects)
    assert {o["rule"] for o in objects} == {r.code for r in RULES}


@pytest.mark.parametrize("name", ["json-lines", "github"])
def test_line_formats_print_nothing_when_clean(tmp_path, run_cli, name):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    assert run_cli(tmp_path, "check", "--format", name).out == ""
