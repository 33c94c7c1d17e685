"""``semantic.scalars.is_zero_dim``: which expressions are 0-dim tensors for sure."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.scalars import is_zero_dim
from torchlint.tree import iter_nodes


def probes(src: str) -> dict[str, bool]:
    """``probe(expr)`` calls of ``src`` -> whether ``expr`` is 0-dim, keyed by its code."""
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    model = ctx.semantic.model
    return {module.code_for_node(n.args[0].value): is_zero_dim(ctx, model, n.args[0].value)
            for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
            and n.func.value == "probe"}


def test_losses_and_reductions_are_zero_dim():
    found = probes("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        criterion = nn.CrossEntropyLoss()
        def f(out, y, x, loss_fn):
            a = criterion(out, y)
            b = F.mse_loss(out, y)
            c = loss_fn(out, y)
            probe(a)
            probe(b.data)
            probe(c.detach())
            probe(x.sum())
            probe(torch.mean(x))
            d = F.cross_entropy(out, y)
            d += 0.1 * x.norm()
            probe(d)
            e = out.pow(2).mean(1) + unknown(x)
            e.backward()
            probe(e)
    """)
    assert all(found.values()), found


def test_values_not_known_to_be_zero_dim():
    found = probes("""
        import numpy as np
        import torch.nn as nn
        import torch.nn.functional as F
        per_sample = nn.CrossEntropyLoss(reduction="none")
        def f(model, out, y, x, dataset, values):
            a = per_sample(out, y)
            probe(a)
            probe(F.mse_loss(out, y, reduction="none"))
            probe(model(x))
            probe(dataset.data)
            probe(x.sum(1))
            probe(x.mean(dim=0))
            probe([1, 2].sum())
            probe(np.mean(values))
            b = F.mse_loss(out, y)
            b = [b]
            probe(b)
            v = model(x)
            v.backward(torch.ones_like(v))
            probe(v)
    """)
    assert not any(found.values()), found


@pytest.mark.parametrize("branch", ["if flag:\n        a = F.mse_loss(x, y)\n    else:\n        a = model(x)\n"])
def test_a_name_is_zero_dim_only_if_every_binding_is(branch):
    found = probes("import torch.nn.functional as F\ndef f(flag, model, x, y):\n    " + branch + "    probe(a)\n")
    assert found == {"a": False}
