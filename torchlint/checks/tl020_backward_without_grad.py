"""TL020 backward-without-grad: ``backward()`` of a loss computed where autograd records
nothing (``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``,
a decorator of those, or a function only ever called there).

The backward sites are the training model's (``loss.backward()``,
``torch.autograd.backward(loss)``, ``scaler.scale(loss).backward()``,
``accelerator.backward(loss)``, ``self.manual_backward(loss)``). What is judged is where the
differentiated value was computed, not where the backward runs: a backward replays the graph
recorded when its value was computed, so ``with torch.no_grad(): loss.backward()`` after an
ordinary forward trains (d2l's ``Trainer`` does it), while a loss computed under ``no_grad``
has no graph at all. ``semantic.grad_callers.value_grad_mode`` answers that (bindings of a
name followed, the function's same-file callers followed); only ``DISABLED`` is reported.
``scaler.scale(loss)`` multiplies where the backward is written, so a no-grad region there
counts too. A backward in a ``try`` that catches ``RuntimeError`` expects the error (a
tutorial demonstrating it: ``semantic.branches.catches``). No fix: which lines leave the
no-grad block is the code's choice.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.branches import catches
from torchlint.semantic.grad_callers import grad_mode_through_callers, left_off_by, value_grad_mode
from torchlint.semantic.grad_state import Grad, grad_mode_at
from torchlint.textscan import contains_any
from torchlint.torch_api import backward_target


def message(value: str, where: str) -> str:
    return (f"`{value}` is computed {where}, so autograd recorded nothing to differentiate: its backward() raises "
            "\"element 0 of tensors does not require grad\" (or, with requires_grad forced, trains nothing); "
            "compute the loss with autograd on")


class BackwardWithoutGrad(Rule):
    code = "TL020"
    name = "backward-without-grad"
    severity = Severity.ERROR
    default_enabled = True
    summary = "backward() of a loss computed where autograd records nothing"
    # [tool.torchlint.backward-without-grad]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("backward",)

    def finish(self) -> None:
        sem = self.ctx.semantic
        if not contains_any(self.ctx.text, ("no_grad", "inference_mode", "set_grad_enabled", "lightning")):
            return
        for site in sem.training.sites.backward:
            call = site.node
            target = backward_target(self.ctx, call)
            if target is None:
                continue
            scaled = isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
                and target is not call.func.value
            if scaled and grad_mode_through_callers(sem, call) is Grad.DISABLED:
                state, by, target = Grad.DISABLED, call, call.func.value
            else:
                state, by = value_grad_mode(sem, target, call)
            if state is Grad.DISABLED and not catches(self.ctx, call, "RuntimeError"):
                self.report(call, message(self.ctx.module.code_for_node(target), self._where(by)))

    def _where(self, node: cst.CSTNode | None) -> str:
        """What turned autograd off around ``node``, as the message shows it."""
        if node is None:
            return "where autograd is off"
        ctx = self.ctx
        found = grad_mode_at(ctx, node)
        decided = found.by
        if found.state is Grad.DISABLED and decided is not None:
            if isinstance(decided, cst.Decorator):
                return f"under `@{ctx.module.code_for_node(decided.decorator)}`"
            if isinstance(decided, cst.FunctionDef):
                return f"in `{decided.name.value}`, a Lightning evaluation hook"
            if isinstance(decided, cst.BaseExpression):
                return f"inside `{ctx.module.code_for_node(decided)}`"
            return "after `torch.set_grad_enabled(False)`"
        statement = left_off_by(ctx.semantic, node)
        if statement is not None:
            return f"after `{ctx.module.code_for_node(statement).strip()}`, which leaves autograd off"
        if found.state is Grad.CALLER and isinstance(found.by, cst.FunctionDef):
            return f"in `{found.by.name.value}()`, which is only called with autograd off"
        return "where autograd is off"
