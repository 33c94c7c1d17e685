"""TL902 invalid-noqa beyond the embedded cases: what each malformed comment silences, the
finding cannot hide itself, fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.testing import lint_snippet, lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL902"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("noqa_comments.py", 5)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL902"], dedent=False) == []


@pytest.mark.parametrize("comment", ["#noqaTL001", "# noqa:", "# noqa: TL001abc", "# noqa: some words",
                                     "# noqa: missing-zero-gard", "# noqa;TL000"])
def test_a_malformed_comment_silences_nothing(comment):
    # Before: each of these silenced every rule on its line.
    findings = lint_snippet(f"def f(:  {comment}\n", select=["TL000", "TL902"])
    assert sorted(f.rule for f in findings) == ["TL000", "TL902"]


@pytest.mark.parametrize("comment", ["# noqa : TL000", "# noqa: syntax-error", "# noqa:TL000 explained",
                                     "# noqa: E501,TL000", "# NOQA: tl000"])
def test_well_formed_variants_silence_their_codes(comment):
    assert lint_snippet(f"def f(:  {comment}\n", select=["TL000", "TL902"]) == []


def test_missing_colon_silences_every_rule_and_is_reported():
    [finding] = lint_snippet("def f(:  # noqa TL004\n", select=["TL000", "TL902"])
    assert finding.rule == "TL902" and finding.column == 10


def test_a_blanket_noqa_cannot_hide_the_report_about_itself():
    # `# noqa TL004` silences every rule on its line, but not the finding about itself
    assert [f.rule for f in lint_snippet("x = 1  # noqa TL004\n", select=["TL902"])] == ["TL902"]
    assert lint_snippet("x = 1  # noqa: TL999, TL902\n", select=["TL902"]) == []
    assert lint_snippet("# torchlint: noqa: TL902\nx = 1  # noqa: TL999\n", select=["TL902"]) == []
