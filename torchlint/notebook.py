"""Jupyter notebooks as Python: the code cells joined in order, IPython syntax masked.

A notebook (``.ipynb``, nbformat 4 JSON, read with the standard library) is linted as the
Python text of its code cells, one after another. Lines Python cannot read are masked, each
replaced by ``pass`` at its indentation (so the lines and blocks around it stay where they
were): line magics (``%matplotlib inline``, ``x = %time f()``), shell escapes (``!pip
install x``, ``files = !ls``) and help lines (``model?``, ``??torch.nn``), each only where a
statement starts; a cell magic (``%%time`` on the first line) masks its whole cell, as
blank lines. Findings are found on the joined text and shown by cell: ``Cells`` maps a
joined line to its cell (numbered among all the notebook's cells from 1, markdown cells
included: the position a reader counts to) and its line in that cell.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchlint.finding import Finding

SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


class NotebookError(ValueError):
    """The bytes are not a notebook this module reads (the message is one line)."""


@dataclass(frozen=True)
class Cells:
    """Where each code cell starts in the joined text: ``starts[i]`` is the 1-based joined
    line of the first line of cell ``numbers[i]``; ``end`` the joined text's last line."""

    numbers: tuple[int, ...] = ()
    starts: tuple[int, ...] = ()
    end: int = 0

    def locate(self, line: int) -> tuple[int, int, int] | None:
        """``(cell number, line in that cell, lines in that cell)`` of a joined line; None
        outside the cells."""
        at = bisect.bisect_right(self.starts, line) - 1
        if at < 0 or line > self.end:
            return None
        last = self.starts[at + 1] - 1 if at + 1 < len(self.starts) else self.end
        return self.numbers[at], line - self.starts[at] + 1, last - self.starts[at] + 1

    def to_json(self) -> list[list[int]]:
        """``[[cell number, first joined line], ..., [0, last joined line]]``."""
        return [[n, s] for n, s in zip(self.numbers, self.starts)] + ([[0, self.end]] if self.numbers else [])

    @classmethod
    def from_json(cls, data: list[list[int]]) -> "Cells":
        if not data:
            return cls()
        *cells, (_, end) = data
        return cls(tuple(n for n, _ in cells), tuple(s for _, s in cells), end)


@dataclass(frozen=True)
class Notebook:
    text: str  # the joined, masked Python: what is linted
    source: str  # the joined cells as written: what reports quote (code frames, fingerprints)
    cells: Cells


def read_notebook(data: bytes) -> Notebook:
    """The joined Python of a notebook's bytes; ``NotebookError`` for anything else. A
    notebook in another language than Python has no code to lint (empty text)."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookError(f"invalid notebook: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise NotebookError(f"invalid notebook: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise NotebookError("invalid notebook: JSON nested too deeply") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError('invalid notebook: no "cells" list (only nbformat 4 notebooks are read)')
    if not _is_python(document.get("metadata")):
        return Notebook("", "", Cells())
    lines: list[str] = []
    written: list[str] = []
    numbers, starts = [], []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"invalid notebook: cell {number} has a source that is not text")
        numbers.append(number)
        starts.append(len(lines) + 1)
        written.extend(cell_lines(source))
        lines.extend(mask_cell(written[len(lines):]))
    joined = lambda lines: "".join(line + "\n" for line in lines)  # noqa: E731
    return Notebook(joined(lines), joined(written), Cells(tuple(numbers), tuple(starts), len(lines)))


def code_size(data: bytes) -> int:
    """The size in bytes of a notebook's code (its joined cells); 0 for what is no notebook
    (the engine reports why)."""
    try:
        return len(read_notebook(data).text.encode("utf-8", "surrogatepass"))
    except NotebookError:
        return 0


def _is_python(metadata: object) -> bool:
    """Whether the notebook's kernel language is Python (or is not said)."""
    if not isinstance(metadata, dict):
        return True
    for key in ("language_info", "kernelspec"):
        info = metadata.get(key)
        name = info.get("name" if key == "language_info" else "language") if isinstance(info, dict) else None
        if isinstance(name, str):
            return name.lower().startswith("python")
    return True


_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's line ends (str.splitlines() knows more: \f, \u2028...)


def cell_lines(source: str) -> list[str]:
    """A cell's lines, split where Python splits them; an empty cell has one empty line."""
    lines = _NEWLINE.split(source)
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


_CELL_MAGIC = re.compile(r"\s*%%")
# at a statement's start: `%magic`, `!cmd`, `targets = %magic` / `targets = !cmd`
_ESCAPE = re.compile(r"\s*(?:[\w.\[\], ()*]+=\s*)?[%!](?!=)")
# `obj?`, `obj.attr??`, `?obj`, `np.*load*?`
_HELP = re.compile(r"\s*(?:\?{1,2}[\w.*]+\??|[\w.*]+\?{1,2})\s*")


def mask_cell(lines: list[str]) -> list[str]:
    """A cell's lines with IPython syntax masked (see the module docstring); as many lines."""
    if lines and _CELL_MAGIC.match(lines[0]):
        return [""] * len(lines)
    out = []
    scanner = _Continuation()
    for line in lines:
        if scanner.at_statement_start and (_ESCAPE.match(line) or _HELP.fullmatch(line)):
            line = line[: len(line) - len(line.lstrip())] + "pass"
        scanner.feed(line)
        out.append(line)
    return out


class _Continuation:
    """Whether the next line starts a statement: no bracket open, no triple-quoted string
    open, no trailing backslash. A small scanner, enough to tell a magic from ``% b``
    continuing an expression."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the delimiter of an open triple-quoted string
        self.backslash = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.backslash = False
        while i < n:
            if self.quote is not None:
                end = line.find(self.quote, i)
                escaped = line.find("\\", i)
                if escaped != -1 and (end == -1 or escaped < end):
                    i = escaped + 2
                    continue
                if end == -1:
                    return
                i, self.quote = end + 3, None
                continue
            char = line[i]
            if char == "#":
                return
            if char in "'\"":
                if line.startswith(char * 3, i):
                    self.quote, i = char * 3, i + 3
                    continue
                i = _string_end(line, i + 1, char)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif char == "\\" and i == n - 1:
                self.backslash = True
            i += 1


def _string_end(line: str, i: int, quote: str) -> int:
    """The index just past a one-line string's closing ``quote`` (or the line's end)."""
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line[i] == quote:
            return i + 1
        else:
            i += 1
    return i


# -- findings by cell ----------------------------------------------------------------------

def in_cells(finding: "Finding", cells: list[list[int]]) -> "Finding":
    """``finding`` (lines of the joined text, as every layer up to the report keeps them)
    with its cell added for the report: ``extra`` gets ``cell``, ``cell_line``,
    ``cell_end_line`` and ``cell_lines`` (the cell's length), and no fix (its edits are
    positions in the joined text, not in the notebook's file). Unchanged outside a notebook
    (``cells`` empty)."""
    index = Cells.from_json(cells)
    start = index.locate(finding.line)
    if start is None:
        return finding
    cell, line, length = start
    end = index.locate(finding.end_line)
    end_line = end[1] if end is not None and end[0] == cell else line
    return replace(finding, extra={**finding.extra, "cell": cell, "cell_line": line, "cell_end_line": end_line,
                                   "cell_lines": length}, fix=None)


def place(finding: "Finding") -> tuple[int | None, int, int]:
    """Where a report shows ``finding``: ``(cell, line, end line)``, the lines in that cell,
    or ``(None, line, end line)`` for a file that is no notebook."""
    cell = finding.extra.get("cell")
    if cell is None:
        return None, finding.line, finding.end_line
    return cell, finding.extra["cell_line"], finding.extra["cell_end_line"]
