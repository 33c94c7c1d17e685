"""The same-file call graph over function and lambda scopes (and the module).

Edges come from call sites and from functions passed as arguments (``mp.spawn(worker)``,
``Engine(step)``, ``opt.step(closure)``). A callee resolves through the scopes
(nested functions, closures), ``self.m()``/``cls.m()``/``super().m()`` through the class and
its same-file bases, ``functools.partial(f, ...)``, lambdas bound to names, ``C(...)``
to ``C``'s constructor, and calls on a name bound to ``C(...)`` to ``C``'s methods
(``agent.update()``; ``scaler(loss, opt)`` to ``C.__call__``). ``loose=True`` adds by-name edges: ``x.m()`` on any other receiver
goes to every same-file method named ``m`` (for rules that prefer to over-approximate).
"""

from __future__ import annotations

from types import EllipsisType
from typing import Iterable, Iterator

import libcst as cst

from torchlint.semantic.model import CLASS, COMPREHENSION, FUNCTION, LAMBDA, CallSite, Scope, SemanticModel
from torchlint.torch_api import expr_key

CONSTRUCTORS = ("__init__", "__post_init__", "__new__")
# Builtins that look at their arguments and never call them.
_INSPECTING = frozenset({"isinstance", "issubclass", "hasattr", "callable", "id", "type", "repr", "str", "print", "len",
                         "hash", "vars", "dir"})
_MAX_ALIAS = 4


# ``CallGraph._open``: a site whose resolution met a by-name point below its own callee
# (through an alias, a ``partial``, an argument): the loose graph resolves it itself.
_RESOLVE_AGAIN = object()


class CallGraph:
    def __init__(self, model: SemanticModel, *, loose: bool = False, exact: CallGraph | None = None):
        """``exact``, for a loose graph: the exact graph of the same model, whose answers it
        shares wherever resolving met no point where the by-name edges apply (``_open``)."""
        self.model = model
        self.loose = loose
        self._exact = exact if loose and exact is not None and not exact.loose else None
        # How many points resolving met where ``loose`` decides, and the last (depth, method
        # name); per memoised site of this graph that met some, what they tell (``_open``).
        self._points = 0
        self._last_point: tuple[int, str] = (0, "")
        self._open: dict[CallSite, object] = {}
        self._open_references: set[CallSite] = set()
        self._targets: dict[CallSite, list] = {}  # by site: hashed by identity (eq=False)
        self._references: dict[CallSite, list[cst.CSTNode]] = {}
        self._edges: dict[cst.CSTNode, list] = {}
        self._by_method: dict[str, list] | None = None
        self._resolvable: set[str] | None = None
        self._classes: set[str] | None = None
        self._callers: dict[cst.CSTNode, list] | None = None  # function -> the sites that may run it
        self._reverse: dict[cst.CSTNode, list] | None = None  # callee -> scope nodes whose callees list it

    # -- resolution ---------------------------------------------------------------------
    def targets(self, site: CallSite) -> list[cst.CSTNode]:
        """Same-file FunctionDef/Lambda nodes a call may run."""
        cached = self._targets.get(site)
        if cached is None:
            exact = self._exact
            if exact is not None:
                cached = exact._loose_targets(site, self)
            if cached is None:
                before = self._points
                cached = self.resolve(site.node.func, site.scope, site.node)
                met = self._points - before
                if met:
                    depth, name = self._last_point
                    self._open[site] = name if met == 1 and depth == 0 else _RESOLVE_AGAIN
            self._targets[site] = cached
        return cached

    def _loose_targets(self, site: CallSite, loose: CallGraph) -> list[cst.CSTNode] | None:
        """For ``loose``, the loose graph of this (exact) graph's model: its ``targets`` of
        ``site`` from this graph's, when they tell it (None: ``loose`` resolves the site
        itself). Resolving takes the same path in both graphs up to the first point where
        ``loose`` decides (``resolve``'s last line): where the exact resolution met none the
        answers are the same; where it met one only at the callee itself (an ``x.m()`` no
        other case resolves: its last step, the exact answer empty), the loose answer is the
        by-name one."""
        found = self.targets(site)
        opened = self._open.get(site)
        if opened is None:
            return found
        if opened is _RESOLVE_AGAIN:
            return None
        return list(loose._methods_named(opened))  # type: ignore[arg-type]

    def resolve(self, expr: cst.BaseExpression, scope: Scope, at: cst.CSTNode | None = None,
                depth: int = 0) -> list[cst.CSTNode]:
        model = self.model
        if type(expr) is cst.Lambda:
            return [expr]
        if type(expr) is cst.Call and expr.args and depth < _MAX_ALIAS \
                and (model.qualified_name(expr.func) or "").endswith("partial"):
            return self.resolve(expr.args[0].value, scope, at, depth + 1)  # functools.partial(f, ...)
        if type(expr) is cst.Name:
            if expr.value not in self._resolvable_names():
                return []  # no binding in the file could make it a same-file function
            out: list[cst.CSTNode] = []
            for b in model.lookup(expr.value, scope, at):
                if b.kind == "def":
                    out.append(b.node)
                elif b.kind == "class":
                    info = model.classes.get(b.node)
                    if info is not None:
                        out.extend(self.constructors(info))
                elif b.kind in ("assign", "ann") and b.value is not None and depth < _MAX_ALIAS:
                    out.extend(self._value_targets(b.value, b.scope, depth + 1))
                    info = self._instance_of(b.value, b.scope, depth)
                    found = model.method(info, "__call__") if info is not None else None
                    if found is not None:  # scaler = NativeScaler(); scaler(loss, opt): its __call__
                        out.append(found)
            return out
        if type(expr) is cst.Attribute:
            name = expr.attr.value
            receiver = expr.value
            if type(receiver) is cst.Name and receiver.value == scope.self_name and scope.cls is not None:
                found = model.method(scope.cls, name)
                return [found] if found is not None else []
            if type(receiver) is cst.Call and type(receiver.func) is cst.Name and receiver.func.value == "super" \
                    and scope.cls is not None:
                for base in model.mro(scope.cls)[1:]:
                    if name in base.methods:
                        return [base.methods[name]]
                return []
            if type(receiver) is cst.Name and receiver.value in self._resolvable_names():
                # agent = Agent(); agent.train_net(...): the method of the same-file class built there
                out = []
                for b in model.lookup(receiver.value, scope, at):
                    info = self._instance_of(b.value, b.scope, depth) if b.kind in ("assign", "ann") else None
                    found = model.method(info, name) if info is not None else None
                    if found is not None:
                        out.append(found)
                if out:
                    return out
            self._points += 1
            self._last_point = (depth, name)
            if self.loose:
                return list(self._methods_named(name))
        return []

    def _instance_of(self, value: cst.BaseExpression | None, scope: Scope, depth: int):
        """The same-file class ``value`` constructs (``C(...)``), if it is one."""
        if type(value) is not cst.Call or type(value.func) is not cst.Name or depth >= _MAX_ALIAS:
            return None
        for b in self.model.lookup(value.func.value, scope, value):
            if b.kind == "class":
                return self.model.classes.get(b.node)
        return None

    def _resolvable_names(self) -> set[str]:
        """Names some binding in the file could resolve to a function: ``def``/``class``, or
        an assignment of what ``_value_targets`` follows. Looking up any other name (``x``,
        ``print``, ``loss``) finds nothing, so ``resolve`` skips the reaching-definition query."""
        if self._resolvable is None:
            if self._exact is not None:  # the same model's: the same names
                self._resolvable = self._exact._resolvable_names()
                return self._resolvable
            found: set[str] = set()
            may_alias = self._may_alias_function
            for scope in self.model.scopes.values():
                for key, bindings in scope.bindings.items():
                    if key in found or "." in key:
                        continue
                    for b in bindings:
                        kind = b.kind
                        if kind == "def" or kind == "class" or (kind == "assign" or kind == "ann") \
                                and may_alias(b.value):
                            found.add(key)
                            break
            self._resolvable = found
        return self._resolvable

    def _may_alias_function(self, value: cst.BaseExpression | None) -> bool:
        """A superset of the values ``_value_targets`` follows: the import table's name of a
        call's callee (scopes ignored) ends in ``partial`` whenever the model's does."""
        if isinstance(value, (cst.Lambda, cst.Name, cst.Attribute)):
            return True
        if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in self._class_names():
            return True  # an instance of a same-file class: its __call__ and methods
        return type(value) is cst.Call and (self.model.ctx.qualified_name(value.func) or "").endswith("partial")

    def _class_names(self) -> set[str]:
        if self._classes is None:
            self._classes = {info.name for info in self.model.classes.values()}
        return self._classes

    def _value_targets(self, value: cst.BaseExpression, scope: Scope, depth: int) -> list[cst.CSTNode]:
        if type(value) is cst.Lambda:
            return [value]
        if isinstance(value, (cst.Name, cst.Attribute)):
            return self.resolve(value, scope, None, depth)
        if type(value) is cst.Call and value.args and (self.model.qualified_name(value.func) or "").endswith("partial"):
            return self.resolve(value.args[0].value, scope, None, depth)
        return []

    def constructors(self, info) -> list[cst.CSTNode]:
        """What ``C(...)`` runs in this file: constructors of ``C`` and its same-file bases."""
        out = []
        for cls in self.model.mro(info):
            out.extend(cls.methods[n] for n in CONSTRUCTORS if n in cls.methods)
        return out

    def _methods_named(self, name: str) -> list[cst.CSTNode]:
        if self._by_method is None:
            self._by_method = {}
            for info in self.model.classes.values():
                for m, node in info.methods.items():
                    self._by_method.setdefault(m, []).append(node)
        return self._by_method.get(name, [])

    def references(self, site: CallSite) -> list[cst.CSTNode]:
        """Same-file functions passed as arguments of ``site`` (they may run later); none for
        a builtin that only inspects its arguments (``isinstance(x, Decoder)`` constructs no
        ``Decoder``). Memoised per site, as ``targets`` is."""
        cached = self._references.get(site)
        if cached is None:
            exact = self._exact
            if exact is not None:
                found = exact.references(site)
                if site not in exact._open_references:
                    cached = found
            if cached is None:
                before = self._points
                cached = self._passed(site)
                if self._points != before:
                    self._open_references.add(site)
            self._references[site] = cached
        return cached

    def _passed(self, site: CallSite) -> list[cst.CSTNode]:
        out: list[cst.CSTNode] = []
        scope = site.scope
        func = site.node.func
        if type(func) is cst.Name and func.value in _INSPECTING and not self.model.lookup(func.value, scope, site.node) \
                and not self.model.is_imported(func):
            return out
        for arg in site.node.args:
            value = arg.value
            if type(value) is cst.Lambda:
                out.append(value)
            elif type(value) is cst.Name or (type(value) is cst.Attribute and type(value.value) is cst.Name
                                                 and value.value.value == scope.self_name):
                out.extend(self.resolve(value, scope, site.node))
        return out

    # -- edges and reachability ---------------------------------------------------------
    def sites(self, scope_node: cst.CSTNode) -> list[CallSite]:
        """Call sites that run when ``scope_node`` runs: its own and its comprehensions'."""
        scope = self.model.scopes[scope_node]
        out = list(scope.calls)
        if scope.children:
            stack = [c for c in scope.children if c.kind == COMPREHENSION]
            while stack:
                current = stack.pop()
                out.extend(current.calls)
                if current.children:
                    stack.extend([c for c in current.children if c.kind == COMPREHENSION])
        return out

    def callees(self, scope_node: cst.CSTNode) -> list[cst.CSTNode]:
        found = self._edges.get(scope_node)
        if found is None:
            found = []
            for site in self.sites(scope_node):
                found.extend(self.targets(site))
                found.extend(self.references(site))
            self._edges[scope_node] = found
        return found

    def reach(self, start: Iterable[cst.CSTNode]) -> set[cst.CSTNode]:
        """``start`` and every same-file function they may run, transitively."""
        seen: set[cst.CSTNode] = set()
        stack = [s for s in start]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(self.callees(node))
        return seen

    def callers(self, function: cst.CSTNode) -> list[CallSite]:
        """Call sites in the file that may run ``function`` (in source order)."""
        if self._callers is None:
            self._callers = {}
            for site in self.model.calls:
                for target in self.targets(site):
                    found = self._callers.setdefault(target, [])
                    if not found or found[-1] is not site:
                        found.append(site)
        return list(self._callers.get(function, ()))

    def closure(self, direct: Iterable[cst.CSTNode]) -> set[cst.CSTNode]:
        """Every scope node that runs one of ``direct`` (itself or through callees): the
        reverse reachability, as one fixpoint."""
        marked = set(direct)
        if not marked:
            return marked  # nothing runs nothing: the reverse edges are not built for it
        run_by = self._run_by()
        stack = list(marked)
        while stack:
            for caller in run_by.get(stack.pop(), ()):
                if caller not in marked:
                    marked.add(caller)
                    stack.append(caller)
        return marked

    def _run_by(self) -> dict[cst.CSTNode, list[cst.CSTNode]]:
        """Callee -> the function, lambda and module nodes whose ``callees`` list it (the
        reverse edges ``closure`` follows), built once."""
        if self._reverse is None:
            self._reverse = {}
            for scope in self.model.scopes.values():
                if scope.kind in (FUNCTION, LAMBDA) or scope.parent is None:
                    for callee in self.callees(scope.node):
                        found = self._reverse.setdefault(callee, [])
                        if not found or found[-1] is not scope.node:
                            found.append(scope.node)
        return self._reverse


def enclosing_function(model: SemanticModel, scope: Scope) -> cst.CSTNode:
    """The function/lambda (or module) node a scope's code runs as part of: comprehensions
    and class bodies belong to the code around them."""
    current = scope
    while current.parent is not None and current.kind in (COMPREHENSION, CLASS):
        current = current.parent
    return current.node


def argument_name(model: SemanticModel, site: CallSite, callee: cst.FunctionDef, key: str) -> str | None:
    """What the caller's ``key`` goes by inside ``callee`` when ``site`` calls it: the
    parameter it is passed as (``predict(model, x)`` -> ``def predict(m, x)``: ``m``), or,
    through a bound ``self.m(...)``, the callee's ``self`` path (``self.model``). None when
    ``key`` is not passed, passed through ``*args``, or the call is no plain one of
    ``callee`` (``C(...)``, a method called unbound, ``forward``/``__call__``)."""
    call, inner_scope = site.node, model.scopes[callee]
    params = [*callee.params.posonly_params, *callee.params.params]
    if isinstance(call.func, cst.Attribute):  # self.m(...): a bound method
        outer_self, inner_self = site.scope.self_name, inner_scope.self_name
        if outer_self is None or inner_self is None or callee.name.value in ("forward", "__call__"):
            return None
        if key == outer_self or key.startswith(outer_self + "."):
            return inner_self + key[len(outer_self):]
        params = params[1:]
    elif inner_scope.self_name is not None:
        return None  # C(...) or a method called unbound
    names = [p.name.value for p in params]
    for name, arg in parameters_passed(call, names):
        if arg is None:
            return None  # *args/**kwargs: what follows cannot be told
        if expr_key(arg.value) == key:
            return name if name in names else None
    return None


def passed_argument(model: SemanticModel, site: CallSite, callee: cst.FunctionDef,
                    param: str) -> cst.BaseExpression | None:
    """The expression ``site`` binds to ``callee``'s parameter ``param``: by keyword or by
    position (``self.m(a, b)`` skips ``self``), else the parameter's default. None when it
    cannot be told (``*args``/``**kwargs`` at the call, ``C(...)``, a method called unbound)."""
    call, inner_scope = site.node, model.scopes[callee]
    params = [*callee.params.posonly_params, *callee.params.params]
    if inner_scope.self_name is not None:
        if not (isinstance(call.func, cst.Attribute) and site.scope.self_name is not None):
            return None
        params = params[1:]
    found = bound_argument(call, [p.name.value for p in params], param)
    if found is ...:
        return None  # *args/**kwargs: what follows cannot be told
    if found is not None:
        return found
    return next((p.default for p in [*params, *callee.params.kwonly_params] if p.name.value == param), None)


def parameters_passed(call: cst.Call, names: list[str]) -> Iterator[tuple[str | None, cst.Arg | None]]:
    """(the parameter name each argument of ``call`` binds, the argument), in order: a
    keyword's own name, else the positional parameter of ``names`` at its place (None past
    them). At the first ``*args``/``**kwargs`` it yields ``(None, None)`` and stops."""
    for i, arg in enumerate(call.args):
        if arg.star:
            yield None, None
            return
        yield (arg.keyword.value if arg.keyword is not None else names[i] if i < len(names) else None), arg


def bound_argument(call: cst.Call, names: list[str], param: str) -> cst.BaseExpression | None | EllipsisType:
    """The expression ``call`` binds to the parameter ``param``, ``names`` being the callee's
    positional parameters in order (those the call fills: without ``self`` for a bound
    method): by keyword or by position. None where the call passes nothing for it; ``...``
    where that cannot be told (a ``*args``/``**kwargs`` before it)."""
    for name, arg in parameters_passed(call, names):
        if arg is None:
            return ...
        if name == param:
            return arg.value
    return None
