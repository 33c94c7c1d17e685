"""The grad mode a node runs in, through the file's callers.

``grad_state.grad_mode_at`` answers from the code around a node and stops at the ``def``
holding it (``CALLER``: its callers decide). ``grad_mode_through_callers(sem, node)`` goes on
from there: the mode every same-file call of that function runs in, and so on up
(``def compute_accuracy(model, loader)`` called only under ``with torch.inference_mode():``
runs with autograd off). ``CALLER`` where the function has no same-file call site or is
handed on as a callback (its callers are elsewhere), ``UNKNOWN`` where its calls disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.semantic.grad_state import Grad, grad_mode_at

if TYPE_CHECKING:
    from torchlint.semantic import Analyses

_MAX_DEPTH = 8


def grad_mode_through_callers(sem: "Analyses", node: cst.CSTNode) -> Grad:
    """Whether autograd records when ``node`` runs, its function's callers followed (see the
    module docstring)."""
    return _mode(sem, node, 0, frozenset())


def _mode(sem: "Analyses", node: cst.CSTNode, depth: int, seen: frozenset) -> Grad:
    found = grad_mode_at(sem.ctx, node)
    if found.state is not Grad.CALLER:
        return found.state
    function = found.by
    memo = sem.model.memo("grad_through_callers")
    if function in memo:
        return memo[function]
    if depth > _MAX_DEPTH or function in seen or function in _handed_on(sem):
        return Grad.CALLER
    callers = sem.graph.callers(function)
    if not callers:
        state = Grad.CALLER
    else:
        states = {_mode(sem, site.node, depth + 1, seen | {function}) for site in callers}
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
