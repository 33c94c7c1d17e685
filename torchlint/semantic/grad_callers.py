"""The grad mode a node runs in, through the file's callers.

``grad_state.grad_mode_at`` answers from the code around a node and stops at the ``def``
holding it (``CALLER``: its callers decide). ``grad_mode_through_callers(sem, node)`` goes on
from there: the mode every same-file call of that function runs in, and so on up
(``def compute_accuracy(model, loader)`` called only under ``with torch.inference_mode():``
runs with autograd off). ``CALLER`` where the function has no same-file call site or is
handed on as a callback (its callers are elsewhere), ``UNKNOWN`` where its calls disagree.

``value_grad_mode(sem, expr, at)`` answers for a value rather than a node: the mode the value
``expr`` was computed in (what a ``backward()`` of it can differentiate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.semantic.dataflow import is_plain_number
from torchlint.semantic.grad_state import Grad, grad_mode_at
from torchlint.textscan import contains
from torchlint.torch_api import is_grad_mode_call

if TYPE_CHECKING:
    from torchlint.semantic import Analyses

_MAX_DEPTH = 8


def grad_mode_through_callers(sem: "Analyses", node: cst.CSTNode, *, left_off: bool = False) -> Grad:
    """Whether autograd records when ``node`` runs, its function's callers followed (see the
    module docstring). With ``left_off``, where nothing around a node decides, a call made
    earlier in its block of a same-file function that leaves autograd off
    (``leaves_grad_off``) decides: ``DISABLED``."""
    return _mode(sem, node, 0, frozenset(), left_off)


def _mode(sem: "Analyses", node: cst.CSTNode, depth: int, seen: frozenset, left_off: bool = False) -> Grad:
    found = grad_mode_at(sem.ctx, node)
    if left_off and found.state is Grad.ENABLED and found.by is None and left_off_before(sem, node):
        return Grad.DISABLED
    if found.state is not Grad.CALLER:
        return found.state
    function = found.by
    if left_off and left_off_before(sem, node):
        return Grad.DISABLED
    memo = sem.model.memo("grad_through_callers_left_off" if left_off else "grad_through_callers")
    if function in memo:
        return memo[function]
    if depth > _MAX_DEPTH or function in seen or function in _handed_on(sem):
        return Grad.CALLER
    callers = sem.graph.callers(function)
    if not callers:
        state = Grad.CALLER
    else:
        states = {_mode(sem, site.node, depth + 1, seen | {function}, left_off) for site in callers}
        state = states.pop() if len(states) == 1 else Grad.UNKNOWN
    if not seen:
        memo[function] = state
    return state


def _handed_on(sem: "Analyses") -> set:
    """Same-file functions passed as arguments somewhere (callbacks: they run elsewhere too)."""
    memo = sem.model.memo("grad_through_callers_handed_on")
    if None not in memo:
        memo[None] = {f for s in sem.model.calls for f in sem.graph.references(s)}
    return memo[None]


# Methods whose result is computed from the receiver (its graph, or its lack of one).
_FROM_RECEIVER = frozenset({
    "mean", "sum", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "view", "reshape", "squeeze",
    "unsqueeze", "clone", "contiguous", "abs", "pow", "sqrt", "exp", "log", "flatten", "mul", "div", "add",
    "sub", "neg", "norm", "prod", "type_as", "masked_fill"})
_COMPUTED = ("assign", "ann", "aug", "unpack", "walrus")


def value_grad_mode(sem: "Analyses", expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> tuple[Grad, cst.CSTNode | None]:
    """The grad mode the value of ``expr`` (read at ``at``) was computed in, with the node whose
    mode decided (the computing statement or call): what ``expr.backward()`` needs, since a
    backward runs the graph recorded when its value was computed, whatever the mode at the
    backward itself (``with torch.no_grad(): loss.backward()`` after computing ``loss`` is
    fine; computing ``loss`` under ``no_grad`` leaves nothing to differentiate).

    * a name: ``DISABLED`` when every binding reaching ``at`` computes it (an assignment,
      ``+=``, an unpacking, ``:=``) where autograd records nothing
      (``grad_mode_through_callers``, calls that leave autograd off followed); an assigned
      alias or computation (``total = loss``, ``loss = loss_q / n``) is judged as the value
      it binds; a binding of a plain number (``loss = 0`` before an accumulation) counts
      only when nothing else reaches; else the binding's mode (``ENABLED`` when one records);
    * a computation written at ``at`` (a call, an operator, ``loss.mean()``): ``DISABLED``
      when ``at`` runs with autograd off; else, for ``loss.mean()``/``loss * w``/``loss / n``,
      what its tensor operands carry (``DISABLED`` only when each one is ``DISABLED``); a
      factory asking for ``requires_grad=True`` or ``.requires_grad_()`` makes a leaf that
      records, under ``no_grad`` too;
    * anything else (an attribute, a subscript, a parameter): ``UNKNOWN``.
    """
    if depth > _MAX_DEPTH:
        return Grad.UNKNOWN, None
    if isinstance(expr, cst.Name):
        bindings = sem.model.reaching(expr.value, expr)
        if not bindings or any(b.kind not in _COMPUTED for b in bindings):
            return Grad.UNKNOWN, None
        counted = [b for b in bindings if b.value is None or not is_plain_number(sem.model, b.value)] or bindings
        states = []
        for b in counted:
            if b.kind in ("assign", "ann") and isinstance(b.value, (cst.Name, cst.Call, cst.BinaryOperation,
                                                                     cst.UnaryOperation)):
                states.append(value_grad_mode(sem, b.value, b.value, depth + 1))
            elif b.value is not None and _asks_for_grad(b.value):
                states.append((Grad.ENABLED, b.node))
            else:
                states.append((grad_mode_through_callers(sem, b.node, left_off=True), b.node))
        if all(s is Grad.DISABLED for s, _ in states):
            return states[-1]
        return next(((s, n) for s, n in states if s is not Grad.DISABLED), (Grad.UNKNOWN, None))
    if isinstance(expr, (cst.Call, cst.BinaryOperation, cst.UnaryOperation)):
        if _asks_for_grad(expr):
            return Grad.ENABLED, expr
        here = grad_mode_through_callers(sem, at, left_off=True)
        if here is Grad.DISABLED:
            return here, expr
        operands = _tensor_operands(expr)
        if operands:
            states = [value_grad_mode(sem, o, at, depth + 1) for o in operands]
            if all(s is Grad.DISABLED for s, _ in states):
                return states[0]
        return here, expr
    return Grad.UNKNOWN, None


def _tensor_operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values ``loss.mean()``, ``loss * w``, ``-loss``, ``loss / n`` compute from (numbers
    and divisors left out); empty for any other call."""
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _FROM_RECEIVER:
            return [func.value]
        return []
    if isinstance(expr, cst.UnaryOperation):
        return [expr.expression]
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Divide, cst.FloorDivide)):
            return [expr.left]  # ``loss / accumulation_steps``: the divisor is a count
        return [o for o in (expr.left, expr.right) if not isinstance(o, (cst.Integer, cst.Float))]
    return []


def _asks_for_grad(expr: cst.BaseExpression) -> bool:
    """``torch.ones(..., requires_grad=True)`` or ``x.requires_grad_()``: a leaf that records."""
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "requires_grad_":
        return not (expr.args and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == "False")
    return any(a.keyword is not None and a.keyword.value == "requires_grad" and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in expr.args)


def leaves_grad_off(sem: "Analyses", function: cst.CSTNode, depth: int = 0) -> bool:
    """A same-file function whose body, at its top level, ends with autograd switched off
    for its caller: a plain ``torch.set_grad_enabled(False)`` statement (or a call of such a
    function) not switched back on after it. ``set_grad_enabled`` is global state, not a
    context: silero's ``init_jit_model`` turned autograd off for every training run that
    loaded the model first."""
    if not isinstance(function, cst.FunctionDef) or depth > 2 or not contains(sem.ctx.text, "set_grad_enabled"):
        return False
    memo = sem.model.memo("grad_leaves_off")
    if function in memo:
        return memo[function]
    memo[function] = False  # recursion
    state = None
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        event = _statement_event(sem, statement, depth)
        if event is not None:
            state = event
    memo[function] = state is False
    return memo[function]


def _statement_event(sem: "Analyses", statement: cst.CSTNode, depth: int) -> bool | None:
    """What a top-level statement leaves the grad mode at: False (off), True (on), None."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    event = None
    for small in statement.body:
        value = small.value if isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign)) else None
        if not isinstance(value, cst.Call):
            continue
        if is_grad_mode_call(sem.ctx, value) == "set_grad_enabled":
            flag = value.args[0].value if value.args else None
            if isinstance(flag, cst.Name) and flag.value in ("True", "False"):
                event = flag.value == "True"
            continue
        site = sem.model.call_site(value)
        if site is not None and any(leaves_grad_off(sem, t, depth + 1) for t in sem.graph.targets(site)):
            event = False
    return event


def left_off_before(sem: "Analyses", node: cst.CSTNode) -> bool:
    """A statement earlier in a block around ``node`` (up to its function or the module)
    calls a function that ``leaves_grad_off``, and no plain ``set_grad_enabled`` comes after
    it before ``node``."""
    return left_off_by(sem, node) is not None


def left_off_by(sem: "Analyses", node: cst.CSTNode) -> cst.CSTNode | None:
    """The statement ``left_off_before`` finds, else None."""
    if not contains(sem.ctx.text, "set_grad_enabled"):
        return None
    parent = sem.ctx.parent
    child, anc = node, parent(node)
    while anc is not None:
        body = anc.body if isinstance(anc, (cst.IndentedBlock, cst.Module)) else None
        if isinstance(body, (list, tuple)) and child in body:
            for statement in reversed(body[:body.index(child)]):
                event = _statement_event(sem, statement, 0)
                if event is not None:
                    return statement if event is False else None
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.With)):
            return None
        child, anc = anc, parent(anc)
    return None
