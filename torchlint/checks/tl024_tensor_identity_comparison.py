"""TL024 tensor-identity-comparison: ``is``/``is not`` between a tensor and a number
(``if top_i is EOS_token: break``, ``pred is 0``), always False (True) because a tensor, or
a NumPy integer, is never the ``int`` object; between a tensor or NumPy value and ``True``/``False``
(``np.any(x) is False``, ``mask.all() is True``: a NumPy ``bool_`` is never the Python bool); and
between the Python number ``.item()`` just took out of a tensor and a token id that is not a
small literal (``token_id.item() is not eos_token_id``), which CPython's small-int cache makes
work for -5..256 only.

The walk notes comparisons with one ``is``/``is not``; ``finish`` reports one whose one side
``semantic.tensors.tensor_value`` knows is a tensor (an index of ``.topk(...)``'s indices,
``.argmax()``, a layer's output, a factory's result, through names) and whose other side
``semantic.dataflow.is_plain_number`` knows is a Python number (a literal, a name bound only to
numbers, ``len(...)``, an option read from ``args``) or a name imported from another module
(``from vocab import EOS_token``: bound before the tensor was made, so never that object).
``x is None``, ``x is True``, ``t.item()
is 0`` (a Python int: the small-int cache makes it work) and two tensors (identity may be
meant) are left alone; so is ``tensor == None`` (a different question).

The ``.item()`` family: one side ``<x>.item()`` (a number made just now), the other a name, an
attribute or a subscript that is not bound only to an int literal in -5..256 or to a bool/None
(``x.item() is EOS`` with ``EOS = 1`` works in CPython and is left to pylint), nor a literal.

Fix (unsafe): ``is`` -> ``==``, ``is not`` -> ``!=``; against ``True``/``False``: ``bool(x)`` or
``not x``. The comparison then does what it says,
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
         "layer": "a layer's output", "factory": "a tensor", "index": "a tensor (or NumPy value)",
         "array": "a NumPy array or tensor value"}
_SMALL_INTS = range(-5, 257)


def identity_message(written: str, what: str, always: bool, fixed: str) -> str:
    return (f"`{written}` compares the identity of {_WHAT[what]} with a number: a tensor made here is never that "
            f"object, so this is always {always}; compare values: `{fixed}`")


def bool_identity_message(written: str, what: str, always: bool, fixed: str) -> str:
    return (f"`{written}` compares the identity of {_WHAT[what]} with a Python bool: a tensor or a NumPy `bool_` is "
            f"never that object, so this is always {always}; test its truth value: `{fixed}`")


def item_identity_message(written: str, other: str, fixed: str) -> str:
    return (f"`{written}` compares the identity of the number `.item()` just made with `{other}`: CPython shares int "
            f"objects only from -5 to 256, so this is False for larger ids (a vocabulary's end token) and for every "
            f"float; compare values: `{fixed}`")


def _int_literal(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.evaluated_value)
    return None


def _shared_singleton(model, expr: cst.BaseExpression) -> bool:
    """``expr`` is a literal, or a name bound only to an int literal in -5..256, to ``True``/``False``/``None``:
    an object CPython shares, so identity with a number ``.item()`` made can hold (or pylint's question)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                         cst.FormattedString, cst.Ellipsis)) or _int_literal(expr) is not None:
        return True
    if isinstance(expr, cst.Name):
        if expr.value in ("True", "False", "None"):
            return True
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(_shared_binding(b) for b in bindings)
    return False


def _shared_binding(b) -> bool:
    """Bound to an int literal in -5..256, to ``True``/``False``/``None``; or a parameter that is a flag
    (default ``True``/``False``, or annotated ``bool``)."""
    if b.kind in ("assign", "ann") and b.value is not None:
        return (isinstance(b.value, cst.Name) and b.value.value in ("True", "False", "None")) \
            or _int_literal(b.value) in _SMALL_INTS
    if b.kind == "param" and isinstance(b.node, cst.Param):
        default, annotation = b.node.default, b.node.annotation
        return (isinstance(default, cst.Name) and default.value in ("True", "False")) or (
            annotation is not None and isinstance(annotation.annotation, cst.Name) and annotation.annotation.value == "bool")
    return False


def _item_call(model, expr: cst.BaseExpression) -> bool:
    """``<x>.item()``: a Python number made just now from a tensor or an array."""
    return isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value == "item" and not model.is_imported(expr.func)


def _bool_literal(expr: cst.BaseExpression) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


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
    default_enabled = True
    summary = ("identity test (is / is not) of a tensor or NumPy value and a number or True/False, or of a tensor's "
               ".item() and a token id: always (or for ids above 256) False, so a decoding loop never stops at EOS")
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
        code = self.ctx.module.code_for_node
        for node in self._comparisons:
            target = node.comparisons[0]
            left, right = node.left, target.comparator
            negated = isinstance(target.operator, cst.IsNot)
            for side, other in ((left, right), (right, left)):
                what = tensor_value(model, side)
                if what is not None and tensor_value(model, other) is None:
                    if _older_constant(model, other):
                        fixed = self._by_value(node)
                        message = identity_message(code(node), what, negated, code(fixed))
                    elif (truth := _bool_literal(other)) is not None:
                        fixed = self._by_truth(node, side, truth != negated)
                        message = bool_identity_message(code(node), what, negated, code(fixed))
                    else:
                        continue
                elif _item_call(model, side) and not _item_call(model, other) and not _shared_singleton(model, other) \
                        and tensor_value(model, other) is None:
                    fixed = self._by_value(node)
                    message = item_identity_message(code(node), code(other), code(fixed))
                else:
                    continue
                self.report(node, message, fix=Fix.unsafe(f"Compare values: `{code(fixed)}`",
                                                          replace_node(self.ctx, node, fixed)))
                break

    @staticmethod
    def _by_value(node: cst.Comparison) -> cst.Comparison:
        """``a is b`` -> ``a == b``, ``a is not b`` -> ``a != b``."""
        target = node.comparisons[0]
        op = target.operator
        new_op = cst.NotEqual(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after) \
            if isinstance(op, cst.IsNot) else cst.Equal(whitespace_before=op.whitespace_before,
                                                         whitespace_after=op.whitespace_after)
        return node.with_changes(comparisons=[target.with_changes(operator=new_op)])

    @staticmethod
    def _by_truth(node: cst.Comparison, side: cst.BaseExpression, truthy: bool) -> cst.BaseExpression:
        """``x is True`` -> ``bool(x)``, ``x is False`` -> ``not x`` (keeping the comparison's parentheses)."""
        if truthy:
            value = side if isinstance(side, cst.GeneratorExp) else side.with_changes(lpar=[], rpar=[])
            return cst.Call(func=cst.Name("bool"), args=[cst.Arg(value)], lpar=node.lpar, rpar=node.rpar)
        return cst.UnaryOperation(operator=cst.Not(), expression=side, lpar=node.lpar, rpar=node.rpar)
