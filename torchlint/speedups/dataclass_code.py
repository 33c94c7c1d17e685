"""The code ``dataclasses`` compiles for every dataclass, kept between runs like bytecode.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__setattr__``, ...
as source text and compiles it with ``exec``. Importing LibCST creates ~200 frozen node
dataclasses: 978 such compilations (torchlint's own modules add 169), about 40% of
``import libcst`` and so of a run's start-up (measured, median of 12 starts: ``import libcst``
0.32 s, 0.19 s with the compiled code read back; a single-file run pays it every time).

While ``compiled_dataclass_methods`` is active, the name ``exec`` inside the ``dataclasses``
module (and nowhere else) is a function that runs the code compiled from the same text,
with the same file name and flags, instead of compiling the text again: the functions made
are exactly those ``exec`` would make. The compiled code is kept in torchlint's own
``__pycache__`` (``importlib.util.cache_from_source``, so ``sys.pycache_prefix`` is honoured),
written as Python writes bytecode: not when ``sys.dont_write_bytecode`` is set, and silently
not where the directory is read-only. Whoever can write there can already replace
torchlint's bytecode, so the file is trusted as that is; a file from another interpreter
(``importlib.util.MAGIC_NUMBER``), a damaged or foreign one, is ignored.

Only the command line uses it (``cli.main``, for the process it owns), never a library
caller of torchlint's API.
"""

from __future__ import annotations

import __future__
import builtins
import marshal
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import MAGIC_NUMBER, cache_from_source
from typing import Any, Iterator

# Every LibCST version the cache has seen adds its texts; past this many it starts again.
MAX_ENTRIES = 10_000
_CODE = type(compile("", "<string>", "exec"))


def cache_path() -> str | None:
    """Where the compiled code is kept: next to torchlint's bytecode. None where this
    interpreter writes no bytecode cache (no ``sys.implementation.cache_tag``)."""
    try:
        pyc = cache_from_source(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataclass_methods.py"))
    except (NotImplementedError, ValueError):
        return None
    optimize = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    return pyc[: -len(".pyc")] + optimize + ".marshal"


def load(path: str | None) -> dict[str, Any]:
    """The compiled code by source text; empty where there is none, or none this interpreter
    can use."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[: len(MAGIC_NUMBER)] != MAGIC_NUMBER:
            return {}
        table = marshal.loads(data[len(MAGIC_NUMBER):])
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if type(table) is not dict or not all(type(k) is str and type(v) is _CODE for k, v in table.items()):
        return {}
    return table


def save(path: str | None, table: dict[str, Any]) -> None:
    """Writes ``table`` atomically (a file of this process's, renamed), as Python writes
    bytecode; nothing on failure."""
    if path is None or sys.dont_write_bytecode:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to bytecode
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC_NUMBER + marshal.dumps(table))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, ValueError):
        pass


def _future_flags(module: Any) -> int:
    """The compiler flags ``exec`` of a string inherits in ``module``: its future imports."""
    return sum(v.compiler_flag for v in vars(module).values() if isinstance(v, __future__._Feature))


@dataclass
class Reuse:
    """What one ``compiled_dataclass_methods`` block did: texts whose kept code it ran,
    texts it compiled."""

    reused: int = 0
    compiled: int = 0


@contextmanager
def compiled_dataclass_methods(path: str | None = None) -> Iterator[Reuse]:
    """Dataclasses created inside the block reuse code compiled by earlier runs (see the
    module docstring); code compiled for new texts is kept when the block ends."""
    import dataclasses

    reuse = Reuse()
    if "exec" in vars(dataclasses):  # already active (nested), or dataclasses names its own
        yield reuse
        return
    path = path if path is not None else cache_path()
    known = load(path)
    new: dict[str, Any] = {}
    flags = _future_flags(dataclasses)
    real = builtins.exec

    def exec_(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
        if type(source) is not str or globals is None or kwargs:
            if globals is None:  # the caller's namespace, as the builtin would take it
                frame = sys._getframe(1)
                globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
            return real(source, globals, locals, **kwargs)
        code = known.get(source)
        if code is not None:
            reuse.reused += 1
        else:
            code = new.get(source)
            if code is None:
                code = new[source] = compile(source, "<string>", "exec", flags, dont_inherit=True)
                reuse.compiled += 1
        return real(code, globals, locals)

    dataclasses.exec = exec_  # type: ignore[attr-defined]
    try:
        yield reuse
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
        if new:
            save(path, {**known, **new} if len(known) + len(new) <= MAX_ENTRIES else new)
