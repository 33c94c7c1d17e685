"""``semantic.activations``: what a name or ``self.<attr>`` holds, what activation an
expression is the output of, what model it comes out of (an ``nn.Sequential`` ending in an
activation, a class's construction), and what a forward returns through an activation."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.activations import Outputs, Source, activation_call, activation_of, returns_activation
from torchlint.semantic.dataflow import single_value, values_of
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
    assert activation_of(ctx, loss_input(ctx)) == expected


def test_activation_of_a_layer_stored_on_self():
    ctx, model = analyses("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                self.act = nn.Sigmoid()
            def forward(self, h):
                loss(self.act(h))
        """)
    assert activation_of(ctx, loss_input(ctx)) == "sigmoid"


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


SEQ = Source("act", "softmax", origin="sequential")
LAYER = Source("act", "logits", origin="layer Linear")  # a Linear layer called: its raw output


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.Softmax(1))\nloss(net(x))\n", [SEQ]),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.Sigmoid())\nout = net(x)\nloss(out)\n",
     [Source("act", "sigmoid", origin="sequential")]),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.ReLU())\nloss(net(x))\n", []),
    # the last layer is a Softmax whatever the starred layers before it are
    ("import torch.nn as nn\nnet = nn.Sequential(*layers, nn.Softmax(1))\nloss(net(x))\n", [SEQ]),
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nloss(net(x))\n", [Source("cls", "pkg.m.Net")]),
    ("from models import ResNet\nnet = ResNet(10)\nloss(net(x))\n", [Source("cls", "models.ResNet")]),
    # a Linear layer's raw output: logits
    ("import torch.nn as nn\nnet = nn.Linear(4, 2)\nloss(net(x))\n", [LAYER]),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.1))\nloss(net(x))\n", []),
    ("import torch.nn as nn\nnet = nn.LSTM(4, 2)\nloss(net(x))\n", []),  # another torch class
    ("loss(net(x))\n", []),  # unbound
    # the class survives .to(device)/.cuda()/.double(), also when the name is rebound to it
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net().to(dev)\nloss(net(x))\n",
     [Source("cls", "pkg.m.Net")]),
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nnet = net.cuda().double()\nloss(net(x))\n",
     [Source("cls", "pkg.m.Net")]),
    # a list filled by append, an add_module-filled Sequential
    ("import torch.nn as nn\nls = [nn.Linear(4, 2)]\nls.append(nn.Softmax(1))\nnet = nn.Sequential(*ls)\nloss(net(x))\n",
     [SEQ]),
    ("import torch.nn as nn\nnet = nn.Sequential()\nnet.add_module('fc', nn.Linear(4, 2))\n"
     "net.add_module('sm', nn.Softmax(1))\nloss(net(x))\n", [SEQ]),
    ("import torch.nn as nn\nnet = nn.Sequential()\nnet.add_module('sm', nn.Softmax(1))\n"
     "net.add_module('fc', nn.Linear(4, 2))\nloss(net(x))\n", [Source("act", "logits", origin="sequential")]),
    # model.forward(x), an element of a returned tuple
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nloss(net.forward(x))\n",
     [Source("cls", "pkg.m.Net")]),
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\na, b = net(x)\nloss(b)\n",
     [Source("cls", "pkg.m.Net", element=1)]),
    # a helper returning the model for the mode it is called with: the inference branch cannot run
    ("import torch.nn as nn\ndef get(mode):\n    net = nn.Linear(4, 2)\n    if mode == 'inference':\n"
     "        return nn.Sequential(net, nn.Softmax(1))\n    return net\nnet = get('training')\nloss(net(x))\n", [LAYER]),
    ("import torch.nn as nn\ndef get(mode):\n    net = nn.Linear(4, 2)\n    if mode == 'inference':\n"
     "        return nn.Sequential(net, nn.Softmax(1))\n    return net\nnet = get(m)\nloss(net(x))\n", [SEQ, LAYER]),
])
def test_sources_of_a_models_output(src, expected):
    ctx, model = analyses(src, "pkg/m.py")
    assert Outputs(ctx).sources(loss_input(ctx)) == expected


def test_sources_of_a_class_without_a_module_name():
    ctx, model = analyses("import torch.nn as nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nloss(net(x))\n", "")
    assert Outputs(ctx).sources(loss_input(ctx)) == [Source("cls", "Net")]


def test_sources_through_a_parameter_no_caller_in_the_file_passes():
    ctx, model = analyses("def train(model, loader):\n    for x, y in loader:\n        loss(model(x))\n", "pkg/m.py")
    assert Outputs(ctx).sources(loss_input(ctx)) == [Source("arg", "train", param="model", index=0)]


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
    assert returns_activation(ctx, forward_of(model)) == expected


def test_returns_activation_of_a_helper():
    ctx, model = analyses("""
        import torch
        def predict(x):
            probs = torch.sigmoid(x)
            return probs
        """)
    assert returns_activation(ctx, forward_of(model, "predict")) == "sigmoid"


def test_a_layer_attribute_named_like_a_tensor_method():
    ctx, model = analyses("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                self.softmax = nn.LogSoftmax(dim=1)
            def forward(self, h):
                loss(self.softmax(h))
        """)
    assert activation_of(ctx, loss_input(ctx)) == "log_softmax"  # the layer it holds, not Tensor.softmax
    assert activation_call(model, loss_input(ctx)) is None  # no activation written right here to fix


def test_losses_held_through_many_conditional_rebindings_is_computed_once_per_name():
    # each read sees two bindings: without memoising, 2**40 paths
    src = "import torch.nn as nn\ncrit = nn.CrossEntropyLoss()\n" + "if a:\n    crit = crit.cuda()\n" * 40 + "crit(p, y)\n"
    ctx, model = analyses(src)
    call = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n.func) == "crit"][-1]
    assert Outputs(ctx).loss_of(call) == ("cross_entropy", "crit")


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(2, 2), nn.Softmax(1))\n"
     + "if a:\n    net = net.cuda()\n" * 40 + "loss(net(x))\n", [Source("act", "softmax", origin="sequential")]),
    ("import torch.nn.functional as F\nh = F.softmax(x, 1)\n" + "if a:\n    h = h.view(-1)\n" * 40 + "loss(h)\n",
     [Source("act", "softmax")]),
])
def test_sources_through_many_conditional_rebindings_are_computed_once_each(src, expected):
    ctx, model = analyses(src)
    assert Outputs(ctx).sources(loss_input(ctx)) == expected

