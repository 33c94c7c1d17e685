"""TL023 threshold-on-logits beyond the embedded cases: the model in one file, its evaluation in another."""

from __future__ import annotations

from torchlint.checks.tl023_threshold_on_logits import message, model_why
from torchlint.testing import lint_tree

MODELS = """
import torch
import torch.nn as nn
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(16, 1)
    def forward(self, x):
        return self.score(x)
class ProbDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(16, 1)
    def forward(self, x):
        return torch.sigmoid(self.score(x))
"""
EVAL = """
import torch
from models import Detector, ProbDetector
detector = Detector()
prob = ProbDetector()
def predict(x):
    return torch.round(detector(x)), prob(x) > 0.5
"""


def test_model_defined_in_another_file():
    findings = lint_tree({"models.py": MODELS, "evaluate.py": EVAL}, select=["TL023"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("evaluate.py", 7, message("torch.round", model_why("Detector"))),
    ]
    assert findings[0].fix is not None


def test_model_not_linted_stays_silent():
    assert lint_tree({"evaluate.py": EVAL}, select=["TL023"]) == []


def test_a_model_handed_to_an_evaluation_function_in_another_file():
    evaluate = """
def accuracy(model, loader):
    hits = 0
    for x, y in loader:
        hits += ((model(x) >= 0.5).float() == y).sum().item()
    return hits
"""
    main = """
from models import Detector, ProbDetector
from evaluate import accuracy
accuracy(Detector(), loader)
"""
    findings = lint_tree({"models.py": MODELS, "evaluate.py": evaluate, "main.py": main}, select=["TL023"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("evaluate.py", 5, message(">= 0.5", model_why("Detector"))),
    ]
    probs = main.replace("accuracy(Detector(), loader)", "accuracy(ProbDetector(), loader)")
    assert lint_tree({"models.py": MODELS, "evaluate.py": evaluate, "main.py": probs}, select=["TL023"]) == []
