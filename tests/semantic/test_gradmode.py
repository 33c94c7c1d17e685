"""``semantic.gradmode``: the grad-mode choices around code (most of it is tested through
TL002/TL003's cases); here ``volatile_arguments``, the pre-0.4 way to turn autograd off."""

from __future__ import annotations

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.gradmode import volatile_arguments


def _model(src: str):
    ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def test_volatile_arguments_of_variable_calls_only():
    src = ("import torch\nfrom torch.autograd import Variable\n"
           "a = Variable(x, volatile=True)\n"          # reported
           "b = torch.autograd.Variable(x, volatile=flag)\n"  # anything but a literal False
           "c = Variable(x, volatile=False)\n"          # turned off explicitly
           "d = other(x, volatile=True)\n")            # not torch's Variable
    ctx, model = _model(src)
    shown = [ctx.module.code_for_node(a.value) for a in volatile_arguments(model)]
    assert shown == ["True", "flag"]
    assert volatile_arguments(model) is volatile_arguments(model)  # memoised
