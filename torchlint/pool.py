"""Per-file analysis across processes: ``engine.analyze_source`` on each item, nothing else
(the run layer, ``torchlint.run``, reads files, asks the cache and does the project pass).

Files go to a process pool in small chunks, a bounded number in flight so memory does not
grow with the number of files. If a worker dies (LibCST's native parser can crash the whole
process on pathological input), the files of the chunks it took are re-analysed one per
process; a file that kills its process again is reported as TL000 and the run goes on.

A large file (``ISOLATE_BYTES`` or more) is always analysed alone in a fresh process, one at
a time, whatever ``-j`` is: LibCST needs ~0.4-0.75 GB of memory per MB of source, so a
crash or memory exhaustion there is that file's TL000, and the memory goes back when the
process ends. Workers die with the parent (``PR_SET_PDEATHSIG`` on Linux, else a watcher
thread), ignore Ctrl-C (the parent stops them), and are killed when the run is interrupted.

The process machinery (``multiprocessing``, ``concurrent.futures``, ``ctypes``) is imported
where a process is started: a run of a few small files (the pre-commit case) never needs it.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from torchlint.engine import analyze_source
from torchlint.results import FileResult, crashed_result

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

# (index, display path, bytes, enabled rules, rule options): a file and the settings it is analysed with
Item = tuple[int, str, bytes, frozenset[str], dict[str, dict[str, Any]]]

CHUNK = 8
# Below this many files to analyse a pool costs more than it saves (the pre-commit case, a
# file edited since the last run).
MIN_FILES_FOR_POOL = 24
# From this size on a file is analysed in a process of its own. Measured: LibCST takes ~0.37
# GB and ~12 s per MB of real code (up to ~0.75 GB per MB for pathological code), and 512
# KiB can hold ~90,000 chained ``and``, half of what the analysis thread's stack was seen
# to survive (see ``engine.DEEP_STACK_BYTES``).
ISOLATE_BYTES = 512 * 1024
PARENT_POLL_SECONDS = 1.0  # the watcher's period where PR_SET_PDEATHSIG is unavailable


def _analyze_chunk(chunk: list[Item]) -> list[tuple[int, FileResult]]:
    return [(index, analyze_source(path, data, enabled, options)) for index, path, data, enabled, options in chunk]


def _context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _chunks(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    chunk: list[Item] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def analyze_all(
    items: Iterable[Item],
    jobs: int,
    on_result: Callable[[int, FileResult], None],
) -> None:
    """Analyse every item, calling ``on_result(index, result)`` for each (in any order). A
    pool is started only for ``MIN_FILES_FOR_POOL`` items or more, counted ahead: however many
    files the run has, the cache may leave only a few to analyse (one edited since the last run)."""

    def isolate(item: Item) -> None:
        on_result(item[0], _isolated(item))

    small = _isolating_large(items, isolate)
    if jobs > 1:
        ahead = list(itertools.islice(small, MIN_FILES_FOR_POOL))
        small = itertools.chain(ahead, small)
        if len(ahead) < MIN_FILES_FOR_POOL:
            jobs = 1
    if jobs <= 1:
        for index, path, data, enabled, options in small:
            on_result(index, analyze_source(path, data, enabled, options))
        return
    from concurrent.futures import FIRST_COMPLETED, Future, wait
    from concurrent.futures.process import BrokenProcessPool

    retry: list[Item] = []
    window = jobs * 4
    with _pool(jobs) as pool:
        pending: dict[Future, list[Item]] = {}
        chunks = _chunks(small, CHUNK)
        broken = False
        exhausted = False
        while pending or not exhausted:
            while not broken and not exhausted and len(pending) < window:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                try:
                    pending[_submit(pool, chunk)] = chunk
                except BrokenProcessPool:
                    retry.extend(chunk)
                    broken = True
            if broken and not pending:
                retry.extend(item for chunk in chunks for item in chunk)
                exhausted = True
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                chunk = pending.pop(future)
                try:
                    for index, result in future.result():
                        on_result(index, result)
                except BrokenProcessPool:
                    broken = True
                    retry.extend(chunk)
    for item in retry:
        isolate(item)


def _isolating_large(items: Iterable[Item], isolate: Callable[[Item], None]) -> Iterator[Item]:
    """The items below ``ISOLATE_BYTES``; each larger one is handed to ``isolate`` as it
    comes (so at most one large file is held and analysed at a time)."""
    for item in items:
        if len(item[2]) >= ISOLATE_BYTES:
            isolate(item)
        else:
            yield item


def _isolated(item: Item) -> FileResult:
    """Analyse one file in a process of its own; a crash there is that file's fault."""
    from concurrent.futures.process import BrokenProcessPool

    with _pool(1) as pool:
        try:
            return _submit(pool, [item]).result()[0][1]
        except BrokenProcessPool:
            return crashed_result(item[1], "the analysis crashed on this file (its process died)", item[3])


@contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers are killed, not awaited, when the body is interrupted
    (Ctrl-C, SIGTERM) or fails."""
    from concurrent.futures import ProcessPoolExecutor

    from torchlint import speedups

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_worker_start,
                               initargs=(os.getpid(), speedups.enabled()))
    try:
        yield pool
        pool.shutdown()  # a signal while it waits for the workers kills them too
    except BaseException:
        _kill(pool)
        raise


HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _submit(pool: ProcessPoolExecutor, chunk: list[Item]) -> Future:
    """``pool.submit`` with Ctrl-C and SIGTERM held while it may fork the workers: their handlers
    raise, and an exception raised inside ``os.fork``'s hooks is swallowed ("Exception ignored
    in _releaseLock"), losing the signal and leaving logging's lock taken. A held signal arrives
    as soon as the submit returns, in this code."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return pool.submit(_analyze_chunk, chunk)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        return pool.submit(_analyze_chunk, chunk)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _kill(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API before 3.14
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    for process in processes:
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):  # already gone or closed
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    # Wait (briefly) for the pool's manager thread to see its killed workers and close its wake-up
    # pipe. Left running, it races Python 3.11's exit hook, which writes to that pipe without the
    # pool's lock and prints "Exception ignored ... Bad file descriptor" after our own message.
    if isinstance(manager, threading.Thread) and manager is not threading.current_thread():
        manager.join(timeout=5)


# -- in each worker ------------------------------------------------------------------------

def _worker_start(parent: int, fast: bool = False) -> None:
    """A worker dies with its parent and leaves Ctrl-C to it (the parent kills its workers);
    it has the speed-ups where its parent has them (``fast``: a forked worker has them
    already, a spawned one applies them now)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, which raises
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # a forked worker inherits the held mask
    if fast:
        from torchlint import speedups

        speedups.enable()
    if not _die_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), name="torchlint-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)


PR_SET_PDEATHSIG = 1


def _die_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)
