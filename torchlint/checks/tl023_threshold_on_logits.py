"""TL023 threshold-on-logits: a probability threshold (``out > 0.5``, ``out >= 0.5``,
``0.5 < out``, any literal strictly between 0 and 1) or a rounding (``torch.round(out)``,
``out.round()``) applied to logits.

The value counts as logits only where the code shows it (``semantic.activations``): it comes
out of a Linear/conv layer with nothing after it (``Outputs.sources``: an ``act`` source named
``logits``, through names, helpers, an ``nn.Sequential`` or a model class's ``forward``, in
this file or another), and no regression or probability loss (``MSELoss``, ``BCELoss``) is
given the same model's output in the file; or the same value, or the same model's output, is
given to ``BCEWithLogitsLoss``/``CrossEntropyLoss`` in the file (``Outputs.losses_given``) and
the model's forward is not known to end in an activation. Unknown models stay silent.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Fix, Severity, Span
from torchlint.fixes import UNSAFE, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import LOGITS, Outputs, ProjectOutputs, Source, class_endings
from torchlint.textscan import contains
from torchlint.torch_api import LOGITS_LOSSES

_ACTIVATED = frozenset({"sigmoid", "softmax", "log_softmax"})


def message(decision: str, why: str) -> str:
    return (f"`{decision}` is applied to logits ({why}): logits are unbounded scores whose decision threshold is 0, "
            "not 0.5, so the predictions and the accuracy are wrong; apply torch.sigmoid first or compare with 0")


def model_why(cls: str) -> str:
    return f"the output of `{cls}`, whose forward ends in a Linear/conv layer"


def trained_why(loss: str) -> str:
    return f"the same model is trained with `{loss}`, which takes logits"


def _origin_why(source: Source) -> str:
    origin = source.origin
    if origin == "sequential":
        return "the output of an nn.Sequential ending in a Linear/conv layer"
    if origin.startswith("function "):
        return f"the output of `{origin[9:]}`, which returns a Linear/conv layer's output"
    return f"the raw output of an nn.{origin[6:]} layer" if origin.startswith("layer ") else "a layer's raw output"


def _probability(node: cst.BaseExpression) -> bool:
    """A float literal strictly between 0 and 1 (``0.5``, ``.5``)."""
    if not isinstance(node, cst.Float):
        return False
    try:
        value = float(node.value)
    except ValueError:
        return False
    return 0.0 < value < 1.0


def _zero(literal: cst.Float) -> tuple | None:
    """The fix of a comparison with 0.5: 0.0 instead (``sigmoid(x) > 0.5`` is ``x > 0``); other
    thresholds have no literal equivalent worth writing (``logit(p)``)."""
    if float(literal.value) != 0.5:
        return None
    return literal, cst.Float("0.0"), "Compare the logits with 0.0 (sigmoid(x) > 0.5 is x > 0)"


_DIGITS = frozenset("0123456789")


def _listed_comparison_at(text: str, at: int) -> bool:
    """Whether the ``<`` or ``>`` at ``at`` starts or ends one of ``requires_text``'s
    comparisons: the operator (``=`` may follow it), an optional space and ``0.`` or ``.``
    after it; or a digit and an optional space before it."""
    after = at + 1 + text.startswith("=", at + 1)
    after += text.startswith(" ", after)
    if text.startswith(".", after) or text.startswith("0.", after):
        return True
    before = at - 1
    if before >= 0 and text[before] == " ":
        before -= 1
    return before >= 0 and text[before] in _DIGITS


class ThresholdOnLogits(Rule):
    code = "TL023"
    name = "threshold-on-logits"
    severity = Severity.ERROR
    default_enabled = True
    summary = "A 0.5 threshold or round() applied to a model's logits (their threshold is 0)"
    options: dict[str, Option] = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, "
                                         "test_*.py, *_test.py, tests.py, conftest.py): a test's decision on a model's output is a fixture, not a prediction anyone uses"),
    }
    skips_test_files = True
    shared_facts = ("ends", "calls")  # a test file's model classes and calls, for other files' findings
    # round(), a comparison with a literal in (0, 1) on either side
    requires_text = ("round", *(f"{op}{space}{lit}" for op in (">", ">=", "<", "<=") for space in ("", " ")
                                for lit in ("0.", ".")),
                     *(f"{digit}{space}{op}" for digit in "0123456789" for space in ("", " ") for op in ("<", ">")))
    fixable = (UNSAFE,)
    demand_group = "outputs"  # TL009, TL022, TL023: demanded facts from one ``Outputs`` of the file
    gathers_demanded = True  # cheap where the text shows no loss or activation: never analysed again on demand

    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        """``requires_text``'s answer without its 57 scans of the whole text: ``round``, or at
        some ``<``/``>`` one of the comparisons it lists (``_listed_comparison_at``)."""
        if contains(text, "round"):
            return True
        for angle in "<>":  # ``find``, not a ``[<>]`` pattern: it skips to the next one far faster
            at = text.find(angle)
            while at >= 0:
                if _listed_comparison_at(text, at):
                    return True
                at = text.find(angle, at + 1)
        return False

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        # (the decision's node, the value it decides on, how it is written, the node a fix replaces
        # and what with)
        self._decisions: list[tuple[cst.CSTNode, cst.BaseExpression, str, tuple | None]] = []

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        op = target.operator
        if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)):
            code = self.ctx.module.code_for_node
            if _probability(target.comparator):
                self._decisions.append((node, node.left, f"{code(op).strip()} {target.comparator.value}",
                                        _zero(target.comparator)))
            elif _probability(node.left):
                self._decisions.append((node, target.comparator, f"{node.left.value} {code(op).strip()}",
                                        _zero(node.left)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value != "round":
            return  # neither ``.round()`` nor ``torch.round``: a qualified name keeps the last part
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            if not (isinstance(func, cst.Attribute) and func.attr.value == "round" and not node.args):
                return
        qualified = self.ctx.qualified_name(func) or ""
        if qualified == "torch.round":
            value = node.args[0].value
            fix = None
            if isinstance(func, cst.Attribute):  # torch.round(x) -> torch.round(torch.sigmoid(x))
                sigmoid = cst.Call(func=func.with_changes(attr=cst.Name("sigmoid")), args=[cst.Arg(value)])
                fix = (value, sigmoid, "Apply sigmoid before rounding")
            self._decisions.append((node, value, "torch.round", fix))
        elif isinstance(func, cst.Attribute) and func.attr.value == "round" and not node.args:
            self._decisions.append((node, func.value, ".round()", None))  # np.round() left out in finish()

    def finish(self) -> None:
        model = self.ctx.semantic.model
        outputs = Outputs.of(self.ctx)
        uses = []
        for node, value, decision, edit in self._decisions:
            if decision == ".round()" and model.is_imported(node.func):
                continue
            fix = Fix.unsafe(edit[2], replace_node(self.ctx, edit[0], edit[1])) if edit is not None else None
            sources = outputs.sources(value)
            if any(s.kind == "act" and s.name in _ACTIVATED for s in sources):
                continue
            losses = outputs.losses_given(value)
            other = set(losses) - LOGITS_LOSSES
            if other:
                continue  # given to a regression or probability loss too: not only logits
            # a torchvision model's logits (its own head or one the code put there) are read as
            # before this rule knew them: as an unknown model, judged by the loss it is trained with
            logits = next((s for s in sources if s.kind == "act" and s.name == LOGITS
                           and not s.origin.startswith(("model ", "head "))), None)
            if logits is not None:
                self.report(node, message(decision, _origin_why(logits)), fix=fix)
                continue
            models = [s for s in sources if s.kind != "act"]
            if losses or models:
                uses.append([[s.to_json() for s in models], sorted(losses.values())[0] if losses else None, decision,
                             Span.of_range(self.ctx.position(node)).to_json(), fix.to_json() if fix else None])
        facts = {key: value for key, value in (("ends", class_endings(outputs)), ("uses", uses),
                                               ("calls", outputs.calls_made())) if value}
        self._facts = facts
        # kept even when empty: a file the rule ran on is never analysed again on demand
        self.ctx.facts[self.code] = facts  # (``ProjectOutputs.facts``)

    def demanded_facts(self) -> dict:
        """This file's facts where the text pre-check kept the rule from running (see TL009)."""
        return getattr(self, "_facts", {})

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        outputs = ProjectOutputs(project, cls.code, endings_on_demand=True)
        for record in outputs.with_uses():
            for sources, loss, decision, span, fix in outputs.facts(record).get("uses", ()):
                got = [(name, came) for s in sources for name, came in outputs.activations(Source.from_json(s), record)]
                if any(name in _ACTIVATED for name, _ in got):
                    continue  # its forward ends in an activation (TL009's, where the loss applies its own)
                logits = next((came for name, came in got if name == LOGITS), None)
                if logits is not None and logits.kind == "cls":
                    why = model_why(logits.name.rsplit(".", 1)[-1])
                elif loss is not None:
                    why = trained_why(loss)
                else:
                    continue
                yield Finding.at(cls, record.path, Span.from_json(span), message(decision, why),
                                 fix=Fix.from_json(fix) if fix else None)
