"""The child process itself: the request, the signed result pipe, ``sys.path``, limits.

Everything here runs before torch or any user code is imported.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
from typing import Any

from torchlint.trace import supervisor

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

# Where user directories (the working directory, a model's package root) go in sys.path:
# after the standard library, before PYTHONPATH and site-packages.
_USER_PATH_INDEX = [0]


def dump_stack_on(sig: Any) -> None:
    """Print the Python stack (``faulthandler``) to the job's output on ``sig``."""
    if sig is None:  # pragma: no cover - no SIGUSR1 (Windows)
        return
    import faulthandler

    try:
        faulthandler.register(sig, file=sys.stderr, all_threads=False)
    except (AttributeError, ValueError, OSError, RuntimeError):  # pragma: no cover
        pass


def connect() -> tuple[dict[str, Any], Any]:
    """Read the request's first line from stdin, then set the process up; return it and ``emit``.
    A child started ahead of its jobs (the request has ``jobs: null``) reads them later
    (``wait_for_jobs``), after importing torch; stdin is closed once they are read.

    ``emit`` waits after a ``start`` event until the supervisor has taken it in, so that what
    the job prints is filed under the job.  Runs before torch or any user code is imported:
    the signing key only ever lives in ``emit``'s closure, stdin is replaced by /dev/null,
    the result pipe is not inherited by programs the user code runs, the child dies with its
    supervisor, and ``sys.path`` gets ``PYTHONPATH`` and site-packages after the standard
    library.
    """
    request = json.loads(_read_line())
    if request.get("jobs") is not None:
        _close_stdin()
    key = bytes.fromhex(request.pop("key"))
    fd, ack = request.pop("fd"), request.pop("ack")
    os.set_inheritable(fd, False)
    os.set_inheritable(ack, False)
    supervisor.die_with_parent(signal.SIGKILL, request.pop("supervisor"))
    set_up_path(request.pop("user_site", None))
    dump_stack_on(supervisor.STACK_SIGNAL)
    counter = itertools.count(1)

    def emit(obj: dict[str, Any]) -> None:
        supervisor.write_all(fd, supervisor.signed_line(key, next(counter), obj))
        if obj.get("event") == "start" and not os.read(ack, 1):
            os._exit(1)  # the supervisor is gone

    return request, emit


_PENDING = bytearray()  # what was read from stdin past the line asked for


def _read_line() -> bytes:
    """The next line of stdin (to its end where no newline comes), unbuffered: a child started
    ahead of its jobs reads its set-up now and the jobs' line later (``wait_for_jobs``)."""
    while b"\n" not in _PENDING:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        _PENDING.extend(chunk)
    end = _PENDING.find(b"\n")
    end = len(_PENDING) if end < 0 else end + 1
    line = bytes(_PENDING[:end])
    del _PENDING[:end]
    return line


def _close_stdin() -> None:
    """stdin becomes /dev/null: nothing the user code runs can read torchlint's requests."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


def wait_for_jobs(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs: in the request, or, for a child started ahead of them, the next line the
    supervisor hands on (none where torchlint went away); then stdin is closed."""
    if request.get("jobs") is None:
        line = _read_line()
        _close_stdin()
        try:
            message = json.loads(line) if line.strip() else {}
        except ValueError:
            message = {}
        request["jobs"] = message.get("jobs") or [] if isinstance(message, dict) else []
    return request["jobs"]


def set_up_path(user_site: bool | None) -> None:
    """sys.path as for ``python`` with PYTHONPATH set, except that the standard library comes
    first: started with ``-I -S``, the interpreter has only the standard library (and the
    bootstrap added this torchlint)."""
    import site

    stdlib = [p for p in sys.path if p != supervisor.ROOT]
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = stdlib + extra
    site.ENABLE_USER_SITE = user_site
    site.main()  # site-packages, .pth files, sitecustomize
    if supervisor.ROOT not in sys.path:  # a source checkout: torchlint is not installed
        sys.path.insert(len(stdlib) + len(extra), supervisor.ROOT)
    _USER_PATH_INDEX[0] = len(stdlib)


def add_user_path(path: str) -> None:
    if path not in sys.path:
        sys.path.insert(_USER_PATH_INDEX[0], path)


def flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def peak_rss_kb() -> int:
    if resource is None:  # pragma: no cover
        return 0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss  # bytes on macOS, KiB on Linux


def warm_meta(torch: Any) -> None:
    """Meta kernels import torch._dynamo & co. on first use (seconds): do it before the job
    clock starts, so a user's timeout only measures the user's model.

    Without numpy, ``torch.sym_max`` (called by meta kernels for every shape) tries to import
    it on every call, a search of ``sys.path`` each time since failed imports are not cached
    (2 s of a 7B backward): a ``None`` in ``sys.modules`` makes that import fail at once."""
    import importlib.util

    if "numpy" not in sys.modules and importlib.util.find_spec("numpy") is None:
        sys.modules["numpy"] = None  # type: ignore[assignment]
    try:
        x = torch.empty(1, 1, 4, 4, device="meta")
        torch.nn.functional.conv2d(x, torch.empty(1, 1, 3, 3, device="meta"))
        torch.nn.functional.batch_norm(x, None, None, training=True)
    except Exception:  # noqa: BLE001 - only a warm-up
        pass


def apply_memory_limit(limit: int | None) -> None:
    if not limit or resource is None or not hasattr(resource, "RLIMIT_AS"):
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - platform dependent
        pass

