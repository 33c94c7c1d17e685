"""Bounded reads: the one way torchlint reads a file, standard input or a JSON/TOML text.

Every file torchlint opens (sources, notebooks, configuration and baseline files,
``requirements*.txt``, ``setup.cfg``, ``.gitignore``, the language server's reads from disk)
goes through :func:`read_file`:

* the open cannot block (``O_NONBLOCK``: a FIFO never hangs the run) and only a regular file
  is read (``fstat``: ``/dev/zero``, a socket or a directory is refused);
* at most ``limit`` bytes are read (a file that is, or grows, larger is refused, never read
  whole into memory);
* with ``root``, a path whose real location (links followed) is outside ``root`` is refused.

Each refusal is a :class:`ReadError` (an ``OSError``) whose message says why in a few words,
so callers that already handle ``OSError`` keep working and print one clean line.

:func:`read_stream` is the same bound for standard input. :func:`loads_json` and
:func:`loads_toml` parse text with every error as ``ValueError`` subclasses with one-line
messages: CPython refuses integers of more than 4,300 digits with a bare ``ValueError`` and
recurses once per nested bracket, and neither may escape as an internal error.

This module imports only the standard library (configuration is read before anything else).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import IO, Any

# Limits for the files torchlint reads that are not sources (a source's is ``max-file-size``).
CONFIG_LIMIT = 4 << 20  # pyproject.toml, torchlint.toml, setup.cfg, requirements*.txt, .gitignore
BASELINE_LIMIT = 256 << 20  # a baseline of a million findings is about 200 MB
# A notebook's JSON, outputs and images included (its code is measured against max-file-size).
NOTEBOOK_LIMIT = 512 << 20
_CHUNK = 1 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class ReadError(OSError):
    """A file torchlint will not read, and why (``str()`` is the reason alone)."""

    def __init__(self, reason: str, code: int = errno.EINVAL):
        super().__init__(code, reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class TooLarge(ReadError):
    def __init__(self, size: int | None, limit: int):
        self.size, self.limit = size, limit
        said = f"{size:,} bytes" if size is not None else "more than that"
        super().__init__(f"too large to read ({said}; the limit is {limit:,} bytes)", errno.EFBIG)


def not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not read, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file ({kind})"


def within(path: Path | str, root: Path | str) -> bool:
    """Whether ``path``'s real location (links followed) is ``root`` or inside it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def read_file(path: Path | str, limit: int, *, root: Path | str | None = None) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (see the module docstring);
    ``ReadError``/``OSError`` otherwise."""
    if root is not None and not within(path, root):
        raise ReadError(f"a symbolic link to {os.path.realpath(path)}, outside the project root; not read")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(handle.fileno())
        reason = not_regular(info.st_mode)
        if reason is not None:
            raise ReadError(reason)
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise TooLarge(None, limit)
    return data


def read_text(path: Path | str, limit: int, *, root: Path | str | None = None, errors: str = "strict") -> str:
    """``read_file`` decoded as UTF-8 (a BOM dropped); ``ReadError`` for bytes that are not
    UTF-8 where ``errors`` is strict."""
    data = read_file(path, limit, root=root)
    try:
        return data.decode("utf-8-sig", errors)
    except UnicodeDecodeError as exc:
        raise ReadError(f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def read_stream(stream: IO[bytes], limit: int) -> bytes:
    """A binary stream's bytes up to its end, at most ``limit`` of them: ``TooLarge`` past
    that (endless input is never held whole), ``ReadError`` for a stream that is closed or
    cannot be read."""
    parts: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = stream.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLarge(None, limit)
    except ValueError as exc:  # "I/O operation on closed file"
        raise ReadError(f"cannot read: {exc}") from None
    except TooLarge:
        raise
    except OSError as exc:  # EBADF: no standard input at all
        raise ReadError(f"cannot read: {exc.strerror or exc}", exc.errno or errno.EIO) from None


# -- parsing ---------------------------------------------------------------------------------

class ParseError(ValueError):
    """Text that is not valid JSON/TOML, with a one-line message; ``at`` is ``(line, column,
    what is wrong)`` where the parser gave a position."""

    def __init__(self, message: str, at: tuple[int, int, str] | None = None):
        super().__init__(message)
        self.at = at


_MAX_DIGITS = 4000  # CPython refuses int() of more than 4,300 digits (sys.get_int_max_str_digits)


def _int(text: str) -> int | float:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        return float(text)  # JSON has one number type: a huge integer reads as its (infinite) float
    return int(text)


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` that never fails with anything but ``ParseError``: an integer of
    thousands of digits reads as a float, nesting too deep and invalid JSON are errors saying
    so (line and column), a lone surrogate escape stays in the string (callers that encode
    it must say so)."""
    try:
        return json.loads(text, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         (exc.lineno, exc.colno, exc.msg)) from None
    except RecursionError:  # the decoder recurses once per nested array or object
        raise ParseError("arrays or objects nested too deeply") from None
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"invalid JSON: {exc}") from None


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` with every failure a one-line ``ParseError`` (invalid TOML, nesting
    too deep, an integer of more than 4,300 digits)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ParseError("invalid TOML: arrays or tables nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # int('9' * 5000): "Exceeds the limit (4300 digits) ..."
        reason = "an integer of more than 4,300 digits" if "digits" in str(exc) else str(exc)
        raise ParseError(f"invalid TOML: {reason}") from None
