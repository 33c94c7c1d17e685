"""semantic.fragments: whether a file is a program or a fragment of one (names read that
nothing in the file binds)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import fragments


def analyses(src: str):
    src = textwrap.dedent(src)
    ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx.semantic


SLIDE = """\
for epoch in range(5):
    for i, data in enumerate(train_loader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
with torch.no_grad():
    pass
"""


def test_a_slide_s_training_loop_reads_names_bound_nowhere():
    sem = analyses(SLIDE)
    assert sorted(fragments.unbound_reads(sem)) == ["criterion", "net", "optimizer", "torch", "train_loader"]
    assert fragments.is_fragment(sem)
    assert fragments.bound_nowhere(sem, "net") and not fragments.bound_nowhere(sem, "loss")


@pytest.mark.parametrize("src", [
    # everything bound: imports, assignments, parameters, loop and with targets, defs, classes
    "import torch\nnet = torch.nn.Linear(2, 1)\nfor x in [torch.ones(2)]:\n    net(x).sum().backward()\n",
    "def f(a, *args, b=1, **kw):\n    return a + b + len(args) + len(kw)\nclass C:\n    y = f(1)\n    z = y\n",
    "with open('f') as fh:\n    data = fh.read()\ntry:\n    pass\nexcept OSError as e:\n    print(e)\n",
    "xs = [v for v in range(3)]\nys = {k: v for k, v in zip(xs, xs)}\nf = lambda q: q + 1\n",
    "def f():\n    global model\n    model = 1\nf()\nprint(model)\n",
    # builtins, module globals and IPython's names
    "print(__name__, __file__, len([]))\ndisplay(1)\nget_ipython().run_line_magic('time', '')\n",
    # a star import may bring any name
    "from helpers import *\nnet(x)\n",
    # names bound where no binding shows
    "globals().update(config())\nprint(lr)\n",
    "exec(open('setup.py').read())\nmodel.train()\n",
    # annotations are not evaluated (and may name what only a type checker imports)
    "from __future__ import annotations\ndef f(x: Tensor) -> Tensor:\n    return x\n",
    # attribute names and keywords are no reads
    "import torch\nt = torch.zeros(3, dtype=torch.float32)\nt.foo_bar = 1\n",
    # bound in another scope: the name exists in the file (a helper's global)
    "def setup():\n    global net\n    net = 1\ndef run():\n    return net\n",
])
def test_a_program_reads_no_name_bound_nowhere(src):
    sem = analyses(src)
    assert fragments.unbound_reads(sem) == {}
    assert not fragments.is_fragment(sem)


def test_the_first_read_of_each_unbound_name_is_kept():
    sem = analyses("a = net(1)\nb = net(2)\n")
    found = fragments.unbound_reads(sem)
    assert list(found) == ["net"]
    assert sem.ctx.line_of(found["net"]) == 1


def test_bound_nowhere_is_false_for_dotted_names_builtins_and_star_imports():
    sem = analyses("x = y\n")
    assert fragments.bound_nowhere(sem, "y")
    assert not fragments.bound_nowhere(sem, "x")
    assert not fragments.bound_nowhere(sem, "a.b")
    assert not fragments.bound_nowhere(sem, "len")
    assert not fragments.bound_nowhere(analyses("from m import *\nx = y\n"), "y")


@pytest.mark.parametrize("src", [
    # an abridged script: it imports what it uses, its model comes from a line left out
    "import torch\nfor x in loader:\n    model(x).sum().backward()\n    opt.step()\n",
    # a notebook that %run a helper (the magic is masked) or lost a cell
    "import torch\npass\nfor x in loader:\n    net(x).backward()\n",
    # a script that says it runs, even if it imports nothing
    "def step(batch):\n    model(batch).backward()\n\nif __name__ == '__main__':\n    for b in loader:\n        step(b)\n",
])
def test_names_bound_nowhere_alone_make_no_fragment(src):
    sem = analyses(src)
    assert fragments.unbound_reads(sem)
    assert not fragments.is_fragment(sem)


def test_a_listing_with_local_imports_is_no_fragment():
    sem = analyses("def f():\n    import torch\n    return torch.zeros(1)\nf()\nnet(1)\n")
    assert not fragments.is_fragment(sem)
