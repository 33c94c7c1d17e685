"""Helpers to lint in-memory code: what rule tests (and rule authors) use.

``lint_snippet`` runs the same per-file and project passes as ``torchlint check``, with
suppression comments honoured, but on strings instead of files.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Iterable

from torchlint.config import Settings
from torchlint.engine import analyze_source
from torchlint.run import finish
from torchlint.finding import Finding
from torchlint.rule import all_rules


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
) -> list[Finding]:
    """Lint several in-memory files as one project ({relative path: source})."""
    settings = make_settings(select, options)
    results = []
    for path, code in files.items():
        text = textwrap.dedent(code) if dedent else code
        results.append(analyze_source(path, text.encode("utf-8"), settings.enabled, settings.rule_options))
    run = finish(results, settings, Path("/nonexistent-root"))
    if run.errors:
        raise AssertionError("rule raised: " + "; ".join(f"{e.rule} on {e.path}: {e.error}\n{e.traceback}" for e in run.errors))
    return run.findings


def lint_snippet(
    code: str,
    select: Iterable[str] | None = None,
    path: str = "example.py",
    options: dict[str, dict[str, Any]] | None = None,
) -> list[Finding]:
    return lint_tree({path: code}, select, options)
