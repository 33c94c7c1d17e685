"""The torch version a project pins: a project-level fact, read once per run by the run
layer (``run.Run``) from the project root and handed to the project pass
(``Project.torch_pin``).

Where it is read, first one naming torch with a version wins: ``pyproject.toml``
(``[project] dependencies``, then ``[tool.poetry.dependencies]``), ``setup.cfg``
(``[options] install_requires``), ``setup.py`` (``install_requires=`` given a list of string
literals, or a module-level name assigned one: read, never run), ``requirements.txt``, the other ``requirements*.txt`` and
``requirements/*.txt`` in name order. Two bounds are read: the upper one (whether every
version from some release on is excluded: ``<``, ``<=``, ``==`` (``.*`` too), ``~=`` and
Poetry's ``^``/``~``) and the lower one (the lowest release allowed: ``>=``, ``>``, ``==``,
``~=``, ``^``, ``~``; none: any old release). ``allows_below`` asks whether some allowed
torch is older than a release (``torch>=2.1`` allows 2.1 to 2.5). A requirement that cannot be
read (a URL, a variable, a version that is not numbers) is no pin: nothing is claimed about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from torchlint import bounded

Version = tuple[int, ...]

_NAME = re.compile(r"^\s*torch\s*(\[[^\]]*\])?\s*(?=[<>=!~^;@(]|$)", re.IGNORECASE)
_CLAUSE = re.compile(r"^(===|==|~=|<=|>=|!=|<|>|\^|~)\s*([0-9][0-9A-Za-z.*+!-]*)$")
_RELEASE = re.compile(r"^(\d+(?:\.\d+)*)")


@dataclass(frozen=True)
class TorchPin:
    """A torch requirement with a version: ``spec`` as written (``torch>=2.0,<2.6``) in
    ``file`` (relative to the project root); ``ceiling``: the lowest release it excludes
    with everything after it (None: no upper bound)."""

    file: str
    spec: str
    ceiling: Version | None
    floor: Version | None = None  # the lowest release allowed (None: no lower bound)

    def below(self, release: Version) -> bool:
        """Whether every torch this pin allows is older than ``release``."""
        return self.ceiling is not None and _padded(self.ceiling) <= _padded(release, len(self.ceiling))

    def allows_below(self, release: Version) -> bool:
        """Whether some torch this pin allows is older than ``release`` (``torch>=2.1`` and
        2.6: yes; ``torch>=2.6``: no; ``torch<3``: yes)."""
        if self.below(release):
            return True
        return self.floor is None or _padded(self.floor) < _padded(release, len(self.floor))


def _padded(version: Version, width: int = 0) -> Version:
    return version + (0,) * max(0, max(width, 3) - len(version))


def read_torch_pin(root: Path | None) -> TorchPin | None:
    """The project's torch pin (see the module's docstring), or None: no project root, no
    requirement naming torch with a version, or one that cannot be read."""
    if root is None:
        return None
    for file, requirement in _requirements(root):
        if not _NAME.match(requirement):
            continue
        spec = requirement.split(";", 1)[0].strip()
        rest = _NAME.sub("", spec, count=1).strip().strip("()")
        if not rest:
            continue  # torch without a version: the next source may pin it
        ceiling = _ceiling(rest)
        if ceiling is False:
            return None  # a torch requirement this cannot read: claim nothing
        return TorchPin(file, " ".join(spec.split()), ceiling, _floor(rest))
    return None


def _ceiling(spec: str) -> Version | None | bool:
    """The lowest release that ``spec`` (``>=2.0,<2.6``) excludes with all later ones; None
    without an upper bound; False when a clause cannot be read."""
    ceilings: list[Version] = []
    for clause in spec.split(","):
        match = _CLAUSE.match(clause.strip())
        if match is None:
            return False
        op, text = match.groups()
        release = _RELEASE.match(text)
        if release is None:
            return False
        version = tuple(int(p) for p in release.group(1).split("."))
        if op == "<":
            ceilings.append(version)
        elif op in ("<=", "==", "==="):  # ==2.5.* reads as 2.5: below 2.6 as well
            ceilings.append(_next(version, len(version)))
        elif op == "~=":
            ceilings.append(_next(version, max(1, len(version) - 1)))
        elif op == "~":  # Poetry: ~2.4 -> <2.5, ~2 -> <3
            ceilings.append(_next(version, min(2, len(version))))
        elif op == "^":  # Poetry: ^2.1 -> <3, ^0.4 -> <0.5
            nonzero = next((i for i, p in enumerate(version) if p), len(version) - 1)
            ceilings.append(_next(version, nonzero + 1))
    return min((_padded(c) for c in ceilings), default=None)


def _floor(spec: str) -> Version | None:
    """The lowest release ``spec`` (``>=2.1,<3``, read by ``_ceiling`` first) allows; None
    without a lower bound. ``>2.5`` gives 2.5: it allows 2.5.1."""
    floors: list[Version] = []
    for clause in spec.split(","):
        match = _CLAUSE.match(clause.strip())
        release = _RELEASE.match(match.group(2)) if match is not None else None
        if match is None or release is None:
            continue
        if match.group(1) in (">=", ">", "==", "===", "~=", "^", "~"):
            floors.append(_padded(tuple(int(p) for p in release.group(1).split("."))))
    return max(floors, default=None)


def _next(version: Version, width: int) -> Version:
    """The first release after every release starting with ``version[:width]``; for a full
    release (``<=2.5.1``) the smallest release after it (2.5.1.1 is ignored: 2.5.2)."""
    head = list(_padded(version, width)[:width])
    head[-1] += 1
    return tuple(head)


def _requirements(root: Path):
    """(file, requirement string) in the order the module's docstring gives."""
    yield from _pyproject(root)
    yield from _setup_cfg(root)
    yield from _setup_py(root)
    files = sorted(root.glob("requirements*.txt"), key=lambda p: (p.name != "requirements.txt", p.name))
    directory = root / "requirements"
    if directory.is_dir():
        files += sorted(directory.glob("*.txt"))
    for path in files:
        for line in _read(path, root).splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith(("#", "-")):
                yield path.relative_to(root).as_posix(), line


def _read(path: Path, root: Path) -> str:
    """The file's text; "" where it cannot be read (``bounded.read_text``: a FIFO, a device,
    a link out of the project root or a file over ``CONFIG_LIMIT`` is not read)."""
    try:
        return bounded.read_text(path, bounded.CONFIG_LIMIT, root=root, errors="replace")
    except OSError:
        return ""


def _pyproject(root: Path):
    path = root / "pyproject.toml"
    if not path.is_file():
        return
    try:
        data = bounded.loads_toml(_read(path, root))
    except bounded.ParseError:
        return
    project = data.get("project")
    dependencies = project.get("dependencies") if isinstance(project, dict) else None
    for item in dependencies if isinstance(dependencies, list) else ():
        if isinstance(item, str):
            yield "pyproject.toml", item
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    deps = poetry.get("dependencies") if isinstance(poetry, dict) else None
    if isinstance(deps, dict):
        value = deps.get("torch")
        if isinstance(value, dict):
            value = value.get("version")
        if isinstance(value, str) and value.strip() not in ("", "*"):
            yield "pyproject.toml", f"torch{value.strip()}" if value.strip()[0] in "<>=!~^" else f"torch=={value.strip()}"


def _setup_cfg(root: Path):
    path = root / "setup.cfg"
    if not path.is_file():
        return
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(path, root))
    except configparser.Error:
        return
    for line in parser.get("options", "install_requires", fallback="").splitlines():
        if line.strip():
            yield "setup.cfg", line.strip()


def _setup_py(root: Path):
    """``setup(install_requires=["torch>=2.0.0", ...])`` or ``install_requires=REQUIRED`` with
    ``REQUIRED = [...]`` at module level: the string literals, read from the parsed file (a list
    built at run time, read from another file, is not followed)."""
    path = root / "setup.py"
    if not path.is_file():
        return
    import ast

    try:
        tree = ast.parse(_read(path, root))
    except (SyntaxError, ValueError):
        return

    def strings(node) -> list[str] | None:
        if isinstance(node, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return [e.value for e in node.elts]
        return None

    named = {stmt.targets[0].id: found for stmt in tree.body
             if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
             and (found := strings(stmt.value)) is not None}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "install_requires":
                    value = keyword.value
                    items = strings(value) if not isinstance(value, ast.Name) else named.get(value.id)
                    for item in items or ():
                        yield "setup.py", item
