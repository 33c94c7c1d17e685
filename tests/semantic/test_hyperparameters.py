"""``semantic.hyperparameters``: which calls take a run's hyperparameters and which of their
arguments are them."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import hyperparameters as hp
from torchlint.tree import iter_nodes


def calls(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    found = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, (cst.Name, cst.Attribute))
             and ctx.module.code_for_node(n).count("(") >= 1]
    return ctx, [n for n in found if not any(n is not m and m.func is n for m in found)]


def shown(ctx, watched):
    kind, args = watched
    return kind, None if args is None else [(name, ctx.module.code_for_node(v)) for name, v in args]


def test_kinds_and_arguments():
    ctx, found = calls("""
        import torch
        from torch.utils.data import DataLoader
        from transformers import TrainingArguments
        torch.optim.SGD(params, 0.1, momentum=0.9, nesterov=True)
        torch.optim.lr_scheduler.StepLR(opt, 30, gamma=0.5)
        DataLoader(ds, 64, shuffle=True)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        accelerator.clip_grad_norm_(params, 2.0)
        model.clip_grad_norm_(3.0)
        TrainingArguments("out", learning_rate=2e-5, logging_steps=10)
        parser.add_argument("--lr", default=0.1)
        MyAdam(params, lr=1e-3)
        build(x, warmup_epochs=5)
        """)
    by_call = {ctx.module.code_for_node(c.func): shown(ctx, hp.watched(ctx, c)) for c in found}
    assert by_call["torch.optim.SGD"] == ("optimizer", [("lr", "0.1"), ("momentum", "0.9")])
    assert by_call["torch.optim.lr_scheduler.StepLR"] == ("scheduler", [("step_size", "30"), ("gamma", "0.5")])
    assert by_call["DataLoader"] == ("loader", [("batch_size", "64")])
    assert by_call["torch.nn.utils.clip_grad_norm_"] == ("other", [("max_norm", "1.0")])
    assert by_call["accelerator.clip_grad_norm_"] == ("other", [("max_norm", "2.0")])
    assert by_call["model.clip_grad_norm_"] == ("other", [("max_norm", "3.0")])
    assert by_call["TrainingArguments"] == ("other", [("learning_rate", "2e-5")])
    assert by_call["parser.add_argument"] == ("other", [])
    assert by_call["MyAdam"] == (hp.MAYBE_OPTIMIZER, None)
    assert by_call["build"] == ("other", None)
    build = next(c for c in found if ctx.module.code_for_node(c.func) == "build")
    assert shown(ctx, hp.watched(ctx, build, extra=frozenset({"warmup_epochs"}))) == \
        ("other", [("warmup_epochs", "5")])
    sgd = next(c for c in found if ctx.module.code_for_node(c.func) == "torch.optim.SGD")
    assert shown(ctx, hp.watched(ctx, sgd, ignore=frozenset({"lr"}))) == ("optimizer", [("momentum", "0.9")])


def test_positions_stop_at_a_star_unpacking():
    ctx, (call,) = calls("f(a, *rest, 0.1, lr=0.2)\n")
    assert [(n, ctx.module.code_for_node(v)) for n, v in hp.arguments(call, {1: "x", 2: "lr"}, ("lr",))] == \
        [("lr", "0.2")]
