"""``semantic.devices``: which tensor factories are called without ``device=``, whether a file
sets a default device, and what a created tensor meets (the device-carrying expression it is
combined with), as ``Devices`` answers it for TL010."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.devices import (Devices, factories_without_device, integer_index, is_store,
                                        moves_to_accelerator, sets_default_device)
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes


def context_of(src: str) -> FileContext:
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    return ctx


def written(site) -> str:
    return cst.Module([]).code_for_node(site.node)


FACTORIES = """
import torch
from torch import zeros

def f(x, n, kw, values):
    a = torch.zeros(3, 4)
    b = torch.zeros(3, device=x.device)
    c = torch.ones(2, **kw)
    d = torch.tensor(2.0)
    e = torch.zeros(())
    g = torch.tensor([1, 2])
    h = torch.arange(n)
    i = zeros(n, n)
    j = torch.tensor(values)
    k = torch.full((), 1.0)
    m = x.sum()
"""


def test_factories_without_device_keeps_the_shaped_deviceless_ones():
    model = context_of(FACTORIES).semantic.model
    found = [(written(site), factory) for site, factory in factories_without_device(model)]
    assert found == [("torch.zeros(3, 4)", "zeros"), ("torch.tensor([1, 2])", "tensor"),
                     ("torch.arange(n)", "arange"), ("zeros(n, n)", "zeros")]


@pytest.mark.parametrize("src, expected", [
    ("import torch\ntorch.set_default_device('cuda')\n", True),
    ("import torch\ntorch.set_default_tensor_type(torch.cuda.FloatTensor)\n", True),
    ("import torch\nx = torch.zeros(3)\n", False),
])
def test_sets_default_device(src, expected):
    assert sets_default_device(context_of(src)) is expected


MODULE = """
import torch
import torch.nn as nn
from typing import Tuple

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.ones(4))
        self.k = torch.ones(4)

    def added(self, x):
        return x + torch.zeros(3, 4)

    def through_a_name(self, x):
        mask = torch.ones(4, 4).triu(1).bool()
        return x.masked_fill(mask, 0)

    def concatenated(self, x):
        return torch.cat([x, torch.zeros(3, 4)], 1)

    def layer_output(self, x):
        h = self.fc(x)
        return h * torch.ones(3, 4)

    def parameter(self, x):
        return self.w * torch.ones(3, 4)

    def buffer_not_parameter(self, x):
        return self.k * torch.ones(3, 4)

    def moved(self, x):
        return x + torch.zeros(3, 4).to(x.device)

    def dtype_only(self, x):
        return x + torch.zeros(3, 4).to(torch.float16)

    def to_host(self, x):
        return torch.zeros(3, 4).tolist()

    def shape(self, x):
        return x.shape[0] + torch.zeros(3)

    def size_named(self, x, size):
        return torch.zeros(3) * size

    def annotated(self, x, dims: Tuple[int, int]):
        return torch.zeros(3) * dims

    def defaulted(self, x, scale=2.0):
        return torch.zeros(3) * scale

    def used_as_a_size(self, x, w):
        return torch.zeros(w) + w

    def augmented(self, x):
        out = self.fc(x)
        out += torch.zeros(3, 4)
        return out

    def helper(self, t):
        return t + torch.zeros(3)

    def calls_helper(self, words):
        return self.helper(torch.LongTensor(words)), self.helper(0.5)
"""


@pytest.mark.parametrize("method, expected", [
    ("added", "x"),
    ("through_a_name", "x"),
    ("concatenated", "x"),
    ("layer_output", "h"),
    ("parameter", "self.w"),
    ("buffer_not_parameter", None),
    ("moved", None),
    ("dtype_only", "x"),
    ("to_host", None),
    ("shape", None),
    ("size_named", None),
    ("annotated", None),
    ("defaulted", None),
    ("used_as_a_size", None),
    ("augmented", "out"),
    ("helper", None),  # every call passes a host-built tensor or a number
])
def test_what_a_created_tensor_meets(method, expected):
    ctx = context_of(MODULE)
    model = ctx.semantic.model
    info = next(c for c in model.classes.values() if c.name == "Net")
    function = info.methods[method]
    calls = [site.node for site, _ in factories_without_device(model) if site.scope.node is function]
    assert len(calls) == 1
    assert Devices(ctx, model, info).meets(calls[0]) == expected


def test_carrier_names_the_expression_on_the_models_device():
    ctx = context_of(MODULE)
    model = ctx.semantic.model
    info = next(c for c in model.classes.values() if c.name == "Net")
    devices = Devices(ctx, model, info)
    ret = next(n for n in iter_nodes(info.methods["layer_output"]) if isinstance(n, cst.Return))
    product = ret.value
    assert devices.carrier(product.left, product) == "h"
    assert devices.carrier(product.right, product) is None  # a factory makes no device-carrying tensor
    shape_ret = next(n for n in iter_nodes(info.methods["shape"]) if isinstance(n, cst.Return))
    assert dotted_name(shape_ret.value.left.value) == "x.shape"
    assert devices.carrier(shape_ret.value.left, shape_ret.value) is None


def test_is_store():
    ctx = context_of("a = 1\na += 2\nb: int = a\nprint(a)\n")
    names = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Name) and n.value in ("a", "b")]
    assert [(n.value, is_store(ctx, n)) for n in names] == [("a", True), ("a", True), ("b", True), ("a", False),
                                                           ("a", False)]


def test_integer_index_names_the_indices_whose_assignment_selects_and_copies():
    ctx = context_of("""
        import torch
        def f(t, v, mask, rows, k):
            t[0] = v
            t[-1] = v
            for i in range(3):
                t[i] = v
            for j in torch.arange(4):
                t[j] = v
            for n, row in enumerate(rows):
                t[n] = row
                t[row] = v
            for m in mask:
                t[m] = v
            t[mask] = v
            t[k] = v
            for p in range(3):
                p = mask
                t[p] = v
        """)
    got = [(cst.Module([]).code_for_node(n.slice[0].slice.value), integer_index(ctx.semantic.model, n.slice[0].slice.value))
           for n in iter_nodes(ctx.module) if isinstance(n, cst.Subscript) and dotted_name(n.value) == "t"]
    assert got == [("0", True), ("-1", True), ("i", True), ("j", True), ("n", True), ("row", False), ("m", False),
                   ("mask", False), ("k", False), ("p", False)]


REACH = """
import torch
import torch.nn as nn
from torch.autograd import Variable

class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)
        self.emb = nn.Embedding(10, 4)
        self.w = nn.Parameter(torch.ones(8, 8))

    def state_tuple(self, x):
        h0 = Variable(torch.zeros(1, 3, 8))
        return self.lstm(x, (h0, h0))

    def positions(self, tokens):
        return self.emb(torch.arange(5).unsqueeze(0))

    def function_form(self, x):
        mask = torch.triu(torch.ones(4, 4), diagonal=1).bool()
        return x.masked_fill(mask, 0)

    def _make(self, x, h):
        if h is None:
            h = torch.zeros(3, 8)
        return h

    def through_a_helper(self, x, h=None):
        h = self._make(x, h)
        return torch.matmul(h, self.w)

    def init_hidden(self, n):
        return torch.zeros(1, n, 8)

    def moved_on_a_branch(self, x, cuda):
        h = torch.zeros(1, 3, 8)
        if cuda:
            return self.lstm(x, h.cuda())
        return self.lstm(x, h)
"""


@pytest.mark.parametrize("method, expected", [
    ("state_tuple", ("x", "self.lstm", False)),
    ("positions", ("self.emb", "self.emb", False)),
    ("function_form", ("x", None, False)),
    ("_make", ("self.w", None, False)),
    ("init_hidden", ("self.lstm", "self.lstm", True)),
    ("moved_on_a_branch", None),
])
def test_where_a_created_tensor_reaches_the_model(method, expected):
    ctx = context_of(REACH)
    model = ctx.semantic.model
    info = next(c for c in model.classes.values() if c.name == "Seq")
    function = info.methods[method]
    calls = [site.node for site, _ in factories_without_device(model) if site.scope.node is function]
    assert len(calls) == 1
    met = Devices(ctx, model, info).reach(calls[0])
    assert (tuple(met)[:3] if met is not None else None) == expected


def test_recurrent_layer_and_input_carrier():
    ctx = context_of(REACH)
    model = ctx.semantic.model
    info = next(c for c in model.classes.values() if c.name == "Seq")
    devices = Devices(ctx, model, info)
    assert devices.recurrent_layer() == "self.lstm"
    assert devices.input_carrier(info.methods["state_tuple"]) == "x"
    assert devices.input_carrier(info.methods["init_hidden"]) is None  # n: a size


@pytest.mark.parametrize("src, expected", [
    ("import torch\nmodel = Net()\nprint(model(torch.randn(2, 3)))\n", False),
    ("import torch\nmodel = Net()  # .cuda()\n", False),  # a comment moves nothing
    ("import torch\nmodel = Net().cuda()\n", True),
    ("import torch\nmodel = Net().to(torch.float16)\n", False),
    ("import torch\ndevice = 'cuda'\nmodel = Net().to(device)\n", True),
    ("import torch\nx = torch.zeros(3, device='cuda')\n", True),
    ("import pytorch_lightning as pl\n", True),
])
def test_moves_to_accelerator(src, expected):
    assert moves_to_accelerator(context_of(src).semantic.model) is expected


TRAINING = """
import torch
import torch.nn as nn
device = "cuda"
a = nn.LSTM(4, 8).to(device)
b = nn.LSTM(4, 8)
b = b.cuda()
c = nn.LSTM(4, 8)
c.to(device)
d = nn.LSTM(4, 8)
e = nn.LSTM(4, 8).to(torch.float16)
a(x); b(x); c(x); d(x); e(x)
"""


def test_moved_model_names_the_device_a_built_module_is_moved_to():
    ctx = context_of(TRAINING)
    model = ctx.semantic.model
    devices = Devices(ctx, model, None)
    calls = {s.node.func.value: s.node for s in model.calls if isinstance(s.node.func, cst.Name)
             and s.node.func.value in "abcde"}
    assert {k: devices.moved_model(c.func) for k, c in sorted(calls.items())} == {
        "a": ("a", "device"), "b": ("b", '"cuda"'), "c": ("c", "device"), "d": None, "e": None}


FED = """
import torch
import torch.nn as nn
def train(model, net, helper, device, loader):
    for x, y in loader:
        xs = x.to(device)
        model.discriminator_forward(xs)
        net(x)
        helper(x.cuda())
        model(y); net(y); helper(y)
class Agent:
    def __init__(self, device):
        self.q = nn.Linear(4, 2).to(device)
        self.p = nn.Linear(4, 2)
    def act(self, s):
        return self.q(s), self.p(s)
"""


def test_moved_model_through_moved_inputs_and_moved_self_attributes():
    ctx = context_of(FED)
    model = ctx.semantic.model
    devices = Devices(ctx, model, None)
    plain = {s.node.func.value: s.node for s in model.calls if isinstance(s.node.func, cst.Name)
             and s.node.args and dotted_name(s.node.args[0].value) == "y"}
    # model: fed x.to(device) through a forward of it; net: only CPU inputs; helper: no model name
    assert {k: devices.moved_model(c.func) for k, c in sorted(plain.items())} == {
        "helper": None, "model": ("model", "device"), "net": None}
    agent = next(info for info in model.classes.values() if info.name == "Agent")
    calls = {dotted_name(s.node.func): s.node for s in model.calls if (dotted_name(s.node.func) or "").startswith("self.")}
    devices = Devices(ctx, model, agent)
    assert devices.moved_model(calls["self.q"].func) == ("self.q", "device")
    assert devices.moved_model(calls["self.p"].func) is None


def test_caller_device_follows_calls_through_helpers_to_a_tensor_on_a_device():
    ctx = context_of("""
        import torch
        def one_hot(x, n):
            return x
        def to_onehot(X, n):
            return [one_hot(X[:, i], n) for i in range(X.shape[1])]
        def predict(device, out):
            return to_onehot(torch.tensor([[out]], device=device), 4)
        def moved(y, device):
            return one_hot(y.cuda(), 3)
        def cpu_only(labels):
            return to_onehot(torch.tensor(labels), 2)
        """)
    model = ctx.semantic.model
    functions = {n.name.value: n for n in ctx.module.body if isinstance(n, cst.FunctionDef)}
    devices = Devices(ctx, model, None)
    device, how = devices.caller_device(functions["one_hot"], "x")
    assert device == "device" and how.startswith("to_onehot(")
    assert devices.caller_device(functions["to_onehot"], "X")[0] == "device"
    assert devices.caller_device(functions["cpu_only"], "labels") is None


HOST_ARGUMENTS = """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Aligner(nn.Module):
    def __init__(self):
        super().__init__()
        self.ctc = nn.CTCLoss(zero_infinity=True)
        self.fc = nn.Linear(4, 4)

    def forward(self, lp, key_lens, query_lens):
        local = nn.CTCLoss()
        a = self.ctc(lp, torch.arange(1, 5), input_lengths=query_lens, target_lengths=key_lens)
        b = local(lp, torch.arange(1, 5), query_lens, key_lens)
        c = F.ctc_loss(lp, torch.arange(1, 5), query_lens, key_lens)
        d = nn.CTCLoss()(lp, torch.arange(1, 5), query_lens, key_lens)
        e = self.ctc(log_probs=lp, targets=torch.arange(1, 5), input_lengths=query_lens, target_lengths=key_lens)
        f = self.ctc(torch.zeros(5, 2, 4), torch.arange(1, 5), query_lens, key_lens)
        g = self.fc(torch.arange(1, 5))
        return a + b + c + d + e + f + g
"""


def test_host_argument_names_the_ctc_losss_targets_and_lengths():
    ctx = context_of(HOST_ARGUMENTS)
    model = ctx.semantic.model
    info = next(c for c in model.classes.values() if c.name == "Aligner")
    devices = Devices(ctx, model, info)
    got = []
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Call) and node.args and not isinstance(ctx.parent(node), cst.Arg):
            written_call = cst.Module([]).code_for_node(node.func)
            if written_call in ("self.ctc", "local", "F.ctc_loss", "nn.CTCLoss()", "self.fc"):
                got.append((written_call, [devices.host_argument(node, a) for a in node.args]))
    assert got == [
        ("self.ctc", [False, True, True, True]),
        ("local", [False, True, True, True]),
        ("F.ctc_loss", [False, True, True, True]),
        ("nn.CTCLoss()", [False, True, True, True]),
        ("self.ctc", [False, True, True, True]),
        ("self.ctc", [False, True, True, True]),
        ("self.fc", [False]),
    ]
    # the log-probs made without device= still meet the model's tensors (the lengths the class is given)
    made = [site.node for site, _ in factories_without_device(model) if written(site) == "torch.zeros(5, 2, 4)"]
    assert Devices(ctx, model, info).meets(made[0]) is not None
    # the targets meet none: CTC takes them on the CPU
    targets = [site.node for site, _ in factories_without_device(model) if written(site) == "torch.arange(1, 5)"]
    assert len(targets) == 7
    assert [Devices(ctx, model, info).meets(t) is None for t in targets] == [True] * 6 + [False]
