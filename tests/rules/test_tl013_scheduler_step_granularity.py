"""TL013 scheduler-step-granularity beyond the embedded cases: fixtures, an epoch's training in
another module."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl013_scheduler_step_granularity import per_epoch_message
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
