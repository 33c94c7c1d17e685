"""TL022 loss-input-mismatch beyond the embedded cases: the model in one file, its loss in another."""

from __future__ import annotations

from torchlint.checks.tl022_loss_input_mismatch import message
from torchlint.semantic.activations import LOGITS, Source
from torchlint.testing import lint_tree

MODELS = """
import torch.nn as nn
import torch.nn.functional as F
class Scores(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        return self.fc(x)
class LogProbs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)
class WideScores(Scores):
    pass
"""
TRAIN = """
import torch.nn as nn
from models import Scores, LogProbs, WideScores
model = Scores()
other = LogProbs()
wide = WideScores()
criterion = nn.NLLLoss()
for x, y in loader:
    loss = criterion(model(x), y) + criterion(other(x), y) + criterion(wide(x), y)
"""


def test_model_defined_in_another_file():
    findings = lint_tree({"models.py": MODELS, "train.py": TRAIN}, select=["TL022"])
    assert [(f.path, f.line, f.column, f.message) for f in findings] == [
        ("train.py", 9, 22, message(Source("cls", "models.Scores"), LOGITS, "input", "criterion", "nll")),
        ("train.py", 9, 72, message(Source("cls", "models.WideScores"), LOGITS, "input", "criterion", "nll")),
    ]


def test_model_not_linted_stays_silent():
    assert lint_tree({"train.py": TRAIN}, select=["TL022"]) == []


def test_a_trainer_in_another_file_given_the_model_and_the_loss():
    trainer = """
import torch.nn as nn
class Trainer:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
    def step(self, x, y):
        return self.criterion(self.model(x), y)
"""
    main = """
import torch.nn as nn
from models import Scores, LogProbs
from trainer import Trainer
Trainer(Scores(), nn.BCELoss())
"""
    findings = lint_tree({"models.py": MODELS, "trainer.py": trainer, "main.py": main}, select=["TL022"])
    assert [(f.path, f.line) for f in findings] == [("trainer.py", 8)]
    assert findings[0].message == message(Source("cls", "models.Scores"), LOGITS, "input", "self.criterion", "bce")


def test_the_fix_of_a_functional_loss_given_a_model_defined_in_another_file():
    train = """
import torch.nn.functional as F
from models import Scores
model = Scores()
def step(x, y):
    return F.nll_loss(model(x), y)
"""
    findings = lint_tree({"models.py": MODELS, "train.py": train}, select=["TL022"])
    assert [(f.path, f.line) for f in findings] == [("train.py", 6)]
    assert findings[0].fix is not None and findings[0].fix.edits[0].content == "F.cross_entropy"


def test_a_test_files_models_still_inform_other_files_and_its_own_losses_are_skipped():
    """skip-tests: a test file's own loss is a fixture (not reported), but the model classes it
    defines and the calls it makes stay facts of the project: a training script using a model
    a test helper defines is reported."""
    helper_test = MODELS + """
criterion = nn.NLLLoss()
net = Scores()
def test_step(x, y):
    return criterion(net(x), y)
"""
    train = TRAIN.replace("from models import", "from tests.test_models import")
    findings = lint_tree({"tests/__init__.py": "", "tests/test_models.py": helper_test, "train.py": train},
                         select=["TL022"])
    assert [(f.path, f.line) for f in findings] == [("train.py", 9), ("train.py", 9)]
    linted_too = lint_tree({"tests/__init__.py": "", "tests/test_models.py": helper_test, "train.py": train},
                           select=["TL022"], options={"TL022": {"skip-tests": False}})
    assert sorted({f.path for f in linted_too}) == ["tests/test_models.py", "train.py"]
