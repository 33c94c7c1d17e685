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


# -- the trainer layout across modules (issue 40) -------------------------------------------

NETS = """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)
"""
LOGITS = NETS.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)")
TRAINER = """
import torch.nn as nn
class Trainer:
    def __init__(self, model, loader, optimizer):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer
        self.criterion = nn.CrossEntropyLoss()
    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                loss = self.criterion(self.model(x), y)
                loss.backward()
"""
ENGINE = """
import torch.nn.functional as F
def train(model, loader):
    for x, y in loader:
        out = model(x)
        F.cross_entropy(out, y).backward()
"""
MAIN = """
from model import Net
from trainer import Trainer
model = Net()
Trainer(model, loader, opt).fit(10)
"""


def test_trainer_layout_across_modules():
    """model.py's forward ends in softmax; train.py hands a Net to trainer.py's Trainer, which
    keeps it as self.model and feeds its output to CrossEntropyLoss: reported in trainer.py."""
    findings = lint_tree({"model.py": NETS, "trainer.py": TRAINER, "train.py": MAIN}, select=["TL009"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("trainer.py", 12, message(model_source("Net", "softmax"), "self.criterion", "cross_entropy", "softmax"))]


def test_a_parameter_filled_by_another_module():
    main = "from model import Net\nfrom engine import train\ntrain(Net(), loader)\n"
    findings = lint_tree({"model.py": NETS, "engine.py": ENGINE, "train.py": main}, select=["TL009"])
    assert [(f.path, f.line) for f in findings] == [("engine.py", 6)]
    assert lint_tree({"model.py": LOGITS, "engine.py": ENGINE, "train.py": main}, select=["TL009"]) == []


def test_two_script_folders_with_modules_of_the_same_name():
    """proj_a's Net ends in softmax, proj_b's (same module and class names) returns logits;
    linted together each gets what it gets alone."""
    a = {"proj_a/model.py": NETS, "proj_a/trainer.py": TRAINER, "proj_a/train.py": MAIN}
    b = {"proj_b/model.py": LOGITS, "proj_b/trainer.py": TRAINER, "proj_b/train.py": MAIN}
    alone = [(f.path, f.line) for f in lint_tree(a, select=["TL009"]) + lint_tree(b, select=["TL009"])]
    together = [(f.path, f.line) for f in lint_tree({**a, **b}, select=["TL009"])]
    assert sorted(together) == sorted(alone) == [("proj_a/trainer.py", 12)]
