"""The rule catalog: one Markdown page per rule (``rules/TL001-missing-zero-grad.md``).

The pages are the single source of each rule's documentation: ``torchlint rule`` prints
them, SARIF embeds them, and the tests run their Example / Use instead blocks. In the wheel
they live in ``torchlint/catalog``; in a source checkout, in ``rules/`` at the top.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Options", "References")
_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


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
    return page_path(code, name).read_text(encoding="utf-8")


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
