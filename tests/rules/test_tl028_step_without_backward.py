"""TL028 step-without-backward beyond the embedded cases: projects of several modules."""

from __future__ import annotations

from torchlint.checks.tl028_step_without_backward import cleared_message
from torchlint.testing import lint_tree


def _found(files):
    return [(f.path.rsplit("/", 1)[-1], f.span.line, f.message) for f in lint_tree(files, ["TL028"])]


def test_a_backward_helper_imported_from_another_module_may_differentiate():
    utils = "def backward_pass(loss):\n    loss.backward()\n"
    train = """
from utils import backward_pass
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    backward_pass(loss)
    optimizer.step()
"""
    assert _found({"utils.py": utils, "train.py": train}) == []


def test_a_step_helper_in_another_module_is_not_judged_against_its_callers():
    helper = "def apply(optimizer):\n    optimizer.step()\n    optimizer.zero_grad()\n"
    train = """
from helper import apply
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    apply(optimizer)
"""
    assert _found({"helper.py": helper, "train.py": train}) == []


def test_the_forgotten_backward_is_reported_in_the_module_that_steps():
    steps = """
def train_step(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    optimizer.step()
    return loss.item()
"""
    main = "from steps import train_step\nfor x, y in loader:\n    train_step(model, opt, crit, x, y)\n"
    assert _found({"steps.py": steps, "main.py": main}) == [("steps.py", 5, cleared_message("optimizer", 3))]
