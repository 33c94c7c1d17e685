"""semantic.tensors.tensor_value: which expressions are a tensor (or a NumPy scalar) for sure."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.tensors import tensor_value
from torchlint.tree import iter_nodes


def _value_of_last_probe(src: str) -> str | None:
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    calls = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
             and n.func.value == "probe"]
    return tensor_value(ctx.semantic.model, calls[-1].args[0].value)


@pytest.mark.parametrize(("src", "expected"), [
    ("topv, topi = out.topk(1)\nprobe(topi)\n", "topk"),
    ("topv, topi = out.topk(1)\nprobe(topi[0][0])\n", "index"),
    ("probe(out.topk(1)[1])\n", "topk"),
    ("import torch\nprobe(torch.max(out, 1)[1])\n", "topk"),
    ("probe(out.max(1)[1])\n", "topk"),
    ("probe(out.argmax(dim=1))\n", "argmax"),
    ("import numpy as np\nprobe(np.argmax(scores))\n", "argmax"),
    ("import torch\nprobe(torch.multinomial(p, 1)[0])\n", "index"),
    ("import torch\nt = torch.tensor(3)\nprobe(t)\n", "factory"),
    ("_, idx = out.sort()\nni = idx.cpu().numpy()[0]\nprobe(ni)\n", "index"),
    ("import torch.nn as nn\nfc = nn.Linear(2, 2)\nprobe(fc(x)[0])\n", "index"),
    # NumPy factories and array-valued functions; .any()/.all(), comparisons and operations of a tensor
    ("import numpy as np\nprobe(np.array([False]).all())\n", "index"),
    ("import numpy as np\nflags = np.zeros(3, dtype=bool)\nprobe(flags[0])\n", "index"),
    ("import numpy as np\nprobe(np.any(a < b))\n", "array"),
    ("import torch\nprobe(torch.isnan(loss))\n", "array"),
    ("import numpy as np\nprobe((np.array([1]) == 2)[0])\n", "index"),
    ("import numpy as np\nprobe(((a == b) | (np.isnan(a) & np.isnan(b))).all())\n", "index"),
    ("pred = out.argmax(1)\nprobe((pred == y).float().mean())\n", None),
    ("pred = out.argmax(1)\nprobe((pred == y).all())\n", "index"),
    ("pred = out.argmax(1)\nprobe(~pred)\n", "index"),
    # Python bools, strings and unknowns
    ("import numpy as np\nprobe(np.allclose(a, b))\n", None),
    ("import torch\nprobe(torch.equal(a, b))\n", None),
    ("pred = out.argmax(1)\nprobe('%d' % pred)\n", None),
    ("probe((a == b).all())\n", None),
    ("import numpy as np\nprobe(bool(np.isnan(a).any()))\n", None),
    # Python numbers and unknowns
    ("topv, topi = out.topk(1)\nprobe(topi.item())\n", None),
    ("probe(ids[0])\n", None),
    ("def f(t):\n    probe(t)\n", None),
    ("probe(out.max())\n", None),  # no dimension: not a (values, indices) pair, receiver unknown
    ("a, b = divmod(7, 2)\nprobe(a)\n", None),
    ("probe(model(x))\n", None),  # a model whose class is not in sight
    ("if c:\n    t = out.argmax()\nelse:\n    t = 0\nprobe(t)\n", None),
])
def test_tensor_value(src, expected):
    assert _value_of_last_probe(src) == expected
