"""The exact grad-mode query (``semantic.grad_state.grad_mode_at``): what each ``with``,
decorator and ``set_grad_enabled`` statement chooses, nesting, a def's own scope, callers."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.grad_state import Grad, grad_mode_at
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes


def mode_of(src: str, marker: str = "probe", training: bool | None = None) -> Grad:
    """The grad mode at the call ``probe()`` in ``src`` (``training``: what ``self.training`` is)."""
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    (call,) = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and dotted_name(n.func) == marker]
    return grad_mode_at(ctx, call, training=training).state


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch\nprobe()\n", Grad.ENABLED),
    ("import torch\nwith torch.no_grad():\n    probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.inference_mode():\n    probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.inference_mode(True):\n    probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.inference_mode(mode=False):\n    probe()\n", Grad.ENABLED),  # a no-op
    ("import torch\nwith torch.no_grad():\n    with torch.inference_mode(False):\n        probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.set_grad_enabled(False):\n    probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.set_grad_enabled(True):\n    probe()\n", Grad.ENABLED),  # not "no-grad"
    ("import torch\nwith torch.set_grad_enabled(train):\n    probe()\n", Grad.UNKNOWN),
    ("import torch\nwith torch.no_grad():\n    with torch.enable_grad():\n        probe()\n", Grad.ENABLED),
    ("import torch\nwith torch.enable_grad():\n    with torch.no_grad():\n        probe()\n", Grad.DISABLED),
    ("import torch\nwith torch.no_grad(), torch.enable_grad():\n    probe()\n", Grad.ENABLED),  # entered last
    ("from torch import no_grad as ng\nwith ng():\n    probe()\n", Grad.DISABLED),
    ("import torch\nctx = torch.no_grad()\nwith ctx:\n    probe()\n", Grad.DISABLED),
    ("import utils\nwith utils.no_grad_if(frozen):\n    probe()\n", Grad.UNKNOWN),
    ("import torch\nwith open('f') as fh:\n    probe()\n", Grad.ENABLED),
    ("import torch\ntorch.set_grad_enabled(False)\nprobe()\n", Grad.DISABLED),
    ("import torch\ntorch.set_grad_enabled(False)\ntorch.set_grad_enabled(True)\nprobe()\n", Grad.ENABLED),
    ("import torch\nprobe()\ntorch.set_grad_enabled(False)\n", Grad.ENABLED),  # only what ran before
    ("import torch\nif fast:\n    torch.set_grad_enabled(False)\nprobe()\n", Grad.UNKNOWN),  # maybe ran
    ("import torch\nwith torch.no_grad():\n    torch.set_grad_enabled(False)\nprobe()\n", Grad.ENABLED),  # restored
    ("import torch\nwith torch.no_grad():\n    torch.set_grad_enabled(True)\n    probe()\n", Grad.ENABLED),
])
def test_with_blocks_and_statements(src, expected):
    assert mode_of(src) is expected


@pytest.mark.parametrize(("src", "expected"), [
    ("import torch\ndef f():\n    probe()\n", Grad.CALLER),
    # a def written inside a no_grad block runs where it is called
    ("import torch\nwith torch.no_grad():\n    def f():\n        probe()\n", Grad.CALLER),
    ("import torch\n@torch.no_grad()\ndef f():\n    probe()\n", Grad.DISABLED),
    ("import torch\n@torch.inference_mode()\ndef f():\n    probe()\n", Grad.DISABLED),
    ("import torch\n@torch.enable_grad()\ndef f():\n    probe()\n", Grad.ENABLED),
    ("import torch\n@torch.enable_grad()\n@torch.no_grad()\ndef f():\n    probe()\n", Grad.DISABLED),
    ("import torch\n@torch.no_grad()\ndef f():\n    def g():\n        probe()\n", Grad.CALLER),
    ("import torch\n@torch.no_grad()\ndef f():\n    with torch.enable_grad():\n        probe()\n", Grad.ENABLED),
    ("import torch\ndef f():\n    torch.set_grad_enabled(False)\n    probe()\n", Grad.DISABLED),
    ("import torch\nclass M(L.LightningModule):\n    def validation_step(self, b, i):\n        probe()\n", Grad.DISABLED),
    ("import torch\ng = lambda: probe()\n", Grad.CALLER),
    # a decorator's own arguments are evaluated where the def is written
    ("import torch\nwith torch.no_grad():\n    @register(probe())\n    def f():\n        pass\n", Grad.DISABLED),
])
def test_functions(src, expected):
    assert mode_of(src) is expected


_FLAIR = ("import torch\nclass E:\n    def embed(self, x):\n"
          "        ctx = torch.enable_grad() if (self.fine_tune and self.training) else torch.no_grad()\n"
          "        with ctx:\n            probe()\n")


@pytest.mark.parametrize(("src", "training", "expected"), [
    # flair's TransformerBaseEmbeddings: a context chosen on self.training
    (_FLAIR, False, Grad.DISABLED),
    (_FLAIR, True, Grad.UNKNOWN),  # fine_tune decides then
    (_FLAIR, None, Grad.CALLER),  # not settled: the choice is not one the query reads
    ("import torch\ndef f(self):\n    with torch.set_grad_enabled(self.training):\n        probe()\n", False, Grad.DISABLED),
    ("import torch\ndef f(self):\n    with torch.set_grad_enabled(self.training):\n        probe()\n", True, Grad.ENABLED),
    ("import torch\ndef f(self):\n    with torch.set_grad_enabled(self.training):\n        probe()\n", None, Grad.UNKNOWN),
    ("import torch\ndef f(self):\n    with torch.set_grad_enabled(self.training or self.tune):\n        probe()\n",
     False, Grad.UNKNOWN),
    ("import torch, contextlib\ndef f(self):\n    with (torch.no_grad() if not self.training else contextlib.nullcontext()):\n"
     "        probe()\n", False, Grad.DISABLED),
    ("import torch, contextlib\ndef f(self):\n    with (torch.no_grad() if not self.training else contextlib.nullcontext()):\n"
     "        probe()\n", True, Grad.CALLER),  # nullcontext decides nothing: the callers' mode
    # a choice on something else is not settled by the module's mode
    ("import torch\ndef f(self, tune):\n    with (torch.enable_grad() if tune else torch.no_grad()):\n        probe()\n",
     False, Grad.UNKNOWN),
    ("import torch\ndef f(self, a):\n    with (torch.no_grad() if a else torch.inference_mode()):\n        probe()\n",
     False, Grad.DISABLED),  # both sides agree
    ("import torch\ndef f(self):\n    torch.set_grad_enabled(self.training)\n    probe()\n", False, Grad.DISABLED),
    # another object's training flag is not the module's
    ("import torch\ndef f(self, other):\n    with torch.set_grad_enabled(other.training):\n        probe()\n", False,
     Grad.UNKNOWN),
])
def test_choices_settled_by_the_modules_mode(src, training, expected):
    assert mode_of(src, training=training) is expected
