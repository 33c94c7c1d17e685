from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchlint.cli import main

REPO = Path(__file__).resolve().parents[1]


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
