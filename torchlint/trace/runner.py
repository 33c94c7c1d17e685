"""Run trace jobs in a child process, safely.

torchlint starts a supervisor (:mod:`torchlint.trace.supervisor`, which runs no user code)
and the supervisor starts the child (:mod:`torchlint.trace.child`), each in its own session;
the child has an address-space limit and stdin closed.  The supervisor relays the child's
signed events over its stdout, with a bounded tail of what the child printed: every job gets
``timeout`` seconds from its ``start`` event.  On a timeout, on Ctrl-C or SIGTERM, torchlint
closes the supervisor's stdin and the supervisor kills the child and everything it started.
On a crash (``os._exit``, a signal, the OOM killer, user code killing its parent) the job
that was running is reported as failed and a fresh supervisor and child take the jobs that
had not started.  Nothing the user code does by accident can hang, kill or fill the memory
of torchlint.

``check --trace`` starts the supervisor and child before it analyses the files
(:func:`prestart`): the child sets its limits, imports torch and warms the meta kernels while
the analysis runs, then waits on stdin for the jobs :func:`run_jobs` hands it (stdin becomes
``/dev/null`` before any user code runs); where no job comes, closing it stops both.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import sysconfig
import time
from typing import Any

from torchlint.errors import Terminated, TorchlintError
from torchlint.trace import supervisor
from torchlint.trace.records import Failure, Frame, TraceResult

# Importing torch can be slow on a cold disk; this is allowed on top of the job timeout.
STARTUP_ALLOWANCE = 120.0
# How long a stopped supervisor gets to kill the child's processes and say what they printed.
STOP_GRACE = 4.0
OUTPUT_TAIL_LINES = 20
OUTPUT_LINE_CHARS = 500


class TraceTerminated(TorchlintError):
    """SIGTERM while a trace ran: the trace processes are stopped, torchlint exits 143."""

    exit_code = 128 + 15


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the supervisor and the child (the interpreter itself ignores it:
    both run with ``-I``; the child reads ``PYTHONPATH`` to build its ``sys.path``)."""
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    if extra:
        env.update(extra)
    return env


def _warning_options(env: dict[str, str]) -> list[str]:
    """``-W`` options for the child: the user's ``PYTHONWARNINGS``, else ignore warnings."""
    return [w for w in env.get("PYTHONWARNINGS", "").split(",") if w.strip()] or ["ignore"]


def _tail(text: str) -> str:
    """The last lines of a job's output, each cut to a readable length."""
    lines = [ln for ln in text.strip("\n").splitlines() if ln.strip()][-OUTPUT_TAIL_LINES:]
    return "\n".join(ln if len(ln) <= OUTPUT_LINE_CHARS else ln[:OUTPUT_LINE_CHARS] + " [...]"
                     for ln in lines)


def _describe_exit(rc: int | None, hints: bool = True) -> str:
    if rc is None:
        return "did not exit"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        text = f"was killed by {name}"
        if not hints:
            return text
        if -rc == getattr(signal, "SIGKILL", 9):
            text += " (out of memory?)"
        elif -rc == signal.SIGSEGV:
            text += " (a crash in native code)"
        return text
    return f"exited with code {rc}"


class _Attempt:
    """One supervisor (and its child) running the jobs that are left."""

    def __init__(self, proc: subprocess.Popen[bytes], results: dict[str, dict[str, Any]],
                 timeout: float, mark: str | None = None):
        self.proc = proc
        self.mark = mark  # the token of supervisor.MARK its processes carry
        self.results = results
        self.timeout = timeout
        self.stopped = False
        self.lines = supervisor.Lines()
        self.eof = False
        self.current: str | None = None  # the job running now
        self.ready = False  # torch imported
        self.child_pid: int | None = None
        self.exit: dict[str, Any] | None = None  # the supervisor's last word
        self.deadline = 0.0
        self.spawned = time.monotonic()
        self.startup: dict[str, Any] = {}  # how long the child took to start, for every result

    def pump(self, wait: float) -> None:
        """Handle what the supervisor says within ``wait`` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], max(wait, 0.0))[0]:
            return
        data = os.read(fd, 1 << 20)
        if not data:
            self.eof = True
        for line in self.lines.feed(data):
            try:
                event = json.loads(line)
            except ValueError:  # pragma: no cover - the supervisor writes JSON
                continue
            if isinstance(event, dict):
                self.handle(event)

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.pop("event", None)
        if kind == "spawned":
            self.child_pid = event.get("pid")
            return
        if kind == "exit":
            self.exit = event
            return
        if kind not in ("ready", "start", "result"):
            return
        self.ready = True
        if kind == "ready":
            self.startup = {"startup_seconds": round(time.monotonic() - self.spawned, 4),
                            "torch_import_seconds": event.get("import_seconds")}
        if kind == "start":
            self.current = event.get("id")
        elif kind == "result":
            job_id = event.pop("id", None)
            out = _tail(event.pop("output", "") or "")
            if out and event.get("status") == "failed":
                event.setdefault("failure", {}).setdefault("output", out)
            event.update(self.startup)
            if job_id is not None:
                self.results[job_id] = event
            if job_id == self.current:
                self.current = None
        self.deadline = time.monotonic() + self.timeout

    def dump_stack(self) -> None:
        """Ask the child running a job to print its Python stack, and give it a moment."""
        if self.current is None or self.child_pid is None or supervisor.STACK_SIGNAL is None:
            return
        try:
            os.kill(self.child_pid, supervisor.STACK_SIGNAL)
        except OSError:
            return
        end = time.monotonic() + supervisor.STACK_WAIT
        while not self.eof and time.monotonic() < end:
            self.pump(end - time.monotonic())

    def stop(self) -> None:
        """Ask the supervisor to kill the child's processes, hear it out, and make sure it and
        the child are gone."""
        if self.stopped:
            return
        self.stopped = True
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        end = time.monotonic() + STOP_GRACE
        while not self.eof and time.monotonic() < end:
            self.pump(end - time.monotonic())
        try:
            self.proc.wait(timeout=max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        if self.proc.poll() is None:
            supervisor.kill_session(self.proc.pid)
            self.proc.wait()
        if self.exit is None and self.child_pid is not None:
            # The supervisor died without cleaning up (user code killed it): the child has its
            # parent-death signal; kill whatever is left in its session too.
            supervisor.kill_session(self.child_pid)
        if self.mark is not None:  # and whatever escaped both sessions (a daemon of its own)
            supervisor.kill_marked(self.mark)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _spawn(env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        supervisor.python_command(sys.executable, "torchlint.trace.supervisor"),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env, start_new_session=True)


def _request(environment: dict[str, str], python: str | None, cwd: str, memory_limit: int | None,
             jobs: list[dict[str, Any]] | None, warm_meta: bool = True) -> dict[str, Any]:
    """What the supervisor is first told: how to start the child and, unless the child is
    started ahead of them (``prestart``: ``jobs`` None), the jobs."""
    import site

    return {"parent": os.getpid(), "python": python or sys.executable, "warnings": _warning_options(environment),
            "child": {"cwd": cwd, "memory_limit": memory_limit, "jobs": jobs, "user_site": site.ENABLE_USER_SITE,
                      "warm_meta": warm_meta}}


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
    except OSError:
        pass  # it died at once: its (missing) exit event says so


class Prestarted:
    """A supervisor and its child started before the jobs are known: ``check --trace`` starts
    one before it analyses the files, so that the child imports torch (seconds) while the
    analysis runs; ``run_jobs(..., prestarted=it)`` then hands it the jobs. The child has its
    address-space limit before it imports anything, as a child started with its jobs does.
    ``close()`` (where no job comes) stops both; a run that used it closes it itself."""

    def __init__(self, proc: subprocess.Popen[bytes], mark: str, environment: dict[str, str], cwd: str,
                 memory_limit: int | None, python: str | None):
        self.proc, self.mark, self.environment = proc, mark, environment
        self.cwd, self.memory_limit, self.python = cwd, memory_limit, python
        self.spawned = time.monotonic()
        self.used = False

    def fits(self, cwd: str, memory_limit: int | None, python: str | None) -> bool:
        """It was started for the run ``run_jobs`` is asked for."""
        return not self.used and self.proc.poll() is None and (cwd, memory_limit, python) == (
            self.cwd, self.memory_limit, self.python)

    def close(self) -> None:
        if not self.used:
            self.used = True
            _Attempt(self.proc, {}, 0.0, self.mark).stop()


def prestart(*, memory_limit: int | None = None, cwd: str | os.PathLike[str] | None = None,
             env: dict[str, str] | None = None, python: str | None = None,
             warm_meta: bool = True) -> Prestarted | None:
    """Start a supervisor and a child that imports torch and waits for its jobs (``Prestarted``);
    None where it cannot start (``run_jobs`` then starts one itself)."""
    import secrets
    from pathlib import Path

    cwd = str(Path(cwd or os.getcwd()).resolve())
    mark = secrets.token_hex(16)
    environment = child_env({**(env or {}), supervisor.MARK: mark})
    try:
        proc = _spawn(environment)
    except OSError:
        return None
    _send(proc, _request(environment, python, cwd, memory_limit, None, warm_meta))
    return Prestarted(proc, mark, environment, cwd, memory_limit, python)


def run_jobs(
    jobs: list[dict[str, Any]],
    *,
    timeout: float = 60.0,
    memory_limit: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    python: str | None = None,
    prestarted: Prestarted | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``jobs`` (dicts with a unique ``id``) and return ``{id: result}`` for every job,
    each result a :class:`~torchlint.trace.records.TraceResult` as JSON. With ``prestarted``
    (``prestart``, for the same ``cwd``, ``memory_limit`` and ``python``), the first attempt
    is that child's, which may have imported torch already; a crash's retry starts a new one."""
    import secrets
    from pathlib import Path

    cwd = str(Path(cwd or os.getcwd()).resolve())
    mark = secrets.token_hex(16)
    environment = child_env({**(env or {}), supervisor.MARK: mark})
    results: dict[str, dict[str, Any]] = {}
    pending = list(jobs)
    if prestarted is not None and not (env is None and prestarted.fits(cwd, memory_limit, python)):
        prestarted.close()  # started for another run: not this one's
        prestarted = None
    try:
        while pending:
            if prestarted is not None:
                proc, prestarted.used = prestarted.proc, True
                attempt = _Attempt(proc, results, timeout, prestarted.mark)
                attempt.spawned = prestarted.spawned
                message: dict[str, Any] = {"jobs": pending}
                prestarted = None
            else:
                try:
                    proc = _spawn(environment)
                except OSError as exc:
                    _all_failed(pending, results, "spawn", f"cannot start the trace process: {exc}")
                    break
                attempt = _Attempt(proc, results, timeout, mark)
                message = _request(environment, python, cwd, memory_limit, pending)
            try:
                _send(proc, message)
                timed_out = _watch(attempt)
            except BaseException:
                attempt.stop()  # Ctrl-C or SIGTERM in torchlint
                raise
            if not _settle(attempt, pending, results, timed_out, timeout):
                break
            pending = [j for j in pending if j["id"] not in results]
    except Terminated:  # SIGTERM (``cli``): the attempt's processes were stopped on the way out
        raise TraceTerminated("terminated by SIGTERM; the trace and every process it started "
                              "were stopped") from None
    finally:
        if prestarted is not None:  # no job took it
            prestarted.close()
    for job in jobs:
        results.setdefault(job["id"], TraceResult("error", error_kind="child", message="the trace "
                                                  "process returned no result").to_json())
    return results


def _watch(attempt: _Attempt) -> bool:
    """Follow the supervisor until it ends; True if a job (or the start) timed out."""
    attempt.deadline = time.monotonic() + attempt.timeout + STARTUP_ALLOWANCE
    while not attempt.eof:
        left = attempt.deadline - time.monotonic()
        if left <= 0:
            attempt.dump_stack()
            attempt.stop()
            return True
        attempt.pump(min(left, 1.0))
    attempt.stop()
    return False


_DUMP_HEAD = re.compile(r"^(Stack|Current thread 0x[0-9a-f]+|Thread 0x[0-9a-f]+)[^(]*\(most recent call first\):$")
_DUMP_FRAME = re.compile(r'^\s+File "(.+)", line (\d+) in (.+)$')


def hung_stack(output: str) -> tuple[str, list[Frame]]:
    """Take the ``faulthandler`` stack dump out of a timed-out job's output: the output
    without it, and the user's frames in it (innermost last)."""
    kept: list[str] = []
    frames: list[Frame] = []
    in_dump = False
    for line in output.splitlines():
        if _DUMP_HEAD.match(line.strip()):
            in_dump, frames = True, []
            continue
        m = _DUMP_FRAME.match(line) if in_dump else None
        if m:
            if _is_user_path(m.group(1)):
                frames.append({"file": m.group(1), "line": int(m.group(2)), "function": m.group(3), "code": ""})
            continue
        in_dump = False
        kept.append(line)
    frames.reverse()
    return "\n".join(kept), frames


def _is_user_path(path: str) -> bool:
    """Not torchlint, torch or the standard library (the child's own test, on its paths)."""
    if path.startswith("<") or path.startswith(os.path.join(supervisor.ROOT, "torchlint") + os.sep):
        return False
    parts = path.replace("\\", "/").split("/")
    if "torch" in parts and ("site-packages" in parts or "dist-packages" in parts):
        return False
    stdlib = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")} - {None}
    return "site-packages" in parts or not any(path.startswith(str(d) + os.sep) for d in stdlib)


def _all_failed(jobs: list[dict[str, Any]], results: dict[str, dict[str, Any]], kind: str,
                message: str, output: str = "") -> None:
    for job in jobs:
        results[job["id"]] = TraceResult("error", error_kind=kind, message=message,
                                         output=output or None).to_json()


def _settle(attempt: _Attempt, pending: list[dict[str, Any]], results: dict[str, dict[str, Any]],
            timed_out: bool, timeout: float) -> bool:
    """Record how an attempt ended; False when retrying the jobs left would fail the same way."""
    final = attempt.exit or {}
    if final.get("error"):
        _all_failed([j for j in pending if j["id"] not in results], results, "spawn", final["error"])
        return False
    if attempt.current is not None:
        if timed_out:
            failure = Failure("timeout", kind="timeout",
                              message=f"the trace did not finish within {timeout:g} s (a hang or an "
                                      "endless loop in user code?); the trace process was killed")
        elif attempt.exit is None:
            failure = Failure("crash", kind="crash",
                              message=f"the trace supervisor {_describe_exit(attempt.proc.returncode, False)} "
                                      "while running user code (did the code signal its parent?)")
        else:
            failure = Failure("crash", kind="crash",
                              message=f"the trace process {_describe_exit(final.get('returncode'))} "
                                      "while running user code")
        output = final.get("output") or ""
        if timed_out:
            output, frames = hung_stack(output)
            if frames:
                failure.traceback, failure.user_frame = frames[-8:], frames[-1]
        failure.output = _tail(output) or None
        results[attempt.current] = TraceResult("failed", failure=failure).to_json()
        return True
    if not attempt.ready and not any(j["id"] in results for j in pending):
        # The child died before importing torch: retrying would fail the same way.
        if timed_out:
            why = "timed out while starting"
        elif attempt.exit is None:
            why = f"supervisor {_describe_exit(attempt.proc.returncode, False)}"
        else:
            why = _describe_exit(final.get("returncode"))
        _all_failed(pending, results, "child", f"the trace process {why}",
                    _tail(final.get("log") or ""))
        return False
    return True
