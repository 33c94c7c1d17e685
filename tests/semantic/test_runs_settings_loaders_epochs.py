"""Shared-layer queries of TL001 and TL004 (``optimises_inputs`` is for TL006
too): what kind of run a file is (``semantic.runs``), where a value is a configurable
default (``semantic.settings``), what a DataLoader feeds (``semantic.loaders``), epoch-loop
counts (``semantic.epochs``) and the optimizer class a variable holds
(``semantic.optim_classes``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import epochs, loaders, optim_classes, runs, settings
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def calls_named(ctx, name: str) -> list[cst.Call]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
            and ctx.module.code_for_node(n.func).endswith(name)]


STYLE_TRANSFER = """
    import torch
    from torchvision import models
    cnn = models.vgg19(weights="DEFAULT").features.eval()
    img = content.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([img.requires_grad_()])
    """


@pytest.mark.parametrize(("src", "expected"), [
    (STYLE_TRANSFER, True),
    # hand-written regression: tensors, but no frozen or pretrained model
    ("import torch\nw = torch.randn(3, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n", False),
    # an optimizer over a model's parameters next to a frozen one
    ("import torch\nnet.eval()\nopt = torch.optim.SGD([p for p in net.parameters()], lr=0.1)\n", False),
    ("import torch\nteacher.requires_grad_(False)\nopt = torch.optim.Adam(student.parameters())\n", False),
    ("import torch\nnet.eval()\n", False),  # no optimizer at all
])
def test_optimises_inputs(src, expected):
    _, sem = analyses(src)
    assert runs.optimises_inputs(sem) is expected


def test_single_demo_step_and_lr_set_every_step():
    ctx, sem = analyses("""
        import torch
        def make(model):
            return torch.optim.AdamW(model.parameters(), lr=3e-4)
        def train(model, loader, schedule):
            opt = make(model)
            for step, x in enumerate(loader):
                model(x).backward()
                for g in opt.param_groups:
                    g["lr"] = schedule(step)
                opt.step()
        def fixed(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step, x in enumerate(loader):
                model(x).backward()
                for g in opt.param_groups:
                    g["lr"] = 0.01
                opt.step()
        if __name__ == "__main__":
            demo = torch.optim.SGD(net.parameters(), lr=0.1)
            net(x).backward()
            demo.step()
        """)
    adamw, sgd_fixed, sgd_demo = calls_named(ctx, "AdamW") + calls_named(ctx, "SGD")
    assert runs.held_as(sem, adamw) == [("opt", sem.model.module.children[1].node)]
    assert [runs.lr_set_every_step(sem, c) for c in (adamw, sgd_fixed, sgd_demo)] == [True, False, False]
    assert [runs.single_demo_step(sem, c) for c in (adamw, sgd_fixed, sgd_demo)] == [False, False, True]


def test_settings():
    ctx, sem = analyses("""
        '''doc'''
        import torch
        lr = 0.1
        batch_size = 64
        model = Net()
        epochs = 3
        exec(open("configurator.py").read())
        late = 1
        def fit(model, opt=None, sched=None, other=None):
            opt = torch.optim.Adam(model.parameters()) if opt is None else opt
            if sched is None:
                sched = torch.optim.lr_scheduler.StepLR(opt, 1)
            x = other or torch.optim.SGD(model.parameters())
            y = torch.optim.SGD(model.parameters()) if x is None else x
        """)
    model = sem.model
    assert settings.header_constants(model) == {"lr", "batch_size"}
    order = settings.configurator_order(model)
    assert model.module.bindings["epochs"][0].order < order < model.module.bindings["late"][0].order
    adam, step_lr = calls_named(ctx, "Adam") + calls_named(ctx, "StepLR")
    sgd_other, sgd_x = calls_named(ctx, "SGD")
    assert [settings.fills_parameter_default(model, c) for c in (adam, step_lr, sgd_other, sgd_x)] == \
        [True, True, True, False]  # ``x`` is a local, not a parameter


def test_loaders():
    ctx, sem = analyses("""
        import torch
        from torch.utils.data import DataLoader
        def main(ds, model, root):
            a = DataLoader(ds, batch_size=8, shuffle=True)
            testloader = DataLoader(ds, batch_size=8)
            b = DataLoader(MNIST(root, train=False), batch_size=8)
            c = DataLoader(ds, batch_size=8)
            d = DataLoader(ds, batch_size=8)
            evaluate(model, c)
            fit(model, d)
        """)
    a, test, b, c, d = calls_named(ctx, "DataLoader")
    assert [loaders.feeds_training(ctx, x) for x in (a, test, b, c, d)] == [True, False, False, False, False]
    assert [loaders.feeds_evaluation(sem, x) for x in (test, b, c, d)] == [True, True, True, False]


def test_range_stop_and_constructed_optimizer():
    ctx, sem = analyses("""
        import torch
        def get(img):
            return torch.optim.LBFGS([img])
        opt = get(x)
        for e in range(start, start + 200):
            opt.step()
        for e in range(1, n + 1):
            pass
        """)
    stops = [ctx.module.code_for_node(epochs.range_stop(ctx, lp.node.iter)) for lp in sem.model.loops.values()]
    assert stops == ["200", "n"]
    step = calls_named(ctx, "opt.step")[0]
    assert optim_classes.constructed_optimizer(sem, "opt", step) == "torch.optim.LBFGS"
