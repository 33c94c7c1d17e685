"""TL018 legacy-autograd-api: code written for PyTorch before 0.4 that no longer does what it
says: ``loss.data[0]`` (an IndexError since 0.5: "invalid index of a 0-dim tensor") and
``Variable(x, volatile=True)`` (ignored since 0.4: autograd records the computation).

Indexing: a subscript ``X[0]`` (also ``X.data[0]``) whose ``X`` is 0-dim for sure
(``semantic.scalars.is_zero_dim``: a loss from a loss function or a reducing criterion, a full
reduction, names bound only to those). Anything not known to be 0-dim is left alone: a
model's output, a dataset's ``.data``, a batch. The fix (safe) writes ``X.item()``, the
number ``.data[0]`` gave before 0.4.

``volatile``: a call of ``torch.autograd.Variable`` (imports resolved) with ``volatile=``
anything but ``False``. No fix: the statements that should run under ``torch.no_grad()`` are
the user's to choose.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.fixes import SAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.gradmode import volatile_arguments
from torchlint.semantic.literals import integer_value
from torchlint.semantic.scalars import is_zero_dim
from torchlint.textscan import contains



def index_message(written: str, tensor: str) -> str:
    return (f"`{written}` indexes a 0-dim tensor: an IndexError since PyTorch 0.5 (\"invalid index of a "
            f"0-dim tensor\"); use `{tensor}.item()`")


def volatile_message() -> str:
    return ("`volatile=True` has had no effect since PyTorch 0.4: autograd records this computation and keeps "
            "its graph; run it under `with torch.no_grad():` instead")


class LegacyAutogradApi(Rule):
    code = "TL018"
    name = "legacy-autograd-api"
    severity = Severity.ERROR
    default_enabled = True
    summary = "Pre-0.4 autograd API: .data[0] on a 0-dim tensor raises, volatile=True does nothing"
    # [tool.torchlint.legacy-autograd-api]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("[0]", "volatile")
    fixable = (SAFE,)

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._indexed: list[cst.Subscript] = []

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            index = node.slice[0].slice.value
            if isinstance(index, cst.Integer) and integer_value(index) == 0:
                self._indexed.append(node)

    def finish(self) -> None:
        model = self.ctx.semantic.model
        for node in self._indexed:
            if isinstance(self.ctx.parent(node), cst.AssignTarget) or not is_zero_dim(self.ctx, model, node.value):
                continue
            tensor = node.value.value if isinstance(node.value, cst.Attribute) and node.value.attr.value == "data" \
                else node.value
            item = cst.Call(func=cst.Attribute(value=tensor, attr=cst.Name("item")))
            text = self.ctx.module.code_for_node(tensor)
            self.report(node, index_message(self.ctx.module.code_for_node(node), text),
                        fix=Fix.safe(f"Use `{text}.item()`", replace_node(self.ctx, node, item)))
        if contains(self.ctx.text, "volatile"):
            for arg in volatile_arguments(model):
                self.report(arg, volatile_message())
