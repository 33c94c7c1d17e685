"""TL026 log-of-softmax: the log of a softmax or a sigmoid (``torch.log(F.softmax(x, 1))``,
``x.softmax(1).log()``, ``torch.log(torch.sigmoid(x))``) instead of ``log_softmax`` /
``F.logsigmoid``.

The walk notes calls of ``torch.log(X)`` (imports resolved) and of a tensor's ``X.log()``;
``finish`` asks ``semantic.activations.probabilities_from`` whether ``X`` is, value for
value, a softmax's or a sigmoid's output: applied in this function (the call itself, through
shape-only methods, selections such as ``.gather`` and names bound only to it), or what a call
gives where the file shows the activation it ends in (``Outputs``: a helper returning one, an
``nn.Sequential`` ending in ``nn.Sigmoid()``, a same-file module's ``forward``). Left alone:
``log(p + eps)``, ``log(p.clamp(min=eps))``, ``p.data.clamp_(...)`` before the log (kept off 0
on purpose), a model whose last layer is in another file, a parameter, ``log_softmax`` itself.

Fix (safe) where the log's argument is the activation's call itself and its arguments carry
over one to one: ``F.softmax(h, dim=1)`` -> ``F.log_softmax(h, dim=1)`` (``torch.softmax``,
``torch.special.softmax`` and ``h.softmax(1)`` likewise), ``F.sigmoid(h)`` / ``torch.sigmoid(h)``
-> ``F.logsigmoid(h)`` / ``torch.nn.functional.logsigmoid(h)``. Through a name (the
probabilities may be used elsewhere), a layer (``nn.Softmax(1)(h)``) or a bare imported
``softmax`` there is no fix.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.fixes import SAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.activations import Outputs, activation_call, probabilities_from
from torchlint.torch_api import keyword_arg

_LOGS = {"torch.log", "torch.special.log"}
_WHERE = {"softmax": "a probability underflows to 0 (logits about 100 apart in float32, 17 in float16)",
          "sigmoid": "it underflows to 0 (an input below about -100 in float32, -17 in float16)"}
_INSTEAD = {"softmax": "log_softmax", "sigmoid": "F.logsigmoid"}


def log_message(log: str, activation: str, use: str | None = None) -> str:
    return (f"`{log}` of a {activation} is -inf where {_WHERE[activation]}, and its gradient NaN; use "
            f"`{use or _INSTEAD[activation]}`, the same values computed stably")


class LogOfSoftmax(Rule):
    code = "TL026"
    name = "log-of-softmax"
    severity = Severity.WARNING
    default_enabled = True
    summary = ("log of a softmax or sigmoid (torch.log(F.softmax(x)), .sigmoid().log()): -inf and NaN "
               "gradients where log_softmax/logsigmoid stay finite")
    # [tool.torchlint.log-of-softmax]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("log",)
    fixable = (SAFE,)

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._logs: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        kind = type(func)  # (``type() is``: every call of the file passes here; neither class is subclassed)
        if kind is cst.Attribute and func.attr.value == "log" or kind is cst.Name and func.value == "log":
            self._logs.append(node)

    def finish(self) -> None:
        model = self.ctx.semantic.model
        outputs = Outputs.of(self.ctx) if self._logs else None
        for call in self._logs:
            found = self._logged(call)
            if found is None:
                continue
            written, argument = found
            got = probabilities_from(model, argument, outputs=outputs)
            if got is None:
                continue
            activation, act_call = got
            replacement = self._replacement(call, argument, act_call, activation)
            if replacement is None:
                self.report(call, log_message(written, activation))
                continue
            text = self.ctx.module.code_for_node(replacement)
            self.report(call, log_message(written, activation, text),
                        fix=Fix.safe(f"Use `{text}`", replace_node(self.ctx, call, replacement)))

    def _logged(self, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
        """(how the log is written, what it takes the log of): ``torch.log(X)`` or ``X.log()``."""
        model = self.ctx.semantic.model
        func = call.func
        if model.qualified_name(func) in _LOGS:
            first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star \
                else keyword_arg(call, "input")
            return (self.ctx.module.code_for_node(func), first.value) if first is not None else None
        if isinstance(func, cst.Attribute) and not call.args and not model.is_imported(func):
            return ".log()", func.value
        return None

    def _replacement(self, log: cst.Call, argument: cst.BaseExpression, act: cst.Call,
                     activation: str) -> cst.Call | None:
        """The stable call written in place of the log, where one maps one to one."""
        if argument is not act or any(a.star for a in act.args) or len(log.args) > 1:
            return None
        func, model = act.func, self.ctx.semantic.model
        applied = activation_call(model, act)
        if not isinstance(func, cst.Attribute) or applied is None or applied[0] == "layer":
            return None  # ``softmax(h)`` imported bare, a layer (``self.softmax(h)``): no name to write
        qualified = model.qualified_name(func) or ""
        if activation == "softmax" and func.attr.value == "softmax":
            # F.softmax / torch.softmax / torch.special.softmax, or the tensor method h.softmax(1)
            return act.with_changes(func=func.with_changes(attr=cst.Name("log_softmax")))
        if activation != "sigmoid" or len(act.args) != 1 or act.args[0].keyword is not None:
            return None
        if qualified == "torch.nn.functional.sigmoid":
            return act.with_changes(func=func.with_changes(attr=cst.Name("logsigmoid")))
        if qualified == "torch.sigmoid" and isinstance(func.value, cst.Name):
            logsigmoid = cst.parse_expression(f"{func.value.value}.nn.functional.logsigmoid")
            return act.with_changes(func=logsigmoid)
        return None
