"""TL002 loss-kept-with-graph: fixtures, message texts, options, several files, and the
recognisers it relies on. The embedded VALID/INVALID cases run in tests/test_rule_cases.py."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint.context import FileContext
from torchlint.imports import ImportTable
from torchlint.testing import lint_snippet, lint_tree
from torchlint.torch_api import (
    is_lightning_eval_hook,
    is_loss_constructor,
    is_loss_function,
    is_model_constructor,
    looks_like_criterion_name,
    looks_like_model_name,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def tl002(code: str, path: str = "train.py", options: dict | None = None):
    return lint_snippet(code, select=["TL002"], path=path, options={"TL002": options} if options else None)


def test_buggy_fixture_reports_the_appended_loss():
    findings = lint_tree(_project("buggy_project"), select=["TL002"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("train.py", 40)]
    assert findings[0].message == (
        "`losses.append(loss)` keeps each iteration's autograd graph alive, so memory grows every step; "
        "store `loss.item()` (or `loss.detach()`) instead"
    )


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL002"], dedent=False) == []


def test_finding_spans_the_storing_expression():
    (finding,) = tl002(
        """
        def fit(model, loader, opt):
            total = 0
            for x in loader:
                loss = model(x).mean()
                loss.backward()
                opt.step()
                total += loss
        """
    )
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (8, 9, 8, 22)
    assert finding.message.startswith("`total += loss` keeps each iteration's autograd graph alive")
    assert "accumulate `loss.item()` (or `loss.detach()`) instead" in finding.message


def test_model_output_message_suggests_detach_only():
    (finding,) = tl002(
        """
        def fit(model, loader, opt, crit):
            outputs = []
            for x, y in loader:
                out = model(x)
                crit(out, y).backward()
                opt.step()
                outputs.append(out)
        """
    )
    assert finding.message.endswith("store `out.detach()` instead")


def test_long_value_is_abbreviated():
    (finding,) = tl002(
        """
        def fit(model, loader, opt, crit):
            hist = []
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                opt.step()
                hist.append({"loss": loss, "input_norm": x.norm(), "target_mean": y.float().mean()})
        """
    )
    assert finding.message.startswith("`hist.append(...)` keeps")
    assert "store detached values" in finding.message


def test_step_methods_option_replaces_the_defaults():
    code = """
        import lightning as L
        class Model(L.LightningModule):
            def training_step(self, batch, batch_idx):
                loss = self(batch).mean()
                self.seen.append(loss)
                return loss
            def learn(self, batch):
                loss = self.loss_fn(self.model(batch), batch)
                self.losses.append(loss)
                return loss
        """
    assert [f.line for f in tl002(code)] == [6]
    findings = tl002(code, options={"step-methods": ["learn"]})
    assert [f.line for f in findings] == [10]
    assert "each training step's autograd graph" in findings[0].message
    assert tl002(code, options={"step-methods": []}) == []


def test_per_step_method_local_list_and_reset_attribute_are_fine():
    code = """
        class Trainer:
            def train_step(self, batch):
                local = []
                local.append(self.model(batch))
                self.last = []
                self.last.append(self.model(batch))
                self.window.append(self.model(batch))
                self.window.clear()
                return local
        """
    assert tl002(code) == []


def test_per_step_function_storing_in_a_global():
    code = """
        HISTORY = []
        def train_step(model, batch, opt):
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            HISTORY.append(loss)
            return loss
        """
    findings = tl002(code)
    assert [f.line for f in findings] == [7]


def test_helper_called_with_grad_in_this_file_is_reported_and_under_no_grad_is_not():
    helper = """
        import torch
        def collect(net, loader):
            outs = []
            for x in loader:
                outs.append(net(x))
            return outs
        def main(net, loader):
            {call}
        """
    assert [f.line for f in tl002(helper.replace("{call}", "collect(net, loader)"))] == [6]
    guarded = helper.replace("{call}", "with torch.no_grad():\n                collect(net, loader)")
    assert tl002(guarded) == []


def test_helper_defined_in_one_file_and_called_in_another_is_not_guessed():
    files = {
        "infer.py": """
            def collect(model, loader):
                outs = []
                for x in loader:
                    outs.append(model(x))
                return outs
            """,
        "main.py": """
            import torch
            from infer import collect
            def main(model, loader):
                with torch.no_grad():
                    return collect(model, loader)
            """,
    }
    assert lint_tree(files, select=["TL002"]) == []


def test_training_loop_in_one_file_with_model_from_another():
    files = {
        "model.py": """
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    return x
            """,
        "train.py": """
            import torch.nn as nn
            from model import Net
            def main(loader, opt):
                encoder = Net()
                crit = nn.SmoothL1Loss()
                feats, losses = [], []
                for x, y in loader:
                    f = encoder(x)
                    loss = crit(f, y)
                    loss.backward()
                    opt.step()
                    feats.append(f)
                    losses.append(loss.item())
            """,
    }
    findings = lint_tree(files, select=["TL002"])
    # ``encoder`` is not named like a model and its class lives elsewhere: only the loss
    # call and the backward are evidence, and the loss is stored as a number.
    assert findings == []


def test_local_module_class_makes_a_model():
    code = """
        import torch.nn as nn
        class Encoder(nn.Module):
            pass
        class Wrapped(Encoder):
            pass
        def main(loader, opt):
            enc = Wrapped()
            feats = []
            for x in loader:
                f = enc(x)
                f.sum().backward()
                opt.step()
                feats.append(enc(x))
        """
    assert [f.line for f in tl002(code)] == [14]


def test_requires_text_skips_files_without_stores():
    from torchlint.checks.tl002_loss_kept_with_graph import LossKeptWithGraph

    assert not LossKeptWithGraph.might_apply("loss = model(x)\nloss.backward()\n")
    assert LossKeptWithGraph.might_apply("losses.append(loss)\n")
    assert not LossKeptWithGraph.might_apply("xs.append(1)\n")


def test_graph_kept_through_unknown_helper_needs_the_backward():
    code = """
        def fit(trainer, loader, opt):
            hist = []
            for batch in loader:
                loss = trainer.compute(batch)
                hist.append(loss)
            for batch in loader:
                loss = trainer.compute(batch)
                loss.backward()
                opt.step()
                hist.append(loss)
        """
    assert [f.line for f in tl002(code)] == [11]


def _ctx(source: str) -> tuple[FileContext, cst.Module]:
    module = cst.parse_module(source)
    imports = ImportTable("example", False)
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    imports.add_cst(small)
    return FileContext("example.py", module, source, imports), module


def _expr(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        ("F.cross_entropy", True),
        ("F.binary_cross_entropy_with_logits", True),
        ("torch.nn.functional.kl_div", True),
        ("F.my_custom_loss", True),
        ("F.relu", False),
        ("cross_entropy", False),  # not imported
    ],
)
def test_is_loss_function(func, expected):
    ctx, _ = _ctx("import torch\nimport torch.nn.functional as F\n")
    assert is_loss_function(ctx, _expr(func)) is expected


def test_loss_and_model_constructors():
    ctx, _ = _ctx("import torch.nn as nn\nimport torchvision\nimport timm\nfrom transformers import AutoModelForCausalLM\n")
    assert is_loss_constructor(ctx, _expr("nn.CrossEntropyLoss"))
    assert is_loss_constructor(ctx, _expr("FocalLoss"))
    assert not is_loss_constructor(ctx, _expr("Loss"))
    assert not is_loss_constructor(ctx, _expr("nn.Linear"))
    assert is_model_constructor(ctx, _expr("nn.Linear"))
    assert is_model_constructor(ctx, _expr("torchvision.models.resnet18"))
    assert is_model_constructor(ctx, _expr("timm.create_model"))
    assert is_model_constructor(ctx, _expr("AutoModelForCausalLM.from_pretrained"))
    assert is_model_constructor(ctx, _expr("MyNet"), {"MyNet"})
    assert not is_model_constructor(ctx, _expr("MyNet"))
    assert not is_model_constructor(ctx, _expr("nn.ReLU"))
    assert not is_model_constructor(ctx, _expr("nn.MSELoss"))
    assert not is_model_constructor(ctx, _expr("nn.ModuleList"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("criterion", True), ("self.criterion", True), ("loss_fn", True), ("self._loss_fn", True),
        ("ce_loss_fn", True), ("loss_func", True), ("criterion_mse", True), ("loss", False),
        ("compute_loss", False), ("optimizer", False),
    ],
)
def test_looks_like_criterion_name(name, expected):
    assert looks_like_criterion_name(name) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("model", True), ("self.model", True), ("net", True), ("netG", True), ("ddp_model", True),
        ("self._model", True), ("generator", True), ("model_ema", False), ("ema_model", False),
        ("teacher_model", False), ("target_net", False), ("ref_model", False), ("optimizer", False),
        ("layer", False),
    ],
)
def test_looks_like_model_name(name, expected):
    assert looks_like_model_name(name) is expected


def test_lightning_eval_hooks():
    assert is_lightning_eval_hook("validation_step")
    assert is_lightning_eval_hook("on_test_epoch_end")
    assert not is_lightning_eval_hook("training_step")


def test_window_total_of_a_loss_backward_ed_after_a_conditional_rebinding_is_fine():
    # torchtune's recipes: `current_loss` is rescaled on one branch, then backward-ed; the
    # value added to the windowed total is the one backward-ed, so its graph is freed.
    assert tl002(
        """
        def train(model, loader, loss_fn, opt, accum, in_bwd, n):
            running_loss = 0
            for idx, batch in enumerate(loader):
                current_loss = loss_fn(model(batch), batch)
                running_loss += current_loss
                if in_bwd:
                    current_loss = current_loss * n
                current_loss.backward()
                if (idx + 1) % accum == 0:
                    opt.step()
                    running_loss = 0
        """
    ) == []


def test_an_accumulator_of_another_file_keeping_what_it_is_given():
    """``losses.update(loss, n)`` with ``AverageMeter`` from ``utils.py`` (``self.sum += val * n``):
    the project pass confirms the method keeps its argument; ``.item()`` and a meter that keeps
    ``float(val)`` are fine."""
    from torchlint.testing import lint_tree
    files = {
        "utils.py": "class AverageMeter:\n"
                    "    def __init__(self):\n"
                    "        self.sum, self.count = 0, 0\n"
                    "    def update(self, val, n=1):\n"
                    "        self.sum += val * n\n"
                    "        self.count += n\n"
                    "class FloatMeter:\n"
                    "    def update(self, val, n=1):\n"
                    "        self.sum += float(val) * n\n",
        "train.py": "from utils import AverageMeter, FloatMeter\n"
                    "def train(model, loader, optimizer, criterion):\n"
                    "    losses, floats = AverageMeter(), FloatMeter()\n"
                    "    for x, y in loader:\n"
                    "        loss = criterion(model(x), y)\n"
                    "        optimizer.zero_grad()\n"
                    "        loss.backward()\n"
                    "        optimizer.step()\n"
                    "        losses.update(loss, x.size(0))\n"
                    "        losses.update(loss.item(), x.size(0))\n"
                    "        floats.update(loss, x.size(0))\n",
    }
    assert [(f.path, f.line) for f in lint_tree(files, select=["TL002"])] == [("train.py", 9)]


def test_an_accumulator_reached_through_a_star_import():
    """``from utils import *`` then ``losses = AverageMeter()`` (the image-captioning tutorial's
    shape): the project pass resolves ``utils.AverageMeter``."""
    from torchlint.testing import lint_tree
    files = {
        "utils.py": "class AverageMeter:\n"
                    "    def update(self, val, n=1):\n"
                    "        self.val = val\n"
                    "        self.sum += val * n\n",
        "train.py": "from utils import *\n"
                    "def train(decoder, loader, optimizer, criterion):\n"
                    "    losses = AverageMeter()\n"
                    "    for x, y in loader:\n"
                    "        loss = criterion(decoder(x), y)\n"
                    "        optimizer.zero_grad()\n"
                    "        loss.backward()\n"
                    "        optimizer.step()\n"
                    "        losses.update(loss, x.size(0))\n"
                    "        losses.update(loss.item(), x.size(0))\n",
    }
    assert [(f.path, f.line) for f in lint_tree(files, select=["TL002"])] == [("train.py", 9)]
