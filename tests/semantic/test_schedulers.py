"""``semantic.schedulers``, Lightning's side: what ``configure_optimizers`` hands Lightning as
a scheduler (``returned_as_scheduler``), whether a file optimises manually
(``optimises_manually``), and a dict element's literal key (``dict_key``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.schedulers import dict_key, optimises_manually, returned_as_scheduler
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def named(ctx, name: str) -> list[cst.Name]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Name) and n.value == name]


@pytest.mark.parametrize(("returned", "expected"), [
    ("return [opt], [sched]", True),
    ("return ([opt], [sched])", True),
    ("return [opt], [warmup, sched]", True),
    ('return {"optimizer": opt, "lr_scheduler": sched}', True),
    ("return [sched], [opt]", False),  # the first list holds optimizers
    ("return [opt], [sched], extra", False),  # not a pair
    ('return {"optimizer": opt, "scheduler": sched}', False),  # a scheduler config's own key
    ('config = {"optimizer": opt, "lr_scheduler": sched}\nreturn config', False),  # not in the return
    ("out = [opt], [sched]\nreturn out", False),
    ("return sched", False),
])
def test_returned_as_scheduler(returned, expected):
    ctx, _ = analyses("def configure_optimizers(self):\n" + textwrap.indent(returned, "    ") + "\n")
    assert returned_as_scheduler(ctx, named(ctx, "sched")[-1]) is expected


@pytest.mark.parametrize(("src", "expected"), [
    ("class M(L.LightningModule):\n    def __init__(self):\n        self.automatic_optimization = False\n", True),
    ("class M(L.LightningModule):\n    def training_step(self, batch):\n        sch = self.lr_schedulers()\n", True),
    ("def step(module):\n    module.lr_schedulers().step()\n", True),
    ("class M(L.LightningModule):\n    def configure_optimizers(self):\n        return [opt], [sched]\n", False),
    ("x = 1\n", False),
])
def test_optimises_manually(src, expected):
    _, model = analyses(src)
    assert optimises_manually(model) is expected


def test_dict_key():
    ctx, _ = analyses('d = {"interval": "step", name: 1, **rest}\n')
    elements = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Dict)).elements
    assert [dict_key(e) for e in elements] == ["interval", None, None]


# -- the unit a configuration sizes (issue 40) -----------------------------------------------

from torchlint.semantic.schedulers import by_setting, schedule_unit, scheduler_steps, step_budgeted  # noqa: E402


def _built(src: str):
    ctx, _ = analyses("import torch\nfrom torch.optim.lr_scheduler import CosineAnnealingLR, ExponentialLR, "
                      "MultiStepLR, StepLR\n" + src)
    return ctx, [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and (
        getattr(n.func, "value", None) in ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "OneCycleLR"))]


@pytest.mark.parametrize(("construction", "unit", "setting"), [
    ("StepLR(opt, step_size=cfg.step_size)", "epoch", True),
    ("MultiStepLR(opt, args.milestones, gamma=0.1)", "epoch", True),
    ("ExponentialLR(opt, gamma=args.gamma)", "epoch", True),
    ("StepLR(opt, step_size=30)", "epoch", False),  # a small literal
    ("CosineAnnealingLR(opt, T_max=200)", "epoch", False),
    ("CosineAnnealingLR(opt, T_max=args.epochs)", "epoch", False),
    ("StepLR(opt, step_size=cfg.lr_step * len(train_loader))", "batch", False),
    ("MultiStepLR(opt, milestones=cfg.milestone_iters)", "batch", False),
    ("CosineAnnealingLR(opt, T_max=cfg.t_max)", None, False),  # not among those counting epochs unless sized in steps
    ("StepLR(opt, step_size=cfg.size)", "epoch", True),
])
def test_schedule_unit_of_configured_sizes(construction, unit, setting):
    ctx, built = _built(f"sched = {construction}\n")
    assert schedule_unit(ctx, built[0]) == unit
    assert by_setting(ctx, built[0]) is setting


@pytest.mark.parametrize(("loop", "expected"), [
    ("for epoch in range(cfg.epochs):\n    for b in loader:\n        opt.step()\n        sched.step()\n", False),
    ("n = cfg.n_steps // len(loader) + 1\nfor epoch in range(n):\n    for b in loader:\n        opt.step()\n"
     "        sched.step()\n", True),
    ("while step < cfg.max_iters:\n    for b in loader:\n        opt.step()\n        sched.step()\n        step += 1\n",
     True),
    ("for epoch in range(cfg.epochs):\n    for b in loader:\n        opt.step()\n        sched.step()\n"
     "        if step >= cfg.max_steps:\n            break\n", True),
    ("for epoch in range(cfg.epochs):\n    for i, b in enumerate(loader):\n        if i >= cfg.max_steps_per_epoch:\n"
     "            break\n        opt.step()\n        sched.step()\n", False),
])
def test_step_budgeted(loop, expected):
    ctx, _ = analyses("import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, cfg.s)\n" + loop)
    [(site, _)] = scheduler_steps(ctx.semantic)
    assert step_budgeted(ctx.semantic.training, site) is expected


# -- schedulers made of others (review packages: torchgeo's MoCo/SimCLR) ----------------------

from torchlint.semantic.schedulers import sub_schedulers  # noqa: E402


def _composite(src: str):
    ctx, _ = analyses("import torch\nfrom torch.optim.lr_scheduler import ChainedScheduler, CosineAnnealingLR, "
                      "LinearLR, SequentialLR, StepLR\n" + src)
    calls = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
             and getattr(n.func, "value", None) in ("SequentialLR", "ChainedScheduler")]
    return ctx, calls[-1]


@pytest.mark.parametrize(("src", "unit", "parts"), [
    ("s = SequentialLR(opt, schedulers=[LinearLR(opt, total_iters=warmup_epochs), "
     "CosineAnnealingLR(opt, T_max=max_epochs)], milestones=[warmup_epochs])\n", "epoch", 2),
    ("s = SequentialLR(opt, [LinearLR(opt, total_iters=warmup_steps), "
     "CosineAnnealingLR(opt, T_max=total_steps)], [warmup_steps])\n", "batch", 2),
    ("w = LinearLR(opt, total_iters=cfg.warmup_iters)\nc = CosineAnnealingLR(opt, T_max=cfg.epochs)\n"
     "s = SequentialLR(opt, [w, c], milestones=[5])\n", "batch", 2),  # one part counts steps
    ("s = ChainedScheduler([StepLR(opt, 30), LinearLR(opt, total_iters=5)])\n", "epoch", 2),
    ("s = SequentialLR(opt, scheds, milestones=[cfg.warmup_steps])\n", "batch", None),  # the milestones tell
    ("s = SequentialLR(opt, scheds, milestones=[m])\n", None, None),
    ("s = ChainedScheduler([LinearLR(opt, total_iters=5), LinearLR(opt, total_iters=3)])\n", None, 2),
])
def test_a_composite_counts_in_its_sub_schedulers_unit(src, unit, parts):
    ctx, call = _composite(src)
    assert schedule_unit(ctx, call) == unit
    found = sub_schedulers(ctx, call)
    assert (None if found is None else len(found)) == parts
