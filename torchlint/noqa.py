"""Suppression comments.

* ``# noqa`` or ``# noqa: TL001, TL002`` at the end of the line a finding is reported on;
* ``# torchlint: noqa`` (optionally ``: TL001,TL003``) on a line of its own silences the
  whole file; put it near the top.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LINE = re.compile(r"#\s*(?:torchlint:\s*)?noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = re.compile(
    r"^\s*#\s*torchlint:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[\s,]+")


def _codes(text: str | None) -> frozenset[str] | None:
    if not text:
        return None  # all codes
    return frozenset(c.upper() for c in _SPLIT.split(text.strip()) if c)


@dataclass
class Suppressions:
    # line -> codes (None: every code)
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    # whole file: False (no), None (every code) or codes
    file: frozenset[str] | None | bool = False

    def suppresses(self, rule: str, line: int) -> bool:
        if self.file is not False and (self.file is None or rule in self.file):
            return True
        if line in self.lines:
            codes = self.lines[line]
            return codes is None or rule in codes
        return False

    def to_json(self) -> dict:
        return {
            "lines": {str(k): (sorted(v) if v is not None else None) for k, v in self.lines.items()},
            "file": self.file if self.file is False else (sorted(self.file) if self.file is not None else None),
        }

    @classmethod
    def from_json(cls, data: dict) -> "Suppressions":
        lines = {int(k): (frozenset(v) if v is not None else None) for k, v in data["lines"].items()}
        f = data["file"]
        return cls(lines, f if f is False else (frozenset(f) if f is not None else None))


def scan(text: str) -> Suppressions:
    sup = Suppressions()
    if "noqa" not in text and "NOQA" not in text:
        return sup
    for number, line in enumerate(text.splitlines(), start=1):
        if "noqa" not in line.lower():
            continue
        whole = _FILE.match(line)
        if whole:
            codes = _codes(whole.group("codes"))
            if codes is None or sup.file is None:
                sup.file = None
            else:
                sup.file = codes | (sup.file if isinstance(sup.file, frozenset) else frozenset())
            continue
        match = _LINE.search(line)
        if match:
            sup.lines[number] = _codes(match.group("codes"))
    return sup
