"""TL022 loss-input-mismatch: a loss given what it does not take, where the code shows it:
logits (a Linear/conv layer's raw output) to ``NLLLoss``/``F.nll_loss`` or ``BCELoss``/
``F.binary_cross_entropy``; class indices (``argmax``, ``max``'s indices, ``.long()``) as a
loss's input, or as ``BCELoss``/``BCEWithLogitsLoss``'s target; an ``F.one_hot`` target to
``NLLLoss`` (any dtype) or to ``CrossEntropyLoss`` (integer: a float one-hot is a valid
probability target since torch 1.10).

The complement of TL009: what a tensor is the output of and which loss a call computes are
``semantic.activations``'s (``Outputs.sources``: an ``act`` source named ``logits``,
``one_hot``, ``one_hot_float`` or ``indices`` beside the activations; ``loss_of``: the loss
kinds of ``torch_api.loss_wants``), across files through the same ``ends``/``uses``/``calls``
facts as TL009 (``ProjectOutputs``). This rule judges which (loss, input) pairs are wrong.
A model whose forward ends anywhere else (an activation, an unknown call, arithmetic) is
never reported.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Fix, Severity, Span
from torchlint.fixes import UNSAFE, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import (INDICES, INDICES_FLOAT, LOGITS, ONE_HOT, ONE_HOT_FLOAT, Outputs,
                                            ProjectOutputs, Source, class_endings, loss_input, loss_target)

_INDICES_INPUT = ("which needs a differentiable input: class indices carry no gradient, so backward() raises or "
                  "the model learns nothing from this loss; pass the scores (logits or probabilities) and keep "
                  "argmax for the metrics")
# (what the loss wants, what its input is) -> why it is wrong and what to write
INPUT = {
    ("nll", LOGITS): "which expects log-probabilities: on raw logits the loss is unbounded below and optimises the "
                     "wrong objective; apply log_softmax first, or use cross_entropy on the logits",
    ("bce", LOGITS): "which expects probabilities in [0, 1]: logits make it raise, or train the wrong objective; "
                     "use BCEWithLogitsLoss on the logits (or apply sigmoid first)",
    **{(wants, got): _INDICES_INPUT for wants in ("nll", "bce", "cross_entropy", "bce_logits", "regression")
       for got in (INDICES, INDICES_FLOAT)},
}
_ONE_HOT = ("which expects class indices: a one-hot target raises (multi-target not supported) or, reshaped, trains on "
            "the wrong labels; pass the class indices (`y`, or `y_one_hot.argmax(1)`)")
# (what the loss wants, what its target is) -> why it is wrong and what to write
TARGET = {
    ("nll", ONE_HOT): _ONE_HOT,
    ("nll", ONE_HOT_FLOAT): _ONE_HOT,
    ("cross_entropy", ONE_HOT): "which takes class indices or float probabilities: an integer one-hot target raises; "
                                "pass the class indices (`y`)",
    ("bce", INDICES): "which expects float targets shaped like its input: class indices raise (dtype Long) or "
                      "compare the wrong values; pass float 0/1 labels (`y.float()`)",
    ("bce_logits", INDICES): "which expects float targets shaped like its input: class indices raise (dtype Long) "
                             "or compare the wrong values; pass float 0/1 labels (`y.float()`)",
}
# The functional losses that, given logits, have a logits form computing what was meant.
_LOGITS_FORMS = {"torch.nn.functional.nll_loss": "cross_entropy",
                 "torch.nn.functional.binary_cross_entropy": "binary_cross_entropy_with_logits"}
_NAMES = {LOGITS: "logits", ONE_HOT: "an integer one-hot tensor (`F.one_hot`)",
          ONE_HOT_FLOAT: "a one-hot tensor (`F.one_hot`)", INDICES: "class indices",
          INDICES_FLOAT: "class indices"}


def describe(source: Source, got: str, role: str) -> str:
    """What reached the loss, for the message."""
    what = "target" if role == "target" else "input"
    if source.kind == "cls":
        cls = source.name.rsplit(".", 1)[-1]
        element = f"Element {source.element} of the output" if source.element is not None else "The output"
        return f"{element} of `{cls}` (its forward ends in a Linear/conv layer: logits)"
    if got == LOGITS:
        origin = source.origin
        if origin == "sequential":
            return "The output of an nn.Sequential ending in a Linear/conv layer (logits)"
        if origin.startswith("function "):
            return f"The output of `{origin[9:]}` (it returns logits)"
        if origin.startswith("layer "):
            return f"The raw output of an nn.{origin[6:]} layer (logits)"
        if origin.startswith("model "):
            return f"The output of torchvision's `{origin[6:]}` (it ends in a Linear layer: logits)"
        if origin.startswith("head "):
            name, attr = origin[5:].split(" ", 1)
            return f"The output of `{name}` with its `{attr}` replaced by a Linear/conv layer (logits)"
        return "Logits"
    return f"The {what}, {_NAMES[got]},"


def message(source: Source, got: str, role: str, loss: str, wants: str) -> str:
    table = TARGET if role == "target" else INPUT
    return f"{describe(source, got, role)} is passed to `{loss}`, {table[(wants, got)]}"


class LossInputMismatch(Rule):
    code = "TL022"
    name = "loss-input-mismatch"
    severity = Severity.ERROR
    default_enabled = True
    summary = ("A loss given what it does not take: logits to NLLLoss/BCELoss, one-hot targets to "
               "NLLLoss/CrossEntropyLoss, class indices to a loss")
    options: dict[str, Option] = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, "
                                         "test_*.py, *_test.py, tests.py, conftest.py): a test's loss is a fixture: the value it computes does not matter to the test"),
    }
    skips_test_files = True
    shared_facts = ("ends", "calls")  # a test file's model classes and calls, for other files' findings
    requires_text = ("nll_loss", "NLLLoss", "BCELoss", "binary_cross_entropy", "one_hot", "argmax", "long()", "max(",
                     "CrossEntropy", "cross_entropy", "mse_loss", "MSELoss", "l1_loss", "L1Loss", "Huber")
    fixable = (UNSAFE,)
    demand_group = "outputs"  # TL009, TL022, TL023: demanded facts from one ``Outputs`` of the file
    gathers_demanded = True  # cheap where the text shows no loss or activation: never analysed again on demand

    def finish(self) -> None:
        model = self.ctx.semantic.model
        outputs = Outputs.of(self.ctx)
        uses = []
        for site in model.calls:
            call = site.node
            loss = outputs.loss_of(call)
            if loss is None:
                if self.reports:  # it only reports (no fact): left undone where the rule does not
                    self._per_caller(outputs, call)
                continue
            wants, written = loss
            for role, arg in (("input", loss_input(call)), ("target", loss_target(call))):
                if arg is None:
                    continue
                table = TARGET if role == "target" else INPUT
                sources = outputs.sources(arg.value)
                fix = self._fix(call) if role == "input" else None
                if isinstance(wants, str):
                    bad = next((s for s in sources if s.kind == "act" and (wants, s.name) in table), None)
                    if bad is not None:
                        self.report(arg.value, message(bad, bad.name, role, written, wants),
                                    fix=fix if bad.name == LOGITS else None)
                        break
                    sources = [s for s in sources if s.kind != "act"]
                if sources and (role == "input" or not isinstance(wants, str)):
                    uses.append([[s.to_json() for s in sources], wants if isinstance(wants, str) else wants.to_json(),
                                 written, Span.of_range(self.ctx.position(arg.value)).to_json(), role,
                                 fix.to_json() if fix is not None else None])
        facts = {key: value for key, value in (("ends", class_endings(outputs)), ("uses", uses),
                                               ("calls", outputs.calls_made())) if value}
        self._facts = facts
        # kept even when empty: a file the rule ran on is never analysed again on demand
        self.ctx.facts[self.code] = facts  # (``ProjectOutputs.facts``)

    def _per_caller(self, outputs: Outputs, call: cst.Call) -> None:
        """A loss handed in by callers passing different losses: each caller's loss judged
        with what the same caller passes for the input (the first mismatch reported)."""
        for function, caller in outputs.callers_binding(call):
            within = outputs.for_caller(function, caller)
            loss = within.loss_of(call)
            if loss is None or not isinstance(loss[0], str):
                continue
            wants, written = loss
            for role, arg in (("input", loss_input(call)), ("target", loss_target(call))):
                table = TARGET if role == "target" else INPUT
                bad = next((s for s in within.sources(arg.value) if s.kind == "act" and (wants, s.name) in table),
                           None) if arg is not None else None
                if bad is not None:
                    self.report(arg.value, message(bad, bad.name, role, written, wants))
                    return

    def _fix(self, call: cst.Call) -> Fix | None:
        """For ``F.nll_loss(logits, y)`` written at the call: ``F.cross_entropy`` (it is
        ``nll_loss(log_softmax(x))``, the same arguments); ``F.binary_cross_entropy`` ->
        ``F.binary_cross_entropy_with_logits``. Not for a loss object (``nn.NLLLoss()``), which
        other code may call with log-probabilities."""
        func = call.func
        form = _LOGITS_FORMS.get(self.ctx.semantic.model.qualified_name(func) or "")
        if form is None or not isinstance(func, cst.Attribute):
            return None
        return Fix.unsafe(f"Use {form} on the logits", replace_node(self.ctx, func, func.with_changes(attr=cst.Name(form))))

    def demanded_facts(self) -> dict:
        """This file's facts where the text pre-check kept the rule from running (see TL009)."""
        return self._facts

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        outputs = ProjectOutputs(project, cls.code, endings_on_demand=True)
        for record in outputs.with_uses():
            for sources, wanted, loss, span, role, fix in outputs.facts(record).get("uses", ()):
                wants = outputs.loss(wanted if isinstance(wanted, str) else Source.from_json(wanted), record)
                if wants is None:
                    continue
                table = TARGET if role == "target" else INPUT
                found = next(((got, came) for s in sources
                              for got, came in outputs.activations(Source.from_json(s), record)
                              if (wants, got) in table), None)
                if found is not None:
                    got, came = found
                    yield Finding.at(cls, record.path, Span.from_json(span), message(came, got, role, loss, wants),
                                     fix=Fix.from_json(fix) if fix and got == LOGITS else None)
