"""Mixed precision with a ``GradScaler``: where the loss is scaled, unscaled, stepped, updated.

* ``scaled_backward(call)``: the scaler's key of ``S.scale(loss).backward()``, else None.
* ``scaler_disabled(semantic, key, at)``: every binding of ``key`` is
  ``GradScaler(enabled=False)`` (scaling is a no-op: nothing to unscale).
* ``scaler_method(call, key)``: ``unscale_`` / ``step`` / ``update`` / ... for ``S.<m>(...)``.
* ``grad_clip(ctx, call)``: ``clip_grad_norm_`` / ``clip_grad_value_`` for torch's clipping
  functions (``accelerator.clip_grad_norm_`` and Lightning unscale themselves: not these).
* ``gradient_reads(ctx, function, start, end)``: ``.grad`` values read in a function between two
  orders (``p.grad.norm()``, ``p.grad.data.clamp_(...)``), not ``p.grad is None`` tests or stores.
* ``may_unscale(semantic, site, key)``: a call that unscales ``key``'s gradients, or may:
  ``S.unscale_(opt)``, a same-file function that unscales, or any call handed the scaler.
"""

from __future__ import annotations

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.callgraph import enclosing_function
from torchlint.tree import iter_nodes

_CLIPS = {"torch.nn.utils.clip_grad_norm_": "clip_grad_norm_", "torch.nn.utils.clip_grad_value_": "clip_grad_value_",
          "torch.nn.utils.clip_grad_norm": "clip_grad_norm_",
          "torch.nn.utils.clip_grad.clip_grad_norm_": "clip_grad_norm_",
          "torch.nn.utils.clip_grad.clip_grad_value_": "clip_grad_value_"}
_SCALER_CLASS = "GradScaler"


def scaled_backward(call: cst.Call) -> str | None:
    """``S`` of ``S.scale(loss).backward()`` (the scaler's key), else None."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
        return None
    inner = func.value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "scale" \
            and inner.args:
        return api.expr_key(inner.func.value)
    return None


def scaler_method(call: cst.Call, key: str) -> str | None:
    """``m`` for ``key.m(...)``, else None."""
    func = call.func
    if isinstance(func, cst.Attribute) and api.expr_key(func.value) == key:
        return func.attr.value
    return None


def grad_clip(ctx, call: cst.Call) -> str | None:
    """``clip_grad_norm_`` / ``clip_grad_value_`` for ``torch.nn.utils``'s clipping functions."""
    if not ctx.is_imported(call.func):
        return None
    return _CLIPS.get(ctx.qualified_name(call.func) or "")


def scaler_disabled(semantic, key: str, at: cst.CSTNode) -> bool:
    """Every binding of ``key`` (reaching ``at``; for ``self.x`` any in the file) is a
    ``GradScaler(enabled=False)``: its ``scale`` returns the loss unchanged."""
    model = semantic.model
    bindings = model.reaching(key, at) if "." not in key else \
        [b for scope in model.scopes.values() for b in scope.bindings.get(key, ())]
    values = [b.value for b in bindings if b.kind in ("assign", "ann")]
    return bool(values) and len(values) == len(bindings) and all(_disabled_scaler(semantic, v) for v in values)


def _disabled_scaler(semantic, value) -> bool:
    if not isinstance(value, cst.Call) or not (semantic.model.qualified_name(value.func) or "").endswith(_SCALER_CLASS):
        return False
    enabled = api.keyword_arg(value, "enabled")
    return enabled is not None and api.is_false_literal(enabled.value)


def may_unscale(semantic, site, key: str, unscalers: set) -> bool:
    """``key.unscale_(...)``; a call of one of ``unscalers`` (``unscaling_functions``); or a
    call that is handed the scaler (a helper elsewhere may unscale: say nothing)."""
    call = site.node
    if scaler_method(call, key) == "unscale_":
        return True
    if any(api.expr_key(a.value) == key for a in call.args):
        return True
    return any(t in unscalers for t in semantic.graph.targets(site))


def unscaling_functions(semantic) -> set:
    """Same-file functions that call ``X.unscale_(...)``, themselves or through callees."""
    model = semantic.model
    direct = {enclosing_function(model, s.scope) for s in model.calls
              if isinstance(s.node.func, cst.Attribute) and s.node.func.attr.value == "unscale_"}
    return semantic.graph.closure(direct) if direct else set()


def gradient_reads(ctx, function: cst.CSTNode, start: int, end: int | None):
    """``X.grad`` attributes in ``function``'s own code (nested functions and classes left
    out) ordered after ``start`` and before ``end``, whose value is used: not the target of a
    store, not a bare ``X.grad is None`` test, not ``X.grad = None``/``del X.grad``."""
    order = ctx.semantic.model.order
    for node in iter_nodes(function, into_scopes=False):
        if not (isinstance(node, cst.Attribute) and node.attr.value == "grad"):
            continue
        at = order.get(node, -1)
        if at <= start or (end is not None and at >= end):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget) or \
                isinstance(parent, (cst.AssignTarget, cst.Del)) or \
                isinstance(parent, cst.Attribute) and parent.attr.value == "grad_fn":
            continue
        yield node
