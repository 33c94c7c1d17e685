"""``semantic.branches``: the control statements around a statement in its function
(``blocks_around``), and statements in the two branches of one ``if`` (``exclusive``)."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.branches import blocks_around, exclusive
from torchlint.tree import iter_nodes


def parsed(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx


def call(ctx, name: str) -> cst.Call:
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
                and ctx.module.code_for_node(n.func) == name)


def kinds(blocks) -> list[str]:
    return [type(b).__name__ for b in blocks]


SRC = """
    for epoch in range(3):
        def step(batch):
            while True:
                try:
                    if amp:
                        backward()
                    else:
                        plain()
                except ValueError:
                    handled()
            match batch:
                case _:
                    matched()
            return lambda: inside()
        with ctx:
            outside()
    top()
    """


def test_blocks_around_stop_at_the_function():
    ctx = parsed(SRC)
    assert kinds(blocks_around(ctx, call(ctx, "backward"))) == ["If", "Try", "While"]  # innermost first, not the for
    assert kinds(blocks_around(ctx, call(ctx, "plain"))) == ["If", "Try", "While"]  # the else belongs to the if
    assert kinds(blocks_around(ctx, call(ctx, "handled"))) == ["ExceptHandler", "Try", "While"]
    assert kinds(blocks_around(ctx, call(ctx, "matched"))) == ["Match"]
    assert blocks_around(ctx, call(ctx, "inside")) == []  # a lambda is a function of its own
    assert kinds(blocks_around(ctx, call(ctx, "outside"))) == ["For"]  # a with is no block
    assert blocks_around(ctx, call(ctx, "top")) == []


def test_blocks_around_are_the_statements_themselves():
    ctx = parsed(SRC)
    backward, plain = call(ctx, "backward"), call(ctx, "plain")
    assert blocks_around(ctx, backward)[1:] == blocks_around(ctx, plain)[1:]
    assert blocks_around(ctx, backward)[0] is blocks_around(ctx, plain)[0]
    assert all(ctx.inside(backward, block) for block in blocks_around(ctx, backward))


def test_exclusive():
    ctx = parsed(SRC)
    assert exclusive(ctx, call(ctx, "backward"), call(ctx, "plain"))
    assert not exclusive(ctx, call(ctx, "backward"), call(ctx, "handled"))
    assert not exclusive(ctx, call(ctx, "top"), call(ctx, "plain"))
