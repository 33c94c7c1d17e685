"""Hostile trees (issue 10, items 3, 5, 6, 8): FIFOs and devices named ``*.py``, symbolic
links that loop or leave the project, ``.gitignore`` lines that match nothing in git, unreadable
directories. Each is reported once as ``torchlint: warning: PATH: reason`` on stderr, the
exit code stays the findings' own, and every other file is still linted.

Every hostile file is made at test time (``os.mkfifo``, ``os.symlink``, ``os.mknod``)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.config import build_settings
from torchlint.files import discover

REPO = Path(__file__).resolve().parents[2]
BAD = "def train(:\n    pass\n"  # one TL000 finding: proof that the other files are still linted


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("torchlint: warning: ")]


@pytest.fixture
def tree(project):
    """A project (with its own pyproject.toml, so the project root is ``project.root``)
    holding one file with a finding."""
    project.write("pyproject.toml", "[tool.torchlint]\n")
    project.write("bad.py", BAD)
    return project


# -- item 3: regular files only ---------------------------------------------------------

def test_fifo_in_a_linted_directory_is_reported_and_never_opened(tree):
    os.mkfifo(tree.root / "x.py")
    # a subprocess: before the fix the run blocked forever in open()
    proc = subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--format", "concise", "."],
                          cwd=tree.root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("bad.py:1:11: TL000")
    assert _warnings(proc.stderr) == ["torchlint: warning: x.py: not a regular file (a FIFO); not linted"]


def test_fifo_named_on_the_command_line_is_reported_not_skipped_silently(tree, run):
    os.mkfifo(tree.root / "x.py")
    code, out, err = run("check", "--no-cache", "x.py", "bad.py")
    assert code == 1 and "bad.py:1:11: TL000" in out
    assert _warnings(err) == ["torchlint: warning: x.py: not a regular file (a FIFO); not linted"]


def test_only_a_fifo_exits_by_findings(tree, run):
    os.mkfifo(tree.root / "x.py")
    code, out, err = run("check", "--no-cache", "x.py")
    assert code == 0 and "All checks passed!" in out
    assert len(_warnings(err)) == 1


def test_symlink_to_dev_zero_is_never_read(tree, run):
    os.symlink("/dev/zero", tree.root / "z.py")
    os.symlink("/dev/urandom", tree.root / "u.py")
    code, out, err = run("check", "--no-cache", ".")
    assert code == 1 and "bad.py:1:11: TL000" in out
    assert _warnings(err) == [
        "torchlint: warning: u.py: symbolic link to /dev/urandom, outside the project root; not followed",
        "torchlint: warning: z.py: symbolic link to /dev/zero, outside the project root; not followed",
    ]


def test_device_node_named_py_is_reported(tree, run):
    try:
        os.mknod(tree.root / "dev.py", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # what /dev/zero is
    except (PermissionError, AttributeError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")
    code, out, err = run("check", "--no-cache", ".")
    assert code == 1 and "bad.py:1:11: TL000" in out
    assert _warnings(err) == ["torchlint: warning: dev.py: not a regular file (a character device); not linted"]


def test_read_source_refuses_what_is_not_a_regular_file(tmp_path):
    from torchlint.files import read_source

    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_source(fifo)  # returns at once: the open does not wait for a writer
    with pytest.raises(OSError, match="character device"):
        read_source(Path("/dev/zero"))
    (tmp_path / "ok.py").write_bytes(b"x = 1\n")
    assert read_source(tmp_path / "ok.py") == b"x = 1\n"


# -- item 5: symbolic links ---------------------------------------------------------------

def test_symlink_leaving_the_project_is_not_followed_and_its_contents_never_shown(tmp_path, monkeypatch, capsys):
    from torchlint.cli import main

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOP_SECRET = (\n", encoding="utf-8")  # would be TL000 with a frame
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.torchlint]\n", encoding="utf-8")
    (proj / "bad.py").write_text(BAD, encoding="utf-8")
    os.symlink(outside / "secret.py", proj / "leak.py")
    monkeypatch.chdir(proj)
    for args in (["."], ["leak.py", "bad.py"]):
        code = main(["check", "--no-cache", *args])
        out, err = capsys.readouterr()
        assert code == 1
        assert "TOP_SECRET" not in out + err
        assert _warnings(err) == [f"torchlint: warning: leak.py: symbolic link to {(outside / 'secret.py').as_posix()}, "
                                  "outside the project root; not followed"]


def test_symlink_loops_are_reported_never_an_internal_error(tree, run):
    os.symlink("loop.py", tree.root / "loop.py")
    os.symlink("b.py", tree.root / "a.py")
    os.symlink("a.py", tree.root / "b.py")
    tree.write("pyproject.toml", '[tool.torchlint]\nper-file-ignores = {"tests/*" = ["TL001"]}\n')
    for args, loops in ((["."], ["a.py", "b.py", "loop.py"]), (["loop.py", "a.py", "bad.py"], ["a.py", "loop.py"])):
        code, out, err = run("check", "--no-cache", *args)
        assert code == 1, err
        assert "bad.py:1:11: TL000" in out
        assert "internal error" not in err
        assert sorted(_warnings(err)) == [f"torchlint: warning: {name}: symbolic link loop; not followed"
                                          for name in loops]


def test_suppressor_survives_a_loop_in_a_finding_path(tmp_path):
    from torchlint.run import Suppressor

    os.symlink("loop", tmp_path / "loop")
    settings = build_settings(None, root=tmp_path)
    settings.per_file_ignores = {"x/*": frozenset({"TL001"})}
    assert Suppressor(settings, {}, tmp_path)._relative("loop/x.py") == "loop/x.py"


def test_symlinks_inside_the_project_keep_working(tree, run):
    tree.write("pkg/real.py", BAD)
    os.symlink("pkg/real.py", tree.root / "alias.py")
    os.symlink("pkg", tree.root / "linked_pkg")
    code, out, err = run("check", "--no-cache", "--format", "concise", "alias.py", "linked_pkg", "bad.py")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["bad.py", "pkg/real.py"]
    assert _warnings(err) == []


# -- item 6: .gitignore lines that match nothing in git-------------------------------------------

def test_invalid_gitignore_lines_are_skipped_with_file_and_line(tree, run):
    tree.write(".gitignore", "!\n[z-a]\nignored.py\nfoo\\\n")
    tree.write("sub/.gitignore", "\\\n")
    tree.write("ignored.py", BAD)
    tree.write("sub/bad.py", BAD)
    code, out, err = run("check", "--no-cache", "--format", "concise", ".")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["bad.py", "sub/bad.py"]  # ignored.py still ignored
    assert [w.split(": invalid pattern")[0] for w in _warnings(err)] == [
        "torchlint: warning: .gitignore:1", "torchlint: warning: .gitignore:2", "torchlint: warning: .gitignore:4",
        "torchlint: warning: sub/.gitignore:1",
    ]
    assert "invalid pattern '[z-a]' ignored" in err


# -- item 8: unreadable directories ----------------------------------------------------------

def test_unreadable_directory_is_reported(tree, run, monkeypatch):
    """Simulated (tests may run as root, where mode 000 does not block reads): ``os.walk``
    meets the same ``PermissionError`` from ``scandir`` a real unreadable directory gives."""
    tree.write("locked/x.py", BAD)
    locked = str(tree.root.resolve() / "locked")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run("check", "--no-cache", ".")
    assert code == 1 and "bad.py:1:11: TL000" in out and "locked/x.py" not in out
    assert _warnings(err) == ["torchlint: warning: locked: cannot read directory: Permission denied; not linted"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="running as root: mode 000 does not stop root reading a directory")
def test_unreadable_directory_is_reported_for_real(tree, run):
    tree.write("locked/x.py", BAD)
    os.chmod(tree.root / "locked", 0)
    try:
        code, out, err = run("check", "--no-cache", ".")
    finally:
        os.chmod(tree.root / "locked", 0o755)
    assert code == 1
    assert _warnings(err) == ["torchlint: warning: locked: cannot read directory: Permission denied; not linted"]


def test_discover_returns_files_and_problems(tree):
    os.mkfifo(tree.root / "x.py")
    settings = build_settings(None, root=tree.root)
    files, problems = discover(["."], settings, tree.root)
    assert [f.display for f in files] == ["bad.py"]
    assert [(p.path, p.reason) for p in problems] == [("x.py", "not a regular file (a FIFO); not linted")]


def test_a_fifo_swapped_in_after_linting_never_blocks_the_report(tmp_path):
    """Code frames read a finding's file again: that read cannot block on a FIFO."""
    import threading

    from torchlint.reading import file_lines

    os.mkfifo(tmp_path / "train.py")
    result: list = []
    reader = threading.Thread(target=lambda: result.append(file_lines(tmp_path)("train.py")), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading the file for a code frame blocked on a FIFO"
    assert result == [None]
