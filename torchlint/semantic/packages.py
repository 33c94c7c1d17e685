"""Which linted files belong together: the packages of a run (issue 40, "findings depend on what
else is in the run").

Several unrelated packages linted in one run must each get the findings they get alone, so a
project-wide exemption (an attribute some file reads through another object, a forward that
returns a gradient) may only apply where its evidence reaches.

* ``Packages(project)``: files are joined when one imports the other (an import that the
  project resolves to a linted file, the way ``Project.resolve_module`` picks the nearest
  candidate, so two packages that both have a ``model.py`` stay apart, and only where Python
  would find it: under a directory above the importer or its ``src``/``lib``, so a
  ``import utils`` in a package without one does not join another package's ``utils.py``) or when they sit in the
  same directory. ``group(path)`` names the group of a file (its smallest path, stable),
  ``together(a, b)``: whether evidence in file ``a`` can concern code in file ``b``.

Uses only ``Project``'s public names (``records``, ``resolve_module``), so it is computed once
per project pass by whichever rule asks.
"""

from __future__ import annotations

import posixpath
from typing import Any


class Packages:
    """The groups of files connected by imports (or a shared directory) in one run."""

    def __init__(self, project: Any):
        self._parent: dict[str, str] = {}
        by_directory: dict[str, str] = {}
        for record in project.records:
            self._find(record.path)
            directory = posixpath.dirname(record.path)
            if directory in by_directory:
                self._union(record.path, by_directory[directory])
            else:
                by_directory[directory] = record.path
            modules: dict[str, Any] = {}  # this file's imported module names, each resolved once
            for dotted in [*record.imports.values(), *record.star_imports]:
                target = _resolved(project, dotted, record, modules)
                if target is not None:
                    self._union(record.path, target.path)

    def _find(self, path: str) -> str:
        parent = self._parent.setdefault(path, path)
        if parent != path:
            parent = self._parent[path] = self._find(parent)
        return parent

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            low, high = sorted((ra, rb))
            self._parent[high] = low

    def group(self, path: str) -> str:
        """The group of ``path`` (the smallest path in it)."""
        return self._find(path)

    def together(self, a: str, b: str) -> bool:
        """Evidence in file ``a`` can concern code in file ``b``."""
        return self._find(a) == self._find(b)


def imported_by_another(project: Any, record: Any) -> bool:
    """Some other linted file imports ``record``'s module or a name in it (resolved as
    ``Packages`` joins files: the nearest module of that name, where Python would find it)."""
    return any(other is not record and any(_resolved(project, dotted, other) is record
                                           for dotted in [*other.imports.values(), *other.star_imports])
               for other in project.records)


def _resolved(project: Any, dotted: str, importer: Any, modules: dict[str, Any] | None = None) -> Any:
    """The linted file an import names (``pkg.mod`` or a name in it, ``pkg.mod.Net``).
    ``modules``: the answers for module names already looked up from ``importer`` (filled)."""
    parts = dotted.lstrip(".").split(".")
    for end in (len(parts), len(parts) - 1):
        if end > 0:
            module = ".".join(parts[:end])
            if modules is not None and module in modules:
                found = modules[module]
            else:
                found = project.resolve_module(module, importer)
                if found is not None and (found is importer or not _importable(found.path, parts[:end], importer.path)):
                    found = None
                if modules is not None:
                    modules[module] = found
            if found is not None:
                return found
    return None


def _importable(target: str, parts: list[str], importer: str) -> bool:
    """``target`` is what Python would import as ``parts`` from ``importer``: it lies at
    ``D/<parts>.py`` (or ``D/<parts>/__init__.py``) for a directory ``D`` above the importer, or
    a ``src``/``lib`` directory in one (the roots a script or a project puts on ``sys.path``).
    A module another package of the run happens to have (its ``utils.py``, its ``model.py``) is
    not imported by a file whose own tree lacks it."""
    target = target.replace("\\", "/")
    stem = "/".join(parts)
    for suffix in (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py", f"{stem}/__init__.pyi"):
        if target == suffix or target.endswith("/" + suffix):
            base = target[: len(target) - len(suffix)].rstrip("/")
            break
    else:
        return False
    above = posixpath.dirname(importer.replace("\\", "/"))
    while True:
        if base in (above, above + "/src", above + "/lib") or (above in ("", "/", ".") and base in ("", "/", ".", "src", "lib")):
            return True
        if above in ("", "/", "."):
            return False
        above = posixpath.dirname(above)
