from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from torchlint.cli import main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _cache_key_outside_home(tmp_path_factory):
    """The cache's signing key lives in a temporary directory, never in the user's own cache
    directory (set in the environment, so torchlint subprocesses use it too)."""
    os.environ["TORCHLINT_CACHE_KEY_FILE"] = str(tmp_path_factory.mktemp("cache-key") / "key")
    yield
    os.environ.pop("TORCHLINT_CACHE_KEY_FILE", None)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project directory, made the working directory. ``write(path, code)``."""
    monkeypatch.chdir(tmp_path)

    class Project:
        root = tmp_path

        def write(self, rel: str, text: str | bytes) -> Path:
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(textwrap.dedent(text), encoding="utf-8")
            return path

    return Project()


@pytest.fixture
def run(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""

    def _run(*args: str):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


# The suite runs with the speed-ups the command line applies (``torchlint.speedups``), unless
# TORCHLINT_NO_SPEEDUPS is set: tests/engine/test_speedups.py runs tests/engine both ways.
from torchlint import speedups  # noqa: E402

speedups.enable()
