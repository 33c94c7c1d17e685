"""Patterns in ``.gitignore`` syntax, matched as git matches them.

Used for ``.gitignore`` files and for the configuration's ``exclude``, ``extend-exclude``,
``extend-include`` and ``per-file-ignores``. One line is one :class:`Pattern`, matched with
git's ``wildmatch`` rules (``WM_PATHNAME``): ``*`` and ``?`` never match ``/``; ``**`` is
special only as a whole path component (``**/x``, ``a/**/b``, ``a/**``); ``[...]`` takes
ranges, ``!``/``^`` negation and POSIX classes (``[[:digit:]]``); a backslash quotes the next
character; a pattern with a ``/`` before its end is anchored to the directory of the file
that wrote it, else it matches a name at any depth; a trailing ``/`` matches directories
only; ``!`` re-includes; trailing spaces are dropped unless quoted.

A :class:`Spec` is one file's patterns: the last pattern matching a path decides
(:meth:`Spec.check`). What git does with files below an ignored directory (they stay
ignored: git never descends into it, so no ``!`` pattern can bring them back) is the
caller's: a directory walk does not enter an ignored directory, and :meth:`Spec.match_file`
checks a path's directories before the path itself.

A line git would never match anything with (``!`` alone, ``[z-a]``, a trailing backslash,
an unknown class such as ``[[:foo:]]``) raises :class:`PatternError` when compiled, so it can
be reported once, with its file and line, and left out.

This module imports only the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e", "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}


class PatternError(ValueError):
    """A line that matches nothing in git (its message says why)."""


@dataclass(frozen=True)
class Pattern:
    text: str  # the line as written
    regex: "re.Pattern[str]"  # matches a path relative to the pattern's base, no trailing "/"
    negated: bool
    directories_only: bool

    def matches(self, path: str, is_dir: bool) -> bool:
        return (is_dir or not self.directories_only) and self.regex.match(path) is not None


def compile_pattern(line: str) -> Pattern | None:
    """One ``.gitignore`` line as a pattern; None for a blank line or a comment;
    ``PatternError`` for a line that can match nothing."""
    text = _strip_trailing_spaces(line)
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    elif text.startswith(("\\!", "\\#")):
        text = text[1:]
    directories_only = text.endswith("/") and not text.endswith("\\/")
    if directories_only:
        text = text.rstrip("/")
    if not text:
        raise PatternError("empty pattern")
    anchored = "/" in text
    body = _translate(text.lstrip("/") if anchored else text)
    prefix = "" if anchored else "(?:.*/)?"
    return Pattern(line, re.compile(f"{prefix}{body}\\Z", re.DOTALL), negated, directories_only)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def _translate(pattern: str) -> str:
    """A wildmatch pattern (WM_PATHNAME) as a regular expression."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole:
                if j == n:  # "a/**": everything inside
                    out.append(".*")
                    i = j
                else:  # "**/x", "a/**/b": zero or more directories
                    out.append("(?:.*/)?")
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            part, i = _bracket(pattern, i)
            out.append(part)
        elif char == "\\":
            if i + 1 >= n:
                raise PatternError("a backslash at the end quotes nothing")
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """``[...]`` at ``start``: the regular expression class and the index after it."""
    i, n = start + 1, len(pattern)
    negated = i < n and pattern[i] in "!^"
    if negated:
        i += 1
    parts: list[str] = []
    first = True
    previous: str | None = None
    while True:
        if i >= n:
            raise PatternError("a '[' that is never closed")
        char = pattern[i]
        if char == "]" and not first:
            i += 1
            break
        first = False
        if char == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end < 0:
                raise PatternError("a '[:' class that is never closed")
            name = pattern[i + 2:end]
            if name not in _CLASSES:
                raise PatternError(f"unknown character class [:{name}:]")
            parts.append(_CLASSES[name])
            previous = None
            i = end + 2
            continue
        if char == "\\":
            i += 1
            if i >= n:
                raise PatternError("a '[' that is never closed")
            char = pattern[i]
        if char == "-" and previous is not None and i + 1 < n and pattern[i + 1] != "]":
            high = pattern[i + 1]
            skip = 2
            if high == "\\" and i + 2 < n:
                high, skip = pattern[i + 2], 3
            if high < previous:
                raise PatternError(f"the range {previous}-{high} is empty")
            parts[-1] = f"{re.escape(previous)}-{re.escape(high)}"
            previous = None
            i += skip
            continue
        parts.append(re.escape(char))
        previous = char
        i += 1
    body = "".join(parts)
    return (f"(?!/)[^{body}]" if negated else f"(?!/)[{body}]"), i


class Spec:
    """One file's patterns (or the configuration's): the last that matches decides."""

    def __init__(self, patterns: Iterable[Pattern]):
        self.patterns = list(patterns)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> "Spec":
        """A spec of ``lines``; ``PatternError`` for the first line that matches nothing."""
        return cls(p for p in (compile_pattern(line) for line in lines) if p is not None)

    def check(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` pattern; None: no pattern matches
        ``path`` itself (relative, ``/``-separated, no trailing ``/``)."""
        for pattern in reversed(self.patterns):
            if pattern.matches(path, is_dir):
                return not pattern.negated
        return None

    def match_file(self, path: str) -> bool:
        """Whether ``path`` (a trailing ``/`` for a directory) is ignored: one of its
        directories is, or it is itself, as git decides."""
        is_dir = path.endswith("/")
        parts = path.rstrip("/").split("/")
        for depth in range(1, len(parts) + 1):
            last = depth == len(parts)
            if self.check("/".join(parts[:depth]), is_dir or not last):
                return True
        return False


def git_root(start: Path) -> Path | None:
    """The top of the git repository ``start`` is in (the nearest directory above it, or it,
    holding ``.git``); None outside one."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None
