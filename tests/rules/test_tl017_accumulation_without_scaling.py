"""TL017 accumulation-without-scaling beyond the embedded cases: criteria and training helpers
from other files, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl017_accumulation_without_scaling import message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TRAIN = """
import torch
from models import Net
from losses import FocalLoss

model = Net()
criterion = FocalLoss()
optimizer = torch.optim.AdamW(model.parameters())
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y){scaling}
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
"""
MODELS = "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n"
LOSSES = "import torch.nn as nn\nclass FocalLoss(nn.Module):\n    def forward(self, x, y):\n        return x.mean()\n"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def _found(files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, f.message) for f in lint_tree(files, select=["TL017"])]


def test_model_and_criterion_from_other_files():
    files = {"models.py": MODELS, "losses.py": LOSSES, "train.py": TRAIN.format(scaling="")}
    assert _found(files) == [("train.py", 11, message("loss.backward()", "accum", "optimizer.step()"))]


def test_divided_loss_with_imported_criterion_is_clean():
    files = {"models.py": MODELS, "losses.py": LOSSES, "train.py": TRAIN.format(scaling=" / accum")}
    assert _found(files) == []


def test_loss_from_a_helper_in_another_file_is_unknown():
    train = TRAIN.replace("loss = criterion(model(x), y){scaling}", "loss = compute_loss(model, x, y)")
    files = {"models.py": MODELS, "helpers.py": "def compute_loss(m, x, y):\n    return m(x).mean() / 4\n",
             "train.py": "from helpers import compute_loss\n" + train}
    assert _found(files) == []


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL017"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl017_accumulation_without_scaling.py", 14)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL017"], dedent=False) == []
