"""``semantic.modules``: what a module expression builds, whether it is parameter-free, and
which bases make a class an ``nn.Module`` (shared by TL005, TL007, TL010 and ``Project``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.libraries import is_module_base
from torchlint.semantic.modules import constructions, is_module_here, is_parameter, parameter_free


def model_of(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    return ctx.semantic.model


def value_of(model, name: str) -> cst.BaseExpression:
    """The value of the module-level assignment ``name = ...``."""
    return next(b.value for b in model.scopes[model.ctx.module].bindings[name])


SRC = """
import torch
import torch.nn as nn
from lib import Block

class Local(nn.Module):
    pass

class Sub(Local):
    pass

class Plain:
    pass

lin = nn.Linear(4, 4).to("cuda")
act = nn.ReLU() if flag else nn.Identity()
either = nn.Linear(2, 2) if flag else nn.ReLU()
seq = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))
mixed = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))
starred = nn.ModuleList([*layers])
param = nn.Parameter(torch.ones(1))
imported = Block(4)
local = Sub()
shape = torch.zeros(3)
"""


@pytest.mark.parametrize("name, expected", [
    ("lin", [("nn", "Linear", False)]),
    ("act", [("nn", "ReLU", True), ("nn", "Identity", True)]),
    ("either", [("nn", "Linear", False), ("nn", "ReLU", True)]),
    ("seq", [("nn", "Sequential", True)]),
    ("mixed", [("nn", "Sequential", False)]),
    ("starred", [("nn", "ModuleList", False)]),
    ("param", [("param", "torch.nn.Parameter", False)]),
    ("imported", [("class", "lib.Block", False)]),
    ("local", [("class", "pkg.m.Sub", False)]),
    ("shape", []),
])
def test_constructions(name, expected):
    model = model_of(SRC)
    found = constructions(model, value_of(model, name))
    assert [(b.kind, b.name, parameter_free(model, b)) for b in found] == expected


def test_local_class_carries_its_info_and_module_bases():
    model = model_of(SRC)
    (local,) = constructions(model, value_of(model, "local"))
    assert local.info is not None and local.info.name == "Sub" and is_module_here(model, local.info)
    plain = next(i for i in model.classes.values() if i.name == "Plain")
    assert not is_module_here(model, plain)
    assert is_parameter(model, value_of(model, "param")) and not is_parameter(model, value_of(model, "lin"))


@pytest.mark.parametrize("qualified, expected", [
    ("torch.nn.Module", True), ("torch.nn.modules.module.Module", True), ("torch.nn.Sequential", True),
    ("pytorch_lightning.LightningModule", True), ("lightning.pytorch.LightningModule", True),
    ("mylib.LightningModule", False), ("torch.nn.Parameter", False), ("object", False),
])
def test_is_module_base(qualified, expected):
    assert is_module_base(qualified) is expected


def test_runs_layers_needs_a_forward_that_is_not_abstract():
    from tests.semantic.test_semantic import analyses
    from torchlint.semantic.modules import is_abstract, runs_layers

    ctx, sem = analyses(
        "import abc\nfrom torch import nn\n"
        "class Base(nn.Module):\n    def forward(self, x):\n        '''Subclasses.'''\n        raise NotImplementedError\n"
        "class Marked(nn.Module):\n    @abc.abstractmethod\n    def forward(self, x):\n        return x\n"
        "class Lit(nn.Module):\n    def training_step(self, batch, i):\n        return self.fc(batch)\n"
        "class Net(Base):\n    if FAST:\n        def forward(self, x):\n            ...\n"
        "    else:\n        def forward(self, x):\n            return self.fc(x)\n"
        "class Holder(nn.Module):\n    def __init__(self):\n        super().__init__()\n")
    infos = {info.name: info for info in sem.model.classes.values()}
    assert is_abstract(infos["Base"].methods["forward"]) and is_abstract(infos["Marked"].methods["forward"])
    assert not runs_layers(infos["Base"]) and not runs_layers(infos["Marked"]) and not runs_layers(infos["Holder"])
    assert runs_layers(infos["Lit"]) and runs_layers(infos["Net"])  # one branch's forward is real


def test_a_one_line_method_is_abstract_only_when_its_statement_is_a_stub():
    from torchlint.semantic.modules import is_abstract

    def first(src):
        return cst.parse_module(src).body[0]

    assert not is_abstract(first("def forward(self, x): return self.fc(x)\n"))
    assert is_abstract(first("def forward(self, x): ...\n"))
    assert is_abstract(first("def forward(self, x): raise NotImplementedError\n"))


def test_is_parameter_through_every_spelling():
    """The callee's last name is ``Parameter`` or an imported alias; a local alias or a
    shadowing name is not the class (the scope-aware name says which)."""
    model = model_of("""
        import torch
        from torch import nn
        from torch.nn import Parameter as P
        from torch.nn.parameter import Parameter
        Q = nn.Parameter
        a = nn.Parameter(torch.zeros(1))
        b = torch.nn.parameter.Parameter(torch.zeros(1))
        c = P(torch.zeros(1))
        d = Parameter(torch.zeros(1))
        e = Q(torch.zeros(1))
        f = nn.Linear(1, 1)
        g = mylib.Parameter(1)

        def h(P):
            return P(1)
    """)
    spelled = {name: is_parameter(model, value_of(model, name)) for name in "abcdefg"}
    assert spelled == {"a": True, "b": True, "c": True, "d": True, "e": False, "f": False, "g": False}
    shadowed = next(s.node for s in model.calls if type(s.node.func) is cst.Name and s.node.func.value == "P"
                    and s.scope.node is not model.ctx.module)
    assert not is_parameter(model, shadowed)
