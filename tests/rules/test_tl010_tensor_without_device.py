"""TL010 tensor-without-device beyond the embedded cases: multi-file projects, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl010_tensor_without_device import message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL010"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl010_tensor_without_device.py", 15)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL010"], dedent=False) == []


BASE = "import torch.nn as nn\nclass Encoder(nn.Module):\n    pass\n"
MODEL = """
import torch
from pkg.base import Encoder
class Net(Encoder):
    def forward(self, x):
        scores = x @ x.transpose(-2, -1)
        scores = scores + torch.eye(x.size(1))
        return scores
"""
TRAIN = """
from pkg.models import Net
model = Net().cuda()
"""


def test_module_through_a_base_in_another_file():
    findings = lint_tree({"pkg/base.py": BASE, "pkg/models.py": MODEL, "train.py": TRAIN}, select=["TL010"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("pkg/models.py", 7, message("torch.eye", "Net", "scores", "eye"))]


def test_base_that_is_no_module_stays_silent():
    plain = "class Encoder:\n    pass\n"
    assert lint_tree({"pkg/base.py": plain, "pkg/models.py": MODEL, "train.py": TRAIN}, select=["TL010"]) == []


def test_test_files_are_skipped_unless_asked():
    """A test's model usually runs on the CPU only (the review's one debatable finding)."""
    tree = {"pkg/base.py": BASE, "tests/test_models.py": MODEL}
    assert lint_tree(tree, select=["TL010"]) == []
    findings = lint_tree(tree, select=["TL010"], options={"TL010": {"skip-tests": False}})
    assert [(f.path, f.line) for f in findings] == [("tests/test_models.py", 7)]


RNN_SCRIPT = """
import torch
import torch.nn as nn
class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16)
    def forward(self, x):
        h = torch.zeros(1, x.size(1), 16)
        return self.lstm(x, (h, h))[0]
model = RNN(){move}
"""


def test_a_script_that_moves_nothing_keeps_its_model_on_the_cpu():
    """Each script defines and builds its own ``RNN``: only the one moved to the GPU is reported,
    whatever the other scripts of the project do with a class of the same name."""
    tree = {"cpu_only.py": RNN_SCRIPT.format(move="  # .cuda()"), "on_gpu.py": RNN_SCRIPT.format(move=".cuda()")}
    assert [(f.path, f.line) for f in lint_tree(tree, select=["TL010"])] == [("on_gpu.py", 9)]


def test_a_model_built_in_another_file_follows_that_file():
    model = RNN_SCRIPT.replace("model = RNN(){move}\n", "")
    cpu = {"pkg/model.py": model, "train.py": "from pkg.model import RNN\nmodel = RNN()\n"}
    assert lint_tree(cpu, select=["TL010"]) == []
    gpu = {"pkg/model.py": model, "train.py": "from pkg.model import RNN\nmodel = RNN().to('cuda')\n"}
    assert [(f.path, f.line) for f in lint_tree(gpu, select=["TL010"])] == [("pkg/model.py", 9)]
