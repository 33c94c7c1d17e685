"""``--write-baseline FILE`` / ``--baseline FILE``: adopt torchlint on a repository with
existing findings, matching on the same fingerprint as SARIF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integrations_support import CLEAN_SOURCE, RULES, write_examples

from torchlint.baseline import Baseline, load
from torchlint.errors import UsageError
from torchlint.finding import Finding, Severity
from torchlint.fingerprint import for_run

SYNTAX_ERROR = "def train(model, loader:\n    for batch in loader:\n        model(batch)\n"


def _findings(run_cli, cwd: Path, *args: str) -> list[dict]:
    result = run_cli(cwd, "check", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_write_then_check_reports_nothing(every_rule_project, run_cli):
    root, _ = every_rule_project
    before = _findings(run_cli, root, "--select", "ALL")
    assert before
    written = run_cli(root, "check", "--select", "ALL", "--write-baseline", "baseline.json")
    assert written.code == 0, written.err
    assert f"wrote {len(before)} finding(s) to baseline.json" in written.err
    data = json.loads((root / "baseline.json").read_text())
    assert data["torchlint-baseline"] == 1
    assert sorted((e["rule"], e["path"], e["message"]) for e in data["findings"]) == sorted(
        (f["rule"], f["path"], f["message"]) for f in before)
    assert all(set(e) == {"rule", "path", "fingerprint", "message"} for e in data["findings"])

    check = run_cli(root, "check", "--select", "ALL", "--baseline", "baseline.json")
    assert check.code == 0, check.out
    assert "All checks passed!" in check.out
    assert _findings(run_cli, root, "--select", "ALL", "--baseline", "baseline.json") == []


def test_baseline_fingerprints_are_the_sarif_ones(every_rule_project, run_cli):
    root, _ = every_rule_project
    run_cli(root, "check", "--select", "ALL", "--write-baseline", "baseline.json")
    sarif = json.loads(run_cli(root, "check", "--select", "ALL", "--format", "sarif").out)
    from_sarif = sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                         r["partialFingerprints"]["torchlint/v1"]) for r in sarif["runs"][0]["results"])
    entries = json.loads((root / "baseline.json").read_text())["findings"]
    assert sorted((e["rule"], e["path"], e["fingerprint"]) for e in entries) == from_sarif


def test_lines_added_above_and_moved_code_do_not_resurrect_findings(every_rule_project, run_cli):
    root, written = every_rule_project
    run_cli(root, "check", "--select", "ALL", "--write-baseline", "baseline.json")
    for rel in written:
        path = root / rel
        # lines added above, and the whole file's code moved down below a new function
        path.write_text("# header comment\n\n\ndef helper(x):\n    return x + 1\n\n\n" + path.read_text())
    moved = _findings(run_cli, root, "--select", "ALL")
    assert moved and all(f["line"] > 7 for f in moved if f["path"] in written)
    check = run_cli(root, "check", "--select", "ALL", "--baseline", "baseline.json")
    assert check.code == 0, check.out


def test_only_new_findings_are_reported(every_rule_project, run_cli):
    root, _ = every_rule_project
    run_cli(root, "check", "--select", "ALL", "--write-baseline", "baseline.json")
    (root / "new").mkdir()
    write_examples(root / "new")
    old = _findings(run_cli, root, "--select", "ALL")
    new = _findings(run_cli, root, "--select", "ALL", "--baseline", "baseline.json")
    assert new and all(f["path"].startswith("new/") for f in new)
    assert len(new) == len([f for f in old if f["path"].startswith("new/")])
    check = run_cli(root, "check", "--select", "ALL", "--baseline", "baseline.json")
    assert check.code == 1


def test_a_changed_flagged_line_is_new(tmp_path, run_cli):
    (tmp_path / "broken.py").write_text(SYNTAX_ERROR)
    run_cli(tmp_path, "check", "--write-baseline", "b.json")
    (tmp_path / "broken.py").write_text(SYNTAX_ERROR.replace("loader:", "data_loader:"))
    result = run_cli(tmp_path, "check", "--baseline", "b.json", "--format", "concise")
    assert result.code == 1 and "broken.py:1:" in result.out


def test_matching_counts_identical_findings(tmp_path):
    """One identical finding in the baseline, two now: one of them is new."""
    (tmp_path / "t.py").write_text("step()\nx = 1\n")

    def finding(line: int) -> Finding:
        return Finding("TL000", "syntax-error", Severity.ERROR, "t.py", line, 1, line, 7, "m")

    baseline = Baseline(tmp_path / "b.json", __import__("collections").Counter())
    for fingerprint in for_run([finding(1)], tmp_path):
        baseline.entries[("TL000", "t.py", fingerprint)] += 1
    (tmp_path / "t.py").write_text("step()\nx = 1\nstep()\n")
    new, matched = baseline.filter([finding(1), finding(3)], tmp_path)
    assert matched == 1 and new == [finding(3)]


def test_baseline_paths_are_relative_to_the_baseline_file(tmp_path, run_cli):
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "broken.py").write_text(SYNTAX_ERROR)
    (tmp_path / "baselines").mkdir()
    assert run_cli(tmp_path, "check", "--write-baseline", "baselines/b.json").code == 0
    [entry] = json.loads((tmp_path / "baselines" / "b.json").read_text())["findings"]
    assert entry["path"] == "../pkg/broken.py"
    # the same baseline used from another working directory
    assert run_cli(sub, "check", "--baseline", "../baselines/b.json").code == 0
    assert run_cli(tmp_path, "check", "pkg", "--baseline", str(tmp_path / "baselines" / "b.json")).code == 0


def test_missing_baseline_is_a_clear_error(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    result = run_cli(tmp_path, "check", "--baseline", "nope.json")
    assert result.code == 2
    assert result.err.startswith("torchlint: error: --baseline nope.json: no such file")
    assert "--write-baseline" in result.err and "Traceback" not in result.err
    assert result.out == ""


@pytest.mark.parametrize(("content", "says"), [
    ("", "invalid JSON"),
    ("{\"torchlint-baseline\": 1, \"findings\": [}", "invalid JSON at line 1"),
    ("[]", "not a torchlint baseline"),
    ("{\"findings\": []}", "not a torchlint baseline"),
    ("{\"torchlint-baseline\": 99, \"findings\": []}", "unsupported baseline version 99"),
    ("{\"torchlint-baseline\": 1}", "\"findings\" must be a list"),
    ("{\"torchlint-baseline\": 1, \"findings\": [{\"rule\": \"TL000\", \"path\": \"a.py\"}]}", "findings[0]"),
    ("{\"torchlint-baseline\": 1, \"findings\": [\"TL000\"]}", "findings[0]"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
])
def test_malformed_baseline_is_a_clear_error(tmp_path, run_cli, content, says):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    target = tmp_path / "b.json"
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run_cli(tmp_path, "check", "--baseline", "b.json")
    assert result.code == 2, result
    assert result.err.startswith("torchlint: error: --baseline b.json: ")
    assert says in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_baseline_directory_is_an_error(tmp_path, run_cli):
    (tmp_path / "d").mkdir()
    result = run_cli(tmp_path, "check", "--baseline", "d")
    assert result.code == 2 and "directory" in result.err


def test_write_baseline_to_unwritable_place_is_an_error(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(SYNTAX_ERROR)
    result = run_cli(tmp_path, "check", "--write-baseline", "missing-dir/b.json")
    assert result.code == 2 and "cannot write" in result.err and "Traceback" not in result.err


def test_baseline_and_write_baseline_together_is_an_error(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    result = run_cli(tmp_path, "check", "--baseline", "a.json", "--write-baseline", "b.json")
    assert result.code == 2 and "together" in result.err


def test_empty_baseline_of_a_clean_project(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CLEAN_SOURCE)
    assert run_cli(tmp_path, "check", "--write-baseline", "b.json").code == 0
    assert json.loads((tmp_path / "b.json").read_text()) == {"torchlint-baseline": 1, "findings": []}
    assert run_cli(tmp_path, "check", "--baseline", "b.json").code == 0


def test_load_api(tmp_path):
    with pytest.raises(UsageError):
        load("nope.json", tmp_path)
    (tmp_path / "b.json").write_text('{"torchlint-baseline": 1, "findings": [{"rule": "TL000", "path": "a.py", '
                                     '"fingerprint": "0:1", "message": "m"}, {"rule": "TL000", "path": "a.py", '
                                     '"fingerprint": "0:1"}]}')
    assert load("b.json", tmp_path).entries[("TL000", "a.py", "0:1")] == 2


def test_every_rule_can_be_baselined(every_rule_project, run_cli):
    """Per rule: its Example findings are all matched by a baseline written for them."""
    root, written = every_rule_project
    run_cli(root, "check", "--select", "ALL", "--write-baseline", "b.json")
    for rule in RULES:
        result = run_cli(root, "check", "--select", rule.code, "--baseline", "b.json", "--format", "json")
        assert result.code == 0 and json.loads(result.out) == [], rule.code
