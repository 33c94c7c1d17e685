"""GitHub's ``primaryLocationLineHash``: the fingerprint GitHub's SARIF upload
(github/codeql-action, ``src/fingerprints.ts``) computes for a result's start line. When a
SARIF file carries the same value the upload keeps it; a different one draws a warning per
result ("found existing inconsistent fingerprint value").

The algorithm, as the action applies it to a file read as UTF-8 (bad bytes as U+FFFD, a BOM
kept) and taken as UTF-16 code units (JavaScript's ``charCodeAt``):

* spaces and tabs are dropped; CR LF and a lone CR become LF; what remains is a stream of
  units, followed by one 0xFFFF unit for the end of the file and then zeros;
* a line starts at the first unit read after a LF (the first line at the first unit; a line
  holding only spaces starts at its LF; a file ending in a newline gets one more line, which
  starts at the 0xFFFF);
* a line's hash is the polynomial ``sum(u[i] * 37 ** (99 - i) for i in range(100))`` over the
  100 units from its start, modulo 2**64, written in lower-case hex without leading zeros;
* the fingerprint is ``<hash>:<n>`` where ``n`` counts the lines of the file, from the top,
  up to this one, whose hash is the same (identical lines get ``:1``, ``:2``, ...).

Written from that description, not copied.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from torchlint.reading import given

if TYPE_CHECKING:
    from torchlint.finding import Finding

WINDOW = 100
BASE = 37
_MASK = (1 << 64) - 1
_END = 0xFFFF
_SKIPPED = (0x20, 0x09)  # space, tab
_CR, _LF = 0x0D, 0x0A


def _units(text: str) -> tuple[list[int], list[int]]:
    """The normalised UTF-16 units of ``text`` (end marker included) and the index in them
    at which each line starts."""
    data = text.encode("utf-16-le", "surrogatepass")
    units: list[int] = []
    starts: list[int] = []
    line_start, after_cr = True, False
    for i in range(0, len(data), 2):
        unit = data[i] | data[i + 1] << 8
        if unit in _SKIPPED or (after_cr and unit == _LF):
            after_cr = False
            continue
        after_cr = unit == _CR
        if after_cr:
            unit = _LF
        if line_start:
            starts.append(len(units))
        line_start = unit == _LF
        units.append(unit)
    if line_start:
        starts.append(len(units))
    units.append(_END)
    return units, starts


def line_hashes(text: str) -> list[str]:
    """``<hash>:<n>`` for every line GitHub counts in ``text``, in order (index 0: line 1)."""
    units, starts = _units(text)
    units.extend([0] * WINDOW)
    # prefix[k] = hash of units[:k]; a window's hash follows from two prefixes
    prefix = [0] * (len(units) + 1)
    h = 0
    for k, unit in enumerate(units):
        h = (h * BASE + unit) & _MASK
        prefix[k + 1] = h
    shift = pow(BASE, WINDOW, 1 << 64)
    seen: Counter[str] = Counter()
    out = []
    for start in starts:
        value = format((prefix[start + WINDOW] - prefix[start] * shift) & _MASK, "x")
        seen[value] += 1
        out.append(f"{value}:{seen[value]}")
    return out


def read_as_github(path: Path) -> str:
    """The file as the upload action reads it: UTF-8, each bad sequence as U+FFFD, BOM kept."""
    from torchlint.bounded import read_file

    return read_file(path, MAX_BYTES).decode("utf-8", "replace")


# A finding's file larger than this gets no line hash (GitHub's upload computes it then).
MAX_BYTES = 8 << 20


def hashes_for(cwd: Path) -> Callable[[str], "list[str] | None"]:
    """``path -> line hashes`` (None when unreadable or too large), cached, paths relative to
    ``cwd``."""
    cache: dict[str, list[str] | None] = {}

    def hashes(path: str) -> list[str] | None:
        if path not in cache:
            full = cwd / path
            try:
                if given(full) is not None:
                    raise ValueError("linted from standard input: the file may differ")
                if not os.path.isfile(full) or full.stat().st_size > MAX_BYTES:
                    raise ValueError("not a regular file, or too large")
                cache[path] = line_hashes(read_as_github(full))
            except (OSError, ValueError):
                cache[path] = None
        return cache[path]

    return hashes


def line_hash(hashes: list[str] | None, line: int) -> str | None:
    """The fingerprint of 1-based ``line``, if the file has it."""
    if hashes is None or not 1 <= line <= len(hashes):
        return None
    return hashes[line - 1]


def notebook_places_for(cwd: Path) -> Callable[[Finding], "tuple[int, int, int, int] | None"]:
    """``finding -> (line, column, end line, end column)`` in the raw JSON of the notebook it
    is in (``notebook.raw_positions``: the line nbformat wrote each source line on, the column
    after its opening quote; escapes inside a line are not counted), for reports that point
    into the file itself (SARIF, GitHub annotations). None outside a notebook, or where the
    file cannot be read or does not hold the cell any more. Files are read once, cached."""
    from torchlint.bounded import NOTEBOOK_LIMIT, read_file
    from torchlint.notebook import raw_positions

    cache: dict[str, dict[int, list[tuple[int, int]]] | None] = {}

    def places(f: Finding) -> tuple[int, int, int, int] | None:
        cell = f.extra.get("cell")
        if cell is None:
            return None
        if f.path not in cache:
            try:
                data = given(cwd / f.path)
                data = data if data is not None else read_file(cwd / f.path, NOTEBOOK_LIMIT)
                cache[f.path] = raw_positions(data.decode("utf-8-sig"))
            except (OSError, ValueError):
                cache[f.path] = None
        lines = (cache[f.path] or {}).get(cell)
        first, last = f.extra.get("cell_line", 0), f.extra.get("cell_end_line", 0)
        if not lines or not 1 <= first <= len(lines):
            return None
        (line, column), (end_line, end_column) = lines[first - 1], lines[min(max(last, first), len(lines)) - 1]
        return line, column + f.column - 1, end_line, end_column + max(f.end_column, 1) - 1

    return places
