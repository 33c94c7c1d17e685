"""Skipping a rule on a file whose text cannot trigger it (``Rule.requires_text``) must be
sound: it may save time, never a finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchlint.rule import Rule, all_rules
from torchlint.testing import lint_tree

REPO = Path(__file__).resolve().parents[1]
STATIC_RULES = [r for r in all_rules() if not r.traced and r.code != "TL000"]


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_every_invalid_case_passes_the_textual_precheck(rule):
    for case in rule.INVALID:
        assert rule.might_apply(textwrap.dedent(case.code)), f"{rule.code} would skip its own INVALID case:\n{case.code}"


def _fixture_files() -> dict[str, str]:
    return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures").rglob("*.py"))}


def test_fixtures_give_the_same_findings_without_skipping(monkeypatch):
    files = _fixture_files()
    with_skipping = lint_tree(files, dedent=False)
    monkeypatch.setattr(Rule, "might_apply", classmethod(lambda cls, text: True))
    without = lint_tree(files, dedent=False)
    assert with_skipping == without
    assert with_skipping, "the buggy fixtures must give findings, or this test proves nothing"


def test_skipping_happens_on_unrelated_files():
    # A file with nothing torch-like in it is not worth parsing for any rule.
    text = "def add(a, b):\n    return a + b\n"
    assert [r.code for r in STATIC_RULES if r.might_apply(text)] == []
