"""Writing reports and baselines: whole or not at all, and never over a linted file.

A report file is written to a temporary file in the same directory, then renamed over the
target: a run that fails (or is killed) part-way leaves the previous file as it was, never a
truncated one. A target that exists but is not a regular file (``/dev/stdout``, a FIFO) is
written directly, since there is nothing to replace.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

from torchlint.errors import UsageError
from torchlint.finding import escape_path


def printable(text: str) -> str:
    """``text`` with any lone surrogate left (an undecodable byte no formatter escaped) as a
    ``\\udcXX`` escape, so writing it as UTF-8 cannot fail; inside a JSON string that is
    JSON's own escape for the same character."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_target(option: str, value: str, cwd: Path, linted: Iterable[Path]) -> Path:
    """The file an output option names, resolved against ``cwd``. An empty name, or a file
    that is being linted, is a ``UsageError`` (exit 2): a report never overwrites source."""
    if not value:
        raise UsageError(f"{option}: empty file name")
    target = Path(os.path.realpath(cwd / value))
    if target in set(linted):
        raise UsageError(f"{option} {escape_path(value)}: is one of the files being linted; not overwritten")
    return target


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(target: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` through a temporary file and a rename; the file
    keeps its permissions (a new one gets the usual ``0o666 & ~umask``). Raises ``OSError``."""
    write_bytes_atomic(target, text.encode("utf-8", "backslashreplace"))


def write_bytes_atomic(target: Path, data: bytes) -> None:
    """``write_atomic`` for bytes (a fixed source file: its own encoding and line endings)."""
    real = Path(os.path.realpath(target))  # replace a symbolic link's target, not the link
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(real, "wb") as handle:
            handle.write(data)
        return
    fd, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else _new_file_mode())
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# How long a fixing run waits for another one on the same project before giving up.
LOCK_WAIT_SECONDS = 600.0


@contextlib.contextmanager
def exclusive(directory: Path, note: Callable[[str], None] | None = None,
              wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold an exclusive advisory lock (``flock``) on ``directory`` itself (nothing is created
    in it) while the block runs: two ``--fix`` runs on one project, from an editor and a
    pre-commit hook, then read, fix and write one after the other instead of interleaving.
    ``note`` is told once when the lock is busy; after ``wait`` seconds a ``UsageError``.
    Where there is no ``flock`` or the directory cannot be opened, no lock is taken (a fixed
    file is still written only if it holds exactly the bytes that were fixed)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if note is not None and not told:
                    note(f"waiting for another torchlint run fixing files in {escape_path(str(directory))}")
                    told = True
                if time.monotonic() > deadline:
                    raise UsageError(f"another torchlint run has been fixing files in {escape_path(str(directory))} "
                                     f"for over {wait:.0f} s; try again when it has finished") from None
                time.sleep(0.02)
            except OSError:  # no locks on this file system
                break
        yield
    finally:
        os.close(fd)
