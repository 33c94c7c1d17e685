"""TL008 functional-dropout-ignores-eval: a dropout in an ``nn.Module``'s forward that
``model.eval()`` does not turn off.

For every class of the file with a ``forward``, the functions that forward runs
(``semantic.modules.forward_code``: forward and the same-file methods and functions it calls)
are searched for:

* calls of ``torch.nn.functional.dropout``/``dropout1d/2d/3d``/``alpha_dropout``/
  ``feature_alpha_dropout`` (``torch_api.functional_dropout``, imports resolved by the
  semantic model) that pass no ``training`` argument (neither by keyword nor as the third
  positional one, nor possibly in ``**kwargs``);
* a dropout layer built and called on the spot, ``nn.Dropout(p)(x)`` (``semantic.modes.fresh_dropout``):
  registered nowhere, it is always in training mode;
* ``F.scaled_dot_product_attention(..., dropout_p=p)`` with a rate that is no literal zero
  (``semantic.modes.attention_dropout``).

Left alone: a call under a test of ``self.training`` (``if self.training and ...:``, ``... if
self.training else x``) or after an early ``if not self.training: return``; a rate that is zero
outside training (``semantic.modes.rate_off_outside_training``); an explicit
``training=True`` (intent: always-on dropout, as Tacotron's prenet); functions no forward runs
(MC-dropout helpers, code outside classes). No comment or docstring exempts a call:
``training=True`` is how the code says the dropout stays on.

Whether the class is an ``nn.Module`` may depend on another file, so the findings are pending
facts the project pass settles (``semantic.modules.settle``).
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity
from torchlint.fixes import SAFE, Fix, insert_after
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.modes import (attention_dropout, fresh_dropout, mode_guarded, never_switched_to_eval,
                                      rate_always_zero, rate_given_per_call, rate_off_outside_training)
from torchlint.semantic.modules import class_key, forward_owners, pending, settle
from torchlint.semantic.packages import imported_by_another
from torchlint.statements import dotted_name
from torchlint.torch_api import functional_dropout, has_star_kwargs, keyword_arg

_LAYERS = {"dropout": "Dropout", "dropout1d": "Dropout1d", "dropout2d": "Dropout2d", "dropout3d": "Dropout3d",
           "alpha_dropout": "AlphaDropout", "feature_alpha_dropout": "FeatureAlphaDropout"}


def message(written: str, cls: str, function: str) -> str:
    layer = _LAYERS[function]
    return (f"`{written}` runs in `{cls}.forward` with its default training=True, so it keeps dropping after "
            f"model.eval(); pass training=self.training or use nn.{layer}")


def fresh_layer_message(layer: str, cls: str) -> str:
    return (f"`nn.{layer}(...)` is built and called in `{cls}.forward`: a new layer on every call, registered "
            f"nowhere, so model.eval() never reaches it and it keeps dropping in evaluation; build it once in "
            f"`__init__` (self.dropout = nn.{layer}(...)) or use F.{_FUNCTIONS.get(layer, 'dropout')}(..., "
            f"training=self.training)")


def attention_message(written: str, cls: str) -> str:
    return (f"`{written}` gets a dropout_p in `{cls}.forward` whatever the module's mode, so attention dropout "
            f"keeps dropping after model.eval(); pass dropout_p=<p> if self.training else 0.0")


_FUNCTIONS = {layer: function for function, layer in _LAYERS.items()}
_ATTENTION = "torch.nn.functional.scaled_dot_product_attention"


class FunctionalDropoutIgnoresEval(Rule):
    code = "TL008"
    name = "functional-dropout-ignores-eval"
    severity = Severity.WARNING
    default_enabled = True
    summary = "F.dropout in forward without training=self.training stays on after model.eval()"
    # [tool.torchlint.functional-dropout-ignores-eval]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("dropout", "Dropout")
    fixable = (SAFE,)


    def finish(self) -> None:
        sem = self.ctx.semantic
        model = sem.model
        owners = forward_owners(sem)
        if not owners:
            return
        found = []
        for site in model.calls:
            call = site.node
            info = owners.get(enclosing_function(model, site.scope))
            if info is None:
                continue
            qualified = model.qualified_name(call.func)
            fresh = fresh_dropout(model, call)
            if fresh is not None:  # nn.Dropout(p)(x) in forward
                if rate_given_per_call(sem, call) or rate_always_zero(sem, call):
                    continue
                found.append(pending(self.ctx, info, call, fresh_layer_message(fresh, info.name)))
                continue
            if qualified == _ATTENTION:
                rate = attention_dropout(call)
                if rate is not None and not mode_guarded(sem, call) and not rate_off_outside_training(sem, call, rate) \
                        and not rate_always_zero(sem, call, rate):
                    found.append(pending(self.ctx, info, call,
                                         attention_message(dotted_name(call.func) or "scaled_dot_product_attention",
                                                           info.name)))
                continue
            function = functional_dropout(qualified)
            if function is None or _passes_training(call) or mode_guarded(sem, call) \
                    or rate_off_outside_training(sem, call) or rate_always_zero(sem, call) \
                    or rate_given_per_call(sem, call):
                continue
            # no comment or docstring exempts a call: training=True is how the code says it stays on
            written = dotted_name(call.func) or function
            found.append(pending(self.ctx, info, call, message(written, info.name, function),
                                 self._fix(model, site, info)))
        if found:
            self.ctx.facts[self.code] = {"pending": found}
            idle = sorted({class_key(info) for info in owners.values() if info is not None
                           and any(p[0] == class_key(info) for p in found) and never_switched_to_eval(sem, info)})
            if idle:
                self.ctx.facts[self.code]["idle"] = idle

    def _fix(self, model, site, info) -> Fix | None:
        """``training=<self>.training`` appended to the call's arguments, where the call runs
        in a method of the module itself (so ``self`` is the module) and passes no ``*args``."""
        call = site.node
        function = enclosing_function(model, site.scope)
        name = model.self_name(function) if isinstance(function, cst.FunctionDef) else None
        if name is None or model.class_of(call) is not info or not call.args or any(a.star for a in call.args):
            return None
        last = call.args[-1].value
        return Fix.safe(f"Pass training={name}.training", insert_after(self.ctx, last, f", training={name}.training"))

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        """The pending findings of ``nn.Module`` classes (``settle``), but not of a class its
        file builds and never puts in evaluation mode (``modes.never_switched_to_eval``: a
        GAN's discriminator that only trains) unless another file imports it or its module:
        where the module is never evaluated, a dropout that ignores eval drops as it should."""
        idle = {(r.path, q) for r in project.records for q in (r.facts.get(cls.code) or {}).get("idle", ())}
        for finding in settle(cls, project):
            if (finding.path, finding.extra.get("class")) in idle \
                    and not imported_by_another(project, project.record(finding.path)):
                continue
            yield finding


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _passes_training(call: cst.Call) -> bool:
    """``training=`` given (by keyword, third positionally, or maybe in ``**kwargs``)."""
    return keyword_arg(call, "training") is not None or len(_positional(call)) >= 3 or has_star_kwargs(call)

