"""TL009 activation-before-loss: softmax output fed to ``CrossEntropyLoss``/``F.cross_entropy``
or ``NLLLoss``/``F.nll_loss``, sigmoid output fed to ``BCEWithLogitsLoss``.

A loss call is recognised (``torch_api.logits_loss``) as a call of the functional loss, of
a constructed loss (``nn.CrossEntropyLoss()(out, y)``), or of a name or ``self.<attr>`` every
binding of which constructs one. Its input (the first argument, or ``input=``) is judged:

* an activation (``F.softmax``, ``torch.sigmoid``, ``x.softmax(1)``, ``nn.Softmax(1)(h)``,
  ``self.act(h)`` with ``self.act = nn.Softmax(1)``), directly or through a local name whose
  only reaching binding is one: reported here;
* the output of a model: a local or ``self.<attr>`` bound to ``nn.Sequential(..., nn.Softmax())``
  (reported here) or to a class's construction (``Net(...)``, same file or imported): the class
  goes into the facts with the loss, and the project pass reports when the class (or the
  nearest of its ancestors that defines ``forward``) has a ``forward`` every return of which
  is such an activation (each file records those endings);
* the output of a model handed in: a parameter or a ``self.`` attribute kept from ``__init__``
  (``Trainer(Net(), ...)`` keeping ``self.model``: ``constructors.origins``), judged by what
  the file's calls pass; when none does, by what the importing modules pass there
  (``facts["handed"]``, the project pass asking for their ``passes``, ``demanded_facts``).

Never reported: ``log_softmax`` before ``CrossEntropyLoss`` (harmless: log-softmax is
idempotent), softmax as the *target* (distillation), a model returning a tuple or only
sometimes an activation, a criterion that may be another loss.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import (activation_call, activation_of, built_model, model_of, returns_activation,
                                            values_of)
from torchlint.semantic.constructors import ArgumentFlow, origins, passes
from torchlint.semantic.modules import class_key
from torchlint.statements import dotted_name
from torchlint.torch_api import keyword_arg, logits_loss

# (what the loss wants, what it got) -> the fix
_BAD = {
    ("cross_entropy", "softmax"): "which applies log_softmax itself: softmax is applied twice and the gradients "
                                  "shrink; pass the logits instead",
    ("nll", "softmax"): "which expects log-probabilities: the loss is wrong and can go negative; use log_softmax "
                        "instead of softmax",
    ("bce_logits", "sigmoid"): "which applies sigmoid itself: sigmoid is applied twice; pass the logits instead "
                               "(or use nn.BCELoss)",
}


def message(source: str, loss: str, wants: str, got: str) -> str:
    return f"{source} is passed to `{loss}`, {_BAD[(wants, got)]}"


def model_source(cls: str, got: str) -> str:
    return f"The output of `{cls}` (its forward ends in {got})"


class ActivationBeforeLoss(Rule):
    code = "TL009"
    name = "activation-before-loss"
    severity = Severity.ERROR
    default_enabled = True
    summary = "softmax/sigmoid output fed to a loss that applies its own (CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss)"
    options: dict[str, Option] = {}
    requires_text = ("softmax", "Softmax", "sigmoid", "Sigmoid", "expit", "cross_entropy", "CrossEntropy", "nll_loss",
                     "NLLLoss", "with_logits", "WithLogits")
    fixable = (UNSAFE,)


    def finish(self) -> None:
        model = self.ctx.semantic.model
        ends = {}
        for info in model.classes.values():
            forward = info.methods.get("forward")
            got = returns_activation(self.ctx, model, forward) if forward is not None else None
            if got is not None:
                ends[class_key(info)] = got
        uses, handed = [], []
        for site in model.calls:
            call = site.node
            loss = self._loss(call)
            if loss is None:
                continue
            wants, written = loss
            arg = _input(call)
            if arg is None:
                continue
            direct = activation_of(model, arg.value)
            if direct is not None:
                if (wants, direct) in _BAD:
                    self.report(arg.value, message(f"{direct.capitalize()} output", written, wants, direct),
                                fix=self._fix(model, arg.value, wants))
                continue
            produced = model_of(self.ctx, model, arg.value)
            if produced is None:
                continue
            kind, data = produced
            if kind == "sequential":
                if (wants, data) in _BAD:
                    self.report(arg.value, message(f"The output of an nn.Sequential ending in {data}", written, wants, data))
                continue
            span = Span.of_range(self.ctx.position(arg.value)).to_json()
            if kind == "entries":
                handed.append([data, wants, written, span])
            else:
                uses.append([data, wants, written, span])
        facts = {key: value for key, value in (("ends", ends), ("uses", uses), ("handed", handed)) if value}
        if facts:
            self.ctx.facts[self.code] = facts

    def _fix(self, model, activated: cst.BaseExpression, wants: str) -> Fix | None:
        """For an activation call written in the loss's argument (not through a name, which
        other code may read): its input instead (the logits), or for ``NLLLoss`` its
        ``log_softmax`` form. Unsafe: the loss's value changes, as the author may not expect."""
        found = activation_call(model, activated)
        if found is None:
            return None
        form, logits = found
        if wants != "nll":
            return Fix.unsafe("Pass the logits to the loss", replace_node(self.ctx, activated, logits))
        renamed = _log_softmax(form, activated)
        if renamed is None:
            return None
        return Fix.unsafe("Use log_softmax instead of softmax", replace_node(self.ctx, activated, renamed))

    def _loss(self, call: cst.Call) -> tuple[str, str] | None:
        """(what the loss wants, the loss as written) if ``call`` computes such a loss."""
        model = self.ctx.semantic.model
        func = call.func
        wants = logits_loss(model.qualified_name(func))
        if wants is not None:
            return wants, dotted_name(func) or wants
        if isinstance(func, cst.Call):
            wants = logits_loss(model.qualified_name(func.func))
            return (wants, dotted_name(func.func) or wants) if wants is not None else None
        values = values_of(model, func)
        if not values:
            return None
        kinds = {logits_loss(model.qualified_name(v.func)) if isinstance(v, cst.Call) else None for v in values}
        if len(kinds) != 1 or None in kinds:
            return None
        return kinds.pop(), dotted_name(func) or ""

    def demanded_facts(self) -> dict:
        """What this file hands other modules' functions and classes that is a model of known
        kind (``[callee, slot, ["class", name] or ["sequential", activation]]``), asked only of
        the files importing a module whose loss inputs wait for it (``facts["handed"]``)."""
        ctx = self.ctx

        def describe(semantic, expr, at):
            if isinstance(expr, cst.Call):
                found = built_model(ctx, semantic.model, expr)
            elif isinstance(expr, (cst.Name, cst.Attribute)):
                values = origins(semantic, expr, at)
                kinds = {built_model(ctx, semantic.model, call) for call in values.calls()}
                found = kinds.pop() if len(kinds) == 1 and not values.unknown else None
            else:
                found = None
            return list(found) if found is not None else None

        return {"passes": passes(ctx.semantic, describe)}

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        ends: dict[str, str] = {}
        for record in project.records:
            facts = record.facts.get(cls.code)
            for qual, got in (facts or {}).get("ends", {}).items():
                ends[record.qualified(qual)] = got
        flow = None
        for record in project.records:
            facts = record.facts.get(cls.code) or {}
            for written_cls, wants, loss, span in facts.get("uses", ()):
                name = project.resolve_class(written_cls, record)
                got = _ending(project, name, ends) if name is not None else None
                if got is None or (wants, got) not in _BAD:
                    continue
                yield Finding.at(cls, record.path, Span.from_json(span),
                                 message(model_source(name.rsplit(".", 1)[-1], got), loss, wants, got))
            for entries, wants, loss, span in facts.get("handed", ()):
                # the model comes in through a parameter: judged by what the importing modules
                # pass there (constructors.ArgumentFlow), when they all pass the same ending
                if flow is None:
                    flow = ArgumentFlow(project, lambda r: (project.demand(cls.code, r.path) or {}).get("passes"))
                sources = set()
                for entry in entries:
                    for caller, (kind, data) in flow.arrivals(record, entry):
                        if kind == "sequential":
                            sources.add((f"The output of an nn.Sequential ending in {data}", data))
                            continue
                        name = project.resolve_class(data, caller)
                        got = _ending(project, name, ends) if name is not None else None
                        sources.add((model_source(name.rsplit(".", 1)[-1], got) if got else None, got))
                if len(sources) != 1:
                    continue
                source, got = sources.pop()
                if got is not None and (wants, got) in _BAD:
                    yield Finding.at(cls, record.path, Span.from_json(span), message(source, loss, wants, got))


def _ending(project, name: str, ends: dict[str, str]) -> str | None:
    """The activation the forward ``name`` runs ends in: its own or the nearest ancestor's."""
    for cls in [name, *project.ancestors(name)]:
        found = project.class_fact(cls)
        if found is None:
            return None  # an external base: its forward is unknown
        if "forward" in found[1]["methods"]:
            return ends.get(cls)
    return None


def _input(call: cst.Call) -> cst.Arg | None:
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0]
    return keyword_arg(call, "input")


def _log_softmax(form: str, call: cst.Call) -> cst.Call | None:
    """``call`` (a softmax) as its ``log_softmax`` form: ``F.log_softmax``, ``h.log_softmax``,
    ``nn.LogSoftmax``; None for a bare imported ``softmax`` (its log form is not imported)."""
    if form == "layer":
        layer = call.func.func
        if isinstance(layer, cst.Attribute) and layer.attr.value == "Softmax":
            return call.with_changes(func=call.func.with_changes(func=layer.with_changes(attr=cst.Name("LogSoftmax"))))
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "softmax":
        return call.with_changes(func=func.with_changes(attr=cst.Name("log_softmax")))
    return None
