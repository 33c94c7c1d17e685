"""Reading and parsing one file: bytes in, a LibCST module (or a TL000 reason) out.

Nothing here imports or executes the linted code.
"""

from __future__ import annotations

import ast
import io
import re
import symtable
import sys
import tokenize
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

import libcst as cst

from torchlint.errors import bounded, exception_text
from torchlint.speedups import nodes
from torchlint.reading import decode
from torchlint.results import ParseFailure

if TYPE_CHECKING:
    from torchlint.syntax import Feature, Version


@dataclass
class Parsed:
    """A file that can be analysed: its text and, where it was built, its ``ast`` tree.

    ``tree`` is None where the caller needed no CPython tree (``check_syntax`` with
    ``tree=False``). For a file in syntax newer than the running interpreter, ``tree`` is the
    tree of its ``torchlint.syntax.downlevel`` form (right imports and classes, wrong
    positions: ``exact`` is False) and ``module`` the LibCST tree already built to check it."""

    text: str
    tree: ast.Module | None
    module: cst.Module | None = None
    exact: bool = True
    # Why LibCST could not read the text, where it was tried first (``read_python``) and
    # CPython's parser then accepted it: the engine reports that instead of parsing again.
    cst_failure: "ParseFailure | None" = None


def read_text(data: bytes) -> tuple[str | None, ParseFailure | None]:
    """``(text, None)``, or ``(None, failure)`` for bytes that are not readable source."""
    try:
        return decode(data), None
    except ValueError as exc:
        return None, ParseFailure(f"cannot read file: {exc}")


def check_syntax(text: str, tree: bool = True) -> tuple[Parsed | None, ParseFailure | None]:
    """Parse with CPython's own parser: ``(parsed, None)`` or ``(None, failure)``. This runs
    first: it is several times faster than LibCST's parser, gives the familiar error
    messages, and refuses input that LibCST's native parser would crash the whole process on
    (thousands of nested brackets, LibCST issues 619 and 1000), so such files never reach
    LibCST.

    With ``tree=False`` (the caller builds LibCST's tree and reads everything from it) the
    text is checked by ``symtable``: the same parser, without turning its tree into Python
    objects and freeing them again (measured on the 351 files of torchvision+skorch+accelerate:
    0.38 s against 0.69 s for ``ast.parse``, one process, files in turn). Where that check fails,
    ``ast.parse`` decides, so the outcome (the error, its position, or a file analysed
    after all: ``symtable`` also refuses what only the compiler would, such as
    ``nonlocal`` at module level, and runs out of depth a little earlier) is exactly
    ``ast.parse``'s."""
    if not tree:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences and the like
                symtable.symtable(text, "<file>", "exec")
            return Parsed(text, None), None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # ast.parse gives the outcome
    try:
        return Parsed(text, parse_ast(text)), None
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        msg = exc.msg or "invalid syntax"
        return None, ParseFailure(f"syntax error: {msg}", max(line, 1), max(col, 1), msg not in _LIMITS)
    except (RecursionError, MemoryError):
        return None, ParseFailure(TOO_DEEP)
    except ValueError as exc:  # e.g. source code string cannot contain null bytes
        return None, ParseFailure(f"cannot parse: {exc}")


def parse_ast(text: str) -> ast.Module:
    """``ast.parse(text)`` without its warnings (invalid escape sequences and the like)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def cpython_tree(text: str) -> ast.Module | None:
    """CPython's tree of ``text``; None where CPython cannot parse it."""
    try:
        return parse_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# CPython's limits, the same in every version's grammar: never a sign of newer syntax.
_LIMITS = {"too many nested parentheses", "too many statically nested blocks"}
INTERPRETER = sys.version_info[:2]

Runner = Callable[..., object]


def _direct(fn: Callable[..., object], *args: object) -> object:
    return fn(*args)


def read_python(
    text: str, target: "Version | None" = None, deep: Runner = _direct, tree: bool = True
) -> tuple[Parsed | None, ParseFailure | None]:
    """``check_syntax``, with the grammar of ``target`` (default: the newest LibCST reads)
    instead of the running interpreter's.

    Syntax newer than the interpreter, which CPython rejects, is read by LibCST: a file
    that LibCST parses and that uses newer syntax (``torchlint.syntax.features``) is
    analysed, through the ``ast`` of its downlevelled form; otherwise CPython's error
    stands. Syntax newer than ``target`` is a failure naming the version it needs. LibCST
    runs through ``deep`` (the engine's deep-stack runner).

    With ``tree=False`` (a rule needs LibCST's tree) and the default target, LibCST's parse
    is the syntax check where its verdict is CPython's (``libcst_decides``): the result then
    holds LibCST's tree and CPython's parser is not run. Where LibCST refuses such text,
    CPython's parser decides as above, and a file it accepts carries LibCST's failure
    (``Parsed.cst_failure``).
    """
    from torchlint.syntax import NEWEST

    target = target or NEWEST
    cst_failure = None
    if not tree and target >= NEWEST and libcst_decides(text):
        module, cst_failure = deep(parse_cst, text)  # type: ignore[misc]
        if module is not None:
            return Parsed(text, None, module), None
    parsed, failure = check_syntax(text, tree)
    if parsed is None:
        if failure is None or not failure.grammar or INTERPRETER >= NEWEST or not _shallow(text):
            return parsed, failure
        return deep(_beyond_interpreter, text, failure, target)  # type: ignore[return-value]
    if target >= INTERPRETER:  # what CPython accepted is within the target
        parsed.cst_failure = cst_failure
        return parsed, None
    return deep(_within_target, parsed, target)  # type: ignore[return-value]


# -- LibCST's parse as the syntax check -------------------------------------------------------
# Where a rule needs LibCST's tree anyway, its parse can be the syntax check: CPython's parser
# (``symtable``) costs about a tenth of LibCST's parse on top of it. That is sound only on text
# whose verdict LibCST's native parser shares with CPython's, with no way to cost LibCST more
# than CPython's check would have let through. Differential fuzzing (corpus files with tokens
# inserted and deleted, LibCST's verdict against ``read_python``'s, on 3.11 and 3.12) found
# LibCST accepting what CPython refuses only in: escapes that fail to decode (``\N{no such
# name}``, a short ``\x``/``\u``/``\U``), non-ASCII bytes literals and identifiers, a line
# continuation opening an indented line, control characters in indentation, f-string format
# specs nested four deep; and three deep, valid from 3.12 (``syntax.features`` names it).
# ``libcst_decides`` leaves all of those to CPython's parser, and so any text with brackets
# more than ``LIBCST_MAX_BRACKETS`` deep (CPython's own limit is 200; LibCST's time grows with
# the cube of the depth) or a logical line of ``LIBCST_MAX_LOGICAL_LINE`` characters or more
# (CPython accepts every chain of operators, calls or attributes that fits in one, and LibCST
# reads any such line in well under a second). Non-ASCII text, and brackets in strings and
# comments, get a second look (``_decides_by_scan``): one scan finds the strings and comments.
LIBCST_MAX_BRACKETS = 100
LIBCST_MAX_BRACES = 3  # ``f"{a:{b:{c}}}"``: three; a fourth is an error in every Python
LIBCST_MAX_LOGICAL_LINE = 2000
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"  # every control character but the newline is fragile
_FRAGILE_ESCAPE = re.compile(rb"\\[NxuU\n]")  # escapes that can fail to decode; line continuations
_NOT_BRACKETS = bytes(code for code in range(256) if code not in b"()[]{}\n")
_OPENING, _BRACE, _CLOSING_BRACE = frozenset(b"([{"), ord("{"), ord("}")


def libcst_decides(text: str) -> bool:
    """Whether LibCST's parse of ``text`` gives CPython's verdict (or reads syntax newer than
    the interpreter, which ``read_python`` analyses all the same), at no more than the cost
    CPython's parser would allow: printable ASCII and newlines only, no fragile escape or line
    continuation, brackets at most ``LIBCST_MAX_BRACKETS`` deep (braces at most
    ``LIBCST_MAX_BRACES``), logical lines shorter than ``LIBCST_MAX_LOGICAL_LINE`` characters.
    Brackets are counted as characters, those in strings and comments too: an opening one
    there only makes the count higher (the text goes to CPython's parser), and a closing one
    is soon a bracket closing nothing, which sends the text to CPython's parser too. Where
    that count fails, it is taken again without each line's comment (``_code_of``: the text
    from a line's first ``#`` when that text holds no quote, which can never be code), so a
    comment such as ``# 1) ...`` keeps LibCST the judge. (Text
    built to hide a bracket in a string behind another can still hand LibCST a long logical
    line: that costs time, as a long line CPython accepts already does, never the verdict.)
    Text that fails these checks by its non-ASCII characters or its bracket count gets a
    second look: ``_decides_by_scan``."""
    if not text.isascii():
        return _decides_by_scan(text)
    data = text.encode("ascii")
    if data.translate(None, _PRINTABLE) or b"\\" in data and _FRAGILE_ESCAPE.search(data):
        return False
    lines = data.split(b"\n")
    if max(map(len, lines)) >= LIBCST_MAX_LOGICAL_LINE:
        return False
    if _nesting_bounded(data.translate(None, _NOT_BRACKETS).split(b"\n"), lines):
        return True
    # Counted again without the comments (``_code_of``): a bracket in a comment (``# 1) ...``,
    # ``# (see above``) no longer sends the file to CPython's parser.
    if b"#" in data and _nesting_bounded([_code_of(line).translate(None, _NOT_BRACKETS) for line in lines], lines):
        return True
    return _decides_by_scan(text, checked=True)


# -- the second look: strings and comments found by one scan ----------------------------------
# ``_SCAN`` reads the text left to right as CPython 3.11's tokenizer does, as far as strings
# and comments go: from a ``#`` in code to the line's end is a comment; a quote in code, with
# the letters right before it as its prefix, opens a string that ends at the first matching
# quote no backslash escapes (a single-quoted one within its line). LibCST's tokenizer (3.12's
# rules) reads the same, except that an f-string's (or t-string's) replacement fields may
# hold any quote there: so an f-string is followed (``_TAME``) only where the two readings
# cannot part, and otherwise the scan gives up; so it does at a quote opening no string it
# can close.
_SCAN = re.compile(r"""
    \#[^\n]*+
  | '''(?P<s3>(?:[^'\\]++|\\.|'(?!''))*+)'''
  | \"\"\"(?P<d3>(?:[^"\\]++|\\.|"(?!""))*+)\"\"\"
  | '(?P<s1>(?:[^'\\\n]++|\\.)*+)'
  | "(?P<d1>(?:[^"\\\n]++|\\.)*+)"
  | '(?P<odd>)|"(?P<odd2>)""", re.S | re.X)  # each branch opens with one character: a fast skip
# An f-string body that LibCST ends where CPython 3.11 does: literal text (a backslash only
# before a character that cannot open or close a field), ``{{``, ``}}`` and fields ``{...}``
# holding no quote but those of brace-free strings on one line, no backslash, no ``#``, no
# line break, and braces only as ``{...}`` one level deep (a format spec ``{x:{w}}``, a set).
# In either reading such a field ends at its own ``}`` (or is an error), so the quote where
# 3.11 ends the f-string is met in literal text, where 3.12 ends it too. Literal text may
# break lines only in a triple-quoted f-string.
_FIELD = r"""\{(?:[^{}'"\\\n\#]++|'[^{}'"\\\n\#]*+'|"[^{}'"\\\n\#]*+"|\{[^{}'"\\\n\#]*+\})*+\}"""
_TAME_BODY = r"""(?:[^{}\\%s]++|\\[^{}\\N\n]|\\\\|\{\{|\}\}|%s)*+"""
_TAME = {False: re.compile(_TAME_BODY % ("\\n", _FIELD)), True: re.compile(_TAME_BODY % ("", _FIELD))}
_FIELDS = re.compile(r"\{\{|\}\}|(" + _FIELD + ")")  # the fields (escaped braces: "")
# Characters not vouched for even in a comment or plain string: C1 controls (NEL among them),
# the line and paragraph separators (line breaks to ``str.splitlines``), surrogates (no
# encoding), a byte order mark.
_UNSAFE = re.compile("[\x80-\x9f\u2028\u2029\ud800-\udfff\ufeff]")
_PRINTABLE_OR_HIGH = _PRINTABLE + bytes(range(0x80, 0x100))
# An f-string (or t-string) touching another string (``f'a'''``): left to CPython's parser,
# as before ``syntax.downlevel`` kept the two apart (it wrote ``''''``, a string running on
# over what followed): rare enough not to be worth following.
_QUOTES = ("'", '"')


class _Unsure(Exception):
    """The scan met something it cannot vouch for."""


def _decides_by_scan(text: str, checked: bool = False) -> bool:
    """``libcst_decides``' second look, for text with non-ASCII characters or with brackets
    that, counted as characters, break the bounds. One scan (``_SCAN``) finds the comments and
    string literals as both parsers' tokenizers do, and the text is LibCST's to decide where:

    * every non-ASCII character stands in a comment or in a string literal that is neither
      bytes nor an f-string or t-string, and none is one of ``_UNSAFE``; the rest of the text
      is printable ASCII with no fragile escape or line continuation (as above). Both
      tokenizers read such a comment or string as one opaque token, and CPython decodes any
      such character in a str literal: with each replaced by an ASCII letter, neither
      parser's verdict changes, and that text is of the shape on which the two agree.
    * the brackets, counted in the code that is left when each comment is dropped, each
      string literal is one character and each f-string is ``F`` and its replacement fields
      (``_FIELDS``), are at most ``LIBCST_MAX_BRACKETS`` deep (braces at most
      ``LIBCST_MAX_BRACES``), no logical line of that code reaches ``LIBCST_MAX_LOGICAL_LINE``
      characters, and no physical line of the text does. That count is the code's brackets
      exactly, or more (those of strings nested in a field), so the depth bound holds as
      before; and every token keeps one character at least, so a logical line holds no more
      tokens than the bound allowed before.

    Anything else (an f-string holding non-ASCII text or fields the scan cannot follow, a
    quote opening no string it can close) is left to CPython's parser. ``checked``: ASCII
    text that ``libcst_decides`` found printable, with no fragile escape and short lines."""
    if not checked:
        if _UNSAFE.search(text):
            return False
        data = text.encode("utf-8")
        if data.translate(None, _PRINTABLE_OR_HIGH) or b"\\" in data and _FRAGILE_ESCAPE.search(data):
            return False
        if max(map(len, text.split("\n"))) >= LIBCST_MAX_LOGICAL_LINE:
            return False
    try:
        code = _SCAN.sub(_token_code, text)
    except _Unsure:
        return False
    if not code.isascii():
        return False
    data = code.encode("ascii")
    return _nesting_bounded(data.translate(None, _NOT_BRACKETS).split(b"\n"), data.split(b"\n"))


def _token_code(match: "re.Match[str]") -> str:
    """What ``_decides_by_scan`` counts of one comment or string literal (see there)."""
    kind = match.lastgroup
    if kind is None:  # a comment
        return ""
    if kind.startswith("odd"):
        raise _Unsure
    text, start = match.string, match.start()
    if not text[start - 1:start].isalpha():
        return "S"  # no prefix: a plain string
    prefix = text[max(start - 2, 0):start]  # the letters right before the quote
    if not prefix[0].isalpha():
        prefix = prefix[-1]
    body = match[kind]
    if "f" in prefix or "t" in prefix or "F" in prefix or "T" in prefix:
        if not body.isascii() or not _TAME[kind[1] == "3"].fullmatch(body):
            raise _Unsure
        start -= len(prefix)
        if text[start - 1:start] in _QUOTES or text[match.end():match.end() + 1] in _QUOTES:
            raise _Unsure  # see _QUOTES
        return "F" + "".join(_FIELDS.findall(body))
    if ("b" in prefix or "B" in prefix) and not body.isascii():
        raise _Unsure
    return "S"


def _code_of(line: bytes) -> bytes:
    """``line`` less the text from its first ``#`` where that text holds no quote character:
    there it is a comment, or else the inside of a string that goes on past the line's end
    (a string can only end at a quote); either way no bracket of it belongs to the code."""
    at = line.find(b"#")
    if at < 0:
        return line
    rest = line[at:]
    return line if b'"' in rest or b"'" in rest else line[:at]


def _nesting_bounded(bracket_lines: list[bytes], lines: list[bytes]) -> bool:
    """The bracket counts of ``libcst_decides``: ``bracket_lines`` holds each line's brackets
    (in order), ``lines`` the lines themselves (for the length of a bracketed logical line)."""
    depth = braces = start = 0
    for number, brackets in enumerate(bracket_lines):
        if not brackets:
            continue
        inside = depth
        if not depth:
            start = number
        for char in brackets:
            if char in _OPENING:
                depth += 1
                braces += char == _BRACE
                if depth > LIBCST_MAX_BRACKETS or braces > LIBCST_MAX_BRACES:
                    return False
            elif not depth:
                return False  # a closing bracket in a string or comment: the count is off
            else:
                depth -= 1
                braces -= char == _CLOSING_BRACE and braces > 0
        if inside and not depth and _length(lines, start, number) >= LIBCST_MAX_LOGICAL_LINE:
            return False
    return not depth or _length(lines, start, len(lines) - 1) < LIBCST_MAX_LOGICAL_LINE


def _length(lines: list[bytes], first: int, last: int) -> int:
    """Characters of lines ``first`` to ``last``, the newlines between them included."""
    return sum(map(len, lines[first:last + 1])) + last - first


# LibCST's parse time grows with about the cube of the nesting depth (measured: 2,000 nested
# unary minus 0.5 s, 4,000 3.9 s, 8,000 20 s). In a file CPython accepted, CPython's own
# limit bounds the depth; a file it rejected has no such bound, so LibCST reads it only if no
# logical line has more tokens than this (nesting N levels deep takes N tokens on one line).
FALLBACK_MAX_LINE_TOKENS = 3000
_LINE_END = (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)


def _shallow(text: str) -> bool:
    """No logical line of ``text`` has more than ``FALLBACK_MAX_LINE_TOKENS`` tokens (False
    when Python's tokenizer gives up on the text)."""
    count = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE:
                count = 0
            elif token.type not in _LINE_END:
                count += 1
                if count > FALLBACK_MAX_LINE_TOKENS:
                    return False
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


def _beyond_interpreter(text: str, failure: ParseFailure, target: "Version") -> tuple[Parsed | None, ParseFailure | None]:
    """A file CPython rejected: analysable if LibCST reads it and it uses syntax newer than
    the interpreter (and no newer than ``target``)."""
    from torchlint.syntax import downlevel, features

    module, _ = parse_cst(text)
    if module is None:
        return None, failure
    newer = list(features(module, INTERPRETER))
    if not newer:
        return None, failure
    beyond = _beyond_target(module, newer, target)
    if beyond is not None:
        return None, beyond
    tree = cpython_tree(downlevel(module))
    if tree is None:
        return None, failure
    return Parsed(text, tree, module, exact=False), None


def _within_target(parsed: Parsed, target: "Version") -> tuple[Parsed | None, ParseFailure | None]:
    """A file CPython accepted, checked against an older ``target``."""
    from torchlint.syntax import features

    module, _ = parse_cst(parsed.text)
    if module is None:  # LibCST's limit, reported by the engine if a rule needs the tree
        return parsed, None
    beyond = _beyond_target(module, features(module, target), target)
    if beyond is not None:
        return None, beyond
    parsed.module = module
    return parsed, None


def _beyond_target(module: cst.Module, found: "Iterable[Feature]", target: "Version") -> ParseFailure | None:
    """The failure for the first use of syntax newer than ``target``, if any."""
    from torchlint.finding import Span
    from torchlint.positions import Positions
    from torchlint.syntax import version_name

    first = next((f for f in found if f.version > target), None)
    if first is None:
        return None
    span = Span.of_range(Positions(module)[first.node])
    return ParseFailure(f"syntax error: {first.what} needs Python {first.version[0]}.{first.version[1]} or newer "
                        f"(target-version is {version_name(target)})", span.line, span.column)


def parse_cst(text: str) -> tuple[cst.Module | None, ParseFailure | None]:
    """LibCST's tree, for text that ``check_syntax`` accepted.

    CPython already accepted the text, so any failure here is LibCST's limit, not the
    file's fault: LibCST rejects some valid code (``else.5``, ``for x in*y:``, ``return*x``
    raise ``CSTValidationError``) and its native parser can panic. Every such failure is a
    ``ParseFailure`` for this file; nothing escapes to end the run.
    """
    try:
        with nodes.parsing(len(text)):
            return nodes.parse_module(text), None
    except cst.ParserSyntaxError as exc:
        return None, ParseFailure(_LIBCST_REJECTS + bounded(exc.message), exc.raw_line, exc.raw_column + 1)
    except (RecursionError, MemoryError):
        return None, ParseFailure(TOO_DEEP)
    except Exception as exc:  # noqa: BLE001 - CSTValidationError and whatever else LibCST raises
        return None, ParseFailure(f"{_LIBCST_REJECTS}{type(exc).__name__}: {exception_text(exc)}")
    except BaseException as exc:  # the native parser's panics (pyo3 PanicException)
        if type(exc).__name__ != "PanicException":
            raise
        return None, ParseFailure(f"{_LIBCST_REJECTS}the parser panicked: {exception_text(exc)}")


_LIBCST_REJECTS = "LibCST cannot parse this valid Python: "
TOO_DEEP = "file is nested too deeply to analyse (ran out of stack)"
