"""Baselines: record today's findings (``--write-baseline FILE``), then report only new ones
(``--baseline FILE``).

The file is JSON::

    {"torchlint-baseline": 1,
     "findings": [{"rule": "TL001", "path": "train.py", "fingerprint": "9f3c...:1", "message": "..."}]}

Paths are relative to the directory of the baseline file, so it works from any working
directory, and escaped as the JSON format escapes them (``torchlint.finding.escape_path``).
The file is written whole or not at all (``torchlint.output.write_atomic``). A finding matches an entry with the same rule, path and fingerprint (the one SARIF
reports, see ``torchlint.fingerprint``): moving code or adding lines above it keeps it
matched. Matching counts: an entry absorbs one finding only. ``message`` is for people
reading the file and is not compared.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from torchlint import bounded
from torchlint.errors import UsageError
from torchlint.fingerprint import for_run
from torchlint.output import write_atomic
from torchlint.finding import Finding, escape_path

VERSION_KEY = "torchlint-baseline"
VERSION = 1

Key = tuple[str, str, str]  # rule, path (relative to the baseline's directory), fingerprint


@dataclass
class Baseline:
    path: Path
    entries: Counter[Key]

    def filter(self, findings: Sequence[Finding], cwd: Path) -> tuple[list[Finding], int]:
        """The findings not in the baseline, and how many were matched."""
        remaining = Counter(self.entries)
        keys = _keys(findings, cwd, self.path.parent)
        new = []
        for finding, key in zip(findings, keys):
            if remaining[key] > 0:
                remaining[key] -= 1
            else:
                new.append(finding)
        return new, len(findings) - len(new)


def _relative(path: str, cwd: Path, base: Path) -> str:
    absolute = Path(os.path.normpath(cwd / path))
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return Path(os.path.relpath(absolute, base)).as_posix()


def _keys(findings: Sequence[Finding], cwd: Path, base: Path) -> list[Key]:
    base = base.resolve()  # finding paths are relative to the resolved working directory
    prints = for_run(findings, cwd)
    return [(f.rule, escape_path(_relative(f.path, cwd, base)), p) for f, p in zip(findings, prints)]


def write(file: str, findings: Sequence[Finding], cwd: Path) -> int:
    """Write a baseline of ``findings`` to ``file``; returns the number of entries."""
    target = Path(cwd / file)
    entries = [
        {"rule": rule, "path": path, "fingerprint": fp, "message": f.message}
        for f, (rule, path, fp) in zip(findings, _keys(findings, cwd, target.parent))
    ]
    entries.sort(key=lambda e: (e["path"], e["rule"], e["fingerprint"]))
    text = json.dumps({VERSION_KEY: VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n"
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise UsageError(f"--write-baseline {file}: cannot write: {exc.strerror or exc}") from None
    return len(entries)


def load(file: str, cwd: Path) -> Baseline:
    """Read a baseline file; a missing or malformed one is a ``UsageError`` (exit 2)."""
    target = Path(cwd / file)
    where = f"--baseline {file}"
    try:
        text = bounded.read_text(target, bounded.BASELINE_LIMIT)
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file (create it with `torchlint check --write-baseline {file}`)") from None
    except IsADirectoryError:
        raise UsageError(f"{where}: is a directory, not a baseline file") from None
    except bounded.ReadError as exc:
        if os.path.isdir(target):
            raise UsageError(f"{where}: is a directory, not a baseline file") from None
        raise UsageError(f"{where}: not a torchlint baseline ({exc})") from None
    except OSError as exc:
        raise UsageError(f"{where}: cannot read: {exc.strerror or exc}") from None
    try:
        data = bounded.loads_json(text)
    except bounded.ParseError as exc:
        raise UsageError(f"{where}: not a torchlint baseline: {exc}") from None
    if not isinstance(data, dict) or VERSION_KEY not in data:
        raise UsageError(f"{where}: not a torchlint baseline (expected a JSON object with "
                         f"\"{VERSION_KEY}\": {VERSION} and \"findings\"; write one with --write-baseline)")
    if data[VERSION_KEY] != VERSION:
        raise UsageError(f"{where}: unsupported baseline version {data[VERSION_KEY]!r} (this torchlint reads "
                         f"version {VERSION}; rewrite it with --write-baseline)")
    items = data.get("findings")
    if not isinstance(items, list):
        raise UsageError(f"{where}: malformed baseline: \"findings\" must be a list")
    entries: Counter[Key] = Counter()
    for n, item in enumerate(items):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("rule", "path", "fingerprint")):
            raise UsageError(f"{where}: malformed baseline: findings[{n}] must be an object with string "
                             "\"rule\", \"path\" and \"fingerprint\"")
        entries[(item["rule"], item["path"], item["fingerprint"])] += 1
    return Baseline(target.resolve(), entries)
