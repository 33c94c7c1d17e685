"""Shared-layer additions made while moving TL002 onto torchlint.semantic."""

from __future__ import annotations

import dataclasses

import libcst as cst

from torchlint import libraries
from torchlint.context import Dispatcher, FileContext
from torchlint.engine import analyze_source
from torchlint.imports import ImportTable
from torchlint.semantic.index import build_index
from torchlint.semantic.training import DATA
from torchlint.tree import TRIVIA, children, iter_nodes


def analyses(src: str, path: str = "m.py"):
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def calls(ctx, callee: str):
    from torchlint.statements import dotted_name

    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and dotted_name(n.func) == callee]


def test_only_foreign():
    assert libraries.only_foreign(["tensorflow.keras", "numpy"])
    assert not libraries.only_foreign(["tensorflow", "torch.nn"])  # a torch library too
    assert not libraries.only_foreign(["numpy", "os.path"])  # no framework at all


def test_grad_disabled_before_a_bare_set_grad_enabled_false_in_the_same_function():
    ctx, sem = analyses(
        "import torch\n"
        "def f(m, x):\n    m(x)\n    torch.set_grad_enabled(False)\n    m(x)\n"
        "def g(m, x):\n    m(x)\n"
        "def h(m, x):\n    with torch.set_grad_enabled(False):\n        pass\n    m(x)\n"
        "def k(m, x):\n    torch.set_grad_enabled(0)\n    m(x)\n")
    before, after, other, with_item, zero = calls(ctx, "m")
    training = sem.training
    assert not training.grad_disabled_before(before)
    assert training.grad_disabled_before(after)
    assert not training.grad_disabled_before(other)  # another function
    assert not training.grad_disabled_before(with_item)  # a `with` item is a region, not a switch
    assert training.grad_disabled_before(zero)


def test_is_module_class_through_same_file_bases():
    ctx, sem = analyses(
        "import torch.nn as nn\nclass Base(nn.Module):\n    pass\nclass Net(Base):\n    pass\nclass Plain:\n    pass\n")
    by_name = {info.name: info for info in sem.model.classes.values()}
    assert sem.training.is_module_class(by_name["Net"]) and sem.training.is_module_class(by_name["Base"])
    assert not sem.training.is_module_class(by_name["Plain"])


def test_loop_kinds_are_computed_once_per_loop():
    ctx, sem = analyses("def f(loader):\n    for x in loader:\n        print(x)\n")
    (loop,) = sem.model.loops.values()
    first = sem.training.loop_kinds(loop)
    assert DATA in first and sem.training.loop_kinds(loop) is first


def test_index_reuses_given_class_facts_and_finds_seeding_through_an_alias():
    ctx, sem = analyses(
        "from torch import manual_seed as ms\nimport torch\n"
        "def a():\n    ms(0)\n"
        "def b():\n    torch.manual_seed(0)\n"
        "def c():\n    a()\n"
        "def d():\n    print(0)\n")
    given = [{"name": "X", "bases": [], "methods": [], "self_attrs": []}]
    index = build_index(sem, given)
    assert index.classes is given
    assert {name: f["seeds"] for name, f in index.functions.items()} == {"a": True, "b": True, "c": True, "d": False}


def test_engine_index_keeps_the_class_facts_and_adds_functions():
    src = "import torch\nclass M(torch.nn.Module):\n    pass\ndef train(m, loader, opt):\n    for x in loader:\n        m(x).sum().backward()\n        opt.step()\n"
    from torchlint.testing import make_settings

    settings = make_settings(["TL002"], None)
    result = analyze_source("m.py", (src + "losses = []\nfor x in loader:\n    losses.append(model(x))\n").encode(), settings.enabled)
    assert [c["name"] for c in result.record.index["classes"]] == ["M"]
    assert result.record.index["functions"]["train"]["trains"] is True


def test_children_skips_only_fields_that_cannot_hold_nodes():
    src = "@d\nasync def f(a: int = 1, *, b) -> x:\n    y = [i async for i in z if i]\n    del y[0], q\n    return (a)\n"
    for node in iter_nodes(cst.parse_module(src)):
        full = []
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, cst.CSTNode) and not isinstance(item, TRIVIA):
                    full.append(item)
        assert children(node) == full


def test_a_value_backward_ed_with_retain_graph_is_retained_not_freed():
    from torchlint.semantic.autograd import RETAINED, GraphValues, retains_graph
    from torchlint.semantic.stores import codes_with_stores, store_of_call

    src = (
        "import torch\n"
        "def f(model, loader, opt, flag):\n"
        "    kept = []\n"
        "    for x in loader:\n"
        "        a = model(x).sum()\n"
        "        a.backward(retain_graph=True)\n"
        "        b = model(x).sum()\n"
        "        b.backward()\n"
        "        c = model(x).sum()\n"
        "        c.backward(retain_graph=flag)\n"
        "        kept.append(a)\n"
        "        kept.append(b)\n"
        "        kept.append(c)\n"
    )
    ctx, _ = analyses(src)
    appends = calls(ctx, "kept.append")
    stores = [store_of_call(call) for call in appends]
    (code,) = codes_with_stores(ctx, stores, [])
    graphs = GraphValues(ctx)
    assert [graphs.carrier(code, s.value, s.node) for s in stores] == [RETAINED, "backward", "backward"]
    backwards = {dotted_name_of(call): retains_graph(call) for call in iter_nodes(ctx.module)
                 if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"}
    assert backwards == {"a": True, "b": False, "c": False}
    assert retains_graph(cst.parse_expression("torch.autograd.grad(l, p, create_graph=True)"))


def dotted_name_of(call: cst.Call) -> str:
    from torchlint.statements import dotted_name

    return dotted_name(call.func.value)
