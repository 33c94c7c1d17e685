"""Which expressions are a tensor (or a NumPy array scalar) for sure, never a Python number
(TL024: ``top_i is EOS_token`` is always False).

``tensor_value(model, expr)`` names why ``expr`` is one, or None when nothing says so:

* ``"argmax"``: ``x.argmax(...)``/``x.argmin(...)`` or ``torch.argmax``/``np.argmax`` and the
  like: a tensor or a NumPy integer, never the ``int`` object;
* ``"topk"``: an element of what ``.topk(...)``, ``.sort(...)``, ``.max(dim)``/``.min(dim)``,
  ``.kthvalue``/``.median(dim)``/``.mode(dim)`` (or ``torch.topk``, ``torch.max(x, dim)``...)
  return, taken by an integer index (``x.topk(1)[1]``) or unpacked (``topv, topi = x.topk(1)``);
* ``"layer"``: the output of a ``torch.nn`` layer or of an instance of a same-file
  ``nn.Module`` class, called through a name or ``self.<attr>`` bound only to one;
* ``"factory"``: a torch tensor factory's result (``torch.tensor``, ``torch.zeros``...);
* ``"index"``: an index, a ``.data`` or a same-tensor method (``.squeeze()``, ``.view(...)``,
  ``.long()``, ``.cpu()``, ``.detach()``, ``.numpy()``: NumPy scalars are never the int object either) of one of these (``topi[0][0]``,
  ``topi.squeeze().detach()``), its ``.any()``/``.all()``/``.eq(...)`` (a tensor, or a NumPy ``bool_``: never the
  ``True``/``False`` objects), a comparison or an arithmetic/bitwise operation with one of these on either side
  (``(pred == y)``, ``mask & np.isnan(x)``);
* ``"array"``: a NumPy array factory's result (``np.array``, ``np.zeros(n, dtype=bool)``...) or what a
  ``torch``/``numpy`` function returning an array gives (``np.any(...)``, ``torch.isnan(x)``,
  ``np.logical_and(...)``): an array or a NumPy scalar, never a Python ``bool``/``int`` (unlike
  ``np.allclose``, ``np.array_equal``, ``torch.equal``, which return Python bools and are not listed);

through local names every binding of which is one of these. ``.item()``, ``.tolist()``,
``int(...)`` give Python numbers and end it. Generous the other way: anything else (a
parameter, an attribute, a call of an unknown function) is not known to be a tensor.
"""

from __future__ import annotations

import libcst as cst

from torchlint.libraries import torch_nn_class
from torchlint.semantic.activations import unpacked_element
from torchlint.semantic.dataflow import values_of
from torchlint.semantic.model import SemanticModel
from torchlint.semantic.modules import is_module_here
from torchlint.torch_api import tensor_factory

_ARGMAX = {"argmax", "argmin"}
_ARGMAX_FUNCTIONS = {"torch.argmax", "torch.argmin", "numpy.argmax", "numpy.argmin", "torch.multinomial"}
# Methods returning (values, indices); max/min/median/mode only when given a dimension.
_PAIRS = {"topk", "sort", "kthvalue"}
_PAIRS_WITH_DIM = {"max", "min", "median", "mode"}
_SAME_TENSOR = {"squeeze", "unsqueeze", "view", "reshape", "long", "int", "float", "cpu", "cuda", "to", "detach", "numpy",
                "clone", "flatten", "contiguous"}
# Methods of a tensor/array that give a tensor/array (or a NumPy scalar) again.
_SAME_TENSOR_RESULTS = {"any", "all", "eq", "ne", "gt", "ge", "lt", "le", "logical_not", "isnan", "isinf", "isfinite",
                        "bool"}
# torch/numpy functions that return a tensor, an array or a NumPy scalar (never a Python bool).
_ARRAY_FUNCTIONS = {f"{lib}.{name}" for lib in ("torch", "numpy") for name in (
    "any", "all", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor")} | {
    "torch.eq", "torch.ne", "torch.gt", "torch.ge", "torch.lt", "torch.le",
    "numpy.equal", "numpy.not_equal", "numpy.greater", "numpy.greater_equal", "numpy.less", "numpy.less_equal"}
_NUMPY_FACTORIES = {f"numpy.{name}" for name in (
    "array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "zeros_like", "ones_like", "full_like",
    "empty_like")}
_VALUE_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_MAX_DEPTH = 8


def tensor_value(model: SemanticModel, expr: cst.BaseExpression, depth: int = 0) -> str | None:
    """Why ``expr`` is a tensor (or an array scalar) for sure (see the module docstring), or None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        return _name_value(model, expr, depth)
    if isinstance(expr, cst.Subscript):
        if _pair(model, expr.value) and _int_index(expr):
            return "topk"
        return "index" if tensor_value(model, expr.value, depth + 1) is not None else None
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "data" and tensor_value(model, expr.value, depth + 1) is not None:
            return "index"
        return None
    if isinstance(expr, cst.Comparison):
        if len(expr.comparisons) == 1 and isinstance(expr.comparisons[0].operator, _VALUE_COMPARISONS) and (
                tensor_value(model, expr.left, depth + 1) is not None
                or tensor_value(model, expr.comparisons[0].comparator, depth + 1) is not None):
            return "index"
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return None  # "%d" % t is a str
        if tensor_value(model, expr.left, depth + 1) is not None or tensor_value(model, expr.right, depth + 1) is not None:
            return "index"
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.BitInvert, cst.Minus)):
        return "index" if tensor_value(model, expr.expression, depth + 1) is not None else None
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    qualified = model.qualified_name(func) or ""
    if qualified in _ARGMAX_FUNCTIONS or isinstance(func, cst.Attribute) and func.attr.value in _ARGMAX \
            and not model.is_imported(func):
        return "argmax"
    if tensor_factory(qualified) is not None:
        return "factory"
    if qualified in _NUMPY_FACTORIES or qualified in _ARRAY_FUNCTIONS:
        return "array"
    if isinstance(func, cst.Attribute) and (func.attr.value in _SAME_TENSOR or func.attr.value in _SAME_TENSOR_RESULTS) \
            and not model.is_imported(func):
        return "index" if tensor_value(model, func.value, depth + 1) is not None else None
    if _layer(model, func):
        return "layer"
    return None


def _name_value(model: SemanticModel, name: cst.Name, depth: int) -> str | None:
    bindings = model.reaching(name.value, name)
    found = set()
    for b in bindings:
        if b.kind in ("assign", "ann") and b.value is not None:
            found.add(tensor_value(model, b.value, depth + 1))
        elif b.kind == "unpack" and (element := unpacked_element(b)) is not None:
            value = element[1]
            found.add("topk" if _pair(model, value) else
                      "index" if tensor_value(model, value, depth + 1) in ("factory", "index", "array") else None)
        else:
            return None
    if not found or None in found:
        return None
    return found.pop() if len(found) == 1 else "index"


def _pair(model: SemanticModel, expr: cst.BaseExpression) -> bool:
    """``expr`` is a call returning (values, indices): ``x.topk(k)``, ``torch.max(x, 1)``..."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    qualified = model.qualified_name(func) or ""
    if qualified.startswith("torch."):
        last = qualified.rsplit(".", 1)[-1]
        return last in _PAIRS or last in _PAIRS_WITH_DIM and len(expr.args) >= 2
    if not isinstance(func, cst.Attribute) or model.is_imported(func):
        return False
    return func.attr.value in _PAIRS or func.attr.value in _PAIRS_WITH_DIM and bool(expr.args)


def _int_index(node: cst.Subscript) -> bool:
    return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
        and isinstance(node.slice[0].slice.value, cst.Integer)


def _layer(model: SemanticModel, func: cst.BaseExpression) -> bool:
    """``func`` holds a ``torch.nn`` layer or an instance of a same-file ``nn.Module`` class
    (every value bound to the name or ``self.<attr>``)."""
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return False
    values = values_of(model, func)
    if not values:
        return False
    for value in values:
        if not isinstance(value, cst.Call):
            return False
        qualified = model.qualified_name(value.func) or ""
        if torch_nn_class(qualified) is not None:
            continue
        info = model.class_named(value.func.value) if isinstance(value.func, cst.Name) else None
        if info is None or not is_module_here(model, info):
            return False
    return True
