"""Every rule's cases adapted from public bug reports (``tests/rules/reports``): each names its
source on its last line; per rule at least 10 bugs and 10 look-alikes, recall >= 0.9 on the bugs
and findings on <= 0.05 of the look-alikes (``benchmarks/recall.py`` prints the table)."""

from __future__ import annotations

import pytest

from tests.rules.reports import findings, reports_of
from torchlint.rule import all_rules

RULES = [r for r in all_rules() if reports_of(r) is not None]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_each_case_names_the_report_it_was_adapted_from(rule):
    bugs, lookalikes = reports_of(rule)
    assert len(bugs) >= 10 and len(lookalikes) >= 10, (rule.code, len(bugs), len(lookalikes))
    for report in bugs + lookalikes:
        assert report.source(), f"{rule.code}: no source on the last line of\n{report.project()}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_recall_and_false_findings_on_cases_from_public_reports(rule):
    bugs, lookalikes = reports_of(rule)
    missed = [b.source() for b in bugs if not findings(rule, b)]
    reported = [(l.source(), findings(rule, l)) for l in lookalikes]
    reported = [(source, found) for source, found in reported if found]
    assert (len(bugs) - len(missed)) / len(bugs) >= 0.9, f"{rule.code} missed: {missed}"
    assert len(reported) / len(lookalikes) <= 0.05, f"{rule.code} reported look-alikes: {reported}"
