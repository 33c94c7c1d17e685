"""Script entry points: the ``if __name__ == "__main__":`` guard, and the one-line place
a finding about a whole entry point is reported at (the guard's ``if`` line, a loop
header), taken from CPython's tree (``ctx.cpython_tree``), far cheaper than LibCST
positions."""

from __future__ import annotations

import ast

import libcst as cst

from torchlint.positions import cpython_statements


def is_main_guard(stmt: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (either operand order; also ``... and cond``)."""
    return isinstance(stmt, cst.If) and _is_main_test(stmt.test)


def _is_main_test(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _is_main_test(test.left) or _is_main_test(test.right)
    if not isinstance(test, cst.Comparison):
        return False
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


def top_statement(ctx, index: int) -> ast.stmt | None:
    """CPython's statement for ``ctx.module.body[index]`` (a LibCST line of ``a; b`` is
    several CPython statements: the first), or None without a tree."""
    statements = cpython_statements(ctx.module, ctx.cpython_tree)
    return statements[index] if index < len(statements) else None


def first_line(ctx, node: ast.AST) -> tuple[int, int, int, int]:
    """1-based (line, column, end line, end column) of ``node``'s first line: from where it
    starts to the end of that line's code (a loop header, an ``if __name__`` line)."""
    lines = ctx.text.splitlines()
    text = lines[node.lineno - 1]
    start = len(text.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))  # ast offsets are UTF-8 bytes
    return node.lineno, start + 1, node.lineno, max(len(text.rstrip()), start) + 1

