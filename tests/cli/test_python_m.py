"""``python -m torchlint`` runs no module from the working directory: Python's own start-up
(``runpy``) imports ``importlib.machinery``, ``contextlib``, ``functools``... before any
torchlint code runs, and would import them from the project being linted. The installed
``torchlint-precedence.pth`` guard (``packaging/_torchlint_precedence.py``) gives exactly that
process ``python -P`` semantics; no other process gets a finder."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

STDLIB_NAMES = ["functools", "contextlib", "collections", "keyword", "operator", "reprlib", "types", "warnings",
                "importlib", "runpy", "os", "json", "libcst"]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("_torchlint_precedence") is None,
                                reason="the guard is installed with the package (pip install .)")


def _python_m(cwd, *args, env_extra=None, flags=()):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}  # as a user runs it
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *flags, "-m", "torchlint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("flags", [(), ("-X", "utf8"), ("-Wignore",), ("-I",)])
def test_no_module_in_the_working_directory_is_executed(tmp_path, flags):
    for name in STDLIB_NAMES:
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('executed ./{name}.py')\n")
    (tmp_path / "model.py").write_text("import torch\n")
    proc = _python_m(tmp_path, "check", "--no-cache", "model.py", flags=flags)
    assert "executed" not in proc.stdout + proc.stderr
    assert proc.returncode == 0 and proc.stdout == "All checks passed! Checked 1 file.\n", proc.stderr


def test_a_torchlint_package_in_the_project_is_not_preferred(tmp_path):
    (tmp_path / "torchlint").mkdir()
    (tmp_path / "torchlint" / "__init__.py").write_text("raise SystemExit('the project torchlint/ ran')\n")
    (tmp_path / "torchlint" / "__main__.py").write_text("raise SystemExit('the project torchlint/ ran')\n")
    (tmp_path / "torchlint.py").write_text("raise SystemExit('./torchlint.py ran')\n")
    proc = _python_m(tmp_path, "--version")
    assert "ran" not in proc.stdout + proc.stderr and proc.stdout.startswith("torchlint "), proc.stderr


def test_asking_for_the_working_directory_still_works(tmp_path):
    """``PYTHONPATH=.`` names it on purpose: that entry is the user's and stays."""
    (tmp_path / "torchlint").mkdir()
    (tmp_path / "torchlint" / "__init__.py").write_text("")
    (tmp_path / "torchlint" / "__main__.py").write_text("print('the project torchlint/ ran')\n")
    proc = _python_m(tmp_path, env_extra={"PYTHONPATH": str(tmp_path)})
    assert proc.stdout == "the project torchlint/ ran\n"


def test_other_processes_get_no_finder(tmp_path):
    code = "import sys; print([type(f).__name__ if not isinstance(f, type) else f.__name__ for f in sys.meta_path])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "DropWorkingDirectory" not in proc.stdout and proc.returncode == 0


def test_the_command_line_parser():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "packaging"))
    try:
        from _torchlint_precedence import started_module
    finally:
        sys.path.pop(0)
    assert started_module(["py", "-m", "torchlint", "check"]) == "torchlint"
    assert started_module(["py", "-Im", "torchlint"]) == "torchlint"
    assert started_module(["py", "-mtorchlint.cli"]) == "torchlint.cli"
    assert started_module(["py", "-X", "dev", "-W", "error", "-bb", "-m", "torchlint"]) == "torchlint"
    assert started_module(["py", "--check-hash-based-pycs", "always", "-m", "torchlint"]) == "torchlint"
    assert started_module(["py", "-c", "x", "-m", "torchlint"]) is None
    assert started_module(["py", "script.py", "-m", "torchlint"]) is None
    assert started_module(["py", "-", "-m", "torchlint"]) is None
    assert started_module(["py"]) is None
