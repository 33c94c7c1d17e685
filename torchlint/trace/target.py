"""Parse and check a trace TARGET without importing anything.

``path/to/file.py:ClassName`` (also ``file.py:Outer.Inner`` or a factory function in the
file) or ``package.module:factory_function`` (imported with the working directory on
``sys.path``, in the child).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchlint.errors import UsageError

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
FORMS = "path/to/file.py:ClassName or package.module:factory_function"


@dataclass(frozen=True)
class Target:
    text: str  # as the user wrote it
    attr: str  # ClassName, factory or Outer.Inner
    file: Path | None = None  # absolute, for the file form
    module: str | None = None  # for the module form
    source: Path | None = None  # the file defining it, when it can be found without importing

    @property
    def display(self) -> str:
        return self.text

    def job_target(self) -> dict[str, Any]:
        return {"file": str(self.file) if self.file else None, "module": self.module,
                "attr": self.attr, "display": self.display}


def parse_target(text: str, cwd: Path | None = None) -> Target:
    cwd = (cwd or Path.cwd()).resolve()
    raw = text.strip()
    if ":" not in raw:
        raise UsageError(f"bad trace target {text!r}: expected {FORMS}")
    left, attr = raw.rsplit(":", 1)
    if not left or not attr:
        raise UsageError(f"bad trace target {text!r}: expected {FORMS}")
    if not _DOTTED.fullmatch(attr):
        raise UsageError(f"bad trace target {text!r}: {attr!r} is not a class or function name")
    looks_like_path = left.endswith(".py") or "/" in left or os.sep in left or (cwd / left).is_file()
    if looks_like_path:
        path = (cwd / left).resolve()
        if not path.is_file():
            raise UsageError(f"bad trace target {text!r}: {left}: no such file")
        if path.suffix != ".py":
            raise UsageError(f"bad trace target {text!r}: {left} is not a Python file")
        return Target(raw, attr, file=path, source=path)
    if not _DOTTED.fullmatch(left):
        raise UsageError(f"bad trace target {text!r}: {left!r} is neither a .py file nor a module name")
    return Target(raw, attr, module=left, source=find_module_source(left, cwd))


def find_module_source(module: str, cwd: Path) -> Path | None:
    """Where ``module`` lives, looking in cwd and sys.path, without importing anything."""
    rel = Path(*module.split("."))
    for base in [cwd, *[Path(p) for p in sys.path if p]]:
        for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            try:
                if candidate.is_file():
                    return candidate.resolve()
            except OSError:  # pragma: no cover
                continue
    return None
