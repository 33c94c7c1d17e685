"""TL012 amp-unscaled-clipping beyond the embedded cases: fixtures, helpers in other modules."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl012_amp_unscaled_clipping import clip_message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL012"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl012_amp_unscaled_clipping.py", 15)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL012"], dedent=False) == []


UTILS = """
import torch
def unscale_and_clip(scaler, optimizer, model, max_norm):
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
def log_norm(model):
    return sum(p.grad.norm() for p in model.parameters())
"""
TRAIN = """
import torch
from utils import unscale_and_clip, log_norm
scaler = torch.cuda.amp.GradScaler()
def fine(model, optimizer, loss):
    scaler.scale(loss).backward()
    unscale_and_clip(scaler, optimizer, model, 1.0)
    scaler.step(optimizer)
    scaler.update()
def wrong(model, optimizer, loss):
    scaler.scale(loss).backward()
    log_norm(model)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
"""


def test_helpers_in_another_module():
    """A helper of another module handed the scaler may unscale (silent); one handed only the
    model cannot, so the clip after it is still on scaled gradients."""
    findings = lint_tree({"utils.py": UTILS, "train.py": TRAIN}, select=["TL012"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("train.py", 13, clip_message("clip_grad_norm_", "scaler"))]
