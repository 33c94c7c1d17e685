"""Find where a submodule is defined (``self.fc1 = nn.Linear(...)``) with LibCST.

Given the class that owns a submodule and the attribute path from it (``["fc1"]``, or
``["features", "3"]`` for the fourth layer of ``self.features = nn.Sequential(...)``), return
the exact source range: the assignment, narrowed to the ``Sequential``/``ModuleList`` element
when the elements are written out.  Falls back to the class line.  Never imports user code.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint import bounded
from torchlint.finding import Span

_CONTAINERS = ("Sequential", "ModuleList")


@dataclass(frozen=True)
class Location:
    path: Path  # absolute
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int  # 1-based, just past the last character
    code: str = ""  # the first source line of the range, stripped

    @classmethod
    def of(cls, path: Path, span: Span, code: str = "") -> "Location":
        return cls(path.resolve(), span.line, span.column, span.end_line, span.end_column, code)

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)

    def display_path(self, cwd: Path | None = None) -> str:
        return relative_path(self.path, cwd)

    def __str__(self) -> str:
        return f"{self.display_path()}:{self.line}:{self.column}"


def relative_path(path: Path, cwd: Path | None = None) -> str:
    cwd = (cwd or Path.cwd()).resolve()
    try:
        return Path(path).resolve().relative_to(cwd).as_posix()
    except ValueError:
        try:
            return Path(os.path.relpath(Path(path).resolve(), cwd)).as_posix()
        except ValueError:  # pragma: no cover - another drive on Windows
            return Path(path).as_posix()


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime: float) -> tuple[Any, Any, list[str]] | None:
    try:
        source = bounded.read_text(path, bounded.NOTEBOOK_LIMIT)
        wrapper = MetadataWrapper(cst.parse_module(source))
    except (OSError, cst.ParserSyntaxError, RecursionError):
        return None
    return wrapper.module, wrapper.resolve(PositionProvider), source.splitlines()


def _load(path: Path) -> tuple[Any, Any, list[str]] | None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return _parse(str(path.resolve()), mtime)


def load_module(path: Path) -> tuple[Any, Any] | None:
    """The parsed module of ``path`` and its nodes' positions (cached by path and mtime);
    None when it cannot be read or parsed."""
    loaded = _load(path)
    return loaded[:2] if loaded is not None else None


def _location(path: Path, positions: Any, lines: list[str], node: Any) -> Location:
    rng = positions[node]
    code = lines[rng.start.line - 1].strip() if 0 < rng.start.line <= len(lines) else ""
    return Location.of(path, Span.of_range(rng), code)


def _classes(module: Any, qualname: str) -> list[Any]:
    """All classes named ``qualname`` (nested names: ``Outer.Inner``), in source order."""
    scopes = [module]
    for part in qualname.split("."):
        found = []
        for scope in scopes:
            body = scope.body
            stmts = body.body if isinstance(body, cst.IndentedBlock) else body
            if not isinstance(stmts, (list, tuple)):
                continue
            found.extend(s for s in stmts if isinstance(s, cst.ClassDef) and s.name.value == part)
        scopes = found
    return scopes


def find_class(path: Path, qualname: str, line: int | None = None) -> tuple[Any, Location] | None:
    loaded = _load(path)
    if loaded is None:
        return None
    module, positions, lines = loaded
    classes = _classes(module, qualname)
    if not classes:
        return None
    node = classes[-1]
    if line is not None:
        # inspect reports the decorator line; LibCST's ClassDef range starts there too.
        node = min(classes, key=lambda c: abs(positions[c].start.line - line))
    name_rng = positions[node.name]
    code = lines[name_rng.start.line - 1].strip()
    return node, Location.of(path, Span.of_range(name_rng), code)


class _Definitions(cst.CSTVisitor):
    """``self.<attr> = value`` (and add_module/register_module/setattr) in a class's methods."""

    def __init__(self, attr: str):
        self.attr = attr
        self.found: list[tuple[Any, Any]] = []  # (statement node for the range, value node)
        self.depth = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.depth += 1
        return self.depth == 1  # do not look into nested classes

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth -= 1

    def _is_self_attr(self, target: Any) -> bool:
        return (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self" and target.attr.value == self.attr)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            elts = target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]
            for e in elts:
                if isinstance(e, (cst.Element, cst.StarredElement)):
                    e = e.value
                if self._is_self_attr(e):
                    value = node.value if len(elts) == 1 else None
                    self.found.append((node, value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self._is_self_attr(node.target):
            self.found.append((node, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else (
            func.value if isinstance(func, cst.Name) else "")
        args = node.args
        if name in ("add_module", "register_module") and isinstance(func, cst.Attribute) and \
                isinstance(func.value, cst.Name) and func.value.value == "self" and len(args) >= 2:
            if _string(args[0].value) == self.attr:
                self.found.append((node, args[1].value))
        elif name == "setattr" and isinstance(func, cst.Name) and len(args) >= 3:
            if isinstance(args[0].value, cst.Name) and args[0].value.value == "self" and \
                    _string(args[1].value) == self.attr:
                self.found.append((node, args[2].value))


def _string(node: Any) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001
            return None
        return value if isinstance(value, str) else None
    return None


def _callee(node: Any) -> str:
    if isinstance(node, cst.Call):
        f = node.func
        if isinstance(f, cst.Attribute):
            return f.attr.value
        if isinstance(f, cst.Name):
            return f.value
    return ""


def _element(value: Any, index: str) -> Any:
    """The ``index``-th layer written out in ``nn.Sequential(...)``/``nn.ModuleList([...])``."""
    if not index.isdigit():
        return None
    i = int(index)
    name = _callee(value)
    if name == "Sequential":
        args = list(value.args)
        if any(a.star or a.keyword for a in args):
            if len(args) == 1 and args[0].star == "*" and isinstance(args[0].value, (cst.List, cst.Tuple)):
                elems = args[0].value.elements
                return elems[i].value if i < len(elems) and not isinstance(elems[i], cst.StarredElement) else None
            return None
        return args[i].value if i < len(args) else None
    if name == "ModuleList" and len(value.args) == 1 and isinstance(value.args[0].value, (cst.List, cst.Tuple)):
        elems = value.args[0].value.elements
        if any(isinstance(e, cst.StarredElement) for e in elems[: i + 1]):
            return None
        return elems[i].value if i < len(elems) else None
    return None


def find_definition(path: Path, class_qualname: str, attr_path: list[str],
                    class_line: int | None = None) -> Location | None:
    """Where ``self.<attr_path[0]>`` is assigned in the class (narrowed into containers)."""
    loaded = _load(path)
    if loaded is None or not attr_path:
        return None
    module, positions, lines = loaded
    found = find_class(path, class_qualname, class_line)
    if found is None:
        return None
    cls, _ = found
    visitor = _Definitions(attr_path[0])
    cls.visit(visitor)
    if not visitor.found:
        return None
    # Prefer the definition in __init__ (source order: the first one).
    stmt, value = visitor.found[0]
    node = stmt
    for index in attr_path[1:]:
        if value is None:
            break
        inner = _element(value, index)
        if inner is None:
            break
        node = value = inner
    return _location(path, positions, lines, node)


def line_location(path: Path, line: int, colno: int | None = None, end_colno: int | None = None,
                  end_line: int | None = None) -> Location:
    """A location from a traceback frame (0-based columns from Python 3.11, else the line)."""
    text = ""
    try:
        all_lines = bounded.read_text(path, bounded.NOTEBOOK_LIMIT).splitlines()
        text = all_lines[line - 1] if 0 < line <= len(all_lines) else ""
    except (OSError, UnicodeDecodeError):
        pass
    if colno is not None and end_colno is not None and (end_line in (None, line)):
        return Location(Path(path).resolve(), line, colno + 1, line, end_colno + 1, text.strip())
    stripped = text.strip()
    start = len(text) - len(text.lstrip()) + 1
    return Location(Path(path).resolve(), line, start, line, start + len(stripped), stripped)
