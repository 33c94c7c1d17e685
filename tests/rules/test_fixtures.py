"""What the README promises of the fixtures: `fixtures/buggy_project` has a finding for every
rule that reads code, `fixtures/clean_project` has none."""

from __future__ import annotations

import json
from pathlib import Path

from torchlint.cli import main
from torchlint.rule import all_rules

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _check(project: str, tmp_path, monkeypatch) -> list[dict]:
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "out.json"
    code = main(["check", "--isolated", "--no-cache", "--format", "json", "-o", str(out), project])
    findings = json.loads(out.read_text())
    assert code == (1 if findings else 0)
    return findings


def test_buggy_project_has_a_finding_for_every_static_rule(tmp_path, monkeypatch):
    found = {f["rule"] for f in _check("buggy_project", tmp_path, monkeypatch)}
    # TL000 (a syntax error would stop the other rules there); traced rules need `--trace`.
    wanted = {r.code for r in all_rules() if r.default_enabled and not r.traced and r.code != "TL000"}
    assert wanted - found == set(), "add code with these rules' bugs to fixtures/buggy_project"


def test_clean_project_has_no_finding(tmp_path, monkeypatch):
    assert _check("clean_project", tmp_path, monkeypatch) == []
