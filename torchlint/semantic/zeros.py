"""Which values this code itself can make exactly 0, and which are kept off 0.

A value *can be zero* (``zero_value``) when the code that computes it shows it, not when it
merely might be: a ReLU's output (``F.relu(h)``, ``h.relu()``, ``nn.ReLU()(h)``, ``self.relu(h)``
with ``self.relu = nn.ReLU()``); a count (``(pred == y).sum()``, ``mask.sum()`` of a comparison,
``torch.count_nonzero``); one minus a probability (``1 - torch.sigmoid(x)``, ``1 - p`` with ``p``
a softmax's output: it rounds to exactly 0 once the probability rounds to 1); a softmax computed
by hand (``e = torch.exp(x); e / e.sum(1, keepdim=True)``: ``exp`` underflows to 0 for a logit
about 100 below the largest); and a quotient whose numerator can be zero. Through names every
binding of which can be zero, shape-only methods, casts and selections of values (an index,
``.gather``).

A *divisor* can be zero (``zero_divisor``) where it is a sum or a norm of such a value or of a
mask (``loss.sum() / mask.sum()``, ``h / h.sum(1, keepdim=True)`` with ``h`` a ReLU output,
``x / x.norm(dim=1, keepdim=True)`` with ``x`` a mask), or such a count itself.

Any arithmetic on the way (``+ eps``), ``.clamp(min=...)``, ``torch.clamp_min``, ``max(n, 1)``
and ``F.normalize`` end the chain: the value is then kept off 0. So do an in-place clamp of the
name (``n.clamp_(min=1)``) and a test of the name in the function (``if n > 0:``,
``assert mask.any()``, ``n if n else 1``): the code looked at the zero case (``guarded_by_test``).
A softmax's or sigmoid's own output is not reported here: ``probabilities_from`` (TL026) answers
for the log of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.semantic.activations import SHAPE_METHODS, clamped_in_place, probabilities_from
from torchlint.semantic.dataflow import single_value, values_of
from torchlint.libraries import torch_nn_class
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.semantic.activations import Outputs
    from torchlint.semantic.model import SemanticModel

_MAX_DEPTH = 24

RELU, COUNT, COMPLEMENT, SOFTMAX, QUOTIENT = "relu", "count", "complement", "softmax", "quotient"
WORDS = {RELU: "a ReLU's output", COUNT: "a count", COMPLEMENT: "one minus a probability",
         SOFTMAX: "a softmax computed by hand (exp over its sum)", QUOTIENT: "a ratio whose numerator can be 0"}
WHEN = {RELU: "wherever its input is not positive", COUNT: "when nothing matches",
        COMPLEMENT: ("once the probability rounds to 1 (in float32, a sigmoid's input above about 17, a softmax's "
                     "top logit about 17 above the others)"),
        SOFTMAX: "where exp underflows (a logit about 100 below the largest in float32)",
        QUOTIENT: "wherever its numerator is"}

_RELU_FUNCTIONS = frozenset({"torch.relu", "torch.nn.functional.relu", "torch.nn.functional.relu6",
                             "torch.relu_", "torch.nn.functional.relu_"})
_RELU_LAYERS = frozenset({"ReLU", "ReLU6"})
_CASTS = frozenset({"float", "double", "half", "long", "int", "type", "type_as", "to", "cpu", "cuda", "item",
                    "detach", "clone", "data"})
_PICKING = frozenset({"gather", "index_select", "masked_select", "take_along_dim"})
_COMPARE_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "bool", "logical_and", "logical_or",
                              "logical_not", "isnan", "isinf", "isfinite"})
_COMPARE_FUNCTIONS = frozenset({"torch.eq", "torch.ne", "torch.lt", "torch.le", "torch.gt", "torch.ge",
                                "torch.logical_and", "torch.logical_or", "torch.logical_not", "torch.isnan",
                                "torch.isin"})
_SUMS = frozenset({"torch.sum", "torch.count_nonzero"})
_NORMS = frozenset({"torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm"})
_EXPS = frozenset({"torch.exp"})
# Methods that keep a value off 0: never followed.
_GUARDS = frozenset({"clamp", "clip", "clamp_min", "clamp_", "clip_", "clamp_min_", "maximum", "fmax", "add", "add_"})
_SAME = SHAPE_METHODS - _GUARDS  # shape-only methods a value passes through unchanged


@dataclass(frozen=True)
class Zero:
    """Why a value can be exactly 0: ``kind`` (``RELU``, ``COUNT``, ``COMPLEMENT``, ``SOFTMAX``,
    ``QUOTIENT``) and the node that makes it so."""
    kind: str
    node: cst.CSTNode

    @property
    def words(self) -> str:
        return WORDS[self.kind]

    @property
    def when(self) -> str:
        return WHEN[self.kind]


def _method(model: "SemanticModel", call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute) and not model.is_imported(func):
        return func.attr.value
    return None


def _first(call: cst.Call) -> cst.BaseExpression | None:
    return call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None


def _number(node: cst.BaseExpression, value: float) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return float(node.value) == value
        except ValueError:
            return False
    return False


def _one(model: "SemanticModel", expr: cst.BaseExpression, depth: int) -> bool:
    """``1``, ``1.0``, ``torch.ones_like(p)``, ``torch.ones(...)``, or a name bound only to one."""
    if _number(expr, 1.0):
        return True
    if isinstance(expr, cst.Call):
        return model.qualified_name(expr.func) in ("torch.ones_like", "torch.ones")
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        values = values_of(model, expr)
        return bool(values) and all(_one(model, v, depth + 1) for v in values)
    return False


def is_mask(model: "SemanticModel", expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A boolean tensor for sure, or its cast: a comparison (``pred == y``, ``y.ne(pad)``,
    ``torch.eq(a, b)``), ``~m``, ``m & n``, ``.bool()``, and names every binding of which is one."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Comparison):
        return not any(isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return is_mask(model, expr.expression, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr)):
        return is_mask(model, expr.left, depth + 1) and is_mask(model, expr.right, depth + 1)
    if isinstance(expr, cst.Name):
        values = values_of(model, expr)
        return bool(values) and all(is_mask(model, v, depth + 1) for v in values)
    if isinstance(expr, cst.Subscript):
        return is_mask(model, expr.value, depth + 1)
    if isinstance(expr, cst.Call):
        method = _method(model, expr)
        if method in _COMPARE_METHODS:
            return True
        if method in _CASTS or method in _SAME:
            return is_mask(model, expr.func.value, depth + 1)
        if model.qualified_name(expr.func) in _COMPARE_FUNCTIONS:
            return True
    return False


def _is_relu(model: "SemanticModel", call: cst.Call) -> bool:
    func = call.func
    if model.qualified_name(func) in _RELU_FUNCTIONS:
        return True
    if isinstance(func, cst.Call):  # nn.ReLU()(h)
        return torch_nn_class(model.qualified_name(func.func) or "") in _RELU_LAYERS
    method = _method(model, call)
    if method in ("relu", "relu_") and not call.args:
        scope = model.scope_of(func)
        if not (isinstance(func.value, cst.Name) and scope.self_name == func.value.value):
            return True
    if isinstance(func, (cst.Attribute, cst.Name)):
        value = single_value(model, func)  # self.relu(h) with self.relu = nn.ReLU()
        if isinstance(value, cst.Call):
            return torch_nn_class(model.qualified_name(value.func) or "") in _RELU_LAYERS
    return False


def _is_exp(model: "SemanticModel", expr: cst.BaseExpression, depth: int) -> bool:
    """``torch.exp(x)`` / ``x.exp()``, through names and shape methods."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        values = values_of(model, expr)
        return bool(values) and all(_is_exp(model, v, depth + 1) for v in values)
    if isinstance(expr, cst.Call):
        if model.qualified_name(expr.func) in _EXPS:
            return True
        method = _method(model, expr)
        if method == "exp" and not expr.args:
            return True
        if method in _SAME:
            return _is_exp(model, expr.func.value, depth + 1)
    return False


def _summed(model: "SemanticModel", expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """What ``expr`` sums: ``X.sum(...)`` / ``torch.sum(X, ...)`` -> ``X``."""
    if not isinstance(expr, cst.Call):
        return None
    if _method(model, expr) == "sum":
        return expr.func.value
    if model.qualified_name(expr.func) == "torch.sum":
        return _first(expr)
    return None


def zero_value(model: "SemanticModel", expr: cst.BaseExpression, outputs: "Outputs | None" = None,
               depth: int = 0) -> Zero | None:
    """Why ``expr`` can be exactly 0 as this code computes it (see the module docstring), or None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        if clamped_in_place(model, expr):
            return None
        values = values_of(model, expr)
        found = [zero_value(model, v, outputs, depth + 1) for v in values]
        if not found or any(f is None for f in found):
            return None
        return found[0]
    if isinstance(expr, cst.Subscript):
        return zero_value(model, expr.value, outputs, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        op = expr.operator
        if isinstance(op, cst.Subtract) and _one(model, expr.left, depth + 1):
            if probabilities_from(model, expr.right, outputs=outputs) is not None \
                    or zero_value(model, expr.right, outputs, depth + 1) in _PROBABILITY_KINDS:
                return Zero(COMPLEMENT, expr)
            return None
        if isinstance(op, cst.Divide):
            summed = _summed(model, expr.right)
            if summed is not None and _is_exp(model, expr.left, depth + 1) and _is_exp(model, summed, depth + 1):
                return Zero(SOFTMAX, expr)
            if zero_value(model, expr.left, outputs, depth + 1) is not None:
                return Zero(QUOTIENT, expr)
        return None
    if not isinstance(expr, cst.Call):
        return None
    if _is_relu(model, expr):
        return Zero(RELU, expr)
    qualified = model.qualified_name(expr.func) or ""
    method = _method(model, expr)
    if method in ("sum", "count_nonzero") or qualified in _SUMS:
        counted = expr.func.value if method else _first(expr)
        if counted is not None and is_mask(model, counted, depth + 1):
            return Zero(COUNT, expr)
        return None
    if method in _CASTS or method in _SAME or method in _PICKING:
        return zero_value(model, expr.func.value, outputs, depth + 1)
    return None


class _Kinds:
    """Membership by kind, so that ``zero_value(...) in _PROBABILITY_KINDS`` reads as it says."""

    def __init__(self, *kinds: str):
        self.kinds = kinds

    def __contains__(self, zero: object) -> bool:
        return isinstance(zero, Zero) and zero.kind in self.kinds


_PROBABILITY_KINDS = _Kinds(SOFTMAX)


def zero_divisor(model: "SemanticModel", expr: cst.BaseExpression, outputs: "Outputs | None" = None,
                 depth: int = 0) -> Zero | None:
    """Why a divisor ``expr`` can be exactly 0: a count (``mask.sum()``, ``(p == y).sum()``), or a
    sum or a norm of a value that can be zero (``h.sum(1, keepdim=True)`` of a ReLU output,
    ``m.norm()`` of a mask). Through names, casts and shape methods; None otherwise."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        if clamped_in_place(model, expr):
            return None
        values = values_of(model, expr)
        found = [zero_divisor(model, v, outputs, depth + 1) for v in values]
        if not found or any(f is None for f in found):
            return None
        return found[0]
    if isinstance(expr, cst.Subscript):
        return zero_divisor(model, expr.value, outputs, depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    qualified = model.qualified_name(expr.func) or ""
    method = _method(model, expr)
    if method in ("sum", "norm", "count_nonzero") or qualified in _SUMS or qualified in _NORMS:
        reduced = expr.func.value if method else _first(expr)
        if reduced is None:
            return None
        if is_mask(model, reduced, depth + 1):
            return Zero(COUNT, expr)
        inner = zero_value(model, reduced, outputs, depth + 1)
        if inner is not None and inner.kind in (RELU, COUNT):
            return inner
        return None
    if method in _CASTS or method in _SAME:
        return zero_divisor(model, expr.func.value, outputs, depth + 1)
    return None


def guarded_by_test(model: "SemanticModel", expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The function around ``at`` looks at the zero case of ``expr``: a test (``if``, ``while``,
    ``assert``, a conditional expression) or any comparison (``n > 0`` given to ``torch.where``
    or ``masked_select``) reads a name ``expr`` reads, or one computed from the same names
    (``s = mask.sum(); if s == 0: return``, then ``/ mask.sum()``). Identity and membership
    tests (``x is None``) do not count."""
    names, direct = _names_in(model, expr), _roots(expr)
    if not names:
        return False
    scope = model.scope_of(at).function() or model.scope_of(at)
    for node in iter_nodes(scope.node):
        if isinstance(node, (cst.If, cst.While, cst.IfExp, cst.Assert)):
            test, read = node.test, _names_in(model, node.test)
            wanted = names
        elif isinstance(node, cst.Comparison):  # a comparison elsewhere reads the value itself
            test, read, wanted = node, _read_names(node), direct
        else:
            continue
        if isinstance(test, cst.Comparison) and any(
                isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in test.comparisons):
            continue
        if read & wanted:
            return True
    return False


def _names_in(model: "SemanticModel", expr: cst.BaseExpression, depth: int = 0) -> set[str]:
    """The local names ``expr`` reads, and those their bindings read (one level)."""
    found: set[str] = set()
    for name in _read_names(expr):
        found.add(name)
        if depth < 1:
            for value in _values_named(model, expr, name):
                found |= _names_in(model, value, depth + 1)
    return found - {"torch", "F", "nn", "self", "np"}


def _roots(expr: cst.BaseExpression) -> set[str]:
    """The names a value is computed from, not its indices or arguments: ``n`` in ``n``,
    ``n.float()``, ``n[0]``, ``torch.sum(n, 1)``, ``a / n``."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.Subscript):
        return _roots(expr.value)
    if isinstance(expr, cst.BinaryOperation):
        return _roots(expr.left) | _roots(expr.right)
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Attribute) and not isinstance(expr.func.value, cst.Name) \
                or isinstance(expr.func, cst.Attribute) and expr.func.value.value not in ("torch", "F", "np"):
            return _roots(expr.func.value)
        return _roots(expr.args[0].value) if expr.args else set()
    if isinstance(expr, cst.Attribute):
        return _roots(expr.value)
    return set()


def _values_named(model: "SemanticModel", expr: cst.BaseExpression, name: str) -> list:
    for node in iter_nodes(expr):
        if isinstance(node, cst.Name) and node.value == name:
            return values_of(model, node)
    return []


def _read_names(node: cst.CSTNode) -> set[str]:
    """The names an expression reads (not the attribute names after a dot, nor keywords)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _read_names(node.value)
    if isinstance(node, cst.Arg):
        return _read_names(node.value)
    found: set[str] = set()
    for child in node.children:
        found |= _read_names(child)
    return found
