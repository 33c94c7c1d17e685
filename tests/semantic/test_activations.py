"""``semantic.activations``: what a name or ``self.<attr>`` holds, what activation an
expression is the output of, what model it comes out of (an ``nn.Sequential`` ending in an
activation, a class's construction), and what a forward returns through an activation."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.activations import (activation_call, activation_of, model_of, returns_activation, single_value,
                                            values_of)
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def loss_input(ctx) -> cst.BaseExpression:
    """The first argument of the file's last ``loss(...)`` call."""
    calls = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
             and ctx.module.code_for_node(n.func) == "loss"]
    return calls[-1].args[0].value


def code(ctx, node) -> str | None:
    return None if node is None else ctx.module.code_for_node(node)


def test_values_of_a_name_and_a_self_attribute():
    ctx, model = analyses("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                self.act = nn.Softmax(1)
            def forward(self, h):
                return self.act(h)
        if flag:
            p = h.softmax(1)
        else:
            p = h.sigmoid()
        loss(p)
        """)
    assert [code(ctx, v) for v in values_of(model, loss_input(ctx))] == ["h.softmax(1)", "h.sigmoid()"]
    assert single_value(model, loss_input(ctx)) is None  # two values
    act = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute)
               and code(ctx, n) == "self.act" and isinstance(ctx.parent(n), cst.Call))
    assert code(ctx, single_value(model, act)) == "nn.Softmax(1)"


@pytest.mark.parametrize("src", [
    "def f(p):\n    loss(p)\n",  # a parameter
    "for p in batches:\n    loss(p)\n",  # a loop variable
    "p, q = pair\nloss(p)\n",  # an unpacking
    "loss(other.p)\n",  # an attribute of something other than self
])
def test_values_of_nothing_but_plain_assignments(src):
    ctx, model = analyses(src)
    assert values_of(model, loss_input(ctx)) == []
    assert single_value(model, loss_input(ctx)) is None


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn.functional as F\nloss(F.softmax(h, dim=1))\n", "softmax"),
    ("import torch\nloss(torch.sigmoid(h))\n", "sigmoid"),
    ("import torch.nn.functional as F\nloss(F.log_softmax(h, 1))\n", "log_softmax"),
    ("loss(h.softmax(1))\n", "softmax"),
    ("loss(h.softmax())\n", None),  # a method with no dim: may be anything's softmax
    ("loss(h.sigmoid())\n", "sigmoid"),
    ("import torch.nn as nn\nloss(nn.Softmax(dim=1)(h))\n", "softmax"),
    ("import torch.nn.functional as F\np = F.softmax(h, 1)\nq = p\nloss(q)\n", "softmax"),  # through names
    ("import torch.nn.functional as F\np = F.relu(h)\nloss(p)\n", None),
    ("import torch.nn.functional as F\nif a:\n    p = F.softmax(h, 1)\nelse:\n    p = h\nloss(p)\n", None),
    ("import mylib\nloss(mylib.softmax(h, 1))\n", None),  # an imported module's function, not a method
    ("loss(h)\n", None),
])
def test_activation_of(src, expected):
    ctx, model = analyses(src)
    assert activation_of(model, loss_input(ctx)) == expected


def test_activation_of_a_layer_stored_on_self():
    ctx, model = analyses("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                self.act = nn.Sigmoid()
            def forward(self, h):
                loss(self.act(h))
        """)
    assert activation_of(model, loss_input(ctx)) == "sigmoid"


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn.functional as F\nloss(F.softmax(h, dim=1))\n", ("function", "h")),
    ("import torch.nn.functional as F\nloss(F.softmax(input=h, dim=1))\n", ("function", "h")),
    ("loss(h.softmax(1))\n", ("method", "h")),
    ("import torch.nn as nn\nloss(nn.Softmax(1)(h))\n", ("layer", "h")),
    ("import torch.nn as nn\nloss(nn.Softmax(1)(*hs))\n", None),  # a starred argument
    ("import torch.nn.functional as F\np = F.softmax(h, 1)\nloss(p)\n", None),  # through a name: not right here
    ("loss(h)\n", None),
])
def test_activation_call(src, expected):
    ctx, model = analyses(src)
    found = activation_call(model, loss_input(ctx))
    assert (found if found is None else (found[0], code(ctx, found[1]))) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.Softmax(1))\nloss(net(x))\n",
     ("sequential", "softmax")),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.Sigmoid())\nout = net(x)\nloss(out)\n",
     ("sequential", "sigmoid")),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.ReLU())\nloss(net(x))\n", None),
    ("import torch.nn as nn\nnet = nn.Sequential(*layers, nn.Softmax(1))\nloss(net(x))\n", None),
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nloss(net(x))\n", ("class", "pkg.m.Net")),
    ("from models import ResNet\nnet = ResNet(10)\nloss(net(x))\n", ("class", "models.ResNet")),
    ("import torch.nn as nn\nnet = nn.Linear(4, 2)\nloss(net(x))\n", None),  # a torch class
    ("loss(net(x))\n", None),  # unbound
])
def test_model_of(src, expected):
    ctx, model = analyses(src, "pkg/m.py")
    assert model_of(ctx, model, loss_input(ctx)) == expected


def test_model_of_a_class_without_a_module_name():
    ctx, model = analyses("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nloss(net(x))\n", "")
    assert model_of(ctx, model, loss_input(ctx)) == ("class", "Net")


def forward_of(model, name: str = "forward") -> cst.FunctionDef:
    return next(s.node for s in model.scopes.values() if isinstance(s.node, cst.FunctionDef)
                and s.node.name.value == name)


@pytest.mark.parametrize(("body", "expected"), [
    ("return F.softmax(self.fc(x), dim=1)", "softmax"),
    ("h = self.fc(x)\nreturn torch.sigmoid(h)", "sigmoid"),
    ("return self.head(x)", "softmax"),  # self.head = nn.Sequential(..., nn.Softmax(1))
    ("if self.training:\n    return F.softmax(x, 1)\nreturn torch.sigmoid(x)", None),  # two kinds
    ("if self.training:\n    return F.softmax(x, 1)\nreturn x", None),  # only sometimes
    ("if x is None:\n    return\nreturn F.softmax(x, 1)", None),  # a bare return
    ("return F.softmax(x, 1), x", None),  # a tuple
    ("def inner():\n    return x\nreturn F.softmax(x, 1)", "softmax"),  # nested returns don't count
    ("return self.fc(x)", None),
])
def test_returns_activation(body, expected):
    ctx, model = analyses(textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                self.fc = nn.Linear(4, 2)
                self.head = nn.Sequential(nn.Linear(4, 2), nn.Softmax(1))
            def forward(self, x):
        """) + textwrap.indent(body, " " * 8) + "\n")
    assert returns_activation(ctx, model, forward_of(model)) == expected


def test_returns_activation_of_a_helper():
    ctx, model = analyses("""
        import torch
        def predict(x):
            probs = torch.sigmoid(x)
            return probs
        """)
    assert returns_activation(ctx, model, forward_of(model, "predict")) == "sigmoid"
