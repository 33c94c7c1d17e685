"""TL013 scheduler-step-granularity beyond the embedded cases: fixtures, an epoch's training in
another module."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl013_scheduler_step_granularity import per_batch_message, per_epoch_message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL013"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl013_scheduler_step_granularity.py", 19)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL013"], dedent=False) == []


ENGINE = """
def train_one_epoch(model, loader, optimizer, scheduler=None):
    for x, y in loader:
        optimizer.zero_grad()
        model(x, y).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
"""
MAIN = """
import torch
from engine import train_one_epoch
def per_epoch(model, loader, optimizer, epochs):
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, 0.1, epochs=epochs, steps_per_epoch=len(loader))
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer)
        sched.step()
def per_batch(model, loader, optimizer, epochs):
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, 0.1, epochs=epochs, steps_per_epoch=len(loader))
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer, sched)
"""


def test_epoch_trained_in_another_module():
    """The batch loop lives in engine.py: stepping after `train_one_epoch(...)` is once per
    epoch; handing the scheduler to it leaves the stepping to engine.py (silent)."""
    findings = lint_tree({"engine.py": ENGINE, "main.py": MAIN}, select=["TL013"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("main.py", 8, per_epoch_message("sched", "OneCycleLR"))]


# -- the trainer layout across modules (issue 40) -------------------------------------------

TRAINER_MODULE = """
class Trainer:
    def __init__(self, model, train_loader, optimizer, scheduler):
        self.model = model
        self.train_loader = train_loader
        self.optimizer = optimizer
        self.scheduler = scheduler

    def train_epoch(self):
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            self.model(x).sum().backward()
            self.optimizer.step()
            self.scheduler.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
"""
ENGINE_MODULE = """
def train(model, loader, opt, scheduler, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
            scheduler.step()
"""


def _train(schedule: str, call: str = "Trainer(model, loader, opt, sched).fit(cfg.epochs)",
           module: str = "trainer", name: str = "Trainer") -> str:
    return f"""
import torch
from {module} import {name}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = {schedule}
{call}
"""


def test_trainer_layout_across_modules():
    """train.py builds an epoch-counting StepLR and hands it to Trainer(...) in trainer.py, which
    keeps it as self.scheduler and steps it every batch: reported in trainer.py."""
    findings = lint_tree({"trainer.py": TRAINER_MODULE,
                          "train.py": _train("torch.optim.lr_scheduler.StepLR(opt, step_size=cfg.step_size)")},
                         select=["TL013"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("trainer.py", 14, per_batch_message("self.scheduler", "StepLR"))]


def test_trainer_layout_with_a_step_counting_schedule_is_silent():
    findings = lint_tree({"trainer.py": TRAINER_MODULE,
                          "train.py": _train("torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=cfg.steps)")},
                         select=["TL013"])
    assert findings == []


def test_a_parameter_filled_by_another_module():
    findings = lint_tree({"engine.py": ENGINE_MODULE,
                          "train.py": _train("torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=200)",
                                             "train(model, loader, opt, scheduler=sched, epochs=200)",
                                             "engine", "train")},
                         select=["TL013"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("engine.py", 8, per_batch_message("scheduler", "CosineAnnealingLR"))]


def test_schedules_that_disagree_are_not_judged():
    findings = lint_tree({"engine.py": ENGINE_MODULE,
                          "a.py": _train("torch.optim.lr_scheduler.StepLR(opt, 30)",
                                         "train(model, loader, opt, sched, 90)", "engine", "train"),
                          "b.py": _train("torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=n)",
                                         "train(model, loader, opt, sched, 90)", "engine", "train")},
                         select=["TL013"])
    assert findings == []


def test_two_packages_with_a_trainer_of_the_same_name():
    """Facts are keyed by module: pkg_a's train.py hands its Trainer an epoch-counting StepLR,
    pkg_b's hands its own Trainer (same module and class names) a OneCycleLR; each package gets
    the findings it gets alone."""
    a = {"pkg_a/__init__.py": "", "pkg_a/trainer.py": TRAINER_MODULE,
         "pkg_a/train.py": _train("torch.optim.lr_scheduler.StepLR(opt, 30)", module="pkg_a.trainer")}
    b = {"pkg_b/__init__.py": "", "pkg_b/trainer.py": TRAINER_MODULE,
         "pkg_b/train.py": _train("torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=n)",
                                  module="pkg_b.trainer")}
    alone = [(f.path, f.line) for f in lint_tree(a, select=["TL013"]) + lint_tree(b, select=["TL013"])]
    together = [(f.path, f.line) for f in lint_tree({**a, **b}, select=["TL013"])]
    assert sorted(together) == sorted(alone) == [("pkg_a/trainer.py", 14)]


def test_two_script_folders_with_a_trainer_module_of_the_same_name():
    """Two projects side by side, each ``from trainer import Trainer`` (its own folder on the
    path): each train.py's schedule reaches its own trainer.py only."""
    a = {"proj_a/trainer.py": TRAINER_MODULE, "proj_a/train.py": _train("torch.optim.lr_scheduler.StepLR(opt, 30)")}
    b = {"proj_b/trainer.py": TRAINER_MODULE,
         "proj_b/train.py": _train("torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=n)")}
    alone = [(f.path, f.line) for f in lint_tree(a, select=["TL013"]) + lint_tree(b, select=["TL013"])]
    together = [(f.path, f.line) for f in lint_tree({**a, **b}, select=["TL013"])]
    assert sorted(together) == sorted(alone) == [("proj_a/trainer.py", 14)]
