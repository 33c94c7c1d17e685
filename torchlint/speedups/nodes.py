"""LibCST's parse and nodes, made faster (part of ``torchlint.speedups``; see its table).

Nothing here changes anything when imported. ``install()`` (called by
``torchlint.speedups.enable``) makes node identity and ``isinstance`` checks C-level and finds
the native parser's entry point; ``parsing()`` and ``parse_module()`` are what the engine's
parse goes through (``source.parse_cst``): with the speed-ups installed they skip LibCST's
node validation, share trivia nodes and, once enough text was parsed, build nodes through
plain constructors; without them they are ``cst.parse_module`` and nothing else.
"""

from __future__ import annotations

import abc
import builtins
import dataclasses
import functools
import inspect
from contextlib import contextmanager
from typing import Callable, Iterator

import libcst as cst

_INSTALLED = [False]


def installed() -> bool:
    return _INSTALLED[0]


def install() -> None:
    """Apply this module's changes to LibCST's node classes, once per process, before any
    tree is built (``speedups.enable``)."""
    global _NATIVE_CALL
    if _INSTALLED[0]:
        return
    _identity_in_c()
    _type_checks_in_c()
    _NATIVE_CALL = _native_call()  # its trial parse builds nodes: after the two above
    _INSTALLED[0] = True


def parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)``; with the speed-ups installed, through LibCST's native
    parser called from a frame whose builtins hold a C-level ``__import__`` that does nothing
    (``_IMPORT_NOTHING``).

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
    """The frame ``parse_module`` calls the native parser from; None where LibCST has no
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
_NATIVE_CALL: Callable[[str], cst.Module] | None = None  # set by install()


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
def parsing(chars: int = 0) -> Iterator[None]:
    """The engine's parse of a text of ``chars`` characters happens inside this block.
    Without the speed-ups installed it changes nothing: LibCST builds and validates its
    nodes as it always does.

    With them: LibCST checks every node it builds (``CSTNode.__post_init__`` ->
    ``_validate``): about a tenth of a parse. The text reaching LibCST was accepted by
    CPython's parser, so those checks can only reject valid code LibCST's node classes are
    stricter about (``else.5``, ``for x in*y:``, ``return*x``): without them that code is
    analysed like any other.

    The nodes are also built by plain constructors (``_plain_constructors``): a frozen
    dataclass's own ``__init__`` stores each field through ``object.__setattr__``, which
    looks the slot up by name every time; assigning the field, with the class's frozen
    ``__setattr__`` made ``object``'s, is the interpreter's own store into the slot (about
    8% of a parse through the slot's setter, 4% more by assignment). Those constructors are
    installed once per process and validate exactly as LibCST's own do except inside this
    block, which only flips a switch (``_VALIDATING``): swapping ~170 classes' ``__init__``
    in and out for every file cost 4% of a run (each class assignment updates the type's
    slots and its subclasses'). Analysis runs one file at a time per process. They are
    installed once the process's parses have read ``PLAIN_AFTER_CHARS`` characters
    (``chars``: this parse's).

    Inside the block, trivia nodes (whitespace, newlines, commas, ...) equal to one already
    built are that node (``_SharedMeta``, ``_SHARED_TRIVIA``): a metaclass swap per class,
    restored after."""
    if not _INSTALLED[0]:
        yield
        return
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


# Whether LibCST nodes built now are validated (``parsing`` turns it off).
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
    lookup (measured: an eighth of the walk and the rules' time). Set once, before any tree
    is built (``install``), so no node is ever hashed both ways."""
    todo: list[type] = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if kind.__dict__.get("__hash__") is not None and kind.__dict__.get("__eq__") is not None:
            kind.__hash__ = object.__hash__  # type: ignore[method-assign]
            kind.__eq__ = object.__eq__  # type: ignore[method-assign]


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
    with ``type``'s own check (in C, same answer) they cost a fraction. Set once
    (``install``); a class someone registers with a LibCST base later would not count
    (nothing does)."""
    todo: list[type] = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if type(kind) is abc.ABCMeta:
            kind.__class__ = _NodeMeta


class _SharedMeta(_NodeMeta):
    """``_NodeMeta`` whose classes hand out one node per distinct set of constructor arguments
    (``parsing``). LibCST nodes are immutable, and the analysis never looks a trivia node up
    by identity (the walk skips trivia: ``Dispatcher``; positions are asked of statements and
    expressions), so one ``SimpleWhitespace(" ")`` can stand wherever the text has a single
    space. Bounded: a rare value (a long backslash continuation) is built again once it has
    been evicted."""

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
    ``__init__`` with the same signature that assigns each field and then validates
    (``__post_init__``) only while ``_VALIDATING``; ``CSTNode.__post_init__``, which the other
    classes' own constructors call, validates only then too. Those classes' frozen
    ``__setattr__`` and ``__delattr__`` become ``object``'s, so that each assignment is the
    interpreter's own store into the slot (``STORE_ATTR_SLOT``: no call at all) rather than a
    call of the slot's setter (measured: 4% fewer instructions for a parse of skorch's files,
    8.9 G -> 8.5 G). Returns, by class, (LibCST's own ``__init__``, the one installed)."""
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
            # (both: one type slot serves setting and deleting; a Python function for either
            # keeps every assignment a call)
            kind.__setattr__ = object.__setattr__  # type: ignore[method-assign, assignment]
            kind.__delattr__ = object.__delattr__  # type: ignore[method-assign, assignment]
            kind.__init__ = fast
    return _PLAIN


def _plain_init(kind: type) -> Callable[..., None] | None:
    """The assigning ``__init__`` for ``kind``, with its own constructor's parameters and
    defaults (a field with a default factory keeps the dataclass's sentinel as its default,
    so a caller passing that sentinel, as Hypothesis does, gets the factory's value). None
    unless ``kind`` is a frozen dataclass of its own (its ``__setattr__`` and ``__delattr__``
    the frozen ones ``_plain_constructors`` replaces) whose fields are all slots and whose own
    ``__init__`` takes exactly the fields, in order, positionally or by keyword. Read from the
    code objects rather than ``inspect.signature`` (three per class were two thirds of the
    32 ms this took per process)."""
    if not kind.__dataclass_params__.frozen or "__setattr__" not in kind.__dict__ or "__delattr__" not in kind.__dict__:
        return None
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
        if type(getattr(kind, f.name, None)).__name__ != "member_descriptor":
            return None
        if i >= first_default:
            names[f"default_{f.name}"] = defaults[i - first_default]
            params.append(f"{f.name}=default_{f.name}")
            if f.default_factory is not dataclasses.MISSING:
                names[f"factory_{f.name}"] = f.default_factory
                lines.append(f"    if {f.name} is default_{f.name}: {f.name} = factory_{f.name}()")
        else:
            params.append(f.name)
        lines.append(f"    self.{f.name} = {f.name}")
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
