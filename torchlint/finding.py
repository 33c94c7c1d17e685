"""The unit of output: one problem at one place in one file."""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


class RuleMeta(Protocol):
    """What a finding takes from its rule: a ``Rule`` class or instance."""

    code: str
    name: str
    severity: Severity


@dataclass(frozen=True, slots=True)
class Span:
    """Where a finding is: the one location encoding, in findings and in rule facts.

    1-based lines and columns; ``end_column`` is the column just past the last character
    (as ruff reports it). In facts a span is the JSON list ``[line, column, end_line,
    end_column]`` (``to_json``/``from_json``)."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of_range(cls, rng: Any) -> "Span":
        """From a LibCST ``CodeRange`` (1-based lines, 0-based columns)."""
        return cls(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1)

    @classmethod
    def point(cls, line: int, column: int) -> "Span":
        """One character at ``line``/``column`` (1-based)."""
        return cls(line, column, line, column + 1)

    def to_json(self) -> list[int]:
        return [self.line, self.column, self.end_line, self.end_column]

    @classmethod
    def from_json(cls, data: list[int]) -> "Span":
        line, column, end_line, end_column = data
        return cls(line, column, end_line, end_column)


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found in a file.

    ``path`` is relative to the working directory (posix separators); ``line`` and
    ``column`` are 1-based, as are ``end_line``/``end_column`` (the end column is the column
    just past the last character, as ruff reports it).
    """

    rule: str
    name: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    # Set by ``check --trace``: True when the dry-run trace confirmed the finding.
    confirmed: bool | None = None
    # Extra machine-readable facts (never shown in the text formats).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # The edit that fixes it, where one mechanical edit is right (``torchlint.fixes``).
    fix: "Fix | None" = field(default=None, compare=False, hash=False)

    @classmethod
    def at(cls, rule: RuleMeta, path: str, span: Span, message: str, *, extra: dict[str, Any] | None = None,
           confirmed: bool | None = None, fix: "Fix | None" = None) -> "Finding":
        """The one way to build a finding: ``rule``'s code, name and severity at ``span`` of ``path``."""
        return cls(rule.code, rule.name, rule.severity, path, span.line, span.column, span.end_line,
                   span.end_column, message, confirmed, dict(extra or {}), fix)

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.rule, self.message)

    def to_dict(self) -> dict[str, Any]:
        fix = self.fix
        data = asdict(replace(self, fix=None))
        del data["fix"]
        data["severity"] = self.severity.value
        extra = data.pop("extra")
        if data["confirmed"] is None:
            del data["confirmed"]
        if extra:
            data["extra"] = extra
        if fix is not None:
            data["fix"] = fix.to_json()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        data = dict(data)
        data["severity"] = Severity(data["severity"])
        if data.get("fix") is not None:
            data["fix"] = Fix.from_json(data["fix"])
        return cls(**data)


# -- fixes: the edits a finding carries (built by ``torchlint.fixes``) ----------------------

SAFE, UNSAFE = "safe", "unsafe"
APPLICABILITIES = (SAFE, UNSAFE)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from ``span``'s start to its end (exclusive) by ``content``; an
    empty span inserts."""

    span: Span
    content: str

    def to_json(self) -> list:
        return [*self.span.to_json(), self.content]

    @classmethod
    def from_json(cls, data: list) -> "Edit":
        *span, content = data
        return cls(Span.from_json(span), content)


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    applicability: str
    edits: tuple[Edit, ...]

    @classmethod
    def safe(cls, title: str, *edits: Edit) -> "Fix":
        return cls(title, SAFE, tuple(edits))

    @classmethod
    def unsafe(cls, title: str, *edits: Edit) -> "Fix":
        return cls(title, UNSAFE, tuple(edits))

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "applicability": self.applicability, "edits": [e.to_json() for e in self.edits]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Fix":
        return cls(data["title"], data["applicability"], tuple(Edit.from_json(e) for e in data["edits"]))

    @staticmethod
    def valid_json(data: Any) -> bool:
        """Whether ``data`` is what ``to_json`` writes (the cache checks what it reads)."""
        return (type(data) is dict and data.keys() == {"title", "applicability", "edits"}
                and type(data["title"]) is str and data["applicability"] in APPLICABILITIES
                and type(data["edits"]) is list and all(
                    type(e) is list and len(e) == 5 and all(type(n) is int and n >= 1 for n in e[:4])
                    and type(e[4]) is str for e in data["edits"]))


def trailing_json(fix: "Fix | None") -> list:
    """A fix as the optional last item of a pending finding's fact list: ``[]`` or ``[its JSON]``."""
    return [fix.to_json()] if fix is not None else []


def from_trailing(rest: list) -> "Fix | None":
    """The fix ``trailing_json`` put after a pending finding's items (``*rest`` of the list)."""
    return Fix.from_json(rest[0]) if rest else None


# -- making text safe to print -----------------------------------------------------------

# What a terminal or a CI log would act on rather than show: C0 and C1 controls (newlines
# that start a new ``::error`` workflow command, ESC that starts colour and OSC sequences),
# DEL, Unicode line/paragraph separators, bidirectional overrides (Trojan Source), the two
# noncharacters XML cannot carry, and lone surrogates (``surrogateescape``d bytes of a file
# name that is not UTF-8, which no UTF-8 output can carry).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match) -> str:
    char = match.group()
    point = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= point <= 0xDCFF:  # a byte that os.fsdecode could not decode: show the byte
        return f"\\x{point - 0xDC00:02x}"
    return f"\\x{point:02x}" if point <= 0xFF else f"\\u{point:04x}"


def escape_text(text: str, *, keep_line_breaks: bool = False) -> str:
    """``text`` with every control character, line separator, bidirectional override and
    undecodable byte shown as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``, ``\\xff``),
    for the text formats and stderr. Other characters, backslashes included, are unchanged.
    ``keep_line_breaks`` leaves CR and LF for a caller that escapes them its own way (the
    ``github`` format's ``%0D``/``%0A``)."""
    if keep_line_breaks:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in "\r\n" else _visible(m), text)
    return _UNSAFE.sub(_visible, text)


def escape_path(path: str, *, keep_line_breaks: bool = False) -> str:
    """A path as the text and JSON formats show it: as ``escape_text`` with backslashes
    doubled first, so the escape is reversible (``\\xff`` is the byte 0xff of a name that is
    not UTF-8, ``\\\\`` a backslash)."""
    return escape_text(path.replace("\\", "\\\\"), keep_line_breaks=keep_line_breaks)


_LINE_BREAK = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def one_line(message: str) -> str:
    """``message`` on one line: each line break (with the indentation around it) becomes
    one space, so a message quoting a multi-line expression never spans lines."""
    return _LINE_BREAK.sub(" ", message)
