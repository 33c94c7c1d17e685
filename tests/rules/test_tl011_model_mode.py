"""TL011 model-mode beyond the embedded cases: multi-file projects, options, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL011"], dedent=False)
    assert findings  # TODO: state where: [(f.path, f.line) for f in findings] == [("train.py", N)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL011"], dedent=False) == []
