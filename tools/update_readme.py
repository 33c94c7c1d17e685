#!/usr/bin/env python3
"""Regenerate the README's generated blocks (rules table, rule options) from the rules.

    python tools/update_readme.py

tests/test_readme.py fails when the README and the rules disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from torchlint.cli import options_markdown, rules_markdown  # noqa: E402
from torchlint.rule import all_rules  # noqa: E402

BLOCKS = {"rules-table": rules_markdown, "rule-options": options_markdown}


def replace_block(text: str, name: str, body: str) -> str:
    start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    if not rest:
        raise SystemExit(f"README.md has no {start.strip()} marker")
    return head + start + body + end + tail


def main() -> None:
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    rules = all_rules()
    for name, render in BLOCKS.items():
        text = replace_block(text, name, render(rules))
    readme.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
