#!/usr/bin/env python3
"""Regenerate what is generated from the rule classes: the rule registry
(``torchlint/registry.py``: the list of rules and each one's metadata, which every run reads),
the README's rules table and rule-options table, and the head of each rule page's
``## Options`` section (``rules/TL0NN-name.md``). The rules are found here alone, by their
modules' names in ``torchlint/checks/`` (``checks.discover``); everything else reads the
registry.

    python tools/generate.py

tests/cli/test_readme.py, tests/rules/test_rule_cases.py and tests/rules/test_registry.py
fail when these and the rules disagree. ``tools/new_rule.py`` calls ``update`` after writing
a new rule.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

REGISTRY_HEAD = '''"""The rules: each one's metadata (``torchlint.ruleinfo.RuleInfo``), written out from the rule
classes by ``python tools/generate.py``: do not edit. Every run reads this list to know, load,
configure and report on the rules, so that one whose every file comes from the cache imports
no rule module (nor LibCST). ``tests/rules/test_registry.py`` checks it against the classes."""

from torchlint.finding import Severity
from torchlint.ruleinfo import Option, RuleInfo

RULES = (
'''


def literal(value: Any, indent: str = "") -> str:
    """``value`` (a rule attribute: text, numbers, lists, tuples, dicts, builtin types, enum
    members, ``Option``) as Python source."""
    from torchlint.ruleinfo import Option

    if isinstance(value, type):
        if value.__module__ != "builtins":
            raise SystemExit(f"cannot write {value!r} into the registry: use a builtin type")
        return value.__name__
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, Option):
        args = [literal(value.default), literal(value.kind), literal(value.description)]
        if value.item_kind is not None:
            args.append(f"item_kind={literal(value.item_kind)}")
        return f"Option({', '.join(args)})"
    if isinstance(value, (list, tuple)):
        items = [literal(v) for v in value]
        if isinstance(value, tuple):
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        return f"[{', '.join(items)}]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + "    "
        return "{\n" + "".join(f"{inner}{literal(k)}: {literal(v, inner)},\n" for k, v in value.items()) + indent + "}"
    if value is None or isinstance(value, (str, int, float, bool)):
        return repr(value)
    raise SystemExit(f"cannot write {value!r} into the registry")


def registry_source(rules: list) -> str:
    """``torchlint/registry.py`` for ``rules`` (classes): each rule's ``RuleInfo``, with the
    fields that differ from ``RuleInfo``'s defaults."""
    from dataclasses import MISSING, fields

    from torchlint.ruleinfo import RuleInfo

    out = [REGISTRY_HEAD]
    for rule in rules:
        info = RuleInfo.of(rule)
        out.append("    RuleInfo(\n")
        for f in fields(info):
            value = getattr(info, f.name)
            default = f.default if f.default_factory is MISSING else f.default_factory()
            if value != default:  # (a field without a default: always)
                out.append(f"        {f.name}={literal(value, '        ')},\n")
        out.append("    ),\n")
    out.append(")\n")
    return "".join(out)


def update(repo: Path = REPO) -> list[Path]:
    """Rewrite the generated blocks under ``repo`` from the rules importable there; return
    the files that changed."""
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from torchlint import catalog, checks
    from torchlint.cli import options_markdown, rules_markdown

    rules = checks.discover()
    changed = []
    registry = repo / "torchlint" / "registry.py"
    source = registry_source(rules)
    if not registry.is_file() or registry.read_text(encoding="utf-8") != source:
        registry.write_text(source, encoding="utf-8")
        changed.append(registry)
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = text
    for name, render in {"rules-table": rules_markdown, "rule-options": options_markdown}.items():
        try:
            new = catalog.replace_block(new, name, render(rules))
        except ValueError as exc:
            raise SystemExit(f"README.md: {exc}") from None
    if new != text:
        readme.write_text(new, encoding="utf-8")
        changed.append(readme)
    for rule in rules:
        page = repo / "rules" / f"{rule.code}-{rule.name}.md"
        if not page.is_file():
            raise SystemExit(f"{rule.code} has no catalog page {page.relative_to(repo)}")
        text = page.read_text(encoding="utf-8")
        try:
            new = catalog.replace_block(text, catalog.OPTIONS_BLOCK, catalog.options_block(rule))
        except ValueError as exc:
            raise SystemExit(f"{page.relative_to(repo)}: {exc} (put them under '## Options')") from None
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def main() -> None:
    for path in update():
        print(f"updated {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
