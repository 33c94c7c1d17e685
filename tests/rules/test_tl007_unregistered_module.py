"""TL007 unregistered-module beyond the embedded cases: multi-file projects, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl007_unregistered_module import buffer_message, container_message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL007"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl007_unregistered_module.py", 9)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL007"], dedent=False) == []


BASE = """
import torch.nn as nn
class Backbone(nn.Module):
    pass
"""
MODEL = """
import torch
import torch.nn as nn
from pkg.base import Backbone
class Net(Backbone):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4) for _ in range(3)]
        self.mask = torch.ones(4)
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.mask
"""
TRAIN = """
import torch
from pkg.models import Net
model = Net().to("cuda")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_module_through_a_base_in_another_file():
    findings = lint_tree({"pkg/base.py": BASE, "pkg/models.py": MODEL, "train.py": TRAIN}, select=["TL007"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("pkg/models.py", 8, container_message("layers", "list")),
        ("pkg/models.py", 9, buffer_message("mask")),
    ]


def test_base_that_is_no_module_in_another_file_stays_silent():
    plain = "class Backbone:\n    pass\n"
    assert lint_tree({"pkg/base.py": plain, "pkg/models.py": MODEL}, select=["TL007"]) == []


UNREAD = """
import torch.nn as nn
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(4, 4) for _ in range(3)]
"""
READER = """
from pkg.stack import Stack
class Deep(Stack):
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
"""


def test_container_no_code_reads_is_reported_only_where_another_file_may_read_it():
    # Alone, the layers kept in the list compute nothing (a demonstration); imported by a file
    # whose subclass runs them, they are the bug.
    assert lint_tree({"pkg/stack.py": UNREAD}, select=["TL007"]) == []
    findings = lint_tree({"pkg/stack.py": UNREAD, "pkg/deep.py": READER}, select=["TL007"])
    assert [(f.path, f.line, f.message) for f in findings] == [("pkg/stack.py", 6, container_message("blocks", "list"))]
