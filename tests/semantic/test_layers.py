"""``semantic.layers``: which layers a class defines and which of them its forward, its other
methods and its callers use (``class_layers``, TL005's per-file facts), the collections whose
elements an expression holds (``element_sources``) and tensors built with ``requires_grad``
(``requires_grad_tensor``, TL007)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.layers import (MODEL_NAME, ClassLayers, class_layers, element_sources, is_model_variable,
                                       normalised, requires_grad_tensor)
from torchlint.tree import iter_nodes


def context(src: str) -> FileContext:
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    return ctx


def named(ctx: FileContext) -> list[cst.Attribute]:
    """What TL005's walk hands ``class_layers``: ``self.x`` and ``<model>.x`` attributes."""
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
            and (n.value.value == "self" or is_model_variable(n.value.value))]


@pytest.mark.parametrize("name", ["model", "Model", "net", "netG", "resnet", "models", "encoder", "ddp_model", "m", "D",
                                  "g", "mods", "modules", "self", "x", "torch", "nn", "Networks", "network_", "gg"])
def test_a_variable_that_may_hold_a_model(name):
    """``is_model_variable`` answers as ``MODEL_NAME`` does, however often it is asked."""
    for _ in range(2):
        assert is_model_variable(name) == (MODEL_NAME.search(name) is not None), name


def layers_of(src: str):
    ctx = context(src)
    return ctx, class_layers(ctx, named(ctx))


def one_class(src: str) -> ClassLayers:
    _, found = layers_of(src)
    (cls,) = found.classes
    return cls


def value_of(ctx: FileContext, name: str) -> cst.BaseExpression:
    """The value of the last module-level or local assignment ``name = ...``."""
    found = [b for scope in ctx.semantic.model.scopes.values() for b in scope.bindings.get(name, ())
             if b.kind == "assign"]
    return found[-1].value


NET = """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self, dim, p):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)
        self.drop = nn.Dropout(p)
        self.act = nn.ReLU()
        self.scale = 2.0
        nn.init.zeros_(self.head.bias)
        if self.head.bias is not None:
            self.head.weight.data.normal_()

    def forward(self, x):
        return F.softmax(self.fc(x), -1)
"""


def test_layers_defined_with_what_they_build_and_whether_an_argument_configures_them():
    cls = one_class(NET)
    assert cls.info.name == "Net"
    assert sorted(cls.layers) == ["act", "drop", "fc", "head"]
    stmt, kinds, configured = cls.layers["fc"]
    assert isinstance(stmt, cst.Assign) and kinds == [["nn", False, "Linear"]] and configured
    assert cls.layers["drop"][1:] == ([["nn", True, "Dropout"]], True)
    assert cls.layers["act"][1:] == ([["nn", True, "ReLU"]], False)
    assert "scale" not in cls.layers


def test_forward_reads_but_initialisation_in_init_is_no_use():
    cls = one_class(NET)
    assert cls.reads == {"fc"}  # the head is only initialised, inspected in __init__
    assert {"head", "fc"} <= cls.touched
    assert cls.runs and not cls.dynamic and not cls.pf and not cls.iterates
    assert cls.functional == {"softmax"}  # F.softmax, normalised


def test_a_module_flowing_somewhere_in_init_is_used():
    cls = one_class("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = nn.Linear(2, 2)
                self.seq = nn.Sequential(self.block, nn.ReLU())
            def forward(self, x):
                return self.seq(x)
        """)
    assert cls.reads == {"block", "seq"}


def test_parameter_free_classes_iterating_parameters_and_deleting_layers():
    free, counted = layers_of("""
        import torch
        import torch.nn as nn
        class Free(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()
                self.k = 3
            def forward(self, x):
                return self.act(x)
        class Counted(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(1))
                self.old = nn.Linear(2, 2)
                del self.old
                self.gone = nn.Linear(2, 2)
                delattr(self, "gone")
            def forward(self, x):
                return sum(p.sum() for p in self.parameters()) + x
        """)[1].classes
    assert free.pf and not free.iterates
    assert not counted.pf and counted.iterates
    assert counted.layers["w"][1] == [["param", False]]
    assert counted.deleted == {"old", "gone"}


def test_a_frozen_parameter_is_no_layer():
    cls = one_class("""
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.mask = nn.Parameter(torch.ones(3), requires_grad=False)
        """)
    assert cls.layers == {}


@pytest.mark.parametrize("body", [
    "def forward(self, x, name):\n        return getattr(self, name)(x)",
    "def forward(self, x):\n        return [m(x) for m in self.children()]",
    "def forward(self, x):\n        return self._modules['a'](x)",
    "def __getattr__(self, name):\n        return super().__getattr__(name)",
    "def forward(self, x):\n        setattr(self, 'y', x)",
])
def test_dynamic_access_to_submodules(body):
    cls = one_class(f"""
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
    {body}
""")
    assert cls.dynamic


def test_initialising_every_module_in_init_is_not_dynamic_and_getattr_by_literal_is_a_read():
    cls = one_class("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(2, 2)
                for m in self.modules():
                    nn.init.zeros_(m.weight)
            def forward(self, x):
                return getattr(self, "a")(x)
        """)
    assert not cls.dynamic and cls.reads == {"a"}


def test_aliases_one_module_under_two_names_and_registration_containers():
    cls = one_class("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, policies, projections):
                super().__init__()
                self.a = self.b = nn.Linear(2, 2)
                self.policies = policies
                self._subs = nn.ModuleList(policies.values())
                self.projections = checked(projections)
                mods = [p for p in projections if isinstance(p, nn.Module)]
                self._held = nn.ModuleList(mods)
                self.empty = nn.ModuleList()
                self.filled = nn.ModuleList()
                self.filled.append(nn.ReLU())
        """)
    assert cls.aliases == {"a": {"b"}, "b": {"a"}, "_subs": {"policies"}, "_held": {"projections"}}
    assert cls.empty_container("empty") and not cls.empty_container("filled") and not cls.empty_container("a")


def test_callers_reading_layers_through_another_object_and_loading_weights():
    ctx, found = layers_of("""
        import torch
        class Wrapper:
            def run(self, x):
                return self.backbone.fc(x) + self.scores.softmax(-1)

        def train(model, x, y):
            model.load_state_dict(torch.load("w.pt"))
            return model.criterion(model(x), y)
        """)
    # ``self.backbone.fc``, ``model.x`` (a method too); ``.softmax(-1)`` of a tensor is no layer
    assert found.outside == {"fc", "criterion", "load_state_dict"} and found.loads
    assert [c.info.name for c in found.classes] == ["Wrapper"]


def test_a_file_without_classes_or_callers():
    _, found = layers_of("x = 1\n")
    assert found.classes == [] and found.outside == set() and not found.loads


@pytest.mark.parametrize("expr, expected", [
    ("xs", {"xs"}),
    ("xs.values()", {"xs"}),
    ("list(xs)", {"xs"}),
    ("tuple(xs.values())", {"xs"}),
    ("[x for x in xs if x]", {"xs"}),
    ("(x for x in xs)", {"xs"}),
    ("[f(x) for x in xs]", set()),
    ("sorted(xs)", set()),
    ("mods", {"mods", "projections"}),
])
def test_element_sources(expr, expected):
    ctx = context(f"""
def build(projections, xs, f):
    mods = [p for p in projections if p is not None]
    target = {expr}
""")
    assert element_sources(ctx.semantic.model, value_of(ctx, "target")) == expected


@pytest.mark.parametrize("expr, expected", [
    ("torch.randn(3, requires_grad=True)", True),
    ("torch.zeros(3).requires_grad_()", True),
    ("torch.zeros(3).requires_grad_(True)", True),
    ("torch.zeros(3).requires_grad_(False)", False),
    ("torch.randn(3, requires_grad=False)", False),
    ("torch.randn(3)", False),
    ("make(3, requires_grad=True)", False),
    ("make(3).requires_grad_()", False),
])
def test_requires_grad_tensor(expr, expected):
    ctx = context(f"import torch\nt = {expr}\n")
    assert requires_grad_tensor(ctx.semantic.model, value_of(ctx, "t")) is expected


def test_normalised_names_match_layers_to_their_functional_form():
    assert normalised("LogSoftmax") == normalised("log_softmax") == "logsoftmax"


def _assigned_values(ctx: FileContext, target: str) -> cst.BaseExpression:
    return next(n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Assign)
                and ctx.module.code_for_node(n.targets[0].target) == target)


@pytest.mark.parametrize(("src", "made"), [
    ("import torch\npe = torch.zeros(4, 2)\npe[:, 0] = 1\npe = pe.unsqueeze(0)\nself.pe = pe\n", "torch.zeros(4, 2)"),
    ("import torch\nm = torch.tril(torch.ones(3, 3)).float()\nself.pe = m\n", "torch.ones(3, 3)"),
    ("import torch\nself.pe = torch.ones(3).to(d)\n", "torch.ones(3).to(d)"),  # moved: a call of its own
    ("import torch\nif c:\n    p = torch.ones(3)\nelse:\n    p = torch.zeros(3)\nself.pe = p\n", None),
])
def test_tensor_made_by(src, made):
    from torchlint.semantic.layers import tensor_made_by
    ctx = context(src)
    found = tensor_made_by(ctx.semantic.model, _assigned_values(ctx, "self.pe"))
    assert (ctx.module.code_for_node(found) if found is not None else None) == made


@pytest.mark.parametrize(("value", "expected"), [
    ("torch.randn(3, requires_grad=True)", True),
    ("torch.randn(3).cuda().requires_grad_()", True),
    ("Variable(torch.zeros(3), requires_grad=True)", True),
    ("Variable(x, requires_grad=True)", False),  # not known to be a factory's tensor
    ("torch.randn(3, requires_grad=False)", False),
    ("torch.randn(3).requires_grad_(False)", False),
])
def test_requires_grad_tensor(value, expected):
    from torchlint.semantic.layers import requires_grad_tensor
    ctx = context(f"import torch\nfrom torch.autograd import Variable\nself.w = {value}\n")
    assert requires_grad_tensor(ctx.semantic.model, _assigned_values(ctx, "self.w")) is expected
