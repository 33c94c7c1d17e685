"""Fixes in a notebook's JSON: a notebook's findings' fixes (their edits in the joined
program's lines, ``notebook.in_cells``) written back into the cells' ``source`` values, every
other byte of the ``.ipynb`` as it was. Apart from ``notebook`` so that reading a notebook
imports nothing of fixing (``fixes`` reads files through ``reading``, which reads notebooks)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from torchlint import bounded
from torchlint.finding import Fix
from torchlint.fixes import apply_fixes
from torchlint.notebook import JSON_TOKEN, read_notebook


def fix_notebook(data: bytes, fixes: list[Fix]) -> tuple[bytes, list[Fix]]:
    """``data`` (a notebook's nbformat JSON) with ``fixes`` applied to its cells' sources
    (their edits in joined lines and the cells' written columns: ``in_cells``), as
    ``fixes.apply_fixes`` applies them to a file: each fix whose edits overlap no fix applied
    before it; and the fixes applied. Only the ``source`` values of the cells that change
    are rewritten, in the form they had (a list of lines, or one string) and the JSON
    layout around them (indentation, escapes): every other byte stays as it was."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8-sig")
    document = bounded.loads_json(text)
    notebook = read_notebook(data)
    index = notebook.cells
    spans = _source_spans(text)
    by_cell: dict[int, list] = {}
    for fix in fixes:
        cells = {index.locate(e.span.line)[0] for e in fix.edits if index.locate(e.span.line) is not None}
        if len(cells) == 1:
            by_cell.setdefault(cells.pop(), []).append(fix)
    applied: list = []
    changes: list[tuple[int, int, str]] = []
    for number, cell_fixes in by_cell.items():
        cell = document["cells"][number - 1]
        source = cell.get("source", "")
        written = "".join(source) if isinstance(source, list) else source
        start = index.starts[index.numbers.index(number)]
        moved = [replace(f, edits=tuple(replace(e, span=replace(e.span, line=e.span.line - start + 1,
                                                                end_line=e.span.end_line - start + 1))
                                        for e in f.edits)) for f in cell_fixes]
        new, done = apply_fixes(written, moved)
        if not done or number not in spans:
            continue
        applied.extend(f for f, m in zip(cell_fixes, moved) if m in done)
        at, stop = spans[number]
        changes.append((at, stop, _source_json(text[at:stop], new, isinstance(source, list))))
    for at, stop, value in sorted(changes, reverse=True):
        text = text[:at] + value + text[stop:]
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"), applied


def _source_json(old: str, new: str, as_list: bool) -> str:
    """``new`` (a cell's source) as JSON in the form and layout of ``old`` (its JSON as
    written): one string per line in a list with ``old``'s indentation, or one string."""
    ascii_only = "\\u" in old and old.isascii()
    if not as_list:
        return json.dumps(new, ensure_ascii=ascii_only)
    lines = re.findall(r"[^\n]*\n|[^\n]+$", new)
    if not lines:
        return "[]"
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in lines]
    layout = re.match(r"\[(\s*)", old)
    inner = layout.group(1) if layout and "\n" in layout.group(1) else None
    if inner is None:
        return "[" + ", ".join(items) + "]"
    closing = re.search(r"(\s*)\]$", old)
    return "[" + inner + ("," + inner).join(items) + (closing.group(1) if closing else "") + "]"


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Cell number (from 1) -> the character span of its ``source`` value in the notebook's
    JSON ``text`` (a list from ``[`` to ``]``, or one string)."""
    found: dict[int, tuple[int, int]] = {}
    depth = 0
    cells_at = None  # the depth of the "cells" list's items
    cell = -1
    key = None
    expect_value = False
    for match in JSON_TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            continue
        if expect_value:
            expect_value = False
            if depth == (cells_at or 0) + 1 and key == "source" and cells_at is not None:
                if token == "[":
                    end = _closing(text, match.start())
                    if end is not None:
                        found[cell + 1] = (match.start(), end)
                elif token.startswith('"'):
                    found[cell + 1] = (match.start(), match.end())
        if token in "{[":
            depth += 1
            if token == "{" and cells_at is not None and depth == cells_at + 1:
                cell += 1
            continue
        if token in "}]":
            depth -= 1
            if cells_at is not None and depth < cells_at:
                cells_at = None
            continue
        if token == ":":
            expect_value = True
            continue
        if token == ",":
            continue
        if token.startswith('"') and text[match.end():match.end() + 8].lstrip().startswith(":"):
            key = token[1:-1]
            if depth == 1 and key == "cells":
                cells_at = 2
                cell = -1
    return found


def _closing(text: str, at: int) -> int | None:
    """The index just past the ``]`` that closes the list opening at ``at``."""
    depth = 0
    for match in JSON_TOKEN.finditer(text, at):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                return match.end()
    return None
