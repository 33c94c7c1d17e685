"""The house's size budget for rule modules (issue 38): a rule is a small judgement over the
shared model, its cases live under tests/rules/cases, so a rule module stays short: the median
at most 300 lines and none over 600. A rule that grows past them has analysis to move into
torchlint/semantic/ (CONTRIBUTING.md says where each kind of fact lives)."""

from __future__ import annotations

import statistics
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[2] / "torchlint" / "checks"


def _sizes() -> dict[str, int]:
    return {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(CHECKS.glob("tl[0-9]*.py"))}


def test_there_are_rule_modules_to_measure():
    assert len(_sizes()) >= 30


def test_median_rule_module_is_at_most_300_lines():
    assert statistics.median(_sizes().values()) <= 300


def test_no_rule_module_is_over_600_lines():
    assert {name: n for name, n in _sizes().items() if n > 600} == {}
