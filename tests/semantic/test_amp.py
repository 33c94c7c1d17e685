"""``semantic.amp``: where a GradScaler's loss is scaled and backpropagated (in one statement,
through a name, inside a helper) and which same-file functions clip without unscaling."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.amp import clipping_functions, scaled_backward, scaling_functions


def context_of(src: str) -> FileContext:
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    return ctx


SRC = """
import torch
scaler = torch.cuda.amp.GradScaler()

def backward(loss):
    scaler.scale(loss).backward()

def backward_and_step(loss, opt):
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()

def clip(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

def unscale_and_clip(model, opt):
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

def calls_clip(model):
    clip(model)

def two_statements(loss, other, flag):
    scaled = scaler.scale(loss)
    scaled.backward()
    maybe = other
    if flag:
        maybe = scaler.scale(other)
    maybe.backward()
"""


def _functions(ctx):
    return {n.name.value: n for n in ctx.module.body if isinstance(n, cst.FunctionDef)}


def test_scaled_backward_through_a_name_every_binding_of_which_is_scaled():
    ctx = context_of(SRC)
    model = ctx.semantic.model
    backwards = [s.node for s in model.calls if isinstance(s.node.func, cst.Attribute)
                 and s.node.func.attr.value == "backward"
                 and s.scope.node is _functions(ctx)["two_statements"]]
    assert [scaled_backward(call, model) for call in backwards] == ["scaler", None]
    assert scaled_backward(backwards[0]) is None  # without the model, the one-statement form only


def test_scaling_and_clipping_functions():
    ctx = context_of(SRC)
    functions = _functions(ctx)
    assert {f.name.value: key for f, key in scaling_functions(ctx.semantic).items()} == {"backward": "scaler",
                                                                                       "two_statements": "scaler"}
    assert sorted(f.name.value for f in clipping_functions(ctx.semantic)) == ["calls_clip", "clip"]
    assert functions["unscale_and_clip"] not in clipping_functions(ctx.semantic)
