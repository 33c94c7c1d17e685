"""Numeric literals: the value an expression has when it is written as plain numbers.

``numeric_value`` folds ``3``, ``1e-3``, ``-1``, ``0.1 * 2``, ``10 ** -4`` and lists or
tuples of them (``[30, 80]``); anything that reads a name or calls something is not a
literal. ``is_positive`` tells a tuned value from the "off" / "unlimited" spellings
(``weight_decay=0``, ``max_epochs=-1``). ``string_value`` and ``integer_value`` are LibCST's
``evaluated_value`` of a string or integer literal, read off its text where the text spells it.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

_ARITHMETIC = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b if abs(b) <= 64 else None,
}


# The other kinds of expression ``numeric_value`` may fold.
_FOLDED = frozenset({cst.UnaryOperation, cst.BinaryOperation, cst.List, cst.Tuple})


def string_value(node: cst.SimpleString) -> str | bytes:
    """``node.evaluated_value`` (``ast.literal_eval`` of the literal's text, which compiles
    it: ~20 us a string), without compiling where the text between the quotes is the value:
    a str literal (no prefix, ``r``, ``u``) holding no backslash, carriage return or null
    character. Any other literal goes through ``evaluated_value``."""
    text = node.value
    if "\\" not in text and "\r" not in text and "\0" not in text:
        start = 0
        while start < len(text) and text[start] not in "'\"":
            start += 1
        if text[:start].lower() in ("", "r", "u") and len(text) >= start + 2:
            quote = 3 if text[start:start + 3] in ('"""', "'''") and len(text) >= start + 6 else 1
            return text[start + quote:len(text) - quote]
    return node.evaluated_value


def integer_value(node: cst.Integer) -> int:
    """``node.evaluated_value`` (``ast.literal_eval``), as ``int`` of the text where it is
    decimal digits alone."""
    text = node.value
    if text.isascii() and text.isdigit():
        return int(text)
    return node.evaluated_value


def numeric_value(node: cst.BaseExpression) -> float | list | None:
    """The value of a numeric literal (``3``, ``1e-3``, ``-1``, ``0.1 * 2``, ``10 ** -4``), or
    of a non-empty list/tuple of them (``[30, 80]``); None for anything else."""
    # ``type() is``: asked of every assigned value (TL004), most of them no literal; none of
    # these classes is subclassed.
    kind = type(node)
    if kind is cst.Integer:
        return integer_value(node)  # type: ignore[arg-type]
    if kind is cst.Float:
        return node.evaluated_value  # type: ignore[union-attr]
    if kind not in _FOLDED:
        return None
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
