"""The process's allocator and cycle collector, tuned for the analysis (part of
``torchlint.speedups``; see its table). Nothing changes on import."""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager
from typing import Iterator

_ON = [False]


def install() -> None:
    """For the process the command line or the server owns, once: two malloc arenas, and
    objects alive at exit frozen out of the last collections (``speedups.enable``)."""
    if _ON[0]:
        return
    _ON[0] = True
    limit_malloc_arenas()
    # At exit, CPython's last cycle collections traverse every object still alive (the run's
    # records and facts, LibCST's classes): frozen objects are left to the process's end
    # (measured: 60-85 ms -> 20 ms after a -j 1 run on torchvision+skorch+accelerate). Files
    # are closed and atexit handlers (temporary directories, the pool's shutdown) run as before.
    atexit.register(gc.freeze)


def limit_malloc_arenas() -> None:
    """glibc gives each new thread a malloc arena of its own and keeps it: with a thread per
    file (the engine's deep-stack thread), LibCST's native parser leaves memory in each
    (measured: ~30 MB more peak RSS per process on torchvision+skorch). Two arenas per process
    are plenty. Relies on glibc's ``mallopt(M_ARENA_MAX)``; elsewhere a no-op."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-8, 2)  # M_ARENA_MAX
    except (OSError, AttributeError, TypeError):  # not glibc
        pass


@contextmanager
def collector_paused() -> Iterator[None]:
    """With the speed-ups on: no automatic cycle collection while one file is analysed, one
    young-generation collection after it. A file's trees and models are millions of
    short-lived objects: CPython's collector, triggered every 700 allocations, traverses them
    again and again although refcounting frees nearly all of them (measured: 10-18% of a cold
    run on torchvision+skorch+accelerate). Everything the file allocated is still in the young
    generation afterwards (nothing is promoted while collection is off), so the one
    ``collect(0)`` frees the file's reference cycles at the cost of what survives it: peak
    memory stays as it was. Nested use (a caller that already paused), and any use without
    the speed-ups, changes nothing."""
    if not _ON[0] or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)
