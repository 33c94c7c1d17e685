"""Numeric literals: the value an expression has when it is written as plain numbers.

``numeric_value`` folds ``3``, ``1e-3``, ``-1``, ``0.1 * 2``, ``10 ** -4`` and lists or
tuples of them (``[30, 80]``); anything that reads a name or calls something is not a
literal. ``is_positive`` tells a tuned value from the "off" / "unlimited" spellings
(``weight_decay=0``, ``max_epochs=-1``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

_ARITHMETIC = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b if abs(b) <= 64 else None,
}


def numeric_value(node: cst.BaseExpression) -> float | list | None:
    """The value of a numeric literal (``3``, ``1e-3``, ``-1``, ``0.1 * 2``, ``10 ** -4``), or
    of a non-empty list/tuple of them (``[30, 80]``); None for anything else."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = numeric_value(node.expression)
        if isinstance(inner, (int, float)):
            return -inner if isinstance(node.operator, cst.Minus) else inner
        return None
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
        left, right = numeric_value(node.left), numeric_value(node.right)
        if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
            return None
        try:
            return _ARITHMETIC[type(node.operator)](left, right)
        except (ArithmeticError, ValueError):
            return None
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        values = [None if isinstance(el, cst.StarredElement) else numeric_value(el.value) for el in node.elements]
        return values if all(isinstance(v, (int, float)) for v in values) else None
    return None


def is_positive(value: Any, floor: float = 0) -> bool:
    """A number (or a list holding one) above ``floor``: zero and negative values mean "off"
    or "unlimited" (``weight_decay=0``, ``max_epochs=-1``), not a tuned value."""
    if isinstance(value, list):
        return any(isinstance(v, (int, float)) and v > floor for v in value)
    return isinstance(value, (int, float)) and value > floor
