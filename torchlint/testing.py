"""Helpers to lint in-memory code: what rule tests (and rule authors) use.

``lint_snippet`` runs the same per-file and project passes as ``torchlint check``, with
suppression comments honoured, but on strings instead of files.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Iterable

from torchlint.config import Settings
from torchlint.engine import analyze_source
from torchlint.files import discover
from torchlint.finding import Finding
from torchlint.pins import read_torch_pin
from torchlint.rule import Rule, RuleInfo, all_rules
from torchlint.run import Run, demander, fix_files, lint_files, project_context


def make_settings(select: Iterable[str] | None = None, options: dict[str, dict[str, Any]] | None = None) -> Settings:
    rules = {r.code: r for r in all_rules()}
    enabled = frozenset(select) if select is not None else frozenset(c for c, r in rules.items() if r.default_enabled)
    rule_options = {}
    for code, opts in (options or {}).items():
        merged = rules[code].default_options()
        merged.update(opts)
        rule_options[code] = merged
    return Settings(enabled=enabled, rule_options=rule_options, root=Path("/nonexistent-root"))


def lint_tree(
    files: dict[str, str],
    select: Iterable[str] | None = None,
    options: dict[str, dict[str, Any]] | None = None,
    dedent: bool = True,
    each_alone: bool = True,
) -> list[Finding]:
    """Lint several in-memory files as one project ({relative path: source}).

    With ``each_alone`` (the default), a tree of several files is also written to a
    temporary repository and each file linted alone, as ``torchlint check FILE`` does (the
    rest of the tree is its project): an ``AssertionError`` unless every file's findings
    are the same both ways."""
    settings = make_settings(select, options)
    texts = {path: textwrap.dedent(code) if dedent else code for path, code in files.items()}
    sources = {path: text for path, text in texts.items() if path.endswith((".py", ".pyi", ".ipynb"))}
    results = [analyze_source(path, text.encode("utf-8"), settings.enabled, settings.rule_options)
               for path, text in sources.items()]
    run = Run.of_results(results, settings, Path("/nonexistent-root"),
                         demand=demander(lambda path: sources[path].encode("utf-8") if path in sources else None))
    run.torch_pin = _pin_of(texts)  # a ``requirements.txt`` or ``pyproject.toml`` among the files
    run = run.report()
    _raise_errors(run.errors)
    if each_alone and len(texts) > 1:
        alone = lint_each_alone(texts, settings)
        for path in sources:
            whole = [f for f in run.findings if f.path == path]
            if alone[path] != whole:
                raise AssertionError(f"{path} linted alone: {alone[path]}\nin the whole project: {whole}")
    return run.findings


def lint_each_alone(texts: dict[str, str], settings: Settings) -> dict[str, list[Finding]]:
    """Each file's findings when it alone is named (``torchlint check PATH``) in a git
    repository holding every file of ``texts``."""
    with tempfile.TemporaryDirectory(prefix="torchlint-alone-") as tmp:
        root = Path(tmp).resolve()
        (root / ".git").mkdir()
        for path, text in texts.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        on_disk = dataclasses.replace(settings, root=root)
        found = {}
        for path in texts:
            if not path.endswith((".py", ".pyi", ".ipynb")):
                continue  # a project file (requirements.txt): read for the torch pin
            named = discover([path], on_disk, root).files
            run = lint_files(named, on_disk, root, context=project_context([path], named, on_disk, root))
            _raise_errors(run.errors)
            found[path] = run.findings
        return found


def _pin_of(texts: dict[str, str]):
    """The torch pin the project files among ``texts`` declare (``pins.read_torch_pin``)."""
    others = {path: text for path, text in texts.items() if not path.endswith((".py", ".pyi", ".ipynb"))}
    if not others:
        return None
    with tempfile.TemporaryDirectory(prefix="torchlint-pin-") as tmp:
        root = Path(tmp).resolve()
        for path, text in others.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        return read_torch_pin(root)


def _raise_errors(errors) -> None:
    if errors:
        raise AssertionError("rule raised: " + "; ".join(f"{e.rule} on {e.path}: {e.error}\n{e.traceback}" for e in errors))


def lint_snippet(
    code: str,
    select: Iterable[str] | None = None,
    path: str = "example.py",
    options: dict[str, dict[str, Any]] | None = None,
) -> list[Finding]:
    return lint_tree({path: code}, select, options)


def fix_snippet(code: str, select: Iterable[str], path: str = "example.py",
                options: dict[str, dict[str, Any]] | None = None, *, unsafe: bool = True) -> str:
    """``code`` (dedented) after ``torchlint check --fix`` (with ``--unsafe-fixes`` unless
    ``unsafe`` is False) and ``select``, run on it alone in a temporary git repository, through
    the run layer's fix loop (``run.fix_files``). An ``AssertionError`` when the loop reports a
    problem or a rule raises."""
    settings = dataclasses.replace(make_settings(select, options), unsafe_fixes=unsafe)
    with tempfile.TemporaryDirectory(prefix="torchlint-fix-") as tmp:
        root = Path(tmp).resolve()
        (root / ".git").mkdir()
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(textwrap.dedent(code).encode("utf-8"))
        on_disk = dataclasses.replace(settings, root=root)
        named = discover([path], on_disk, root).files
        outcome = fix_files(named, on_disk, root, applies=on_disk.applies_fix)
        _raise_errors(outcome.result.errors)
        if outcome.problems:
            raise AssertionError(f"the fix loop failed: {outcome.problems}")
        return outcome.changed[path][1].decode("utf-8") if path in outcome.changed else textwrap.dedent(code)


def add_rules(monkeypatch: Any, *rules: type[Rule]) -> None:
    """Make ``rules`` (classes a test defines outside ``torchlint.checks``) part of every run
    while ``monkeypatch`` (pytest's fixture) lasts: among the rule classes
    (``checks.discover``) and in the registry a run reads (``rule.rule_index``)."""
    from torchlint import checks, registry

    classes = sorted([*checks.discover(), *rules], key=lambda r: r.code)
    infos = tuple(sorted([*registry.RULES, *map(RuleInfo.of, rules)], key=lambda r: r.code))
    monkeypatch.setattr(checks, "discover", lambda: list(classes))
    monkeypatch.setattr(registry, "RULES", infos)


def notebook(*sources: str) -> str:
    """An nbformat 4 notebook of code cells, one per source (dedented, as Jupyter stores it):
    for ``lint_tree({"nb.ipynb": notebook(...)}, dedent=False)``."""
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": textwrap.dedent(s).lstrip("\n").splitlines(keepends=True)} for s in sources]
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}, indent=1)
