"""What imported names stand for: ``from torch import optim as o`` makes ``o`` mean
``torch.optim``; relative imports become absolute using the file's path-derived module name.

Module-level imports are read from CPython's ``ast`` tree (every file has one, even those no
rule needs a LibCST tree for); imports inside functions are added from LibCST nodes during
the rules' walk. Both feed the same table.
"""

from __future__ import annotations

import ast

import libcst as cst


def _cst_dotted(node: cst.CSTNode) -> str:
    """``a.b.c`` for an import's Name/Attribute chain (iterative: the chain may be long)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return ""
    parts.append(node.value)
    return ".".join(reversed(parts))


class ImportTable:
    def __init__(self, module_name: str, is_package: bool):
        self.module_name = module_name
        self.is_package = is_package
        self.names: dict[str, str] = {}  # local name -> qualified name
        self.star: list[str] = []

    def resolve_relative(self, level: int, module: str) -> str:
        package = self.module_name.split(".") if self.module_name else []
        if not self.is_package and package:
            package = package[:-1]
        if level > 1:
            package = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
        base = ".".join(package)
        if module:
            return f"{base}.{module}" if base else module
        return base

    # -- the two shapes of import ------------------------------------------------------
    # Each returns whether the table changed (the walk adds module-level imports a second time).
    def add_module(self, full: str, asname: str | None) -> bool:
        """``import a.b.c`` binds ``a``; ``import a.b.c as x`` binds ``x`` to ``a.b.c``."""
        if asname:
            return self._bind(asname, full)
        head = full.split(".")[0]
        return self._bind(head, head)

    def add_from(self, module: str, level: int, names: list[tuple[str, str | None]] | None) -> bool:
        """``from module import name [as asname], ...``; ``names=None`` for ``import *``."""
        base = self.resolve_relative(level, module) if level else module
        if names is None:
            if base in self.star:
                return False
            self.star.append(base)
            return True
        changed = False
        for name, asname in names:
            changed |= self._bind(asname or name, f"{base}.{name}" if base else name)
        return changed

    def _bind(self, name: str, qualified: str) -> bool:
        if self.names.get(name) == qualified:
            return False
        self.names[name] = qualified
        return True

    # -- adapters ----------------------------------------------------------------------
    def add_ast(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.add_module(alias.name, alias.asname)
            return
        if len(node.names) == 1 and node.names[0].name == "*":
            self.add_from(node.module or "", node.level, None)
        else:
            self.add_from(node.module or "", node.level, [(a.name, a.asname) for a in node.names])

    def scan_ast(self, body: list[ast.stmt]) -> None:
        """Module-level imports, also inside module-level if/try/with blocks.

        Iterative: a 1,000-branch ``elif`` chain is 1,000 nested ``If`` nodes."""
        stack = [iter(body)]
        while stack:
            stmt = next(stack[-1], None)
            if stmt is None:
                stack.pop()
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.add_ast(stmt)
            elif isinstance(stmt, (ast.If, ast.Try, ast.With)) or type(stmt).__name__ == "TryStar":
                blocks = [stmt.body, *(h.body for h in getattr(stmt, "handlers", ()))]
                blocks += [getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
                stack.extend(iter(block) for block in reversed(blocks))

    def add_cst(self, node: cst.Import | cst.ImportFrom) -> bool:
        """Adds a LibCST import; whether the table changed."""
        if isinstance(node, cst.Import):
            changed = False
            for alias in node.names:
                asname = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else None
                changed |= self.add_module(_cst_dotted(alias.name), asname)
            return changed
        module = _cst_dotted(node.module) if node.module is not None else ""
        if isinstance(node.names, cst.ImportStar):
            return self.add_from(module, len(node.relative), None)
        names = []
        for alias in node.names:
            asname = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else None
            names.append((_cst_dotted(alias.name), asname))
        return self.add_from(module, len(node.relative), names)
