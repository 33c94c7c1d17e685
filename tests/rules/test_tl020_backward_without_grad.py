"""TL020 backward-without-grad beyond the embedded cases: projects of several modules."""

from __future__ import annotations

from torchlint.checks.tl020_backward_without_grad import message
from torchlint.testing import lint_tree

STEP = """
import torch
def train_step(model, batch, optimizer):
    optimizer.zero_grad()
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
"""


def _found(files):
    return [(f.path.rsplit("/", 1)[-1], f.span.line, f.message) for f in lint_tree(files, ["TL020"])]


def test_a_decorated_step_is_reported_in_its_own_module_whoever_imports_it():
    step = STEP.replace("def train_step", "@torch.inference_mode()\ndef train_step")
    main = "from steps import train_step\nfor batch in loader:\n    train_step(model, batch, opt)\n"
    assert _found({"steps.py": step, "main.py": main}) == [
        ("steps.py", 7, message("loss", "under `@torch.inference_mode()`"))]


def test_callers_in_another_module_are_not_followed():
    # Its only caller runs it under no_grad, but in another file: one file is judged at a time.
    main = "import torch\nfrom steps import train_step\nwith torch.no_grad():\n    train_step(model, batch, opt)\n"
    assert _found({"steps.py": STEP, "main.py": main}) == []


def test_a_loader_of_the_same_module_leaving_autograd_off():
    utils = """
import torch
def init_jit_model(path):
    torch.set_grad_enabled(False)
    return torch.jit.load(path)
vad = init_jit_model("vad.jit")
loss = model(x).sum()
loss.backward()
"""
    assert _found({"utils.py": utils}) == [
        ("utils.py", 8, message("loss", 'after `vad = init_jit_model("vad.jit")`, which leaves autograd off'))]
