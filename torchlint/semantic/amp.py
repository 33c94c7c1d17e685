"""Mixed precision with a ``GradScaler``: where the loss is scaled, unscaled, stepped, updated.

* ``scaled_backward(call, model)``: the scaler's key of ``S.scale(loss).backward()`` (also
  ``scaled = S.scale(loss)`` then ``scaled.backward()``), else None.
* ``scaling_functions(semantic)``: same-file functions ending with a scaled backward (no
  unscale/step/update after it there): their callers hold scaled gradients.
* ``clipping_functions(semantic)``: same-file functions that clip (transitively) without
  unscaling first.
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


def scaled_backward(call: cst.Call, model=None) -> str | None:
    """``S`` of ``S.scale(loss).backward()`` (the scaler's key), else None. With the file's
    ``model``, also the two-statement form: ``scaled = S.scale(loss)`` (every binding reaching
    the read) then ``scaled.backward()``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
        return None
    inner = func.value
    if isinstance(inner, cst.Name) and model is not None:
        bindings = model.reaching(inner.value, inner)
        keys = {_scale_call(b.value) if b.kind == "assign" else None for b in bindings}
        return keys.pop() if len(keys) == 1 and None not in keys else None
    return _scale_call(inner)


def _scale_call(expr) -> str | None:
    """``S`` of ``S.scale(loss)``, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "scale" \
            and expr.args:
        return api.expr_key(expr.func.value)
    return None


def scaling_functions(semantic) -> dict:
    """Same-file functions whose scaled backward (``S.scale(loss).backward()``) is the last
    thing they do with the scaler: no ``S.unscale_``/``S.step``/``S.update`` and no call handed
    the scaler after it there (``def backward(self, loss): self.scaler.scale(loss).backward()``):
    function -> the scaler's key. Their callers hold scaled gradients after the call."""
    model = semantic.model
    out: dict = {}
    for site in model.calls:
        key = scaled_backward(site.node, model)
        if key is None:
            continue
        function = enclosing_function(model, site.scope)
        if not isinstance(function, cst.FunctionDef):
            continue
        later = [s for s in model.calls if s.order > site.order and enclosing_function(model, s.scope) is function]
        if any(scaler_method(s.node, key) in ("unscale_", "step", "update") or
               any(api.expr_key(a.value) == key for a in s.node.args) for s in later):
            continue
        out.setdefault(function, key)
    return out


def clipping_functions(semantic) -> dict:
    """Same-file functions that clip gradients with torch's clipping functions (``grad_clip``),
    themselves or through callees, without unscaling first: function -> the clip's name
    (``def clip(model): torch.nn.utils.clip_grad_norm_(...)`` called after a scaled backward)."""
    model = semantic.model
    unscalers = unscaling_functions(semantic)
    direct: dict = {}
    for site in model.calls:
        clip = grad_clip(semantic.ctx, site.node)
        if clip is not None:
            function = enclosing_function(model, site.scope)
            if function not in unscalers and isinstance(function, cst.FunctionDef):
                direct.setdefault(function, clip)
    if not direct:
        return {}
    out = dict(direct)
    for function in semantic.graph.closure(set(direct)):
        if function not in out and function not in unscalers and isinstance(function, cst.FunctionDef):
            out[function] = next(iter(direct.values()))
    return out


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
