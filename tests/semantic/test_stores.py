"""semantic.stores: where a value is kept beyond its iteration (appends, running sums,
attributes, containers and what bounds them)."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.stores import (RUN, WINDOW, KeptStores, Store, codes_with_stores, root_chain, store_of_assign,
                                       store_of_augassign, store_of_call)
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx


def stores_and_dels(ctx) -> tuple[list[Store], list[cst.Del]]:
    stores, dels = [], []
    of = {cst.Assign: store_of_assign, cst.AugAssign: store_of_augassign, cst.Call: store_of_call}
    for node in iter_nodes(ctx.module):
        if type(node) in of:
            store = of[type(node)](node)
            if store is not None:
                stores.append(store)
        elif isinstance(node, cst.Del):
            dels.append(node)
    return stores, dels


def codes(ctx):
    return codes_with_stores(ctx, *stores_and_dels(ctx))


def only_store(ctx):
    """The one code with a store, its store, and the file's ``KeptStores``."""
    (code,) = codes(ctx)
    (store,) = code.stores
    return code, store, KeptStores(ctx)


def text(ctx, node) -> str:
    return ctx.module.code_for_node(node).strip()


def statement(src: str) -> cst.BaseSmallStatement:
    return cst.parse_module(src).body[0].body[0]


# -- recognising stores --------------------------------------------------------------------
@pytest.mark.parametrize("src, verb, container, value", [
    ("losses.append(loss)", "append", "losses", "loss"),
    ("self.hist['a'].extend(outs)", "extend", "self.hist['a']", "outs"),
    ("q.appendleft(x)", "appendleft", "q", "x"),
    ("xs.insert(0, y)", "insert", "xs", "y"),
])
def test_store_of_call(src, verb, container, value):
    call = statement(src).value
    store = store_of_call(call)
    module = cst.Module([])
    assert (store.kind, store.verb, module.code_for_node(store.container), module.code_for_node(store.value)) == \
        ("call", verb, container, value)
    assert store.node is call and store.key == container


@pytest.mark.parametrize("src", ["xs.insert(y)", "xs.append(*ys)", "xs.append(x=1)", "f().append(x)", "xs.add(x)",
                                 "append(x)"])
def test_not_a_store_call(src):
    assert store_of_call(statement(src).value) is None


def test_store_of_assign_is_a_running_sum_on_either_side():
    module = cst.Module([])
    left, right = store_of_assign(statement("total = total + loss")), store_of_assign(statement("t = loss + t"))
    assert (left.kind, left.key, module.code_for_node(left.value)) == ("add", "total", "loss")
    assert (right.key, module.code_for_node(right.value)) == ("t", "loss")
    for src in ("total = a + loss", "a = b = a + x", "t = t - x", "t = t * x", "a, b = a + 1"):
        assert store_of_assign(statement(src)) is None


def test_store_of_augassign_keys_by_the_root_when_the_target_has_no_simple_key():
    module = cst.Module([])
    plain, indexed = store_of_augassign(statement("total += loss")), store_of_augassign(statement("acc[f(i)] += x"))
    assert (plain.kind, plain.key, module.code_for_node(plain.value)) == ("aug", "total", "loss")
    assert indexed.key == "acc" and module.code_for_node(indexed.container) == "acc[f(i)]"
    assert store_of_augassign(statement("total -= loss")) is None


def test_root_chain():
    expr = statement('self.hist["a"]').value
    assert root_chain(expr) == ['self.hist["a"]', "self.hist", "self"]
    assert root_chain(statement("f(x).y").value) == []
    assert root_chain(statement("xs").value) == ["xs"]


# -- the codes that store ----------------------------------------------------------------
def test_codes_with_stores_gather_stores_backwards_and_what_bounds_containers_by_function():
    ctx = analyses(
        "import torch\n"
        "def train(model, loader, opt):\n"
        "    losses = []\n"
        "    for x in loader:\n"
        "        loss = model(x)\n"
        "        loss.backward()\n"
        "        losses.append(loss)\n"
        "        [seen.append(y) for y in x]\n"
        "        f = lambda: kept.append(x)\n"
        "        losses.clear()\n"
        "        del self.cache['k'], other\n"
        "def no_store(loss):\n"
        "    loss.backward()\n")
    (code,) = codes(ctx)
    assert code.scope.node.name.value == "train"
    assert [text(ctx, s.node) for s in code.stores] == ["losses.append(loss)", "seen.append(y)"]  # not the lambda's
    backwards = [(text(ctx, target), text(ctx, site.node)) for target, site in code.backwards]
    assert backwards == [("loss", "loss.backward()")]
    assert [key for key, _ in code.bounding] == ["losses", "self.cache['k']", "self.cache", "self", "other"]
    assert code.steps is None


def test_steps_and_trains_itself():
    ctx = analyses(
        "import torch\n"
        "def train(model, loader):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    losses = []\n"
        "    for x in loader:\n"
        "        losses.append(model(x))\n"
        "        opt.step()\n"
        "def evaluate(model, loader):\n"
        "    outs = []\n"
        "    for x in loader:\n"
        "        outs.append(model(x))\n")
    kept = KeptStores(ctx)
    by_name = {c.scope.node.name.value: c for c in codes(ctx)}
    assert [text(ctx, s.node) for s in kept.steps(by_name["train"])] == ["opt.step()"]
    assert kept.trains_itself(by_name["train"]) and not kept.trains_itself(by_name["evaluate"])


# -- the store's iteration ---------------------------------------------------------------
def iteration_of(src: str) -> str | None:
    ctx = analyses(src)
    code, store, kept = only_store(ctx)
    loop = kept.iteration(code, store.node)
    return None if loop is None else text(ctx, loop.iter)


def test_iteration_is_a_data_loop():
    assert iteration_of("def f(model, loader, losses):\n"
                        "    for x in loader:\n"
                        "        for i in range(3):\n"
                        "            losses.append(model(x))\n") == "loader"


def test_iteration_is_the_loop_that_steps_not_the_micro_batches_of_one_step():
    assert iteration_of("def f(model, opt, xs):\n"
                        "    losses = []\n"
                        "    for epoch in range(10):\n"
                        "        for _ in range(4):\n"
                        "            loss = model(xs)\n"
                        "            loss.backward()\n"
                        "            losses.append(loss)\n"
                        "        opt.step()\n") == "range(10)"


def test_iteration_is_a_loop_that_backwards_when_no_step_comes_after_it():
    assert iteration_of("def f(model, xs):\n"
                        "    losses = []\n"
                        "    for _ in range(4):\n"
                        "        loss = model(xs)\n"
                        "        loss.backward()\n"
                        "        losses.append(loss)\n") == "range(4)"


def test_no_iteration_outside_loops_that_step():
    assert iteration_of("def f(model, xs, losses):\n"
                        "    for i in range(3):\n"
                        "        losses.append(model(xs))\n") is None


# -- how long what is stored lives -----------------------------------------------------
def lifetime_of(src: str) -> str | None:
    ctx = analyses(src)
    code, store, kept = only_store(ctx)
    return kept.lifetime(code, store, kept.iteration(code, store.node))


LOOP = ("def f(model, loader):\n"
        "    {before}\n"
        "    for i, x in enumerate(loader):\n"
        "        {inside}\n"
        "        losses.append(model(x))\n")


@pytest.mark.parametrize("before, inside, expected", [
    ("losses = []", "pass", RUN),
    ("losses = []", "losses = []", None),  # rebound on every iteration
    ("losses = []", "losses.clear()", None),
    ("losses = []", "del losses[:]", None),
    ("losses = []", "if i % 10 == 0:\n            losses.clear()", WINDOW),  # reset every 10 steps
    ("losses = []", "if i % 10 == 0:\n            losses = []", WINDOW),
    ("losses = collections.deque(maxlen=5)", "pass", None),
])
def test_lifetime_in_a_loop(before, inside, expected):
    assert lifetime_of(LOOP.format(before=before, inside=inside)) == expected


def test_lifetime_past_the_call_of_a_once_per_batch_function():
    method = ("class M:\n"
              "    def training_step(self, batch):\n"
              "        {before}\n"
              "        {container}.append(self(batch))\n")
    assert lifetime_of(method.format(before="pass", container="self.outs")) == RUN  # a self attribute
    assert lifetime_of(method.format(before="global outs", container="outs")) == RUN  # a global
    assert lifetime_of(method.format(before="outs = []", container="outs")) is None  # a local
    assert lifetime_of(method.format(before="pass", container="batch")) is None  # a parameter
    assert lifetime_of(method.format(before="self.outs = []", container="self.outs")) is None  # reset in the call
    assert lifetime_of(method.format(before="self.outs.clear()", container="self.outs")) is None


def test_bounded_keys_are_deques_with_a_maxlen():
    ctx = analyses("from collections import deque\n"
                   "a = deque(maxlen=3)\nb = deque()\nc = list()\n"
                   "class K:\n    def __init__(self):\n        self.d = collections.deque([], maxlen=10)\n")
    assert KeptStores(ctx).bounded() == {"a", "self.d"}


# -- what the store builds ---------------------------------------------------------------
def test_backwarded_returned_and_backward_skipped():
    ctx = analyses(
        "def chunked(model, chunks, train):\n"
        "    total = 0\n"
        "    for x in chunks:\n"
        "        total = total + model(x)\n"
        "    if train:\n"
        "        total.backward()\n"
        "    return total\n"
        "def plain(model, loader):\n"
        "    losses = []\n"
        "    for x in loader:\n"
        "        loss = model(x)\n"
        "        loss.backward()\n"
        "        losses.append(loss)\n")
    kept = KeptStores(ctx)
    by_name = {c.scope.node.name.value: c for c in codes(ctx)}
    chunked, plain = by_name["chunked"], by_name["plain"]
    (total,), (append,) = chunked.stores, plain.stores
    assert kept.backwarded(chunked, total) and kept.returned(chunked, total) and kept.backward_skipped(chunked, total)
    assert not kept.backwarded(plain, append) and not kept.returned(plain, append)
    assert not kept.backward_skipped(plain, append)


def test_kept_stores_share_the_callers_graph_values():
    from torchlint.semantic.autograd import GraphValues

    ctx = analyses("xs = []\nfor x in loader:\n    xs.append(x)\n")
    graphs = GraphValues(ctx)
    assert KeptStores(ctx, graphs).graphs is graphs
    assert isinstance(KeptStores(ctx).graphs, GraphValues)


# -- accumulators: methods that keep what they are given ------------------------------------

def test_accumulators_keep_the_parameter_they_add_or_append():
    from torchlint.semantic.stores import accumulators
    ctx = analyses(
        "class AverageMeter:\n"
        "    def update(self, val, n=1):\n"
        "        self.sum += val * n\n"
        "        self.count += n\n"
        "class History:\n"
        "    def record(self, value):\n"
        "        self.values.append(value)\n"
        "class Numbers:\n"
        "    def update(self, val):\n"
        "        self.sum += float(val)\n"
        "class Last:\n"
        "    def update(self, val):\n"
        "        self.val = val\n"
        "        self.val += 1\n"
        "class Sub(Base):\n"
        "    def update(self, val):\n"
        "        self.sum += val\n")
    found = {info.name: {m: [(k.param, k.index, k.attr) for k in ks] for m, ks in methods.items()}
             for info, methods in accumulators(ctx).items()}
    assert found == {"AverageMeter": {"update": [("n", 1, "self.sum"), ("val", 0, "self.sum"), ("n", 1, "self.count")]},
                     "History": {"record": [("value", 0, "self.values")]}}


def test_receiver_classes_of_a_star_import():
    from torchlint.semantic.stores import receiver_classes
    ctx = analyses("from utils import *\nm = AverageMeter()\nn = make()\nm, n\n")
    model = ctx.semantic.model
    line = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Expr) and isinstance(n.value, cst.Tuple))
    got = [receiver_classes(model, el.value, star=("utils",)) for el in line.value.elements]
    assert got == [([], ["utils.AverageMeter"]), ([], [])]


def test_receiver_classes_of_constructions_and_containers_of_them():
    from torchlint.semantic.stores import receiver_classes
    ctx = analyses(
        "from collections import defaultdict\n"
        "from utils import AverageMeter as Imported\n"
        "class Meter:\n"
        "    pass\n"
        "def f(param):\n"
        "    a = Meter()\n"
        "    b = {'loss': Meter(), 'acc': Meter()}\n"
        "    c = defaultdict(Meter)\n"
        "    d = Imported()\n"
        "    e = make()\n"
        "    f, g = Meter(), Imported()\n"
        "    a, b['loss'], c['x'], d, e, param, f, g\n")
    model = ctx.semantic.model
    line = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Expr) and isinstance(n.value, cst.Tuple))
    got = []
    for el in line.value.elements:
        local, imported = receiver_classes(model, el.value)
        got.append(([i.name for i in local], imported))
    assert got == [(["Meter"], []), (["Meter", "Meter"], []), (["Meter"], []), ([], ["utils.AverageMeter"]),
                   ([], []), ([], []), (["Meter"], []), ([], ["utils.AverageMeter"])]


@pytest.mark.parametrize(("src", "path", "expected"), [
    ("import torch\nx = torch.zeros(3).normal_()\n", "nb.ipynb", False),  # plain tensors, nothing requires grad
    ("import numpy as np\nx = np.zeros(3)\n", "nb.ipynb", False),
    ("import torch\nx = torch.zeros(3, requires_grad=True)\n", "nb.ipynb", True),
    ("import torch\nx = torch.zeros(3)\nx.requires_grad = True\n", "nb.ipynb", True),
    ("import torch\nx = torch.zeros(3, requires_grad=False)\n# requires_grad=True\n", "nb.ipynb", False),
    ("import torch.nn as nn\nm = nn.Linear(2, 2)\n", "nb.ipynb", True),
    ("import torch\nclass M(torch.nn.Module):\n    pass\n", "nb.ipynb", True),
    ("from mymodels import build\nm = build()\n", "nb.ipynb", True),  # a project module may hold a model
    ("import torch\ndef f(x):\n    return x * 2\n", "m.py", True),  # another file may pass a tensor that requires grad
    ("import torch\ndef f(x):\n    return x * 2\n", "nb.ipynb", False),
])
def test_records_graphs(src, path, expected):
    from torchlint.semantic.autograd import records_graphs
    assert records_graphs(analyses(src, path), None) is expected


@pytest.mark.parametrize(("body", "expected"), [
    ("    def __init__(self, n):\n        self.w = torch.zeros(n, 1).normal_()\n", False),
    ("    def __init__(self, n):\n        self.w = torch.zeros(n, 1, requires_grad=True)\n", True),
    ("    def __init__(self, n):\n        self.w = torch.zeros(n, 1)\n        self.w.requires_grad = True\n", True),
    ("    def __init__(self, n):\n        self.fc = torch.nn.Linear(n, 1)\n", True),
    ("    def params(self):\n        return self.net.parameters()\n", True),
])
def test_plain_class_records_graph(body, expected):
    from torchlint.semantic.autograd import plain_class_records_graph
    ctx = analyses(f"import torch\nclass C:\n{body}")
    info = next(iter(ctx.semantic.model.classes.values()))
    assert plain_class_records_graph(ctx, info) is expected
