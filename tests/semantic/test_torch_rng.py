"""semantic.torch_rng: whether a file's code can draw from torch's global generator."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.torch_rng import draws_from_torch


def draws(src: str) -> bool:
    src = textwrap.dedent(src)
    ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return draws_from_torch(ctx.semantic)


@pytest.mark.parametrize("src", [
    "import torch\nw = torch.tensor(0.0, requires_grad=True)\nx = torch.zeros(3)\n",
    "import torch\nimport numpy as np\nw = torch.nn.Parameter(torch.zeros(5, 2))\nx = torch.from_numpy(np.random.rand(3))\n",
    "import torch\nm = torch.nn.Linear(2, 1)\nm.weight.data = torch.ones(1, 2)\nm.bias.data.fill_(0)\n",
    "import torch\nm = torch.nn.Linear(2, 1, bias=False)\ntorch.nn.init.zeros_(m.weight)\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = torch.nn.Linear(2, 1)\n        self.fc.weight.detach().zero_()\n"
    "        self.fc.bias.detach().zero_()\nmodel = M()\n",
    "import torch\nmodel = torch.nn.Sequential(torch.nn.Linear(2, 1))\nfor m in model.children():\n"
    "    m.weight.data = torch.ones(1, 2)\n    m.bias.data = torch.zeros(1)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False)\n".replace("ds", "[1, 2]"),
])
def test_no_draw(src):
    assert not draws(src)


@pytest.mark.parametrize("src", [
    "import torch\nx = torch.randn(3)\n",
    "import torch\nm = torch.nn.Linear(2, 1)\n",
    "import torch\nm = torch.nn.Linear(2, 1)\nm.weight.data = torch.ones(1, 2)\n",  # the bias keeps its draw
    "import torch\nx = torch.zeros(3)\nx.uniform_()\n",
    "import torch\nloader = torch.utils.data.DataLoader([1, 2], batch_size=1, shuffle=True)\n",
    "import torch\nm = torch.nn.Linear(2, 1)\ntorch.nn.init.xavier_uniform_(m.weight)\n",
    "import torch\nfrom model import Net\nnet = Net()\n",  # a project module may draw
    "import torch\nnet = make_model()\n",  # from nowhere (a star import, another cell)
    "import torch\ny = torch.nn.functional.dropout(torch.ones(3), 0.5)\n",
    "import torch\nfrom torchvision import models\nnet = models.resnet18()\n",
])
def test_draws(src):
    assert draws(src)


@pytest.mark.parametrize("src, convex", [
    ("import torch\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n", True),
    ("import torch\nclass LR(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.linear = torch.nn.Linear(4, 1)\n    def forward(self, x):\n"
     "        return torch.sigmoid(self.linear(x))\nmodel = LR()\n", True),
    # two layers: a network, not a convex fit; one layer but other draws
    ("import torch\nm = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))\n", False),
    ("import torch\nm = torch.nn.Linear(2, 1)\nx = torch.randn(10, 2)\n", False),
    ("import torch\nm = torch.nn.Linear(2, 1)\nd = torch.nn.Dropout(0.5)\n", False),
    ("import torch\nm = torch.nn.Linear(2, 1)\nl = torch.utils.data.DataLoader([1], shuffle=True)\n", False),
    ("import torch\nm = torch.nn.Embedding(10, 2)\n", False),
    ("import torch\nw = torch.zeros(3, requires_grad=True)\n", False),  # draws nothing at all
])
def test_only_starts_a_convex_fit(src, convex):
    from torchlint.semantic.torch_rng import only_starts_a_convex_fit

    src = textwrap.dedent(src)
    ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    assert only_starts_a_convex_fit(ctx.semantic) is convex


def drawn(src: str, name: str = "x") -> bool:
    """Whether the last read of ``name`` in ``src`` (a final line ``use(name)``) is freshly drawn."""
    from torchlint.semantic.torch_rng import freshly_drawn
    src = textwrap.dedent(src) + f"use({name})\n"
    ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    call = ctx.module.body[-1].body[0].value
    return freshly_drawn(ctx.semantic.model, call.args[0].value)


@pytest.mark.parametrize("src", [
    "import torch\nx = torch.rand(100, 8)\n",
    "import torch\nx = torch.randint(10, (100,), dtype=torch.long)\n",
    "import torch\nn = 100\nx = torch.randn(n, 3).float().to('cpu')\n",
    "import numpy as np\nimport torch\nx = torch.from_numpy(np.random.randn(100, 3)).float()\n",
    "import torch\nx = torch.rand(100) * 2 - 1\n",
    "import torch\nw = torch.tensor([2.0, -3.4])\nX = torch.randn(100, 2)\nx = X @ w + 0.01 * torch.randn(100)\n",
    "import torch\nX = torch.rand(100, 2)\nx = (X[:, 0] > 0.5).long()\n",
    "import torch\nx = torch.normal(0.0, 1.0, (100, 2))\n",
    "import torch\nx = torch.empty(100, 2).uniform_(-1, 1)\n",
    "import numpy as np\nx = np.random.normal(0, 1, size=(100, 2))\n",
])
def test_freshly_drawn(src):
    assert drawn(src)


@pytest.mark.parametrize("src", [
    "import torch\nx = torch.arange(100.0)\n",
    "import torch\nx = torch.load('data.pt')\n",
    "import torch\nx = torch.rand(100) + torch.arange(100)\n",  # a trend along the rows
    "import torch\nx = torch.normal(torch.arange(100.0), 1.0)\n",  # a mean per row: ordered
    "import numpy as np\nx = np.random.rand(100)\nx.sort()\n",  # sorted in place
    "import torch\nx = torch.randint(2, (100,))\nx[:50] = 0\n",  # rows rewritten by position
    "import torch\nX = torch.rand(100, 2)\nx = X[X[:, 0].argsort()]\n",  # reordered
    "import torch\nx = torch.rand(100)\nx, _ = torch.sort(x)\n",
    "import torch\nx = torch.rand(100)\nif flag:\n    x = torch.arange(100.0)\n",
    "import torch\nA = torch.arange(10000.0).view(100, 100)\nx = A @ torch.rand(100, 3)\n",  # rows mixed
    "def f(x):\n    return x\n",
])
def test_not_freshly_drawn(src):
    assert not drawn(src)
