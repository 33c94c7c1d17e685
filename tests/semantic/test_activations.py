"""``semantic.activations``: what a name or ``self.<attr>`` holds, what activation an
expression is the output of, what model it comes out of (an ``nn.Sequential`` ending in an
activation, a class's construction), and what a forward returns through an activation."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.activations import (Outputs, Source, activation_call, activation_of, class_endings, element_stores,
                                            library_classifier, loss_target, probabilities_from, returns_activation)
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
     "        return nn.Sequential(net, nn.Softmax(1))\n    return net\nnet = get('training')\nloss(net(x))\n",
     [LAYER]),
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


# Two functions passing a parameter to each other: asked while it is being answered, a
# parameter's sources are cut short (nothing from that caller); such an answer is not kept,
# so what each parameter is does not depend on which was asked first (``Dispatcher.gather``:
# a rule gathering its facts after other rules' questions finds what it finds alone).
PASSED_AROUND = """
    import torch.nn.functional as F
    def g(a):
        h(a)
    def h(b):
        g(b)
    g(F.softmax(z, 1))
"""


@pytest.mark.parametrize("first", ["a", "b"])
def test_sources_do_not_depend_on_the_order_questions_come_in(first):
    ctx, model = analyses(PASSED_AROUND)
    # the arguments of ``h(a)`` and ``g(b)``: each is what the other's parameter is given
    read = {n.value: n for n in iter_nodes(ctx.module) if isinstance(n, cst.Name) and n.value in ("a", "b")
            and isinstance(ctx.parent(n), cst.Arg)}
    outputs = Outputs(ctx)
    second = "b" if first == "a" else "a"
    got = {first: outputs.sources(read[first]), second: outputs.sources(read[second])}
    assert got == {"a": [Source("act", "softmax")], "b": [Source("act", "softmax")]}
    assert got[second] == Outputs(ctx).sources(read[second])  # as asked first, on its own



@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn.functional as F\nloss(F.softmax(h, dim=1))\n", ("softmax", "F.softmax(h, dim=1)")),
    ("import torch\nloss(torch.sigmoid(h))\n", ("sigmoid", "torch.sigmoid(h)")),
    ("loss(h.softmax(1).view(-1))\n", ("softmax", "h.softmax(1)")),  # shape-only methods keep the values
    ("import torch.nn.functional as F\np = F.softmax(h, 1)\nq = p.squeeze(0)\nloss(q)\n", ("softmax", "F.softmax(h, 1)")),
    ("import torch.nn as nn\nsm = nn.Softmax(dim=1)\nloss(sm(h))\n", ("softmax", "sm(h)")),
    ("import torch.nn.functional as F\nloss(F.log_softmax(h, 1))\n", None),  # already in log space
    ("import torch.nn.functional as F\nloss(F.softmax(h, 1).clamp(min=1e-8))\n", None),  # kept off 0
    ("import torch\nimport torch.nn.functional as F\nloss(torch.clamp(F.softmax(h, 1), 1e-8, 1))\n", None),
    ("import torch.nn.functional as F\nloss(F.softmax(h, 1) + 1e-8)\n", None),  # an epsilon added
    ("import torch.nn.functional as F\nif a:\n    p = F.softmax(h, 1)\nelse:\n    p = h\nloss(p)\n", None),
    ("def f(model, x):\n    loss(model(x))\n", None),  # a model's output: its activation is not in sight
    ("def f(p):\n    loss(p)\n", None),
    ("p = h.softmax(1)\np.data.clamp_(0.01, 0.99)\nloss(p)\n", None),  # clamped in place
    ("import torch.nn.functional as F\np = F.softmax(h, 1).gather(1, a)\nloss(p[0])\n", ("softmax", "F.softmax(h, 1)")),
])
def test_probabilities_from(src, expected):
    ctx, model = analyses(src)
    got = probabilities_from(model, loss_input(ctx))
    assert (got if got is None else (got[0], code(ctx, got[1]))) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch.nn as nn\nD = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())\nloss(D(x))\n", "sigmoid"),
    ("import torch.nn.functional as F\ndef pi(x):\n    return F.softmax(x, dim=1)\nloss(pi(s).gather(1, a))\n", "softmax"),
    ("import torch.nn as nn\nimport torch.nn.functional as F\nclass Net(nn.Module):\n"
     "    def forward(self, x):\n        return F.softmax(self.fc(x), dim=1)\nnet = Net()\nloss(net(x))\n", "softmax"),
    ("import torch.nn as nn\nD = nn.Sequential(nn.Linear(2, 1))\nloss(D(x))\n", None),  # ends in no activation
    ("from nets import Discriminator\nD = Discriminator()\nloss(D(x))\n", None),  # not in this file
])
def test_probabilities_from_what_a_call_gives(src, expected):
    ctx, model = analyses(src)
    got = probabilities_from(model, loss_input(ctx), outputs=Outputs(ctx))
    assert (got if got is None else got[0]) == expected


# -- what a loss's input or target is made of: logits, one-hot, class indices (TL022, TL023) ------

LOGITS_SEQ = Source("act", "logits", origin="sequential")


@pytest.mark.parametrize(("src", "expected"), [
    # a layer's raw output, through a name, a helper and a forward ending in it
    ("import torch.nn as nn\nfc = nn.Conv2d(3, 1, 1)\nh = fc(x).squeeze(1)\nloss(h)\n",
     [Source("act", "logits", origin="layer Conv2d")]),
    ("import torch.nn as nn\nhead = nn.Linear(4, 1)\ndef score(x):\n    return head(x)\nloss(score(x))\n",
     [Source("act", "logits", origin="function score")]),
    ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\nloss(net(x))\n",
     [LOGITS_SEQ]),
    # an activation after the layer, arithmetic other than a bias or a scale on its output: not logits
    ("import torch\nimport torch.nn as nn\nfc = nn.Linear(4, 1)\nloss(torch.sigmoid(fc(x)))\n",
     [Source("act", "sigmoid")]),
    ("import torch.nn as nn\nfc = nn.Linear(4, 1)\nloss(fc(x) - fc(x).logsumexp(1, keepdim=True))\n", []),
    ("import torch.nn as nn\nfc = nn.Linear(4, 1)\nloss(fc(x) + y)\n", []),
    # logits scaled by a number, or with a number added: still logits
    ("import torch.nn as nn\nfc = nn.Linear(4, 1)\nloss(fc(x) / 2.0)\n", [Source("act", "logits", origin="layer Linear")]),
    ("import torch.nn as nn\nfc = nn.Linear(4, 1)\nloss(0.5 * fc(x) + 1)\n", [Source("act", "logits", origin="layer Linear")]),
    # F.one_hot, cast to float or not
    ("import torch.nn.functional as F\nloss(F.one_hot(y, 3))\n", [Source("act", "one_hot")]),
    ("import torch.nn.functional as F\nt = F.one_hot(y, 3).float()\nloss(t)\n", [Source("act", "one_hot_float")]),
    ("import torch\nimport torch.nn.functional as F\nloss(F.one_hot(y, 3).to(torch.float32))\n",
     [Source("act", "one_hot_float")]),
    ("import torch.nn.functional as F\nloss(F.one_hot(y, 3).argmax(1))\n", [Source("act", "indices")]),
    # class indices: argmax, torch.max's indices (not its values), .long(), joined and in arithmetic
    ("import torch\nloss(torch.argmax(x, dim=1))\n", [Source("act", "indices")]),
    ("import torch\n_, pred = torch.max(x, 1)\nloss(pred)\n", [Source("act", "indices")]),
    ("import torch\nvalues, _ = torch.max(x, 1)\nloss(values)\n", []),
    ("loss(x.max(dim=1)[1].float())\n", [Source("act", "indices_float")]),
    ("loss(y.long())\n", [Source("act", "indices")]),
    ("import torch\nc = torch.stack([a.argmax(0), b.argmax(0)], 1)\nloss(2.0 * c.float() / (63.0 - 1) - 1)\n",
     [Source("act", "indices_float")]),
    ("import torch\nloss(torch.stack([a.argmax(0), b], 1))\n", []),  # b: not known to be indices
    # torch.cat of what a list or a comprehension holds
    ("import torch\nimport torch.nn.functional as F\nouts = [F.softmax(m(b), 1) for b in batches]\n"
     "loss(torch.cat(outs))\n", [Source("act", "softmax")]),
])
def test_sources_of_what_a_loss_is_given(src, expected):
    ctx, model = analyses(src, "pkg/m.py")
    assert Outputs(ctx).sources(loss_input(ctx)) == expected


def test_a_linear_forward_ends_in_logits_and_is_no_activation():
    ctx, model = analyses("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                self.fc = nn.Linear(4, 2)
            def forward(self, x):
                return self.fc(x)
        """, "pkg/m.py")
    assert Outputs(ctx).ending(forward_of(model)) == Source("act", "logits", origin="layer Linear")
    assert returns_activation(ctx, forward_of(model)) is None
    assert class_endings(Outputs(ctx)) == {"Net": ["one", ["act", "logits", None, None, None, "layer Linear"]]}


def _calls(ctx, text: str) -> list:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n) == text]


def test_outputs_of_the_same_value_wherever_it_is_read():
    ctx, model = analyses("""
        import torch
        def acc(y_pred, y):
            return torch.round(y_pred)
        def train(model, x, y):
            out = model(x)
            loss(out.squeeze(1).detach())
            acc(out, y)
            both = torch.cat([model(x), model(y)])
        def evaluate(scores):
            return scores.data > 0.5
        """)
    outputs = Outputs(ctx)
    out_call = _calls(ctx, "model(x)")[0]
    assert outputs.outputs_of(loss_input(ctx)) == [(out_call, None)]
    round_arg = _calls(ctx, "torch.round(y_pred)")[0].args[0].value
    assert outputs.outputs_of(round_arg) == [(out_call, None)]  # the parameter: what its caller passes
    cat = _calls(ctx, "torch.cat([model(x), model(y)])")[0]
    assert outputs.outputs_of(cat) == [(_calls(ctx, "model(x)")[1], None), (_calls(ctx, "model(y)")[0], None)]
    scores = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and code(ctx, n) == "scores.data")
    param = outputs.outputs_of(scores)
    assert len(param) == 1 and isinstance(param[0][0], cst.Param)  # no caller in the file: itself


def test_outputs_of_tells_the_elements_of_what_a_call_returns():
    ctx, model = analyses("""
        def step(model, x):
            logits, probs = model(x)
            loss(logits)
            out = model(x)
            return probs, out[1], out
        """)
    outputs = Outputs(ctx)
    first, second = _calls(ctx, "model(x)")
    ret = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Return)).value
    assert outputs.outputs_of(loss_input(ctx)) == [(first, 0)]
    assert [outputs.outputs_of(e.value) for e in ret.elements] == [[(first, 1)], [(second, 1)], [(second, None)]]


def test_model_object_tells_which_model_a_call_runs():
    ctx, model = analyses("""
        import torch.nn as nn
        net = nn.Linear(4, 1)
        other = nn.Linear(4, 1)
        class Lit(nn.Module):
            def __init__(self, backbone):
                self.backbone = backbone
            def training_step(self, x):
                return self(x), self.backbone(x)
            def validation_step(self, x):
                return self(x), self.backbone(x)
        def train(model, x):
            return model(x)
        def evaluate(model, x):
            return model(x)
        def fit(clf, x):
            return clf(x)
        a, b = net(x), other(x)
        c = net.forward(x)
        fit(net, x)
        """)
    outputs = Outputs(ctx)
    key = lambda text, i=0: outputs.model_object(_calls(ctx, text)[i])
    assert key("net(x)") == key("net.forward(x)") != key("other(x)")
    assert key("self(x)", 0) == key("self(x)", 1)
    assert key("self.backbone(x)", 0) == key("self.backbone(x)", 1) != key("self(x)")
    assert key("model(x)", 0) == key("model(x)", 1) == frozenset({("param", "model")})  # called from elsewhere
    assert key("clf(x)") == key("net(x)")  # the model its caller passes


def test_loss_target_and_the_kinds_losses_want():
    ctx, model = analyses("""
        import torch.nn as nn
        import torch.nn.functional as F
        bce = nn.BCELoss()
        mse = nn.MSELoss()
        loss(F.nll_loss(p, y), bce(q, t), mse(r, s), F.binary_cross_entropy(q, target=t), nn.HuberLoss()(r, s))
        """)
    outputs = Outputs(ctx)
    outer = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n.func) == "loss")
    calls = [a.value for a in outer.args]
    assert [outputs.loss_of(c)[0] for c in calls] == ["nll", "bce", "regression", "bce", "regression"]
    assert [code(ctx, loss_target(c).value) for c in calls] == ["y", "t", "s", "t", "s"]


def test_losses_given_to_the_same_value_or_the_same_model():
    ctx, model = analyses("""
        import torch.nn as nn
        import torchvision
        clf = torchvision.models.resnet18(num_classes=1)
        reg = torchvision.models.resnet18(num_classes=1)
        bce = nn.BCEWithLogitsLoss()
        mse = nn.MSELoss()
        for x, y in loader:
            out = clf(x)
            loss = bce(out.squeeze(1), y) + mse(reg(x), y)
        check(out, clf(x), reg(x), clf)
        """)
    outputs = Outputs(ctx)
    args = [a.value for a in _calls(ctx, "check(out, clf(x), reg(x), clf)")[0].args]
    assert [outputs.losses_given(a) for a in args] == [
        {"bce_logits": "bce"}, {"bce_logits": "bce"}, {"regression": "mse"}, {}]


@pytest.mark.parametrize(("qualified", "expected"), [
    ("torchvision.models.resnet18", ("resnet18", "fc", None)),
    ("torchvision.models.resnet.ResNet", ("ResNet", "fc", None)),
    ("torchvision.models.vgg16_bn", ("vgg16_bn", "classifier", "[6]")),
    ("torchvision.models.densenet121", ("densenet121", "classifier", None)),
    ("torchvision.models.mobilenet_v3_small", ("mobilenet_v3_small", "classifier", "[3]")),
    ("torchvision.models.vit_b_16", ("vit_b_16", "heads", ".head")),
    ("torchvision.models.inception_v3", None),  # a tuple in training mode
    ("torchvision.models.squeezenet1_0", None),  # ends in ReLU and pooling
    ("torchvision.models.segmentation.fcn_resnet50", None),
    ("torchvision.models.detection.fasterrcnn_resnet50_fpn", None),
    ("timm.create_model", None),
])
def test_library_classifier(qualified, expected):
    assert library_classifier(qualified) == expected


_RESNET = Source("act", "logits", origin="model resnet18")
_HEAD = Source("act", "logits", origin="head resnet18 fc")


@pytest.mark.parametrize(("src", "expected"), [
    # a torchvision classifier: its own head, logits
    ("from torchvision import models\nm = models.resnet18(pretrained=True).to(d)\nloss(m(x))\n", [_RESNET]),
    # its head replaced: what the new head gives, wherever the model is read after it
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.resnet18()\nm.fc = nn.Linear(512, 2)\n"
     "m = m.cuda()\ndef train(net):\n    loss(net(x))\ntrain(m)\n", [_HEAD]),
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.resnet18()\n"
     "m.fc = nn.Sequential(nn.Linear(512, 2), nn.LogSoftmax(1))\nloss(m(x))\n",
     [Source("act", "log_softmax", origin="head resnet18 fc")]),
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.vgg16()\nm.classifier[6] = nn.Linear(9, 2)\n"
     "loss(m(x))\n", [Source("act", "logits", origin="head vgg16 classifier")]),
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.vgg16()\n"
     "m.classifier[-1] = nn.Sequential(nn.Linear(9, 2), nn.Sigmoid())\nloss(m(x))\n",
     [Source("act", "sigmoid", origin="head vgg16 classifier")]),
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.vgg16()\nm.classifier[0] = nn.Linear(9, 9)\n"
     "loss(m(x))\n", [Source("act", "logits", origin="model vgg16")]),  # not its last layer
    # a head that gives features, or whose kind is unknown: nothing known
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.resnet18()\nm.fc = nn.Identity()\n"
     "loss(m(x))\n", []),
    ("from torchvision import models\nm = models.resnet18()\nm.fc = make_head()\nloss(m(x))\n", []),
    # layers added to the head in place: what it ends in is not read
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.vgg16()\nm.classifier._modules['6'] = nn.Linear(9, 2)\n"
     "m.classifier._modules['7'] = nn.LogSoftmax(dim=1)\nloss(m(x))\n", []),
    ("import torch.nn as nn\nfrom torchvision import models\nm = models.vgg16()\nm.classifier.add_module('7', nn.Softmax(1))\n"
     "loss(m(x))\n", []),
    # a layer an object holds, assigned in the file
    ("import torch.nn as nn\nm = build()\nm.fc = nn.Linear(3, 2)\nloss(m.fc(h))\n",
     [Source("act", "logits", origin="layer Linear")]),
    ("m = build()\nloss(m.fc(h))\n", []),
])
def test_sources_of_a_library_classifier_and_its_head(src, expected):
    ctx, model = analyses(src, "pkg/m.py")
    assert Outputs(ctx).sources(loss_input(ctx)) == expected


_DEC = Source("cls", "pkg.m.Dec", 0)
_FILL = """
import torch
import torch.nn as nn
class Dec(nn.Module):
    def forward(self, x):
        return self.out(x), x
class S2S(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = Dec()
    def forward(self, x):
        outputs = torch.zeros(5, 3, 4).to(x.device)
        for t in range(5):
            out, h = self.dec(x)
            {store}
        return outputs
"""


@pytest.mark.parametrize(("store", "expected"), [
    ("outputs[t] = out", _DEC),
    ("outputs[:, t, :] = out", _DEC),
    ("outputs[t] = out\n            outputs[0] = x", None),  # stores that disagree
    ("outputs[t] += out", None),  # updated in place
    ("pass", None),  # nothing stored: zeros
])
def test_ending_of_a_buffer_a_loop_fills(store, expected):
    ctx, model = analyses(_FILL.replace("{store}", store), "pkg/m.py")
    forward = model.class_named("S2S").methods["forward"]
    assert Outputs(ctx).ending(forward) == expected


def test_element_stores():
    ctx, model = analyses("import torch\nbuf = torch.zeros(3)\nbuf[0] = a\nbuf[i] = b\nbuf = torch.ones(2)\nbuf[1] = c\n")
    first, second = model.scopes[ctx.module].bindings["buf"]
    code = lambda stores: [ctx.module.code_for_node(v) for _, v in stores]
    assert code(element_stores(model, first)) == ["a", "b"]
    assert code(element_stores(model, second)) == ["c"]


def test_element_zero_of_a_packed_sequence_is_what_was_packed():
    ctx, model = analyses("import torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"
                          "fc = nn.Linear(3, 4)\nscores, _ = pack_padded_sequence(fc(h), n, batch_first=True)\n"
                          "loss(scores)\n")
    assert Outputs(ctx).sources(loss_input(ctx)) == [Source("act", "logits", origin="layer Linear")]


def test_a_bias_parameter_added_to_logits_keeps_them_logits():
    ctx, model = analyses("""
        import torch
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.decoder = nn.Linear(4, 9)
                self.bias = nn.Parameter(torch.zeros(9))
                self.shift = torch.zeros(9)
            def forward(self, h):
                return self.decoder(h) + self.bias, self.decoder(h) + self.shift
        """)
    forward = model.class_named("Head").methods["forward"]
    assert Outputs(ctx).ending(forward) == (Source("act", "logits", origin="layer Linear"), None)


def test_a_return_under_a_flag_left_at_its_default_is_not_the_ordinary_ending():
    ctx, model = analyses("""
        import torch.nn as nn
        class Disc(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 1)
                self.fc10 = nn.Linear(4, 10)
            def forward(self, x, extract_features=0, mode=None):
                if extract_features == 4:
                    return x.view(-1, 4)
                return self.fc1(x), self.fc10(x)
            def other(self, x, mode):
                if mode == "features":
                    return x
                return self.fc1(x), self.fc10(x)
        """)
    cls = model.class_named("Disc")
    logits = Source("act", "logits", origin="layer Linear")
    assert Outputs(ctx).ending(cls.methods["forward"]) == (logits, logits)
    # a parameter without a default decides nothing: the paths disagree
    assert Outputs(ctx).ending(cls.methods["other"]) is None


def test_for_caller_binds_a_functions_parameters_as_one_caller_does():
    ctx, model = analyses("""
        import torch.nn as nn
        def train(net, criterion):
            loss = criterion(net(x), y)
        head = nn.Linear(3, 2)
        probs = nn.Sequential(nn.Linear(3, 2), nn.LogSoftmax(1))
        train(head, nn.CrossEntropyLoss())
        train(probs, nn.NLLLoss())
        """)
    outputs = Outputs(ctx)
    call = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n.func) == "criterion")
    assert outputs.loss_of(call) is None  # two losses: which one is unknown
    pairs = []
    for function, site in outputs.callers_binding(call):
        within = outputs.for_caller(function, site)
        pairs.append((within.loss_of(call)[0], [s.name for s in within.sources(call.args[0].value)]))
    assert pairs == [("cross_entropy", ["logits"]), ("nll", ["log_softmax"])]
    assert [s.name for s in outputs.sources(call.args[0].value)] == ["logits", "log_softmax"]  # the caller's own, apart
