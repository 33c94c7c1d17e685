"""semantic.zeros: which values the code can make exactly 0 (``zero_value``), which divisors can
be 0 (``zero_divisor``), booleans for sure (``is_mask``), and a test of the zero case
(``guarded_by_test``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.activations import Outputs
from torchlint.semantic.zeros import guarded_by_test, is_mask, zero_divisor, zero_value
from torchlint.tree import iter_nodes


def _probe(src: str):
    src = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    calls = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
             and n.func.value == "probe"]
    return ctx, calls[-1]


def _zero(src: str) -> str | None:
    ctx, call = _probe(src)
    found = zero_value(ctx.semantic.model, call.args[0].value, Outputs.of(ctx))
    return found.kind if found else None


def _divisor(src: str) -> str | None:
    ctx, call = _probe(src)
    found = zero_divisor(ctx.semantic.model, call.args[0].value, Outputs.of(ctx))
    return found.kind if found else None


@pytest.mark.parametrize(("src", "expected"), [
    ("probe(F.relu(h))\n", "relu"),
    ("probe(h.relu())\n", "relu"),
    ("probe(nn.ReLU()(h))\n", "relu"),
    ("r = torch.relu(h)\nprobe(r[0])\n", "relu"),
    ("probe((pred == y).sum())\n", "count"),
    ("m = y != 0\nprobe(m.float().sum())\n", "count"),
    ("probe(torch.count_nonzero(y > 0))\n", "count"),
    ("probe(1 - torch.sigmoid(x))\n", "complement"),
    ("p = torch.softmax(x, 1)\nprobe(1. - p)\n", "complement"),
    ("probe(torch.ones_like(x) - x.sigmoid())\n", "complement"),
    ("e = torch.exp(x)\nprobe(e / e.sum(1, keepdim=True))\n", "softmax"),
    ("probe(x.exp() / torch.sum(x.exp(), dim=1))\n", "softmax"),
    ("r = F.relu(h)\nprobe(r / r.sum(1, keepdim=True))\n", "quotient"),
    # Kept off 0, or not shown to be 0.
    ("probe(F.relu(h) + 1e-8)\n", None),
    ("probe(F.relu(h).clamp(min=1e-6))\n", None),
    ("probe(1 - torch.sigmoid(x) + 1e-6)\n", None),
    ("probe(torch.sigmoid(x))\n", None),
    ("probe(2 - torch.sigmoid(x))\n", None),
    ("probe(x.sum())\n", None),
    ("probe(h)\n", None),
    ("r = F.relu(h)\nr.clamp_(min=1e-6)\nprobe(r)\n", None),
    ("if c:\n    r = F.relu(h)\nelse:\n    r = h.exp()\nprobe(r)\n", None),
])
def test_zero_value(src, expected):
    assert _zero(src) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("m = labels != -100\nprobe(m.sum())\n", "count"),
    ("probe(torch.sum((labels != -100).int().view(-1), dim=0))\n", "count"),
    ("n = (t > 0).sum().item()\nprobe(n)\n", "count"),
    ("probe((x > 0).float().norm())\n", "count"),
    ("r = F.relu(h)\nprobe(r.sum(1, keepdim=True))\n", "relu"),
    ("probe(F.relu(h).norm(dim=1, keepdim=True))\n", "relu"),
    # Kept off 0, or not shown to be 0.
    ("m = labels != -100\nprobe(m.sum().clamp(min=1))\n", None),
    ("probe(features.norm(dim=-1, keepdim=True))\n", None),
    ("probe(w.sum(1, keepdim=True))\n", None),
    ("probe(len(y))\n", None),
    ("probe(y.size(0))\n", None),
])
def test_zero_divisor(src, expected):
    assert _divisor(src) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("probe(a == b)\n", True),
    ("probe(y.ne(0))\n", True),
    ("probe(~(a > b) & (c < d))\n", True),
    ("m = y > 0\nprobe(m.float())\n", True),
    ("probe(torch.isnan(x))\n", True),
    ("probe(a in b)\n", False),
    ("probe(y)\n", False),
    ("probe(y.float())\n", False),
])
def test_is_mask(src, expected):
    ctx, call = _probe(src)
    assert is_mask(ctx.semantic.model, call.args[0].value) is expected


@pytest.mark.parametrize(("src", "expected"), [
    ("def f(loss, y):\n    n = (y > 0).sum()\n    if n == 0:\n        return loss\n    return probe(n)\n", True),
    ("def f(loss, y):\n    m = y > 0\n    s = m.sum()\n    if s == 0:\n        return loss\n    return probe(m.sum())\n", True),
    ("def f(y):\n    n = (y > 0).sum()\n    assert n > 0\n    return probe(n)\n", True),
    ("def f(a, y):\n    n = (y > 0).sum(1)\n    return (probe(n)).masked_select(n > 0)\n", True),
    ("def f(a, y):\n    n = (y > 0).sum(1)\n    n[n == 0] = 1\n    return probe(n)\n", True),
    # The mask's own comparison, a test of something else, an identity test: not a guard.
    ("def f(y):\n    n = (y > 0).sum()\n    return probe(n)\n", False),
    ("def f(y, z):\n    n = (y > 0).sum()\n    if z is None:\n        return 0\n    return probe(n)\n", False),
    ("def f(y, k):\n    n = (y > 0).sum()\n    if k > 3:\n        return 0\n    return probe(n)\n", False),
])
def test_guarded_by_test(src, expected):
    ctx, call = _probe(src)
    assert guarded_by_test(ctx.semantic.model, call.args[0].value, call) is expected
