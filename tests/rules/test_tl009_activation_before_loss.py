"""TL009 activation-before-loss beyond the embedded cases: a model in one file trained in another."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl009_activation_before_loss import message, model_source
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL009"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl009_activation_before_loss.py", 23)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL009"], dedent=False) == []


MODELS = """
import torch.nn as nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=1))
    def forward(self, x):
        return self.net(x)
class Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        return self.fc(x)
class Wide(Classifier):
    pass
"""
TRAIN = """
import torch.nn as nn
from models import Classifier, Logits, Wide
model = Classifier()
other = Logits()
wide = Wide()
criterion = nn.CrossEntropyLoss()
for x, y in loader:
    loss = criterion(model(x), y) + criterion(other(x), y) + criterion(wide(x), y)
"""


def test_model_defined_in_another_file():
    findings = lint_tree({"models.py": MODELS, "train.py": TRAIN}, select=["TL009"])
    assert [(f.path, f.line, f.column, f.message) for f in findings] == [
        ("train.py", 9, 22, message(model_source("Classifier", "softmax"), "criterion", "cross_entropy", "softmax")),
        ("train.py", 9, 72, message(model_source("Wide", "softmax"), "criterion", "cross_entropy", "softmax")),
    ]


def test_model_not_linted_stays_silent():
    assert lint_tree({"train.py": TRAIN}, select=["TL009"]) == []


def test_log_softmax_model_with_cross_entropy_is_silent():
    models = MODELS.replace("nn.Softmax(dim=1)", "nn.LogSoftmax(dim=1)")
    assert lint_tree({"models.py": models, "train.py": TRAIN}, select=["TL009"]) == []
