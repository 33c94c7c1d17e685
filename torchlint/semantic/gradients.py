"""Gradient clearing besides an optimizer's ``zero_grad()`` (which the training model's
``sites.zero_grad`` holds), and gradient-accumulation windows.

* ``clears_all_gradients(func)``: a call that clears every gradient it reaches, not one
  optimizer's: ``p.grad.zero_()``, ``torch._foreach_zero_(grads)``, ``self.reset_grads()``,
  ``zero_grad(model)``.
* ``clearing_nodes(model)``: clearings that are no call: ``p.grad = None`` (or any value
  replacing the gradient), ``del p.grad``, ``opt.zero_grad`` handed on uncalled
  (``Trainer(zero_grad_fn=opt.zero_grad)``).
* ``accumulation_gate(ctx, node, unit)``: the ``if (i + 1) % k == 0:`` / ``if accum_done:``
  inside ``unit`` (a loop or function) whose body holds ``node``: code there runs once per
  accumulation window, not every iteration.
* ``runs_every_iteration(ctx, node, unit)``: nothing but plain blocks (``with``, a ``try``
  body) between ``node`` and ``unit``.
* ``optimized_modules(call)``: the modules whose ``.parameters()`` an optimizer constructor
  is given (``Adam(netD.parameters())`` -> ``{"netD"}``); a module's ``zero_grad()`` clears
  those modules' gradients only, not every optimizer's.
* ``module_clears(module, sources)``: whether ``module.zero_grad()`` reaches parameters of
  those modules (the module itself, a submodule of it, or the same attribute elsewhere).
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.tree import iter_nodes

# Helpers whose name says they clear gradients (``self.optimizer_zero_grad()``,
# ``zero_grad(model)``, ``self._reset_grads()``): their body may live in another file.
_CLEARING_NAME = re.compile(r"zero_?grads?|clear_?grads?|reset_?grads?|grads?_to_none", re.IGNORECASE)
# Names in an ``if`` test that mean "gradient accumulation boundary".
_ACCUMULATION_NAME = re.compile(r"accum|sync_grad", re.IGNORECASE)
# Statements that run whenever the code around them does (no branch in between).
_STRAIGHT = (cst.Expr, cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock, cst.With, cst.Finally,
             cst.WithItem, cst.Await)


def clears_all_gradients(func: cst.BaseExpression) -> bool:
    """``p.grad.zero_()``, ``torch._foreach_zero_(grads)``, ``self.reset_grads()``,
    ``zero_grad(model)``: clearings that are not one optimizer's ``zero_grad()``."""
    if isinstance(func, cst.Attribute):
        attr = func.attr.value
        if attr in ("backward", "manual_backward", "step", "zero_grad"):
            return False
        return (attr in ("zero_", "fill_") and mentions_grad(func.value)) or attr == "_foreach_zero_" \
            or bool(_CLEARING_NAME.search(attr))
    if isinstance(func, cst.Name):
        return func.value == "_foreach_zero_" or bool(_CLEARING_NAME.search(func.value))
    return False


def clearing_nodes(model) -> list[cst.CSTNode]:
    """Statements (and handed-on ``x.zero_grad`` expressions) that clear gradients without a
    call, in no particular order."""
    out: dict[int, cst.CSTNode] = {}
    for scope in model.scopes.values():
        for key, bindings in scope.bindings.items():
            grad = key.endswith(".grad")
            for b in bindings:
                if grad and b.kind in ("assign", "ann", "unpack") or b.kind == "del" and (grad or ".grad." in key) \
                        or b.kind in ("assign", "ann") and _handed_zero_grad(b.value):
                    out[id(b.node)] = b.node
    for site in model.calls:
        for arg in site.node.args:
            if _handed_zero_grad(arg.value):
                out[id(arg.value)] = arg.value
    return list(out.values())


def _handed_zero_grad(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Attribute) and value.attr.value == "zero_grad"


def mentions_grad(expr: cst.BaseExpression) -> bool:
    """``p.grad``, ``p.grad.data``, ``p.grad.detach()`` ..."""
    node = expr
    while True:
        if isinstance(node, cst.Attribute):
            if node.attr.value == "grad":
                return True
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, cst.Subscript):
            node = node.value
        else:
            return False


def runs_every_iteration(ctx, node: cst.CSTNode, unit: cst.CSTNode) -> bool:
    """``node`` runs whenever an iteration of ``unit`` does: only plain blocks between them."""
    child = node
    for anc in ctx.ancestors(node):
        if anc is unit:
            return True
        if isinstance(anc, _STRAIGHT) or (isinstance(anc, cst.Try) and child is anc.body):
            child = anc
            continue
        return False
    return False


def accumulation_gate(ctx, node: cst.CSTNode, unit: cst.CSTNode) -> cst.If | None:
    """The ``if (i + 1) % k == 0:`` (in ``unit``) whose body holds ``node``, if any."""
    child = node
    for anc in ctx.ancestors(node):
        if anc is unit or isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(anc, cst.If) and child is anc.body and looks_like_accumulation(anc.test):
            return anc
        child = anc
    return None


def looks_like_accumulation(test: cst.BaseExpression) -> bool:
    """A test with a ``%`` or a name saying accumulation (``accum_steps``, ``sync_gradients``)."""
    for node in iter_nodes(test):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return True
        if isinstance(node, cst.Name) and _ACCUMULATION_NAME.search(node.value):
            return True
        if isinstance(node, cst.Attribute) and _ACCUMULATION_NAME.search(node.attr.value):
            return True
    return False


_PARAMETER_METHODS = ("parameters", "named_parameters")


def optimized_modules(call: cst.BaseExpression | None) -> frozenset[str] | None:
    """The modules an optimizer constructor is built over: the receivers of every
    ``.parameters()``/``.named_parameters()`` in what it is given to optimise (its first
    argument or ``params=``, param groups included: ``[{"params": enc.parameters()}, ...]``);
    None when none is written there (a list of tensors, ``params`` built elsewhere)."""
    if not isinstance(call, cst.Call):
        return None
    given = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "params"), None)
    if given is None:
        return None
    found = set()
    for node in iter_nodes(given):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _PARAMETER_METHODS:
            receiver = _dotted(node.func.value)
            if receiver is None:
                return None
            found.add(receiver)
    return frozenset(found) or None


def module_clears(module: str, sources: frozenset[str] | set[str]) -> bool:
    """``module.zero_grad()`` clears gradients of parameters from ``sources``: it is one of
    them, a parent of one (``model`` for ``model.encoder``) or the same attribute reached
    another way (``self.netD`` and ``netD``)."""
    last = module.rsplit(".", 1)[-1]
    return any(s == module or s.startswith(module + ".") or s.rsplit(".", 1)[-1] == last for s in sources)


def _dotted(expr: cst.BaseExpression) -> str | None:
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))
