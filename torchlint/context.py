"""Per-file analysis state shared by every rule, filled in one walk of the tree.

LibCST's ``QualifiedNameProvider`` and ``ScopeProvider`` are exact but cost several times
the parse itself. Rules here need much less: what an imported name stands for
(``from torch import optim as o`` makes ``o.SGD`` mean ``torch.optim.SGD``), each node's
parent, and the enclosing loop, ``with``, function and class. ``FileContext`` records those
while the ``Dispatcher`` walks the tree once for all rules.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import sys
import typing
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import libcst as cst
from libcst import MaybeSentinel
from libcst.metadata import CodeRange

from torchlint.finding import Finding, Span, one_line
from torchlint.imports import ImportTable
from torchlint.positions import StatementPositions
from torchlint.errors import RuleError, describe
from torchlint.source import cpython_tree
from torchlint.statements import dotted_name

if TYPE_CHECKING:
    from torchlint.fixes import Fix
    from torchlint.rule import Rule
    from torchlint.semantic import Analyses

LOOP_TYPES = (cst.For, cst.While)
FUNCTION_TYPES = (cst.FunctionDef, cst.Lambda)
SCOPE_TYPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)


def chain_head(expr: cst.CSTNode) -> cst.CSTNode:
    """``a`` for ``a.b.c``: what an attribute chain hangs from (``expr`` itself otherwise)."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    return expr


_UNSET = object()


class FileContext:
    def __init__(self, path: str, module: cst.Module, text: str, imports: ImportTable):
        self.path = path
        self.module = module
        self.text = text
        # Dotted name of this file derived from its path ("pkg/sub/mod.py" -> "pkg.sub.mod").
        self.module_name = imports.module_name
        self.is_package = imports.is_package
        self.import_table = imports
        # local name -> qualified name, for every import in the file (any scope).
        self.imports: dict[str, str] = imports.names
        self.star_imports: list[str] = imports.star
        self.facts: dict[str, Any] = {}
        self.errors: list[RuleError] = []
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        # ``parent(node)``: the node the walk reached ``node`` from (None for the module and
        # nodes the walk skips). The dict's own ``get``: asked millions of times per corpus.
        self.parent: Callable[[cst.CSTNode], cst.CSTNode | None] = self._parents.get
        self._positions: Any = None
        # CPython's tree of ``text`` (``cpython_tree``): the engine's, when it built one.
        self.ast_tree: Any = None
        self._ast_tried = False
        self._reports: list[tuple["Rule", cst.CSTNode, str, dict | None, "Fix | None"]] = []
        # Name answers, kept until an import the walk meets changes what names mean
        # (``add_import``), and for good once it has met them all (``names_complete``).
        self._qualified: dict[cst.CSTNode | None, str | None] = {}
        self._imported: dict[cst.CSTNode | None, bool] = {}

    def release(self) -> None:
        """Forget the file's trees and analyses once its results are out. They hold reference
        cycles (rules and analyses point back at this context, scopes at their parents), so
        without this only the cycle collector frees a file's millions of nodes, traversing them
        all first (``speedups.process.collector_paused``); with it, reference counting frees them at once."""
        semantic = self.__dict__.get("_semantic")
        if semantic is not None:
            semantic.release()
        self.__dict__.clear()

    # -- names -------------------------------------------------------------------------
    def resolve_relative(self, level: int, module: str) -> str:
        return self.import_table.resolve_relative(level, module)

    def add_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if self.import_table.add_cst(node):  # an import inside a function: answers change from here
            self._qualified, self._imported = {}, {}

    def qualified_name(self, node: cst.CSTNode | None) -> str | None:
        """What a Name/Attribute chain refers to, with import aliases expanded.

        ``o.SGD`` -> ``torch.optim.SGD`` after ``from torch import optim as o``; names that
        are not imported come back as written (``self.optimizer``, ``model.eval``).
        Memoised until an import changes what names mean (``add_import``).
        """
        memo = self._qualified
        found = memo.get(node, _UNSET)
        if found is not _UNSET:
            return found
        dotted = dotted_name(node)
        if dotted is None:
            found = None
        else:
            head, dot, rest = dotted.partition(".")
            target = self.imports.get(head)
            found = dotted if target is None else f"{target}{dot}{rest}"
        memo[node] = found
        return found

    def is_imported(self, node: cst.CSTNode | None) -> bool:
        memo = self._imported
        found = memo.get(node)
        if found is not None:
            return found
        head = chain_head(node)  # without building the dotted string
        found = type(head) is cst.Name and head.value in self.imports
        memo[node] = found
        return found

    def names_complete(self) -> None:
        """For the engine, after its walk: every import of the file is in ``imports`` (the
        walk adds those inside functions), so name answers hold from here on and are kept."""
        self._qualified, self._imported = {}, {}

    @property
    def semantic(self) -> "Analyses":
        """The file's shared analyses (``torchlint.semantic``), each built on first use."""
        found = self.__dict__.get("_semantic")
        if found is None:
            from torchlint.semantic import Analyses

            found = self.__dict__["_semantic"] = Analyses(self)
        return found

    def semantic_started(self) -> bool:
        """Whether any rule asked for ``semantic`` on this file (asking builds nothing yet)."""
        return self.__dict__.get("_semantic") is not None

    # -- tree structure ----------------------------------------------------------------
    def walked_nodes(self) -> Iterable[cst.CSTNode]:
        """Every node the engine's walk reached below the module (trivia skipped), in no
        particular order: far cheaper than a walk of the tree when order does not matter."""
        return self._parents.keys()

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node_ = self._parents.get(node)
        while node_ is not None:
            yield node_
            node_ = self._parents.get(node_)

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """``container`` is an ancestor of ``node``."""
        return any(anc is container for anc in self.ancestors(node))

    def enclosing(self, node: cst.CSTNode, types: type | tuple[type, ...], stop_at_scope: bool = False) -> cst.CSTNode | None:
        """The nearest ancestor of ``types``; with ``stop_at_scope`` none beyond the enclosing
        function/class/lambda."""
        for anc in self.ancestors(node):
            if isinstance(anc, types):
                return anc
            if stop_at_scope and isinstance(anc, SCOPE_TYPES):
                return None
        return None

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return anc
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class a node's method belongs to (the class directly containing the
        enclosing function), or the class whose body holds the node."""
        for anc in self.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                return anc
        return None

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """Loops around ``node`` inside its own function (innermost first)."""
        loops = []
        for anc in self.ancestors(node):
            if isinstance(anc, LOOP_TYPES):
                loops.append(anc)
            elif isinstance(anc, SCOPE_TYPES):
                break
        return loops

    # -- positions and reports ---------------------------------------------------------
    def position(self, node: cst.CSTNode) -> CodeRange:
        """Source range of ``node`` (computed once per file, and only when needed)."""
        if self._positions is None:
            self._positions = StatementPositions(self.module, self.text, lambda: self.cpython_tree, self.parent)
        return self._positions[node]

    @property
    def cpython_tree(self) -> Any:
        """CPython's ``ast`` tree of ``text``: cheap line numbers of statements (positions,
        ``semantic.entry``). The engine's when it built one (no rule needed LibCST's tree, or
        the syntax check needed it), else parsed on first use: only files with something to
        report ask. None where CPython cannot parse the text (syntax newer than the
        interpreter, read through LibCST)."""
        if self.ast_tree is None and not self._ast_tried:
            self._ast_tried = True
            self.ast_tree = cpython_tree(self.text)
        return self.ast_tree

    def line_of(self, node: cst.CSTNode) -> int:
        return self.position(node).start.line

    def report(self, rule: "Rule", node: cst.CSTNode, message: str, *, extra: dict | None = None,
               fix: "Fix | None" = None) -> None:
        """Record a finding at ``node`` (with ``fix``); the message is put on one line (a
        quoted multi-line expression is joined with single spaces). Nothing from a rule run
        only for its shared facts (``Rule.reports`` False)."""
        if rule.reports:
            self._reports.append((rule, node, one_line(message), extra, fix))

    def span(self, node: cst.CSTNode) -> Span:
        """Where ``node`` is, as findings and facts encode it."""
        return Span.of_range(self.position(node))

    def findings(self) -> list[Finding]:
        return [Finding.at(rule, self.path, self.span(node), message, extra=extra, fix=fix)
                for rule, node, message, extra, fix in self._reports]


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
    while stack:
        node = stack.pop()
        yield node
        if not into_scopes and node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(children(node)))


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


_HOOKS: dict[type, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {}


def _hooks(kind: type) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """A rule class's ``visit_<Node>`` and ``leave_<Node>`` methods as (node name, attribute)
    pairs: looked up once per class and process (``dir`` of a rule class, per file and rule,
    was a measurable part of a run)."""
    found = _HOOKS.get(kind)
    if found is None:
        names = dir(kind)
        found = _HOOKS[kind] = (tuple((a[6:], a) for a in names if a.startswith("visit_")),
                                tuple((a[6:], a) for a in names if a.startswith("leave_")))
    return found


# How many frames a rule may spend per level of nesting of the tree. A ``RecursionError``
# in a tree shallower than the recursion limit allows at that rate is a rule recursing
# without end, not the file's depth.
FRAMES_PER_LEVEL = 50


def nesting_depth(module: cst.CSTNode) -> int:
    """The depth of LibCST's tree (iterative: asked of trees too deep to recurse over)."""
    deepest, stack = 0, [(module, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children)
    return deepest


class Dispatcher:
    """Walks the tree once, recording parents and calling every rule's ``visit_<Node>`` and
    ``leave_<Node>`` methods (LibCST naming; trivia nodes such as whitespace, commas and
    operators are not visited).

    A rule that raises is reported (``FileContext.errors``) and dropped for the rest of the
    file; the other rules go on. A ``RecursionError`` in a deeply nested file is the file's
    depth, not a rule bug: it propagates, and the engine reports the file as too deep to
    analyse. In a file shallow enough for every rule (``FRAMES_PER_LEVEL``), it is a rule
    recursing without end: reported and dropped like any other failure.
    """

    def __init__(self, ctx: FileContext, rules: list["Rule"]):
        self.ctx = ctx
        self._by_name_visit: dict[str, list] = {}
        self._by_name_leave: dict[str, list] = {}
        self._rules = rules
        self._dead: set[int] = set()
        self._entries: dict[type, tuple] = {}
        for rule in rules:
            visits, leaves = _hooks(type(rule))
            for node_name, attr in visits:
                self._by_name_visit.setdefault(node_name, []).append((rule, getattr(rule, attr)))
            for node_name, attr in leaves:
                self._by_name_leave.setdefault(node_name, []).append((rule, getattr(rule, attr)))

    def _call(self, handlers: list, node: cst.CSTNode) -> None:
        dead = self._dead
        for rule, method in handlers:
            if dead and id(rule) in dead:
                continue
            try:
                method(node)
            except RecursionError as exc:
                self._recursed(rule, exc)
            except Exception as exc:  # noqa: BLE001 - a rule bug must not end the run
                self._fail(rule, exc)

    def _recursed(self, rule: "Rule", exc: RecursionError) -> None:
        """Re-raise where the file is too deep for the rule (the engine reports the file);
        else the rule recursed without end: a rule failure."""
        if nesting_depth(self.ctx.module) * FRAMES_PER_LEVEL >= sys.getrecursionlimit():
            raise exc
        self._fail(rule, exc)

    def _fail(self, rule: "Rule", exc: BaseException) -> None:
        self._dead.add(id(rule))
        message, trace = describe(exc)
        self.ctx.errors.append(RuleError(rule.code, self.ctx.path, message, trace))
        self.ctx._reports = [r for r in self.ctx._reports if r[0] is not rule]
        self.ctx.facts.pop(rule.code, None)

    def demanded_facts(self, rule: "Rule") -> Any:
        """``rule.demanded_facts()`` after the walk (None where the rule failed on the file):
        a failure there is reported and drops the rule, as one in ``finish`` does."""
        return self._after_walk(rule, rule.demanded_facts)

    def _after_walk(self, rule: "Rule", hook: Callable[[], Any]) -> Any:
        """``hook()`` of a rule still alive after the walk; a failure is reported and drops the
        rule (None then). The walk's own handlers stay inline in ``_call``: they run per node."""
        if id(rule) in self._dead:
            return None
        try:
            return hook()
        except RecursionError as exc:
            self._recursed(rule, exc)
        except Exception as exc:  # noqa: BLE001 - a rule bug must not end the run
            self._fail(rule, exc)
        return None

    def _entry(self, kind: type, model_kinds: frozenset, model_left: frozenset) -> tuple:
        """What the walk does at a node of ``kind``, looked up once per kind: (the rules'
        visit handlers, its children function or None for a kind with no children, the
        rules' leave handlers, whether the semantic model's ``visit`` acts on the kind,
        whether its ``leave`` does, whether it is an import, whether it is a statement: only
        those can be the module-level statements the model follows)."""
        of_kind = _CHILDREN.get(kind) or _children_of_kind(kind)
        entry = self._entries[kind] = (
            self._by_name_visit.get(kind.__name__, []),
            None if of_kind is _NO_CHILDREN else of_kind,
            self._by_name_leave.get(kind.__name__, []),
            kind in model_kinds,
            kind in model_left,
            kind is cst.Import or kind is cst.ImportFrom,
            issubclass(kind, cst.BaseStatement),
        )
        return entry

    def run(self) -> None:
        ctx = self.ctx
        parents = ctx._parents
        # The semantic model, filled by this walk when a rule declares it needs it.
        model = ctx.semantic.start_model() if any(r.uses_semantic_model for r in self._rules) else None
        model_visit = model.visit if model is not None else None
        model_leave = model.leave if model is not None else None
        # The model numbers every node but acts on a few: it is called only for those.
        order, kinds, left, openers, tops = model.walk_interest() if model is not None \
            else ({}, frozenset(), frozenset(), {}, {})
        n = 0
        entries, new_entry = self._entries, self._entry
        call = self._call
        # A node to visit, or (node, its entry) to leave once its children are done.
        stack: list = [ctx.module]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            if type(node) is tuple:
                node, (_, _, leaves, _, model_leaves, _, _) = node
            else:
                kind = type(node)
                entry = entries.get(kind) or new_entry(kind, kinds, left)
                visits, of_kind, leaves, modelled, model_leaves, is_import, statement = entry
                if model_visit is not None:
                    n += 1
                    order[node] = n
                    if modelled or openers and node in openers or statement and node in tops:
                        model_visit(node, n)
                if is_import:
                    ctx.add_import(node)  # imports inside functions; idempotent for the rest
                if visits:
                    call(visits, node)
                kids = of_kind(node) if of_kind is not None else None
                if kids:
                    push((node, entry))
                    for child in reversed(kids):
                        parents[child] = node
                        push(child)
                    continue
                # a leaf (half of all nodes): left at once, without a trip through the stack
            if model_leaves and model_leave is not None:
                model_leave(node)
            if leaves:
                call(leaves, node)
        ctx.names_complete()
        if model is not None:
            ctx.semantic.finish_model()
        for rule in self._rules:
            self._after_walk(rule, rule.finish)
