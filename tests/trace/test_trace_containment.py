"""The trace never harms torchlint (issue 10, items 16-19).

Each model here is a reproducer written at test time: it kills its parent, prints without
end, leaves processes behind, forges results, or sits next to a ``json.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from trace_helpers import REPO

from torchlint.trace import supervisor
from torchlint.trace.runner import run_jobs

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

HEADER = "import json, os, signal, subprocess, sys, time\nimport torch.nn as nn\n"


def _model(path: Path, name: str, forward: str, init: str = "") -> Path:
    """Append ``class name(nn.Module)`` with a Linear(4, 4) and the given forward body."""
    text = path.read_text() if path.exists() else HEADER
    body = textwrap.indent(textwrap.dedent(forward).strip(), " " * 8)
    extra = textwrap.indent(textwrap.dedent(init).strip(), " " * 8)
    text += (f"\n\nclass {name}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             f"        self.fc = nn.Linear(4, 4)\n{extra}\n\n    def forward(self, x):\n{body}\n"
             "        return self.fc(x)\n")
    path.write_text(text)
    return path


def _job(job_id: str, path: Path, attr: str) -> dict:
    return {"id": job_id, "target": {"file": str(path), "module": None, "attr": attr,
                                     "display": f"{path.name}:{attr}"},
            "inputs": [{"shape": [2, 4], "dtype": "float32"}], "device": "cpu", "mode": "trace"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *rest])
    return env


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that never reaps counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:][:1] != b"Z"


def _assert_gone(pids: list[int], within: float = 5.0) -> None:
    end = time.monotonic() + within
    while any(_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for pid in left:  # do not leave them behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running: {left}"


def _wait_for(path: Path, count: int, within: float = 90.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists():
            pids = [int(p) for p in path.read_text().split()]
            if len(pids) >= count:
                return pids
        time.sleep(0.05)
    raise AssertionError(f"{path} never got {count} pids")


# --------------------------------------------------------------------------- 16: kill the parent


def test_user_code_killing_its_parent_only_fails_the_trace(tmp_path):
    """``os.kill(os.getppid(), 9)`` used to kill torchlint (exit 137, not even the static
    findings); now it ends the supervisor, the job fails, and the static findings print."""
    pids = tmp_path / "pids"
    model = _model(tmp_path / "killer.py", "Killer", f"""
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{os.getpid()}}\\n")
        os.kill(os.getppid(), signal.SIGKILL)
        os.killpg(0, signal.SIGKILL)
    """, init="self.spare = nn.Linear(4, 4)")
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--trace",
                           "--no-cache", model.name], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "TL005" in proc.stdout and "spare" in proc.stdout
    assert "could not trace killer.py:Killer" in proc.stderr
    assert "supervisor was killed by SIGKILL" in proc.stderr
    _assert_gone(_wait_for(pids, 1, within=1))


# --------------------------------------------------------------------------- 17: endless output

# VmHWM, the peak RSS of this process image (ru_maxrss would carry over pytest's through exec).
RSS_PROBE = """
import json, re, sys
from torchlint.trace.runner import run_jobs
job = json.loads(sys.argv[1])
result = run_jobs([job], timeout=3, cwd=sys.argv[2])[job["id"]]
with open("/proc/self/status") as fh:
    peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", fh.read()).group(1))
print(json.dumps({"rss_kb": peak, "result": result}))
"""


def test_endless_output_keeps_the_parent_small(tmp_path):
    """Printing without end for 3 s (GBs) used to be read whole into torchlint's memory."""
    model = _model(tmp_path / "flood.py", "Flood", """
        chunk = ("y" * 1023 + "\\n") * 64
        while True:
            sys.stdout.write(chunk)
            sys.stderr.write(chunk)
    """)
    job = _job("flood", model, "Flood")
    proc = subprocess.run([sys.executable, "-c", RSS_PROBE, json.dumps(job), str(tmp_path)],
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["rss_kb"] < 100 * 1024, f"torchlint grew to {doc['rss_kb'] // 1024} MiB"
    failure = doc["result"]["failure"]
    assert failure["phase"] == "timeout" and "within 3 s" in failure["message"]
    lines = failure["output"].splitlines()
    assert 0 < len(lines) <= 20 and all(line.startswith("yyy") and len(line) <= 520 for line in lines)


# --------------------------------------------------------------------------- 18: processes left

DAEMON = """
        r, w = os.pipe()
        middle = os.fork()
        if middle == 0:
            os.setsid()
            daemon = os.fork()
            if daemon == 0:
                os.execvp("sleep", ["sleep", "1000"])
            os.write(w, str(daemon).encode())
            os._exit(0)
        os.waitpid(middle, 0)
        pid = int(os.read(r, 64))
"""


def test_processes_the_model_starts_are_killed_after_the_trace(tmp_path):
    """A fork, a double-forked daemon and ``Popen(start_new_session=True)`` used to outlive
    a clean trace."""
    pids = tmp_path / "pids"
    record = f"""
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{pid}}\\n")
    """
    path = tmp_path / "spawners.py"
    _model(path, "Forks", """
        pid = os.fork()
        if pid == 0:
            os.execvp("sleep", ["sleep", "1000"])
    """ + record)
    _model(path, "Daemon", DAEMON + record)
    _model(path, "NewSession", """
        pid = subprocess.Popen(["sleep", "1000"], start_new_session=True).pid
    """ + record)
    jobs = [_job(name, path, name) for name in ("Forks", "Daemon", "NewSession")]
    results = run_jobs(jobs, timeout=60, cwd=tmp_path)
    assert [results[j["id"]]["status"] for j in jobs] == ["ok", "ok", "ok"], results
    _assert_gone(_wait_for(pids, 3, within=1), within=1)




def test_a_jobs_daemon_is_killed_when_its_job_ends(tmp_path):
    """Descendants used to be reaped only when the child ended: a daemon from one model ran
    on while the next models were traced."""
    pids, seen = tmp_path / "pids", tmp_path / "seen"
    path = tmp_path / "models.py"
    _model(path, "Daemon", DAEMON + f"""
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{pid}}\\n")
    """)
    _model(path, "Looks", f"""
        daemon = int(open({str(pids)!r}).read().split()[0])
        try:
            state = open(f"/proc/{{daemon}}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "gone"
        with open({str(seen)!r}, "w") as fh:
            fh.write(state)
    """)
    results = run_jobs([_job("Daemon", path, "Daemon"), _job("Looks", path, "Looks")], timeout=60, cwd=tmp_path)
    assert [results[j]["status"] for j in ("Daemon", "Looks")] == ["ok", "ok"], results
    assert seen.read_text() in ("gone", "Z"), "the first model's daemon was still running during the second"
    _assert_gone(_wait_for(pids, 1, within=1), within=1)


@pytest.mark.parametrize("earlier", [False, True])
def test_no_daemon_outlives_a_model_that_kills_the_supervisor(tmp_path, earlier):
    """A model that double-forks a ``setsid`` daemon and then kills its parent (the
    supervisor) left the daemon running: re-parented to init, in a session of its own. So
    did a daemon of an earlier, clean model when a later one killed the supervisor."""
    pids = tmp_path / "pids"
    record = f"""
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{pid}}\\n")
    """
    path = tmp_path / "models.py"
    _model(path, "Clean", DAEMON + record)
    _model(path, "Killer", DAEMON + record + """
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)
    """)
    jobs = ([_job("Clean", path, "Clean")] if earlier else []) + [_job("Killer", path, "Killer")]
    results = run_jobs(jobs, timeout=60, cwd=tmp_path)
    assert results["Killer"]["status"] != "ok"
    _assert_gone(_wait_for(pids, len(jobs), within=1), within=1)


def test_the_default_memory_limit_is_an_absolute_figure():
    from torchlint.trace_settings import DEFAULT_MEMORY_LIMIT, default_memory_limit

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert default_memory_limit() == min(DEFAULT_MEMORY_LIMIT, int(total * 0.75))
    assert DEFAULT_MEMORY_LIMIT == 8 << 30


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_torchlint_trace_leaves_no_process(tmp_path, sig):
    """SIGTERM used to leave the child running; now the trace is stopped and torchlint exits
    143.  Even SIGKILL, which torchlint cannot handle, takes the supervisor and all below it."""
    pids = tmp_path / "pids"
    model = _model(tmp_path / "hang.py", "Hang", f"""
        helper = subprocess.Popen(["sleep", "1000"], start_new_session=True)
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{os.getpid()}}\\n{{helper.pid}}\\n")
        while True:
            time.sleep(1)
    """)
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "trace", f"{model.name}:Hang",
                             "--device", "cpu", "--input-shape", "2,4"], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        spawned = _wait_for(pids, 2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone(spawned)
    if sig == signal.SIGTERM:
        assert proc.returncode == 143, (proc.returncode, out, err)
        assert err.strip() == ("torchlint: error: terminated by SIGTERM; the trace and every "
                               "process it started were stopped")
    else:
        assert proc.returncode == -signal.SIGKILL


# --------------------------------------------------------------------------- 19: forged results


def test_user_code_cannot_forge_a_result_or_shadow_the_child(tmp_path):
    """Appending a result line to ``sys.argv[2]`` used to turn a crash into exit 0, and a
    ``json.py`` next to the model made every trace fail with "exited with code 1"."""
    for name in ("json.py", "re.py"):
        (tmp_path / name).write_text("raise SystemExit('the trace imported the user\\'s module')\n")
    path = _model(tmp_path / "forger.py", "Clean", "pass")
    _model(path, "Forger", """
        fake = {"event": "result", "id": "forger", "status": "ok", "model_type": "Forger"}
        line = json.dumps(fake)
        forged = [line, "0" * 64 + " 99 " + line, "0" * 64 + " 1 " + line]
        for fd in (int(n) for n in os.listdir("/proc/self/fd")):
            for text in forged:
                try:
                    os.write(fd, (text + "\\n").encode())
                except OSError:
                    pass
        for arg in sys.argv[1:]:
            try:
                with open(arg, "a") as fh:
                    fh.write(line + "\\n")
            except OSError:
                pass
        os._exit(3)
    """)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO), os.environ.get("PYTHONPATH", "")])}
    results = run_jobs([_job("clean", path, "Clean"), _job("forger", path, "Forger")],
                       timeout=60, cwd=tmp_path, env=env)
    assert results["clean"]["status"] == "ok", results["clean"]
    forger = results["forger"]
    assert forger["status"] == "failed", forger
    assert forger["failure"]["phase"] == "crash"
    assert "exited with code 3" in forger["failure"]["message"]


def test_python_m_torchlint_ignores_modules_in_the_working_directory(tmp_path):
    (tmp_path / "json.py").write_text("raise SystemExit('torchlint imported ./json.py')\n")
    (tmp_path / "libcst.py").write_text("raise SystemExit('torchlint imported ./libcst.py')\n")
    (tmp_path / "model.py").write_text("import torch\n")
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache",
                           "model.py"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "imported" not in proc.stdout + proc.stderr



def test_python_m_torchlint_never_runs_a_torchlint_py_from_the_working_directory(tmp_path):
    """Python resolves ``-m torchlint`` before any torchlint code runs; the installed
    ``torchlint-precedence.pth`` shim looks past a plain ``torchlint.py`` module."""
    (tmp_path / "torchlint.py").write_text("raise SystemExit('ran ./torchlint.py')\n")
    (tmp_path / "model.py").write_text("import torch\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a user runs it
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "model.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "ran ./torchlint.py" not in proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed" in proc.stdout


# --------------------------------------------------------------------------- the pieces


def test_channel_accepts_only_signed_lines_in_order():
    key, other = os.urandom(32), os.urandom(32)
    channel = supervisor.Channel(key)
    good = [supervisor.signed_line(key, n, {"event": "start", "id": str(n)}) for n in (1, 2, 3)]
    stream = (b'{"event": "result", "id": "1", "status": "ok"}\n'
              + good[0]
              + supervisor.signed_line(other, 2, {"event": "result", "status": "ok"})
              + good[0]  # a replay
              + good[2][:-1] + b" \n"  # tampered
              + good[1][:30])
    events = channel.feed(stream)
    events += channel.feed(good[1][30:] + good[2])
    assert [e["id"] for e in events] == ["1", "2", "3"]
    assert channel.rejected == 4


def test_output_tail_and_lines_are_bounded():
    tail = supervisor.Tail(size=10)
    tail.add(b"abc")
    start = tail.total
    for _ in range(1000):
        tail.add(b"0123456789")
    tail.add(b"xyz")
    assert len(tail.data) <= 20 and tail.since(start) == "3456789xyz" and tail.since(tail.total) == ""
    lines = supervisor.Lines(limit=8)
    assert lines.feed(b"ok\n" + b"z" * 20) == [b"ok"]
    assert len(lines.buffer) <= 8
    assert lines.feed(b"zz\nfine\n") == [b"fine"] and lines.dropped == 1


# --------------------------------------------------------------------------- a child started ahead


def test_a_prestarted_child_runs_the_jobs_it_is_handed_with_stdin_closed(tmp_path):
    """``check --trace`` starts the child before it analyses (``runner.prestart``): it imports
    torch while the files are read, then runs the jobs it is handed exactly as a child started
    with them; user code still finds stdin at end of file (the jobs' line is not readable)."""
    from torchlint.trace.runner import prestart

    path = _model(tmp_path / "m.py", "ReadsStdin", """
        assert sys.stdin.read() == "", "stdin is not closed"
    """)
    _model(path, "Plain", "pass")
    ahead = prestart(cwd=tmp_path)
    assert ahead is not None
    time.sleep(0.5)  # it is importing torch meanwhile
    jobs = [_job("stdin", path, "ReadsStdin"), _job("plain", path, "Plain")]
    results = run_jobs(jobs, timeout=60, cwd=tmp_path, prestarted=ahead)
    assert [results[j]["status"] for j in ("stdin", "plain")] == ["ok", "ok"], results
    assert results["plain"]["startup_seconds"] >= 0.5  # counted from the early start
    assert ahead.used and ahead.proc.poll() is not None  # the run took it and stopped it


def test_a_prestarted_child_handed_its_jobs_at_once_runs_them(tmp_path):
    """The jobs' line can reach the supervisor in the same read as its request (``check
    --trace --select TL101`` on one file analyses in no time): it is handed on, not lost with
    the supervisor exiting 1 ("the trace process supervisor exited with code 1")."""
    from torchlint.trace.runner import prestart

    path = _model(tmp_path / "m.py", "Plain", "pass")
    ahead = prestart(cwd=tmp_path)
    assert ahead is not None
    results = run_jobs([_job("plain", path, "Plain")], timeout=60, cwd=tmp_path, prestarted=ahead)
    assert results["plain"]["status"] == "ok", results


def test_a_prestarted_child_that_gets_no_job_is_stopped(tmp_path):
    """No model to trace (or an error before the trace): closing it stops the supervisor and
    the child that waits for its jobs; nothing is left running."""
    from torchlint.trace.runner import prestart

    ahead = prestart(cwd=tmp_path)
    assert ahead is not None
    deadline = time.monotonic() + 60
    child = None
    while child is None and time.monotonic() < deadline:  # the supervisor says "spawned" first
        line = ahead.proc.stdout.readline()
        event = json.loads(line) if line.strip() else {}
        child = event.get("pid") if event.get("event") == "spawned" else None
    assert child is not None
    ahead.close()
    assert ahead.proc.poll() is not None
    _assert_gone([ahead.proc.pid, child])


def test_a_prestarted_child_for_another_directory_is_not_used(tmp_path):
    """``run_jobs`` uses a prestarted child only for the run it was started for (same working
    directory, memory limit, Python); otherwise it stops it and starts its own."""
    from torchlint.trace.runner import prestart

    path = _model(tmp_path / "m.py", "Plain", "pass")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ahead = prestart(cwd=elsewhere)
    assert ahead is not None
    results = run_jobs([_job("plain", path, "Plain")], timeout=60, cwd=tmp_path, prestarted=ahead)
    assert results["plain"]["status"] == "ok", results
    assert ahead.proc.poll() is not None
