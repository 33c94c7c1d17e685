"""TL021 optimizer-misses-parameters beyond the embedded cases: models and layers whose classes
live in other modules of the project, and what one scope of one file cannot see."""

from __future__ import annotations

from torchlint.checks.tl021_optimizer_misses_parameters import rebuilt_message, replaced_message
from torchlint.testing import lint_tree

MODELS = """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
class Head(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.out = nn.Linear(4, n)
"""
LOOP = """
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
"""


def _found(files):
    return [(f.path.rsplit("/", 1)[-1], f.span.line, f.message) for f in lint_tree(files, ["TL021"])]


def test_a_model_class_of_another_module_built_again():
    train = "import torch\nfrom models import Net\nmodel = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
            "model = Net()\n" + LOOP
    assert _found({"models.py": MODELS, "train.py": train}) == [("train.py", 5, rebuilt_message("model", "optimizer"))]


def test_a_head_of_another_module_set_after_the_optimizer():
    train = "import torch\nfrom models import Net, Head\nmodel = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
            "model.head = Head(10)\n" + LOOP
    assert _found({"models.py": MODELS, "train.py": train}) == [
        ("train.py", 5, replaced_message("model.head", "optimizer", "model"))]


def test_the_fix_across_modules_is_silent():
    train = "import torch\nfrom models import Net, Head\nmodel = Net()\nmodel.head = Head(10)\n" \
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" + LOOP
    assert _found({"models.py": MODELS, "train.py": train}) == []


def test_an_optimizer_factory_of_another_module_is_not_followed():
    # The rule judges one file: an optimizer built by an imported factory covers nothing it can name.
    utils = "import torch\ndef build_optimizer(net):\n    return torch.optim.SGD(net.parameters(), lr=0.1)\n"
    train = "import torch.nn as nn\nfrom utils import build_optimizer\noptimizer = build_optimizer(model)\n" \
            "model.fc = nn.Linear(4, 3)\n" + LOOP
    assert _found({"utils.py": utils, "train.py": train}) == []
