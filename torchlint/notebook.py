"""Jupyter notebooks as Python: the code cells joined in order, read as IPython reads them.

A notebook (``.ipynb``, nbformat 4 JSON, read with the standard library) is linted as the
Python text of its code cells, one after another, each cell as IPython runs it:

* a cell whose first non-blank line is indented loses that indentation on every line that
  starts with it (IPython's ``leading_indent``), so an indented cell that runs in Jupyter
  parses here too; findings are shown at the columns as written;
* a cell magic that runs its body as Python in the notebook (``%%time``, ``%%timeit``,
  ``%%capture``, ``%%prun``, ``%%debug``, ``%%memit``: ``PYTHON_CELL_MAGICS``) has its magic
  line masked and its body linted; any other cell magic (``%%bash``, ``%%writefile``,
  ``%%html``...) masks its whole cell, as blank lines;
* lines Python cannot read are masked, each replaced by ``pass`` at its indentation (so the
  lines and blocks around it stay where they were): line magics (``%matplotlib inline``,
  ``x = %time f()``, and ``pip install x``, ``cd ../data`` where IPython's automagic runs a
  line that is no Python as the magic it names), shell escapes (``!pip install x``,
  ``files = !ls``) and help lines (``model?``, ``??torch.nn``), each only where a statement
  starts, with the lines a trailing backslash continues it onto (blank).

Findings are found on the joined text and shown by cell: ``Cells`` maps a joined line to its
cell (numbered among all the notebook's cells from 1, markdown cells included: the position
a reader counts to) and its line in that cell. Jupyter compiles each cell alone, so a cell
that does not compile loses that cell and nothing else: the engine checks the cells one by
one where the joined text does not parse (``Notebook.cell_texts``), reports each bad cell
as a TL000 finding in it and lints the rest with that cell blanked (``Notebook.without``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from torchlint import bounded

if TYPE_CHECKING:
    from torchlint.finding import Finding, Fix

SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


class NotebookError(ValueError):
    """The bytes are not a notebook this module reads (the message is one line)."""


@dataclass(frozen=True)
class Cells:
    """Where each code cell starts in the joined text: ``starts[i]`` is the 1-based joined
    line of the first line of cell ``numbers[i]``; ``end`` the joined text's last line;
    ``indents[i]`` the width of the indentation IPython strips from that cell's lines (0 for
    most cells)."""

    numbers: tuple[int, ...] = ()
    starts: tuple[int, ...] = ()
    end: int = 0
    indents: tuple[int, ...] = ()
    masked: tuple[int, ...] = ()  # joined lines IPython syntax was masked on (no fix edits them)

    def indent(self, line: int) -> int:
        """The indentation stripped from the cell of a joined line (0 outside the cells)."""
        at = bisect.bisect_right(self.starts, line) - 1
        return self.indents[at] if 0 <= at < len(self.indents) and line <= self.end else 0

    def locate(self, line: int) -> tuple[int, int, int] | None:
        """``(cell number, line in that cell, lines in that cell)`` of a joined line; None
        outside the cells."""
        at = bisect.bisect_right(self.starts, line) - 1
        if at < 0 or line > self.end:
            return None
        last = self.starts[at + 1] - 1 if at + 1 < len(self.starts) else self.end
        return self.numbers[at], line - self.starts[at] + 1, last - self.starts[at] + 1

    def to_json(self) -> list[list[int]]:
        """``[[cell number, first joined line(, stripped indentation)], ..., [0, last joined
        line](, [-1, masked line, ...])]``: the indentation only where it is not 0, the masked
        lines only where there are any."""
        indents = self.indents or (0,) * len(self.numbers)
        return ([[n, s, i] if i else [n, s] for n, s, i in zip(self.numbers, self.starts, indents)]
                + ([[0, self.end]] if self.numbers else []) + ([[-1, *self.masked]] if self.masked else []))

    @classmethod
    def from_json(cls, data: list[list[int]]) -> "Cells":
        if not data:
            return cls()
        masked: tuple[int, ...] = ()
        if data[-1][0] == -1:
            *data, (_, *masked_lines) = data
            masked = tuple(masked_lines)
        *cells, (_, end) = data
        indents = tuple(c[2] if len(c) > 2 else 0 for c in cells)
        return cls(tuple(c[0] for c in cells), tuple(c[1] for c in cells), end, indents if any(indents) else (), masked)


@dataclass(frozen=True)
class Notebook:
    text: str  # the joined, masked Python: what is linted
    source: str  # the joined cells as written: what reports quote (code frames, fingerprints)
    cells: Cells

    def cell_texts(self) -> list[tuple[int, int, str]]:
        """``(cell number, its first joined line, its Python as linted)`` of each code cell."""
        lines = self.text.split("\n")
        bounds = [*self.cells.starts, self.cells.end + 1]
        return [(number, start, "".join(line + "\n" for line in lines[start - 1:bounds[i + 1] - 1]))
                for i, (number, start) in enumerate(zip(self.cells.numbers, self.cells.starts))]

    def without(self, numbers: set[int]) -> str:
        """The joined text with the lines of cells ``numbers`` blank (every other line where
        it was)."""
        lines = self.text.split("\n")
        bounds = [*self.cells.starts, self.cells.end + 1]
        for i, number in enumerate(self.cells.numbers):
            if number in numbers:
                lines[bounds[i] - 1:bounds[i + 1] - 1] = [""] * (bounds[i + 1] - bounds[i])
        return "\n".join(lines)


def read_notebook(data: bytes) -> Notebook:
    """The joined Python of a notebook's bytes; ``NotebookError`` for anything else. A
    notebook in another language than Python has no code to lint (empty text)."""
    try:
        document = bounded.loads_json(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookError(f"invalid notebook: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    except bounded.ParseError as exc:
        if exc.at is not None:
            raise NotebookError(f"invalid notebook: not JSON (line {exc.at[0]}, column {exc.at[1]}: {exc.at[2]})") from None
        raise NotebookError(f"invalid notebook: {exc}") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError('invalid notebook: no "cells" list (only nbformat 4 notebooks are read)')
    if not _is_python(document.get("metadata")):
        return Notebook("", "", Cells())
    lines: list[str] = []
    written: list[str] = []
    numbers, starts, indents, masked = [], [], [], []
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
        leading = leading_indent(written[len(lines):])
        indents.append(len(leading))
        first = len(lines)
        lines.extend(mask_cell(written[len(lines):]))
        masked.extend(first + i + 1 for i, line in enumerate(lines[first:])
                      if line != _strip(written[first + i], leading))
    joined = lambda lines: "".join(line + "\n" for line in lines)  # noqa: E731
    cells_index = Cells(tuple(numbers), tuple(starts), len(lines), tuple(indents) if any(indents) else (), tuple(masked))
    return Notebook(joined(lines), joined(written), cells_index)


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


# Cell magics whose body IPython runs as Python in the notebook's namespace: linted.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit"})
_CELL_MAGIC = re.compile(r"%%(\w*)")
_INDENT = re.compile(r"[ \t]+")
# at a statement's start: `%magic`, `!cmd`, `targets = %magic` / `targets = !cmd`
_ESCAPE = re.compile(r"\s*(?:[\w.\[\], ()*]+=\s*)?[%!](?!=)")
# `obj?`, `obj.attr??`, `?obj`, `np.*load*?`
_HELP = re.compile(r"\s*(?:\?{1,2}[\w.*]+\??|[\w.*]+\?{1,2})\s*")


def leading_indent(lines: list[str]) -> str:
    """The indentation IPython strips from a cell (``leading_indent``): that of its first
    line with anything but whitespace on it, else ""."""
    first = next((line for line in lines if line.strip()), "")
    match = _INDENT.match(first)
    return match.group(0) if match else ""


def _strip(line: str, indent: str) -> str:
    """``line`` without the indentation IPython strips from its cell (as ``mask_cell``)."""
    return line[len(indent):] if indent and line.startswith(indent) else line


def mask_cell(lines: list[str]) -> list[str]:
    """A cell's lines as IPython runs them, masked (see the module docstring); as many lines."""
    indent = leading_indent(lines)
    if indent:
        lines = [line[len(indent):] if line.startswith(indent) else line for line in lines]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    magic = _CELL_MAGIC.match(lines[first]) if first is not None else None
    if magic is not None:
        if magic.group(1) not in PYTHON_CELL_MAGICS:
            return [""] * len(lines)
        lines = [*lines[:first], "", *lines[first + 1:]]
    out = []
    scanner = _Continuation()
    continued = False  # the line before was IPython syntax ending in a backslash: this one is its rest
    for line in lines:
        if continued:
            continued = line.rstrip().endswith("\\")
            out.append("")
            continue
        if scanner.at_statement_start and (_ESCAPE.match(line) or _HELP.fullmatch(line) or _automagic(line)):
            continued = line.rstrip().endswith("\\")
            line = line[: len(line) - len(line.lstrip())] + "pass"
        scanner.feed(line)
        out.append(line)
    return out


# Line magics IPython runs without their ``%`` (automagic, on by default) when the line is
# not Python: ``pip install x``, ``cd ../data``, ``ls -la``.
AUTOMAGICS = frozenset({"pip", "conda", "cd", "ls", "pwd", "env", "load_ext", "reload_ext", "matplotlib", "run",
                        "time", "timeit", "who", "whos", "cat", "mkdir", "rm", "cp", "mv", "rmdir", "mamba",
                        "autoreload", "config", "pdb", "history", "alias", "bookmark", "store", "load", "sx",
                        "system", "prun", "lsmagic", "magic", "precision", "reset", "xmode", "less", "clear",
                        "notebook", "tensorboard", "wandb"})
# A magic's name, then its arguments or nothing: never an operator, a bracket or ``=`` (IPython
# takes ``config = dict(`` for Python, whatever the name).
_FIRST_WORD = re.compile(r"\s*([A-Za-z_]\w*)(?:\s+(?![=(\[,:;+*/%<>!&|^~@])|$)")


def _automagic(line: str) -> bool:
    """An automagic line: a known magic's name first, followed by its arguments (never an
    assignment, call, subscript or operator), and the line is no Python."""
    word = _FIRST_WORD.match(line)
    if word is None or word.group(1) not in AUTOMAGICS:
        return False
    try:
        compile(line.strip(), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return True
    return False


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
    positions in the joined text, not in the notebook's file); its columns as the cell is
    written (IPython's stripped indentation added back), and the lines its message names as
    "line M" of its cell or "cell N, line M". Unchanged outside a notebook (``cells`` empty)."""
    index = Cells.from_json(cells)
    start = index.locate(finding.line)
    if start is None:
        return finding
    cell, line, length = start
    end = index.locate(finding.end_line)
    end_line = end[1] if end is not None and end[0] == cell else line
    shift = index.indent(finding.line)  # columns as written, before IPython's indent stripping

    def in_its_cell(match: "re.Match[str]") -> str:  # "(line 224)": a line of the joined text
        where = index.locate(int(match.group(1)))
        if where is None:
            return match.group(0)
        return f"line {where[1]}" if where[0] == cell else f"cell {where[0]}, line {where[1]}"

    return replace(finding, column=finding.column + shift, end_column=finding.end_column + shift,
                   message=_LINE_REFERENCE.sub(in_its_cell, finding.message),
                   extra={**finding.extra, "cell": cell, "cell_line": line, "cell_end_line": end_line,
                          "cell_lines": length}, fix=_cell_fix(finding.fix, index, cell))


def _cell_fix(fix: "Fix | None", index: Cells, cell: int) -> "Fix | None":
    """``fix`` with its edits' columns as the cell is written (IPython's stripped indentation
    added back): kept where every edit is in the finding's ``cell`` and replaces no line whose
    IPython syntax was masked (``fix_notebook`` then applies it to the cell's source); None
    otherwise, and for an edit that adds lines to a cell written indented."""
    if fix is None:
        return None
    masked = set(index.masked)
    edits = []
    for edit in fix.edits:
        span = edit.span
        start, end = index.locate(span.line), index.locate(span.end_line)
        if start is None or end is None or start[0] != cell or end[0] != cell:
            return None
        if any(line in masked for line in range(span.line, max(span.end_line + (span.end_column > 1), span.line + 1))):
            return None
        shift = index.indent(span.line)
        if shift and "\n" in edit.content:
            return None
        edits.append(replace(edit, span=replace(span, column=span.column + shift, end_column=span.end_column + shift)))
    return replace(fix, edits=tuple(edits))


# How a message names another line of its file ("after `model.eval()` (line 12)", "at line 40").
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


def place(finding: "Finding") -> tuple[int | None, int, int]:
    """Where a report shows ``finding``: ``(cell, line, end line)``, the lines in that cell,
    or ``(None, line, end line)`` for a file that is no notebook."""
    cell = finding.extra.get("cell")
    if cell is None:
        return None, finding.line, finding.end_line
    return cell, finding.extra["cell_line"], finding.extra["cell_end_line"]


# -- where a cell's lines are in the notebook's JSON ------------------------------------------

JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+|\n')


def raw_positions(text: str) -> dict[int, list[tuple[int, int]]]:
    """Where each code cell's source lines are in the notebook's JSON text: cell number (from
    1, as ``Cells`` counts) -> ``(line, column)`` of each line's first character, 1-based.
    nbformat writes a cell's source as a list of strings, one per line, each on a line of its
    own: the column is the one after the string's opening quote. A source written as one
    string puts every line at that string's position. A cell whose source cannot be found is
    left out. Read only for reports that point into the raw file (SARIF, GitHub annotations)."""
    found: dict[int, list[tuple[int, int]]] = {}
    tokens = JSON_TOKEN.finditer(text)
    line, line_start = 1, 0
    stack: list[list] = []  # [kind "{" or "[", key or index, ...]
    key: str | None = None
    path: list = []

    def where(match) -> tuple[int, int]:
        return line, match.start() - line_start + 2  # after the quote

    for match in tokens:
        token = match.group()
        if token == "\n":
            line, line_start = line + 1, match.end()
            continue
        if token in "{[":
            path.append(key if stack and stack[-1][0] == "{" else stack[-1][1] if stack else None)
            stack.append([token, 0])
            key = None
            continue
        if token in "}]":
            if stack:
                stack.pop()
                path.pop()
            continue
        if token == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
            key = None
            continue
        if token == ":":
            continue
        # a value or a key
        if stack and stack[-1][0] == "{" and key is None and token.startswith('"'):
            rest = text[match.end():match.end() + 8].lstrip()
            if rest.startswith(":"):
                key = token[1:-1]
                continue
        if token.startswith('"') and len(path) >= 3 and path[1] == "cells" and isinstance(path[2], int):
            cell = path[2] + 1
            if len(stack) == 4 and path[3] == "source" and stack[-1][0] == "[":  # cells[i].source[j]
                found.setdefault(cell, []).append(where(match))
            elif len(stack) == 3 and key == "source":  # cells[i].source, one string
                first = where(match)
                found[cell] = [first] * (token.count("\\n") + 1)
        key = None if stack and stack[-1][0] == "{" else key
    return found
