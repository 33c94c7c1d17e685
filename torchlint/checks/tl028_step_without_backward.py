"""TL028 step-without-backward: ``optimizer.step()`` with no backward since the optimizer's
gradients were last cleared: the step applies zero (or None) gradients and trains nothing.

The facts come from ``semantic.updates.step_history``: the events of the step's iteration
read backwards from it (in a loop, the rest of the previous iteration too). Reported:

* a clearing of the optimizer (``zero_grad()`` of it or of a module it covers,
  ``p.grad = None``) with nothing between it and the step that may run a backward, unless a
  backward ran earlier in the same pass (that is TL001's "clearing between backward and
  step", reported at the ``zero_grad()``);
* a step in a loop whose iteration runs no backward at all, clears nothing, and computes a
  loss that it hands to no code torchlint cannot see (the backward was forgotten).

Left alone: a step after a call of a same-file function that runs a backward, or of code
torchlint cannot see that may (an unresolved ``self.<method>()``, a function of another
module or cell, anything handed the loss); ``opt.step(closure)`` (the closure differentiates);
a step outside a loop with no clearing before it (a helper the caller runs after its backward).
No fix: where the backward belongs is the code's choice.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.updates import BACKWARD, CLEAR, HELPER, is_loss_value, step_history
from torchlint.tree import iter_nodes


def cleared_message(optimizer: str, clearing: int) -> str:
    return (f"`{optimizer}.step()` runs with no backward since its gradients were cleared (line {clearing}): "
            "every gradient is zero or None, so this step does not train; call loss.backward() between "
            "zero_grad() and step()")


def forgotten_message(optimizer: str, loss: str) -> str:
    return (f"`{optimizer}.step()` runs in a loop whose iteration never calls backward: `{loss}` is computed but "
            "never differentiated, so no gradient is ever written and this step does not train; call "
            f"`{loss}.backward()` before the step")


def _closure_step(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and \
        any(a.keyword is None or a.keyword.value == "closure" for a in call.args) and \
        not (isinstance(call.func.value, cst.Name) and "scaler" in call.func.value.value.lower()) and \
        not (isinstance(call.func.value, cst.Attribute) and "scaler" in call.func.value.attr.value.lower())


class StepWithoutBackward(Rule):
    code = "TL028"
    name = "step-without-backward"
    severity = Severity.ERROR
    default_enabled = True
    summary = "optimizer.step() with no backward since the gradients were last cleared"
    # [tool.torchlint.step-without-backward]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("step",)

    def finish(self) -> None:
        sem = self.ctx.semantic
        for site, key in sem.training.sites.step:
            call = site.node
            if _closure_step(call):
                continue
            history = step_history(sem, site, key)
            if any(e.kind in (BACKWARD, HELPER) and e.node is call for e in history.since_clear + history.after):
                continue  # loss_scaler(loss, opt): the backward is the step's own call
            if history.cleared is not None:
                if any(e.kind in (BACKWARD, HELPER) for e in history.since_clear):
                    continue
                if any(e.kind in (BACKWARD, HELPER) for e in history.before_clear):
                    continue  # TL001's clearing between the backward and the step
                self.report(call, cleared_message(key, self.ctx.line_of(history.cleared.node)))
                continue
            if not history.in_loop or history.since_clear and any(
                    e.kind in (BACKWARD, HELPER, CLEAR) for e in history.since_clear):
                continue
            loss = self._dropped_loss(site)
            if loss is not None:
                self.report(call, forgotten_message(key, loss))

    def _dropped_loss(self, site) -> str | None:
        """A loss bound in the innermost loop around the step (same code scope): the name."""
        sem = self.ctx.semantic
        model = sem.model
        code = model.code_scope(site.scope)
        loops = [lp for lp in site.all_loops if model.code_scope(lp.scope) is code]
        if not loops:
            return None
        for node in iter_nodes(loops[-1].node.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and is_loss_value(sem, node.value):
                return node.targets[0].target.value
        return None
