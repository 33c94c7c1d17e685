"""The semantic model filled by the engine's walk (a rule declares ``uses_semantic_model``)
is the model a walk of its own builds: same scopes, bindings, calls, loops and classes."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from tests.rules.cases import cases_of
from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.rule import Rule, Severity, all_rules


class _Asks(Rule):
    code, name, severity, summary = "TL995", "asks-for-the-model", Severity.WARNING, "test rule"
    uses_semantic_model = True

    def finish(self) -> None:
        self.seen = self.ctx.semantic.model


def _context(src: str) -> FileContext:
    return FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))


def _summary(model) -> list:
    """Everything the model holds, as plain values (source order and code of each node)."""
    code = model.ctx.module.code_for_node

    def scope_id(scope):
        return (scope.kind, model.order.get(scope.node, 0))

    out = [("order", sorted((n, type(node).__name__) for node, n in model.order.items()))]
    for node, scope in model.scopes.items():
        out.append(("scope", scope_id(scope), scope.parent and scope_id(scope.parent), scope.self_name,
                    scope.method_kind, sorted(scope.globals)))
        for key, bindings in scope.bindings.items():
            out.extend(("bind", scope_id(scope), key, b.kind, b.order, len(b.branches), b.qualified) for b in bindings)
    out.extend(("call", code(s.node), s.order, scope_id(s.scope), [lp.order for lp in s.loops],
                [lp.order for lp in s.all_loops], s.top) for s in model.calls)
    out.extend(("loop", lp.order, scope_id(lp.scope), lp.outer and lp.outer.order, lp.top) for lp in model.loops.values())
    for info in model.classes.values():
        out.append(("class", info.qualname, info.bases, sorted(info.methods), sorted(info.self_assigned),
                    sorted(info.self_read), [model.order[a] for a, _ in info.self_sites],
                    [b.qualname for b in info.local_bases]))
    return out


def _python(src: str) -> bool:
    try:
        ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


SOURCES = [src for rule in all_rules() if rule.code != "TL000"  # its cases are deep, not Python
           for case in [*cases_of(rule)[0], *cases_of(rule)[1]]
           if _python(src := textwrap.dedent(case if isinstance(case, str) else case.code))]
SOURCES += [
    "import torch\n@torch.no_grad()\ndef f(x=g(), *, y: h() = 2) -> k():\n    return [lambda z=w(): z(q) for q in x]\n",
    "class A(Base, metaclass=M):\n    def m(self):\n        self.a = 1\n        return [self.b for _ in range(3)]\n"
    "    @staticmethod\n    def s(self):\n        return self.c\n",
    "for i in x:\n    while y:\n        (a := f(i))\n    else:\n        g()\nelse:\n    h()\n",
]


@pytest.mark.parametrize("src", SOURCES, ids=range(len(SOURCES)))
def test_filled_by_the_walk_equals_its_own_walk(src):
    alone = _context(src)
    own = alone.semantic.model  # no walk has run: the model walks on its own
    walked = _context(src)
    rule = _Asks(walked, {})
    Dispatcher(walked, [rule]).run()
    assert walked.semantic._filling is None and rule.seen is walked.semantic.model
    assert _summary(rule.seen) == _summary(own)


def test_asking_during_the_walk_is_an_error():
    class Early(_Asks):
        def visit_Name(self, node):
            self.ctx.semantic.model

    ctx = _context("x = 1\n")
    Dispatcher(ctx, [Early(ctx, {})]).run()
    (error,) = ctx.errors
    assert "ask for it from finish()" in error.error


def test_name_answers_kept_only_once_the_walk_has_seen_every_import():
    """``FileContext.qualified_name``/``is_imported`` are memoised after the walk: an answer
    given during the walk, before a later function-level import was seen, is not kept."""
    from torchlint.context import Dispatcher
    from torchlint.statements import dotted_name
    from torchlint.tree import iter_nodes

    src = "def f():\n    return np.zeros(1)\ndef g():\n    import numpy as np\n"
    c = _context(src)
    zeros = next(n for n in iter_nodes(c.module) if isinstance(n, cst.Call) and dotted_name(n.func) == "np.zeros")
    seen = {}

    class Probe:
        code = "TLX"
        uses_semantic_model = False

        def visit_Call(self, node):
            seen["walk"] = (c.qualified_name(node.func), c.is_imported(node.func))

        def finish(self):
            seen["finish"] = (c.qualified_name(zeros.func), c.is_imported(zeros.func))
            seen["again"] = (c.qualified_name(zeros.func), c.is_imported(zeros.func))

    Dispatcher(c, [Probe()]).run()
    assert seen["walk"] == ("np.zeros", False)  # the import inside g() is not seen yet
    assert seen["finish"] == seen["again"] == ("numpy.zeros", True)
    assert c._qualified[zeros.func] == "numpy.zeros" and c._imported[zeros.func] is True


NODES = """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return self.fc(x)[0] + args.scale
def run(cfg):
    return [y for y in cfg["items"]]
"""


@pytest.mark.parametrize("filled_by_the_walk", [True, False])
def test_nodes_of_a_kind_in_source_order(filled_by_the_walk):
    """``SemanticModel.nodes_of``: what a walk of the tree gives of those kinds, in its order."""
    from torchlint.tree import iter_nodes

    ctx = _context(NODES)
    rule = _Asks(ctx, {})
    Dispatcher(ctx, [rule] if filled_by_the_walk else []).run()
    model = rule.seen if filled_by_the_walk else ctx.semantic.model
    for kinds in [(cst.Name,), (cst.Attribute, cst.Subscript), (cst.Import, cst.Name), (cst.BaseExpression,)]:
        assert model.nodes_of(*kinds) == [n for n in iter_nodes(ctx.module) if isinstance(n, kinds)]
    assert model.nodes_of(cst.While) == []
