"""Statement-level reading of a file's tree, CPython's ``ast`` or LibCST's: the few questions
the engine's file facts ask (module-level imports: ``ImportTable.scan``; classes with their
bases, methods and ``self`` attributes: ``semantic.index.class_facts``), answered once per
kind of tree so those facts are computed one way from either.

The engine reads them from CPython's tree where no rule needs LibCST's (nothing more is
parsed), and from LibCST's where one does: there the syntax check builds no ``ast`` at all
(``source.check_syntax``). Both readers give the same facts for the same text (tested on
every fixture and on the traps below: one-line bodies, ``elif`` chains, ``try``/``except*``,
``match``, ``with ... as``, starred targets, ``*bases``).
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst


# What a statement is, to these readers.
CLASS, FUNCTION, OTHER = "class", "function", "other"
# What one import statement imports: ``(None, 0, [("a.b", asname or None), ...])`` for ``import a.b
# [as c], ...``; ``(module, level, [(name, asname or None), ...])`` for ``from``, names None for ``*``.
ImportParts = tuple["str | None", int, "list[tuple[str, str | None]] | None"]


class AstStatements:
    """CPython's tree (``ast``)."""

    _FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
    # Compound statements other than defs -> the fields holding their statement lists.
    _COMPOUND: dict[type, tuple[str, ...]] = {
        ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
        ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
        ast.Try: ("body", "orelse", "finalbody"), ast.Match: ()}
    if hasattr(ast, "TryStar"):
        _COMPOUND[ast.TryStar] = _COMPOUND[ast.Try]
    # Where module-level imports are looked for: ``if``/``try``/``with`` blocks.
    _IMPORT_HOLDERS: tuple[type, ...] = (ast.If, ast.Try, ast.With) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())

    @staticmethod
    def body(node: Any) -> list:
        """The statements of a module, class or function."""
        return node.body

    @classmethod
    def kind(cls, node: Any) -> str:
        if isinstance(node, ast.ClassDef):
            return CLASS
        return FUNCTION if isinstance(node, cls._FUNCTIONS) else OTHER

    @staticmethod
    def name(node: Any) -> str:
        return node.name

    @classmethod
    def blocks(cls, node: Any) -> list[list]:
        """The statement lists directly under a compound statement (``if``/``for``/``try``/...)."""
        fields = cls._COMPOUND.get(type(node))
        if fields is None:
            return []
        out = [getattr(node, name) for name in fields]
        out += [h.body for h in getattr(node, "handlers", ())]
        out += [c.body for c in getattr(node, "cases", ())]
        return out

    @classmethod
    def import_blocks(cls, node: Any) -> list[list]:
        """The blocks of an ``if``/``try``/``with`` statement, where module-level imports count."""
        if not isinstance(node, cls._IMPORT_HOLDERS):
            return []
        return [node.body, *(h.body for h in getattr(node, "handlers", ())),
                getattr(node, "orelse", []), getattr(node, "finalbody", [])]

    @staticmethod
    def imports(node: Any) -> list[ImportParts]:
        """What a statement imports (``ImportParts``; empty for any other statement)."""
        if isinstance(node, ast.Import):
            return [(None, 0, [(a.name, a.asname) for a in node.names])]
        if isinstance(node, ast.ImportFrom):
            star = len(node.names) == 1 and node.names[0].name == "*"
            return [(node.module or "", node.level or 0, None if star else [(a.name, a.asname) for a in node.names])]
        return []

    @staticmethod
    def bases(node: Any) -> list[str | None]:
        """Each base class as written (``a.b``; ``Generic[T]`` as ``Generic``), None where it
        is not a name chain."""
        return [_ast_dotted(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]

    @staticmethod
    def first_param(node: Any) -> str | None:
        args = node.args.posonlyargs + node.args.args
        return args[0].arg if args else None

    @staticmethod
    def targets(node: Any) -> list:
        """What a statement stores to (an attribute can be stored to by nothing else, but a
        comprehension's ``for``)."""
        kind = type(node)
        if kind is ast.Assign:
            return list(node.targets)
        if kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
            return [node.target]
        if kind in (ast.With, ast.AsyncWith):
            return [item.optional_vars for item in node.items if item.optional_vars is not None]
        return []

    @staticmethod
    def unpacked(target: Any) -> list | None:
        """The targets inside a tuple, list or starred target; None for any other."""
        if isinstance(target, (ast.Tuple, ast.List)):
            return target.elts
        if isinstance(target, ast.Starred):
            return [target.value]
        return None

    @staticmethod
    def self_attribute(target: Any, me: str) -> str | None:
        """``x`` for the target ``me.x``."""
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
            return target.attr
        return None


def _ast_dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class CstStatements:
    """LibCST's tree. A one-line body (``class A: pass``, ``if c: x = 1``) is its
    ``SimpleStatementSuite``, read like a line of simple statements."""

    _SIMPLE = (cst.SimpleStatementLine, cst.SimpleStatementSuite)

    @staticmethod
    def body(node: Any) -> list:
        body = node.body
        if type(node) is cst.Module:
            return body
        return body.body if type(body) is cst.IndentedBlock else [body]

    @staticmethod
    def kind(node: Any) -> str:
        kind = type(node)
        return CLASS if kind is cst.ClassDef else FUNCTION if kind is cst.FunctionDef else OTHER

    @staticmethod
    def name(node: Any) -> str:
        return node.name.value

    @staticmethod
    def blocks(node: Any) -> list[list]:
        kind = type(node)
        if kind in CstStatements._SIMPLE:
            return []
        if kind is cst.If:
            orelse = node.orelse
            return [_suite(node.body)] + ([] if orelse is None else [[orelse]] if type(orelse) is cst.If else [_suite(orelse.body)])
        if kind is cst.For or kind is cst.While:
            return [_suite(node.body)] + ([_suite(node.orelse.body)] if node.orelse is not None else [])
        if kind is cst.With:
            return [_suite(node.body)]
        if kind is cst.Try or kind is cst.TryStar:
            out = [_suite(node.body), *(_suite(h.body) for h in node.handlers)]
            out += [_suite(part.body) for part in (node.orelse, node.finalbody) if part is not None]
            return out
        if kind is cst.Match:
            return [_suite(case.body) for case in node.cases]
        return []

    @staticmethod
    def import_blocks(node: Any) -> list[list]:
        kind = type(node)
        if kind is cst.If or kind is cst.Try or kind is cst.TryStar or kind is cst.With:
            return CstStatements.blocks(node)
        return []

    @staticmethod
    def imports(node: Any) -> list[ImportParts]:
        if type(node) not in CstStatements._SIMPLE:
            return []
        return [part for small in node.body for part in CstStatements.import_parts(small)]

    @staticmethod
    def import_parts(node: Any) -> list[ImportParts]:
        """What one ``import``/``from ... import`` (a small statement, wherever it stands) imports."""
        kind = type(node)
        if kind is cst.Import:
            return [(None, 0, [(import_dotted(a.name), _asname(a)) for a in node.names])]
        if kind is cst.ImportFrom:
            module = import_dotted(node.module) if node.module is not None else ""
            names = None if type(node.names) is cst.ImportStar else [(import_dotted(a.name), _asname(a)) for a in node.names]
            return [(module, len(node.relative), names)]
        return []

    @staticmethod
    def bases(node: Any) -> list[str | None]:
        out: list[str | None] = []
        for arg in node.bases:
            if arg.star:  # ``class A(*mixins)``
                out.append(None)
                continue
            expr = arg.value.value if type(arg.value) is cst.Subscript else arg.value
            out.append(dotted_name(expr))
        return out

    @staticmethod
    def first_param(node: Any) -> str | None:
        params = node.params
        first = params.posonly_params[0] if params.posonly_params else params.params[0] if params.params else None
        return first.name.value if first is not None else None

    @staticmethod
    def targets(node: Any) -> list:
        kind = type(node)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            out: list = []
            for small in node.body:
                small_kind = type(small)
                if small_kind is cst.Assign:
                    out.extend(t.target for t in small.targets)
                elif small_kind is cst.AnnAssign or small_kind is cst.AugAssign:
                    out.append(small.target)
            return out
        if kind is cst.For:
            return [node.target]
        if kind is cst.With:
            return [item.asname.name for item in node.items if item.asname is not None]
        return []

    @staticmethod
    def unpacked(target: Any) -> list | None:
        kind = type(target)
        if kind is cst.Tuple or kind is cst.List:
            return [element.value for element in target.elements]
        if kind is cst.StarredElement:
            return [target.value]
        return None

    @staticmethod
    def self_attribute(target: Any, me: str) -> str | None:
        if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == me:
            return target.attr.value
        return None


def _suite(block: Any) -> list:
    """The statements of an indented block, or the one-line suite itself."""
    return block.body if type(block) is cst.IndentedBlock else [block]


def dotted_name(node: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for a LibCST Name/Attribute chain, else None."""
    # ``type() is``: ``isinstance`` against LibCST's classes (ABCMeta) is slow, and this runs
    # for most calls of every rule; neither class is subclassed. A name, and ``a.b``, the
    # most asked, are built without a list.
    kind = type(node)
    if kind is cst.Name:
        return node.value  # type: ignore[union-attr]
    if kind is not cst.Attribute:
        return None
    value = node.value  # type: ignore[union-attr]
    if type(value) is cst.Name:
        return f"{value.value}.{node.attr.value}"  # type: ignore[union-attr]
    parts = [node.attr.value]  # type: ignore[union-attr]
    while type(value) is cst.Attribute:
        parts.append(value.attr.value)
        value = value.value
    if type(value) is not cst.Name:
        return None
    parts.append(value.value)
    parts.reverse()
    return ".".join(parts)


def import_dotted(node: Any) -> str:
    """``a.b.c`` for an import's Name/Attribute chain ("" for anything else)."""
    return dotted_name(node) or ""


def _asname(alias: cst.ImportAlias) -> str | None:
    asname = alias.asname
    return asname.name.value if asname is not None and type(asname.name) is cst.Name else None


Statements = type[AstStatements] | type[CstStatements]


def reader_for(tree: Any) -> Statements:
    """The reader for ``tree`` (an ``ast.Module`` or a ``cst.Module``)."""
    return CstStatements if isinstance(tree, cst.Module) else AstStatements
