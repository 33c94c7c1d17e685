"""Which files to lint: walk directories for ``*.py``/``*.pyi``, honouring ``.gitignore``
files (via ``pathspec``) and the ``exclude``/``extend-exclude`` settings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from torchlint.config import Settings
from torchlint.errors import UsageError

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    display: str  # relative to the working directory where possible, posix separators


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


def _gitignore(directory: Path) -> pathspec.PathSpec | None:
    file = directory / ".gitignore"
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _git_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


class Excluder:
    """Decides whether a path is excluded by settings or by ``.gitignore`` files."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = settings.root
        self.spec = pathspec.GitIgnoreSpec.from_lines(list(settings.exclude) + list(settings.extend_exclude))
        self._ignores: dict[Path, pathspec.PathSpec | None] = {}
        # directory -> the (directory, spec) pairs of the .gitignore files that apply to
        # paths in it, nearest first, up to the repository's top (computed once per directory)
        self._chains: dict[Path, list[tuple[Path, pathspec.PathSpec]]] = {}

    def _rel(self, path: Path, base: Path, is_dir: bool) -> str | None:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            return None
        if rel == ".":
            return None
        return rel + "/" if is_dir else rel

    def excluded_by_settings(self, path: Path, is_dir: bool) -> bool:
        rel = self._rel(path, self.root, is_dir)
        if rel is None:
            # outside the project root: match on the name alone
            rel = path.name + ("/" if is_dir else "")
        return self.spec.match_file(rel)

    def _gitignore_for(self, directory: Path) -> pathspec.PathSpec | None:
        if directory not in self._ignores:
            self._ignores[directory] = _gitignore(directory)
        return self._ignores[directory]

    def _chain(self, parent: Path) -> list[tuple[Path, pathspec.PathSpec]]:
        chain = self._chains.get(parent)
        if chain is None:
            top = _git_root(parent) or parent
            chain = []
            for directory in (parent, *parent.parents):
                spec = self._gitignore_for(directory)
                if spec is not None:
                    chain.append((directory, spec))
                if directory == top:
                    break
            self._chains[parent] = chain
        return chain

    def ignored_by_git(self, path: Path, is_dir: bool) -> bool:
        if not self.settings.respect_gitignore:
            return False
        for directory, spec in self._chain(path.parent):
            rel = self._rel(path, directory, is_dir)
            if rel is not None and spec.match_file(rel):
                return True
        return False

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self.excluded_by_settings(path, is_dir) or self.ignored_by_git(path, is_dir)


def discover(paths: list[str], settings: Settings, cwd: Path | None = None) -> list[SourceFile]:
    """Files to lint, sorted by display path. Explicit files are always linted unless
    ``force_exclude``; directories are walked with exclusions applied."""
    cwd = (cwd or Path.cwd()).resolve()
    excluder = Excluder(settings)
    found: dict[Path, SourceFile] = {}
    for raw in paths:
        path = (cwd / raw).resolve() if not os.path.isabs(raw) else Path(raw).resolve()
        if not path.exists():
            raise UsageError(f"{raw}: no such file or directory")
        if path.is_file():
            if settings.force_exclude and excluder.excluded(path, is_dir=False):
                continue
            found[path] = SourceFile(path, display_path(path, cwd))
            continue
        if settings.force_exclude and path != settings.root and excluder.excluded(path, is_dir=True):
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not excluder.excluded(here / d, is_dir=True))
            for name in sorted(filenames):
                if not name.endswith(PYTHON_SUFFIXES):
                    continue
                file = here / name
                if excluder.excluded(file, is_dir=False):
                    continue
                found[file] = SourceFile(file, display_path(file, cwd))
    return sorted(found.values(), key=lambda f: f.display)


TEST_DIRS = {"tests", "test", "testing", "test_utils"}


def is_test_file(path: str) -> bool:
    """Under ``tests/``, ``test/``, ``testing/`` or ``test_utils/``, or named ``test_*.py``,
    ``*_test.py``, ``conftest.py``: what rules with a ``skip-tests`` option leave alone."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (any(p in TEST_DIRS for p in parts[:-1]) or name.startswith("test_") or name.endswith("_test.py")
            or name == "conftest.py")
