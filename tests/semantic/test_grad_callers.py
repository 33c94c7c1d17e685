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


# -- value_grad_mode / leaves_grad_off: the mode a value was computed in ----------------------

from torchlint.semantic.grad_callers import leaves_grad_off, value_grad_mode  # noqa: E402
from torchlint.tree import iter_nodes  # noqa: E402

import libcst as cst  # noqa: E402


def _backward_receivers(sem):
    """The receiver of each ``X.backward()`` in source order, with its call."""
    out = []
    for node in iter_nodes(sem.ctx.module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            out.append((node.func.value, node))
    return out


def _modes(src):
    _, sem = analyses(src)
    return [value_grad_mode(sem, receiver, call)[0] for receiver, call in _backward_receivers(sem)]


def test_a_value_computed_under_no_grad_whatever_the_mode_at_its_backward():
    assert _modes("""
        import torch
        with torch.no_grad():
            a = model(x).sum()
        a.backward()
        b = model(x).sum()
        with torch.no_grad():
            b.backward()
        """) == [Grad.DISABLED, Grad.ENABLED]


def test_assigned_computations_aliases_and_number_seeds_are_followed():
    assert _modes("""
        import torch
        total = 0
        for x in xs:
            with torch.no_grad():
                total = total + model(x).sum()
        loss = total / len(xs)
        alias = loss
        alias.backward()
        """) == [Grad.DISABLED]


def test_one_recording_binding_or_a_leaf_asking_for_grad_records():
    assert _modes("""
        import torch
        if flag:
            with torch.no_grad():
                a = model(x).sum()
        else:
            a = model(x).sum()
        a.backward()
        with torch.no_grad():
            leaf = torch.zeros(3, requires_grad=True)
        leaf.backward(g)
        """) == [Grad.ENABLED, Grad.ENABLED]


def test_a_computation_written_at_the_backward_and_unknown_values():
    assert _modes("""
        import torch
        with torch.no_grad():
            model(x).mean().backward()
        def step(loss):
            loss.backward()
        self_loss = None
        """) == [Grad.DISABLED, Grad.UNKNOWN]


def test_functions_that_leave_autograd_off():
    _, sem = analyses("""
        import torch
        def init_model(path):
            torch.set_grad_enabled(False)
            return torch.jit.load(path)
        def restores(path):
            torch.set_grad_enabled(False)
            m = torch.jit.load(path)
            torch.set_grad_enabled(True)
            return m
        def through(path):
            return init_model(path)
        def scoped(path):
            with torch.no_grad():
                return torch.jit.load(path)
        vad = init_model("a")
        loss = model(x).sum()
        loss.backward()
        """)
    functions = {f.name.value: f for f in iter_nodes(sem.ctx.module) if isinstance(f, cst.FunctionDef)}
    assert leaves_grad_off(sem, functions["init_model"])
    assert not leaves_grad_off(sem, functions["restores"])
    assert not leaves_grad_off(sem, functions["scoped"])
    assert not leaves_grad_off(sem, functions["through"])  # only a top-level statement counts: `return` is none
    (receiver, call), = _backward_receivers(sem)
    assert value_grad_mode(sem, receiver, call)[0] is Grad.DISABLED
    assert grad_mode_through_callers(sem, call) is Grad.ENABLED  # without left_off: the old answer
