"""Which Python version a file's syntax needs, read off LibCST's tree.

LibCST's native parser reads the newest grammar whatever ``PartialParserConfig.python_version``
says (the setting only steers its old pure-Python parser: LibCST issue 740, PR 1229), so the
syntax a ``target-version`` allows is checked here, on the tree, one table entry per feature.
``downlevel`` rewrites those features into the oldest grammar torchlint runs on, so that
CPython's ``ast`` (imports, class facts) can be built for a file that uses syntax newer than
the running interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import libcst as cst

Version = tuple[int, int]

# ``target-version`` values, as ruff spells them.
TARGET_VERSIONS: dict[str, Version] = {f"py3{minor}": (3, minor) for minor in range(10, 15)}
# The newest grammar LibCST's native parser reads (3.14: t-strings, ``except A, B:``).
NEWEST: Version = (3, 14)


def version_name(version: Version) -> str:
    return f"py{version[0]}{version[1]}"


@dataclass(frozen=True)
class Feature:
    """One use of syntax that needs ``version`` or newer."""

    version: Version
    what: str
    node: cst.CSTNode


# -- f-strings before PEP 701 (3.12) ---------------------------------------------------------
# Before 3.12 a replacement field's expression could not contain the f-string's own quotes,
# a backslash or a comment, and a single-quoted f-string could not span lines.

def _pep701(node: cst.FormattedString, module: cst.Module) -> str | None:
    quote = node.start.lstrip("fFrRbB")  # ' " ''' or """
    for expr in _replacement_fields(node):
        code = module.code_for_node(expr.expression)
        inside = (module.code_for_node(expr.whitespace_before_expression) + code
                  + module.code_for_node(expr.whitespace_after_expression))
        if quote in code:
            return "an f-string that reuses its own quotes inside a replacement field"
        if "\\" in code:
            return "a backslash inside an f-string replacement field"
        if "#" in inside and _has_comment(expr):
            return "a comment inside an f-string replacement field"
        if len(quote) == 1 and "\n" in inside:
            return "a line break inside a single-quoted f-string's replacement field"
    if _spec_depth(node.parts) == 3:  # a fourth level is an error in 3.12 too
        return "a replacement field nested three deep in format specs"
    return None


def _spec_depth(parts: Sequence[cst.BaseFormattedStringContent]) -> int:
    """How deep replacement fields nest through format specs (``f"{a:{b}}"``: 2)."""
    return max((1 + _spec_depth(part.format_spec or ()) for part in parts
                if isinstance(part, cst.FormattedStringExpression)), default=0)


def _replacement_fields(node: cst.FormattedString) -> Iterator[cst.FormattedStringExpression]:
    """The replacement fields of an f-string, those nested in format specs included."""
    stack = list(node.parts)
    while stack:
        part = stack.pop()
        if isinstance(part, cst.FormattedStringExpression):
            yield part
            stack.extend(part.format_spec or ())


def _has_comment(node: cst.CSTNode) -> bool:
    """A comment anywhere below ``node`` (LibCST keeps comments as ``Comment`` nodes in the
    whitespace; ``CSTNode.children`` includes that whitespace)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Comment):
            return True
        stack.extend(item.children)
    return False


# -- the table: node kind -> (version, test giving what the node uses, or None) ---------------

Test = Callable[[cst.CSTNode, cst.Module], "str | None"]


def _always(what: str) -> Test:
    return lambda node, module: what


def _type_params(node: cst.CSTNode, module: cst.Module) -> str | None:
    return "type parameters (PEP 695)" if getattr(node, "type_parameters", None) is not None else None


def _default(node: cst.TypeParam, module: cst.Module) -> str | None:
    return "a type parameter default (PEP 696)" if node.default is not None else None


def _star_index(node: cst.Index, module: cst.Module) -> str | None:
    return "a starred subscript (PEP 646)" if node.star else None


def _star_annotation(node: cst.Param, module: cst.Module) -> str | None:
    annotation = node.annotation.annotation if node.annotation is not None else None
    return "a starred `*args` annotation (PEP 646)" if isinstance(annotation, cst.StarredElement) else None


def _bare_except_tuple(node: cst.CSTNode, module: cst.Module) -> str | None:
    kind = node.type if isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) else None
    if isinstance(kind, cst.Tuple) and not kind.lpar:
        return "several exception types without parentheses (PEP 758)"
    return None


FEATURES: dict[type[cst.CSTNode], list[tuple[Version, Test]]] = {
    cst.TryStar: [((3, 11), _always("`except*` (PEP 654)"))],
    cst.Index: [((3, 11), _star_index)],
    cst.Param: [((3, 11), _star_annotation)],
    cst.TypeAlias: [((3, 12), _always("a `type` statement (PEP 695)"))],
    cst.FunctionDef: [((3, 12), _type_params)],
    cst.ClassDef: [((3, 12), _type_params)],
    cst.FormattedString: [((3, 12), _pep701)],
    cst.TypeParam: [((3, 13), _default)],
    cst.TemplatedString: [((3, 14), _always("a template string (PEP 750)"))],
    cst.ExceptHandler: [((3, 14), _bare_except_tuple)],
    cst.ExceptStarHandler: [((3, 14), _bare_except_tuple)],
}


def features(module: cst.Module, newer_than: Version) -> Iterator[Feature]:
    """Every use of syntax newer than ``newer_than``, in source order."""
    from torchlint.tree import iter_nodes

    wanted = {kind: [(v, t) for v, t in tests if v > newer_than] for kind, tests in FEATURES.items()}
    for node in iter_nodes(module):
        for version, test in wanted.get(type(node), ()):
            what = test(node, module)
            if what is not None:
                yield Feature(version, what, node)


# -- downlevel: the same imports and classes in the oldest grammar ----------------------------

class _Downlevel(cst.CSTTransformer):
    """Rewrites syntax newer than 3.10 into older forms with the same imports, classes,
    bases, methods and ``self`` attributes (what the ``ast`` of a file is used for): type
    parameters dropped, ``type X = v`` as ``X = v``, ``except*`` as ``except``, f-strings and
    t-strings as ``''``, starred subscripts and annotations unstarred, exception tuples
    parenthesised. Positions are not kept."""

    def leave_TypeAlias(self, original: cst.TypeAlias, updated: cst.TypeAlias) -> cst.Assign:
        return cst.Assign(targets=[cst.AssignTarget(updated.name)], value=updated.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return updated.with_changes(type_parameters=None)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        return updated.with_changes(type_parameters=None)

    def leave_TryStar(self, original: cst.TryStar, updated: cst.TryStar) -> cst.Try:
        handlers = [cst.ExceptHandler(h.body, type=h.type, name=h.name) for h in updated.handlers]
        return cst.Try(updated.body, handlers=handlers, orelse=updated.orelse, finalbody=updated.finalbody)

    def leave_ExceptHandler(self, original: cst.ExceptHandler, updated: cst.ExceptHandler) -> cst.ExceptHandler:
        return updated.with_changes(type=_parenthesised(updated.type))

    def leave_ExceptStarHandler(self, original: cst.ExceptStarHandler, updated: cst.ExceptStarHandler) -> cst.ExceptStarHandler:
        return updated.with_changes(type=_parenthesised(updated.type))

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.SimpleString:
        return cst.SimpleString("''")

    def leave_TemplatedString(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.SimpleString:
        return cst.SimpleString("''")

    def leave_ConcatenatedString(self, original: cst.ConcatenatedString,
                                 updated: cst.ConcatenatedString) -> cst.ConcatenatedString:
        # ``f'a'''`` would become ``''''``, a string running on over what follows: a space keeps
        # the two strings apart
        between = updated.whitespace_between
        if isinstance(between, cst.SimpleWhitespace) and not between.value:
            return updated.with_changes(whitespace_between=cst.SimpleWhitespace(" "))
        return updated

    def leave_Index(self, original: cst.Index, updated: cst.Index) -> cst.Index:
        return updated.with_changes(star=None)

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        annotation = updated.annotation
        if annotation is not None and isinstance(annotation.annotation, cst.StarredElement):
            return updated.with_changes(annotation=annotation.with_changes(annotation=annotation.annotation.value))
        return updated


def _parenthesised(kind: cst.BaseExpression | None) -> cst.BaseExpression | None:
    if isinstance(kind, cst.Tuple) and not kind.lpar:
        return kind.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return kind


def downlevel(module: cst.Module) -> str:
    """``module``'s code with its newer syntax rewritten (see ``_Downlevel``)."""
    return module.visit(_Downlevel()).code
