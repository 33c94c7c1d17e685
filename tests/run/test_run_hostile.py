"""``torchlint run`` contains the script it runs (issue 44): the scripts of ``hostile/`` exit,
``os._exit``, fork a sleeper, hang, print 50 MB, write files, open a socket and kill their
parent; torchlint reports each and stays up, with nothing left behind."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from torchlint.cli import main

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

HOSTILE = Path(__file__).resolve().parent / "hostile"


def run(project, name: str, *options: str) -> tuple[int, str, str, float]:
    shutil.copy(HOSTILE / f"{name}.py", project.root / f"{name}.py")
    started = time.monotonic()
    code = main(["run", "--isolated", "-q", "--no-cache", "--select", "TL001", *options, f"{name}.py"])
    return code, *project.capsys.readouterr(), time.monotonic() - started


@pytest.fixture
def hostile(project, capsys):
    project.capsys = capsys
    return project


def processes_in(directory: Path) -> list[int]:
    """Processes whose working directory is ``directory`` (what the script left running)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if os.readlink(f"/proc/{name}/cwd") == str(directory):
                    found.append(int(name))
            except OSError:
                pass
    return found


def test_exit_is_the_scripts_outcome_not_torchlints(hostile):
    code, out, err, _ = run(hostile, "exit_code")
    assert code == 0 and out == ""
    assert "ran 2 optimizer step(s)" in err and "the script called exit(3)" in err


def test_os_exit_ends_the_run_and_says_so(hostile):
    code, _, err, seconds = run(hostile, "os_exit")
    assert code == 0
    assert "run: os_exit.py did not finish: the trace process exited with code 0 while running user code" in err
    assert seconds < 60


@pytest.mark.parametrize("options", [[], ["--run-args=--setsid"]])
def test_a_forked_sleeper_is_killed(hostile, options):
    code, _, err, _ = run(hostile, "fork_sleeper", *options)
    assert code == 0 and "the script finished" in err
    deadline = time.monotonic() + 5
    while processes_in(hostile.root.resolve()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(hostile.root.resolve()) == []


def test_a_hang_is_stopped_at_the_timeout(hostile):
    code, _, err, seconds = run(hostile, "hang", "--run-timeout", "3")
    assert code == 0
    assert "run: hang.py did not finish: the trace did not finish within 3 s" in err
    assert seconds < 40
    assert processes_in(hostile.root.resolve()) == []


def test_endless_output_is_not_passed_on(hostile):
    code, out, err, _ = run(hostile, "huge_output")
    assert code == 0 and len(out) + len(err) < 10_000
    assert "ran 6 optimizer step(s)" in err


def test_writes_land_in_the_temporary_directory(hostile):
    outside = Path("/tmp/torchlint-hostile-writes")
    shutil.rmtree(outside, ignore_errors=True)
    before = sorted(p.name for p in hostile.root.iterdir())
    code, _, err, _ = run(hostile, "writes_files")
    assert code == 0 and "the script finished" in err
    assert "file(s) the script wrote went to a temporary directory, removed after the run" in err
    assert sorted(p.name for p in hostile.root.iterdir()) == sorted([*before, "writes_files.py"])
    assert not outside.exists()
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("torchlint-run-*/files/tmp/torchlint-hostile-writes"))


def test_network_access_is_refused_at_its_line(hostile):
    code, _, err, _ = run(hostile, "network")
    assert code == 0
    assert "the script failed at network.py:25: Blocked: network access is refused" in err
    assert "network access refused: create_connection ('1.1.1.1', 80)" in err


def test_killing_its_parent_does_not_reach_torchlint(hostile):
    code, _, err, _ = run(hostile, "kill_parent")
    assert code == 0
    assert "run: kill_parent.py did not finish: the trace supervisor was killed by SIGKILL" in err
    deadline = time.monotonic() + 5
    while processes_in(hostile.root.resolve()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(hostile.root.resolve()) == []
