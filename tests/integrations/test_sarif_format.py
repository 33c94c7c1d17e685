"""``--format sarif``: real CLI output validated against the official SARIF 2.1.0 schema, and
the properties GitHub code scanning reads."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlparse

from integrations_support import CLEAN_SOURCE, RULES, example_blocks, schema_candidates, write_examples

from torchlint import __version__, catalog
from torchlint.config import Settings
from torchlint.run import RunResult
from torchlint.finding import Finding, Severity
from torchlint.formats import Report
from torchlint.formats.linehash import line_hashes
from torchlint.formats.sarif import build, plain_text
from torchlint.rule import all_rules, rules_by_code
from torchlint.ruleinfo import shown_summary

ALL_CODES = [r.code for r in RULES]  # rules a static run reports
DRIVER_CODES = [r.code for r in all_rules()]  # every rule, the traced TL100 included
SYNTAX_ERROR = "def train(model, loader:\n    for batch in loader:\n        model(batch)\n"


def sarif(run_cli, cwd: Path, *args: str) -> tuple[int, dict]:
    result = run_cli(cwd, "check", "--format", "sarif", *args)
    assert result.code in (0, 1), result.err
    assert "Traceback" not in result.err
    return result.code, json.loads(result.out)


def check_driver(run: dict, enabled: list[str]) -> None:
    driver = run["tool"]["driver"]
    assert driver["name"] == "torchlint"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == enabled
    by_code = rules_by_code()
    for descriptor in driver["rules"]:
        rule = by_code[descriptor["id"]]
        page = catalog.page(rule.code, rule.name)
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == shown_summary(rule.summary)
        what = catalog.first_paragraph(catalog.sections(page)["What it does"])
        full = descriptor["fullDescription"]["markdown"]
        assert full.startswith(what.rstrip(":.")) or what.startswith(full.rstrip(".")), (full, what)
        assert full.endswith((".", ")")) and descriptor["fullDescription"]["text"].endswith((".", ")"))
        # help comes from the catalog page: every section of it is there, as Markdown (which
        # GitHub renders) and as plain text (headings without "#", no fences or backticks)
        markdown, text = descriptor["help"]["markdown"], descriptor["help"]["text"]
        for heading in catalog.SECTIONS:
            assert f"## {heading}" in markdown
            assert f"\n{heading}\n" in "\n" + text
        assert catalog.sections(page)["Why is this bad?"] in markdown
        assert plain_text(catalog.sections(page)["Why is this bad?"]) in text
        assert not any(mark in text for mark in ("## ", "```", "`", "](http"))
        assert descriptor["helpUri"].startswith("https://")
        assert descriptor["helpUri"].endswith(f"rules/{rule.code}-{rule.name}.md")
        assert descriptor["defaultConfiguration"]["level"] == rule.severity.value
        props = descriptor["properties"]
        assert props["tags"] and all(isinstance(t, str) for t in props["tags"])
        assert props["precision"] in ("very-high", "high", "medium", "low")
        assert props["problem.severity"] in ("error", "warning", "recommendation")
        assert props["problem"]["severity"] == props["problem.severity"]


def check_results(run: dict, root: Path) -> None:
    rules = run["tool"]["driver"]["rules"]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.endswith("/") and Path(unquote(urlparse(base).path)) == root.resolve()
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        rule = rules_by_code()[result["ruleId"]]
        assert result["level"] == {Severity.ERROR: "error", Severity.WARNING: "warning"}[rule.severity]
        assert result["message"]["text"]
        [location] = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith(("/", "file:"))
        assert (root / unquote(artifact["uri"])).is_file()
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert region["endLine"] >= region["startLine"] and region["endColumn"] >= 1
        if region["endLine"] == region["startLine"]:
            assert region["endColumn"] >= region["startColumn"]
        # GitHub's own line hash of the start line (the upload then logs no inconsistency)
        hashes = line_hashes((root / unquote(artifact["uri"])).read_bytes().decode("utf-8", "replace"))
        assert result["partialFingerprints"]["primaryLocationLineHash"] == hashes[region["startLine"] - 1]
        assert result["partialFingerprints"]["torchlint/v1"]


def test_clean_run_is_valid(tmp_path, run_cli, validate_sarif):
    (tmp_path / "train.py").write_text(CLEAN_SOURCE)
    code, doc = sarif(run_cli, tmp_path)
    validate_sarif(doc)
    assert code == 0
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    assert run["results"] == []
    check_driver(run, [r.code for r in all_rules() if r.default_enabled])
    assert run["invocations"][0]["executionSuccessful"] is True
    assert not run["invocations"][0].get("toolExecutionNotifications")


def test_findings_of_every_rule_are_valid(every_rule_project, run_cli, validate_sarif):
    root, written = every_rule_project
    code, doc = sarif(run_cli, root, "--select", "ALL")
    validate_sarif(doc)
    assert code == 1
    run = doc["runs"][0]
    check_driver(run, DRIVER_CODES)
    check_results(run, root)
    assert {r["ruleId"] for r in run["results"]} == set(ALL_CODES), "a rule's catalog Example gave no SARIF result"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris <= set(written), uris - set(written)


def test_syntax_errors_are_results_and_notifications(tmp_path, run_cli, validate_sarif):
    (tmp_path / "broken.py").write_text(SYNTAX_ERROR)
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02torch")
    (tmp_path / "ok.py").write_text(CLEAN_SOURCE)
    code, doc = sarif(run_cli, tmp_path)
    validate_sarif(doc)
    assert code == 1
    run = doc["runs"][0]
    check_results(run, tmp_path)
    results = run["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("TL000", "binary.py"), ("TL000", "broken.py")]
    broken = results[1]["locations"][0]["physicalLocation"]["region"]
    assert broken["startLine"] == 1
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    assert len(notes) == 2
    for note, result in zip(notes, results):
        assert note["level"] == "error"
        assert note["locations"] == result["locations"]
        assert note["associatedRule"]["id"] == "TL000"
        assert result["message"]["text"] in note["message"]["text"]


def _fingerprints(doc: dict) -> Counter:
    """Both partial fingerprints of every result: GitHub's line hash and torchlint's own."""
    return Counter(
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
         r["partialFingerprints"]["primaryLocationLineHash"], r["partialFingerprints"]["torchlint/v1"])
        for r in doc["runs"][0]["results"]
    )


def test_fingerprints_survive_lines_added_above(every_rule_project, run_cli):
    root, written = every_rule_project
    _, before = sarif(run_cli, root, "--select", "ALL")
    for rel in written:
        path = root / rel
        path.write_text("# an unrelated comment\n\n# and another one\n\n" + path.read_text())
    _, after = sarif(run_cli, root, "--select", "ALL")
    lines_before = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in before["runs"][0]["results"])
    lines_after = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after["runs"][0]["results"])
    assert lines_after == [n + 4 for n in lines_before]  # the findings did move
    assert _fingerprints(after) == _fingerprints(before)


def test_syntax_error_fingerprint_survives_lines_added_above(tmp_path, run_cli):
    (tmp_path / "broken.py").write_text(SYNTAX_ERROR)
    _, before = sarif(run_cli, tmp_path)
    (tmp_path / "broken.py").write_text("import os\nimport sys\n\n\n" + SYNTAX_ERROR)
    _, after = sarif(run_cli, tmp_path)
    assert after["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert _fingerprints(after) == _fingerprints(before)


def _report(tmp_path: Path, findings: list[Finding]) -> Report:
    settings = Settings(enabled=frozenset(ALL_CODES), rule_options={}, root=tmp_path)
    return Report(RunResult(findings, [], sorted({f.path for f in findings})), settings, tmp_path)


def _finding(rule, path, line, col, end_col, message="problem", severity=None):
    cls = rules_by_code()[rule]
    return Finding(rule, cls.name, severity or cls.severity, path, line, col, line, end_col, message)


def test_identical_findings_in_one_file_have_different_fingerprints(tmp_path, validate_sarif):
    (tmp_path / "train.py").write_text("x = 1\noptimizer.step()\ny = 2\noptimizer.step()\n")
    findings = [_finding("TL000", "train.py", 2, 1, 17), _finding("TL000", "train.py", 4, 1, 17)]
    doc = build(_report(tmp_path, findings))
    validate_sarif(doc)
    prints = [r["partialFingerprints"]["torchlint/v1"] for r in doc["runs"][0]["results"]]
    assert prints[0] != prints[1]
    assert prints[0].split(":")[0] == prints[1].split(":")[0]  # same line text, told apart by occurrence
    # and an unrelated line added above changes neither
    (tmp_path / "train.py").write_text("import torch\nx = 1\noptimizer.step()\ny = 2\noptimizer.step()\n")
    moved = [_finding("TL000", "train.py", 3, 1, 17), _finding("TL000", "train.py", 5, 1, 17)]
    doc2 = build(_report(tmp_path, moved))
    assert [r["partialFingerprints"]["torchlint/v1"] for r in doc2["runs"][0]["results"]] == prints


def test_two_findings_on_one_line_differ(tmp_path):
    (tmp_path / "train.py").write_text("opt = SGD(lr=0.1, momentum=0.9)\n")
    findings = [_finding("TL000", "train.py", 1, 11, 17), _finding("TL000", "train.py", 1, 19, 31)]
    doc = build(_report(tmp_path, findings))
    prints = [r["partialFingerprints"]["torchlint/v1"] for r in doc["runs"][0]["results"]]
    assert len(set(prints)) == 2
    # GitHub's hash is the line's: the same for both (GitHub tells them apart by rule and column)
    assert len({r["partialFingerprints"]["primaryLocationLineHash"] for r in doc["runs"][0]["results"]}) == 1


def test_unusual_paths_are_uri_encoded(tmp_path, validate_sarif):
    (tmp_path / "my dir").mkdir()
    (tmp_path / "my dir" / "a#b%.py").write_text("x = 1\n")
    doc = build(_report(tmp_path, [_finding("TL000", "my dir/a#b%.py", 1, 1, 2)]))
    validate_sarif(doc)
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == "my%20dir/a%23b%25.py"
    assert unquote(artifact["uri"]) == "my dir/a#b%.py"


def test_internal_rule_errors_are_notifications(tmp_path, validate_sarif):
    from torchlint.errors import RuleError

    settings = Settings(enabled=frozenset(ALL_CODES), rule_options={}, root=tmp_path)
    result = RunResult([], [RuleError("TL000", "train.py", "ValueError: boom", "")], ["train.py"])
    doc = build(Report(result, settings, tmp_path))
    validate_sarif(doc)
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "boom" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_output_file(tmp_path, run_cli, validate_sarif):
    (tmp_path / "broken.py").write_text(SYNTAX_ERROR)
    result = run_cli(tmp_path, "check", "--format", "sarif", "--output-file", "out.sarif")
    assert result.code == 1 and result.out == ""
    validate_sarif(json.loads((tmp_path / "out.sarif").read_text()))


def test_every_rule_has_a_catalog_example():
    for rule in RULES:
        assert example_blocks(rule), rule.code


def test_select_limits_the_rules_described(tmp_path, run_cli, validate_sarif):
    write_examples(tmp_path)
    code, doc = sarif(run_cli, tmp_path, "--select", "TL000")
    validate_sarif(doc)
    assert [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]] == ["TL000"]
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {"TL000"}


def test_the_bundled_schema_is_the_official_one():
    """The tests validate against a shipped copy when ../shared is absent (a user's fresh
    clone); it must be the OASIS SARIF 2.1.0 schema, unchanged."""
    import hashlib

    from integrations_support import BUNDLED_SCHEMA

    document = json.loads(BUNDLED_SCHEMA.read_text(encoding="utf-8"))
    assert document["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    official = [c for c in schema_candidates() if c != BUNDLED_SCHEMA and c.is_file()]
    for other in official:  # where the CI copy is beside the checkout, they agree byte for byte
        assert hashlib.sha256(other.read_bytes()).digest() == hashlib.sha256(BUNDLED_SCHEMA.read_bytes()).digest()


def test_line_hash_is_githubs_for_the_start_line(tmp_path, validate_sarif):
    """Values from GitHub's own algorithm (``tests/test_linehash.py`` checks it against the
    upload action's published vectors): the file of the action's repeated-line vector, a
    finding on line 7 and one on line 2."""
    (tmp_path / "train.py").write_text("Lorem ipsum dolor sit amet.\n" * 10)
    findings = [_finding("TL000", "train.py", 2, 1, 5), _finding("TL000", "train.py", 7, 1, 5)]
    doc = build(_report(tmp_path, findings))
    validate_sarif(doc)
    assert [r["partialFingerprints"]["primaryLocationLineHash"] for r in doc["runs"][0]["results"]] == [
        "a7f2ff13bc495cf2:2", "a7f2ff1481e87703:1"]


def test_no_line_hash_for_an_unreadable_file(tmp_path, validate_sarif):
    doc = build(_report(tmp_path, [_finding("TL000", "gone.py", 1, 1, 2)]))
    validate_sarif(doc)
    prints = doc["runs"][0]["results"][0]["partialFingerprints"]
    assert "primaryLocationLineHash" not in prints and prints["torchlint/v1"]


def test_a_notebooks_results_are_valid_sarif_with_the_cell_in_properties(tmp_path, run_cli, validate_sarif):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": ["%matplotlib inline\n", "for x in loader:\n", "    loss = model(x)\n", "    loss.backward()\n",
                         "    opt.step()\n"]}]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    _, document = sarif(run_cli, tmp_path, "nb.ipynb", "--select", "TL001", "--no-cache")
    validate_sarif(document)
    [result] = document["runs"][0]["results"]
    assert result["properties"] == {"cell": 2}
    # the notebook's JSON is one line: the region is where `opt.step()` is written in it
    text = (tmp_path / "nb.ipynb").read_text()
    column = text.index('"    opt.step()') + 1 + 1 + 4
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": column,
                                                                     "endLine": 1, "endColumn": column + 10}
    assert text[column - 1:column + 9] == "opt.step()"


def test_plain_text_of_links_whose_text_holds_brackets():
    """A reference's link text may hold brackets of its own (TL024's page cites
    ``assert np.array([False]).all() is False``): the plain text keeps the text and the URL."""
    assert plain_text("- [numpy#21165: `np.array([False]).all() is False` fails](https://github.com/x/1)\n") == \
        "- numpy#21165: np.array([False]).all() is False fails (https://github.com/x/1)\n"
    assert plain_text("[a](https://a) and [b [c]](https://b)") == "a (https://a) and b [c] (https://b)"
