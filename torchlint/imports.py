"""What imported names stand for: ``from torch import optim as o`` makes ``o`` mean
``torch.optim``; relative imports become absolute using the file's path-derived module name.

Module-level imports are read from the file's tree before any rule runs (``scan``: CPython's
``ast`` where no rule needs LibCST's, else LibCST's); imports inside functions are added from
LibCST nodes during the rules' walk. Both feed the same table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.statements import CstStatements, reader_for

if TYPE_CHECKING:
    import ast

    from torchlint.statements import ImportParts


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
    def add_parts(self, parts: "list[ImportParts]") -> bool:
        """Adds what an import statement imports (``statements.ImportParts``); whether the
        table changed."""
        changed = False
        for module, level, names in parts:
            if module is None:
                for full, asname in names or ():
                    changed |= self.add_module(full, asname)
            else:
                changed |= self.add_from(module, level, names)
        return changed

    def scan(self, tree: "ast.Module | cst.Module") -> None:
        """Module-level imports, also inside module-level if/try/with blocks, of either tree
        (``torchlint.statements``). Iterative: a 1,000-branch ``elif`` chain is 1,000 nested ``If``
        nodes."""
        reader = reader_for(tree)
        stack = [iter(reader.body(tree))]
        while stack:
            stmt = next(stack[-1], None)
            if stmt is None:
                stack.pop()
                continue
            parts = reader.imports(stmt)
            if parts:
                self.add_parts(parts)
            else:
                stack.extend(iter(block) for block in reversed(reader.import_blocks(stmt)))

    def add_cst(self, node: cst.Import | cst.ImportFrom) -> bool:
        """Adds a LibCST import (a small statement, wherever it stands); whether the table changed."""
        return self.add_parts(CstStatements.import_parts(node))
