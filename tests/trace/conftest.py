from __future__ import annotations

import pytest

from trace_helpers import REPO


@pytest.fixture
def in_repo(monkeypatch):
    """Run with the repository root as the working directory (paths in output are relative)."""
    monkeypatch.chdir(REPO)
    return REPO
