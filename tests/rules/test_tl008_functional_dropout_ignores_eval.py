"""TL008 functional-dropout-ignores-eval beyond the embedded cases: multi-file projects, fixtures."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl008_functional_dropout_ignores_eval import message
from torchlint.testing import lint_tree, notebook

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL008"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl008_functional_dropout_ignores_eval.py", 14)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL008"], dedent=False) == []


MODEL = """
import torch.nn.functional as F
from pkg.base import Base
class Net(Base):
    def forward(self, x):
        return F.dropout(x, 0.5)
"""


def test_module_through_a_base_in_another_file():
    base = "import torch.nn as nn\nclass Base(nn.Module):\n    pass\n"
    findings = lint_tree({"pkg/base.py": base, "pkg/models.py": MODEL}, select=["TL008"])
    assert [(f.path, f.line, f.message) for f in findings] == [("pkg/models.py", 6, message("F.dropout", "Net", "dropout"))]


def test_base_that_is_no_module_stays_silent():
    base = "class Base:\n    pass\n"
    assert lint_tree({"pkg/base.py": base, "pkg/models.py": MODEL}, select=["TL008"]) == []


_DECODER = (
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
    "class MLPDecoder(nn.Module):\n"
    "    def __init__(self, n_in, n_out, do_prob=0.0):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(n_in, n_out)\n"
    "        self.dropout_prob = do_prob\n"
    "    def forward(self, x):\n"
    "        return F.dropout(self.fc(x), self.dropout_prob)\n")


def test_notebook_rate_always_zero_is_silent_and_one_rate_reports():
    """In a notebook every construction is in view: a ``do_prob=0.0`` default no construction
    overrides drops nothing in any mode (semantic.modes.rate_always_zero); one construction
    with a rate is reported, in the cell and line of the call."""
    silent = lint_tree({"graphs.ipynb": notebook(_DECODER, "decoder = MLPDecoder(16, 4)\ndecoder.eval()\n")},
                       select=["TL008"], dedent=False)
    assert silent == []
    found = lint_tree({"graphs.ipynb": notebook(_DECODER, "decoder = MLPDecoder(16, 4)\ndecoder.eval()\n",
                                                 "other = MLPDecoder(16, 4, do_prob=0.5)\n")},
                      select=["TL008"], dedent=False)
    assert [(f.line, f.message) for f in found] == [(9, message("F.dropout", "MLPDecoder", "dropout"))]


def test_module_built_and_never_evaluated_is_reported_when_another_file_imports_it():
    """A script's class that the script only trains is left alone (the GAN discriminator);
    another file importing the module may evaluate it, so there it is reported."""
    gan = (
        "import torch.nn as nn\n"
        "import torch.nn.functional as F\n"
        "class D(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 1)\n"
        "    def forward(self, x):\n"
        "        return self.fc(F.dropout(x, 0.3))\n"
        "d = D()\n")
    assert lint_tree({"gan.py": gan}, select=["TL008"]) == []
    found = lint_tree({"gan.py": gan, "score.py": "from gan import D\nm = D()\nm.eval()\n"}, select=["TL008"])
    assert [(f.path, f.line) for f in found] == [("gan.py", 8)]
