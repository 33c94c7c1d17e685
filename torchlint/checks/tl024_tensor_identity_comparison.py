"""TL024 tensor-identity-comparison: ``is``/``is not`` between a tensor and a number
(``if top_i is EOS_token: break``, ``pred is 0``), always False (True) because a tensor, or
a NumPy integer, is never the ``int`` object.

The walk notes comparisons with one ``is``/``is not``; ``finish`` reports one whose one side
``semantic.tensors.tensor_value`` knows is a tensor (an index of ``.topk(...)``'s indices,
``.argmax()``, a layer's output, a factory's result, through names) and whose other side
``semantic.dataflow.is_plain_number`` knows is a Python number (a literal, a name bound only to
numbers, ``len(...)``, an option read from ``args``) or a name imported from another module
(``from vocab import EOS_token``: bound before the tensor was made, so never that object).
``x is None``, ``x is True``, ``t.item()
is 0`` (a Python int: the small-int cache makes it work) and two tensors (identity may be
meant) are left alone; so is ``tensor == None`` (a different question).

Fix (unsafe): ``is`` -> ``==``, ``is not`` -> ``!=``. The comparison then does what it says,
which changes the control flow (that is the point), and a tensor with several elements makes
``if t == k`` raise "Boolean value of Tensor with more than one value is ambiguous".
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.dataflow import is_plain_number
from torchlint.semantic.tensors import tensor_value

_WHAT = {"argmax": "an argmax (a tensor or a NumPy integer)", "topk": "an element of a (values, indices) result",
         "layer": "a layer's output", "factory": "a tensor", "index": "a tensor"}


def identity_message(written: str, what: str, always: bool, fixed: str) -> str:
    return (f"`{written}` compares the identity of {_WHAT[what]} with a number: a tensor made here is never that "
            f"object, so this is always {always}; compare values: `{fixed}`")


def _older_constant(model, expr: cst.BaseExpression) -> bool:
    """A Python number (``dataflow.is_plain_number``) or a name imported from another module
    (``from vocab import EOS_token``): bound before any tensor this code makes, so never one of them."""
    if is_plain_number(model, expr):
        return True
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(b.kind == "import" for b in bindings)
    return False


class TensorIdentityComparison(Rule):
    code = "TL024"
    name = "tensor-identity-comparison"
    severity = Severity.ERROR
    default_enabled = False  # too few public reports with a tensor side to measure recall (rules/TL024-*.md)
    summary = ("identity test (is / is not) of a tensor (an index of .topk(), .argmax(), a layer's output) and a number: "
               "always False/True, so a decoding loop never stops at EOS")
    # [tool.torchlint.tensor-identity-comparison]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = (" is ",)
    fixable = (UNSAFE,)

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._comparisons: list[cst.Comparison] = []

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
            self._comparisons.append(node)

    def finish(self) -> None:
        model = self.ctx.semantic.model
        for node in self._comparisons:
            target = node.comparisons[0]
            left, right = node.left, target.comparator
            what = tensor_value(model, left)
            number = right
            if what is None:
                what, number = tensor_value(model, right), left
            if what is None or not _older_constant(model, number) or tensor_value(model, number) is not None:
                continue
            negated = isinstance(target.operator, cst.IsNot)
            op = target.operator
            new_op = cst.NotEqual(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after) \
                if negated else cst.Equal(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
            fixed = node.with_changes(comparisons=[target.with_changes(operator=new_op)])
            code = self.ctx.module.code_for_node
            self.report(node, identity_message(code(node), what, negated, code(fixed)),
                        fix=Fix.unsafe(f"Compare values: `{code(fixed)}`", replace_node(self.ctx, node, fixed)))
