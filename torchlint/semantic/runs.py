"""What kind of optimisation run the code is, beyond "it calls backward and step".

* ``file_trains(semantic)``: the file trains: a backward, an optimizer step or construction,
  a trainer (``Trainer(...)``, ``trainer.fit``), a ``training_step``.

Not every optimizer makes a training run:

* ``optimises_inputs(semantic)``: the file optimises an input tensor, not a model (style
  transfer, feature visualisation, adversarial examples): every optimizer it builds is over
  a list of tensors (``LBFGS([input_img])``, ``Adam([delta])``) or the ``.parameters()`` of a
  same-file module that only wraps ``nn.Parameter`` tensors (a generated image), and
  the model is frozen, switched to eval mode or loaded pretrained. Its learning rate and step
  count are properties of the procedure, not training hyperparameters, and its randomness is
  not a training run's.
* ``solves_for_tensor(semantic, call)``: the optimizer built by ``call`` is over tensors the
  function starts from an existing value (``m = nn.Parameter(x.detach())``,
  ``adv = img.clone().requires_grad_()``) and returns (``return m.detach()``): a numerical
  solve for a value (a distribution's mode, an adversarial example), not a training run.
* ``single_demo_step(semantic, call)``: the optimizer built by ``call`` is stepped, never in a
  loop and never handed to other code (a smoke test or an API demo under ``__main__``); in a
  function no code of the file calls, only when the model sees nothing but made-up tensors
  (``torch.randn(...)``, ``torch.zeros(...)``): a one-step pretraining demo.
* ``makes_no_run(semantic, call)``: either of those, or ``state_restored`` (a checkpoint
  replaces the optimizer's settings right away).
* ``lr_set_every_step(semantic, call)``: the loop that steps the optimizer built by ``call``
  writes every param group's ``lr`` from a computed value (``g["lr"] = schedule(step)``), so
  the ``lr`` passed to the constructor never takes effect. Across files:
  ``returned_by(semantic, call)`` names the function handing the optimizer to another file,
  ``lr_overwritten_callees(semantic)`` the callables whose optimizer a file's loop overwrites.

* ``optimizer_from_config(semantic)``: the file builds its optimizers with a learning rate read
  from a config object, the arguments or a hyperparameter dict (``SGD(..., lr=args.lr0)``,
  ``smart_optimizer(model, name, hyp["lr0"])``, ``self.optimizer = self.build_optimizer(lr=self.args.lr0)``):
  its hyperparameters are configured, so a literal left beside them is a fixed choice.

``held_as(semantic, call)`` says under which variables an optimizer built by ``call`` is used:
its assignment target, or, when a same-file function returns it, the targets its callers
assign the result to; each with the code scope that holds it.
"""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.literals import numeric_value
from torchlint.semantic.model import FUNCTION
from torchlint.semantic.optim_classes import library_positions
from torchlint.semantic.training import freeze_sites
from torchlint.statements import dotted_name
from torchlint.torch_api import expr_key, is_optimizer_constructor, keyword_arg, mode_switch, scheduler_kind
from torchlint.tree import iter_nodes

_PRETRAINED_CALLS = ("from_pretrained", "load_state_dict")
_PARAMETER_CALLS = ("parameters", "named_parameters", "param_groups")


def file_trains(semantic) -> bool:
    """A backward, an optimizer step or construction, a trainer, a ``training_step``."""
    training = semantic.training
    if training.sites.backward or training.sites.step or training.sites.fit \
            or training.bindings["optimizer"] or training.bindings["trainer"]:
        return True
    model = training.model
    if any(s.kind == FUNCTION and s.name == "training_step" for s in model.scopes.values()):
        return True
    ctx = model.ctx
    for site in model.calls:
        func = site.node.func
        if is_optimizer_constructor(ctx, func) \
                or (ctx.qualified_name(func) or "").rsplit(".", 1)[-1] == "Trainer" and ctx.is_imported(func):
            return True
    return False


def optimises_inputs(semantic) -> bool:
    """Every optimizer the file builds is over plain tensors (a list or tuple of names, not
    ``.parameters()``) and the model is frozen, in eval mode or loaded pretrained."""
    model = semantic.model
    built = [s.node for s in model.calls if is_optimizer_constructor(model.ctx, s.node.func)]
    return bool(built) and all(over_tensors(call) or _over_wrapped_tensor(model, call) for call in built) \
        and _model_fixed(semantic)


def _over_wrapped_tensor(model, call: cst.Call) -> bool:
    """``Adam(gen_img.parameters())`` where ``gen_img`` is built from a same-file ``nn.Module``
    that only wraps tensors: its ``__init__`` makes ``nn.Parameter`` attributes and no layer
    (the generated image of a style transfer, ``self.weight = nn.Parameter(torch.rand(*shape))``)."""
    params = _params_argument(call)
    if not (isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute)
            and params.func.attr.value == "parameters" and isinstance(params.func.value, cst.Name)):
        return False
    for binding in model.reaching(params.func.value.value, call):
        value = binding.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda"):
            value = value.func.value  # GeneratedImage(shape).to(device)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        info = model.class_named(value.func.value)
        init = model.method(info, "__init__") if info is not None else None
        if init is None or not _only_wraps_tensors(model, init):
            return False
    return bool(model.reaching(params.func.value.value, call))


def _only_wraps_tensors(model, init: cst.FunctionDef) -> bool:
    """Every ``self.<x> = ...`` of ``init`` stores an ``nn.Parameter``, and one does."""
    stores = [n for n in iter_nodes(init) if isinstance(n, cst.Assign)
              and any(isinstance(t.target, cst.Attribute) for t in n.targets)]
    return bool(stores) and all(isinstance(n.value, cst.Call)
                                and (model.ctx.qualified_name(n.value.func) or "").endswith(".Parameter")
                                for n in stores)


def _params_argument(call: cst.Call) -> cst.BaseExpression | None:
    """What an optimizer constructor is given to optimise: its first argument, or ``params=``."""
    return next((a.value for a in call.args if a.keyword is None or a.keyword.value == "params"), None)


def over_tensors(call: cst.Call) -> bool:
    """The optimizer ``call`` builds is over a list or tuple of plain tensors
    (``LBFGS([input_img])``, ``SGD([patch])``), never ``.parameters()``: it optimises inputs."""
    params = _params_argument(call)
    if not isinstance(params, (cst.List, cst.Tuple)) or not params.elements:
        return False
    for element in params.elements:
        value = element.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "requires_grad_":
            value = value.func.value
        if not isinstance(value, (cst.Name, cst.Attribute)) or _mentions_parameters(value):
            return False
    return True


def solves_for_tensor(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds is over local tensors started from an existing value
    (a ``.detach()`` or ``.clone()`` of it), and the function returns them."""
    model = semantic.model
    function = model.scope_of(call).function()
    if function is None or not over_tensors(call):
        return False
    params = _params_argument(call)
    returned = _returned_names(function.node)
    for element in params.elements:
        value = element.value
        bindings = model.reaching(value.value, call) if isinstance(value, cst.Name) else []
        if not bindings or value.value not in returned or any(
                b.scope is not function or b.kind != "assign" or not _copies_a_value(b.value) for b in bindings):
            return False
    return True


def _copies_a_value(expr: cst.BaseExpression | None) -> bool:
    """``expr`` holds a ``.detach()`` / ``.clone()`` of another value: a starting point, not a
    fresh initialisation."""
    return expr is not None and any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in ("detach", "clone")
        for n in iter_nodes(expr))


def _returned_names(function: cst.FunctionDef) -> set[str]:
    """Names a function returns, bare or through an attribute or method (``m.detach()``,
    ``m.data``), alone or in a tuple (nested functions excluded)."""
    out: set[str] = set()
    for node in iter_nodes(function.body, into_scopes=False):
        if isinstance(node, cst.Return) and node.value is not None:
            values = [e.value for e in node.value.elements] if isinstance(node.value, cst.Tuple) else [node.value]
            for value in values:
                while isinstance(value, (cst.Call, cst.Attribute)):
                    value = value.func if isinstance(value, cst.Call) else value.value
                if isinstance(value, cst.Name):
                    out.add(value.value)
    return out


def _mentions_parameters(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Name) and n.value in _PARAMETER_CALLS for n in iter_nodes(expr))


def _model_fixed(semantic) -> bool:
    """A model is frozen, switched to eval mode, or loaded with pretrained weights."""
    model = semantic.model
    if freeze_sites(model):
        return True
    for site in model.calls:
        call = site.node
        func = call.func
        if mode_switch(call) is False or isinstance(func, cst.Attribute) and func.attr.value in _PRETRAINED_CALLS:
            return True
        for arg in call.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "pretrained" and isinstance(arg.value, cst.Name) and arg.value.value == "True" \
                    or keyword == "weights" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                return True
    return False


def held_as(semantic, call: cst.Call) -> list[tuple[str, cst.CSTNode]]:
    """(variable, code scope node) pairs under which the result of ``call`` is used: the
    target of ``x = call``, or of ``x = f(...)`` for each same-file call of the function
    that returns it (``return call``, or ``x = call; return x``)."""
    model = semantic.model
    parent = model.ctx.parent(call)
    scope = model.code_scope(model.scope_of(call))
    if isinstance(parent, cst.Assign):
        keys = [k for k in (expr_key(t.target) for t in parent.targets) if k is not None]
        if not any(_returned(model, scope.node, k) for k in keys):
            return [(k, scope.node) for k in keys]
    elif not isinstance(parent, cst.Return):
        return []
    if not isinstance(scope.node, cst.FunctionDef):
        return []
    out = []
    for site in semantic.graph.callers(scope.node):
        outer = model.ctx.parent(site.node)
        if isinstance(outer, cst.Assign):
            home = model.code_scope(site.scope).node
            out.extend((k, home) for k in (expr_key(t.target) for t in outer.targets) if k is not None)
    return out


def _returned(model, function: cst.CSTNode, key: str) -> bool:
    scope = model.scopes.get(function) if isinstance(function, cst.FunctionDef) else None
    return scope is not None and any(
        r.value is not None and expr_key(r.value) == key for r in scope.returns)


def _steps_of(semantic, held: list[tuple[str, cst.CSTNode]]) -> list:
    """The optimizer-step call sites of the variables in ``held`` (a plain name: in its scope)."""
    model = semantic.model
    out = []
    for site, key in semantic.training.sites.step:
        for k, home in held:
            if key == k and ("." in k or model.code_scope(site.scope).node is home):
                out.append(site)
    return out


def single_demo_step(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds is stepped, but never in a loop (nor in a function called
    from one), and never passed to other code. A function that no code of the file calls may
    be called from a loop elsewhere: there the step counts only when the model it steps sees
    nothing but made-up tensors (``_on_made_up_data``)."""
    held = held_as(semantic, call)
    steps = _steps_of(semantic, held)
    if not steps or any(s.all_loops for s in steps):
        return False
    for k, home in held:
        if "." in k or _passed_on(home, k):
            return False
        if isinstance(home, (cst.FunctionDef, cst.Lambda)):
            callers = semantic.graph.callers(home)
            if not callers and not _on_made_up_data(semantic, call) or any(c.all_loops for c in callers):
                return False
    return True


# Tensor factories whose values are made up, not data: a step on them is a smoke test.
_MADE_UP = frozenset(f"torch.{name}" for name in (
    "randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "empty_like", "full_like", "arange"))
# Calls that return their receiver's values on another device or in another dtype.
_SAME_VALUES = frozenset(("to", "cuda", "cpu", "float", "half", "double", "long", "int", "bfloat16", "requires_grad_"))


def _on_made_up_data(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds is over ``model.parameters()`` and every call of ``model``
    in the same function passes only tensors that a ``torch.randn``/``torch.zeros``-like factory
    makes there (``images = torch.randn(1, 3, 224, 224).to(device)``): a pretraining demo or a
    smoke test, whose hyperparameters shape no result."""
    params = _params_argument(call)
    if not (isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute)
            and params.func.attr.value == "parameters" and isinstance(params.func.value, cst.Name)):
        return False
    model = semantic.model
    name = params.func.value.value
    function = model.scope_of(call).function()
    if function is None:
        return False
    runs = [s.node for s in function.calls if isinstance(s.node.func, cst.Name) and s.node.func.value == name]
    return bool(runs) and all(run.args and all(not a.star and _made_up(model, a.value, 0) for a in run.args)
                              for run in runs)


def _made_up(model, expr: cst.BaseExpression, depth: int) -> bool:
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_VALUES:
        expr = expr.func.value
    if isinstance(expr, cst.Call):
        return model.ctx.qualified_name(expr.func) in _MADE_UP
    if isinstance(expr, cst.Name) and depth < 3:
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(b.kind == "assign" and b.value is not None and _made_up(model, b.value, depth + 1)
                                      for b in bindings)
    return False


def makes_no_run(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds makes no training run: stepped once with no loop
    (``single_demo_step``), a numerical solve for a value the function returns
    (``solves_for_tensor``), or one whose settings a checkpoint replaces right away
    (``state_restored``: ``opt.load_state_dict(ckpt["optimizer"])`` in the same block)."""
    return single_demo_step(semantic, call) or solves_for_tensor(semantic, call) or state_restored(semantic, call)


def state_restored(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds gets its state from a checkpoint right away:
    ``<opt>.load_state_dict(...)`` later in the same block as ``opt = call`` (not under an
    ``if`` of its own), which replaces every param group's hyperparameters."""
    model = semantic.model
    ctx = model.ctx
    assign = ctx.parent(call)
    statement = ctx.parent(assign)
    if not isinstance(assign, cst.Assign) or not isinstance(statement, cst.SimpleStatementLine):
        return False
    keys = {k for k in (expr_key(t.target) for t in assign.targets) if k is not None}
    after = model.order.get(call, 0)
    body = list(ctx.parent(statement).body)
    for line in body[body.index(statement):]:  # this line (``opt = ...; opt.load_...``) and the ones after
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            load = getattr(small, "value", None)  # ``opt.load_state_dict(sd)``, ``r = ...``, ``return ...``
            if isinstance(load, cst.Call) and isinstance(load.func, cst.Attribute) and model.order.get(load, 0) > after \
                    and load.func.attr.value == "load_state_dict" and expr_key(load.func.value) in keys:
                return True
    return False


def _passed_on(scope_node: cst.CSTNode, key: str) -> bool:
    """``key`` is an argument of a call, returned, stored or yielded in the scope's code."""
    for node in iter_nodes(scope_node, into_scopes=False):
        if isinstance(node, cst.Arg) and dotted_name(node.value) == key:
            return True
        if isinstance(node, (cst.Return, cst.Yield)) and node.value is not None and dotted_name(node.value) == key:
            return True
        if isinstance(node, cst.Assign) and dotted_name(node.value) == key:
            return True
    return False


def lr_set_every_step(semantic, call: cst.Call) -> bool:
    """A loop that steps the optimizer ``call`` builds assigns every param group's ``lr`` a
    computed value in each iteration (``for g in opt.param_groups: g["lr"] = f(step)``)."""
    return _lr_overwritten(semantic, held_as(semantic, call))


def lr_given_by_lambda(semantic, call: cst.Call) -> bool:
    """The optimizer ``call`` builds is handed to a ``LambdaLR`` in the code that holds it
    (``LambdaLR(opt, lr_lambda=...)``): with a base lr of 1, what the lambda returns is the
    learning rate, so the literal only makes it absolute."""
    ctx = semantic.model.ctx
    for key, home in held_as(semantic, call):
        for node in iter_nodes(home, into_scopes=False):
            if type(node) is cst.Call and scheduler_kind(ctx, node.func) == "LambdaLR":
                first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
                named = keyword_arg(node, "optimizer")
                if key in (expr_key(first), named and expr_key(named.value)):
                    return True
    return False


def returned_by(semantic, call: cst.Call) -> str | None:
    """The name of the function or method that returns the optimizer ``call`` builds, when no
    code of this file holds that result (``def configure_optimizers(self): return AdamW(...)``
    called from another file): what ``lr_overwritten_callees`` of the caller's file names."""
    model = semantic.model
    scope = model.code_scope(model.scope_of(call)).node
    parent = model.ctx.parent(call)
    if not isinstance(scope, cst.FunctionDef) or held_as(semantic, call):
        return None
    returned = isinstance(parent, cst.Return) or isinstance(parent, cst.Assign) and any(
        _returned(model, scope, k) for k in (expr_key(t.target) for t in parent.targets) if k is not None)
    return scope.name.value if returned and not semantic.graph.callers(scope) else None


def lr_overwritten_callees(semantic) -> set[str]:
    """Names of the callables this file gets an optimizer from that no same-file function
    defines (``optimizer = model.configure_optimizers()``, ``opt = build_optimizer(cfg)``, also
    when a same-file helper returns it to the training function: ``held_as``), where the loop
    stepping it assigns every param group's ``lr`` each iteration: the ``lr`` those callables
    pass never takes effect. ``HANDED_IN`` when the loop does that to an optimizer it receives
    as a parameter (``def train(model, optimizer, ...)``): the project schedules the lr by
    hand for whatever optimizer its entry point hands in."""
    model = semantic.model
    out = set()
    for site in model.calls:
        func = site.node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
        if name is None or not isinstance(model.ctx.parent(site.node), cst.Assign) or semantic.graph.targets(site):
            continue
        if _lr_overwritten(semantic, held_as(semantic, site.node)):
            out.add(name.rsplit(".", 1)[-1])
    for scope in model.scopes.values():
        if scope.kind == FUNCTION and any(
                b.kind == "param" and _lr_overwritten(semantic, [(key, scope.node)])
                for key, bindings in scope.bindings.items() for b in bindings[:1]):
            out.add(HANDED_IN)
            break
    return out


def _lr_overwritten(semantic, held: list[tuple[str, cst.CSTNode]]) -> bool:
    stepping = {lp for s in _steps_of(semantic, held) for lp in s.all_loops}
    if not stepping:
        return False
    model = semantic.model
    for loop in model.loops.values():
        node = loop.node
        if not isinstance(node, cst.For) or not isinstance(node.target, cst.Name):
            continue
        owner = dotted_name(node.iter)
        if owner is None or not owner.endswith(".param_groups"):
            continue
        home = model.code_scope(loop.scope).node
        if not any(owner == f"{k}.param_groups" and ("." in k or home is h) for k, h in held):
            continue
        outer = loop.outer
        while outer is not None and outer not in stepping:
            outer = outer.outer
        if outer is not None and _sets_lr(node.body, node.target.value):
            return True
    return False


def _sets_lr(body: cst.CSTNode, group: str) -> bool:
    """``group["lr"] = <not a literal>`` directly in ``body`` (not under an ``if``)."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for line in lines:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        for small in line.body:
            if isinstance(small, cst.Assign) and numeric_value(small.value) is None and any(
                    expr_key(t.target) in (f'{group}["lr"]', f"{group}['lr']") for t in small.targets):
                return True
    return False


HANDED_IN = "<parameter>"  # see lr_overwritten_callees
_LR_KEYWORDS = ("lr", "lr0", "learning_rate", "base_lr")


def optimizer_from_config(semantic) -> bool:
    """Some optimizer build passes a learning rate, and every one passes it read from a config
    (an attribute or a subscript: ``args.lr0``, ``hyp["lr0"]``): a library optimizer's ``lr``
    (left out: its default, not configured), or a helper whose result is assigned to
    ``...optimizer`` (``lr=``/``lr0=``, or a positional ``<config>.lr*``/``<config>["lr*"]``)."""
    model = semantic.model
    ctx = model.ctx
    found = False
    for site in model.calls:
        call = site.node
        if is_optimizer_constructor(ctx, call.func):
            positions = {i: n for i, n in library_positions(ctx.qualified_name(call.func) or "").items() if n == "lr"}
            lr = _lr_argument(call, positions)
            if lr is None or not _from_config(lr):
                return False
            found = True
        elif _assigned_to_optimizer(ctx, call):
            lr = _lr_argument(call, {})
            if lr is None:
                lr = next((a.value for a in call.args if a.keyword is None and _names_lr(a.value)), None)
            if lr is not None:
                if not _from_config(lr):
                    return False
                found = True
    return found


def _lr_argument(call: cst.Call, positions: dict[int, str]) -> cst.BaseExpression | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _LR_KEYWORDS:
            return arg.value
    return next((positional[i].value for i in positions if i < len(positional)), None)


def _assigned_to_optimizer(ctx, call: cst.Call) -> bool:
    parent = ctx.parent(call)
    return isinstance(parent, cst.Assign) and parent.value is call and any(
        (dotted_name(t.target) or "").rsplit(".", 1)[-1].endswith("optimizer") for t in parent.targets)


def _names_lr(expr: cst.BaseExpression) -> bool:
    """``args.lr0``, ``hyp["lr0"]``: a config read whose key names the learning rate."""
    if isinstance(expr, cst.Attribute):
        return "lr" in expr.attr.value
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
        return isinstance(key, cst.SimpleString) and "lr" in key.evaluated_value
    return False


def _from_config(expr: cst.BaseExpression) -> bool:
    """An attribute or subscript read (``args.lr``, ``cfg["lr"]``). Not a plain parameter
    (``lr=train_lr``): a trainer exposing its knobs as arguments is expected to expose the
    clipping norm too (denoising_diffusion's sibling trainers take ``max_grad_norm``)."""
    return isinstance(expr, (cst.Attribute, cst.Subscript))
