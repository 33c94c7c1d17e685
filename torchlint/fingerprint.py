"""Stable finding fingerprints, shared by baselines, ``--format json`` (``fingerprint``) and
SARIF (``partialFingerprints["torchlint/v1"]``; GitHub's own line hash is
``torchlint.formats.linehash``).

A fingerprint must survive edits that do not touch the finding (lines added or removed
above it, the code moved within its file, re-indentation) and must tell apart two identical
findings in one file. It is built from:

* the rule code,
* the text of the finding's first line with all whitespace removed,
* the flagged text on that line (from the start column to the end column, or to the end of
  the line for a multi-line finding), whitespace removed: two findings on one line differ,
* and, appended as ``:N``, the 1-based occurrence of that (rule, digest) pair in the file,
  counted in source order: two identical findings in one file differ.

Line numbers, columns and messages are not part of it (messages may mention other lines).
The shape, ``<16 hex digits>:<occurrence>``, is that of GitHub's ``primaryLocationLineHash``;
the value is not (GitHub's hashes the 100 characters from the line's start, so it changes
with the lines below and is shared by two findings on one line).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

from torchlint.finding import Finding
from torchlint.reading import LineSource, file_lines

_SPACE = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _SPACE.sub("", text)


def digest(finding: Finding, lines: list[str] | None) -> str:
    """The position-independent part of a fingerprint (16 hex digits)."""
    line_text = flagged = ""
    if lines and 1 <= finding.line <= len(lines):
        line_text = lines[finding.line - 1]
        start = max(finding.column - 1, 0)
        end = finding.end_column - 1 if finding.end_line == finding.line else len(line_text)
        flagged = line_text[start:max(end, start)]
    data = "\0".join((finding.rule, _squash(line_text), _squash(flagged)))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprints(findings: Sequence[Finding], lines_of: LineSource) -> list[str]:
    """One fingerprint per finding, in the order given.

    Occurrences are counted over all of ``findings`` in each file, so pass every finding of
    the run (before any baseline filtering)."""
    by_path: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        by_path[f.path].append(i)
    out = [""] * len(findings)
    for path, indices in by_path.items():
        lines = lines_of(path)
        seen: Counter[str] = Counter()
        order = sorted(indices, key=lambda i: (findings[i].line, findings[i].column, findings[i].end_line,
                                               findings[i].end_column, findings[i].rule, findings[i].message))
        for i in order:
            d = digest(findings[i], lines)
            seen[d] += 1
            out[i] = f"{d}:{seen[d]}"
    return out


def for_run(findings: Sequence[Finding], cwd: Path) -> list[str]:
    """Fingerprints of findings whose paths are relative to ``cwd`` (as the CLI reports them)."""
    return fingerprints(findings, file_lines(cwd))
