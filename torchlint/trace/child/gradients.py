"""After one training step's backward: which parameters got no gradient and why, which are
frozen, gradient norms per top-level module and (on cpu/cuda) NaN/Inf gradients.

Why a parameter got no gradient is found from the forward pass: :class:`Cuts` records every
op that took a tensor requiring grad and returned none that does (``.detach()``, ``.data``,
an op under ``torch.no_grad()``, ``argmax``, a comparison, an integer cast) with the user
line that called it; after backward, the parameters behind each cut are found by walking
the autograd graph from the op's inputs.  A parameter no op of the forward pass touched is
``unused`` (a layer built but never called: TL005).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from torchlint import shapes
from torchlint.trace.child.failure import current_user_frame, op_name, owner_of
from torchlint.trace.child.inputs import make_inputs
from torchlint.trace.child.step import LossError, backward_from_outputs, class_count
from torchlint.trace.child.values import tensors_in
from torchlint.trace.records import Cause, Gradients, ModuleGradient, NonFiniteGradient, ParamGroup

MAX_CUTS = 256
MAX_GRAPH_NODES = 200_000
MAX_NONFINITE = 50


@dataclass(frozen=True)
class StepLoss:
    """The loss of the step: a name of ``step.BUILTIN_LOSSES`` or a user function, and how
    the report says it."""

    spec: str | Callable[..., Any]
    text: str
    target: dict[str, Any] | None = None  # --target-shape/--target-dtype: {"shape", "dtype"}


def make_target(torch: Any, loss: StepLoss, output: Any, device: str) -> Any:
    """The target tensor of the step's loss (None without ``--target-shape``): class indices
    below the output's class count, as a real batch has."""
    if loss.target is None:
        return None
    spec = shapes.InputSpec(list(loss.target["shape"]), loss.target.get("dtype", "float32"))
    return make_inputs(torch, [spec], device, class_count(torch, output))[0]


def take_step(torch: Any, model: Any, output: Any, loss: StepLoss, tracer: Any) -> Gradients:
    """Backward from ``output`` (after the hooked forward pass) and its :class:`Gradients`;
    a loss or backward that fails is recorded in it, not raised.  The loss runs under the
    tracer's loss watch (TL102)."""
    error = None
    ran = False
    try:
        target = make_target(torch, loss, output, tracer.device)
        with tracer.loss_mode():
            ran = backward_from_outputs(output, loss.spec, target) is not None
    except LossError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - user code (a custom autograd Function, a user loss)
        error = f"the loss or backward failed: {type(exc).__name__}: {str(exc)[:500]}"
    return report(torch, model, tracer, loss.text, ran, error, tracer.order)


class Cuts:
    """Graph cuts seen in the forward pass: (cause, the inputs that required grad)."""

    def __init__(self, torch: Any):
        self.torch = torch
        self.events: list[tuple[Cause, list[Any]]] = []

    def note(self, func: Any, tensors: list[Any], result: Any) -> None:
        if len(self.events) >= MAX_CUTS:
            return
        sources = [t for t in tensors if t.requires_grad]
        if not sources:
            return
        outputs = tensors_in(self.torch, result)
        if not outputs or any(o.requires_grad for o in outputs):
            return
        name = op_name(func)
        op = name if self.torch.is_grad_enabled() else "no_grad"
        cause: Cause = {"kind": "cut", "op": op}
        frame = current_user_frame()
        if frame is not None:
            cause["frame"] = frame
        self.events.append((cause, sources))

    def causes(self, wanted: set[int]) -> dict[int, Cause]:
        """Parameter id -> the first cut behind which it lies, for the ids in ``wanted``."""
        found: dict[int, Cause] = {}
        budget = [MAX_GRAPH_NODES]  # graph nodes left to visit, over all cuts
        for cause, sources in self.events:
            if len(found) == len(wanted) or budget[0] <= 0:
                break
            for pid in _leaves(sources, budget) & (wanted - set(found)):
                found[pid] = cause
        return found


def _leaves(sources: list[Any], budget: list[int]) -> set[int]:
    """Ids of the leaf tensors (parameters) the autograd graph of ``sources`` reaches, visiting
    at most ``budget[0]`` nodes (and taking them off it)."""
    ids = {id(t) for t in sources if t.grad_fn is None}
    todo = [t.grad_fn for t in sources if t.grad_fn is not None]
    seen: set[int] = set()
    while todo and budget[0] > 0:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        budget[0] -= 1
        variable = getattr(node, "variable", None)  # AccumulateGrad
        if variable is not None:
            ids.add(id(variable))
        todo.extend(n for n, _ in node.next_functions)
    return ids


class BackwardOrder:
    """On cpu/cuda, the modules whose output gradient held NaN/Inf, in backward order (hooks
    on the module outputs, registered by the tracer's forward hook)."""

    def __init__(self, torch: Any):
        self.torch = torch
        self.nonfinite: list[str] = []

    def watch(self, name: str, outputs: list[Any]) -> None:
        for t in outputs:
            if t.requires_grad and t.is_floating_point():
                t.register_hook(lambda grad, name=name: self._seen(name, grad))

    def _seen(self, name: str, grad: Any) -> None:
        if name not in self.nonfinite and not bool(self.torch.isfinite(grad).all()):
            self.nonfinite.append(name)


def report(torch: Any, model: Any, tracer: Any, loss: str, backward: bool, error: str | None,
           order: BackwardOrder | None) -> Gradients:
    """The :class:`Gradients` record of ``model`` after the step."""
    params = list(model.named_parameters())
    modules = dict(model.named_modules())
    frozen = {n for n, p in params if not p.requires_grad}
    missing = {n for n, p in params if p.requires_grad and p.grad is None}
    out = Gradients(loss=loss, backward=backward, error=error,
                    trainable=sum(p.numel() for n, p in params if n not in frozen),
                    frozen_params=sum(p.numel() for n, p in params if n in frozen))
    out.frozen = [_group(model, tracer, modules, dict(params), name) for name in _cover(model, frozen)]
    if error is None:
        out.no_grad = _no_grad_groups(model, tracer, modules, dict(params), missing)
        out.nonfinite = _nonfinite(torch, params)
        if out.nonfinite and order is not None and order.nonfinite:
            out.nonfinite_origin = order.nonfinite[0]
    out.modules = _per_module(torch, model, frozen, missing if error is None else set(),
                              norms=params[0][1].device.type != "meta" if params else False)
    return out


def _no_grad_groups(model: Any, tracer: Any, modules: dict[str, Any], params: dict[str, Any],
                    missing: set[str]) -> list[ParamGroup]:
    if not missing:
        return []
    causes = tracer.cuts.causes({id(params[n]) for n in missing}) if tracer.cuts else {}
    groups = []
    for name in _cover(model, missing):
        group = _group(model, tracer, modules, params, name)
        inside = [n for n in sorted(missing) if not name or n == name or n.startswith(name + ".")]
        cause = next((causes[id(params[n])] for n in inside if id(params[n]) in causes), None)
        if cause is None:
            cause = {"kind": "unknown" if _used(tracer, modules, params, name) else "unused"}
        group["cause"] = cause
        groups.append(group)
    return groups


def _used(tracer: Any, modules: dict[str, Any], params: dict[str, Any], name: str) -> bool:
    module = modules.get(name)
    if module is not None:
        return tracer.used(module)
    return id(params[name]) in tracer.params_used


def _cover(model: Any, names: set[str]) -> list[str]:
    """The fewest module (or parameter) paths whose parameters are exactly ``names``: the
    largest modules all of whose parameters are in ``names``, then the parameters left."""
    if not names:
        return []
    chosen: list[str] = []
    covered: set[str] = set()
    for prefix, module in model.named_modules():
        if any(prefix == c or prefix.startswith(c + ".") or c == "" for c in chosen):
            continue
        own = [(f"{prefix}.{n}" if prefix else n) for n, _ in module.named_parameters()]
        if own and all(n in names for n in own):
            chosen.append(prefix)
            covered.update(own)
    return chosen + sorted(names - covered)


def _group(model: Any, tracer: Any, modules: dict[str, Any], params: dict[str, Any], name: str) -> ParamGroup:
    module = modules.get(name)
    if module is not None:
        count = sum(p.numel() for p in module.parameters())
        kind = type(module).__name__
    else:
        count = int(params[name].numel())
        kind = "Parameter"
    group: ParamGroup = {"name": name, "type": kind, "params": int(count)}
    group["owner"] = owner_of(name, tracer, model) if name else None
    return group


def _nonfinite(torch: Any, params: list[tuple[str, Any]]) -> list[NonFiniteGradient]:
    out: list[NonFiniteGradient] = []
    for name, p in params:
        g = p.grad
        if g is None or g.device.type == "meta" or not g.is_floating_point():
            continue
        if not bool(torch.isfinite(g).all()):
            out.append({"name": name, "nan": bool(torch.isnan(g).any()), "inf": bool(torch.isinf(g).any())})
            if len(out) >= MAX_NONFINITE:
                break
    return out


def _per_module(torch: Any, model: Any, frozen: set[str], missing: set[str], norms: bool
                ) -> dict[str, ModuleGradient]:
    out: dict[str, ModuleGradient] = {}
    for top, module in model.named_children():
        names = [(f"{top}.{n}", p) for n, p in module.named_parameters()]
        if not names:
            continue
        trainable = [(n, p) for n, p in names if n not in frozen]
        without = [n for n, _ in trainable if n in missing]
        if not trainable:
            status = "frozen"
        elif len(without) == len(trainable):
            status = "none"
        elif without:
            status = "partial"
        else:
            status = "ok"
        norm: float | str | None = None
        grads = [p.grad for _, p in trainable if p.grad is not None]
        if norms and grads:
            value = math.sqrt(sum(float(g.detach().double().pow(2).sum()) for g in grads))
            norm = value if math.isfinite(value) else ("nan" if math.isnan(value) else "inf")
            if not math.isfinite(value):
                status = "nonfinite"
        out[top] = {"status": status, "norm": norm}
    return out
