#!/usr/bin/env python3
"""Regenerate the generated blocks from the rules: the README's rules table and rule-options
table, and the head of each rule page's ``## Options`` section (``rules/TL0NN-name.md``).

    python tools/update_readme.py

tests/test_readme.py and tests/test_rule_cases.py fail when these and the rules disagree.
``tools/new_rule.py`` calls ``update`` after writing a new rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def update(repo: Path = REPO) -> list[Path]:
    """Rewrite the generated blocks under ``repo`` from the rules importable there; return
    the files that changed."""
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from torchlint import catalog
    from torchlint.cli import options_markdown, rules_markdown
    from torchlint.rule import all_rules

    rules = all_rules()
    changed = []
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
