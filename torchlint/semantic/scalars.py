"""Which expressions are 0-dim tensors: a loss as a loss function or criterion returns it, or
a full reduction (TL018).

``is_zero_dim(ctx, model, expr)`` is True for sure only:

* a call of a ``torch.nn.functional`` loss, of a criterion built from a ``*Loss`` class
  (``criterion = nn.CrossEntropyLoss()``, also on ``self``), or of a name that says it is one
  (``criterion``, ``loss_fn``: a criterion passed as a parameter), unless it passes
  ``reduction="none"`` (or its constructor did);
* ``x.sum()``, ``x.mean()``, ``x.norm()``, ``x.prod()`` with no dimension, and
  ``torch.sum(x)``/``torch.mean(x)``/``torch.norm(x)`` with the tensor alone;
* ``x.data`` or ``x.detach()`` of one of these, and a name every reaching binding of which
  is one of these (``loss = criterion(out, y)``; ``loss += ...`` keeps it), or whose value
  ``.backward()`` is called on with no gradient in the same scope (only a scalar allows that).

Generous the other way: anything else (a model's output, ``value.data[0]`` of a critic, a
dataset's ``.data``) is not known to be 0-dim, so a rule using this stays silent there.
"""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.model import SemanticModel
from torchlint.semantic.modules import self_attr_bindings
from torchlint.statements import dotted_name
from torchlint.torch_api import expr_key, is_loss_constructor, is_loss_function, keyword_arg, looks_like_criterion_name

_REDUCTIONS = {"sum", "mean", "norm", "prod"}
_TORCH_REDUCTIONS = {"torch.sum", "torch.mean", "torch.norm", "torch.prod"}
_SAME_TENSOR = {"detach", "cpu", "cuda", "float", "double", "clone"}
_MAX_DEPTH = 6


def is_zero_dim(ctx, model: SemanticModel, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``expr`` is a 0-dim tensor for sure (see the module docstring)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return is_zero_dim(ctx, model, expr.value, depth + 1)
    if isinstance(expr, cst.Call):
        return _zero_dim_call(ctx, model, expr, depth)
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
        if not bindings:
            return False
        return all(_zero_dim_binding(ctx, model, b, depth) for b in bindings) or _backwarded(model, expr, bindings)
    return False


def _backwarded(model: SemanticModel, name: cst.Name, bindings: list) -> bool:
    """``name.backward()`` with no gradient is called on the same value (the same reaching
    bindings) in the same scope: autograd only allows that on a scalar ("grad can be
    implicitly created only for scalar outputs")."""
    scope = model.scope_of(name)
    ids = {id(b.node) for b in bindings}
    for site in model.calls_to("backward"):
        call = site.node
        if site.scope is scope and not call.args and isinstance(call.func, cst.Attribute) \
                and isinstance(call.func.value, cst.Name) and call.func.value.value == name.value:
            if {id(b.node) for b in model.reaching(name.value, call.func.value)} == ids:
                return True
    return False


def _zero_dim_call(ctx, model: SemanticModel, call: cst.Call, depth: int) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SAME_TENSOR and not call.args:
        return is_zero_dim(ctx, model, func.value, depth + 1)
    if isinstance(func, cst.Attribute) and func.attr.value in _REDUCTIONS and not call.args \
            and (model.qualified_name(func) or "") not in ("numpy.sum", "numpy.mean"):
        return _maybe_tensor(model, func.value)
    if model.qualified_name(func) in _TORCH_REDUCTIONS:
        return len(call.args) == 1 and call.args[0].keyword is None and call.args[0].star == ""
    if _reduces_nothing(call):
        return False
    if is_loss_function(ctx, func):
        return True
    return _is_criterion(ctx, model, func)


def _maybe_tensor(model: SemanticModel, receiver: cst.BaseExpression) -> bool:
    """A receiver whose ``.sum()`` is a tensor's, not a list's or an array's: anything but a
    literal container or a NumPy value."""
    if isinstance(receiver, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp)):
        return False
    return not (model.qualified_name(receiver) or "").startswith("numpy")


def _reduces_nothing(call: cst.Call) -> bool:
    """``reduction="none"`` (or ``reduce=False``) among the call's arguments."""
    reduction, reduce = keyword_arg(call, "reduction"), keyword_arg(call, "reduce")
    return reduction is not None and not (isinstance(reduction.value, cst.SimpleString)
                                          and reduction.value.evaluated_value in ("mean", "sum")) \
        or reduce is not None and not (isinstance(reduce.value, cst.Name) and reduce.value.value == "True")


def _is_criterion(ctx, model: SemanticModel, func: cst.BaseExpression) -> bool:
    """``func`` is a criterion: bound to a ``*Loss`` instance that reduces, or named as one
    where its binding is not in the file (a parameter, an attribute set elsewhere)."""
    key = expr_key(func)
    if key is None:
        return False
    bindings = [b for b in model.reaching(key, func) if b.kind in ("assign", "ann")] if isinstance(func, cst.Name) else []
    if isinstance(func, cst.Attribute) and key.count(".") == 1 and key.startswith("self."):
        info = model.class_of(func)
        bindings = self_attr_bindings(model, info, func.attr.value) if info is not None else []
    built = [b.value for b in bindings if isinstance(b.value, cst.Call)]
    if built:
        return all(is_loss_constructor(ctx, v.func) and not _reduces_nothing(v) for v in built)
    return looks_like_criterion_name(dotted_name(func) or key)


def _zero_dim_binding(ctx, model: SemanticModel, b, depth: int) -> bool:
    if b.kind in ("assign", "ann", "aug"):
        if b.kind == "aug":  # loss += ...: 0-dim where it was
            before = model.reaching(b.key, b.node)
            return bool(before) and all(_zero_dim_binding(ctx, model, p, depth + 1) for p in before
                                        if p.node is not b.node)
        return b.value is not None and is_zero_dim(ctx, model, b.value, depth + 1)
    return False
