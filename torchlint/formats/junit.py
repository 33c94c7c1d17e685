"""``junit``: a JUnit XML report, for CI systems that show test results.

One ``<testsuite>`` per linted file (named after its path); each finding is a failed
``<testcase>`` (``classname`` the path, ``name`` the rule and position, ``<failure>`` with
the rule code as ``type`` and the message); a file without findings has one passing
testcase. ``tests``/``failures`` counts are given on every suite and on ``<testsuites>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from torchlint.finding import Finding, escape_path, escape_text
from torchlint.formats.text import headline
from torchlint.notebook import place

# Paths and messages are escaped as in the text formats: ``escape_text`` shows every
# character XML 1.0 cannot carry, and every control character, as a visible escape.


def _testcase(suite: ET.Element, f: Finding) -> None:
    cell, line, _ = place(f)
    where = f"line {line}" if cell is None else f"cell {cell}, line {line}"
    case = ET.SubElement(suite, "testcase", {
        "classname": escape_path(f.path),
        "name": f"{f.rule} {f.name} at {where}, column {f.column}",
        "file": escape_path(f.path),
        "line": str(line),
        "time": "0",
    })
    failure = ET.SubElement(case, "failure", {"type": f.rule, "message": escape_text(f.message)})
    failure.text = headline(f)  # escaped by headline


def build(report) -> ET.Element:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in report.result.findings:
        by_file[f.path].append(f)
    paths = sorted(set(report.result.files) | set(by_file))
    root = ET.Element("testsuites", {"name": "torchlint"})
    total_tests = total_failures = 0
    for path in paths:
        findings = by_file.get(path, [])
        tests = max(len(findings), 1)
        suite = ET.SubElement(root, "testsuite", {
            "name": escape_path(path),
            "tests": str(tests),
            "failures": str(len(findings)),
            "errors": "0",
            "skipped": "0",
            "time": "0",
        })
        if findings:
            for f in findings:
                _testcase(suite, f)
        else:
            ET.SubElement(suite, "testcase", {"classname": escape_path(path), "name": "torchlint", "file": escape_path(path),
                                              "time": "0"})
        total_tests += tests
        total_failures += len(findings)
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    root.set("time", "0")
    return root


def render_junit(report) -> str:
    root = build(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
