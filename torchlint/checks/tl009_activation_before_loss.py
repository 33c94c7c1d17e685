"""TL009 activation-before-loss: softmax output fed to ``CrossEntropyLoss``/``F.cross_entropy``
or ``NLLLoss``/``F.nll_loss``, sigmoid output fed to ``BCEWithLogitsLoss``.

What a loss call computes and what its input comes out of are facts of the shared layer
(``semantic.activations``): the loss (the functional one, a constructed loss called, a name,
``self.<attr>`` or parameter holding one, its ``.forward``) and the input's sources (an
activation applied, an ``nn.Sequential`` ending in one, what a helper returns, the output of a
model whose class's ``forward`` is judged by the project pass from each file's ``ends``, the
model a parameter is given in another file). This rule judges: softmax into a loss that applies
log_softmax or wants log-probabilities, sigmoid into one that applies sigmoid.

Never reported: ``log_softmax`` before ``CrossEntropyLoss`` (harmless: log-softmax is
idempotent), softmax as the *target* (distillation), the logits element of a model returning
logits and probabilities, a forward returning an activation only on some paths, a criterion
that may be another loss.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import (Outputs, ProjectOutputs, Source, activation_call, class_endings,
                                            loss_input)

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


def model_source(cls: str, got: str, element: int | None = None) -> str:
    if element is None:
        return f"The output of `{cls}` (its forward ends in {got})"
    return f"Element {element} of the output of `{cls}` (its forward returns {got} output there)"


def act_source(got: str, origin: str) -> str:
    """How an activation's output reached the loss, for the message."""
    if origin == "sequential":
        return f"The output of an nn.Sequential ending in {got}"
    if origin.startswith("function "):
        return f"The output of `{origin[9:]}` (it returns {got} output)"
    if origin.startswith("head "):
        name, attr = origin[5:].split(" ", 1)
        return f"The output of `{name}` with its `{attr}` replaced by a layer ending in {got}"
    return f"{got.capitalize()} output"


def _describe(source: Source, got: str) -> str:
    if source.kind == "cls":
        return model_source(source.name.rsplit(".", 1)[-1], got, source.element)
    return act_source(got, source.origin)


class ActivationBeforeLoss(Rule):
    code = "TL009"
    name = "activation-before-loss"
    severity = Severity.ERROR
    default_enabled = True
    summary = "softmax/sigmoid output fed to a loss that applies its own (CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss)"
    options: dict[str, Option] = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, "
                                         "test_*.py, *_test.py, tests.py, conftest.py): a test's loss is a fixture: the value it computes does not matter to the test"),
    }
    skips_test_files = True
    shared_facts = ("ends", "calls")  # a test file's model classes and calls, for other files' findings
    requires_text = ("softmax", "Softmax", "sigmoid", "Sigmoid", "expit", "cross_entropy", "CrossEntropy", "nll_loss",
                     "NLLLoss", "with_logits", "WithLogits")
    fixable = (UNSAFE,)
    demand_group = "outputs"  # TL009, TL022, TL023: demanded facts from one ``Outputs`` of the file
    gathers_demanded = True  # cheap where the text shows no loss or activation: never analysed again on demand

    def finish(self) -> None:
        model = self.ctx.semantic.model
        self._outputs = outputs = Outputs.of(self.ctx)
        ends = class_endings(outputs)
        uses = []
        for site in model.calls:
            call = site.node
            loss = outputs.loss_of(call)
            arg = loss_input(call) if loss is not None else None
            if arg is None:
                continue
            wants, written = loss
            sources = outputs.sources(arg.value)
            if isinstance(wants, str):
                bad = next((s for s in sources if s.kind == "act" and (wants, s.name) in _BAD), None)
                if bad is not None:
                    fix = self._fix(model, arg.value, wants) if not bad.origin else None
                    self.report(arg.value, message(act_source(bad.name, bad.origin), written, wants, bad.name), fix=fix)
                    continue
                sources = [s for s in sources if s.kind != "act"]
            if sources:
                uses.append([[s.to_json() for s in sources], wants if isinstance(wants, str) else wants.to_json(),
                             written, Span.of_range(self.ctx.position(arg.value)).to_json()])
        calls = outputs.calls_made()
        self._facts = facts = {key: value for key, value in (("ends", ends), ("uses", uses), ("calls", calls)) if value}
        # kept even when empty: a file the rule ran on is never analysed again on demand
        self.ctx.facts[self.code] = facts  # (``ProjectOutputs.facts``)

    def demanded_facts(self) -> dict:
        """This file's facts (``ends``, ``uses``, ``calls``) where the text pre-check kept the
        rule from running: asked by the project pass of a file calling a function or class of
        the project with a model or loss (its loss may be there, on a parameter), and of the
        files importing a function or class one of whose parameters holds a model or loss."""
        return self._facts

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

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        outputs = ProjectOutputs(project, cls.code)
        for record in outputs.with_uses():
            for sources, wanted, loss, span in outputs.facts(record).get("uses", ()):
                wants = outputs.loss(wanted if isinstance(wanted, str) else Source.from_json(wanted), record)
                if wants is None:
                    continue
                found = next(((got, came) for s in sources for got, came in outputs.activations(Source.from_json(s), record)
                              if (wants, got) in _BAD), None)
                if found is not None:
                    got, came = found
                    yield Finding.at(cls, record.path, Span.from_json(span), message(_describe(came, got), loss, wants, got))


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
