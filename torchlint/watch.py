"""``torchlint check --watch``: lint, then lint again whenever what the run read changes.

Polling, no file-system notification library: every ``INTERVAL`` seconds the files the run
would lint, and the configuration files that could apply to them, are looked at (path, size,
modification time); when anything differs (a file edited, added or removed, a configuration
written), the run is repeated. Ctrl-C ends the loop (exit 0). This module imports only the
standard library: the command line gives it the run and what to watch.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Callable, Hashable, Iterable, TextIO

INTERVAL = 0.5  # seconds between two looks at the files
CONFIG_NAMES = ("pyproject.toml", "torchlint.toml", ".gitignore")


def stat_key(path: Path) -> tuple:
    """What tells a change of ``path``: its size and modification time (None: it is gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return (str(path), None)
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


def snapshot(files: Iterable[Path], directories: Iterable[Path]) -> tuple:
    """The state of ``files`` and of the configuration files (``CONFIG_NAMES``) in
    ``directories`` and their parents: equal snapshots mean nothing changed."""
    seen: set[Path] = set()
    configs = []
    for directory in directories:
        for d in (directory, *directory.parents):
            if d in seen:
                break
            seen.add(d)
            configs.extend(stat_key(d / name) for name in CONFIG_NAMES)
    return tuple(sorted(stat_key(f) for f in set(files))) + tuple(sorted(configs, key=repr))


def watch(run: Callable[[], int], state: Callable[[], Hashable], *, interval: float = INTERVAL,
          sleep: Callable[[float], None] = time.sleep, rounds: int | None = None,
          stream: TextIO | None = None) -> int:
    """Call ``run`` now and again whenever ``state()`` changes, looking every ``interval``
    seconds, until Ctrl-C (or, for tests, ``rounds`` looks). Returns 0: the loop ended as
    asked; each run's own exit code only shows in its report."""
    stream = stream or sys.stderr

    def note(text: str) -> None:
        print(f"[{datetime.now():%H:%M:%S}] torchlint: {text}", file=stream, flush=True)

    try:
        note("watching for file changes (Ctrl-C to stop)")
        last = state()
        run()
        looked = 0
        while rounds is None or looked < rounds:
            sleep(interval)
            looked += 1
            now = state()
            if now != last:
                last = now
                note("file changes detected, linting again")
                run()
    except KeyboardInterrupt as exc:
        if type(exc) is not KeyboardInterrupt:  # SIGTERM's Terminated ends the command as always
            raise
        print(file=stream)
        note("stopped watching")
    return 0
