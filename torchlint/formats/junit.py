"""``junit``: a JUnit XML report, for CI systems that show test results.

One ``<testsuite>`` per linted file (named after its path); each finding is a failed
``<testcase>`` (``classname`` the path, ``name`` the rule and position, ``<failure>`` with
the rule code as ``type`` and the message); a file without findings has one passing
testcase. ``tests``/``failures`` counts are given on every suite and on ``<testsuites>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from torchlint.finding import Finding
from torchlint.formats.text import headline

# Characters XML 1.0 cannot carry, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _testcase(suite: ET.Element, f: Finding) -> None:
    case = ET.SubElement(suite, "testcase", {
        "classname": _clean(f.path),
        "name": _clean(f"{f.rule} {f.name} at line {f.line}, column {f.column}"),
        "file": _clean(f.path),
        "line": str(f.line),
        "time": "0",
    })
    failure = ET.SubElement(case, "failure", {"type": f.rule, "message": _clean(f.message)})
    failure.text = _clean(headline(f))


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
            "name": _clean(path),
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
            ET.SubElement(suite, "testcase", {"classname": _clean(path), "name": "torchlint", "file": _clean(path),
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
