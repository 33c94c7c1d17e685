"""TL027 optimizer-stepped-after-other-backward: an optimizer stepped right after the backward
of a loss that never reaches the model it updates, while another optimizer covers the model
the loss does reach (a GAN's generator optimizer stepped after the discriminator's loss).

The facts come from ``semantic.updates``: the events of the step's iteration since its
optimizer's gradients were last cleared (``step_history``), the modules the optimizer covers
(``optimizer_covers``, from ``semantic.wiring``), and the models each backward's loss is
computed from (``models_reached``). Judged: every event back to the last step or clearing of any
optimizer (the update phase the step closes) is a backward this
file shows (a helper that may run one, same-file or unseen, leaves the step alone), at least
one reaches a known model, none reaches a module the stepped optimizer covers, and another
optimizer stepped or cleared in the same function, or built where the step can see it, covers
what they reach (an optimizer handed in as a
parameter covers what the file's callers pass). Left alone: optimizers built elsewhere or over
parameters not written as ``<module>.parameters()``, losses reaching the stepped model in any
way (also through a model handed to a helper), steps whose gradients come from a helper.
Also judged (``_judge_swap``): the phase opened by clearing another optimizer's gradients
(``StepHistory.opened_by``), the stepped optimizer cleared nowhere in the iteration, the other
covering a model the loss reaches and not stepped next: the generator's step swapped.
No fix: which optimizer was meant is the code's choice.
"""

from __future__ import annotations

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.gradients import module_clears
from torchlint.semantic.updates import (BACKWARD, CLEAR, STEP, enclosing, handed_optimizers, model_keys,
                                       models_reached_where, optimizer_covers, step_history, visible_optimizers,
                                       within)
from torchlint.semantic.wiring import covers


def message(optimizer: str, stepped: str, reached: str, other: str | None, line: int) -> str:
    by = f" (optimized by `{other}`)" if other else " (which no optimizer here covers)"
    instead = f"step `{other}` here" if other else f"build an optimizer over `{reached}`"
    return (f"`{optimizer}` updates `{stepped}`, but the backward before this step (line {line}) differentiates a "
            f"loss computed from `{reached}` only{by}: `{stepped}`'s gradients are stale or None, so this step "
            f"does not train it; {instead}, or run the backward of `{stepped}`'s loss")


def swap_message(optimizer: str, other: str, cleared: int, line: int) -> str:
    return (f"`{optimizer}` is stepped after `{other}`'s gradients were cleared (line {cleared}) and a loss "
            f"backpropagated (line {line}), but nothing here clears `{optimizer}`'s: this step applies "
            f"gradients summed over every pass while `{other}`'s fresh ones are never applied; step `{other}` "
            f"here, or clear `{optimizer}` before the backward")


def _related(a: str, b: str) -> bool:
    return a == b or covers(a, b) or covers(b, a)


class OptimizerSteppedAfterOtherBackward(Rule):
    code = "TL027"
    name = "optimizer-stepped-after-other-backward"
    severity = Severity.ERROR
    default_enabled = True
    summary = "An optimizer stepped after the backward of a loss that never reaches its model"
    # [tool.torchlint.optimizer-stepped-after-other-backward]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("backward",)

    def finish(self) -> None:
        sem = self.ctx.semantic
        training = sem.training
        if not training.sites.step or not training.sites.backward:
            return
        by_function: dict = {}  # the optimizers each function steps or clears, with what they cover
        for site, key in [*training.sites.step, *training.sites.zero_grad]:
            covered = optimizer_covers(sem, site, key) if key is not None else None
            if covered:
                by_function.setdefault(enclosing(sem, site), {}).setdefault(key, set()).update(covered)
        for site, key in training.sites.step:
            optimizers = dict(by_function.get(enclosing(sem, site), {}))
            for wired in visible_optimizers(sem, site):
                optimizers.setdefault(wired.binding.key, set()).update(wired.covers)
            for name, covered in handed_optimizers(sem, site).items():
                optimizers.setdefault(name, set()).update(covered)
            stepped = optimizers.get(key)
            if not stepped or len(optimizers) < 2:
                continue
            history = step_history(sem, site, key)
            events = history.since_update
            if not events or any(e.kind != BACKWARD or e.target is None for e in events):
                continue
            models = frozenset(m for covered in optimizers.values() for m in covered) | model_keys(sem, site)
            where: dict = {}
            for event in events:
                for model, nodes in models_reached_where(sem, event.target, models).items():
                    where.setdefault(model, []).extend(nodes)
            reached = set(where)
            if reached and any(_related(m, r) for m in stepped for r in reached):
                self._judge_swap(site, key, optimizers, history, reached, events)
                continue
            if not reached:
                continue
            loop = self._loop(site)
            if loop is not None and not all(any(within(sem, n, loop) for n in nodes) for nodes in where.values()):
                continue  # a model met only outside the step's loop: a value of another cell or pass
            other = next((k for k, covered in optimizers.items() if k != key
                          and all(any(_related(m, r) for m in covered) for r in reached)), None)
            line = self.ctx.line_of(events[0].node)
            self.report(site.node, message(key, sorted(stepped)[0], sorted(reached)[0], other, line))

    def _judge_swap(self, site, key: str, optimizers: dict, history, reached: set, events: list) -> None:
        """The update phase was opened by clearing another optimizer's gradients (``opt_g.zero_grad()``
        before the generator's loss), the stepped one is cleared nowhere in the step's iteration,
        and the other covers a model the loss reaches and is not stepped after: the two swapped."""
        opener = history.opened_by
        if opener is None or opener.kind != CLEAR or opener.key is None or history.cleared is not None:
            return
        stepped = optimizers[key]
        if opener.key in optimizers:
            other = opener.key if opener.key != key else None
        else:  # ``netG.zero_grad()``: the optimizer covering that module, not the stepped one's
            other = next((k for k, covered in optimizers.items() if k != key and module_clears(opener.key, covered)
                          and not module_clears(opener.key, stepped)), None)
        if other is None or not any(_related(m, r) for m in optimizers[other] for r in reached):
            return
        for event in history.after:
            if event.kind == STEP and event.key == other:
                return  # both stepped: the other's step comes next
            if event.kind in (CLEAR, BACKWARD):
                break
        cleared = self.ctx.line_of(opener.node)
        self.report(site.node, swap_message(key, other, cleared, self.ctx.line_of(events[0].node)))

    def _loop(self, site):
        """The innermost loop around ``site`` in its code scope, if any."""
        model = self.ctx.semantic.model
        code = model.code_scope(site.scope)
        loops = [lp for lp in site.all_loops if model.code_scope(lp.scope) is code]
        return loops[-1].node if loops else None
