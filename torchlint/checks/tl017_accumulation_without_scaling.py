"""TL017 accumulation-without-scaling: gradient accumulation whose loss is not divided by the
number of accumulated micro-batches.

``semantic.accumulation.accumulation_windows`` finds each backward that runs on every
iteration of a loop (or every call of a once-per-batch function: an ignite process function,
a ``train_step(batch)`` called in the data loop) whose optimizer step (or a same-file helper
that steps) runs only under an accumulation ``if`` there (``if (i + 1) % k == 0:``,
``if engine.state.iteration % k == 0:``, ``if accum_done:``). The rule
reports it when ``loss_scaling`` says the differentiated value is built only from a criterion,
a ``torch.nn.functional`` loss or a model's output with nothing dividing or multiplying it.
Left alone: a loss divided or multiplied anywhere on its way (``loss / k``, ``loss /= k``,
``loss * w``); a sum-reduced loss (``reduction="sum"``: summing over micro-batches is what it
asks for); a loss from a helper or a parameter (unknown); gradients rescaled in the
accumulation branch (``p.grad /= k``); ``accelerator.backward`` (Accelerate divides by its
``gradient_accumulation_steps``). No comment exempts a loop: one saying the sum is intended
changes no gradient (a sum-reduced loss is how the code says it).
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity, Span
from torchlint.fixes import UNSAFE, Edit, Fix, full_span, insert_after
from torchlint.rule import Option, Rule
from torchlint.semantic.accumulation import UNSCALED, accumulation_windows, gradients_scaled, loss_scaling
from torchlint.statements import dotted_name


def message(backward: str, count: str | None, step: str) -> str:
    k = f"`{count}`" if count else "the accumulation count"
    times = f"{k}×" if count else "that many times"
    return (f"`{backward}` adds up the gradients of {k} micro-batches per `{step}` without dividing the loss by {k}: "
            f"the gradient is {times} the batch mean (a larger SGD step, a tighter clipping threshold); "
            f"backward the loss divided by {k}")


class AccumulationWithoutScaling(Rule):
    code = "TL017"
    name = "accumulation-without-scaling"
    severity = Severity.WARNING
    default_enabled = True
    summary = "gradient accumulation that does not divide the loss by the number of accumulated micro-batches"
    # [tool.torchlint.accumulation-without-scaling]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text: tuple[str, ...] = ("backward",)
    fixable = (UNSAFE,)  # backward the loss divided by the count of the gate


    def finish(self) -> None:
        sem = self.ctx.semantic
        for window in accumulation_windows(sem):
            call = window.backward.node
            if self._accelerate(call) or gradients_scaled(window.region, self.ctx.module):
                continue
            if loss_scaling(sem, window.loss, call) != UNSCALED:
                continue
            count = window.count
            self.report(call, message(_code(call), _code(count) if count is not None else None,
                                      _code(window.step.node)), fix=self._divide_fix(window))

    def _divide_fix(self, window) -> Fix | None:
        """The backward's loss divided by the gate's count (``(loss / k).backward()``,
        ``scaler.scale(loss / k)``), where the count is an integer, a name or an attribute
        chain bound nowhere in the loop (or once-per-batch function) other than as its
        parameter, so it is the same value at the backward as at the gate. Only what is
        differentiated changes: a logged ``loss.item()`` keeps its scale."""
        count, loss = window.count, window.loss
        key = dotted_name(count) if count is not None else None
        if not (isinstance(count, cst.Integer) or key is not None):
            return None
        if key is not None:
            scope = self.ctx.semantic.model.scope_of(window.backward.node)
            if any(b.kind != "param" and (b.node is window.unit or self.ctx.inside(b.node, window.unit))
                   for b in scope.bindings.get(key, ())):
                return None
        atom = isinstance(loss, _PRIMARY) or bool(loss.lpar)
        parent = self.ctx.parent(loss)
        receiver = isinstance(parent, cst.Attribute) and parent.value is loss  # (loss / k).backward()
        before = ("(" if receiver else "") + ("" if atom else "(")
        after = ("" if atom else ")") + f" / {_code(count)}" + (")" if receiver else "")
        start = full_span(self.ctx, loss)
        # Text inserted around the loss, which stays as written (its comments and line breaks).
        edits = [insert_after(self.ctx, loss, after)]
        if before:
            edits.insert(0, Edit(Span(start.line, start.column, start.line, start.column), before))
        return Fix.unsafe(f"Backward the loss divided by {_code(count)}", *edits)

    def _accelerate(self, call: cst.Call) -> bool:
        """``accelerator.backward(loss)`` divides by its ``gradient_accumulation_steps``."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "backward" and bool(call.args) \
            and (dotted_name(func.value) or "").rsplit(".", 1)[-1].lower() == "accelerator"


# Expressions that bind tighter than ``/``: no parentheses needed on its left.
_PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
