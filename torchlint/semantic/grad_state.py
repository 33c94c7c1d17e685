"""Whether autograd records at a node: the one exact grad-mode query.

``grad_mode_at(ctx, node)`` answers from the code around ``node`` in its file, walking out
from it, the innermost decision first:

* a ``with`` whose body holds the node: each item, last first, that decides
  (``torch.no_grad()``, ``torch.inference_mode()`` or ``inference_mode(True)`` off;
  ``torch.enable_grad()`` on; ``torch.set_grad_enabled(True/False)`` as written, another
  argument ``UNKNOWN``; a project's own context manager named for grad mode
  (``utils.no_grad_if(cond)``) ``UNKNOWN``). ``inference_mode(False)`` decides nothing: the mode
  outside stays. Values a name may hold are followed (``ctx = torch.no_grad(); with ctx:``);
* a plain ``torch.set_grad_enabled(flag)`` statement earlier in the same block (the body of
  that ``with``, function or module; not inside a nested ``with``, which restores the mode on
  exit, nor in a nested ``def``): as written; one inside a branch or loop that does not hold
  the node may not have run: ``UNKNOWN``;
* a function: the body of a ``def`` holding the node runs where it is called, not where it is
  written, so the ``with`` around a ``def`` does not count. Its decorators decide, innermost
  (last written) first, as ``with`` items do; a Lightning evaluation hook (``validation_step``
  ...) runs with autograd off; else the mode is its callers': ``CALLER`` (the call sites
  decide: ``GradModes.only_called_with_choice``, ``crossfile.CalledUnderChoice``). A lambda's
  body likewise;
* the module: autograd is on unless something above decided (``ENABLED``).

``grad_mode_at(ctx, node, training=False)`` answers the same for code run while its module is in
evaluation mode (``self.training`` False: a method called after ``model.eval()``): a choice made
on ``self.training`` is then settled (``torch.enable_grad() if (self.fine_tune and
self.training) else torch.no_grad()``, ``torch.set_grad_enabled(self.training)`` off;
``torch.no_grad() if not self.training else nullcontext()`` off); a choice between two
modes on anything else decides nothing the code spells out (``UNKNOWN``) unless both sides agree.

``GradModes`` (``semantic.gradmode``) answers a different question, kept for the rules that
ask it: whether *some* grad-mode choice is made around a node, whatever it chooses.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import libcst as cst

from torchlint.semantic.training import grad_mode_exprs_of
from torchlint.textscan import contains
from torchlint.torch_api import is_false_literal, is_grad_mode_call, is_lightning_eval_hook
from torchlint.tree import children as _children

# Words a project's own grad-mode context manager is named with (``no_grad_if``).
_GRADISH = ("no_grad", "inference_mode", "grad_enabled", "enable_grad")


class Grad(enum.Enum):
    ENABLED = "enabled"  # autograd records
    DISABLED = "disabled"  # it does not (no_grad, inference_mode, set_grad_enabled(False))
    CALLER = "caller"  # whatever the callers of the enclosing function chose
    UNKNOWN = "unknown"  # a choice made here that the code does not spell out


class GradMode(NamedTuple):
    state: Grad
    by: cst.CSTNode | None  # what decided: a ``with`` item, a decorator, a statement, a def


def grad_mode_at(ctx, node: cst.CSTNode, training: bool | None = None) -> GradMode:
    """Whether autograd records when ``node`` runs (see the module docstring); ``training``:
    what ``self.training`` is while it runs (None: not known, choices on it are not settled)."""
    parent = ctx.parent
    model = ctx.semantic.model
    child, anc = node, parent(node)
    while anc is not None:
        kind = type(anc)
        if kind is cst.With and child is anc.body:
            found = _set_before(ctx, anc.body, node, training) or _with_mode(ctx, model, anc, training)
            if found is not None:
                return found
        elif kind is cst.FunctionDef and child is anc.body:
            found = _set_before(ctx, anc.body, node, training) or _decorated(ctx, anc, training)
            if found is not None:
                return found
            if is_lightning_eval_hook(anc.name.value):
                return GradMode(Grad.DISABLED, anc)
            return GradMode(Grad.CALLER, anc)
        elif kind is cst.Lambda and child is anc.body:
            return GradMode(Grad.CALLER, anc)
        elif kind is cst.Module:
            return _set_before(ctx, anc, node, training) or GradMode(Grad.ENABLED, None)
        child, anc = anc, parent(anc)
    return GradMode(Grad.ENABLED, None)


def decides(ctx, expr: cst.BaseExpression, training: bool | None = None) -> Grad | None:
    """What a ``with`` item or decorator chooses; None where it chooses nothing. With
    ``training`` (what ``self.training`` is), also a choice between two modes
    (``torch.enable_grad() if self.training else torch.no_grad()``) and a flag computed from
    ``self.training`` (``set_grad_enabled(self.training and self.fine_tune)``)."""
    if training is not None and isinstance(expr, cst.IfExp):
        test = _truth(expr.test, training)
        if test is not None:
            return decides(ctx, expr.body if test else expr.orelse, training)
        body, orelse = decides(ctx, expr.body, training), decides(ctx, expr.orelse, training)
        if body is None and orelse is None:
            return None
        return body if body == orelse else Grad.UNKNOWN
    kind = is_grad_mode_call(ctx, expr)
    call = expr if isinstance(expr, cst.Call) else None
    first = call.args[0].value if call is not None and call.args and call.args[0].keyword is None else None
    if call is not None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "mode":
                first = arg.value
    if kind == "no_grad":
        return Grad.DISABLED
    if kind == "enable_grad":
        return Grad.ENABLED
    if kind == "inference_mode":
        if first is None or _literal(first) is True:
            return Grad.DISABLED
        return None if _literal(first) is False else Grad.UNKNOWN
    if kind == "set_grad_enabled":
        flag = _truth(first, training) if first is not None else None
        return Grad.UNKNOWN if flag is None else Grad.ENABLED if flag else Grad.DISABLED
    name = ctx.qualified_name(expr.func if call is not None else expr) or ""
    if any(word in name.rsplit(".", 1)[-1].lower() for word in _GRADISH):
        return Grad.UNKNOWN  # a project's own wrapper: some choice, which one the code does not say
    return None


def _literal(expr: cst.BaseExpression) -> bool | None:
    if is_false_literal(expr):
        return False
    if isinstance(expr, cst.Name) and expr.value == "True" or isinstance(expr, cst.Integer) and expr.value == "1":
        return True
    return None


def _truth(expr: cst.BaseExpression, training: bool | None) -> bool | None:
    """The value of a flag: a literal, or with ``training`` given, ``self.training`` and
    ``not``/``and``/``or`` of those (``self.fine_tune and self.training``); None if unknown."""
    literal = _literal(expr)
    if literal is not None or training is None:
        return literal
    if isinstance(expr, cst.Attribute) and expr.attr.value == "training" and isinstance(expr.value, cst.Name) \
            and expr.value.value == "self":
        return training
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        inner = _truth(expr.expression, training)
        return None if inner is None else not inner
    if isinstance(expr, cst.BooleanOperation):
        left, right = _truth(expr.left, training), _truth(expr.right, training)
        if isinstance(expr.operator, cst.And):
            return False if left is False or right is False else True if left and right else None
        return True if left is True or right is True else False if left is False and right is False else None
    return None


def _with_mode(ctx, model, with_node: cst.With, training: bool | None = None) -> GradMode | None:
    items = list(grad_mode_exprs_of(model, with_node))
    for expr in reversed(items):  # the last item is entered last: the innermost
        state = decides(ctx, expr, training)
        if state is not None:
            return GradMode(state, expr)
    return None


def _decorated(ctx, function: cst.FunctionDef, training: bool | None = None) -> GradMode | None:
    for decorator in reversed(function.decorators):  # the last written wraps the body directly
        state = decides(ctx, decorator.decorator, training)
        if state is not None:
            return GradMode(state, decorator)
    return None


_BRANCHING = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)


def _set_before(ctx, block: cst.CSTNode, node: cst.CSTNode, training: bool | None = None) -> GradMode | None:
    """The last plain ``torch.set_grad_enabled(flag)`` statement of ``block`` before ``node``
    (see the module docstring)."""
    if not contains(ctx.text, "set_grad_enabled"):
        return None
    found: GradMode | None = None
    stack: list[tuple[cst.CSTNode, bool]] = [(block, False)]  # (node, inside a branch without ``node``)
    holding = set(_ancestors(ctx, node, block))
    while stack:
        current, branched = stack.pop()
        if current is node:
            return found
        if current is not block and type(current) in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
            continue
        if type(current) is cst.With and current not in holding:
            continue  # its mode is restored on exit
        if type(current) is cst.Expr and isinstance(current.value, cst.Call) \
                and is_grad_mode_call(ctx, current.value) == "set_grad_enabled":
            call = current.value
            flag = _truth(call.args[0].value, training) if call.args else None
            state = Grad.UNKNOWN if flag is None or branched else Grad.ENABLED if flag else Grad.DISABLED
            found = GradMode(state, current)
            continue
        inner = branched or (isinstance(current, _BRANCHING) and current not in holding)
        stack.extend((child, inner) for child in reversed(_children(current)))
    return found


def _ancestors(ctx, node: cst.CSTNode, stop: cst.CSTNode):
    anc = ctx.parent(node)
    while anc is not None and anc is not stop:
        yield anc
        anc = ctx.parent(anc)
