"""Which modules an optimizer is wired to, and the later changes of a model it does not see.

An optimizer holds the parameter tensors it was given when it was built; a layer put into
the model afterwards, or a model built again under the same name, brings new tensors the
optimizer never updates. The facts, over one file's semantic model:

* ``covered_modules(sem, call)``: the module keys (``model``, ``model.fc``, ``self.net``)
  whose ``.parameters()`` / ``.named_parameters()`` an optimizer construction ``call`` is
  given: directly, through ``filter(...)``, ``list(...)``, ``itertools.chain(...)``, ``+``,
  a list or tuple, parameter-group dicts (``{"params": model.fc.parameters(), "lr": ...}``),
  and names bound once to one of those (``params = model.parameters()``). Empty when the
  parameters come from anything else (a function's parameter, ``get_params(model)``).
* ``optimizer_bindings(sem)``: each plain assignment of a library optimizer construction
  (``opt = torch.optim.SGD(...)``, ``self.opt = Adam(...)``), or of a call of a same-file
  factory every return of which builds one (``opt = make_optimizer(model, lr)``: the
  factory's parameters mapped to what the call passes), with the modules it covers.
* ``parameter_stores(sem, scope)``: the statements of ``scope`` (in source order) that put a
  new layer or parameter into an existing object: ``X.a = <module>``, ``X.a[i] = <module>``,
  ``X.add_module(name, <module>)`` / ``register_module`` / ``register_parameter``,
  ``setattr(X, name, <module>)``; ``<module>`` builds something that holds parameters (a
  ``torch.nn`` layer that is not parameter-free, ``nn.Parameter``, a class that may be a
  module; a name bound once to one followed). ``nn.Identity()``, ``nn.ReLU()``, ``None`` are
  not: they add nothing to train.
* ``rebuilds(sem, key, scope, after)``: bindings of ``key`` in ``scope`` after ``after`` that
  build or load a fresh module (``model = Net()``, ``model = models.resnet18(...)``,
  ``net = Net2()`` of a class defined elsewhere, ``model = get_model(args)``,
  ``torch.load(path)``), not one that wraps or moves the old one
  (``model = nn.DataParallel(model)``, ``model = model.to(dev)``: the same parameters).
* ``steps_after(sem, scope, node, key)``: whether code of ``scope`` after ``node`` steps the
  optimizer ``key``: a step site of it, a call of a same-file function that steps it (the
  name read there is the one of ``scope``, not a local of its own), or a call handed it.
* ``rewired_after(sem, scope, key, node)``: the optimizer ``key`` is built again, or given
  ``add_param_group(...)``, in ``scope`` after ``node``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from torchlint.semantic.callgraph import enclosing_function, passed_argument
from torchlint.semantic.modules import constructions, is_parameter, parameter_free
from torchlint.torch_api import expr_key, is_optimizer_constructor
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import Binding, Scope

_PARAMETER_METHODS = ("parameters", "named_parameters")
_PASS_THROUGH = ("filter", "list", "tuple", "chain", "itertools.chain", "set", "sorted")
_REGISTER = ("add_module", "register_module", "register_parameter")
# Methods returning their module itself (the parameters stay the same tensors).
_SAME_MODULE = ("to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_",
                "type", "share_memory", "apply", "compile")
_MAX_DEPTH = 6


class OptimizerBinding(NamedTuple):
    binding: "Binding"  # ``opt = Optim(...)``
    call: cst.Call  # the construction
    covers: tuple  # module keys whose parameters it was given


class ParameterStore(NamedTuple):
    node: cst.CSTNode  # the statement (Assign / Expr holding the call)
    target: str  # the key stored into: ``model.fc``, ``model.classifier[6]``, ``model.<added>``
    root: str  # the object stored into (``model``)
    value: cst.BaseExpression  # what is stored


def covered_modules(sem: "Analyses", call: cst.Call) -> list[str]:
    """The module keys whose parameters an optimizer construction is given (see the module
    docstring)."""
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    if first is None:
        first = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "params"), None)
    out: list[str] = []
    if first is not None:
        _collect(sem, first, out, 0)
    return out


def _collect(sem: "Analyses", expr: cst.BaseExpression, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    model = sem.model
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETER_METHODS:
            key = expr_key(_unwrap_same(func.value))
            if key is not None:
                out.append(key)
            return
        name = model.qualified_name(func) or (func.value if isinstance(func, cst.Name) else "")
        if name in _PASS_THROUGH or name.rsplit(".", 1)[-1] in ("chain",):
            for arg in expr.args:
                _collect(sem, arg.value, out, depth + 1)
        return
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        for element in expr.elements:
            _collect(sem, element.value, out, depth + 1)
        return
    if isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                    and element.key.value.strip("'\"") == "params":
                _collect(sem, element.value, out, depth + 1)
        return
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        _collect(sem, expr.left, out, depth + 1)
        _collect(sem, expr.right, out, depth + 1)
        return
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        for f in _comp_iters(expr):
            _collect(sem, f, out, depth + 1)
        return
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
        if len(bindings) == 1 and bindings[0].kind in ("assign", "ann") and bindings[0].value is not None:
            _collect(sem, bindings[0].value, out, depth + 1)


def _comp_iters(comp: cst.ListComp | cst.GeneratorExp) -> list[cst.BaseExpression]:
    found, clause = [], comp.for_in
    while clause is not None:
        found.append(clause.iter)
        clause = clause.inner_for_in
    return found


def _unwrap_same(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``model.to(device)`` -> ``model``: the same module, the same parameters."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_MODULE:
        expr = expr.func.value
    return expr


def optimizer_bindings(sem: "Analyses") -> list[OptimizerBinding]:
    """Each plain assignment of a library optimizer construction, with what it covers."""
    memo = sem.model.memo("wiring_optimizer_bindings")
    if None in memo:
        return memo[None]
    found: list[OptimizerBinding] = []
    ctx = sem.ctx
    for scope in sem.model.scopes.values():
        for bindings in scope.bindings.values():
            for b in bindings:
                value = b.value
                if b.kind not in ("assign", "ann") or not isinstance(value, cst.Call):
                    continue
                if is_optimizer_constructor(ctx, value.func):
                    found.append(OptimizerBinding(b, value, tuple(covered_modules(sem, value))))
                    continue
                built = _factory_covers(sem, value)
                if built is not None:
                    found.append(OptimizerBinding(b, value, built))
    found.sort(key=lambda o: o.binding.order)
    memo[None] = found
    return found


def _factory_covers(sem: "Analyses", call: cst.Call) -> tuple | None:
    """A call of a same-file function every ``return`` of which builds a library optimizer
    (``def make_optimizer(net, lr): return torch.optim.SGD(net.parameters(), lr)``): the
    modules it covers, named as the caller passes them (``make_optimizer(model, 0.1)`` ->
    ``model``). None when it is no such call."""
    site = sem.model.call_site(call)
    targets = sem.graph.targets(site) if site is not None else []
    if len(targets) != 1 or not isinstance(targets[0], cst.FunctionDef):
        return None
    function = targets[0]
    returns = [r.value for r in sem.model.scopes[function].returns]
    if not returns or not all(isinstance(v, cst.Call) and is_optimizer_constructor(sem.ctx, v.func) for v in returns):
        return None
    out: list[str] = []
    for value in returns:
        for key in covered_modules(sem, value):
            head, _, rest = key.partition(".")
            passed = passed_argument(sem.model, site, function, head)
            passed_key = expr_key(_unwrap_same(passed)) if passed is not None else None
            if passed_key is not None:
                out.append(passed_key + ("." + rest if rest else ""))
    return tuple(out)


def holds_parameters(sem: "Analyses", value: cst.BaseExpression, depth: int = 0) -> bool:
    """``value`` builds a layer or parameter that has something to train (see the module
    docstring): through ``a if c else b`` and a name bound once."""
    model = sem.model
    if isinstance(value, cst.Name) and depth < _MAX_DEPTH:
        bindings = model.reaching(value.value, value)
        return len(bindings) == 1 and bindings[0].kind in ("assign", "ann") and bindings[0].value is not None \
            and holds_parameters(sem, bindings[0].value, depth + 1)
    if is_parameter(model, value):
        return True
    built = constructions(model, value)
    return bool(built) and all(not parameter_free(model, b) and not _not_module(b) for b in built)


def _not_module(built) -> bool:
    """A class call that builds no module for sure: a plain data or standard-library call."""
    return built.kind == "class" and built.name.split(".")[0] in ("numpy", "np", "pandas", "math", "random", "os")


def parameter_stores(sem: "Analyses", scope: "Scope") -> list[ParameterStore]:
    """The statements of ``scope`` that put a new layer or parameter into an existing object
    (see the module docstring), in source order."""
    memo = sem.model.memo("wiring_parameter_stores")
    if scope.node in memo:
        return memo[scope.node]
    found: list[ParameterStore] = []
    model = sem.model
    for bindings in scope.bindings.values():
        for b in bindings:
            if b.kind != "assign" or b.value is None or not isinstance(b.node, cst.Assign):
                continue
            for target in b.node.targets:
                node = target.target
                if not isinstance(node, (cst.Attribute, cst.Subscript)):
                    continue
                key, root = expr_key(node), _root(node)
                if key is None or root is None or key != b.key or not holds_parameters(sem, b.value):
                    continue
                if root == scope.self_name and node.value is not None and isinstance(node, cst.Attribute) \
                        and isinstance(node.value, cst.Name):
                    continue  # ``self.fc = ...``: the object's own construction
                found.append(ParameterStore(b.node, key, root, b.value))
    for site in scope.calls:
        store = _registering_call(sem, site.node)
        if store is not None:
            statement = sem.ctx.parent(site.node)
            if isinstance(statement, cst.Expr):
                found.append(ParameterStore(statement, *store))
    found.sort(key=lambda s: model.order.get(s.node, 0))
    memo[scope.node] = found
    return found


def _registering_call(sem: "Analyses", call: cst.Call) -> tuple[str, str, cst.BaseExpression] | None:
    func = call.func
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if isinstance(func, cst.Attribute) and func.attr.value in _REGISTER and len(args) >= 2:
        owner = expr_key(func.value)
        root = _root(func.value)
        if owner is None or root is None or (isinstance(func.value, cst.Name) and
                                              func.value.value == sem.model.scope_of(call).self_name):
            return None
        if holds_parameters(sem, args[1]):
            return f"{owner}.<added>", root, args[1]
    if isinstance(func, cst.Name) and func.value == "setattr" and len(args) == 3:
        owner, root = expr_key(args[0]), _root(args[0])
        if owner is not None and root is not None and root != sem.model.scope_of(call).self_name \
                and holds_parameters(sem, args[2]):
            return f"{owner}.<added>", root, args[2]
    return None


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def covers(module_key: str, target: str) -> bool:
    """``target`` (``model.fc``, ``model.classifier[6]``) lies inside the module ``module_key``."""
    return target.startswith(module_key) and target[len(module_key):][:1] in (".", "[")


def rebuilds(sem: "Analyses", key: str, scope: "Scope", after: cst.CSTNode) -> list["Binding"]:
    """Bindings of ``key`` in ``scope`` after ``after`` that build a fresh module (see the
    module docstring)."""
    order = sem.model.order.get(after, 0)
    out = []
    for b in scope.bindings.get(key, ()):
        if b.order <= order or b.kind not in ("assign", "ann") or b.value is None:
            continue
        if any(isinstance(n, cst.Name) and n.value == key.split(".")[0] for n in iter_nodes(b.value)):
            continue  # wraps or moves the old module: ``model = DataParallel(model)``
        if is_parameter(sem.model, b.value):
            continue
        if holds_parameters(sem, b.value) or _fresh_object(sem, b.value):
            out.append(b)
    return out


_BUILTIN_CALLS = frozenset({"str", "int", "float", "bool", "dict", "list", "tuple", "set", "len", "print", "repr",
                            "getattr", "type", "super", "range", "zip", "enumerate", "sorted", "min", "max"})


def _fresh_object(sem: "Analyses", value: cst.BaseExpression) -> bool:
    """A call that builds or loads a new object whose class torchlint cannot see (``Net2()``
    from another cell, ``get_model(args)``, ``torch.load(path)``): not a builtin, not a
    method of something else (``cfg.get(...)``), not parameter-free."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Name):
        return func.value not in _BUILTIN_CALLS and not constructions(sem.model, value)
    qualified = sem.model.qualified_name(func) or ""
    return qualified in ("torch.load", "torch.jit.load") or (
        sem.model.is_imported(func) and qualified.split(".")[0] in ("torchvision", "timm", "transformers"))


def rewired_after(sem: "Analyses", scope: "Scope", key: str, node: cst.CSTNode) -> bool:
    """``key`` is built again, or given ``add_param_group(...)``, in ``scope`` after ``node``."""
    order = sem.model.order.get(node, 0)
    if any(b.order > order for b in scope.bindings.get(key, ())):
        return True
    for site in scope.calls:
        func = site.node.func
        if site.order > order and isinstance(func, cst.Attribute) and func.attr.value == "add_param_group" \
                and expr_key(func.value) == key:
            return True
    return False


def steps_after(sem: "Analyses", scope: "Scope", node: cst.CSTNode, key: str) -> bool:
    """Code of ``scope`` after ``node`` steps the optimizer ``key`` (see the module docstring)."""
    model, training, graph = sem.model, sem.training, sem.graph
    order = model.order.get(node, 0)
    own: set = set()  # functions stepping ``key`` as ``scope`` names it
    for site, stepped in training.sites.step:
        if stepped != key:
            continue
        function = enclosing_function(model, site.scope)
        if site.scope is scope or model.scopes.get(function) is scope:
            if site.order > order:
                return True
            continue
        if model.lookup(key.split(".")[0].split("[")[0], site.scope) and \
                _binds_locally(model, function, key):
            continue
        own.add(function)
    stepping = graph.closure(own) if own else set()
    for site in graph.sites(scope.node):
        if site.order <= order:
            continue
        if any(t in stepping for t in graph.targets(site)):
            return True
        if any(expr_key(a.value) == key for a in site.node.args):
            return True
    return False


def _binds_locally(model, function: cst.CSTNode, key: str) -> bool:
    scope = model.scopes.get(function)
    return scope is not None and scope.parent is not None and (
        key in scope.bindings or key.split(".")[0] in scope.bindings and "." not in key)
