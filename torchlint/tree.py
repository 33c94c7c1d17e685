"""Walking LibCST trees cheaply: children in source order without trivia, pre-order walks,
assignment targets, the names an expression reads. Used by every layer above the parse (the
engine's walk, the semantic model, the rules); imports nothing of torchlint's but
``statements.dotted_name``.

LibCST's own ``CSTNode.children``/``visit`` rebuild every node they pass: ``children`` here
writes one function per node class from its declared fields instead (``_children_function``).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from typing import Any, Callable, Iterator

import libcst as cst
from libcst import MaybeSentinel

from torchlint.statements import dotted_name


def chain_head(expr: cst.CSTNode) -> cst.CSTNode:
    """``a`` for ``a.b.c``: what an attribute chain hangs from (``expr`` itself otherwise)."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    return expr


# Tokens and whitespace: never interesting to a rule, and about half of all nodes.
TRIVIA = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
    cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Dot, cst.Colon,
    cst.AssignEqual, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp,
    cst.BaseAugOp, cst.Asynchronous, cst.ParamStar, cst.ParamSlash, cst.ImportStar,
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# What a field value's type is to the walk: 0 nothing (trivia, None, str, sentinel),
# 1 a node to visit, 2 a sequence to look into. Cached per type: ``isinstance`` against
# LibCST's abstract base classes is slow, and this runs for every field of every node.
_VALUE_KIND: dict[type, int] = {}


def _value_kind(kind: type) -> int:
    if issubclass(kind, cst.CSTNode):
        found = 0 if issubclass(kind, TRIVIA) else 1
    elif issubclass(kind, (list, tuple)):
        found = 2
    else:
        found = 0
    _VALUE_KIND[kind] = found
    return found


def _may_hold_nodes(declared: Any) -> bool:
    """Can a field declared ``declared`` hold a non-trivia node? Fields of whitespace, tokens,
    strings, flags and literals cannot, and ``children`` never reads them. When unsure: yes."""
    origin = typing.get_origin(declared)
    if origin is typing.Literal:
        return False
    if origin is not None:  # Union/Optional/Sequence[...]
        return any(_may_hold_nodes(arg) for arg in typing.get_args(declared))
    if declared in (str, bool, int, type(None), MaybeSentinel):
        return False
    if isinstance(declared, type) and issubclass(declared, TRIVIA):
        return False
    return True


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Non-trivia children of ``node``, in field order (source order for nearly every node).

    Much cheaper than ``CSTNode.children``/``visit``, which rebuild every node they pass: each
    node class gets a function of its own (``_children_function``), made on first use.
    """
    found = _CHILDREN.get(type(node))
    if found is None:
        found = _children_of_kind(type(node))
    return found(node)


def _children_of_kind(kind: type) -> Callable[[cst.CSTNode], list]:
    """The ``children`` function of the node class ``kind`` (``_children_function``), made and
    kept on first use."""
    found = _CHILDREN[kind] = _children_function(kind)
    return found


def _NO_CHILDREN(node: cst.CSTNode) -> list[cst.CSTNode]:
    return []


def children_function(kind: type) -> Callable[[cst.CSTNode], list] | None:
    """The ``children`` function of the node class ``kind`` (a walk calls it directly); None
    for a class whose nodes never have children (the walk skips them)."""
    found = _CHILDREN.get(kind) or _children_of_kind(kind)
    return None if found is _NO_CHILDREN else found


def children_checked(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``children`` by looking at every value's type: what each class's function must give."""
    names = _CHILD_FIELDS.get(type(node))
    if names is None:
        names = _CHILD_FIELDS[type(node)] = _node_fields(type(node))
    out = []
    for name in names:
        value = getattr(node, name)
        vk = _VALUE_KIND.get(type(value))
        if vk is None:
            vk = _value_kind(type(value))
        if vk == 1:
            out.append(value)
        elif vk == 2:
            out.extend(_nodes_in(value))
    return out


def _nodes_in(values) -> list[cst.CSTNode]:
    out = []
    for item in values:
        vk = _VALUE_KIND.get(type(item))
        if vk is None:
            vk = _value_kind(type(item))
        if vk == 1:
            out.append(item)
    return out


def _node_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind) if _may_hold_nodes(f.type))


_CHILDREN: dict[type, Callable[[cst.CSTNode], list]] = {}


def _children_function(kind: type) -> Callable[[cst.CSTNode], list]:
    """``children`` for the node class ``kind``, written out field by field: a field declared
    as a node class none of whose subclasses is trivia is appended as it is (an ``Optional``
    one when not None), a sequence of such nodes extended; any other field is looked at
    value by value, as ``children_checked`` does. ``_NO_CHILDREN`` (which walks can skip) for
    a class with no field that may hold a node."""
    fields = [f for f in dataclasses.fields(kind) if _may_hold_nodes(f.type)]
    if not fields:
        return _NO_CHILDREN
    lines = ["def children_of(node):", "    out = []"]
    for f in fields:
        shape = _field_shape(f.type)
        if shape == "node":
            lines.append(f"    out.append(node.{f.name})")
        elif shape == "optional":
            lines += [f"    value = node.{f.name}", "    if value is not None:", "        out.append(value)"]
        elif shape == "sequence":
            lines.append(f"    out.extend(node.{f.name})")
        else:
            lines += [f"    value = node.{f.name}", "    kind = VALUE_KIND(type(value))",
                      "    if kind is None:", "        kind = value_kind(type(value))",
                      "    if kind == 1:", "        out.append(value)",
                      "    elif kind == 2:", "        out.extend(nodes_in(value))"]
    lines.append("    return out")
    names = {"VALUE_KIND": _VALUE_KIND.get, "value_kind": _value_kind, "nodes_in": _nodes_in}
    exec("\n".join(lines) + "\n", names)  # noqa: S102 - generated above from the dataclass's own fields
    return names["children_of"]


def _field_shape(declared: Any) -> str:
    """"node", "optional" (a node or None), "sequence" (of nodes) or "mixed" for a field's declared type."""
    origin = typing.get_origin(declared)
    if origin is None:
        return "node" if _only_nodes(declared) else "mixed"
    args = typing.get_args(declared)
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2 and typing.get_origin(rest[0]) is None and _only_nodes(rest[0]):
            return "optional"
        return "mixed"
    if origin in (collections.abc.Sequence, list, tuple) and len(args) == 1:
        item = args[0]
        members = typing.get_args(item) if typing.get_origin(item) is typing.Union else (item,)
        if all(typing.get_origin(m) is None and _only_nodes(m) for m in members):
            return "sequence"
    return "mixed"


def _only_nodes(declared: Any) -> bool:
    """Every value of the class ``declared`` is a node to visit: a node class with no trivia
    class among itself and its subclasses. Kept per class: many fields of many node classes
    declare the same base (``BaseExpression`` has a hundred subclasses to look through)."""
    found = _ONLY_NODES.get(declared)
    if found is None:
        found = _ONLY_NODES[declared] = _no_trivia_below(declared)
    return found


_ONLY_NODES: dict[Any, bool] = {}


def _no_trivia_below(declared: Any) -> bool:
    if not (isinstance(declared, type) and issubclass(declared, cst.CSTNode)):
        return False
    todo = [declared]
    while todo:
        kind = todo.pop()
        if issubclass(kind, TRIVIA):
            return False
        todo.extend(kind.__subclasses__())
    return True


def iter_nodes(root: cst.CSTNode, *, into_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """Pre-order walk below ``root`` (``root`` included), trivia skipped. With
    ``into_scopes=False`` nested functions, lambdas and classes are yielded but not entered."""
    stack = [root]
    pop, extend, kids_of = stack.pop, stack.extend, _CHILDREN.get  # ``children``, inlined: a call per node
    while stack:
        node = pop()
        yield node
        if not into_scopes and node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        found = kids_of(type(node))
        if found is None:
            found = _children_of_kind(type(node))
        kids = found(node)
        if kids:
            extend(reversed(kids))


def unpack_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The single targets an assignment or ``for`` binds: ``a, (b, *c) = ...`` gives ``a``,
    ``b``, ``c`` (names, attributes or subscripts, as written)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for el in target.elements for leaf in unpack_targets(el.value)]
    if isinstance(target, cst.StarredElement):
        return unpack_targets(target.value)
    return [target]


def referenced_names(expr: cst.CSTNode) -> set[str]:
    """Every name and attribute chain read in ``expr`` (``out.logits`` gives ``out.logits``,
    ``out`` and ``logits``): generous on purpose, for rules that use it only to stay silent."""
    found = set()
    for node in iter_nodes(expr):
        if isinstance(node, (cst.Name, cst.Attribute)):
            key = dotted_name(node)
            if key is not None:
                found.add(key)
    return found


def nesting_depth(module: cst.CSTNode) -> int:
    """The depth of LibCST's tree (iterative: asked of trees too deep to recurse over)."""
    deepest, stack = 0, [(module, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children)
    return deepest


def node_text(module: cst.Module, node: cst.CSTNode, limit: int | None = None) -> str:
    """The code of ``node`` as written (``module``'s code generation), stripped; cut to
    ``limit`` characters with "..." where longer."""
    text = module.code_for_node(node).strip()
    return text if limit is None or len(text) <= limit else text[:limit - 3] + "..."
