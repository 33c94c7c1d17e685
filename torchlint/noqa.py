"""Suppression comments.

* ``# noqa`` or ``# noqa: TL001, TL002`` at the end of the line a finding is reported on;
* ``# torchlint: noqa`` (optionally ``: TL001,TL003``) on a line of its own silences the
  whole file; put it near the top.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

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


# A small lexer that tells comments from string literals, which is all suppression needs.
# String prefixes (r, b, f, ...) need no matching: they are identifier characters before the
# quote. Every pattern is linear: an unterminated one-line string ends at its line's end and an
# unterminated triple-quoted string at the end of the text, as the tokenizer reports them.
_START = re.compile("#|'''|\"\"\"|'|\"")
_REST = {  # the rest of a literal after its opening quote(s), closing quote(s) included if there
    "'''": re.compile(r"[^\\']*(?:(?:\\.|'(?!''))[^\\']*)*(?:''')?", re.DOTALL),
    '"""': re.compile(r'[^\\"]*(?:(?:\\.|"(?!""))[^\\"]*)*(?:""")?', re.DOTALL),
    "'": re.compile(r"[^\\'\r\n]*(?:\\(?:\r\n|.)[^\\'\r\n]*)*'?", re.DOTALL),
    '"': re.compile(r'[^\\"\r\n]*(?:\\(?:\r\n|.)[^\\"\r\n]*)*"?', re.DOTALL),
}
_COMMENT = re.compile(r"[^\r\n]*")
_NOQA = re.compile("noqa", re.IGNORECASE)


def _line_breaks(text: str, start: int, end: int) -> int:
    """Line breaks in ``text[start:end]``, counted as the parser counts them (``\\r\\n``, ``\\r``
    or ``\\n``; not form feeds, U+2028 or the other breaks ``str.splitlines`` knows)."""
    return text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)


def _comments(text: str) -> Iterator[tuple[int, bool, str]]:
    """(line, stands alone on its line, text) of every comment that mentions noqa.

    Not ``tokenize``: this runs on every file that mentions noqa, must never raise (the file
    may not even be Python) and is tens of times faster.
    """
    line, counted, pos = 1, 0, 0
    while True:
        start = _START.search(text, pos)
        if start is None:
            return
        opener = start.group()
        if opener != "#":
            pos = _REST[opener].match(text, start.end()).end()
            continue
        pos = _COMMENT.match(text, start.end()).end()
        comment = text[start.start():pos]
        if not _NOQA.search(comment):
            continue
        line += _line_breaks(text, counted, start.start())
        counted = start.start()
        line_start = max(text.rfind("\n", 0, counted), text.rfind("\r", 0, counted)) + 1
        yield line, not text[line_start:counted].strip(), comment


def scan(text: str) -> Suppressions:
    """The suppression comments of a file's text. Only real comments count: ``# noqa`` inside
    a string or docstring suppresses nothing."""
    sup = Suppressions()
    if "noqa" not in text.lower():  # most files: a few milliseconds per megabyte, nothing else
        return sup
    for number, alone, comment in _comments(text):
        whole = _FILE.match(comment) if alone else None
        if whole:
            codes = _codes(whole.group("codes"))
            if codes is None or sup.file is None:
                sup.file = None
            else:
                sup.file = codes | (sup.file if isinstance(sup.file, frozenset) else frozenset())
            continue
        match = _LINE.search(comment)
        if match:
            sup.lines[number] = _codes(match.group("codes"))
    return sup
