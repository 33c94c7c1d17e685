"""Which files to lint: walk directories for ``*.py``/``*.pyi`` and notebooks (``*.ipynb``;
``extend-exclude = ["*.ipynb"]`` leaves them out), honouring ``.gitignore``
files (matched as git matches them: ``torchlint.gitignore``) and the
``exclude``/``extend-exclude`` settings.

Only regular files are linted. What discovery passes over for a reason the user should
know (a FIFO or device named ``*.py``, a symbolic link that loops or leaves the project
root, a directory it cannot read, a ``.gitignore`` line it cannot use) is returned as a
``Problem``; the command line prints each once as a warning on stderr and goes on.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from torchlint import bounded
from torchlint.errors import UsageError
from torchlint.filekinds import is_test_file  # noqa: F401  (re-exported from its old home)
from torchlint.gitignore import PatternError, Spec, compile_pattern, git_root

if TYPE_CHECKING:
    from torchlint.config import Settings

PYTHON_SUFFIXES = (".py", ".pyi")
LINTED_SUFFIXES = (*PYTHON_SUFFIXES, ".ipynb")  # what a directory walk picks up


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute, symbolic links resolved
    display: str  # relative to the working directory where possible, posix separators
    # the text to lint instead of the file's bytes (``torchlint check -``: standard input)
    data: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Problem:
    """Something discovery passed over, and why (shown as ``torchlint: warning: PATH: reason``)."""

    path: str  # as displayed: relative to the working directory where possible
    reason: str


class Discovery(NamedTuple):
    files: list[SourceFile]  # sorted by display path
    problems: list[Problem]  # in the order met, each once


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


def _normalised(path: str) -> bool:
    """Whether ``path`` is absolute and spelled as ``Path`` spells it (no ``.``, ``..``,
    doubled or trailing separator): then ``_inside`` answers as ``Path.relative_to`` does."""
    return os.path.isabs(path) and os.path.normpath(path) == path and not path.startswith("//")


def _inside(path: str, base: str) -> str | None:
    """``path`` relative to the directory ``base`` (both ``_normalised``), with posix
    separators, as ``Path(path).relative_to(base)`` gives it; None when it is not inside
    ``base`` or is ``base`` itself. A directory walk's paths are strings: this spares it a
    ``Path`` per directory entry (most of a walk's time)."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix) or len(path) == len(prefix):
        return None
    rel = path[len(prefix):]
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


# -- reading ---------------------------------------------------------------------------

def not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not linted, or None for a regular file."""
    reason = bounded.not_regular(mode)
    return None if reason is None else f"{reason}; not linted"


def read_source(path: Path, limit: int = bounded.NOTEBOOK_LIMIT) -> bytes:
    """A regular file's bytes, at most ``limit`` (``bounded.read_file``: the open cannot
    block, so a FIFO swapped in after discovery does not hang the run, and anything but a
    regular file is refused: ``/dev/zero`` is never read); ``OSError`` otherwise."""
    return bounded.read_file(path, limit)


def _inspect(path: Path, root: Path) -> tuple[Path, None] | tuple[None, str]:
    """``(real path, None)`` for a regular file or a directory, else ``(None, why it is not
    linted)``.

    ``path`` is absolute, not resolved. When it is itself a symbolic link it is followed only
    if its target lies inside ``root`` (the project root, resolved); a loop or a dangling
    link is a reason, never an exception."""
    real = Path(os.path.realpath(path))
    if os.path.islink(path) and not _within(real, root):
        return None, f"symbolic link to {real.as_posix()}, outside the project root; not followed"
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "symbolic link loop; not followed"
        if os.path.islink(path):
            return None, f"dangling symbolic link ({exc.strerror}); not linted"
        return None, f"cannot read: {exc.strerror or exc}; not linted"
    reason = None if stat.S_ISDIR(mode) else not_regular(mode)
    return (None, reason) if reason else (real, None)


def _inspect_walked(path: Path, root: Path) -> tuple[Path, None] | tuple[None, str]:
    """``_inspect`` for a file met while walking a resolved directory (its parent holds no
    symbolic link): a regular file costs one ``lstat``."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            return path, None
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}; not linted"
    return _inspect(path, root)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# -- .gitignore --------------------------------------------------------------------------

def compile_lines(lines: list[str], where: str, problems: list[Problem]) -> Spec:
    """A ``Spec`` of ``lines`` (``torchlint.gitignore``: as git matches them); a line that
    can match nothing in git (``!``, ``[z-a]``, ``[[:foo:]]``, a trailing ``\\``) is left out,
    with a problem naming ``where`` and its 1-based line number (the other lines still apply)."""
    kept = []
    for number, line in enumerate(lines, 1):
        try:
            pattern = compile_pattern(line)
        except PatternError as exc:
            problems.append(Problem(f"{where}:{number}", f"invalid pattern {line!r} ignored ({exc})"))
            continue
        if pattern is not None:
            kept.append(pattern)
    return Spec(kept)


def _gitignore(directory: Path, cwd: Path, problems: list[Problem]) -> Spec | None:
    file = directory / ".gitignore"
    try:
        lines = bounded.read_text(file, bounded.CONFIG_LIMIT, errors="replace").splitlines()
    except OSError:
        return None
    return compile_lines(lines, display_path(file, cwd), problems)


class Excluder:
    """Decides whether a path is excluded by settings or by ``.gitignore`` files.

    ``problems`` collects the ``.gitignore`` lines that could not be used."""

    def __init__(self, settings: Settings, cwd: Path | None = None):
        self.settings = settings
        self.root = settings.root
        self.cwd = cwd or Path.cwd()
        self.problems: list[Problem] = []
        self._ignores: dict[Path, Spec | None] = {}
        # directory -> the (directory, spec) pairs of the .gitignore files that apply to
        # paths in it, nearest first, up to the repository's top (computed once per directory)
        self._chains: dict[Path, list[tuple[Path, Spec]]] = {}
        # a walked directory (a string, as os.walk gives it) -> what excluded_in needs of it
        self._walked: dict[str, tuple[str | None, list[tuple[str, Spec]]]] = {}
        self._root = os.fspath(self.root)

    @cached_property
    def spec(self) -> Spec:
        """``exclude`` and ``extend-exclude``, compiled on first use (checked when read)."""
        return Spec.from_lines(list(self.settings.exclude) + list(self.settings.extend_exclude))

    @cached_property
    def include(self) -> Spec | None:
        return Spec.from_lines(self.settings.extend_include) if self.settings.extend_include else None

    def _rel(self, path: Path, base: Path, is_dir: bool) -> str | None:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            return None
        if rel == ".":
            return None
        return rel + "/" if is_dir else rel

    def _settings_rel(self, path: Path, is_dir: bool) -> str:
        rel = self._rel(path, self.root, is_dir)
        if rel is None:
            # outside the project root: match on the name alone
            rel = path.name + ("/" if is_dir else "")
        return rel

    def excluded_by_settings(self, path: Path, is_dir: bool) -> bool:
        return self.spec.match_file(self._settings_rel(path, is_dir))

    def linted_kind(self, file: Path) -> bool:
        """Whether a directory walk lints this file: Python sources and notebooks, and the
        files ``extend-include`` names."""
        if file.name.endswith(LINTED_SUFFIXES):
            return True
        return self.include is not None and self.include.match_file(self._settings_rel(file, False))

    def _gitignore_for(self, directory: Path) -> Spec | None:
        if directory not in self._ignores:
            self._ignores[directory] = _gitignore(directory, self.cwd, self.problems)
        return self._ignores[directory]

    def _top(self, directory: Path) -> Path:
        """Where ``.gitignore`` files stop applying: the repository's top, else the project
        root for a directory inside it, else the directory itself."""
        return git_root(directory) or (self.root if _within(directory, self.root) else directory)

    def _chain(self, parent: Path) -> list[tuple[Path, Spec]]:
        chain = self._chains.get(parent)
        if chain is None:
            top = self._top(parent)
            chain = []
            for directory in (parent, *parent.parents):
                spec = self._gitignore_for(directory)
                if spec is not None:
                    chain.append((directory, spec))
                if directory == top:
                    break
            self._chains[parent] = chain
        return chain

    def _git_verdict(self, path: Path, is_dir: bool) -> bool:
        """Whether the ``.gitignore`` files ignore ``path`` itself: the nearest file with a
        pattern matching it decides, and in it the last such pattern (git's precedence)."""
        for directory, spec in self._chain(path.parent):
            rel = self._rel(path, directory, False)
            verdict = spec.check(rel, is_dir) if rel is not None else None
            if verdict is not None:
                return verdict
        return False

    def ignored_by_git(self, path: Path, is_dir: bool) -> bool:
        """Whether git ignores ``path``: it, or a directory it is in (below the repository's
        top), is ignored (git never looks inside an ignored directory)."""
        if not self.settings.respect_gitignore:
            return False
        top = self._top(path.parent)
        above = [d for d in reversed(path.parents) if d == top or top in d.parents]
        return any(self._git_verdict(d, True) for d in above if d != top) or self._git_verdict(path, is_dir)

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self.excluded_by_settings(path, is_dir) or self.ignored_by_git(path, is_dir)

    # -- the same answers for a directory walk's entries, by name

    def _walk_step(self, directory: str) -> tuple[str | None, bool, list[tuple[str, Spec]]]:
        """For entries of ``directory`` (absolute, ``_normalised``): the prefix that makes a
        name relative to the settings' root (None: outside it, where a name is matched
        alone), whether the directory itself is excluded (a directory named on the command
        line inside an excluded one: everything in it is excluded, as git ignores everything
        in an ignored directory), and each applying ``.gitignore``'s spec with the prefix
        relative to its directory. Computed once per directory."""
        found = self._walked.get(directory)
        if found is None:
            rel = "" if directory == self._root else _inside(directory, self._root)
            chain = self._chain(Path(directory)) if self.settings.respect_gitignore else []
            blocked = self._blocked(directory, rel)
            found = (None if rel is None else rel + "/" if rel else "", blocked,
                     [("" if str(base) == directory else _inside(directory, str(base)) + "/", spec) for base, spec in chain])
            self._walked[directory] = found
        return found

    def _blocked(self, directory: str, rel: str | None) -> bool:
        """Whether everything in ``directory`` is excluded, as ``excluded`` decides for a
        path in it: the directory (``rel``: relative to the settings' root, "" for the root)
        or one of its directories inside the root is excluded by the settings, or one below
        the repository's top is ignored by git."""
        if rel and self.spec.match_file(rel + "/"):
            return True
        if not self.settings.respect_gitignore:
            return False
        path = Path(directory)
        top = self._top(path)
        return any(self._git_verdict(d, True) for d in (path, *path.parents) if top in d.parents)

    def excluded_in(self, directory: str, name: str, is_dir: bool) -> bool:
        """``excluded(Path(directory, name), is_dir)`` for an entry of a walked directory."""
        if not (_normalised(directory) and _normalised(self._root)):
            return self.excluded(Path(directory, name), is_dir)
        prefix, blocked, chain = self._walk_step(directory)
        if blocked or self.spec.check(name if prefix is None else prefix + name, is_dir):
            return True
        for base, spec in chain:
            verdict = spec.check(base + name, is_dir)
            if verdict is not None:
                return verdict
        return False

    def linted_name(self, directory: str, name: str) -> bool:
        """``linted_kind(Path(directory, name))`` for a file of a walked directory."""
        if name.endswith(LINTED_SUFFIXES):
            return True
        return self.include is not None and self.linted_kind(Path(directory, name))


def discover(paths: list[str], settings: Settings, cwd: Path | None = None) -> Discovery:
    """Files to lint, sorted by display path, and the problems met on the way. Explicit
    files are always linted unless ``force_exclude``; directories are walked with
    exclusions applied (symbolic links to directories met while walking are not followed,
    as git does not). Only regular files are linted; see ``_inspect`` for links."""
    cwd = (cwd or Path.cwd()).resolve()
    root = Path(os.path.realpath(settings.root))
    excluder = Excluder(settings, cwd)
    found: dict[Path, SourceFile] = {}
    problems: dict[Problem, None] = {}  # ordered, each once

    def problem(path: Path, reason: str) -> None:
        problems.setdefault(Problem(display_path(path, cwd), reason))

    here = os.fspath(cwd)
    fast = _normalised(here)

    def keep(real: Path) -> None:
        if real not in found:
            rel = _inside(os.fspath(real), here) if fast else None
            found[real] = SourceFile(real, rel if rel is not None else display_path(real, cwd))

    def unreadable(exc: OSError) -> None:
        problem(Path(exc.filename or "."), f"cannot read directory: {exc.strerror or exc}; not linted")

    for raw in paths:
        given = Path(os.path.abspath(cwd / raw))
        if not os.path.lexists(given):
            raise UsageError(f"{raw}: no such file or directory")
        real, reason = _inspect(given, root)
        if real is None:
            problem(given, reason)
            continue
        if not real.is_dir():
            if not (settings.force_exclude and excluder.excluded(real, is_dir=False)):
                keep(real)
            continue
        if settings.force_exclude and real != root and excluder.excluded(real, is_dir=True):
            continue
        for dirpath, dirnames, filenames in os.walk(real, onerror=unreadable):
            dirnames[:] = sorted(d for d in dirnames if not excluder.excluded_in(dirpath, d, is_dir=True))
            parent = None
            for name in sorted(filenames):
                if not excluder.linted_name(dirpath, name) or excluder.excluded_in(dirpath, name, is_dir=False):
                    continue
                parent = parent or Path(dirpath)
                file = parent / name
                real, reason = _inspect_walked(file, root)
                if real is None:
                    problem(file, reason)
                else:
                    keep(real)
    for p in excluder.problems:
        problems.setdefault(p)
    return Discovery(sorted(found.values(), key=lambda f: f.display), list(problems))
