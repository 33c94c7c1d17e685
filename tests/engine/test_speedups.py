"""The speed-ups (``torchlint.speedups``): importing torchlint applies none; the command line
and the server apply all of them, ``TORCHLINT_NO_SPEEDUPS=1`` none; what each one changes
gives the same trees and answers; and tests/engine passes both ways."""

from __future__ import annotations

import dataclasses
import dis
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchlint import speedups
from torchlint.source import parse_cst
from torchlint.speedups import nodes

REPO = Path(__file__).resolve().parents[2]
KEYWORDS = "import torch\nmodel.eval()\nfor b in loader:\n    loss = model(b)\n    loss.backward()\n    opt.step()\n"
applied = pytest.mark.skipif(not speedups.enabled(), reason="tests what a speed-up does: TORCHLINT_NO_SPEEDUPS is set")

# Every torchlint module a run, the server or the trace may import.
MODULES = [
    "torchlint", "torchlint.cli", "torchlint.engine", "torchlint.source", "torchlint.run", "torchlint.pool",
    "torchlint.cache", "torchlint.context", "torchlint.server", "torchlint.flake8", "torchlint.testing",
    "torchlint.semantic.model", "torchlint.semantic.training", "torchlint.trace.confirm", "torchlint.formats.sarif",
    *[f"torchlint.checks.{p.stem}" for p in sorted((REPO / "torchlint" / "checks").glob("tl*.py"))],
]
UNPATCHED = textwrap.dedent("""
    import abc, builtins, dataclasses, gc, importlib, sys
    import libcst as cst
    for name in sys.argv[1:]:
        importlib.import_module(name)
    from torchlint.testing import lint_snippet
    lint_snippet("import torch\\nfor b in loader:\\n    loss = model(b)\\n    loss.backward()\\n    opt.step()\\n")
    kinds, todo = [], [cst.CSTNode]
    while todo:
        kind = todo.pop()
        kinds.append(kind)
        todo.extend(kind.__subclasses__())
    assert all(type(k) is abc.ABCMeta for k in kinds), "a node class's metaclass changed"
    assert cst.Name.__eq__ is not object.__eq__ and cst.Name.__hash__ is not object.__hash__, "node identity changed"
    assert cst.CSTNode.__post_init__.__module__.startswith("libcst"), "node validation changed"
    assert all(k.__init__.__module__.startswith("libcst") for k in kinds if "__init__" in k.__dict__), "a constructor changed"
    assert "exec" not in vars(dataclasses), "dataclasses' exec is shadowed"
    assert gc.isenabled() and not gc.get_freeze_count(), "the collector changed"
    assert not {"torchlint.speedups.nodes", "torchlint.speedups.process"} & set(sys.modules) or \\
        not sys.modules["torchlint.speedups.nodes"].installed()
    print("unpatched")
""")


def _python(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def test_importing_torchlint_patches_nothing():
    """Every module imported, a snippet linted through the library: LibCST, dataclasses and
    the collector as they were."""
    done = _python(UNPATCHED, *MODULES, env={speedups.SWITCH: ""})
    assert done.stdout == "unpatched\n", done.stderr


def test_the_command_line_applies_them_and_the_switch_turns_them_off(tmp_path):
    (tmp_path / "train.py").write_text(KEYWORDS)
    probe = textwrap.dedent("""
        import sys
        import libcst as cst
        from torchlint import cli, speedups
        sys.argv = ["torchlint", "check", "--isolated", "--no-cache", "-q", "train.py"]
        try:
            cli.main()
        except SystemExit:
            pass
        print(speedups.enabled(), cst.Name.__eq__ is object.__eq__)
    """)
    on = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                        env={**os.environ, "PYTHONPATH": str(REPO), speedups.SWITCH: ""})
    off = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO), speedups.SWITCH: "1"})
    assert on.stdout.splitlines()[-1] == "True True", on.stderr
    assert off.stdout.splitlines()[-1] == "False False", off.stderr
    assert on.stdout.splitlines()[:-1] == off.stdout.splitlines()[:-1]  # the same findings


@pytest.mark.slow  # tests/engine once more, in a subprocess
@pytest.mark.skipif(speedups.switched_off(), reason="this is the run without them")
def test_the_engine_tests_pass_without_the_speedups():
    """``TORCHLINT_NO_SPEEDUPS=1 python -m pytest tests/engine``: the engine on LibCST and
    Python as they are."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/engine"],
                          cwd=REPO, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, speedups.SWITCH: "1", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]


@applied
def test_plain_constructors_build_the_same_trees_and_validate_outside_a_parse(monkeypatch):
    # The engine's parse stores node fields through their slots (nodes._plain_constructors,
    # installed once per process): every fixture and example must give the tree LibCST's own
    # constructors give, and outside a parse nodes are validated as LibCST's own do.
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures").rglob("*.py"))]
    texts.append(KEYWORDS)
    assert len(texts) > 10
    ours = []
    for text in texts:
        module, failure = parse_cst(text)
        assert failure is None and module is not None
        assert module.code == text
        ours.append(module)
    plain = nodes._plain_constructors()
    assert {cst.Name, cst.Call, cst.FunctionDef, cst.Module} <= set(plain)
    # Each field is assigned, the interpreter storing it into its slot: no frozen __setattr__ between.
    assert all(kind.__setattr__ is object.__setattr__ and kind.__delattr__ is object.__delattr__ for kind in plain)
    assert all("STORE_ATTR" in {i.opname for i in dis.get_instructions(fast)}
               for kind, (_, fast) in plain.items() if dataclasses.fields(kind))
    assert nodes._VALIDATING == [True]
    with monkeypatch.context() as m:  # LibCST's own constructors and checks, for the reference trees
        m.setattr(cst.CSTNode, "__post_init__", nodes._LIBCST_POST_INIT)
        for kind, (original, _) in plain.items():
            m.setattr(kind, "__init__", original)
        for text, module in zip(texts, ours):
            assert module.deep_equals(cst.parse_module(text)), text[:200]
    assert cst.Name("x", lpar=[cst.LeftParen()], rpar=[cst.RightParen()]).lpar[0].deep_equals(cst.LeftParen())
    with pytest.raises(cst.CSTValidationError):  # unbalanced parentheses
        cst.Name("x", lpar=[cst.LeftParen()])
    with pytest.raises(cst.CSTValidationError):  # ``else`` glued to what follows
        cst.IfExp(test=cst.Name("a"), body=cst.Name("b"), orelse=cst.Float(".5"),
                  whitespace_after_else=cst.SimpleWhitespace(""))


def test_plain_constructors_wait_until_the_process_parsed_enough_text():
    # Installing them costs more than they save on one small file (nodes.PLAIN_AFTER_CHARS):
    # a process parses with LibCST's own constructors until then, unvalidated all the same.
    probe = textwrap.dedent("""
        import libcst as cst
        from torchlint import source, speedups
        from torchlint.speedups import nodes
        assert speedups.enable()
        small = "def f(x):\\n    return x + 1\\n"
        module, failure = source.parse_cst(small)
        assert failure is None and module.code == small and nodes._PLAIN is None
        odd = "for x in*y:\\n    pass\\n"  # LibCST's own validation rejects it
        assert source.parse_cst(odd)[1] is None and nodes._PLAIN is None
        big = small * (nodes.PLAIN_AFTER_CHARS // len(small) + 1)
        module, failure = source.parse_cst(big)
        assert failure is None and nodes._PLAIN is not None
        module, failure = source.parse_cst(odd)
        assert failure is None and module.code == odd
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), speedups.SWITCH: ""})
    assert done.stdout == "ok\n", done.stderr


@applied
def test_isinstance_on_libcst_nodes_answers_as_the_class_hierarchy_does():
    # nodes._type_checks_in_c gives every LibCST node class type's own isinstance/issubclass:
    # the answer must be the class's MRO for every pair of node classes, abstract bases too.
    kinds, todo = [], [cst.CSTNode]
    while todo:
        kind = todo.pop()
        kinds.append(kind)
        todo.extend(k for k in kind.__subclasses__() if k not in kinds)
    assert len(kinds) > 300 and all(type(k) is nodes._NodeMeta for k in kinds)
    found = {}
    for path in sorted((REPO / "fixtures").rglob("*.py")):
        module, _ = parse_cst(path.read_text(encoding="utf-8"))
        found.update((type(n), n) for n in engine_walk(module))
    assert len(found) > 40
    for kind in kinds:
        for node_kind, node in found.items():
            assert isinstance(node, kind) == (kind in node_kind.__mro__), (node_kind, kind)
            assert issubclass(node_kind, kind) == (kind in node_kind.__mro__), (node_kind, kind)
    assert not isinstance("x", cst.CSTNode) and not isinstance(cst.Name("x"), (cst.BaseStatement, cst.Call))
    assert isinstance(cst.Name("x"), (cst.Call, cst.BaseExpression))


@applied
def test_a_parse_shares_equal_whitespace_nodes_and_nothing_else_does():
    # nodes._SharedMeta: inside the engine's parse, equal whitespace and newline nodes are
    # one node; the tree is still the one LibCST's own parse gives (positions on it:
    # tests/test_positions.py), and outside the parse every constructor call builds a node
    # of its own again.
    text = "def f(a, b):\n    return a + b  # sum\n\n\nx = f(1, 2)\n"
    module, failure = parse_cst(text)
    assert failure is None and module is not None
    assert module.code == text and module.deep_equals(cst.parse_module(text))
    spaces = [n for n in _every_node(module) if type(n) is cst.SimpleWhitespace and n.value == " "]
    assert len(spaces) > 3 and all(n is spaces[0] for n in spaces)
    assert all(type(kind) is nodes._NodeMeta for kind in nodes._SHARED_TRIVIA)
    assert cst.SimpleWhitespace(" ") is not cst.SimpleWhitespace(" ")
    assert cst.Newline() is not cst.Newline()


@applied
def test_the_engine_parse_skips_the_import_machinery_only_in_its_own_frame(monkeypatch):
    # nodes.parse_module: LibCST's native parser asks __import__ for "libcst" once per node;
    # the engine calls it from a frame whose builtins answer with a no-op. The parser does
    # call it there, every other frame keeps the real one, and a native parser that needs a
    # module that is not imported yet (KeyError) gets LibCST's own entry point instead.
    import builtins

    asked = []
    monkeypatch.setitem(nodes._NATIVE_CALL.__globals__["__builtins__"], "__import__", lambda *a: asked.append(a[0]) or "")
    text = "import os\nx = os.path.join('a', 'b')\n"
    module, failure = parse_cst(text)
    assert failure is None and module is not None and module.deep_equals(cst.parse_module(text))
    assert asked and set(asked) == {"libcst"}
    assert builtins.__import__ is not nodes._IMPORT_NOTHING and __import__("os").path

    def needs_a_module(text):
        raise KeyError("libcst._not_imported_yet")

    monkeypatch.setattr(nodes, "_NATIVE_CALL", needs_a_module)
    module, failure = parse_cst(text)
    assert failure is None and module is not None and module.deep_equals(cst.parse_module(text))


@applied
def test_a_libcst_whose_native_entry_point_differs_is_parsed_through_its_public_one():
    # nodes._native_call tries the native parser once; where it is missing, takes other
    # arguments or builds another tree, the engine keeps LibCST's own cst.parse_module.
    class Missing:
        pass

    class OtherArguments:
        @staticmethod
        def parse_module(source):
            return cst.parse_module(source)

    class OtherTree:
        @staticmethod
        def parse_module(source, encoding):
            return cst.parse_module("y = 2\n")

    class Same:
        @staticmethod
        def parse_module(source, encoding):
            return cst.parse_module(source)

    assert nodes._native_call(Missing()) is None
    assert nodes._native_call(OtherArguments()) is None
    assert nodes._native_call(OtherTree()) is None
    assert nodes._native_call(Same()) is not None
    assert nodes._NATIVE_CALL is not None  # the installed LibCST's own passes


def _every_node(node):
    """``node`` and everything below it, trivia included (LibCST's own ``children``)."""
    yield node
    for child in node.children:
        yield from _every_node(child)


def engine_walk(module):
    from torchlint.tree import iter_nodes

    return iter_nodes(module)
