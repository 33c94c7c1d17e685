"""``torchlint.positions`` must give exactly LibCST's ``PositionProvider`` ranges."""

import ast

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.positions import Positions, StatementPositions
from torchlint.source import parse_cst
from torchlint.tree import iter_nodes

SNIPPETS = [
    "",
    "x",
    "x = 1\n",
    "import torch\r\nfor x in y:\r\n    loss.backward()\r\n",
    "a = 1\rb = 2\r",
    "@torch.no_grad()\n# comment\ndef f(a, *, b=(1,\n    2)):\n\treturn (a  )  # tail\n\n\n",
    "s = 'héllo ✓'; t = f'{s!r:>10}'\nclass C(nn.Module):\n    '''doc\n    string'''\n    x: int = 3\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    with (open(p) as f, g()):\n        y = [i for i in f if i]\n",
    "x = 1  # no newline at end",
    "\n\n\n# only comments\n",
    "# head\n\nimport a; import b  # two\n\n@(\n    deco)\nclass K:\n    pass\n@d1\n# between\n@d2(\n  1)\nasync def g():\n    await x\n",
    "x = (\n    1)\n\n\n# lead\nif a:  # c\n    b = [\n        1,\n    ]\n",
    "class A:\n  \"\"\"doc\"\"\"\n  x = 1; y = 2\n\n  # c\n  @staticmethod\n  # between\n  @d(\n    1)\n  def f(a):\n"
    "        if a:\n            return [i\n  for i in a]\n        class L: pass\n        return 0\n  z = f(\n1)\n",
    # Parenthesised imports end at their ``)`` (LibCST reads its range back by identity), two
    # in one file; handlers and ``finally`` end statements too.
    "from a import (b,\n    c)\nfrom d import (e)  # t\nimport f as g, h\ntry:\n    pass\nexcept (E, F):\n    pass\n"
    "finally:\n    x = (1)\n",
    "def outer():\n\tdef inner(x):\n\t\treturn x  # t\n\tclass K:\n\t\tdef m(self): return 1\n\t\t\n\t\tq = 'ü'; r = q\n"
    "\treturn inner\n",
]


def _check(code: str) -> None:
    module = cst.parse_module(code)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = Positions(module)
    parents = {}
    for node in iter_nodes(module):
        for child in node.children:
            parents[child] = node
    lazy = StatementPositions(module, code, lambda: ast.parse(code), parents.get)
    for node in iter_nodes(module):
        assert ours[node] == expected[node], (type(node).__name__, code)
        assert lazy[node] == expected[node], (type(node).__name__, code)
    innermost_first = StatementPositions(module, code, lambda: ast.parse(code), parents.get)
    for node in reversed(list(iter_nodes(module))):  # nested statements asked before their class
        assert innermost_first[node] == expected[node], (type(node).__name__, code)
    # The engine's own parse, whose equal whitespace nodes are one node (source._SharedMeta).
    engine_tree, failure = parse_cst(code)
    assert failure is None and engine_tree.deep_equals(module)
    shared = Positions(engine_tree)
    for mine, node in zip(iter_nodes(engine_tree), iter_nodes(module), strict=True):
        assert shared[mine] == expected[node], (type(node).__name__, code)


@pytest.mark.parametrize("code", SNIPPETS)
def test_same_ranges_as_libcst(code):
    _check(code)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS[2:]), min_size=1, max_size=4), st.sampled_from(["\n", "\r\n"]))
def test_same_ranges_on_combined_files(parts, newline):
    code = "".join(p if p.endswith(("\n", "\r")) else p + "\n" for p in parts).replace("\r\n", "\n").replace("\r", "\n")
    _check(code.replace("\n", newline))


def test_statement_positions_generate_only_the_statements_asked_about(monkeypatch):
    code = "import torch\n\n\ndef f():\n    return 1\n\n\n# c\nclass C:\n    x = f()\n"
    module = cst.parse_module(code)
    parents = {child: node for node in iter_nodes(module) for child in node.children}
    lazy = StatementPositions(module, code, lambda: ast.parse(code), parents.get)
    monkeypatch.setattr(Positions, "__init__", lambda *a: pytest.fail("whole module generated"))
    call = module.body[2].body.body[0].body[0].value
    assert (lazy[call].start.line, lazy[call].start.column) == (10, 8)
    # only the class body's statement holding the call is generated, not the whole class
    assert set(lazy._nested) == {module.body[2].body.body[0]} and not lazy._statements
    name = module.body[2].name
    assert (lazy[name].start.line, lazy[name].start.column) == (9, 6)  # the class's own code
    assert set(lazy._statements) == {2}


def test_statement_positions_of_methods_generate_the_method_alone(monkeypatch):
    code = ("class A:\n\tclass B(nn.Module):\n\t\t# lead\n\n\t\t@torch.no_grad()\n\t\tdef f(self, x):\n"
            "\t\t\ty = x; z = y\n\t\t\treturn self.lin(z)\n\n\t\tdef g(self):\n\t\t\tpass\n")
    module = cst.parse_module(code)
    parents = {child: node for node in iter_nodes(module) for child in node.children}
    lazy = StatementPositions(module, code, lambda: ast.parse(code), parents.get)
    monkeypatch.setattr(Positions, "__init__", lambda *a: pytest.fail("whole module generated"))
    f = module.body[0].body.body[0].body.body[0]
    ret = f.body.body[1]
    call = ret.body[0].value
    assert (lazy[call].start.line, lazy[call].start.column, lazy[call].end.column) == (8, 10, 21)
    assert set(lazy._nested) == {ret} and not lazy._statements
    assert (lazy[f.decorators[0]].start.line, lazy[f.name].start.line) == (5, 6)
    z = f.body.body[0].body[1]
    assert (lazy[z].start.line, lazy[z].start.column) == (7, 10)


def _lazy(code: str, tree=None) -> tuple[cst.Module, StatementPositions]:
    module = cst.parse_module(code)
    parents = {child: node for node in iter_nodes(module) for child in node.children}
    return module, StatementPositions(module, code, tree or (lambda: ast.parse(code)), parents.get)


def test_a_statement_found_once_in_the_text_needs_no_cpython_tree():
    code = "import torch\n\nclass A(nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear(2, 2)\n"
    module, lazy = _lazy(code, lambda: pytest.fail("CPython's tree parsed"))
    stmt = module.body[1].body.body[0].body.body[0]
    call = stmt.body[0].value
    assert (lazy[call].start.line, lazy[call].start.column, lazy[call].end.column) == (5, 18, 33)
    assert (lazy[module.body[0]].start.line, lazy[module.body[1].name].start.line) == (1, 3)


def test_a_statement_written_twice_is_placed_by_cpythons_tree():
    code = ("class A(nn.Module):\n    def __init__(self):\n        self.relu = nn.ReLU()\n\n"
            "class B(nn.Module):\n    def __init__(self):\n        self.relu = nn.ReLU()\n")
    module, lazy = _lazy(code)
    asked = []
    lazy._tree = lambda: asked.append(1) or ast.parse(code)
    second = module.body[1].body.body[0].body.body[0]
    assert lazy[second].start.line == 7 and asked
    first = module.body[0].body.body[0].body.body[0]
    assert lazy[first].start.line == 3


def test_the_last_statement_without_a_line_break_is_not_matched_higher_up():
    # ``main()``'s code is "main()\n": it starts line 1 only, but the statement is line 3
    code = "main()\nx = 1\nmain()"
    module, lazy = _lazy(code)
    assert lazy[module.body[2]].start.line == 3 and lazy[module.body[0]].start.line == 1
