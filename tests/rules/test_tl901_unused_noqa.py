"""TL901 unused-noqa beyond the embedded cases: codes that are used, multi-line statements,
per-file-ignores, the cache, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.testing import fix_snippet, lint_snippet, lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BAD = "def f(:\n"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL901"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("noqa_comments.py", 6)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL901"], dedent=False) == []


def test_a_code_that_silences_a_finding_is_used():
    assert lint_snippet("def f(:  # noqa: TL000\n", select=["TL000", "TL901"]) == []
    assert lint_snippet("def f(:  # noqa: syntax-error\n", select=["TL000", "TL901"]) == []


def test_only_the_unused_codes_of_a_directive_are_named():
    [finding] = lint_snippet("def f(:  # noqa: TL000, TL004\n", select=["TL000", "TL004", "TL901"])
    assert finding.rule == "TL901" and finding.message.startswith("noqa code TL004 silences nothing")


def test_a_comment_after_a_multi_line_string_covers_the_lines_before_it():
    # TL000 is reported on line 1, inside the string that ends on line 2, where the comment is.
    code = 'def f(x="""a\nb""":  # noqa: TL000\n'
    assert lint_snippet(code, select=["TL000"]) == []
    assert lint_snippet(code, select=["TL000", "TL901"]) == []


def test_a_finding_dropped_by_per_file_ignores_does_not_use_the_code():
    from torchlint.engine import analyze_source
    from torchlint.run import Run
    from torchlint.testing import make_settings

    settings = make_settings(["TL000", "TL901"])
    settings.per_file_ignores = {"*.py": frozenset({"TL000"})}
    result = analyze_source("a.py", b"def f(:  # noqa: TL000\n", settings.enabled, {})
    run = Run.of_results([result], settings, Path("/nonexistent-root")).report()
    assert [f.rule for f in run.findings] == ["TL901"]


def test_directives_survive_the_cache(project, run):
    project.write("a.py", "x = 1  # noqa: TL004\n")
    first = run("check", "--extend-select", "TL901", "--format", "concise", ".")
    second = run("check", "--extend-select", "TL901", "--format", "concise", ".")  # from the cache
    assert first[0] == second[0] == 1
    assert first[1] == second[1] and "TL901" in first[1]


def test_a_file_that_does_not_parse_gets_its_unused_code_removed():
    # the embedded cases must parse once fixed; this one never does (TL000 is not selected: unused)
    [finding] = lint_snippet("def f(:\n    pass  # noqa: TL000\n", select=["TL901"])
    assert finding.line == 2 and finding.fix is not None and finding.fix.applicability == "safe"
    assert fix_snippet("def f(:\n    pass  # noqa: TL000\n", ["TL901"]) == "def f(:\n    pass\n"


def test_the_fix_keeps_the_used_codes_as_written():
    code = "def f(:  # noqa: syntax-error, TL004\n"
    [finding] = lint_snippet(code, select=["TL000", "TL004", "TL901"])
    assert finding.fix.title == "Remove unused noqa code TL004"
    assert fix_snippet(code, ["TL000", "TL004", "TL901"]) == "def f(:  # noqa: syntax-error\n"


def test_the_fix_removes_every_unused_code_of_a_directive_and_names_them():
    code = "x = 1  # noqa: TL001, E501, TL004\n"
    [finding] = lint_snippet(code, select=["TL001", "TL004", "TL901"])
    assert finding.fix.title == "Remove unused noqa codes TL001, TL004"
    assert fix_snippet(code, ["TL001", "TL004", "TL901"]) == "x = 1  # noqa: E501\n"
