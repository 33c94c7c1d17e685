"""The trace supervisor: the one process between torchlint and the user's code.

::

    torchlint ──stdin/stdout pipes──> supervisor (runs no user code; its own session)
                                        └── child (imports torch and user code; its own session)

* **Signals.**  The child's parent is the supervisor, in another session, so user code that
  signals its parent or its process group (``os.kill(os.getppid(), 9)``, ``os.killpg(0, 9)``)
  ends the supervisor at worst; torchlint sees that as a failed trace.  The supervisor dies
  with torchlint (``PR_SET_PDEATHSIG``) and the child dies with the supervisor.
* **Processes.**  The supervisor is a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever
  the user code starts (a fork, a double-forked daemon, a process in a new session) stays its
  descendant; after each job's result, and when the child ends or torchlint asks it to stop,
  it kills every descendant but the child (:func:`kill_descendants`, a walk over ``/proc``;
  no cgroups needed).  Every trace process carries ``TORCHLINT_TRACE_RUN=<token>`` in its
  environment: if user code kills the supervisor, what it started is re-parented out of
  reach, and torchlint's final sweep (:func:`kill_marked`) finds and kills it by the token.
* **Output.**  The child's stdout and stderr are one pipe that the supervisor reads, keeping
  only the last :data:`TAIL_BYTES` (:class:`Tail`): a model that prints without end costs no
  memory in any process.  The child waits for an acknowledgement (one byte on a second pipe)
  after each ``start`` event, so what a job prints is filed under that job.
* **Results.**  The child writes JSON lines to a pipe that only the supervisor reads.  Each
  line carries a sequence number and an HMAC-SHA256 of it and the payload (:func:`sign`),
  under a key the supervisor sends the child on stdin (never argv, the environment or a file)
  and that the child reads before importing torch or user code.  A line that is not signed,
  or replays an earlier sequence number, is dropped.  torchlint reads only the supervisor's
  stdout, which the child does not inherit.

Limits: the user's code runs with the user's privileges and in the same process as the code
that signs results, so a program *set on* forging a result could dig the key out of the
interpreter's memory, and one set on harm can find and signal any of the user's processes
through ``/proc``.  This contains accidents and misbehaving models; it is not a sandbox.

Both processes start as ``python -I -S -c BOOT ROOT`` (:func:`python_command`): isolated mode,
so neither the working directory nor ``PYTHONPATH`` can shadow the standard library (a
``json.py`` next to the model); ``ROOT`` is where this torchlint lives.  The child then
adds ``PYTHONPATH`` and site-packages *after* the standard library itself.

This module imports only the standard library: it is the supervisor's whole program.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import select
import signal
import subprocess
import sys
import time
import threading
from pathlib import Path
from typing import Any

# The last bytes of the child's output kept (per job, and for the whole run).
TAIL_BYTES = 64 * 1024
# A result line longer than this is dropped (a 20,000-row trace is a few MB).
MAX_LINE_BYTES = 64 * 1024 * 1024
# How long to wait for the pipes to close once every descendant has been killed.
DRAIN_SECONDS = 1.0
# How long kill_descendants keeps trying (a fork loop needs a few rounds).
KILL_SECONDS = 2.0
READ_CHUNK = 1 << 16

ROOT = str(Path(__file__).resolve().parent.parent.parent)
_BOOT = "import sys; sys.path.append(sys.argv.pop(1)); from {module} import main; main()"

# torchlint sends it to the child before killing a job that timed out: the child prints its
# Python stack (``faulthandler``), so the report can say where it hung.
STACK_SIGNAL = getattr(signal, "SIGUSR1", None)
STACK_WAIT = 0.5  # how long the child gets to print it

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def python_command(python: str, module: str, *flags: str) -> list[str]:
    """``python -I -S FLAGS -c BOOT ROOT``: run ``module.main()`` with only the standard
    library and this torchlint on ``sys.path`` (no working directory, no ``PYTHONPATH``)."""
    return [python, "-I", "-S", *flags, "-c", _BOOT.format(module=module), ROOT]


# --------------------------------------------------------------------------- Linux process control


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return False


def die_with_parent(sig: int, parent: int) -> None:
    """Get ``sig`` when the parent process dies; exit now if it already has."""
    _prctl(_PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os._exit(1)


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process instead of init."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def processes() -> list[tuple[int, int, int]] | None:
    """(pid, ppid, session id) of every process, from ``/proc``; None without ``/proc``."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    found = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
            fields = stat[stat.rindex(b")") + 2:].split()
            found.append((int(name), int(fields[1]), int(fields[3])))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def descendants(root: int) -> list[int] | None:
    table = processes()
    if table is None:
        return None
    children: dict[int, list[int]] = {}
    for pid, ppid, _sid in table:
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def _kill(pid: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)
    except OSError:
        pass


def kill_descendants(reap: Any, fallback_group: int | None = None, spare: int | None = None) -> None:
    """SIGKILL every descendant of this process but ``spare`` (and what ``spare`` itself
    runs as its own children is killed too), reaping them, until none is left.

    Killed processes' children are re-parented to this (subreaper) process and killed in
    the next round.  Without ``/proc`` only the process group ``fallback_group`` is killed.
    """
    me = os.getpid()
    deadline = time.monotonic() + KILL_SECONDS
    while True:
        pids = descendants(me)
        if pids is None:
            if fallback_group is not None and spare is None:
                _kill(fallback_group, group=True)
            reap()
            return
        pids = [pid for pid in pids if pid != spare]
        if not pids or time.monotonic() > deadline:
            return
        for pid in pids:
            _kill(pid)
        reap()
        time.sleep(0.001)


# The environment variable every trace process carries (the supervisor, the child and all
# they start): a final sweep finds what escaped the process tree (a double-forked daemon in
# a session of its own whose subreaper was killed) by it.
MARK = "TORCHLINT_TRACE_RUN"


def marked(mark: str) -> list[int]:
    """The processes (of this user: /proc/PID/environ is readable for those alone) whose
    environment holds ``MARK=mark``; [] without ``/proc``."""
    wanted = f"{MARK}={mark}".encode()
    me = os.getpid()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue  # gone, or another user's
        if wanted in environ.split(b"\0"):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> int:
    """SIGKILL every process carrying ``MARK=mark`` until none is left (a fork loop needs a
    few rounds), for at most ``KILL_SECONDS``; how many were killed."""
    killed = 0
    quiet = 0  # scans in a row that found none: a process in the middle of exec() shows no
    deadline = time.monotonic() + KILL_SECONDS  # environment for a moment, so one is not enough
    while time.monotonic() < deadline and quiet < 3:
        pids = marked(mark)
        quiet = 0 if pids else quiet + 1
        for pid in pids:
            _kill(pid)
        killed += len(pids)
        time.sleep(0.02)
    return killed


def kill_session(sid: int) -> None:
    """SIGKILL every process in session ``sid`` (used by torchlint if the supervisor died)."""
    _kill(sid, group=True)
    for pid, _ppid, session in processes() or []:
        if session == sid:
            _kill(pid)


# --------------------------------------------------------------------------- the pipes


class Lines:
    """Split a byte stream into lines, dropping any line longer than ``limit``."""

    def __init__(self, limit: int = MAX_LINE_BYTES):
        self.limit = limit
        self.buffer = bytearray()
        self.scanned = 0
        self.skipping = False
        self.dropped = 0

    def feed(self, data: bytes) -> list[bytes]:
        self.buffer += data
        lines = []
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end < 0:
                self.scanned = len(self.buffer)
                if self.scanned > self.limit:
                    self.buffer.clear()
                    self.scanned = 0
                    self.skipping = True
                return lines
            line = bytes(self.buffer[:end])
            del self.buffer[:end + 1]
            self.scanned = 0
            if self.skipping:
                self.skipping = False
                self.dropped += 1
            elif line.strip():
                lines.append(line)


def sign(key: bytes, seq: int, payload: bytes) -> bytes:
    return hmac.new(key, b"%d %s" % (seq, payload), hashlib.sha256).hexdigest().encode()


def signed_line(key: bytes, seq: int, obj: dict[str, Any]) -> bytes:
    """One result line as the child writes it: ``MAC SEQ JSON``."""
    payload = json.dumps(obj, default=str).encode()
    return b"%s %d %s\n" % (sign(key, seq, payload), seq, payload)


class Channel:
    """The supervisor's end of the result pipe: only signed lines, in order, get through."""

    def __init__(self, key: bytes):
        self.key = key
        self.lines = Lines()
        self.last_seq = 0
        self.rejected = 0

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        events = []
        for line in self.lines.feed(data):
            event = self._verify(line)
            if event is None:
                self.rejected += 1
            else:
                events.append(event)
        return events

    def _verify(self, line: bytes) -> dict[str, Any] | None:
        try:
            mac, seq_text, payload = line.split(b" ", 2)
            seq = int(seq_text)
        except ValueError:
            return None
        if seq <= self.last_seq or not hmac.compare_digest(mac, sign(self.key, seq, payload)):
            return None
        try:
            event = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        self.last_seq = seq
        return event


class Tail:
    """The last ``size`` bytes of a stream, and how many bytes it has carried."""

    def __init__(self, size: int = TAIL_BYTES):
        self.size = size
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        self.total += len(chunk)
        if len(self.data) > 2 * self.size:
            del self.data[:-self.size]

    def since(self, position: int) -> str:
        """What the stream carried after ``position`` (at most its last ``size`` bytes)."""
        start = max(position, self.total - len(self.data), self.total - self.size)
        return self.data[len(self.data) - (self.total - start):].decode("utf-8", "replace")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read(fd: int) -> bytes | None:
    """One chunk from a non-blocking pipe: b"" at end of file, None if nothing is ready."""
    try:
        return os.read(fd, READ_CHUNK)
    except BlockingIOError:
        return None


# --------------------------------------------------------------------------- the supervisor


class Supervisor:
    def __init__(self, request: dict[str, Any], early: bytes = b""):
        self.request = request
        self.early = early  # read with the request: handed on once the child is started
        self.stop = False
        self.status: int | None = None
        self.tail = Tail()
        self.job_start: int | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self.ack_w = -1
        self.child_stdin: Any = None  # a child started ahead of its jobs waits on it
        self.requests = Lines()

    # -- talking to torchlint (stdout)

    def send(self, event: dict[str, Any]) -> None:
        try:
            write_all(1, json.dumps(event).encode() + b"\n")
        except OSError:  # torchlint is gone
            self.stop = True

    # -- the child

    def spawn(self, key: bytes, result_w: int, output_w: int, ack_r: int) -> subprocess.Popen[bytes]:
        req = self.request
        # -B: importing the user's modules writes no __pycache__ into their project
        cmd = python_command(req["python"], "torchlint.trace.child", "-u", "-B",
                             *[f"-W{w}" for w in req.get("warnings", ["ignore"])])
        child = subprocess.Popen(cmd, cwd=req["child"]["cwd"], stdin=subprocess.PIPE,
                                 stdout=output_w, stderr=output_w, pass_fds=(result_w, ack_r),
                                 start_new_session=True)
        assert child.stdin is not None
        setup = dict(req["child"], key=key.hex(), fd=result_w, ack=ack_r, supervisor=os.getpid())
        try:
            child.stdin.write(json.dumps(setup).encode() + b"\n")
            child.stdin.flush()
            if setup.get("jobs") is None:  # started ahead of its jobs: torchlint sends them later
                self.child_stdin = child.stdin
            else:
                child.stdin.close()
        except OSError:  # it died at once; its exit status says why
            pass
        return child

    def on_request(self, data: bytes) -> None:
        """A line from torchlint after the first: the jobs of a child started ahead of them,
        handed on to the child (from a thread: the child reads them only once torch is
        imported, and its output must keep flowing meanwhile)."""
        for line in self.requests.feed(data):
            try:
                message = json.loads(line)
            except ValueError:
                continue
            stdin, self.child_stdin = self.child_stdin, None
            if not isinstance(message, dict) or stdin is None:
                continue

            def hand_on(payload: bytes = json.dumps({"jobs": message.get("jobs") or []}).encode() + b"\n") -> None:
                try:
                    stdin.write(payload)
                    stdin.close()
                except (OSError, ValueError):
                    pass

            threading.Thread(target=hand_on, daemon=True).start()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.child is not None and pid == self.child.pid:
                self.status = os.waitstatus_to_exitcode(status)
                self.child.returncode = self.status

    def on_output(self, fd: int, drain: bool) -> bool:
        """Read the child's output (all that is waiting if ``drain``); False at end of file."""
        for _ in range(64 if drain else 1):
            data = _read(fd)
            if data is None:
                return True
            if not data:
                return False
            self.tail.add(data)
        return True

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            self.job_start = self.tail.total
            try:
                os.write(self.ack_w, b"1")  # the child may run the job now
            except OSError:
                pass
        elif kind == "result":
            if self.job_start is not None:
                event["output"] = self.tail.since(self.job_start)
            self.job_start = None
            # the job is over: whatever it started goes now, before the next job's start
            # (the child waits for its acknowledgement), so no trace outlives its model
            kill_descendants(self.reap, spare=self.child.pid if self.child is not None else None)
        elif kind != "ready":
            return
        self.send(event)

    def run(self) -> None:
        wake_r, wake_w = os.pipe()
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe()
        ack_r, self.ack_w = os.pipe()
        for fd in (wake_r, wake_w, out_r, res_r):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._terminate)
        become_subreaper()
        key = os.urandom(32)
        channel = Channel(key)
        try:
            self.child = self.spawn(key, res_w, out_w, ack_r)
        except OSError as exc:
            self.send({"event": "exit", "returncode": None,
                       "error": f"cannot start the trace process: {exc}"})
            return
        finally:
            for fd in (out_w, res_w, ack_r):
                os.close(fd)
        self.send({"event": "spawned", "pid": self.child.pid})
        if self.early:
            self.on_request(self.early)

        open_fds = {0, out_r, res_r}
        while self.status is None and not self.stop:
            readable = select.select([wake_r, *open_fds], [], [], 1.0)[0]
            if wake_r in readable:
                _read(wake_r)
            if 0 in readable:
                data = os.read(0, READ_CHUNK)
                if not data:
                    self.stop = True  # torchlint closed our stdin: stop now
                else:
                    self.on_request(data)
            if res_r in readable:
                self.on_output(out_r, drain=True)  # the job's output, written before its events
                data = _read(res_r)
                if data == b"":
                    open_fds.discard(res_r)
                for event in channel.feed(data or b""):
                    self.on_event(event)
            if out_r in readable and not self.on_output(out_r, drain=False):
                open_fds.discard(out_r)
            self.reap()

        kill_descendants(self.reap, fallback_group=self.child.pid)
        self.reap()
        self._drain(out_r, res_r, channel)
        whole = self.tail.since(0)
        self.send({"event": "exit", "returncode": self.status,
                   "output": self.tail.since(self.job_start) if self.job_start is not None else whole,
                   "log": whole})

    def _drain(self, out_r: int, res_r: int, channel: Channel) -> None:
        """What is left in the pipes, now that their writers are dead: the output first (it
        was written before the events that follow it), for a little while at most."""
        deadline = time.monotonic() + DRAIN_SECONDS
        for fd in (out_r, res_r):
            while time.monotonic() < deadline:
                if not select.select([fd], [], [], 0.1)[0]:
                    continue
                data = _read(fd)
                if data == b"":
                    break
                if data and fd == out_r:
                    self.tail.add(data)
                elif data:
                    for event in channel.feed(data):
                        self.on_event(event)

    def _terminate(self, *_: Any) -> None:
        self.stop = True


def _read_request() -> tuple[dict[str, Any], bytes]:
    """The first line from torchlint, and what came after it in the same reads (the jobs of
    a child started ahead of them, sent before the supervisor read its request)."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(0, READ_CHUNK)
        if not chunk:
            os._exit(1)  # torchlint went away before asking anything
        data += chunk
    first, rest = data.split(b"\n", 1)
    request = json.loads(first)
    assert isinstance(request, dict)
    return request, rest


def main() -> None:
    request, rest = _read_request()
    die_with_parent(signal.SIGTERM, request["parent"])
    try:
        Supervisor(request, early=rest).run()
    except BaseException as exc:  # noqa: BLE001 - say why, then clean up
        try:
            write_all(1, json.dumps({"event": "exit", "returncode": None,
                                     "error": f"the trace supervisor failed: "
                                              f"{type(exc).__name__}: {exc}"}).encode() + b"\n")
        except OSError:
            pass
        kill_descendants(_reap_all)
    os._exit(0)


def _reap_all() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return
