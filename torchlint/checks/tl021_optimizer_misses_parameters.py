"""TL021 optimizer-misses-parameters: a layer put into a model, or the model built again,
after its optimizer was built: the new parameters are never in the optimizer, never trained.

The facts come from ``semantic.wiring``: the optimizer constructions of the file and the
modules they cover (``covered_modules``), the stores of a new layer or parameter into an
object (``parameter_stores``), fresh rebindings of a covered model's name (``rebuilds``), and
whether the optimizer is stepped after the change (``steps_after``) without being built
again or given ``add_param_group`` (``rewired_after``). Only changes in the same scope as the
optimizer's construction, after it in source order, are judged. Left alone: a change before
the optimizer is built, a parameter-free layer (``nn.Identity()``), a wrapper or move of the
same model (``DataParallel(model)``, ``model.to(device)``), a model built again and never
trained with that optimizer (reloaded for testing). No fix: where to build the optimizer
again, and with which parameter groups, is the code's choice.
"""

from __future__ import annotations

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.wiring import (covers, optimizer_bindings, parameter_stores, rebuilds, rewired_after,
                                       steps_after)


def replaced_message(target: str, optimizer: str, module: str) -> str:
    shown = target.replace(".<added>", "")
    what = f"a layer added to `{shown}`" if target.endswith(".<added>") else f"`{shown}`"
    return (f"{what} is set after `{optimizer}` was built over `{module}`'s parameters: the optimizer "
            "never sees the new layer's parameters, so they are never trained; build the optimizer after "
            "changing the model (or add them with add_param_group)")


def rebuilt_message(model: str, optimizer: str) -> str:
    return (f"`{model}` is built again after `{optimizer}` was built over its parameters: `{optimizer}` still "
            f"updates the old model's tensors and the new `{model}` is never trained; build the optimizer "
            "after the model")


class OptimizerMissesParameters(Rule):
    code = "TL021"
    name = "optimizer-misses-parameters"
    severity = Severity.ERROR
    default_enabled = True
    summary = "A layer or model replaced after its optimizer was built is never trained"
    # [tool.torchlint.optimizer-misses-parameters]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("parameters",)

    def finish(self) -> None:
        sem = self.ctx.semantic
        reported: set = set()
        for wired in optimizer_bindings(sem):
            if not wired.covers:
                continue
            scope, optimizer = wired.binding.scope, wired.binding.key
            for store in parameter_stores(sem, scope):
                if store.node in reported or sem.model.order.get(store.node, 0) <= wired.binding.order:
                    continue
                module = next((m for m in wired.covers if covers(m, store.target)), None)
                if module is None or not self._same_object(store.root, wired.binding.node, store.node):
                    continue
                if rewired_after(sem, scope, optimizer, store.node) or not steps_after(sem, scope, store.node, optimizer):
                    continue
                reported.add(store.node)
                self.report(store.node, replaced_message(store.target, optimizer, module))
            for module in wired.covers:
                if "." in module or "[" in module:
                    continue
                for rebuilt in rebuilds(sem, module, scope, wired.binding.node):
                    if rebuilt.node in reported or rewired_after(sem, scope, optimizer, rebuilt.node) \
                            or not steps_after(sem, scope, rebuilt.node, optimizer):
                        continue
                    reported.add(rebuilt.node)
                    self.report(rebuilt.node, rebuilt_message(module, optimizer))

    def _same_object(self, root: str, built, changed) -> bool:
        """``root`` names the same object where the optimizer was built and where it changed (the
        same bindings reach both; none for a name bound in another cell or file)."""
        model = self.ctx.semantic.model
        before = {id(b) for b in model.reaching(root, built)}
        after = {id(b) for b in model.reaching(root, changed)}
        return before == after
