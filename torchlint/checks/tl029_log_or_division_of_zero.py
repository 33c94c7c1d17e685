"""TL029 log-or-division-of-zero: the log of, or a division by, a value this very code can make
exactly 0, with no epsilon or clamp on the way.

The walk notes ``torch.log(X)`` / ``X.log()`` calls and, with the ``divisions`` option (off by
default: on the corpora most counts divided by were never empty in practice), ``a / D``
divisions (``/=`` too);
``finish`` asks ``semantic.zeros``: ``zero_value(X)`` for a log (a ReLU output, a count, one
minus a probability, a softmax computed by hand, a ratio of such), ``zero_divisor(D)`` for a
division (a count or mask's sum, the sum or norm of a ReLU output or a mask). Left alone: any
arithmetic or clamp on the way (``+ eps``, ``.clamp(min=...)``, ``max(n, 1)``), an in-place
clamp of the name, a function that tests one of the names the value is computed from
(``if n > 0``: ``guarded_by_test``), the log of a softmax's or sigmoid's own output (TL026's),
NumPy and ``math``. No fix: the epsilon, the clamp or the guard is the author's choice.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import Outputs, probabilities_from
from torchlint.semantic.zeros import guarded_by_test, zero_divisor, zero_value
from torchlint.torch_api import keyword_arg

_LOGS = {"torch.log", "torch.special.log", "torch.log2", "torch.log10"}


def log_message(log: str, words: str, when: str) -> str:
    return (f"`{log}` of {words}, which is exactly 0 {when}: the result is -inf and its gradient "
            f"NaN; keep it off 0 (`.clamp(min=eps)` or `+ eps`)")


def division_message(words: str, when: str) -> str:
    return (f"division by {words}, which is 0 {when}: inf or NaN, and NaN gradients; guard it "
            f"(`.clamp(min=1)` for a count, `+ eps` or `.clamp(min=eps)` for a sum or a norm)")


class LogOrDivisionOfZero(Rule):
    code = "TL029"
    name = "log-or-division-of-zero"
    severity = Severity.WARNING
    default_enabled = True
    summary = ("log of, or division by, a value this code can make exactly 0 (a ReLU output, a count, "
               "a mask's sum, 1 - a probability) with no epsilon")
    skips_test_files = True
    # [tool.torchlint.log-or-division-of-zero]; the page's Options block is generated from this.
    options = {
        "divisions": Option(False, bool, "also report divisions by a count of a mask or by a sum or norm of a "
                                         "ReLU output (`loss.sum() / mask.sum()`); off by default: on the corpora "
                                         "most such counts are of padding or positives that are never all absent "
                                         "in practice"),
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, "
                                         "test_*.py, *_test.py, tests.py, conftest.py): a test computes its expected "
                                         "values on fixed data, where a count is known not to be 0"),
    }
    requires_text = ("log", "/")

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._logs: list[cst.Call] = []
        self._divisions: list[tuple[cst.CSTNode, cst.BaseExpression]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        kind = type(func)  # (``type() is``: every call of the file passes here; neither class is subclassed)
        if kind is cst.Attribute and func.attr.value in ("log", "log2", "log10") \
                or kind is cst.Name and func.value == "log":
            self._logs.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide) and self.opts.get("divisions"):
            self._divisions.append((node, node.right))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.DivideAssign) and self.opts.get("divisions"):
            self._divisions.append((node, node.value))

    def finish(self) -> None:
        divisions = self._divisions if self.opts.get("divisions") else []
        if not self._logs and not divisions:
            return
        model = self.ctx.semantic.model
        outputs = Outputs.of(self.ctx)
        for call in self._logs:
            found = self._logged(call)
            if found is None:
                continue
            written, argument = found
            if probabilities_from(model, argument, outputs=outputs) is not None:
                continue  # TL026's: use log_softmax / logsigmoid
            zero = zero_value(model, argument, outputs)
            if zero is None or guarded_by_test(model, argument, call):
                continue
            self.report(call, log_message(written, zero.words, zero.when))
        for node, divisor in divisions:
            zero = zero_divisor(model, divisor, outputs)
            if zero is None or guarded_by_test(model, divisor, node):
                continue
            what = "a sum or norm of " + zero.words if zero.node is not divisor and zero.kind != "count" else zero.words
            self.report(node, division_message(what, zero.when))

    def _logged(self, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
        """(how the log is written, what it takes the log of): ``torch.log(X)`` or ``X.log()``."""
        model = self.ctx.semantic.model
        func = call.func
        if model.qualified_name(func) in _LOGS:
            first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star \
                else keyword_arg(call, "input")
            return (self.ctx.module.code_for_node(func), first.value) if first is not None else None
        if isinstance(func, cst.Attribute) and not call.args and not model.is_imported(func):
            return f".{func.attr.value}()", func.value
        return None
