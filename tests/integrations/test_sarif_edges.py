"""SARIF at its edges: GitHub's 25,000 results per run, a run that exits 2, every rule's
``fullDescription`` a complete sentence, TL016 a security rule."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from torchlint import catalog
from torchlint.config import Settings
from torchlint.errors import RuleError
from torchlint.finding import Finding, Severity
from torchlint.formats import Report
from torchlint.formats.sarif import RESULTS_LIMIT, build, full_description_markdown, omitted, rule_descriptor
from torchlint.rule import all_rules
from torchlint.run import RunResult

# GitHub code scanning's limits on an uploaded SARIF file ("SARIF support for code scanning":
# uploads over them are rejected; the number of results shown is capped further)
GITHUB = {"runs": 20, "results per run": 25_000, "rules per run": 25_000, "tool extensions per run": 100,
          "locations per result": 1_000, "tags per rule": 20, "gzip bytes": 10 * 1024 * 1024}


def synthetic(n: int, errors_every: int = 3) -> list[Finding]:
    """``n`` findings over 300 files, every ``errors_every``-th an error (TL001), in report order."""
    findings = []
    for i in range(n):
        error = i % errors_every == 0
        code, name, severity = ("TL001", "missing-zero-grad", Severity.ERROR) if error else \
            ("TL004", "hard-coded-hyperparameter", Severity.WARNING)
        path = f"pkg/mod_{i % 300:03}.py"
        line = i // 300 + 1
        findings.append(Finding(code, name, severity, path, line, 5, line, 9, f"finding {i}"))
    return sorted(findings, key=lambda f: f.sort_key)


def report_of(findings: list[Finding], tmp_path: Path, **result) -> Report:
    settings = Settings(enabled=frozenset(r.code for r in all_rules() if r.default_enabled), rule_options={})
    return Report(RunResult(findings, result.pop("errors", []), sorted({f.path for f in findings})), settings,
                  tmp_path, **result)


def check_github_limits(doc: dict) -> None:
    assert len(doc["runs"]) <= GITHUB["runs"]
    for run in doc["runs"]:
        assert len(run["results"]) <= GITHUB["results per run"]
        assert len(run["tool"]["driver"]["rules"]) <= GITHUB["rules per run"]
        assert len(run["tool"].get("extensions", [])) <= GITHUB["tool extensions per run"]
        for rule in run["tool"]["driver"]["rules"]:
            assert len(rule["properties"]["tags"]) <= GITHUB["tags per rule"]
            if "security-severity" in rule["properties"]:
                assert 0.0 <= float(rule["properties"]["security-severity"]) <= 10.0
        for result in run["results"]:
            assert 1 <= len(result["locations"]) <= GITHUB["locations per result"]
    assert len(gzip.compress(json.dumps(doc).encode("utf-8"))) <= GITHUB["gzip bytes"]


@pytest.mark.slow
def test_30000_findings_keep_the_first_25000_by_severity_then_position(tmp_path, validate_sarif):
    findings = synthetic(30_000)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert len(errors) == 10_000
    doc = build(report_of(findings, tmp_path))
    validate_sarif(doc)
    check_github_limits(doc)
    [run] = doc["runs"]
    assert len(run["results"]) == RESULTS_LIMIT == 25_000
    kept = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"]) for r in run["results"]]
    warnings = sorted((f for f in findings if f.severity is Severity.WARNING), key=lambda f: f.sort_key)
    wanted = {(f.path, f.line, f.rule) for f in errors + warnings[:15_000]}
    assert set(kept) == wanted  # every error, then the warnings first by path and position
    assert kept == sorted(kept, key=lambda k: (k[0], k[1]))  # in report order
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and note["descriptor"]["id"] == "results-limit"
    assert note["message"]["text"].startswith("5,000 result(s) left out: GitHub code scanning accepts at most 25,000")
    assert run["invocations"][0]["executionSuccessful"] is True  # left out by design, not a failure


def test_the_cap_chooses_by_severity_then_position(tmp_path):
    findings = synthetic(12, errors_every=4)
    doc = build(report_of(findings, tmp_path), limit=5)
    kept = [r["message"]["text"] for r in doc["runs"][0]["results"]]
    errors = [f.message for f in findings if f.severity is Severity.ERROR]
    first_warnings = [f.message for f in findings if f.severity is Severity.WARNING][:2]
    assert sorted(kept) == sorted(errors + first_warnings) and len(kept) == 5
    assert omitted(findings, 5) == 7 and omitted(findings) == 0
    assert "7 result(s) left out" in doc["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.slow
def test_the_command_line_warns_once_on_stderr(tmp_path, run_cli, monkeypatch):
    import torchlint.run

    (tmp_path / "a.py").write_text("x = 1\n")
    findings = synthetic(RESULTS_LIMIT + 3)
    monkeypatch.setattr(torchlint.run, "lint_files", lambda files, *a, **k: RunResult(list(findings), [], ["a.py"]))
    result = run_cli(tmp_path, "check", "--format", "sarif", "-n", "a.py")
    assert result.code == 1
    warnings = [line for line in result.err.splitlines() if "left out" in line]
    assert warnings == ["torchlint: warning: SARIF: 3 finding(s) left out of the report: GitHub code scanning "
                        "accepts at most 25,000 results per run (kept: the first 25,000, errors first, then by "
                        "position)"]
    assert len(json.loads(result.out)["runs"][0]["results"]) == RESULTS_LIMIT
    assert "left out" not in run_cli(tmp_path, "check", "--format", "json", "-n", "a.py").err


# -- a run that exits 2 ----------------------------------------------------------------------

def test_a_rule_error_makes_the_execution_unsuccessful(tmp_path, validate_sarif):
    error = RuleError("TL002", "train.py", "ValueError: boom", "")
    doc = build(report_of([], tmp_path, errors=[error]))
    validate_sarif(doc)
    [invocation] = doc["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"] == \
        "rule TL002 failed on train.py: ValueError: boom"


def test_a_fix_that_could_not_be_written_makes_it_unsuccessful(tmp_path, validate_sarif):
    doc = build(report_of([], tmp_path, failures=["train.py: cannot write the fixed file: Permission denied"]))
    validate_sarif(doc)
    [invocation] = doc["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"] == [
        {"level": "error", "message": {"text": "train.py: cannot write the fixed file: Permission denied"},
         "descriptor": {"id": "fix-error"}}]


def test_every_run_that_exits_2_is_unsuccessful_from_the_command_line(tmp_path, run_cli, validate_sarif):
    (tmp_path / "ok.py").write_text("x = 1\n")
    for args in (["ok.py", "missing.py"], ["missing_dir/"]):
        result = run_cli(tmp_path, "check", "--format", "sarif", *args)
        assert result.code == 2
        doc = json.loads(result.out)
        validate_sarif(doc)
        assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False
    result = run_cli(tmp_path, "check", "--format", "sarif", "ok.py")
    assert result.code == 0 and json.loads(result.out)["runs"][0]["invocations"][0]["executionSuccessful"] is True


# -- rule descriptors ------------------------------------------------------------------------

@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_full_description_is_complete_sentences(rule):
    full = rule_descriptor(rule)["fullDescription"]
    for text in (full["text"], full["markdown"]):
        assert text[:1].isupper() and text.rstrip(")").endswith(".") and not text.endswith(":."), text
        assert ":\n" not in text and not text.rstrip(".").endswith(":")
    assert "`" not in full["text"] and "**" not in full["text"]
    first = catalog.first_paragraph(catalog.sections(catalog.page(rule.code, rule.name))["What it does"])
    if not first.endswith(":"):
        assert full["markdown"] == first


def test_a_colon_takes_the_list_that_follows():
    by_code = {r.code: r for r in all_rules()}
    tl007 = full_description_markdown(by_code["TL007"])
    assert tl007.startswith("Reports layers and tensors that an `nn.Module` keeps where it does not register them: "
                            "a plain list, tuple or dict of layers assigned to `self`")
    assert "; a tensor made in `__init__` without `device=` (`self.mask = torch.ones(4, 4)`) and read in `forward`, " \
        in tl007 and tl007.endswith("A factory inside `forward` is TL010's.")  # the list's last item, then the paragraph after it
    for code in ("TL011", "TL013", "TL014", "TL016"):
        assert ": " in full_description_markdown(by_code[code]), code
    # TL004's list runs to thousands of characters: its complete sentences before it
    assert full_description_markdown(by_code["TL004"]).endswith("so that changing them does not change it.")


def test_tl016_is_a_security_rule():
    for rule in all_rules():
        properties = rule_descriptor(rule)["properties"]
        if rule.code == "TL016":
            assert "security" in properties["tags"] and properties["security-severity"] == "7.5"
        else:
            assert "security" not in properties["tags"] and "security-severity" not in properties
