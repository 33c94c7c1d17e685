"""How rules are shown: every summary starts with a capital wherever it is printed (one
renderer, ``ruleinfo.shown_summary``), ``torchlint rule --all`` and the JSON of ``rule`` and
``rules``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchlint import catalog
from torchlint.cli import rules_markdown
from torchlint.formats import rule_url
from torchlint.formats.sarif import rule_descriptor
from torchlint.rule import all_rules
from torchlint.ruleinfo import shown_summary

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
KEYS = {"code", "name", "summary", "severity", "default_enabled", "fixable", "options", "url", "rule", "default"}


@pytest.mark.parametrize("summary, shown", [
    ("a layer or tensor kept where ...", "A layer or tensor kept where ..."),
    ("softmax/sigmoid output fed to a loss", "Softmax/sigmoid output fed to a loss"),
    ("nn.Module layer assigned in the model", "An nn.Module layer assigned in the model"),
    ("load_state_dict(strict=False) whose keys", "A load_state_dict(strict=False) whose keys"),
    ("F.dropout in forward", "F.dropout in forward"),
    ("Already capitalised", "Already capitalised"),
    ("", ""),
])
def test_shown_summary(summary, shown):
    assert shown_summary(summary) == shown


def test_every_summary_as_shown_starts_with_a_capital(run):
    shown = {}
    _, out, _ = run("rules")
    header, *lines = out.splitlines()
    shown["rules"] = {line.split(" ", 1)[0]: line[header.index("Summary"):] for line in lines}
    table = README.split("<!-- rules-table:start -->\n")[1].split("<!-- rules-table:end -->")[0]
    shown["readme"] = {row.split(" | ")[0].strip("| "): row.split(" | ")[-1].rstrip(" |")
                       for row in table.splitlines()[2:]}
    shown["markdown"] = {row.split(" | ")[0].strip("| "): row.split(" | ")[-1].rstrip(" |")
                         for row in rules_markdown(all_rules()).splitlines()[2:]}
    shown["json"] = {r["code"]: r["summary"] for r in json.loads(run("rules", "--output-format", "json")[1])}
    shown["sarif"] = {r.code: rule_descriptor(r)["shortDescription"]["text"] for r in all_rules()}
    for where, summaries in shown.items():
        assert set(summaries) == {r.code for r in all_rules()}, where
        for code, summary in summaries.items():
            assert summary[:1].isupper(), (where, code, summary)
    for rule in all_rules():  # the renderer changes the first word only
        assert shown["json"][rule.code].endswith(rule.summary[1:])
        assert f" {shown['json'][rule.code]}" in out


def test_rules_json(run):
    code, out, _ = run("rules", "--output-format", "json")
    data = json.loads(out)
    assert code == 0 and [d["code"] for d in data] == [r.code for r in all_rules()]
    for entry, rule in zip(data, all_rules()):
        assert set(entry) == KEYS
        assert entry["name"] == rule.name and entry["severity"] == rule.severity.value
        assert entry["default_enabled"] is bool(rule.default_enabled) and entry["fixable"] == list(rule.fixable)
        assert entry["url"] == rule_url(rule.code, rule.name)
        assert set(entry["options"]) == set(rule.options)
        for key, option in entry["options"].items():
            assert option["default"] == rule.options[key].default
            assert option["description"] == rule.options[key].description
            assert option["type"] in catalog.options_block(rule)
    tl004 = data[4]["options"]["ignore-names"]
    assert tl004 == {"default": [], "type": "list of strings",
                     "description": all_rules()[4].options["ignore-names"].description}


def test_rule_json(run):
    code, out, _ = run("rule", "TL016", "--output-format", "json")
    entry = json.loads(out)
    assert code == 0 and set(entry) == KEYS | {"explanation"}
    assert entry["code"] == "TL016" and entry["explanation"] == catalog.page("TL016", "unsafe-checkpoint-load")
    assert json.loads(run("rule", "unsafe-checkpoint-load", "--format", "json")[1]) == entry


def test_rule_all(run):
    code, out, _ = run("rule", "--all")
    assert code == 0
    titles = [line for line in out.splitlines() if line.startswith("# TL")]
    assert titles == [f"# {r.code} {r.name}" for r in all_rules()]
    for rule in all_rules():
        assert catalog.page(rule.code, rule.name) in out
    code, out, _ = run("rule", "--all", "--output-format", "json")
    assert [e["code"] for e in json.loads(out)] == [r.code for r in all_rules()]


def test_rule_needs_a_code_or_all(run):
    code, _, err = run("rule")
    assert code == 2 and "name a rule" in err
    code, _, err = run("rule", "TL001", "--all")
    assert code == 2 and "not both" in err
