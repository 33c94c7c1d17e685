"""``semantic.modules.unfinished``: a method that cannot run as written (an exercise template's
``forward``), so ``runs_layers`` does not count it (TL005)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.modules import runs_layers, unfinished


def forward_of(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    model = ctx.semantic.model
    info = next(iter(model.classes.values())) if isinstance(model.classes, dict) else model.classes[0]
    node = info.methods["forward"]
    scope = next(child for child in info.scope.children if child.node is node)
    return info, scope, node


HEAD = """
import torch.nn as nn
from helpers import act
GLOBAL = 1
class M(nn.Module):
    def forward(self, x):
"""


@pytest.mark.parametrize("body", [
    "return",
    '"""To write."""\n        pass\n        return None',
    "y = self.proj(y)\n        return y",
    "h = self.fc(x)\n        return out, h",
])
def test_unfinished(body):
    info, scope, node = forward_of(HEAD + "        " + body + "\n")
    assert unfinished(scope, node)
    assert not runs_layers(info)


@pytest.mark.parametrize("body", [
    "return self.fc(x)",
    "x = self.fc(x)\n        return x",
    "fc = self.fc(x, fc=1)\n        return fc",  # an attribute's or a keyword's name is no read
    "qkv = self.qkv(x).reshape(-1)\n        return qkv",
    "y = act(x) + GLOBAL\n        return y",
    "return len(x), x",
    "pass",  # abstract-looking: is_abstract's business, not this one
    "if x is None:\n            return\n        return self.fc(x)",
])
def test_runs(body):
    info, scope, node = forward_of(HEAD + "        " + body + "\n")
    assert not unfinished(scope, node)


def test_star_import_leaves_names_unknown():
    src = "from layers import *\n" + HEAD + "        return out\n"
    _, scope, node = forward_of(src)
    assert not unfinished(scope, node)


def test_module_level_names_returned_by_a_forward_that_uses_nothing_of_self():
    """A notebook's exercise: ``# your code here`` and ``return output, hidden``, names a later
    cell binds from the decoder's own result. A forward that reads a layer and returns a
    module-level name runs as written."""
    stub = HEAD + "        seq_len = x.shape[0]\n        return output, hidden\noutput, hidden = M()(1)\n"
    _, scope, node = forward_of(stub)
    assert unfinished(scope, node)
    uses = HEAD + "        self.fc(x)\n        return output\noutput = 1\n"
    _, scope, node = forward_of(uses)
    assert not unfinished(scope, node)
