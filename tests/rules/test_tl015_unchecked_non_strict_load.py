"""TL015 unchecked-non-strict-load beyond the embedded cases: fixtures, reads of the kept result."""

from __future__ import annotations

from pathlib import Path

from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL015"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl015_unchecked_non_strict_load.py", 12)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL015"], dedent=False) == []


def test_a_result_read_in_a_nested_function_counts_as_used():
    code = """
    def restore(model, state):
        result = model.load_state_dict(state, strict=False)
        def report():
            return result.missing_keys
        return report
    """
    assert lint_tree({"a.py": code}, select=["TL015"]) == []


def test_only_the_discarded_load_of_several_is_reported():
    code = """
    def restore(model, ema, state):
        keys = model.load_state_dict(state["model"], strict=False)
        ema.load_state_dict(state["ema"], strict=False)
        return keys
    """
    assert [f.line for f in lint_tree({"a.py": code}, select=["TL015"])] == [4]
