"""The rule catalog: one Markdown page per rule (``rules/TL001-missing-zero-grad.md``).

The pages are the single source of each rule's documentation: ``torchlint rule`` prints
them, SARIF embeds them, and the tests run their Example / Use instead blocks. In the wheel
they live in ``torchlint/catalog``; in a source checkout, in ``rules/`` at the top.

The start of each page's ``## Options`` section is generated from ``Rule.options``
(``options_block``) between ``<!-- options:start -->`` and ``<!-- options:end -->``:
``python tools/generate.py`` rewrites it and ``tests/test_rule_cases.py`` checks it.
``page`` hides the markers from readers.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Options", "References")
OPTIONS_BLOCK = "options"
_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)
_MARKER = re.compile(r"^<!-- [a-z-]+:(?:start|end) -->\n", re.MULTILINE)
_KIND_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "table"}


def catalog_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "catalog", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the rule catalog is missing from this installation")


def page_path(code: str, name: str) -> Path:
    return catalog_dir() / f"{code}-{name}.md"


@lru_cache(maxsize=None)
def page(code: str, name: str) -> str:
    """The page as readers see it (generated-block markers removed)."""
    return _MARKER.sub("", page_path(code, name).read_text(encoding="utf-8"))


# -- generated blocks ------------------------------------------------------------------
def generated_block(text: str, name: str) -> str | None:
    """The text between ``<!-- name:start -->`` and ``<!-- name:end -->``; None without them."""
    start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
    if start not in text or end not in text.partition(start)[2]:
        return None
    return text.partition(start)[2].partition(end)[0]


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the generated block ``name`` replaced by ``body``."""
    start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
    if generated_block(text, name) is None:
        raise ValueError(f"no {start.strip()} ... {end} markers")
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    return head + start + body + end + tail


def kind_text(kind: type | tuple[type, ...], item_kind: type | None) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = [_KIND_NAMES.get(k, k.__name__) for k in kinds]
    if item_kind is not None and names == ["list"]:
        return f"list of {_KIND_NAMES.get(item_kind, item_kind.__name__)}s"
    return " or ".join(names)


def options_block(rule: Any) -> str:
    """The generated head of a rule page's ``## Options`` section: the rule's table, and
    each option's key, type, default and description, from ``rule.options``."""
    if not rule.options:
        return "This rule has no options.\n"
    lines = [f"Under `[tool.torchlint.{rule.name}]`:", ""]
    for key, opt in rule.options.items():
        meaning = opt.description.replace("*", "\\*")  # `test_*.py, *_test.py` is not emphasis
        if not meaning.endswith("."):
            meaning += "."
        kind = kind_text(opt.kind, opt.item_kind)
        lines.append(f"- `{key}` ({kind}, default `{json.dumps(opt.default)}`): {meaning}")
    return "\n".join(lines) + "\n"


def sections(text: str) -> dict[str, str]:
    """Level-2 sections of a page, by heading."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            if current is not None:
                out[current] = "\n".join(lines).strip()
            current, lines = line[3:].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip()
    return out


def code_blocks(section_text: str) -> list[str]:
    return [m.group(1) for m in _FENCE.finditer(section_text)]


def title(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def first_paragraph(section_text: str) -> str:
    para = []
    for line in section_text.splitlines():
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    return " ".join(para)
