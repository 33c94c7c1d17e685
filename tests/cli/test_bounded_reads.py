"""Every file torchlint reads goes through one bounded reader (``torchlint.bounded``): regular
files only, opened without blocking, a size cap, no links out of the project; JSON and TOML
errors (an integer of thousands of digits, nesting) are one clean line naming the file.
Standard input is bounded too. Every hostile file is made at test time."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint import bounded

REPO = Path(__file__).resolve().parents[2]
LOAD = 'import torch\nstate = torch.load("model.pt")\n'  # TL016 reads the project's torch pin
HUGE = "9" * 5000


def _subprocess_check(cwd: Path, *args: str, stdin=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", *args], cwd=cwd,
                          stdin=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


# -- the reader itself ---------------------------------------------------------------------

def test_read_file_refuses_what_it_must_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(bounded.ReadError, match=r"^not a regular file \(a FIFO\)$"):
        bounded.read_file(tmp_path / "fifo", 100)  # returns at once: the open does not wait for a writer
    with pytest.raises(bounded.ReadError, match="character device"):
        bounded.read_file("/dev/zero", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(bounded.TooLarge, match=r"too large to read \(101 bytes; the limit is 100 bytes\)"):
        bounded.read_file(tmp_path / "big", 100)
    assert bounded.read_file(tmp_path / "big", 101) == b"x" * 101
    root = tmp_path / "project"
    root.mkdir()
    (root / "inside").write_text("ok")
    (root / "out").symlink_to(tmp_path / "big")
    with pytest.raises(bounded.ReadError, match="outside the project root"):
        bounded.read_file(root / "out", 1000, root=root)
    assert bounded.read_file(root / "inside", 10, root=root) == b"ok"


def test_read_stream_stops_at_its_limit_and_names_a_closed_stream():
    class Endless(io.RawIOBase):
        served = 0

        def readinto(self, buffer):
            buffer[:] = b"x" * len(buffer)
            self.served += len(buffer)
            return len(buffer)

    endless = Endless()
    with pytest.raises(bounded.TooLarge):
        bounded.read_stream(endless, 3 << 20)
    assert endless.served <= (3 << 20) + 1  # never more than the limit is held
    closed = io.BytesIO(b"x")
    closed.close()
    with pytest.raises(bounded.ReadError, match="cannot read"):
        bounded.read_stream(closed, 10)
    assert bounded.read_stream(io.BytesIO(b"abc"), 3) == b"abc"


def test_json_and_toml_errors_are_one_line():
    assert bounded.loads_json('{"n": %s}' % HUGE)["n"] == float("inf")
    with pytest.raises(bounded.ParseError, match="nested too deeply"):
        bounded.loads_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(bounded.ParseError, match="an integer of more than 4,300 digits"):
        bounded.loads_toml(f"x = {HUGE}\n")
    with pytest.raises(bounded.ParseError, match="invalid TOML"):
        bounded.loads_toml("x = [" * 10_000)


# -- requirements*.txt, setup.cfg, pyproject.toml: the torch pin ----------------------------

@pytest.fixture
def pinned(project):
    """TL016 reports the load only under the pin in requirements-dev.txt, read after
    requirements.txt: the finding shows the run read past the hostile file."""
    project.write("pyproject.toml", "[tool.torchlint]\nselect = [\"TL016\"]\n")
    project.write("load.py", LOAD)
    project.write("requirements-dev.txt", "torch<2.4\n")
    return project


def test_a_fifo_requirements_txt_never_hangs_the_run(pinned):
    os.mkfifo(pinned.root / "requirements.txt")
    proc = _subprocess_check(pinned.root, ".", timeout=60)  # before: blocked forever in open()
    assert proc.returncode == 1 and "TL016" in proc.stdout, proc.stderr


def test_a_requirements_txt_linked_to_dev_zero_is_never_read(pinned):
    (pinned.root / "requirements.txt").symlink_to("/dev/zero")
    (pinned.root / "requirements-a.txt").symlink_to("/dev/zero")
    # before: it grew to all memory ("internal error: MemoryError" under a cap)
    proc = subprocess.run(["bash", "-c", f"ulimit -v 3000000; exec {sys.executable} -m torchlint check --no-cache ."],
                          cwd=pinned.root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "TL016" in proc.stdout and "internal error" not in proc.stderr, proc.stderr


def test_requirements_outside_the_project_root_are_not_followed(pinned, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "requirements.txt"
    elsewhere.write_text("torch<2.0\n")  # would make TL016 silent (no torch with the unsafe default)
    (pinned.root / "requirements.txt").symlink_to(elsewhere)
    (pinned.root / "requirements-dev.txt").unlink()
    from torchlint.pins import read_torch_pin

    assert read_torch_pin(pinned.root) is None
    (pinned.root / "requirements.txt").unlink()
    (pinned.root / "requirements.txt").write_text("torch<2.0\n")
    assert read_torch_pin(pinned.root) is not None


def test_a_huge_integer_in_the_pins_pyproject_is_no_pin(tmp_path):
    from torchlint.pins import read_torch_pin

    (tmp_path / "pyproject.toml").write_text(f'[project]\ndependencies = ["torch<2.0"]\nx = {HUGE}\n')
    assert read_torch_pin(tmp_path) is None


# -- configuration and baseline files ------------------------------------------------------

def test_a_huge_integer_in_pyproject_is_a_configuration_error_naming_the_file(project, run):
    project.write("pyproject.toml", f"[tool.torchlint]\nx = {HUGE}\n")
    project.write("a.py", "x = 1\n")
    code, out, err = run("check", "a.py")
    assert code == 2 and out == ""
    assert err == (f"torchlint: error: {project.root / 'pyproject.toml'}: invalid TOML: an integer of more than "
                   "4,300 digits\n")


def test_a_huge_integer_in_a_baseline_is_a_clear_error(project, run):
    project.write("a.py", "x = 1\n")
    project.write("b.json", '{"torchlint-baseline": %s, "findings": []}' % HUGE)
    code, _, err = run("check", "--no-cache", "--baseline", "b.json", "a.py")
    assert code == 2 and err == "torchlint: error: --baseline b.json: unsupported baseline version inf " \
                                "(this torchlint reads version 1; rewrite it with --write-baseline)\n"


def test_a_fifo_configuration_file_is_passed_over_not_a_hang(project):
    project.write("a.py", "x = 1\n")
    os.mkfifo(project.root / "torchlint.toml")
    os.mkfifo(project.root / "pyproject.toml")
    proc = _subprocess_check(project.root, "a.py", timeout=60)
    assert proc.returncode == 0 and proc.stdout == "All checks passed! Checked 1 file.\n", proc.stderr


def test_a_fifo_baseline_is_an_error_not_a_hang(project):
    project.write("a.py", "x = 1\n")
    os.mkfifo(project.root / "b.json")
    proc = _subprocess_check(project.root, "--baseline", "b.json", "a.py", timeout=60)
    assert proc.returncode == 2 and "--baseline b.json: not a torchlint baseline (not a regular file (a FIFO))" \
        in proc.stderr, proc.stderr


# -- standard input ------------------------------------------------------------------------

def test_endless_standard_input_is_refused_at_the_limit(project):
    producer = subprocess.Popen(["yes", "x = 1"], stdout=subprocess.PIPE)
    try:  # before: grew to 5.4 GB, then "internal error: MemoryError"
        proc = _subprocess_check(project.root, "-", stdin=producer.stdout, timeout=120)
    finally:
        producer.kill()
        producer.wait()
    assert proc.returncode == 2
    assert proc.stderr == "torchlint: error: - (standard input): more than 67,108,864 bytes; not linted\n"


def test_a_closed_standard_input_is_one_line(project):
    proc = subprocess.run(f"exec {sys.executable} -m torchlint check --no-cache - <&-", shell=True, cwd=project.root,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    # before: "internal error: OSError: Bad file descriptor"
    assert proc.returncode == 2
    assert proc.stderr == "torchlint: error: - (standard input): there is no standard input (it is closed)\n"


def test_a_notebook_on_standard_input_with_a_surrogate_and_a_huge_integer(project):
    import json

    document = {"cells": [{"cell_type": "code", "source": ["import torch\n"], "metadata": {}, "outputs": [],
                           "execution_count": None},
                          {"cell_type": "code", "source": ["x = '\udc80'\n"], "metadata": {}, "outputs": [],
                           "execution_count": None}],
                "metadata": {"n": 0}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(document).replace('"n": 0', f'"n": {HUGE}')
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--format", "concise",
                           "--stdin-filename", "nb.ipynb", "-"], input=text, cwd=project.root, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "internal error" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("nb.ipynb:cell 2:line 1:6: TL000 [syntax-error] cannot read cell: a lone surrogate")
