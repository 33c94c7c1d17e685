"""What the README promises of the fixtures: `fixtures/buggy_project` has a finding for every
rule that reads code, `fixtures/clean_project` has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


# What the README says the buggy project has no finding of: TL000 (a syntax error would stop
# the other rules in its file), TL100-TL104 (the shape trace's: `--trace`, torch) and
# TL901 (off by default; with --select ALL the project has one too).
EXCEPTED = {"TL000", "TL100", "TL101", "TL102", "TL103", "TL104", "TL901"}
README = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")


def test_buggy_project_has_a_finding_for_every_static_rule(tmp_path, monkeypatch):
    found = {f["rule"] for f in _check("buggy_project", tmp_path, monkeypatch)}
    wanted = {r.code for r in all_rules()} - EXCEPTED
    assert wanted - found == set(), "add code with these rules' bugs to fixtures/buggy_project"
    assert found == wanted
    assert {r.code for r in all_rules() if r.traced or not r.default_enabled} | {"TL000"} == EXCEPTED


def test_the_readme_names_the_rules_the_buggy_project_lacks():
    setup = README.split("## Set-up")[1].split("## Usage")[0]
    claim = " ".join(setup.split("`fixtures/buggy_project` has a finding for every rule")[1].split("`fixtures/clean_project`")[0].split())
    for code in EXCEPTED:
        assert code in claim, code


@pytest.mark.slow
def test_with_every_rule_selected_the_buggy_project_has_tl901_too(tmp_path, monkeypatch):
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "out.json"
    main(["check", "--isolated", "--no-cache", "--select", "ALL", "--format", "json", "-o", str(out), "buggy_project"])
    assert "TL901" in {f["rule"] for f in json.loads(out.read_text())}


def test_clean_project_has_no_finding(tmp_path, monkeypatch):
    assert _check("clean_project", tmp_path, monkeypatch) == []
