"""Gradient-accumulation windows and whether the accumulated loss is scaled.

* ``accumulation_windows(semantic)``: every backward that runs on each iteration of a loop
  whose optimizer step runs only under an accumulation ``if`` of the same loop
  (``gradients.accumulation_gate``), or on each call of a function that runs once per batch
  (an ignite process function, a ``train_step(batch)``) and steps only under such an ``if``:
  gradients of several micro-batches add up before one step (the ``if`` may also skip the rest
  of the iteration: ``if (i + 1) % k != 0: continue`` before the step). Also the inner-loop form: a
  backward run on every iteration of a micro-batch loop (``for micro_step in
  range(gradient_accumulation_steps):``, ``for chunk in batch.chunk(k):``: ``micro_batch_loop``)
  with no step inside it, and a step after that loop, once per pass of the code around it (the
  outer loop or the function): nanoGPT's shape, with or without a GradScaler.
* ``loss_scaling(semantic, expr, at)``: whether the value a backward differentiates is
  divided (or multiplied) on its way from the loss: ``"scaled"``, ``"unscaled"`` (built
  only from a criterion, a loss function or a model's output, with nothing dividing it) or
  ``"unknown"`` (a helper, a parameter, anything else). A sum-reduced loss
  (``reduction="sum"``) counts as scaled: summing over micro-batches is what it asks for.
* ``gradients_scaled(gate)``: the accumulation branch rescales the gradients themselves
  (``p.grad /= n``, ``p.grad.div_(n)``, ``scale_grads(...)``) before stepping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.gradients import accumulation_gate, looks_like_accumulation, mentions_grad, runs_every_iteration
from torchlint.semantic.model import CallSite
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

SCALED, UNSCALED, UNKNOWN = "scaled", "unscaled", "unknown"
_MAX_DEPTH = 8
# Helpers whose name says they rescale gradients.
_GRAD_SCALING_NAME = re.compile(r"(scale|div|divide|average|avg|normali[sz]e|mean)_?grads?|grads?_?(scale|div|average|avg)",
                                re.IGNORECASE)
# Tensor methods that keep the scale of a loss.
_SCALE_KEEPING = ("mean", "sum", "float", "double", "squeeze", "view", "reshape", "to", "clone", "contiguous")


@dataclass(frozen=True)
class Window:
    """A backward that adds into gradients an optimizer step consumes only every few iterations."""

    backward: CallSite
    loss: cst.BaseExpression  # what the backward differentiates
    step: CallSite  # the gated step (or the call of a helper that steps)
    gate: cst.CSTNode  # the accumulation ``if`` (or, for an inner micro-batch loop, the code around it)
    unit: cst.CSTNode  # the loop (For/While) or the once-per-batch function
    inner: cst.For | None = None  # the micro-batch loop of the inner-loop form

    @property
    def region(self) -> cst.CSTNode:
        """Where the gradients may be rescaled before the step: the accumulation branch, or
        the loop (function) around it for the inner-loop and ``continue`` forms."""
        if isinstance(self.gate, cst.If) and not _skips(self.gate):
            return self.gate
        return self.unit

    @property
    def count(self) -> cst.BaseExpression | None:
        """``k`` of the gate's ``... % k == 0``, or of the micro-batch loop's ``range(k)``, if
        written so."""
        if self.inner is not None:
            return range_count(self.inner)
        for node in iter_nodes(self.gate.test):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
                return node.right
        return None


def accumulation_windows(semantic) -> list[Window]:
    """Backwards run every iteration of a loop (or every call of a once-per-batch function)
    whose step is gated by an accumulation ``if``."""
    ctx, model, training = semantic.ctx, semantic.model, semantic.training
    out: list[Window] = []
    for site in training.sites.backward:
        loss = api.backward_target(ctx, site.node)
        if loss is None:
            continue
        if site.loops:
            loop = site.loops[-1]
            units = [(loop.node, [s for s in model.calls if loop in s.loops])]
        else:
            function = enclosing_function(model, site.scope)
            if isinstance(function, cst.Module) or not training.once_per_batch(function):
                continue
            units = [(function, [s for s in semantic.graph.sites(function) if not s.loops])]
        for unit, calls in units:
            found = _gated_step(semantic, site, unit, calls)
            if found is not None:
                out.append(Window(site, loss, found[0], found[1], unit))
            elif site.loops:
                window = _inner_loop_window(semantic, site, loss)
                if window is not None:
                    out.append(window)
    return out


# A loop header naming micro-batches or accumulation: ``for micro_step in range(grad_accum)``,
# ``for chunk in batch.chunk(k)``, ``for sub_batch in split(batch, n)``.
_MICRO_LOOP = re.compile(r"micro|accum|accu_|grad_acc|update_freq|sub_?batch|chunk|\.split\(|mini_?batch_?step",
                         re.IGNORECASE)


def micro_batch_loop(loop: cst.CSTNode) -> bool:
    """A ``for`` whose header (its target or what it iterates) names micro-batches or
    accumulation (``for micro_step in range(gradient_accumulation_steps)``,
    ``for chunk in torch.chunk(batch, k)``): its iterations are parts of one batch."""
    if not isinstance(loop, cst.For):
        return False
    header = cst.Module([]).code_for_node(loop.target) + " in " + cst.Module([]).code_for_node(loop.iter)
    return bool(_MICRO_LOOP.search(header))


def range_count(loop: cst.For) -> cst.BaseExpression | None:
    """``k`` of ``for _ in range(k)``, ``for c in x.chunk(k)``, ``for c in torch.chunk(x, k)``."""
    it = loop.iter
    if not isinstance(it, cst.Call):
        return None
    name = dotted_name(it.func) or ""
    if name == "range" and len(it.args) == 1:
        return it.args[0].value
    if name.rsplit(".", 1)[-1] == "chunk":
        args = [a for a in it.args if a.keyword is None]
        position = 1 if name in ("torch.chunk", "chunk") else 0
        chunks = api.keyword_arg(it, "chunks")
        return chunks.value if chunks is not None else args[position].value if len(args) > position else None
    return None


def _inner_loop_window(semantic, site: CallSite, loss: cst.BaseExpression) -> Window | None:
    """The inner-loop form: ``site`` runs on every iteration of a micro-batch loop that holds no
    step, and a step of the same scope follows that loop, outside it, in the code around it."""
    ctx, model, training = semantic.ctx, semantic.model, semantic.training
    inner = site.loops[-1]
    if not micro_batch_loop(inner.node) or not runs_every_iteration(ctx, site.node, inner.node):
        return None
    if isinstance(inner.node, cst.For) and range_count(inner.node) is not None and \
            isinstance(range_count(inner.node), cst.Integer) and range_count(inner.node).value == "1":
        return None
    steps = {s for s, _ in training.sites.step}
    stepping = training.closure("step")
    outer = site.loops[-2] if len(site.loops) > 1 else None
    unit = outer.node if outer is not None else enclosing_function(model, site.scope)
    end = ctx.position(inner.node).end.line
    found = None
    for other in model.calls:
        if other.scope is not site.scope or not (other in steps or any(t in stepping for t in semantic.graph.targets(other))):
            continue
        if inner in other.loops:
            return None  # a step per micro-batch: nothing accumulates
        if tuple(other.loops) != tuple(site.loops[:-1]) or ctx.position(other.node).start.line <= end:
            continue
        found = found or other
    if found is None:
        return None
    return Window(site, loss, found, unit, unit, inner.node)


def _gated_step(semantic, backward: CallSite, unit: cst.CSTNode, calls: list[CallSite]) -> tuple | None:
    """The step (or stepping helper) among ``calls`` when every one is under an accumulation
    ``if`` of ``unit`` and the backward runs on every pass through ``unit``."""
    ctx, training = semantic.ctx, semantic.training
    if not runs_every_iteration(ctx, backward.node, unit):
        return None
    steps = {s for s, _ in training.sites.step}
    stepping = training.closure("step")
    found = None
    for other in calls:
        if other is backward or not (other in steps or any(t in stepping for t in semantic.graph.targets(other))):
            continue
        gate = accumulation_gate(ctx, other.node, unit) or _continue_gate(ctx, other.node, unit)
        if gate is None:
            return None  # a step on every pass: no accumulation here
        found = found or (other, gate)
    return found


def _skips(node: cst.If) -> bool:
    """``if ...: continue`` and nothing else."""
    body = node.body.body
    return node.orelse is None and len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) \
        and len(body[0].body) == 1 and isinstance(body[0].body[0], cst.Continue)


def _continue_gate(ctx, node: cst.CSTNode, unit: cst.CSTNode) -> cst.If | None:
    """The ``if (i + 1) % k != 0: continue`` of ``unit`` that comes before ``node`` in a block
    holding it: the step runs only on the iterations it lets through."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(anc, cst.IndentedBlock):
            for stmt in anc.body:
                if stmt is child:
                    break
                if isinstance(stmt, cst.If) and _skips(stmt) and looks_like_accumulation(stmt.test):
                    return stmt
        if anc is unit:
            return None
        child = anc
    return None


def loss_scaling(semantic, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> str:
    """``scaled`` / ``unscaled`` / ``unknown`` for the value of ``expr`` at ``at``."""
    if depth > _MAX_DEPTH:
        return UNKNOWN
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Divide, cst.FloorDivide)):
            return SCALED
        if isinstance(expr.operator, cst.Multiply):
            sides = [s for s in (expr.left, expr.right) if not isinstance(s, (cst.Integer, cst.Float))]
            if len(sides) == 2:
                return SCALED  # loss * weight, loss * (1 / k)
            return loss_scaling(semantic, sides[0], at, depth + 1) if sides else UNKNOWN
        if isinstance(expr.operator, (cst.Add, cst.Subtract)):
            return _combine([loss_scaling(semantic, s, at, depth + 1) for s in (expr.left, expr.right)])
        return UNKNOWN
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return loss_scaling(semantic, expr.expression, at, depth + 1)
    if isinstance(expr, cst.Call):
        return _call_scaling(semantic, expr, at, depth)
    if isinstance(expr, cst.Subscript):
        return loss_scaling(semantic, expr.value, at, depth + 1)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = api.expr_key(expr)
        bindings = semantic.model.reaching(key, at) if key is not None else []
        if not bindings:
            # ``outputs.loss`` of ``outputs = model(x)``
            return loss_scaling(semantic, expr.value, at, depth + 1) if isinstance(expr, cst.Attribute) else UNKNOWN
        return _combine([_binding_scaling(semantic, b, depth) for b in bindings])
    return UNKNOWN


def _binding_scaling(semantic, binding, depth: int) -> str:
    if binding.kind in ("assign", "ann") and binding.value is not None:
        return loss_scaling(semantic, binding.value, binding.node, depth + 1)
    if binding.kind == "unpack" and isinstance(binding.node, cst.Assign) and isinstance(binding.node.value, cst.Call):
        # ``loss, logs = criterion(out, y)``: the loss a criterion (or the model) returns with others
        return _call_scaling(semantic, binding.node.value, binding.node, depth + 1)
    if binding.kind == "aug" and isinstance(binding.node, cst.AugAssign):
        if isinstance(binding.node.operator, (cst.DivideAssign, cst.FloorDivideAssign, cst.MultiplyAssign)):
            return SCALED
        target = binding.node.target
        return _combine([loss_scaling(semantic, target, binding.node, depth + 1),
                         loss_scaling(semantic, binding.node.value, binding.node, depth + 1)])
    return UNKNOWN


def _call_scaling(semantic, call: cst.Call, at: cst.CSTNode, depth: int) -> str:
    ctx, training = semantic.ctx, semantic.training
    func = call.func
    if _sum_reduced(call):
        return SCALED
    if isinstance(func, cst.Attribute) and func.attr.value in _SCALE_KEEPING:
        return loss_scaling(semantic, func.value, at, depth + 1)
    if isinstance(func, cst.Attribute) and func.attr.value in ("div", "div_", "mul", "mul_", "true_divide"):
        return SCALED
    if api.is_loss_function(ctx, func):
        return UNSCALED
    written = dotted_name(func)
    if written is None:
        return UNKNOWN
    if written == "sum" and len(call.args) == 1 and call.args[0].star == "":
        # ``sum(losses.values())``: the terms' scale
        arg = call.args[0].value
        if isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) and arg.func.attr.value == "values":
            arg = arg.func.value
        return loss_scaling(semantic, arg, at, depth + 1)
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        written = dotted_name(func.value) or written  # ``model.forward(x)`` is ``model(x)``
    if written in training.bindings["criterion"] or api.looks_like_criterion_name(written) \
            or written.rsplit(".", 1)[-1].lstrip("_") == "loss":  # a callable named ``loss``: a loss module
        return SCALED if _criterion_sums(semantic, func, at) else UNSCALED
    if written in training.bindings["model"] or api.looks_like_model_name(written):
        return UNSCALED
    return UNKNOWN


def _sum_reduced(call: cst.Call) -> bool:
    arg = api.keyword_arg(call, "reduction")
    return arg is not None and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "sum"


def _criterion_sums(semantic, func: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The criterion was built with ``reduction="sum"`` (as far as its bindings say)."""
    key = api.expr_key(func)
    values = [b.value for b in semantic.model.reaching(key, at)] if key is not None else []
    if not values:
        node = semantic.training.bindings["criterion"].get(key or "")
        values = [node.value] if isinstance(node, cst.Assign) else []
    return any(isinstance(v, cst.Call) and _sum_reduced(v) for v in values)


def _combine(results: list[str]) -> str:
    if not results:
        return UNKNOWN
    if SCALED in results:
        return SCALED
    return UNKNOWN if UNKNOWN in results else UNSCALED


def gradients_scaled(gate: cst.CSTNode, module: cst.Module | None = None, depth: int = 0,
                     defs: dict | None = None) -> bool:
    """The accumulation branch (for the inner-loop form, the code around the micro-batch loop)
    divides or multiplies the gradients before the step, itself or in a function of ``module``
    it calls by name (``take_optimizer_step(...)`` dividing every ``param.grad``)."""
    if module is not None and defs is None:
        defs = {}
        for node in iter_nodes(module):
            if isinstance(node, cst.FunctionDef):
                defs.setdefault(node.name.value, []).append(node)
    for node in iter_nodes(gate.body if isinstance(gate, cst.If) else gate):
        if defs and depth < 2 and isinstance(node, cst.Call):
            called = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
                node.func.value if isinstance(node.func, cst.Name) else None
            if called is not None and any(gradients_scaled(d, module, depth + 1, defs) for d in defs.get(called, ())):
                return True
        if isinstance(node, cst.AugAssign) and mentions_grad(node.target) and \
                isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign)):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, (cst.Attribute, cst.Name)):
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
            if name in ("div_", "mul_") and isinstance(node.func, cst.Attribute) and mentions_grad(node.func.value):
                return True
            if _GRAD_SCALING_NAME.search(name):
                return True
    return False

