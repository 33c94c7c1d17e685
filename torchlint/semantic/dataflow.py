"""Where a value goes and what it is, within one function (TL002, TL003, TL015).

* ``gradient_targets``: what each backward-like call of the file differentiates
  (``x.backward()``, ``scaler.scale(x).backward()``, ``accelerator.backward(x)``,
  ``torch.autograd.grad(x, ...)``, a timm-style ``loss_scaler(x, optimizer)``).
* ``Flow.reaches``: does the value of one expression reach one of a set of nodes, following
  THIS value through assignments (by reaching definitions, so a name reused later for another
  value does not count), tuple unpacking (every element), ``for`` targets, containers it is
  stored in (``xs.append(v)``, ``d[k] = v``: any later read of the container) and any
  expression computed from it. Generous on purpose: rules use it to stay silent.
  ``Flow.reads``: the first step of that (whether a stored value is read at all: TL015);
  ``Flow.onward``: the same step, reads in the storing statement included (a loop's body).
* ``values_of`` / ``single_value``: what a name or ``self.<attr>`` holds, when every binding
  it may see is a plain assignment (TL009's model and activation, TL019's loader and dataset).
* ``is_plain_number``: an expression that is a Python number for sure (it carries no
  autograd graph): literals, ``x.item()``, ``len(...)``, ``float(...)``, ``x.size(0)``,
  names bound only to such values, parameters defaulting to or annotated as a number, and
  options read from ``args``/``cfg``/``config``/``hparams``.
* ``stays_on_host``: a read of a tensor that never meets another tensor: refilled in place as
  a statement (``t[:-1].uniform_()``), one element of it compared in a branch condition
  (``if t[i] >= p:``: a Python bool; a 0-dim CPU tensor mixes with any device), or iterated
  (``for i, flag in enumerate(t):``, ``zip``) with each element only a branch condition
  (``if flag:``) (TL007).
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.model import SemanticModel
from torchlint.semantic.modules import self_attr_bindings
from torchlint.torch_api import backward_target, expr_key
from torchlint.tree import iter_nodes, unpack_targets

_AUTOGRAD_GRAD = {"torch.autograd.grad", "torch.autograd.functional.vjp", "torch.autograd.functional.jvp"}
_SCALER_CALL = re.compile(r"scaler$", re.IGNORECASE)
_STORING = {"append", "extend", "add", "insert", "update", "appendleft", "put"}
_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.FunctionDef, cst.Lambda, cst.ClassDef)
_NUMBER_CALLS = {"len", "int", "float", "round", "abs", "min", "max", "sum"}
_NUMBER_METHODS = {"item", "numel", "dim", "nelement"}
_CONFIG_ROOTS = {"args", "cfg", "config", "conf", "hparams", "hp", "params", "opts", "flags", "FLAGS", "hyp"}
_MAX_DEPTH = 8
# In-place methods that overwrite a tensor from its own values or the RNG.
_REFILLS = {"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_", "log_normal_",
            "fill_", "zero_"}


def gradient_target(ctx, call: cst.Call) -> cst.BaseExpression | None:
    """What a backward-like call differentiates (see the module docstring), else None."""
    target = backward_target(ctx, call)
    if target is not None or not call.args:
        return target
    name = ctx.qualified_name(call.func)
    if name in _AUTOGRAD_GRAD:
        return call.args[0].value if name == "torch.autograd.grad" else call
    key = expr_key(call.func)
    if key is not None and _SCALER_CALL.search(key.rsplit(".", 1)[-1]):
        return call.args[0].value
    return None


class Flow:
    """Value-flow queries over one file (memoised reads per scope)."""

    def __init__(self, ctx, model: SemanticModel):
        self.ctx = ctx
        self.model = model
        self._reads: dict[cst.CSTNode, dict[str, list[cst.CSTNode]]] = {}

    def reaches(self, node: cst.CSTNode, sinks: set[cst.CSTNode]) -> bool:
        """Does the value ``node`` computes reach a node in ``sinks`` (same function)?"""
        if not sinks:
            return False
        seen: set[cst.CSTNode] = set()
        stack = [(node, 0)]
        while stack:
            current, depth = stack.pop()
            if current in seen or depth > _MAX_DEPTH:
                continue
            seen.add(current)
            for nxt in self._next(current, sinks):
                if nxt is True:
                    return True
                stack.append((nxt, depth + 1))
        return False

    def reads(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The reads that see the value ``node`` computes once its statement stores it
        (``x = node`` and later reads of ``x``; a container it is stored in): empty when it
        is stored nowhere or never read. One step of ``reaches``, without the store itself;
        reads in nested functions (closures) too."""
        statement = next((up for up in self.ctx.ancestors(node) if isinstance(up, _STATEMENTS)), None)
        found = [read for read in self._next(node, set())
                 if read is not True and (statement is None or not self.ctx.inside(read, statement))]
        return found or self._closure_reads(node)

    def onward(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The reads the value ``node`` computes flows to next once its statement stores it
        (one step of ``reaches``): like ``reads``, but reads inside that statement count too (a
        loop body reading the loop's target, ``for i in node: ... i``)."""
        found = [read for read in self._next(node, set()) if read is not True and not self._stored_to(read)]
        return found or self._closure_reads(node)

    def _stored_to(self, node: cst.CSTNode) -> bool:
        """``node`` is (inside) the target of an assignment or loop: a store, not a read."""
        current = node
        for up in self.ctx.ancestors(node):
            if isinstance(up, cst.AssignTarget):
                return True
            if isinstance(up, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor)):
                return up.target is current
            if isinstance(up, _STATEMENTS):
                return False
            current = up
        return False

    def _closure_reads(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Reads in functions nested in the scope (a closure) of the names ``name = node``
        binds."""
        store = self.ctx.parent(node)
        if not isinstance(store, (cst.Assign, cst.AnnAssign)) or store.value is not node:
            return []
        targets = [t.target for t in store.targets] if isinstance(store, cst.Assign) else [store.target]
        names = {leaf.value for target in targets for leaf in unpack_targets(target) if isinstance(leaf, cst.Name)}
        scope = self.model.scope_of(node)
        model = self.model
        return [sub for sub in iter_nodes(scope.node)
                if isinstance(sub, cst.Name) and sub.value in names and model.scope_of(sub) is not scope
                and any(b.node is store for b in model.reaching(sub.value, sub))]

    def _next(self, node: cst.CSTNode, sinks: set):
        """Climb from ``node`` to its statement; yield True at a sink, else the reads its
        value flows to."""
        parent = self.ctx.parent
        current = node
        while True:
            if current in sinks:
                yield True
                return
            up = parent(current)
            if up is None or isinstance(current, _STATEMENTS):
                return
            if isinstance(up, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and current is up.value:
                targets = [t.target for t in up.targets] if isinstance(up, cst.Assign) else [up.target]
                yield from self._bound(targets, up)
                return
            if isinstance(up, cst.NamedExpr) and current is up.value:
                yield from self._bound([up.target], up)
            elif isinstance(up, cst.For) and current is up.iter:
                yield from self._bound([up.target], up)
                return
            elif isinstance(up, cst.Arg) and isinstance(parent(up), cst.Call):
                call = parent(up)
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORING:
                    yield from self._container_reads(call.func.value, call)
                    return
            current = up

    def _bound(self, targets: list[cst.BaseExpression], statement: cst.CSTNode):
        """Reads that see the bindings ``statement`` makes of ``targets`` (any element)."""
        model = self.model
        for target in targets:
            for leaf in unpack_targets(target):
                key = expr_key(leaf)
                if key is None:  # d[i] = v, self.x[k] = v: the container holds it
                    yield from self._container_reads(leaf, statement)
                    continue
                for read in self._scope_reads(statement).get(key, ()):
                    if any(b.node is statement for b in model.reaching(key, read)):
                        yield read

    def _container_reads(self, container: cst.BaseExpression, store: cst.CSTNode):
        while isinstance(container, (cst.Subscript, cst.Attribute)) and expr_key(container) is None:
            container = container.value
        key = expr_key(container)
        if key is None:
            return
        inside = set(self.ctx.ancestors(store))
        for read in self._scope_reads(store).get(key, ()):
            if read is not container and read not in inside:
                yield read

    def _scope_reads(self, node: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """Name/attribute/subscript reads in the function (or module) holding ``node``,
        comprehensions included, by key."""
        scope = self.model.scope_of(node)
        while scope.parent is not None and scope.kind == "comprehension":
            scope = scope.parent
        found = self._reads.get(scope.node)
        if found is None:
            found = self._reads[scope.node] = {}
            for sub in iter_nodes(scope.node, into_scopes=False):
                if isinstance(sub, (cst.Name, cst.Attribute, cst.Subscript)):
                    key = expr_key(sub)
                    if key is not None:
                        found.setdefault(key, []).append(sub)
        return found


def values_of(model, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a name or ``self.<attr>`` holds: the values of every binding it may see (empty
    when one is no plain assignment: a parameter, an unpacking, a loop variable...)."""
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        scope = model.scope_of(expr)
        if scope.self_name != expr.value.value or scope.cls is None:
            return []
        bindings = self_attr_bindings(model, scope.cls, expr.attr.value)
    else:
        return []
    if not bindings or any(b.kind not in ("assign", "ann") or b.value is None for b in bindings):
        return []
    return [b.value for b in bindings]


def single_value(model, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The one value a name or ``self.<attr>`` holds (``values_of``), else None."""
    values = values_of(model, expr)
    return values[0] if len(values) == 1 else None


def is_plain_number(model: SemanticModel, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A Python number for sure (see the module docstring)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return is_plain_number(model, expr.expression, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return is_plain_number(model, expr.left, depth + 1) and is_plain_number(model, expr.right, depth + 1)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name):
            return func.value in _NUMBER_CALLS and not model.is_imported(func) and (
                func.value in ("len", "int", "float", "round") or all(
                    is_plain_number(model, a.value, depth + 1) for a in expr.args))
        if isinstance(func, cst.Attribute):
            return func.attr.value in _NUMBER_METHODS or (func.attr.value == "size" and bool(expr.args)) \
                or (model.qualified_name(func) or "").startswith("math.")
        return False
    if isinstance(expr, cst.Attribute):
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        parts = (expr_key(expr) or "").split(".")
        return isinstance(root, cst.Name) and (parts[0] in _CONFIG_ROOTS or
                                               (parts[0] == "self" and len(parts) > 2 and parts[1] in _CONFIG_ROOTS))
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(_plain_binding(model, b, depth) for b in bindings)
    return False


def _plain_binding(model: SemanticModel, b, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if b.kind in ("assign", "ann"):
        return b.value is not None and is_plain_number(model, b.value, depth + 1)
    if b.kind == "aug":  # x += v: a number if v is and x was
        before = model.reaching(b.key, b.node)
        return b.value is not None and is_plain_number(model, b.value, depth + 1) and bool(before) \
            and all(_plain_binding(model, p, depth + 1) for p in before)
    if b.kind == "param" and isinstance(b.node, cst.Param):
        param = b.node
        annotation = param.annotation.annotation if param.annotation is not None else None
        if isinstance(annotation, cst.Name) and annotation.value in ("int", "float"):
            return True
        return param.default is not None and is_plain_number(model, param.default, depth + 1)
    if b.kind == "for" and isinstance(b.node, cst.For) and isinstance(b.node.iter, cst.Call):
        return isinstance(b.node.iter.func, cst.Name) and b.node.iter.func.value == "range" \
            and isinstance(b.node.target, cst.Name)
    return False


def stays_on_host(ctx, model: SemanticModel, node: cst.BaseExpression) -> bool:
    """Does this read of a tensor never meet another tensor (see the module docstring)?"""
    cur: cst.CSTNode = node
    parent = ctx.parent(cur)
    while isinstance(parent, cst.Subscript) and parent.value is cur:
        cur, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.Attribute) and parent.value is cur and parent.attr.value in _REFILLS:
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent and isinstance(ctx.parent(call), cst.Expr) \
            and all(is_plain_number(model, a.value) for a in call.args)
    if cur is node:
        return _iterated_for_conditions(ctx, model, node)
    if not (isinstance(cur, cst.Subscript) and all(isinstance(e.slice, cst.Index) for e in cur.slice)):
        return False  # a slice of it
    if isinstance(parent, cst.ComparisonTarget):
        parent = ctx.parent(parent)
    if not isinstance(parent, cst.Comparison):
        return False
    return _condition(ctx, parent)


def _condition(ctx, node: cst.BaseExpression) -> bool:
    """``node`` is (a negation, ``and``/``or`` operand or comparison side of) the test of an
    ``if``/``while``/conditional expression/``assert``: only its truth is used."""
    cur, parent = node, ctx.parent(node)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget)):
        cur, parent = parent, ctx.parent(parent)
    return isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is cur


def _iterated_for_conditions(ctx, model: SemanticModel, node: cst.BaseExpression) -> bool:
    """``for flag in t:``, ``for i, flag in enumerate(t):`` or ``zip(..., t, ...)``, where every
    read of the element ``flag`` is a branch condition (``if flag:``, ``if not flag or ...``,
    ``if flag == 1:``): each element, a 0-dim CPU tensor, only becomes a Python bool
    (pytorch_tabnet's ``continuous_idx``)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.For) and parent.iter is node:
        loop, target = parent, parent.target
    else:
        call = ctx.parent(parent) if isinstance(parent, cst.Arg) and not parent.star and parent.keyword is None else None
        loop = ctx.parent(call) if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) else None
        if not isinstance(loop, cst.For) or loop.iter is not call or model.reaching(call.func.value, call.func) \
                or any(a.keyword is not None or a.star for a in call.args):
            return False  # not the builtin, or ``enumerate(t, start=1)``
        if call.func.value == "enumerate" and len(call.args) == 1:
            position, size = 1, 2
        elif call.func.value == "zip":
            position, size = call.args.index(parent), len(call.args)
        else:
            return False
        elements = loop.target.elements if isinstance(loop.target, (cst.Tuple, cst.List)) else ()
        if len(elements) != size or any(not isinstance(e, cst.Element) for e in elements):
            return False
        target = elements[position].value
    if not isinstance(target, cst.Name):
        return False
    name = target.value
    reads = [n for part in (loop.body, loop.orelse) if part is not None for n in iter_nodes(part)
             if isinstance(n, cst.Name) and n.value == name and any(b.node is loop for b in model.reaching(name, n))]
    return all(_condition(ctx, n) for n in reads)
