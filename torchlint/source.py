"""Reading and parsing one file: bytes in, a LibCST module (or a TL000 reason) out.

Nothing here imports or executes the linted code.
"""

from __future__ import annotations

import abc
import ast
import builtins
import dataclasses
import functools
import inspect
import io
import re
import symtable
import sys
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import libcst as cst

from torchlint.errors import bounded, exception_text
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
# reads any such line in well under a second).
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
    line: that costs time, as a long line CPython accepts already does, never the verdict.)"""
    if not text.isascii():
        return False
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
    return b"#" in data and _nesting_bounded([_code_of(line).translate(None, _NOT_BRACKETS) for line in lines], lines)


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
        with _nodes_unvalidated(len(text)):
            return _parse_module(text), None
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


def _parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)``, through LibCST's native parser called from a frame whose
    builtins hold a C-level ``__import__`` that does nothing (``_IMPORT_NOTHING``).

    The native parser looks its node classes up with ``PyImport_Import("libcst")`` for every
    node it builds (1,959,025 on torchvision+skorch+accelerate). That C function takes
    ``__import__`` from the builtins of the innermost Python frame, the one that called the
    parser, calls it, ignores what it returns and reads the module from ``sys.modules``
    (``libcst`` is there: this module imported it). So the import machinery has nothing to
    do; a frame of our own (``_NATIVE_CALL``) with its own builtins skips it without touching
    anyone else's: the nodes' constructors, and every other frame and thread, keep the real
    ``__import__`` (measured: the subset's parse 5.13 s -> 4.92 s, files interleaved). For
    ``str`` input this is all ``cst.parse_module`` does (encoding utf-8). A LibCST whose
    native entry point fails the trial parse (``_native_call``), or a native parser that
    needs a module not yet imported (``KeyError`` from ``PyImport_Import``), goes through
    ``cst.parse_module``."""
    if _NATIVE_CALL is not None:
        try:
            return _NATIVE_CALL(text)
        except KeyError:
            pass
    return cst.parse_module(text)


def _native_call(native: object = None) -> Callable[[str], cst.Module] | None:
    """The frame ``_parse_module`` calls the native parser from; None where LibCST has no
    native ``parse_module(source, encoding)`` that gives the tree ``cst.parse_module`` gives
    (tried once, on one line)."""
    if native is None:
        try:
            from libcst import native
        except ImportError:  # pragma: no cover - every LibCST this project supports has it
            return None
    parse = getattr(native, "parse_module", None)
    if not callable(parse):
        return None
    builtins_ = {**vars(builtins), "__import__": _IMPORT_NOTHING}
    scope: dict[str, object] = {"__builtins__": builtins_, "parse": parse}
    exec("def call(text):\n    return parse(text, 'utf-8')\n", scope)  # noqa: S102 - fixed source
    call = scope["call"]
    try:
        works = call("x = (1,)  # c\n").deep_equals(cst.parse_module("x = (1,)  # c\n"))  # type: ignore[operator]
    except Exception:  # noqa: BLE001 - another LibCST's entry point: use the public one
        works = False
    return call if works else None  # type: ignore[return-value]


# Takes any arguments, returns "" and imports nothing: a C function, no Python frame.
_IMPORT_NOTHING = "".format
_NATIVE_CALL: Callable[[str], cst.Module] | None = None  # set below, once nodes hash in C


# Characters the engine's parses have read in this process, and how many it takes before the
# plain constructors (``_plain_constructors``) pay for themselves. Counted in instructions
# (valgrind): installing them costs ~169 million once (generating ~280 functions: 30-55 ms),
# and they save ~520 per character parsed (a tenth of a parse), so they pay for themselves
# after ~325,000 characters. A process cannot know how much it will parse, so it installs them
# once it has parsed that much (the ski-rental rule: never worse than twice the better choice
# made knowing it): a single file or a few small ones are parsed with LibCST's own constructors.
_PARSED = [0]
PLAIN_AFTER_CHARS = 325_000


@contextmanager
def _nodes_unvalidated(chars: int = 0) -> Iterator[None]:
    """LibCST checks every node it builds (``CSTNode.__post_init__`` -> ``_validate``): about
    a tenth of a parse. The text reaching LibCST was accepted by CPython's parser, so those
    checks can only reject valid code LibCST's node classes are stricter about (``else.5``,
    ``for x in*y:``, ``return*x``): without them that code is analysed like any other.

    The nodes are also built by plain constructors (``_plain_constructors``): a frozen
    dataclass's own ``__init__`` stores each field through ``object.__setattr__``, which
    looks the slot up by name every time; storing through the slot's descriptor directly
    makes the same node about 8% faster to parse. Those constructors are installed once per
    process and validate exactly as LibCST's own do except inside this block, which only
    flips a switch (``_VALIDATING``): swapping ~170 classes' ``__init__`` in and out for
    every file cost 4% of a run (each class assignment updates the type's slots and its
    subclasses'). Analysis runs one file at a time per process. They are installed once the
    process's parses have read ``PLAIN_AFTER_CHARS`` characters (``chars``: this parse's).

    Inside the block, trivia nodes (whitespace, newlines, commas, ...) equal to one already
    built are that node (``_SharedMeta``, ``_SHARED_TRIVIA``): a metaclass swap per class,
    restored after."""
    _PARSED[0] += chars
    if _PARSED[0] >= PLAIN_AFTER_CHARS:
        _plain_constructors()
    elif _LIBCST_POST_INIT is not None:
        cst.CSTNode.__post_init__ = _post_init_if_validating  # LibCST's own constructors call it
    previous = _VALIDATING[0]
    _VALIDATING[0] = False
    shared = [kind for kind in _SHARED_TRIVIA if type(kind) is _NodeMeta]
    for kind in shared:
        kind.__class__ = _SharedMeta
    try:
        yield
    finally:
        _VALIDATING[0] = previous
        for kind in shared:
            kind.__class__ = _NodeMeta


# Whether LibCST nodes built now are validated (``_nodes_unvalidated`` turns it off).
_VALIDATING = [True]


def _post_init_if_validating(self: cst.CSTNode) -> None:
    if _VALIDATING[0]:
        _LIBCST_POST_INIT(self)


_LIBCST_POST_INIT = getattr(getattr(cst, "CSTNode", None), "__post_init__", None)


def _identity_in_c() -> None:
    """LibCST nodes are equal only to themselves and hash by ``id``, through ``__eq__`` and
    ``__hash__`` written in Python (copied into every node class). The analysis keys dicts
    by node millions of times per corpus (parents, order, scopes, call sites): ``object``'s
    own comparison and hash mean exactly the same (identity) without a Python call per
    lookup (measured: an eighth of the walk and the rules' time). Set once, when the engine
    is imported, before any tree is built, so no node is ever hashed both ways."""
    todo: list[type] = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if kind.__dict__.get("__hash__") is not None and kind.__dict__.get("__eq__") is not None:
            kind.__hash__ = object.__hash__  # type: ignore[method-assign]
            kind.__eq__ = object.__eq__  # type: ignore[method-assign]


_identity_in_c()


class _NodeMeta(abc.ABCMeta):
    """``ABCMeta`` with ``type``'s own ``isinstance``/``issubclass`` checks (``_type_checks_in_c``)."""

    __instancecheck__ = type.__instancecheck__  # type: ignore[assignment]
    __subclasscheck__ = type.__subclasscheck__  # type: ignore[assignment]


def _type_checks_in_c() -> None:
    """Every LibCST node class is an ``abc.ABC``, so ``isinstance(node, cst.Name)`` that does
    not match exactly (and every class of a tuple before the one that does) runs
    ``ABCMeta.__instancecheck__``, a Python frame that consults the ABC registry. LibCST
    registers no virtual subclass, so the answer is always the class's own MRO: the rules and
    the semantic model make ~1.4 million such checks on torchvision+skorch+accelerate, and
    with ``type``'s own check (in C, same answer) they cost a fraction. Set once, when the
    engine is imported; a class someone registers with a LibCST base later would not count
    (nothing does)."""
    todo: list[type] = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if type(kind) is abc.ABCMeta:
            kind.__class__ = _NodeMeta


_type_checks_in_c()
_NATIVE_CALL = _native_call()  # its trial parse builds nodes: after the two above


class _SharedMeta(_NodeMeta):
    """``_NodeMeta`` whose classes hand out one node per distinct set of constructor arguments
    (``_nodes_unvalidated``). LibCST nodes are immutable, and the analysis never looks a
    trivia node up by identity (the walk skips trivia: ``Dispatcher``; positions are asked of
    statements and expressions), so one ``SimpleWhitespace(" ")`` can stand wherever the
    text has a single space. Bounded: a rare value (a long backslash continuation) is
    built again once it has been evicted."""

    __call__ = functools.lru_cache(maxsize=1024)(type.__call__)  # type: ignore[assignment]


# Trivia the native parser builds by the hundred thousand, nearly all equal to one another:
# whitespace is 41% of the nodes of a parse of torchvision+skorch+accelerate (811,711 of
# 1,959,025; 32 distinct values), ``Newline()`` another 6% (one value); then commas, dots,
# line ends, blank lines, brackets, ``=`` and ``:`` made of those (another 300,000).
# Handing out a shared one costs 0.19 us against 0.68 us for building one with LibCST's own
# constructor (timeit); the subset's parse went from 5.09 s to 4.88 s (best of three) with
# the first two, and a further 4.71 s -> 4.63 s with the others (files interleaved). Only
# while the engine parses (one file at a time per process, like ``_VALIDATING``): nodes
# built at any other time (a fix's replacement, a user's own LibCST code in the same
# process) are their own. Left out: ``RightParen``, whose range LibCST's code generation
# reads back by identity as the end of a parenthesised ``from`` import
# (``record_syntactic_position(end_node=self.rpar)``: ``positions``), and classes with a
# sequence field (``ParenthesizedWhitespace``), which ``lru_cache`` could not key if the
# parser handed it a list.
_SHARED_TRIVIA = (
    cst.SimpleWhitespace, cst.Newline, cst.TrailingWhitespace, cst.EmptyLine, cst.Comma, cst.Dot,
    cst.AssignEqual, cst.Colon, cst.LeftParen, cst.LeftSquareBracket, cst.RightSquareBracket,
)


_PLAIN: dict[type, tuple[Callable[..., None], Callable[..., None]]] | None = None


def _plain_constructors() -> dict[type, tuple[Callable[..., None], Callable[..., None]]]:
    """Installs, once per process, per LibCST node class whose fields are all plain slots, an
    ``__init__`` with the same signature that stores each field through its slot and then
    validates (``__post_init__``) only while ``_VALIDATING``; ``CSTNode.__post_init__``, which
    the other classes' own constructors call, validates only then too. Returns, by class,
    (LibCST's own ``__init__``, the one installed)."""
    global _PLAIN
    if _PLAIN is None:
        _PLAIN = {}
        if _LIBCST_POST_INIT is None:  # pragma: no cover - a LibCST without the hook
            return _PLAIN
        todo = [cst.CSTNode]
        while todo:
            kind = todo.pop()
            todo.extend(kind.__subclasses__())
            if dataclasses.is_dataclass(kind) and "__init__" in kind.__dict__:
                fast = _plain_init(kind)
                if fast is not None:
                    _PLAIN[kind] = (kind.__dict__["__init__"], fast)
        cst.CSTNode.__post_init__ = _post_init_if_validating
        for kind, (_, fast) in _PLAIN.items():
            kind.__init__ = fast
    return _PLAIN


def _plain_init(kind: type) -> Callable[..., None] | None:
    """The slot-storing ``__init__`` for ``kind``, with its own constructor's parameters and
    defaults (a field with a default factory keeps the dataclass's sentinel as its default,
    so a caller passing that sentinel, as Hypothesis does, gets the factory's value). None
    unless the dataclass's own ``__init__`` takes exactly the fields, in order, positionally
    or by keyword. Read from the code objects rather than ``inspect.signature`` (three per
    class were two thirds of the 32 ms this took per process)."""
    fields = [f for f in dataclasses.fields(kind) if f.init]
    if len(fields) != len(dataclasses.fields(kind)):
        return None
    original = kind.__dict__["__init__"]
    code = getattr(original, "__code__", None)
    if code is None or code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) \
            or list(code.co_varnames[1:code.co_argcount]) != [f.name for f in fields]:
        return None
    defaults = original.__defaults__ or ()
    first_default = len(fields) - len(defaults)
    names: dict[str, object] = {"VALIDATING": _VALIDATING}
    params, lines = [], []
    for i, f in enumerate(fields):
        slot = getattr(kind, f.name, None)
        if type(slot).__name__ != "member_descriptor":
            return None
        names[f"set_{f.name}"] = slot.__set__
        if i >= first_default:
            names[f"default_{f.name}"] = defaults[i - first_default]
            params.append(f"{f.name}=default_{f.name}")
            if f.default_factory is not dataclasses.MISSING:
                names[f"factory_{f.name}"] = f.default_factory
                lines.append(f"    if {f.name} is default_{f.name}: {f.name} = factory_{f.name}()")
        else:
            params.append(f.name)
        lines.append(f"    set_{f.name}(self, {f.name})")
    lines.append("    if VALIDATING[0]: self.__post_init__()")  # as the dataclass's own __init__ does
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines) + "\n"
    exec(source, names)  # noqa: S102 - code generated above from the dataclass's own fields
    fast = names["__init__"]
    fast.__annotations__ = dict(getattr(original, "__annotations__", {}))  # what introspection reads
    fast.__qualname__, fast.__module__ = original.__qualname__, original.__module__
    same = fast.__code__.co_varnames[:code.co_argcount] == code.co_varnames[:code.co_argcount] \
        and len(fast.__defaults__ or ()) == len(defaults) \
        and all(a is b for a, b in zip(fast.__defaults__ or (), defaults))
    return fast if same else None  # type: ignore[return-value]


_LIBCST_REJECTS = "LibCST cannot parse this valid Python: "
TOO_DEEP = "file is nested too deeply to analyse (ran out of stack)"
