"""``semantic.branches``: the control statements around a statement in its function
(``blocks_around``), statements in the two branches of one ``if`` (``exclusive``), and the
statements a call's literal arguments rule out (``ruled_out``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.branches import blocks_around, dead_at_every_call, default_guards, exclusive, ruled_out
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


@pytest.mark.parametrize(("test", "args", "expected"), [
    ("mode == 'inference'", {"mode": "'training'"}, True),  # the body cannot run
    ("mode == 'inference'", {"mode": "'inference'"}, False),
    ("mode != 'inference'", {"mode": "'training'"}, False),
    ("'inference' == mode", {"mode": "'training'"}, True),
    ("probs", {"probs": "False"}, True),
    ("not probs", {"probs": "False"}, False),
    ("probs is None", {"probs": "None"}, False),
    ("mode == 'inference'", {"mode": "m"}, False),  # not a literal: either branch may run
    ("mode == 'inference'", {}, False),  # not passed, no default
    ("other == 1", {"other": "2"}, False),  # not a parameter
    ("n == 1", {"n": "'1'"}, True),  # a string is not the number
])
def test_ruled_out_by_a_literal_argument(test, args, expected):
    ctx = parsed(f"def get(mode, probs, n):\n    if {test}:\n        inside()\n    after()\n")
    function = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef))
    argument = (lambda name: cst.parse_expression(args[name]) if name in args else None)
    assert ruled_out(ctx, call(ctx, "inside"), function, argument) is expected
    assert ruled_out(ctx, call(ctx, "after"), function, argument) is False


def test_ruled_out_in_a_conditional_expression():
    ctx = parsed("def make(step, deterministic=False):\n"
                 "    return Engine(step) if not deterministic else DeterministicEngine(step)\n")
    function = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef))
    argument = (lambda name: cst.parse_expression("False"))
    assert ruled_out(ctx, call(ctx, "Engine"), function, argument) is False
    assert ruled_out(ctx, call(ctx, "DeterministicEngine"), function, argument) is True


def test_default_guards_name_the_parameters_whose_default_rules_a_call_out():
    ctx = parsed("""
        def make(step, device=None, deterministic=False, seed=None, mode="train"):
            engine = Engine(step) if not deterministic else DeterministicEngine(step)
            if seed is not None:
                manual_seed(seed)
            if mode == "train":
                train_mode()
            if device:
                def nested():
                    inner()
            always()

        def plain(flag):
            if flag:
                flagged()
    """)
    make = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef) and n.name.value == "make")
    plain = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef) and n.name.value == "plain")
    assert default_guards(ctx, call(ctx, "DeterministicEngine"), make) == ("deterministic",)
    assert default_guards(ctx, call(ctx, "Engine"), make) == ()
    assert default_guards(ctx, call(ctx, "manual_seed"), make) == ("seed",)
    assert default_guards(ctx, call(ctx, "train_mode"), make) == ()  # the default takes the branch
    assert default_guards(ctx, call(ctx, "inner"), make) == ()  # a nested function's own code
    assert default_guards(ctx, call(ctx, "always"), make) == ()
    assert default_guards(ctx, call(ctx, "flagged"), plain) == ()  # no default: every call passes it


def test_ruled_out_in_the_else_branch():
    ctx = parsed("def get(mode):\n    if mode == 'a':\n        first()\n    else:\n        second()\n")
    function = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef))
    argument = (lambda name: cst.parse_expression("'a'"))
    assert ruled_out(ctx, call(ctx, "first"), function, argument) is False
    assert ruled_out(ctx, call(ctx, "second"), function, argument) is True


DEAD = """
    class Attention:
        def _attend(self, q, k, is_causal=False):
            if is_causal:
                causal()
            plain()
        def _masked(self, q, is_causal=False):
            if is_causal:
                masked()
        def _passed(self, q, is_causal=False):
            if is_causal:
                passed()
        def public(self, q, is_causal=False):
            if is_causal:
                exposed()
        def _unused(self, is_causal=False):
            if is_causal:
                uncalled()
        def forward(self, q, k, flag):
            a = self._attend(q, k)
            b = self._attend(q, k, is_causal=False)
            c = self._masked(q)
            d = self._masked(q, is_causal=flag)
            fn = self._passed
            e = self._passed(q)
            return self.public(q)
    """


def test_dead_at_every_call():
    ctx = parsed(DEAD)
    functions = {n.name.value: n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef)}
    got = {name: dead_at_every_call(ctx.semantic, call(ctx, name), functions[helper])
           for name, helper in [("causal", "_attend"), ("plain", "_attend"), ("masked", "_masked"),
                                ("passed", "_passed"), ("exposed", "public"), ("uncalled", "_unused")]}
    # every call leaves is_causal False; one call passes a name; the helper is also passed on;
    # a public method (other files may call it); a helper with no call
    assert got == {"causal": True, "plain": False, "masked": False, "passed": False, "exposed": False,
                   "uncalled": False}


NEVER = """
    def train(loader, optimizer=None, params=None, flag=True):
        for i, x in enumerate(loader):
            if optimizer is not None:
                skipped()
            elif params is not None:
                by_hand()
            if optimizer is None:
                sgd()
            else:
                stepped()
            if flag:
                flagged()
            if not flag:
                unflagged()
            if optimizer:
                truthy()
            again = i % 2 == 0
            if again:
                even()
            if not again:
                odd()
            if params is None:
                no_params()
"""


def test_never_together():
    from torchlint.semantic.branches import never_together

    ctx = parsed(NEVER)
    loop = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.For))

    def together(a, b):
        return never_together(ctx.semantic, call(ctx, a), call(ctx, b), loop)

    # ``elif`` of ``optimizer is not None``: optimizer is None there; the step runs where it is not
    assert together("by_hand", "stepped") and together("stepped", "by_hand")
    assert together("sgd", "stepped") and together("flagged", "unflagged") and together("by_hand", "truthy")
    # the same test, tests of other names, and a flag bound anew in each iteration decide nothing
    assert not together("skipped", "stepped") and not together("by_hand", "sgd")
    assert not together("no_params", "stepped") and not together("even", "odd")
    assert not together("skipped", "truthy")


def test_the_tests_of_a_function_are_those_inside_it():
    """``SemanticModel.tests_within`` a function: its own ``if``s and conditional expressions
    and those of functions nested in it, in order, none of another function; of a node that
    is no scope (the module), every test of the file. A parameter only another function tests
    decides nothing (``default_guards``)."""
    ctx = parsed("""
        def first(flag=False):
            if flag:
                a()
            b()

        def second(flag=False, other=None):
            c() if other else d()
            def nested():
                return e() if flag else f()
            g()
    """)
    model = ctx.semantic.model
    first, second = (n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef) and n.name.value != "nested")
    assert [ctx.module.code_for_node(t.test) for t in model.tests_within(first)] == ["flag"]
    assert [ctx.module.code_for_node(t.test) for t in model.tests_within(second)] == ["other", "flag"]
    assert len(model.tests_within(ctx.module)) == 3
    assert default_guards(ctx, call(ctx, "a"), first) == ("flag",)
    assert default_guards(ctx, call(ctx, "c"), second) == ("other",)
    assert default_guards(ctx, call(ctx, "e"), second) == ("flag",)  # a closure's test of the parameter
    assert default_guards(ctx, call(ctx, "g"), second) == ()


@pytest.mark.parametrize("test, decided", [
    ("flag", False), ("not flag", True), ("not not flag", False), ("mode == 'a'", False), ("mode != 'a'", True),
    ("'b' == mode", True), ("not mode == 'b'", False), ("mode is None", False), ("mode is not None", True),
    ("mode < 'a'", None), ("mode in 'ab'", None), ("flag and mode", None), ("other", None), ("f(flag)", None),
])
def test_what_a_literal_argument_decides(test, decided):
    """``_decided``: a name, ``not`` it (any number of times), or it compared with ``==``,
    ``!=``, ``is``, ``is not`` to a literal, for ``flag=False, mode="b"``; no other test."""
    from torchlint.semantic.branches import _decidable_names, _decided

    expr = cst.parse_expression(test)
    passed = {"flag": cst.parse_expression("False"), "mode": cst.parse_expression("'b'")}
    assert _decided(expr, {"flag", "mode"}, passed.get) is decided
    assert set(_decidable_names(expr)) >= ({"flag", "mode"} & set(test.replace("'", " ").split())
                                           if decided is not None else set())
