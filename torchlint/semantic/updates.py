"""What an optimizer step applies: the gradients written since its optimizer's were last
cleared, and which models the losses behind them reach.

An ``opt.step()`` uses whatever ``.grad`` its parameters hold: those written by the
backwards run since ``opt``'s gradients were last cleared. The facts, over one file:

* ``Event``: one thing an iteration does to gradients, in its code scope (function, lambda,
  class or module body): ``backward`` (a backward-like call: ``loss.backward()``,
  ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``, ``torch.autograd.grad``,
  a timm-style ``loss_scaler(loss, opt)``), ``helper`` (a call of a same-file function that
  runs one, through the loose call graph, or of code torchlint cannot see that might: an
  unresolved ``self.<method>()``, a project import or a name defined nowhere in the file, named
  like a training routine (``backward_G``, ``train_batch``, ``update``, ``step_fn``), or
  anything handed a value bound to a loss), ``clear`` (``zero_grad()`` of the optimizer, of a module it covers,
  ``p.grad = None``, ``zero_grad(model)``), ``step`` (of any optimizer). A gradient written by
  hand (``p.grad = g``, anything but None) is a ``backward`` with no target.
* ``step_history(sem, site, key)``: for the step ``site`` of the optimizer ``key``, the events
  of its iteration read backwards from the step: within the innermost loop around it in its
  code scope, the body's events before the step, then (the previous iteration) those after
  it; outside a loop, the events before it in its function. ``StepHistory.since_clear`` are
  the events between the last clearing of ``key`` and the step (``cleared``: one was found),
  ``before_clear`` those of the same pass before that clearing, ``in_loop`` whether the step
  repeats; ``since_update`` the events back to the last step or clearing of any optimizer
  (what this update phase ran), ``opened_by`` that step or clearing.
* ``optimizer_covers(sem, site, key)``: the module keys the optimizer ``key`` stepped at
  ``site`` covers (``wiring.optimizer_bindings`` reaching the step; for a parameter of the
  function, what every same-file caller passes, renamed to the function's parameters; None
  when its construction is not in this file or covers nothing known).
* ``visible_optimizers(sem, site)``: the optimizer constructions code at ``site`` can name;
  ``handed_optimizers(sem, site)``: the optimizers its function is handed, with what they cover;
  ``model_keys(sem, site)``: the models it may call besides what they cover.
* ``models_reached(sem, expr, models)``: which of ``models`` (module keys such as ``netD``,
  ``self.generator``) the value of ``expr`` is computed from: a call of the model or of a
  submodule (``netD(x)``, ``self.G.forward(z)``), a parameter of it read, a model handed to a
  function (``gradient_penalty(netD, real, fake)``), a same-file function using it, through
  names (every binding that may reach the read), unpacking, arithmetic, methods and calls;
  never through ``.detach()``, ``.data``, ``.item()``, ``.numpy()``, ``.tolist()``. Generous
  on purpose: a rule uses an empty intersection as evidence. ``models_reached_where`` gives,
  for each model, the nodes where the value meets it (a rule can ask whether that happens in
  the step's own iteration).
* ``within(sem, node, outer)``: ``node`` lies inside ``outer``.
* ``is_loss_value(sem, expr)``: a loss or criterion call, or a name bound to one.
* ``kept_optimizer_steps(sem, function)``: the optimizers a method keeps on its object
  (``self.optimizer``) and steps after a backward of its own, outside any loop of it, when
  nothing in the file calls the method and nothing in its class clears them: each call (from
  another file, a notebook's loop) adds to the gradients the calls before left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torchlint import libraries
from torchlint.semantic.callgraph import enclosing_function, passed_argument
from torchlint.semantic.dataflow import gradient_target
from torchlint.semantic.gradients import clears_all_gradients, clearing_nodes, module_clears
from torchlint.semantic.wiring import covered_modules, covers as _inside, optimizer_bindings
from torchlint.torch_api import (expr_key, is_loss_constructor, is_loss_function, is_optimizer_constructor,
                                 looks_like_criterion_name, looks_like_model_name, looks_like_optimizer_name)
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import CallSite

BACKWARD, HELPER, CLEAR, STEP = "backward", "helper", "clear", "step"
_DETACHING = frozenset({"detach", "detach_", "item", "numpy", "tolist", "data"})
_BUILTINS = frozenset({"print", "len", "range", "enumerate", "zip", "float", "int", "str", "list", "dict", "tuple",
                       "set", "min", "max", "sum", "abs", "round", "isinstance", "getattr", "setattr", "hasattr",
                       "sorted", "reversed", "next", "iter", "format", "repr", "bool", "type", "map", "filter",
                       "any", "all", "open", "super", "divmod", "pow", "vars", "id", "hash", "input", "exit"})
_TRAINING_WORDS = ("backward", "backprop", "grad", "train", "update", "step", "optimi", "fit", "learn", "closure")
_MAX_DEPTH = 16  # names followed to their bindings


@dataclass(eq=False)
class Event:
    kind: str  # BACKWARD | HELPER | CLEAR | STEP
    node: cst.CSTNode
    order: int
    key: str | None = None  # CLEAR: the optimizer or module cleared (None: every gradient); STEP: the optimizer
    target: cst.BaseExpression | None = None  # BACKWARD: what is differentiated


@dataclass(eq=False)
class StepHistory:
    since_clear: list = field(default_factory=list)  # Events between the last clearing and the step, latest first
    before_clear: list = field(default_factory=list)  # Events of the same pass before that clearing, latest first
    cleared: Event | None = None
    in_loop: bool = False
    after: list = field(default_factory=list)  # Events after the step in its iteration (or function), in order
    since_update: list = field(default_factory=list)  # Events back to the last step or clearing of any optimizer, latest first
    opened_by: Event | None = None  # the step or clearing that ends ``since_update`` (None: none before it)


def optimizer_covers(sem: "Analyses", site: "CallSite", key: str, depth: int = 0) -> tuple | None:
    """The module keys covered by the optimizer ``key`` stepped at ``site`` (see the module
    docstring)."""
    model = sem.model
    head = key.split(".")[0].split("[")[0]
    if key == head:
        bindings = model.lookup(key, site.scope, site.node)
        if bindings and all(b.kind == "param" for b in bindings):
            return _passed_covers(sem, site, key, depth)
    wired = [w for w in optimizer_bindings(sem) if w.binding.key == key]
    if not wired:
        return None
    if key == head:
        reaching = {id(b) for b in model.lookup(key, site.scope, site.node)}
        wired = [w for w in wired if id(w.binding) in reaching]
    found = tuple(m for w in wired for m in w.covers)
    return found if wired and all(w.covers for w in wired) else None


def _passed_covers(sem: "Analyses", site: "CallSite", param: str, depth: int) -> tuple | None:
    """An optimizer parameter of the function holding ``site``: what every caller in the file
    passes covers, named as that function's parameters (``train(netD, netG, optD, optG)`` called
    as ``train(d, g, Adam(d.parameters()), ...)`` -> ``netD``). None when a caller passes
    something unknown, a covered module is not passed, or no caller is in the file."""
    model, graph = sem.model, sem.graph
    function = enclosing_function(model, site.scope)
    if not isinstance(function, cst.FunctionDef) or depth > 2:
        return None
    callers = graph.callers(function)
    if not callers:
        return None
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                      *function.params.kwonly_params)]
    out: list[str] = []
    for caller in callers:
        passed = passed_argument(model, caller, function, param)
        if isinstance(passed, cst.Call) and is_optimizer_constructor(sem.ctx, passed.func):
            covered = tuple(covered_modules(sem, passed))  # ``train(..., Adam(d.parameters()))``
        else:
            passed_key = expr_key(passed) if passed is not None else None
            if passed_key is None:
                return None
            covered = optimizer_covers(sem, caller, passed_key, depth + 1)
        if not covered:
            return None
        names = {}
        for q in params:
            given = passed_argument(model, caller, function, q)
            given_key = expr_key(given) if given is not None else None
            if given_key is not None:
                names[given_key] = q
        for module in covered:
            base, rest = module, ""
            while base not in names and "." in base:
                base, tail = base.rsplit(".", 1)
                rest = "." + tail + rest
            if base not in names:
                return None
            out.append(names[base] + rest)
    return tuple(dict.fromkeys(out))


def visible_optimizers(sem: "Analyses", site: "CallSite") -> list:
    """The optimizer constructions of the file (``wiring.optimizer_bindings``, covering something
    known) that code at ``site`` can name: a name bound where a read there may see it, a
    ``self.<attr>`` of the same class."""
    model = sem.model
    out = []
    cls = site.scope.cls
    for wired in optimizer_bindings(sem):
        b = wired.binding
        if not wired.covers:
            continue
        if "." not in b.key and "[" not in b.key:
            if any(other is b for other in model.lookup(b.key, site.scope, site.node)):
                out.append(wired)
        elif b.key.startswith("self.") and cls is not None and b.scope.cls is cls:
            out.append(wired)
    return out


def handed_optimizers(sem: "Analyses", site: "CallSite") -> dict:
    """The parameters of the function around ``site`` named like optimizers (``d_optimizer``)
    whose coverage the file's callers tell (``optimizer_covers``), with what each covers."""
    function = enclosing_function(sem.model, site.scope)
    out: dict = {}
    if isinstance(function, cst.FunctionDef):
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            name = param.name.value
            if looks_like_optimizer_name(name):
                covered = _passed_covers(sem, site, name, 0)
                if covered:
                    out[name] = covered
    return out


def model_keys(sem: "Analyses", site: "CallSite") -> frozenset:
    """Names of models code at ``site`` may call besides what an optimizer covers: the file's
    model bindings (``netD = Discriminator()``) and the parameters of the function around it
    named like a model (``def train(generator, discriminator, ...)``)."""
    found = set(sem.training.bindings["model"])
    function = enclosing_function(sem.model, site.scope)
    if isinstance(function, cst.FunctionDef):
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            if looks_like_model_name(param.name.value):
                found.add(param.name.value)
    return frozenset(found)


def _events(sem: "Analyses", code: cst.CSTNode) -> list[Event]:
    """Every event of the code scope ``code``, in source order (memoised)."""
    memo = sem.model.memo("updates_events")
    if not memo:
        memo.update(_all_events(sem))
    return memo.get(code, [])


def _all_events(sem: "Analyses") -> dict:
    model, training, graph, ctx = sem.model, sem.training, sem.loose_graph, sem.ctx
    backward_fns = training.closure("backward", graph)
    steps = {site: key for site, key in training.sites.step}
    clears = {site: key for site, key in training.sites.zero_grad}
    backwards = set(training.sites.backward)
    # ``scaler.scale(loss)`` in ``scaler.scale(loss).backward()``: part of the backward
    inner = {id(n) for b in backwards for n in iter_nodes(b.node.func) if n is not b.node}
    out: dict = {}
    for site in model.calls:
        call = site.node
        if id(call) in inner:
            continue
        code = model.code_scope(site.scope).node
        if site in backwards or (site not in steps and gradient_target(ctx, call) is not None):
            target = gradient_target(ctx, call)
            event = Event(BACKWARD, call, site.order, target=target)
            out.setdefault(code, []).append(event)
            if site in steps:  # loss_scaler(loss, opt): backward and step in one call
                out[code].append(Event(STEP, call, site.order, key=steps[site]))
            continue
        if site in steps:
            out.setdefault(code, []).append(Event(STEP, call, site.order, key=steps[site]))
            continue
        if site in clears:
            out.setdefault(code, []).append(Event(CLEAR, call, site.order, key=clears[site]))
            continue
        if clears_all_gradients(call.func):
            out.setdefault(code, []).append(Event(CLEAR, call, site.order))
            continue
        targets = graph.targets(site) + graph.references(site)
        if any(t in backward_fns for t in targets) or (not targets and _opaque(sem, site)):
            out.setdefault(code, []).append(Event(HELPER, call, site.order))
    for node in clearing_nodes(model):
        code = model.code_scope(model.scope_of(node)).node
        kind = BACKWARD if _writes_gradient(node) else CLEAR  # ``p.grad = g``: a gradient written by hand
        out.setdefault(code, []).append(Event(kind, node, model.order.get(node, 0)))
    for events in out.values():
        events.sort(key=lambda e: e.order)
    return out


def _writes_gradient(node: cst.CSTNode) -> bool:
    """``p.grad = value`` with a value that is not None: a gradient set on purpose (zeros too:
    an optimizer test stepping weight decay alone)."""
    value = getattr(node, "value", None)
    if not isinstance(node, (cst.Assign, cst.AnnAssign)) or value is None:
        return False
    return not (isinstance(value, cst.Name) and value.value == "None")


def _opaque(sem: "Analyses", site: "CallSite") -> bool:
    """A call torchlint cannot follow that might run a backward (see the module docstring)."""
    model, call = sem.model, site.node
    func = call.func
    if any(isinstance(a.value, cst.Name) and is_loss_value(sem, a.value) for a in call.args):
        name = (expr_key(func) or "").rsplit(".", 1)[-1].lower()
        if name not in _BUILTINS and name not in ("append", "item", "log", "add_scalar", "update", "format"):
            return True
    if isinstance(func, cst.Name):
        if func.value in _BUILTINS or model.lookup(func.value, site.scope, call) and not model.is_imported(func):
            return False  # a builtin, or a local value (a model, a criterion) called
        if model.is_imported(func):
            root = (model.qualified_name(func) or "").split(".")[0]
            if root in libraries.LIBRARY_ROOTS or root.startswith("torch"):
                return False
        # a project import, or defined nowhere here (another cell, a star import): by its name
        return any(w in func.value.lower() for w in _TRAINING_WORDS)
    if isinstance(func, cst.Attribute):
        owner = func.value
        scope = site.scope
        if isinstance(owner, cst.Name) and owner.value == scope.self_name and scope.cls is not None:
            attr = func.attr.value
            if attr in scope.cls.methods or attr in scope.cls.self_assigned:
                return False
            return any(w in attr.lower() for w in _TRAINING_WORDS)
        if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super":
            return any(w in func.attr.value.lower() for w in _TRAINING_WORDS)
    return False


def _clears(sem: "Analyses", event: Event, key: str, covered: tuple | None, single: bool) -> bool:
    """``event`` clears the gradients of the optimizer ``key``."""
    if event.kind != CLEAR:
        return False
    if event.key is None or event.key == key:
        return True
    if event.key in sem.training.optimizers or looks_like_optimizer_name(event.key.split("[")[0]):
        return False  # another optimizer's zero_grad()
    if covered:
        return module_clears(event.key, set(covered))
    return single  # ``model.zero_grad()`` beside one optimizer whose parameters are unknown


def step_history(sem: "Analyses", site: "CallSite", key: str) -> StepHistory:
    """The events of the step's iteration read backwards from it (see the module docstring)."""
    model = sem.model
    code = model.code_scope(site.scope)
    events = _events(sem, code.node)
    loops = [lp for lp in site.all_loops if model.code_scope(lp.scope) is code]
    loop = loops[-1] if loops else None
    if loop is not None:
        body = [e for e in events if _inside_loop(model, e.node, loop)]
    else:
        body = events
    before = [e for e in body if e.order < site.order]
    after = [e for e in body if e.order > site.order]
    history = StepHistory(in_loop=loop is not None, after=after)
    covered = optimizer_covers(sem, site, key)
    stepped = {e.key for e in events if e.kind == STEP}
    single = len(stepped) <= 1
    sequence = list(reversed(before)) + (list(reversed(after)) if loop is not None else [])
    for event in sequence:
        if event.kind in (STEP, CLEAR):
            history.opened_by = event
            break
        history.since_update.append(event)
    for i, event in enumerate(sequence):
        if _clears(sem, event, key, covered, single):
            history.cleared = event
            rest = sequence[i + 1:]
            if i < len(before):  # the same pass: what ran before the clearing in this iteration
                rest = list(reversed(before))[i + 1:]
            history.before_clear = rest
            return history
        history.since_clear.append(event)
    return history


def _inside_loop(model, node: cst.CSTNode, loop) -> bool:
    return any(lp is loop for lp in model.loops_around(node)) or node is loop.node


def models_reached(sem: "Analyses", expr: cst.BaseExpression, models: set[str] | frozenset) -> set[str]:
    """Which of ``models`` the value of ``expr`` is computed from (see the module docstring)."""
    return set(models_reached_where(sem, expr, models))


def models_reached_where(sem: "Analyses", expr: cst.BaseExpression, models: set[str] | frozenset) -> dict:
    """``models_reached`` with, for each model, the nodes (calls, reads) where the value meets it."""
    found: dict = {}
    _reach(sem, expr, frozenset(models), found, 0, set())
    return found


def _add(found: dict, hit: set, node: cst.CSTNode) -> None:
    for model in hit:
        found.setdefault(model, []).append(node)


def _match(key: str | None, models: frozenset) -> set[str]:
    if key is None:
        return set()
    return {m for m in models if key == m or _inside(m, key) or _inside(key, m)}


def _reach(sem: "Analyses", expr: cst.CSTNode, models: frozenset, found: dict, depth: int, seen: set) -> None:
    if depth > _MAX_DEPTH or id(expr) in seen:
        return
    seen.add(id(expr))
    model = sem.model
    if isinstance(expr, cst.Name):
        hit = _match(expr.value, models)
        if hit:
            _add(found, hit, expr)
            return
        bindings = list(model.reaching(expr.value, expr))
        for b in list(bindings):
            if b.value is None and within(sem, expr, b.node):
                # ``h, c = lstm(x, (h, c))``: the read in the statement sees the earlier bindings too
                bindings += [e for e in model.reaching(expr.value, b.node) if e is not b]
        for value in _stored_into(sem, expr):
            _reach(sem, value, models, found, depth + 1, seen)
        for b in bindings:
            if b.kind in ("assign", "ann", "aug", "unpack", "for", "with"):
                value = b.value if b.value is not None else _bound_value(b.node)
                if value is not None:
                    _reach(sem, value, models, found, depth + 1, seen)
                if b.kind == "aug":  # ``loss += x``: the earlier value too
                    for earlier in model.reaching(expr.value, b.node):
                        if earlier is not b and earlier.value is not None:
                            _reach(sem, earlier.value, models, found, depth + 1, seen)
        return
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in _DETACHING:
            return
        hit = _match(expr_key(expr), models)
        if hit:
            _add(found, hit, expr)
            return
        _reach(sem, expr.value, models, found, depth, seen)
        return
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _DETACHING:
            return
        callee = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        hit = _match(expr_key(callee), models)
        _add(found, hit, expr)
        if not hit:
            site = model.call_site(expr)
            for target in (sem.loose_graph.targets(site) if site is not None else ()):
                for node in iter_nodes(target):
                    if isinstance(node, (cst.Name, cst.Attribute)):
                        _add(found, _match(expr_key(node), models), expr)
            if isinstance(func, cst.Attribute):
                _reach(sem, func.value, models, found, depth, seen)
        for arg in expr.args:
            _reach(sem, arg.value, models, found, depth, seen)
        return
    for child in expr.children:
        if isinstance(child, (cst.BaseExpression, cst.Arg, cst.BaseElement, cst.BaseDictElement, cst.Index,
                              cst.SubscriptElement, cst.Slice, cst.ComparisonTarget, cst.FormattedStringExpression)):
            _reach(sem, child, models, found, depth, seen)


_FILLING = frozenset({"append", "extend", "insert", "add", "update", "copy_", "add_", "index_put_", "index_copy_",
                      "masked_scatter_", "scatter_", "put_"})


def _stored_into(sem: "Analyses", name: cst.Name) -> list[cst.BaseExpression]:
    """What the code around ``name`` stores into the object it names: ``outs[t] = y``,
    ``outs.append(y)``, ``buf.copy_(y)`` (the object filled in place)."""
    model = sem.model
    code = model.code_scope(model.scope_of(name))
    memo = model.memo("updates_stored_into")
    table = memo.get(code.node)
    if table is None:
        table = memo[code.node] = {}
        for node in iter_nodes(code.node, into_scopes=False):
            if isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, (cst.Subscript, cst.Attribute)):
                        root = target
                        while isinstance(root, (cst.Subscript, cst.Attribute)):
                            root = root.value
                        if isinstance(root, cst.Name):
                            table.setdefault(root.value, []).append(node.value)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in _FILLING and isinstance(node.func.value, cst.Name):
                table.setdefault(node.func.value.value, []).extend(a.value for a in node.args)
    return table.get(name.value, [])


def within(sem: "Analyses", node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    """``node`` lies inside ``outer``."""
    parent = sem.ctx.parent
    current = parent(node)
    while current is not None:
        if current is outer:
            return True
        current = parent(current)
    return False


def _bound_value(node: cst.CSTNode) -> cst.BaseExpression | None:
    """What an unpacking / ``for`` / ``with`` binding binds from."""
    if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return node.value
    if isinstance(node, cst.For):
        return node.iter
    if isinstance(node, cst.With):
        return node.items[0].item if node.items else None
    return None


def is_loss_value(sem: "Analyses", expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A loss or criterion call, or a name bound (every binding) to one (see the module docstring)."""
    model, ctx = sem.model, sem.ctx
    if isinstance(expr, cst.Name) and depth < 4:
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(b.value is not None and is_loss_value(sem, b.value, depth + 1) for b in bindings)
    if isinstance(expr, cst.BinaryOperation):
        return is_loss_value(sem, expr.left, depth + 1) or is_loss_value(sem, expr.right, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if is_loss_function(ctx, func) or is_loss_constructor(ctx, func):
        return False if is_loss_constructor(ctx, func) else True
    key = expr_key(func)
    if key is not None and looks_like_criterion_name(key):
        return True
    return key in sem.training.bindings["criterion"]


def enclosing(sem: "Analyses", site: "CallSite") -> cst.CSTNode:
    """The function (or module) whose code holds ``site``."""
    return enclosing_function(sem.model, site.scope)


def kept_optimizer_steps(sem: "Analyses", function: cst.CSTNode) -> frozenset[str]:
    """The ``self.<attr>`` optimizers ``function`` steps (see the module docstring); empty where
    it is no such method (``__init__``, a Lightning ``training_step``, a method the file calls,
    one whose class clears those optimizers, or every gradient, in any method)."""
    model, training = sem.model, sem.training
    scope = model.scopes.get(function)
    if not isinstance(function, cst.FunctionDef) or scope is None or scope.cls is None or scope.self_name is None \
            or function.name.value in ("__init__", "training_step") or sem.graph.callers(function):
        return frozenset()
    prefix = scope.self_name + "."
    kept = {key for site, key in training.sites.step if site.scope is scope and not site.loops and key
            and key.startswith(prefix) and key[len(prefix):] in scope.cls.self_assigned}
    if not kept or not any(site.scope is scope and not site.loops for site in training.sites.backward):
        return frozenset()
    for site, key in training.sites.zero_grad:
        if site.scope.cls is scope.cls and (key is None or key in kept or not looks_like_optimizer_name(key)):
            return frozenset()  # the optimizer's, or a module's (its parameters)
    if any(model.scope_of(node).cls is scope.cls for node in clearing_nodes(model)):
        return frozenset()
    return frozenset(kept)
