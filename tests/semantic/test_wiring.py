"""``semantic.wiring``: which modules an optimizer covers, the later stores of new layers and
parameters, fresh rebuilds of a model, and whether the optimizer is stepped after a point."""

from __future__ import annotations

import libcst as cst

from tests.semantic.test_modes import analyses
from torchlint.semantic.branches import catches
from torchlint.semantic.wiring import (covers, optimizer_bindings, parameter_stores, rebuilds,
                                       rewired_after, steps_after)
from torchlint.tree import iter_nodes


def _bindings(src):
    _, sem = analyses(src)
    return sem, {o.binding.key: o for o in optimizer_bindings(sem)}


def test_what_an_optimizer_covers():
    sem, found = _bindings("""
        import itertools
        import torch
        params = model.parameters()
        a = torch.optim.SGD(model.parameters(), lr=0.1)
        b = torch.optim.Adam(filter(lambda p: p.requires_grad, net.to(device).parameters()))
        c = torch.optim.SGD([{"params": model.backbone.parameters(), "lr": 1e-4},
                             {"params": model.head.parameters()}], lr=0.1)
        d = torch.optim.Adam(itertools.chain(enc.parameters(), dec.parameters()))
        e = torch.optim.Adam(list(g.parameters()) + list(h.named_parameters()))
        f = torch.optim.Adam(params)
        g2 = torch.optim.Adam(get_params(model))
        h2 = torch.optim.Adam(params=model.fc.parameters())
        """)
    assert found["a"].covers == ("model",)
    assert found["b"].covers == ("net",)
    assert found["c"].covers == ("model.backbone", "model.head")
    assert found["d"].covers == ("enc", "dec")
    assert found["e"].covers == ("g", "h")
    assert found["f"].covers == ("model",)
    assert found["g2"].covers == ()
    assert found["h2"].covers == ("model.fc",)


def test_covers_is_a_path_prefix():
    assert covers("model", "model.fc") and covers("model", "model.classifier[6]")
    assert covers("model.head", "model.head.fc")
    assert not covers("model", "model_ema.fc") and not covers("model.head", "model.header")


def test_stores_of_layers_and_parameters_into_an_object():
    _, sem = analyses("""
        import torch
        import torch.nn as nn
        def f(model):
            model.fc = nn.Linear(3, 2)
            model.classifier[6] = nn.Linear(4096, 2)
            model.act = nn.ReLU()
            model.head = nn.Identity()
            model.scale = nn.Parameter(torch.ones(1))
            model.name = "resnet"
            head = nn.Linear(2, 2)
            setattr(model, "extra", head)
            model.add_module("aux", nn.Conv2d(3, 3, 1))
            model.register_parameter("bias2", nn.Parameter(torch.zeros(2)))
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
                self.add_module("x", nn.Linear(2, 2))
        """)
    function = next(s for s in sem.model.scopes.values() if s.name == "f")
    assert [s.target for s in parameter_stores(sem, function)] == [
        "model.fc", "model.classifier[6]", "model.scale", "model.<added>", "model.<added>", "model.<added>"]
    init = next(s for s in sem.model.scopes.values() if s.name == "__init__")
    assert parameter_stores(sem, init) == []  # a module building its own layers


def test_fresh_rebuilds_not_wrappers():
    _, sem = analyses("""
        import torch
        import torch.nn as nn
        from torchvision import models
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model = nn.DataParallel(model)
        model = model.to("cuda")
        model = Net2()
        model = models.resnet18()
        model = torch.load("m.pt")
        model = str(model_name)
        """)
    module = sem.model.module
    opt = next(b for b in module.bindings["opt"])
    assert [sem.ctx.module.code_for_node(b.value) for b in rebuilds(sem, "model", module, opt.node)] == [
        "Net2()", "models.resnet18()", 'torch.load("m.pt")']


def test_steps_after_and_rewiring():
    _, sem = analyses("""
        import torch
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        def train(x, y):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        def own(model):
            opt = torch.optim.Adam(model.parameters())
            opt.step()
        mark_a = 1
        train(x, y)
        mark_b = 1
        own(model)
        fit(model, opt)
        mark_c = 1
        opt.add_param_group({"params": extra})
        """)
    module = sem.model.module
    marks = {k: module.bindings[k][0].node for k in ("mark_a", "mark_b", "mark_c")}
    assert steps_after(sem, module, marks["mark_a"], "opt")  # through train(), which steps the global
    assert steps_after(sem, module, marks["mark_b"], "opt")  # handed to fit()
    assert not steps_after(sem, module, marks["mark_c"], "opt")
    assert rewired_after(sem, module, "opt", marks["mark_c"])  # add_param_group
    assert not rewired_after(sem, module, "model", marks["mark_a"])


def test_steps_after_ignores_a_function_stepping_its_own_optimizer():
    _, sem = analyses("""
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        def own(model):
            opt = torch.optim.Adam(model.parameters())
            opt.step()
        mark = 1
        own(model)
        """)
    module = sem.model.module
    assert not steps_after(sem, module, module.bindings["mark"][0].node, "opt")


def test_catches():
    ctx, sem = analyses("""
        try:
            a()
        except RuntimeError as e:
            print(e)
        try:
            b()
        except (ValueError, torch.cuda.OutOfMemoryError):
            pass
        try:
            c()
        except ValueError:
            pass
        """)
    calls = {n.func.value: n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
    assert catches(ctx, calls["a"], "RuntimeError")
    assert catches(ctx, calls["b"], "OutOfMemoryError")
    assert not catches(ctx, calls["c"], "RuntimeError")
    assert not catches(ctx, calls["print"], "RuntimeError")  # in the handler, not the body


def test_an_optimizer_built_by_a_same_file_factory():
    sem, found = _bindings("""
        import torch
        def make_optimizer(net, lr):
            return torch.optim.SGD(net.parameters(), lr=lr)
        def make_head_optimizer(net):
            return torch.optim.Adam(net.head.parameters())
        def not_a_factory(net):
            return net
        opt = make_optimizer(model.to("cuda"), 0.1)
        head_opt = make_head_optimizer(net=model)
        other = not_a_factory(model)
        """)
    assert found["opt"].covers == ("model",)
    assert found["head_opt"].covers == ("model.head",)
    assert "other" not in found
