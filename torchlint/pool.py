"""Per-file analysis across processes.

Files go to a process pool in small chunks, a bounded number in flight so memory does not
grow with the number of files. If a worker dies (LibCST's native parser can crash the whole
process on pathological input), the files of the chunks it took are re-analysed one per
process; a file that kills its process again is reported as TL000 and the run goes on.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator

from torchlint.engine import FileResult, analyze_source, crashed_result

Item = tuple[int, str, bytes]  # (index, display path, bytes)

CHUNK = 8
# Below this many files a pool costs more than it saves (the pre-commit case).
MIN_FILES_FOR_POOL = 24


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _analyze_chunk(chunk: list[Item], enabled: frozenset[str], options: dict[str, dict[str, Any]]) -> list[tuple[int, FileResult]]:
    return [(index, analyze_source(path, data, enabled, options)) for index, path, data in chunk]


def _context():
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
    count: int,
    enabled: frozenset[str],
    options: dict[str, dict[str, Any]],
    jobs: int,
    on_result: Callable[[int, FileResult], None],
) -> None:
    """Analyse every item, calling ``on_result(index, result)`` for each (in any order)."""
    if jobs <= 1 or count < MIN_FILES_FOR_POOL:
        for index, path, data in items:
            on_result(index, analyze_source(path, data, enabled, options))
        return
    retry: list[Item] = []
    window = jobs * 4
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        pending: dict[Future, list[Item]] = {}
        chunks = _chunks(items, CHUNK)
        broken = False
        exhausted = False
        while pending or not exhausted:
            while not broken and not exhausted and len(pending) < window:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                try:
                    pending[pool.submit(_analyze_chunk, chunk, enabled, options)] = chunk
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
        on_result(item[0], _isolated(item, enabled, options))


def _isolated(item: Item, enabled: frozenset[str], options: dict[str, dict[str, Any]]) -> FileResult:
    """Analyse one file in a process of its own; a crash there is that file's fault."""
    index, path, data = item
    with ProcessPoolExecutor(max_workers=1, mp_context=_context()) as pool:
        try:
            return pool.submit(_analyze_chunk, [item], enabled, options).result()[0][1]
        except BrokenProcessPool:
            return crashed_result(path, "the parser crashed on this file (the process died)", enabled)
