"""The engine's file facts (module-level imports, classes) are the same read from CPython's
tree or LibCST's (``torchlint.statements``), and a file analysed without CPython's tree
(``check_syntax(tree=False)``) gets the same outcome, facts and positions as one with it."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from torchlint import engine
from torchlint.engine import analyze_source
from torchlint.imports import ImportTable
from torchlint.rule import all_rules
from torchlint.semantic.index import class_facts
from torchlint.source import check_syntax

REPO = Path(__file__).resolve().parents[2]

# The traps: one-line bodies, elif chains, try/except*/else/finally, match, while/for else,
# with targets, starred and nested targets, *bases, subscripted and keyword bases, async
# defs, positional-only self, a method without parameters, imports in if/try/with blocks
# (not in for/while/def), relative and star imports, aliases.
TRAPS = '''\
import os, torch.nn as nn
from . import sibling as sib
from ..pkg.mod import *
from typing import Generic, TypeVar
if os.name:
    import numpy as np
elif os.sep:
    from json import dumps
else:
    import pickle
try:
    import yaml
except* ImportError:
    from x import y as z
else:
    import tomllib
finally:
    import sys
with open("f") as fh:
    import gzip
for _ in range(1):
    import not_module_level
while False:
    import nor_this
def f():
    import inside_function
T = TypeVar("T")
mixins = ()
class One(nn.Module): pass
class Two(One, Generic[T], *mixins, metaclass=type):
    x = 1; y = 2
    def __init__(self, /, a):
        self.a, (self.b, *self.c) = 1, (2, 3); self.d: int = 4
        self.e += 1
        for self.f in []: pass
        else: self.f2 = 0
        with open("x") as (self.g, self.g2), open("y") as self.g3: pass
        while True:
            self.w = 1
        else:
            self.w2 = 1
        if a: self.i1 = 1
        elif a: self.i2 = 2
        else: self.i3 = 3
        try: self.t1 = 1
        except ValueError: self.t2 = 2
        else: self.t3 = 3
        finally: self.t4 = 4
        match a:
            case 1: self.m1 = 1
            case _:
                self.m2 = 2
        async def later(): self.h = 5
        other.k = 6
        class Inner(One):
            def __init__(me): me.j = 7
    async def run(this): this.r = 1
    def nothing(): pass
    @property
    def p(self): return self.a
if True:
    class InIf(sib.Base): pass
else:
    class InElse(sib.pkg.Deep.Base): pass
try:
    class InTry(z): pass
except* Exception:
    class InExcept(np.ndarray): pass
def make():
    class Local(One): pass
    class Sub(Local):
        def build(self):
            class Deep(Sub): pass
    return Sub
'''


def _facts(tree) -> tuple[dict, list, list]:
    imports = ImportTable("pkg.sub.m", False)
    imports.scan(tree)
    return imports.names, imports.star, class_facts(tree, imports)


def test_traps_give_the_same_facts_from_either_tree():
    from_ast, from_cst = _facts(ast.parse(TRAPS)), _facts(cst.parse_module(TRAPS))
    assert from_cst == from_ast
    names, star, classes = from_cst
    assert names["np"] == "numpy" and names["dumps"] == "json.dumps" and names["z"] == "x.y"
    assert names["sib"] == "pkg.sub.sibling" and star == ["pkg.pkg.mod"]
    assert "not_module_level" not in names and "nor_this" not in names and "inside_function" not in names
    by_name = {c["name"]: c for c in classes}
    assert by_name["Two"]["bases"] == ["pkg.sub.m.One", "typing.Generic"]
    assert by_name["Two"]["methods"] == ["__init__", "run", "nothing", "p"]
    assert by_name["Two"]["self_attrs"] == sorted(
        ["a", "b", "c", "d", "e", "f", "f2", "g", "g2", "g3", "w", "w2", "i1", "i2", "i3",
         "t1", "t2", "t3", "t4", "m1", "m2", "h", "r"])
    assert by_name["Two.__init__.Inner"]["self_attrs"] == ["j"]
    assert by_name["InElse"]["bases"] == ["pkg.sub.sibling.pkg.Deep.Base"]
    assert by_name["InExcept"]["bases"] == ["numpy.ndarray"]
    assert by_name["make.Sub.build.Deep"]["bases"] == ["pkg.sub.m.make.Sub"]


def _python_files() -> list[Path]:
    return sorted(p for p in (REPO / "fixtures").rglob("*.py")) + sorted((REPO / "torchlint").rglob("*.py"))


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_fixture_and_source_file_gives_the_same_facts_from_either_tree(path):
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not valid Python (a TL000 fixture)")
    assert _facts(cst.parse_module(text)) == _facts(tree)


@pytest.mark.parametrize("code", [
    "x = (\n",  # the parser's error
    "def f(:\n    pass\n",
    "f(**a, *b)\n",
    "nonlocal x\n",  # only symtable refuses it: analysed, as ast.parse alone has it
    "def f(a, a):\n    pass\n",
    "x = " + "-" * 2988 + "1\n",  # symtable runs out of depth first: ast.parse decides
    "x = " + "-" * 3500 + "1\n",  # both do
])
def test_a_check_without_the_tree_has_the_outcome_of_the_one_with_it(code):
    with_tree, failure = check_syntax(code)
    without, failure_without = check_syntax(code, tree=False)
    assert failure_without == failure
    assert (without is None) == (with_tree is None)
    if without is not None:
        assert without.text == with_tree.text


def test_a_linted_file_builds_no_cpython_tree_unless_a_position_is_asked(monkeypatch):
    """With a rule to run, the syntax check builds no ``ast`` and the facts come from LibCST's
    tree; a finding's position parses CPython's tree then, and is the same as ever."""
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    codes = frozenset(r.code for r in all_rules())
    quiet = analyze_source("pkg/quiet.py", b"import torch\nclass M(torch.nn.Module):\n    pass\n", codes)
    assert parses == [] and quiet.record.index["classes"][0]["bases"] == ["torch.nn.Module"]
    buggy = (REPO / "fixtures" / "buggy_project").rglob("*.py")
    for path in sorted(buggy):
        data = path.read_bytes()
        without = analyze_source(str(path.relative_to(REPO)), data, codes)
        monkeypatch.setattr(engine, "read_python", _with_tree(engine.read_python))
        with_tree = analyze_source(str(path.relative_to(REPO)), data, codes)
        monkeypatch.undo()
        monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
        assert [f.to_dict() for f in without.findings] == [f.to_dict() for f in with_tree.findings]
        assert without.record.to_json() == with_tree.record.to_json()
    assert parses  # the buggy project's findings asked for positions


def _with_tree(read_python):
    def read(text, target=None, deep=None, tree=True):
        return read_python(text, target, deep, tree=True)
    return read
