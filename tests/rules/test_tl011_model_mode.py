"""TL011 model-mode beyond the embedded cases: the model's class in another file (the project
pass settles dropout / batch norm through the index), fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl011_model_mode import _MAY, evaluated_in_training_mode, left_in_eval_mode
from torchlint.testing import lint_tree, notebook

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

EVALUATE = """
import torch
from models import Net

model = Net()
model.load_state_dict(torch.load("net.pt"))
with torch.no_grad():
    for x, y in test_loader:
        model(x)
"""

EPOCHS = """
import torch
import torch.nn as nn
from models import Net

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

def validate(model, val_loader):
    model.eval()
    with torch.no_grad():
        for x, _ in val_loader:
            model(x)

for epoch in range(10):
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    validate(model, val_loader)
"""

DROPOUT = """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.drop = nn.Dropout(0.2)
"""

PLAIN = """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
"""


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def _found(files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, f.message) for f in lint_tree(files, select=["TL011"])]


def test_class_with_dropout_in_another_file_is_known():
    assert _found({"models.py": DROPOUT, "evaluate.py": EVALUATE}) == [
        ("evaluate.py", 8, evaluated_in_training_mode("model", "test_loader"))]


def test_class_with_neither_dropout_nor_batch_norm_in_another_file_is_not_reported():
    assert _found({"models.py": PLAIN, "evaluate.py": EVALUATE}) == []
    assert _found({"models.py": PLAIN, "train.py": EPOCHS}) == []


def test_class_the_project_does_not_define_says_may():
    assert _found({"evaluate.py": EVALUATE}) == [("evaluate.py", 8, evaluated_in_training_mode("model", "test_loader", _MAY))]


def test_batch_norm_through_a_base_and_a_submodule_in_other_files():
    files = {
        "blocks.py": "import torch.nn as nn\nclass Block(nn.Module):\n    def __init__(self):\n"
                     "        super().__init__()\n        self.norm = nn.BatchNorm1d(8)\n",
        "base.py": "import torch.nn as nn\nfrom blocks import Block\nclass Base(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n        self.block = Block()\n",
        "models.py": "from base import Base\nclass Net(Base):\n    pass\n",
        "evaluate.py": EVALUATE,
    }
    assert _found(files) == [("evaluate.py", 8, evaluated_in_training_mode("model", "test_loader"))]


def test_eval_left_on_with_the_class_in_another_file():
    assert _found({"models.py": DROPOUT, "train.py": EPOCHS}) == [
        ("train.py", 11, left_in_eval_mode("model.eval()", "model"))]


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL011"], dedent=False)
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("tl011_model_mode.py", 15, evaluated_in_training_mode("model", "test_loader"))]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL011"], dedent=False) == []


def test_layers_built_by_a_same_file_helper_read_as_unknown():
    models = ("import torch.nn as nn\ndef make_layers():\n    return nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))\n"
              "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.features = make_layers()\n")
    assert _found({"models.py": models, "evaluate.py": EVALUATE}) == [
        ("evaluate.py", 8, evaluated_in_training_mode("model", "test_loader", _MAY))]


EXTRACT = """
import torch
from factory import get_model

model = get_model().to("cpu")
with torch.no_grad():
    for batch in test_loader:
        model(batch)
"""


def _factory(body: str) -> str:
    return ("import torch.nn as nn\n\n"
            "def get_model():\n"
            "    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))  # the layers before the head\n"
            f"{body}")


def test_model_from_an_imported_factory_that_calls_eval_is_in_eval_mode():
    # fairseq MMPT extract.py: get_model() in a sibling module returns the model after model.eval().
    assert _found({"factory.py": _factory("    model.eval()\n    return model\n"), "extract.py": EXTRACT}) == []
    assert _found({"factory.py": _factory("    return model.eval()\n"), "extract.py": EXTRACT}) == []


def test_model_from_an_imported_factory_that_does_not_call_eval_is_reported():
    expected = [("extract.py", 7, evaluated_in_training_mode("model", "test_loader", _MAY))]
    assert _found({"factory.py": _factory("    return model\n"), "extract.py": EXTRACT}) == expected
    # eval() then train() again: training mode is what comes back.
    assert _found({"factory.py": _factory("    model.eval()\n    model.train()\n    return model\n"),
                   "extract.py": EXTRACT}) == expected
    # The factory is not in the project: nothing is known about it.
    assert _found({"extract.py": EXTRACT}) == expected


_UNREAD_EVAL = (
    "model = RNN(28, 128, 2, 10)\n"
    "with torch.no_grad():\n"
    "    for images, labels in test_loader:\n"
    "        outputs = model(images)\n")


def test_a_class_nobody_can_read_is_hedged_in_a_module_and_silent_in_a_notebook():
    """A ``.py`` file evaluating a model whose class it neither defines nor imports gets the
    hedged message; a notebook whose class sits in a cell that does not parse gets TL000 for
    the cell and no TL011 (Jupyter cannot run it until the cell is fixed)."""
    from torchlint.checks.tl011_model_mode import evaluated_unread

    found = lint_tree({"evaluate.py": "import torch\n" + _UNREAD_EVAL}, select=["TL011"])
    assert [f.message for f in found] == [evaluated_unread("model", "RNN", False)]
    cells = notebook("import torch\nimport torch.nn as nn\n",
                     "class RNN(nn.Module):\n    def forward(self, x):\n        out = out[:,1-,:]\n",
                     _UNREAD_EVAL)
    found = lint_tree({"rnn.ipynb": cells}, select=["TL000", "TL011"], dedent=False)
    assert [f.rule for f in found] == ["TL000"]
