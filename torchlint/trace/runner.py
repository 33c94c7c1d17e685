"""Run trace jobs in a child process, safely.

The child (:mod:`torchlint.trace.child`) runs in its own session with an address-space limit,
stdin closed and stdout/stderr captured to a file.  It appends JSON lines to a result file,
which this module polls: every job gets ``timeout`` seconds from its ``start`` event.  On a
timeout the whole process group is killed; on a crash (``os._exit``, a signal, the OOM
killer) the job that was running is reported as failed and a fresh child takes the jobs
that had not started.  Nothing the user code does can hang or kill the parent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Importing torch can be slow on a cold disk; this is allowed on top of the job timeout.
STARTUP_ALLOWANCE = 120.0
POLL_INTERVAL = 0.02
OUTPUT_TAIL_LINES = 20


def default_memory_limit() -> int | None:
    """75% of physical memory: a runaway allocation fails in the child, not in the OOM killer."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None
    return int(total * 0.75) if total > 0 else None


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent.parent)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in _site_dirs():
        # Running from a source checkout: the child must find this torchlint too.  (An
        # installed torchlint is found anyway; adding site-packages to PYTHONPATH would put
        # it before the standard library.)
        paths.insert(0, root)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    env.pop("PYTHONSTARTUP", None)
    if extra:
        env.update(extra)
    return env


def _site_dirs() -> set[str]:
    import site

    dirs = set()
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenv
        pass
    try:
        dirs.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover
        pass
    return {str(Path(d).resolve()) for d in dirs}


def _tail(text: str) -> str:
    lines = [ln for ln in text.strip("\n").splitlines() if ln.strip()]
    return "\n".join(lines[-OUTPUT_TAIL_LINES:])


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.buffer = ""

    def read(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offset)
                data = fh.read()
                self.offset = fh.tell()
        except FileNotFoundError:
            return []
        self.buffer += data
        events = []
        while "\n" in self.buffer:
            line, self.buffer = self.buffer.split("\n", 1)
            if line.strip():
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return events


def _kill(proc: subprocess.Popen[bytes]) -> None:
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except ProcessLookupError:  # pragma: no cover
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def _describe_exit(rc: int | None) -> str:
    if rc is None:
        return "did not exit"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        text = f"was killed by {name}"
        if -rc == getattr(signal, "SIGKILL", 9):
            text += " (out of memory?)"
        elif -rc == signal.SIGSEGV:
            text += " (a crash in native code)"
        return text
    return f"exited with code {rc}"


def run_jobs(
    jobs: list[dict[str, Any]],
    *,
    timeout: float = 60.0,
    memory_limit: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    python: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``jobs`` (dicts with a unique ``id``) and return ``{id: result}`` for every job."""
    cwd = str(Path(cwd or os.getcwd()).resolve())
    results: dict[str, dict[str, Any]] = {}
    pending = list(jobs)
    with tempfile.TemporaryDirectory(prefix="torchlint-trace-") as tmp:
        attempt = 0
        while pending:
            attempt += 1
            req = Path(tmp, f"request{attempt}.json")
            res = Path(tmp, f"result{attempt}.jsonl")
            log = Path(tmp, f"output{attempt}.txt")
            req.write_text(json.dumps({"cwd": cwd, "memory_limit": memory_limit, "jobs": pending}))
            res.touch()
            with open(log, "wb") as logf:
                try:
                    proc = subprocess.Popen(
                        [python or sys.executable, "-m", "torchlint.trace.child", str(req), str(res)],
                        cwd=cwd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                        env=child_env(env), start_new_session=hasattr(os, "setsid"),
                    )
                except OSError as exc:
                    for job in pending:
                        results[job["id"]] = {"status": "error", "error_kind": "spawn",
                                              "message": f"cannot start the trace process: {exc}"}
                    break
                try:
                    outcome = _watch(proc, _Reader(res), log, timeout, results)
                except BaseException:
                    _kill(proc)  # Ctrl-C in torchlint: the child is in its own session
                    raise
            current, ready, timed_out, log_start = outcome
            raw = log.read_bytes()
            output = raw.decode("utf-8", "replace")
            if current is not None:
                job_output = _tail(raw[log_start:].decode("utf-8", "replace"))
                if timed_out:
                    failure = {"phase": "timeout", "kind": "timeout",
                               "message": f"the trace did not finish within {timeout:g} s "
                                          "(a hang or an endless loop in user code?); the trace "
                                          "process was killed"}
                else:
                    failure = {"phase": "crash", "kind": "crash",
                               "message": f"the trace process {_describe_exit(proc.returncode)} "
                                          "while running user code"}
                if job_output:
                    failure["output"] = job_output
                results[current] = {"status": "failed", "failure": failure}
            elif not ready and not any(j["id"] in results for j in pending):
                # The child died before importing torch: retrying would fail the same way.
                why = "timed out while starting" if timed_out else _describe_exit(proc.returncode)
                for job in pending:
                    results[job["id"]] = {"status": "error", "error_kind": "child",
                                          "message": f"the trace process {why}",
                                          "output": _tail(output)}
                break
            pending = [j for j in pending if j["id"] not in results]
    for job in jobs:
        results.setdefault(job["id"], {"status": "error", "error_kind": "child",
                                       "message": "the trace process returned no result"})
    return results


def _watch(proc: subprocess.Popen[bytes], reader: _Reader, log: Path, timeout: float,
           results: dict[str, dict[str, Any]]) -> tuple[str | None, bool, bool, int]:
    """Follow one child until it exits or times out.

    Returns (id of the job running when it ended, whether torch imported, timed out, offset
    of that job's output in the log).
    """
    current: str | None = None
    ready = False
    log_start = 0
    deadline = time.monotonic() + timeout + STARTUP_ALLOWANCE
    while True:
        exited = proc.poll() is not None
        for event in reader.read():
            kind = event.get("event")
            now = time.monotonic()
            if kind == "ready":
                ready = True
                deadline = now + timeout
            elif kind == "start":
                current = event.get("id")
                log_start = event.get("log") if isinstance(event.get("log"), int) else _size(log)
                deadline = now + timeout
            elif kind == "result":
                job_id = event.pop("id", None)
                event.pop("event", None)
                end = event.pop("log_end", None)
                if job_id is not None:
                    out = _tail(_read_from(log, log_start, end if isinstance(end, int) else None))
                    if out and event.get("status") == "failed":
                        event.setdefault("failure", {}).setdefault("output", out)
                    results[job_id] = event
                if job_id == current:
                    current = None
                ready = True
                deadline = now + timeout
        if exited:
            return current, ready, False, log_start
        if time.monotonic() > deadline:
            _kill(proc)
            for event in reader.read():  # a result may have landed meanwhile
                if event.get("event") == "result" and event.get("id") is not None:
                    job_id = event.pop("id")
                    event.pop("event", None)
                    results[job_id] = event
                    if job_id == current:
                        current = None
            return current, ready, True, log_start
        time.sleep(POLL_INTERVAL)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # pragma: no cover
        return 0


def _read_from(path: Path, offset: int, end: int | None = None) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read() if end is None else fh.read(max(0, end - offset))
            return data.decode("utf-8", "replace")
    except OSError:  # pragma: no cover
        return ""
