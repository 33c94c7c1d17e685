"""The per-file semantic model: scopes, bindings, call sites, loops and classes.

Built by ONE iterative pass over the LibCST tree (explicit stack, no recursion), the first
time a rule asks for it (``ctx.semantic``), and shared by every rule of the file. Nothing
here knows about PyTorch: that is ``torchlint.semantic.training``.

Ordering: every node visited gets an ``order`` (pre-order position), so "before" is a
comparison of integers. Queries that take an arbitrary node (``scope_of``,
``reaching``, ``qualified_name``) use the parent links the engine's walk records, so ask
them from ``finish()`` (or any time after the walk); the model itself can be built at any
moment.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from torchlint.statements import dotted_name
from torchlint.torch_api import expr_key
from torchlint.tree import children, unpack_targets

if TYPE_CHECKING:
    from torchlint.context import FileContext

MODULE, CLASS, FUNCTION, LAMBDA, COMPREHENSION = "module", "class", "function", "lambda", "comprehension"
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Nodes whose body may not run (or run several times): a binding under one is conditional.
_BRANCHES = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match, cst.ExceptHandler,
             cst.ExceptStarHandler, cst.Else, cst.Finally)
_LOOPS = (cst.For, cst.While)
# The same as exact types: the walk tests every node, and ``isinstance`` against LibCST's
# classes (ABCMeta) is slow; none of these is subclassed.
_BRANCH_TYPES, _LOOP_TYPES = frozenset(_BRANCHES), frozenset(_LOOPS)
_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, *_COMPREHENSIONS})
_BINDING_TYPES = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.WithItem,
                            cst.NamedExpr, cst.ExceptHandler, cst.Del, cst.Global, cst.Nonlocal, cst.Import,
                            cst.ImportFrom})
# The node types ``visit``/``leave`` do more for than numbering (a third of all nodes are Names).
_VISITED = frozenset({cst.Call, cst.Attribute, cst.Return, cst.IfExp, *_SCOPE_TYPES, *_BINDING_TYPES, *_BRANCH_TYPES})
# Of those, the ones ``leave`` undoes something for (a branch, a loop, a scope).
_LEFT = frozenset({*_SCOPE_TYPES, *_BRANCH_TYPES})


@dataclass(eq=False)
class Binding:
    """One place a key (``x``, ``self.opt``, ``d["k"]``) is bound, in source order."""

    key: str
    node: cst.CSTNode  # the statement (Assign, For, FunctionDef, Param, ImportAlias, ...)
    kind: str  # import|assign|unpack|ann|aug|for|with|walrus|comp|except|param|def|class|del
    value: cst.BaseExpression | None
    order: int
    scope: "Scope"
    branches: tuple  # enclosing If/For/While/Try/... inside the scope, outermost first
    qualified: str | None = None  # for imports: what the name stands for

    @property
    def conditional(self) -> bool:
        return bool(self.branches)


@dataclass(eq=False)
class Loop:
    node: cst.For | cst.While
    scope: "Scope"
    outer: "Loop | None"  # the enclosing loop in the same scope
    order: int
    top: int  # index of the module-level statement holding it

    def within(self, outer: "Loop") -> bool:
        """This loop is nested (at any depth, same scope) in ``outer``."""
        current = self.outer
        while current is not None and current is not outer:
            current = current.outer
        return current is outer


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    scope: "Scope"
    order: int
    loops: tuple  # Loops around the call in its own scope, outermost first
    all_loops: tuple  # Loops around the call across enclosing scopes, outermost first
    top: int  # index of the module-level statement holding it

    @property
    def callee(self) -> str | None:
        """The callee as written (``f``, ``self.step``, ``torch.optim.SGD``)."""
        return dotted_name(self.node.func)


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    qualname: str  # ``Outer.Inner`` for nested classes
    scope: "Scope"  # the class body's scope
    bases: list = field(default_factory=list)  # qualified names (imports expanded), as written otherwise
    methods: dict = field(default_factory=dict)  # name -> FunctionDef (last definition)
    self_assigned: dict = field(default_factory=dict)  # attr -> [target nodes], from methods
    self_read: set = field(default_factory=set)  # attrs read through ``self`` in methods
    self_sites: list = field(default_factory=list)  # (Attribute, Scope) of every ``self.<attr>``, stores too, in order
    local_bases: list = field(default_factory=list)  # ClassInfo of same-file bases (resolved)


@dataclass(eq=False)
class Scope:
    kind: str
    node: cst.CSTNode
    parent: "Scope | None"
    order: int
    bindings: dict = field(default_factory=dict)  # key -> [Binding] in source order
    calls: list = field(default_factory=list)  # CallSites directly in this scope
    loops: list = field(default_factory=list)
    returns: list = field(default_factory=list)  # ``return`` statements directly in this scope
    children: list = field(default_factory=list)
    globals: set = field(default_factory=set)  # names declared global / nonlocal
    self_name: str | None = None  # the name ``self`` goes by (methods, and scopes inside them)
    cls: ClassInfo | None = None  # the class ``self`` is an instance of
    method_kind: str | None = None  # "method" | "classmethod" | "staticmethod" for a class's defs

    @property
    def name(self) -> str | None:
        node = self.node
        kind = type(node)  # (neither class is subclassed)
        return node.name.value if kind is cst.FunctionDef or kind is cst.ClassDef else None  # type: ignore[attr-defined]

    def function(self) -> "Scope | None":
        """The nearest function scope (this one included)."""
        scope: Scope | None = self
        while scope is not None and scope.kind != FUNCTION:
            scope = scope.parent
        return scope

    def chain(self) -> Iterator["Scope"]:
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent


def _params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _decorator_names(node: cst.FunctionDef) -> set[str]:
    out = set()
    for d in node.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        name = dotted_name(expr)
        if name:
            out.add(name.rsplit(".", 1)[-1])
    return out


_UNSET = object()


# ``nodes_of``: node classes asked for -> every class whose instances are of one of them
_SUBCLASSES: dict[tuple[type, ...], frozenset[type]] = {}


def _subclasses(kinds: tuple[type, ...]) -> frozenset[type]:
    found, todo = set(), list(kinds)
    while todo:
        kind = todo.pop()
        if kind not in found:
            found.add(kind)
            todo.extend(kind.__subclasses__())
    return frozenset(found)


class SemanticModel:
    """What one file's names, calls, loops and classes are. See the module docstring.

    Filled node by node (``visit``/``leave``, in the pre-order of ``context.children``):
    by the engine's walk when an enabled rule declares ``uses_semantic_model`` (one walk for
    the rules and the model), else by a walk of its own the first time a rule asks for it.
    """

    def __init__(self, ctx: "FileContext", *, walk: bool = True):
        self.ctx = ctx
        self.scopes: dict[cst.CSTNode, Scope] = {}
        self.calls: list[CallSite] = []
        self.calls_by_node: dict[cst.Call, CallSite] = {}
        self.loops: dict[cst.CSTNode, Loop] = {}
        self.tests: list[cst.If | cst.IfExp] = []  # every ``if`` and conditional expression, in order
        self.classes: dict[cst.ClassDef, ClassInfo] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self._self_stores: set[cst.CSTNode] = set()
        module = ctx.module
        root = Scope(MODULE, module, None, 0)
        self.scopes[module] = root
        self.module = root
        # Walk state: per scope (scope, branch stack, loop stack); the loops across scopes;
        # the module-level statement being walked; class names for qualnames; the nodes
        # that open a scope when reached (a def's body, a lambda's body) -> that scope.
        self._frames: list[tuple[Scope, list, list]] = [(root, [], [])]
        self._all_loops: list[Loop] = []
        self._top = -1
        self._top_ids = {stmt: i for i, stmt in enumerate(module.body)}
        self._class_names: list[str] = []
        self._openers: dict[cst.CSTNode, Scope] = {}
        # ``qualified_name`` answers by node once the model is complete (``finish``): rules
        # ask it of the same callee many times (measured: ~100,000 calls on 351 files).
        self._qualified: dict[cst.CSTNode, str | None] | None = None
        self._imported: dict[cst.CSTNode, bool] | None = None
        # ``scope_of``'s answers by node once the model is complete (``finish``), for nodes
        # the walk did not number; for the others, the scopes' ranges of numbers: each scope
        # node's subtree is numbered ``order[node]`` .. its end (taken at ``leave``), and
        # ``_spans`` lists (starts, ends, index of the innermost scope around each) in order.
        self._scope_memo: dict[cst.CSTNode, Scope] | None = None
        self._ends: dict[cst.CSTNode, int] = {}
        self._spans: tuple[list[int], list[int], list[int], list[Scope]] | None = None
        self._test_numbers: list[int] | None = None  # ``order`` of each of ``tests`` (``tests_within``)
        self._memos: dict[str, dict] = {}
        if walk:
            self._walk()
            self.finish()

    # -- the pass -----------------------------------------------------------------------
    def _walk(self) -> None:
        """A walk of its own (explicit stack, no recursion), in the engine's order."""
        leave = self.leave
        order = self.order
        stack: list[tuple[cst.CSTNode, bool]] = [(self.ctx.module, False)]
        n = 0
        while stack:
            node, leaving = stack.pop()
            if leaving:
                leave(node)
                continue
            n += 1
            order[node] = n
            self.visit(node, n)
            stack.append((node, True))
            for child in reversed(children(node)):
                stack.append((child, False))

    def memo(self, name: str) -> dict:
        """A named table for answers derived from the finished model (one per kind of
        question), kept as long as the model: queries that several rules or call sites ask
        again answer from it."""
        table = self._memos.get(name)
        if table is None:
            table = self._memos[name] = {}
        return table

    def nodes_of(self, *kinds: type) -> list[cst.CSTNode]:
        """Every node of the file that is an instance of one of ``kinds``, in source order (the
        order of ``tree.iter_nodes`` over the module, which is the walk's numbering): the nodes
        are picked from ``order`` by their class, in C (``itertools.compress``), so a query that
        reads every ``Attribute`` or ``Name`` of the file does not walk the whole tree for them."""
        wanted = _SUBCLASSES.get(kinds)
        if wanted is None:
            wanted = _SUBCLASSES[kinds] = _subclasses(kinds)
        order = self.order
        return list(compress(order, map(wanted.__contains__, map(type, order))))

    def finish(self) -> None:
        """After the last ``leave``: what needs the whole file (class bases)."""
        self._openers = {}
        self._resolve_bases()
        self._qualified, self._imported = {}, {}
        self._scope_memo = dict(self.scopes)
        self._spans = self._scope_spans()

    def _scope_spans(self) -> tuple[list[int], list[int], list[int], list[Scope]] | None:
        """``scope_of``'s table: every scope's range of ``order`` numbers (its node's subtree:
        the walk numbers in pre-order, so a subtree is one range), by start. None (``scope_of``
        walks up the parents instead) unless the numbers are 1..n, one per node, and every
        scope but the module's was left."""
        order, ends = self.order, self._ends
        if not order or order[next(reversed(order))] != len(order) or len(ends) != len(self.scopes) - 1:
            return None
        starts: list[int] = []
        stops: list[int] = []
        around: list[int] = []
        scopes: list[Scope] = []
        open_: list[int] = []  # indices of the scopes whose range holds the current start
        for node, scope in self.scopes.items():
            if scope is self.module:
                start, stop = 0, len(order) + 1
            else:
                start, stop = order.get(node), ends.get(node)
                if start is None or stop is None or (starts and start < starts[-1]):
                    return None
            while open_ and stops[open_[-1]] < start:
                open_.pop()
            around.append(open_[-1] if open_ else -1)
            open_.append(len(starts))
            starts.append(start)
            stops.append(stop)
            scopes.append(scope)
        return starts, stops, around, scopes

    def tests_within(self, node: cst.CSTNode) -> list[cst.If | cst.IfExp]:
        """The ``tests`` in ``node``'s subtree, in order, for a scope node (a function, lambda,
        class or comprehension) of the finished model: a slice of ``tests`` by walk numbers
        (the subtree is ``order[node]`` .. its end). Every test of the file otherwise."""
        start, stop = self.order.get(node), self._ends.get(node)
        if start is None or stop is None or self._scope_memo is None:
            return self.tests
        numbers = self._test_numbers
        if numbers is None:
            order = self.order
            numbers = self._test_numbers = [order[test] for test in self.tests]
        return self.tests[bisect_left(numbers, start):bisect_right(numbers, stop)]

    def walk_interest(self) -> tuple[dict, frozenset, frozenset, dict, dict]:
        """For a walk that numbers nodes itself (the engine's ``Dispatcher``): the ``order``
        table it fills (1, 2, ... in pre-order), the node kinds ``visit`` acts on, those
        ``leave`` acts on, and the other nodes ``visit`` acts on (scope bodies about to open,
        module-level statements). Every other node needs only its number."""
        return self.order, _VISITED, _LEFT, self._openers, self._top_ids

    def visit(self, node: cst.CSTNode, n: int) -> None:
        """Reaching ``node``, which the walk has numbered ``n`` in ``order``."""
        kind = type(node)
        frames = self._frames
        opened = self._openers.pop(node, None) if self._openers else None
        if opened is not None:  # a def's or lambda's body: inside the new scope from here
            frames.append((opened, [], []))
        scope, branches, loops = frames[-1]
        if scope is self.module:  # (only the first frame is the module's)
            i = self._top_ids.get(node)
            if i is not None:
                self._top = i
        if kind not in _VISITED:
            return
        if kind is cst.Call:
            all_loops = self._all_loops  # (most calls are in no loop: no tuple to build)
            site = CallSite(node, scope, n, tuple(loops) if loops else (), tuple(all_loops) if all_loops else (),
                            self._top)
            scope.calls.append(site)
            self.calls.append(site)
            self.calls_by_node[node] = site
        elif kind is cst.Attribute:
            if scope.self_name is not None and scope.cls is not None and type(node.value) is cst.Name \
                    and node.value.value == scope.self_name:
                scope.cls.self_sites.append((node, scope))
                if node in self._self_stores:
                    scope.cls.self_assigned.setdefault(node.attr.value, []).append(node)
                else:
                    scope.cls.self_read.add(node.attr.value)
        elif kind is cst.FunctionDef or kind is cst.Lambda or kind is cst.ClassDef or kind in _COMPREHENSIONS:
            self._enter_scope(node, scope, branches, n)
            return
        elif kind in _BINDING_TYPES:
            self._bind_statement(node, scope, branches, n)
        elif kind is cst.Return:
            scope.returns.append(node)
            return
        elif kind is cst.IfExp:
            self.tests.append(node)
            return
        if kind in _LOOP_TYPES:
            loop = Loop(node, scope, loops[-1] if loops else None, n, self._top)
            self.loops[node] = loop
            scope.loops.append(loop)
            loops.append(loop)
            self._all_loops.append(loop)
            branches.append(node)
        elif kind in _BRANCH_TYPES:
            branches.append(node)
            if kind is cst.If:
                self.tests.append(node)

    def leave(self, node: cst.CSTNode) -> None:
        kind = type(node)
        frames = self._frames
        if kind in _LEFT:  # only these kinds pushed something in ``visit``
            if kind in _BRANCH_TYPES:
                frames[-1][1].pop()
                if kind in _LOOP_TYPES:
                    frames[-1][2].pop()
                    self._all_loops.pop()
            else:  # a scope: a comprehension's opened at it; a def's, lambda's or class's at
                # its body, the last of its children walked: either way it closes here
                self._ends[node] = len(self.order)  # the number of the last node below it
                if len(frames) > 1 and frames[-1][0].node is node:
                    frames.pop()
                if kind is cst.ClassDef:
                    self._class_names.pop()

    def _enter_scope(self, node, scope: Scope, branches: list, n: int) -> None:
        """Bind the def's name outside and open its scope at its body: decorators, defaults,
        annotations and bases, walked before the body, stay in the enclosing scope."""
        if isinstance(node, cst.FunctionDef):
            self._bind(node.name.value, node, "def", None, scope, branches, n)
            new = Scope(FUNCTION, node, scope, n)
            if scope.kind == CLASS:
                decorators = _decorator_names(node)
                new.method_kind = "staticmethod" if "staticmethod" in decorators else \
                    "classmethod" if "classmethod" in decorators else "method"
                params = _params(node.params)
                if new.method_kind != "staticmethod" and params:
                    new.self_name = params[0].name.value
                new.cls = scope.cls
                if scope.cls is not None:
                    scope.cls.methods[node.name.value] = node
            else:
                self._inherit_self(new, scope, node.params)
            for p in _params(node.params):
                self._bind(p.name.value, p, "param", None, new, [], n)
        elif isinstance(node, cst.Lambda):
            new = Scope(LAMBDA, node, scope, n)
            self._inherit_self(new, scope, node.params)
            for p in _params(node.params):
                self._bind(p.name.value, p, "param", None, new, [], n)
        elif isinstance(node, cst.ClassDef):
            self._bind(node.name.value, node, "class", None, scope, branches, n)
            new = Scope(CLASS, node, scope, n)
            self._class_names.append(node.name.value)
            info = ClassInfo(node, node.name.value, ".".join(self._class_names), new)
            self.classes[node] = info
            new.cls = info
        else:  # comprehension: all of it inside
            new = Scope(COMPREHENSION, node, scope, n)
            new.self_name, new.cls = scope.self_name, scope.cls
            self._frames.append((new, [], []))
        self.scopes[node] = new
        scope.children.append(new)
        if new.kind != COMPREHENSION:
            self._openers[node.body] = new

    @staticmethod
    def _inherit_self(new: Scope, outer: Scope, params: cst.Parameters) -> None:
        if outer.self_name is not None and outer.self_name not in {p.name.value for p in _params(params)}:
            new.self_name, new.cls = outer.self_name, outer.cls

    def _bind(self, key: str, node, kind: str, value, scope: Scope, branches: list, n: int,
              qualified: str | None = None) -> None:
        if key in scope.globals and scope.kind != MODULE:
            scope = self._module_of(scope)
        scope.bindings.setdefault(key, []).append(
            Binding(key, node, kind, value, n, scope, tuple(branches) if branches else (), qualified))

    @staticmethod
    def _module_of(scope: Scope) -> Scope:
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def _bind_target(self, target, node, kind: str, value, scope: Scope, branches: list, n: int) -> None:
        if type(target) is cst.Name:  # the common case: a leaf of its own, its key its name
            self._bind(target.value, node, kind, value, scope, branches, n)
            return
        leaves = unpack_targets(target)
        if len(leaves) != 1 or leaves[0] is not target:  # unpacking (``() = x`` binds nothing)
            kind, value = ("unpack" if kind == "assign" else kind), None
        for leaf in leaves:
            if isinstance(leaf, cst.Attribute):
                self._self_stores.add(leaf)
            key = expr_key(leaf)
            if key is not None:
                self._bind(key, node, kind, value, scope, branches, n)

    def _bind_statement(self, node, scope: Scope, branches: list, n: int) -> None:
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                self._bind_target(t.target, node, "assign", node.value, scope, branches, n)
        elif kind is cst.AnnAssign:
            if node.value is not None:
                self._bind_target(node.target, node, "ann", node.value, scope, branches, n)
        elif kind is cst.AugAssign:
            self._bind_target(node.target, node, "aug", node.value, scope, branches, n)
        elif kind is cst.For:
            self._bind_target(node.target, node, "for", None, scope, branches, n)
        elif kind is cst.CompFor:
            self._bind_target(node.target, node, "comp", None, scope, branches, n)
        elif kind is cst.WithItem:
            if node.asname is not None:
                self._bind_target(node.asname.name, node, "with", None, scope, branches, n)
        elif kind is cst.NamedExpr:
            target = scope
            while target.kind == COMPREHENSION and target.parent is not None:
                target = target.parent
            self._bind_target(node.target, node, "walrus", node.value, target, branches, n)
        elif kind is cst.ExceptHandler:
            if node.name is not None:
                self._bind_target(node.name.name, node, "except", None, scope, branches, n)
        elif kind is cst.Del:
            self._bind_target(node.target, node, "del", None, scope, branches, n)
        elif kind is cst.Global or kind is cst.Nonlocal:
            scope.globals.update(item.name.value for item in node.names)
        elif kind is cst.Import or kind is cst.ImportFrom:
            for local, qualified, alias in self._imports(node):
                self._bind(local, alias, "import", None, scope, branches, n, qualified)

    def _imports(self, node) -> list[tuple[str, str, cst.CSTNode]]:
        out = []
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    out.append((alias.asname.name.value, full, alias))
                else:
                    head = full.split(".")[0]
                    out.append((head, head, alias))
            return out
        if isinstance(node.names, cst.ImportStar):
            return out
        module = dotted_name(node.module) if node.module is not None else ""
        level = len(node.relative)
        base = self.ctx.import_table.resolve_relative(level, module or "") if level else (module or "")
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            out.append((local, f"{base}.{name}" if base else name, alias))
        return out

    def _resolve_bases(self) -> None:
        for info in self.classes.values():
            outer = info.scope.parent
            for arg in info.node.bases:
                expr = arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value
                written = dotted_name(expr)
                if written is None:
                    continue
                found = self.lookup(written.split(".")[0], outer, info.node)
                qualified = self._expand(written, found)
                info.bases.append(qualified)
                if found and found[-1].kind == "class" and "." not in written:
                    base = self.classes.get(found[-1].node)
                    if base is not None and base is not info:
                        info.local_bases.append(base)

    # -- scopes -------------------------------------------------------------------------
    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost scope holding ``node`` (a scope node's own scope is itself).
        Once the model is finished, every node passed on the way up keeps its answer
        (``_scope_memo``, seeded with the scope nodes): rules ask it ~160,000 times on 351
        files, mostly of nodes near others asked before."""
        spans = self._spans
        if spans is not None:
            at = self.order.get(node)
            if at is not None:  # the innermost scope whose range holds ``at``
                starts, stops, around, scopes = spans
                i = bisect_right(starts, at) - 1
                while stops[i] < at:
                    i = around[i]
                return scopes[i]
        memo = self._scope_memo
        if memo is not None:  # seeded with ``scopes`` (``finish``): one table to ask
            found = memo.get(node)
            if found is not None:
                return found
            parent = self.ctx.parent
            passed = [node]
            current = parent(node)
            while current is not None:
                found = memo.get(current)
                if found is not None:
                    break
                passed.append(current)
                current = parent(current)
            else:
                found = self.module
            for each in passed:
                memo[each] = found
            return found
        scopes = self.scopes
        current: cst.CSTNode | None = node
        parent = self.ctx.parent
        while current is not None:
            found = scopes.get(current)
            if found is not None:
                return found
            current = parent(current)
        return self.module

    @staticmethod
    def code_scope(scope: Scope) -> Scope:
        """The scope whose code runs ``scope``'s code: comprehensions are part of the code
        around them; functions, lambdas, classes and the module are their own."""
        while scope.kind == COMPREHENSION and scope.parent is not None:
            scope = scope.parent
        return scope

    def loops_around(self, node: cst.CSTNode) -> tuple[Loop, ...]:
        """The loops around ``node`` in its code scope (see ``code_scope``), outermost
        first: for a call, its ``all_loops`` of that scope, also from a comprehension."""
        out = []
        loops, scopes, parent = self.loops, self.scopes, self.ctx.parent
        current = parent(node)
        while current is not None:
            loop = loops.get(current)
            if loop is not None:
                out.append(loop)
            else:
                scope = scopes.get(current)
                if scope is not None and scope.kind != COMPREHENSION:
                    break
            current = parent(current)
        out.reverse()
        return tuple(out)

    def functions(self) -> Iterator[Scope]:
        """Function and lambda scopes, in source order."""
        for scope in self.scopes.values():
            if scope.kind in (FUNCTION, LAMBDA):
                yield scope

    def self_name(self, function: cst.FunctionDef | cst.Lambda) -> str | None:
        """The name ``self`` goes by in ``function`` (None outside methods, in static methods)."""
        scope = self.scopes.get(function)
        return scope.self_name if scope is not None else None

    def class_of(self, node: cst.CSTNode) -> ClassInfo | None:
        """The class whose instance ``self`` is at ``node``."""
        return self.scope_of(node).cls

    def class_named(self, name: str) -> ClassInfo | None:
        """A same-file class by (qualified) name; the last definition wins."""
        found = None
        for info in self.classes.values():
            if info.qualname == name or info.name == name:
                found = info
        return found

    def mro(self, info: ClassInfo) -> list[ClassInfo]:
        """``info`` and its same-file bases, depth-first, each once."""
        if not info.local_bases:
            return [info]
        out, seen, stack = [], set(), [info]
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            out.append(current)
            stack.extend(reversed(current.local_bases))
        return out

    def method(self, info: ClassInfo, name: str) -> cst.FunctionDef | None:
        for cls in self.mro(info):
            found = cls.methods.get(name)
            if found is not None:
                return found
        return None

    # -- names --------------------------------------------------------------------------
    def lookup(self, key: str, scope: Scope, at: cst.CSTNode | None = None) -> list[Binding]:
        """The bindings ``key`` may refer to when read in ``scope`` (at ``at``, if given):
        reaching definitions in the scope that binds it, else every binding of the nearest
        enclosing scope that does (class scopes are skipped for nested scopes, as Python
        does). Empty: a builtin, an undefined or star-imported name."""
        first = True
        current: Scope | None = scope
        if key in scope.globals and scope.kind != MODULE:
            current = self.module
        while current is not None:
            if first or current.kind != CLASS:
                found = current.bindings.get(key)
                if found:
                    if first and at is not None:
                        return self._reaching(found, at)
                    return list(found)
            first = False
            current = current.parent
        return []

    def reaching(self, key: str, at: cst.CSTNode) -> list[Binding]:
        """Which bindings of ``key`` a read at ``at`` may see: in ``at``'s own scope, the
        last binding before it that always runs on the way (same branch chain or an outer
        one) and every conditional binding after that; in a loop, bindings later in the same
        loop too (the next iteration sees them), unless a binding that always runs earlier in
        the iteration replaces them. Straight-line code gives exactly one. A read in the value
        a binding binds (``model = model.to(device)``) sees the bindings before that one (and,
        in a loop, that one from the previous iteration)."""
        return self.lookup(key, self.scope_of(at), at)

    def _reaching(self, bindings: list[Binding], at: cst.CSTNode) -> list[Binding]:
        order = self.order.get(at)
        if order is None:
            return list(bindings)
        # ``at``'s branch chain is built only when a conditional binding needs it: most
        # bindings read (parameters, straight-line assignments) are unconditional.
        chain: tuple | None = None
        out: list[Binding] = []
        always: tuple = ()
        own = None  # the binding whose own value ``at`` is read in (``x = x.to(device)``)
        for b in reversed(bindings):
            if b.order >= order:
                continue
            if own is None and (b.value is not None or b.kind == "unpack") and self._in_value(at, b):
                own = b  # the value is read before the name is bound: it sees what came before
                continue
            out.append(b)
            branches = b.branches
            if not branches:
                break  # it always runs before ``at``: nothing earlier is seen
            if chain is None:
                chain = self._branch_chain(at)
            if branches == chain[: len(branches)]:
                always = branches
                break
        out.reverse()
        # loop-carried: a later binding in a loop around both, unless a binding that always
        # runs before ``at`` inside that loop's body replaces it on every iteration (only a
        # binding under some branch can be in a loop around ``at``)
        for b in bindings:
            if b.branches and (b.order > order or b is own):
                break
        else:
            return out
        if chain is None:
            chain = self._branch_chain(at)
        loops = [n for n in chain if type(n) in _LOOP_TYPES and n not in always]
        if loops:
            for b in bindings:
                if (b.order > order or b is own) and any(lp in b.branches for lp in loops):
                    out.append(b)
        return out

    def _in_value(self, at: cst.CSTNode, b: Binding) -> bool:
        """``at`` is inside the value ``b`` binds (not its target): for unpacking
        (``scores, _ = pack(scores, n)``), the value of the whole statement."""
        value = b.value
        if value is None and b.kind == "unpack" and isinstance(b.node, cst.Assign):
            value = b.node.value
        if value is None:
            return False
        parent = self.ctx.parent
        node: cst.CSTNode | None = at
        while node is not None and node is not b.node:
            if node is value:
                return True
            if node in self.scopes:
                return False
            node = parent(node)
        return False

    def _branch_chain(self, node: cst.CSTNode) -> tuple:
        out = []
        parent = self.ctx.parent
        current = parent(node)
        scopes = self.scopes
        while current is not None and current not in scopes:
            if type(current) in _BRANCH_TYPES:
                out.append(current)
            current = parent(current)
        out.reverse()
        return tuple(out)

    def _expand(self, dotted: str, bindings: list[Binding]) -> str:
        head, dot, rest = dotted.partition(".")
        for b in reversed(bindings):
            if b.kind == "import" and b.qualified:
                return f"{b.qualified}{dot}{rest}"
        return dotted

    def binding_of(self, node: cst.CSTNode) -> list[Binding]:
        """What the head name of a Name/Attribute chain refers to at ``node``."""
        dotted = dotted_name(node)
        if dotted is None:
            return []
        return self.reaching(dotted.split(".")[0], node)

    def qualified_name(self, node: cst.CSTNode | None) -> str | None:
        """Like ``FileContext.qualified_name`` but scope-aware: a local (or parameter) that
        shadows an import is not the import. ``None`` if ``node`` is not a name chain.
        Memoised after ``finish``."""
        if node is None:
            return None
        memo = self._qualified
        if memo is None:
            return self._name_facts(node)[0]
        found = memo.get(node, _UNSET)
        if found is _UNSET:
            found = self._name_facts(node)[0]
        return found  # type: ignore[return-value]

    def is_imported(self, node: cst.CSTNode | None) -> bool:
        """The head of the Name/Attribute chain ``node`` refers to an import there (every
        binding that may reach it is one). Memoised after ``finish``, like ``qualified_name``."""
        if node is None:
            return False
        memo = self._imported
        if memo is None:
            return self._name_facts(node)[1]
        found = memo.get(node)
        if found is None:
            found = self._name_facts(node)[1]
        return found

    def _name_facts(self, node: cst.CSTNode) -> tuple[str | None, bool]:
        """(``qualified_name``, ``is_imported``) of ``node`` from one reaching-definitions
        query, kept in both memos once they exist."""
        dotted = dotted_name(node)
        if dotted is None:
            qualified, imported = None, False
        else:
            found = self.reaching(dotted.split(".")[0], node)
            imported = bool(found) and all(b.kind == "import" for b in found)
            if imported:
                qualified = self._expand(dotted, found)
            elif not found:
                # A star import, or a name bound in a scope the model does not see (exec):
                # fall back to the file's import table.
                qualified = self.ctx.qualified_name(node)
            else:
                qualified = dotted
        if self._qualified is not None:
            self._qualified[node] = qualified
            self._imported[node] = imported  # type: ignore[index]
        return qualified, imported

    # -- calls --------------------------------------------------------------------------
    def call_site(self, call: cst.Call) -> CallSite | None:
        return self.calls_by_node.get(call)

    def calls_to(self, name: str) -> list[CallSite]:
        """Call sites whose callee is ``name`` or ``<x>.name`` (written), in source order.
        The file's calls are sorted by that name once (``memo``), not read again per name."""
        by_name = self.memo("calls_to")
        if not by_name and self.calls:
            for site in self.calls:
                func = site.node.func
                kind = type(func)  # (neither class is subclassed)
                if kind is cst.Name:
                    by_name.setdefault(func.value, []).append(site)
                elif kind is cst.Attribute:
                    by_name.setdefault(func.attr.value, []).append(site)
        return list(by_name.get(name, ()))

    def calls_in_loop(self, loop: Loop) -> list[CallSite]:
        """Call sites in ``loop``'s body (not its iterable, not its ``else``), comprehensions
        included, nested functions, lambdas and classes not, in source order."""
        node = loop.node
        start = self.order.get(node.body, 0)
        stop = self.order.get(node.orelse) if node.orelse is not None else None
        out = []
        for site in self.calls:
            if loop not in site.all_loops or site.order < start or (stop is not None and site.order >= stop):
                continue
            scope = site.scope
            while scope is not loop.scope and scope is not None and scope.kind == COMPREHENSION:
                scope = scope.parent
            if scope is loop.scope:
                out.append(site)
        return out

    def calls_in(self, scope_node: cst.CSTNode, *, nested: bool = False) -> list[CallSite]:
        """Call sites directly in a scope; with ``nested``, also in its nested scopes."""
        scope = self.scopes[scope_node]
        if not nested:
            return list(scope.calls)
        out, stack = [], [scope]
        while stack:
            current = stack.pop()
            out.extend(current.calls)
            stack.extend(current.children)
        out.sort(key=lambda s: s.order)
        return out
