"""``semantic.grad_callers``: the grad mode a node runs in, through its function's same-file callers."""

from __future__ import annotations

from tests.semantic.test_modes import analyses, loop
from torchlint.semantic.grad_callers import grad_mode_through_callers
from torchlint.semantic.grad_state import Grad

SOURCE = """
    import torch
    def accuracy(model, loader):
        for x in loader:
            model(x)
    def mixed(model, data):
        for x in data:
            model(x)
    def handed(model, items):
        for x in items:
            model(x)
    def lonely(model, batches):
        for x in batches:
            model(x)
    with torch.inference_mode():
        accuracy(net, val_loader)
        mixed(net, a)
    mixed(net, b)
    run(handed)
    """


def test_the_mode_every_caller_runs_in():
    _, sem = analyses(SOURCE)
    assert grad_mode_through_callers(sem, loop(sem, "loader").node) is Grad.DISABLED
    assert grad_mode_through_callers(sem, loop(sem, "data").node) is Grad.UNKNOWN
    assert grad_mode_through_callers(sem, loop(sem, "items").node) is Grad.CALLER  # a callback: run elsewhere
    assert grad_mode_through_callers(sem, loop(sem, "batches").node) is Grad.CALLER  # no same-file caller
