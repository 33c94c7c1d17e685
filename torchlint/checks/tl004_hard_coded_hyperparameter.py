"""TL004 hard-coded-hyperparameter: a training hyperparameter written as a numeric literal in
a function body or a script's top-level code.

How it works (the engine's walk, then ``finish``, then ``check_project`` for subclasses
elsewhere). The analysis comes from the shared layer (``ctx.semantic``), built only when a
question needs it:

* ``visit_Call`` recognises the watched calls -- optimizers, learning-rate schedulers,
  ``DataLoader``, gradient clipping, Hugging Face ``TrainingArguments``, Lightning
  ``Trainer`` -- and maps their arguments (keywords, and positionals through each callee's
  signature) to hyperparameter names. A watched argument is a finding when it is a numeric
  literal (``0.1``, ``-1``, ``1e-3``, ``0.1 * 2``, ``[30, 80]``) or a lower-case local of the
  same function (or of the script's top level) whose reaching assignments
  (``model.reaching``) are all such literals; the latter is reported at the literal.
* ``visit_For`` notes range loops; ``finish`` reports the bound of those that are epoch
  loops: ``for epoch in range(30)`` that trains (``training.loop_runs``, or a ``train...``
  call), a loop calling ``train_one_epoch``, or one whose body runs a data loop that trains.
* Calls to classes that may subclass an optimizer are settled in ``finish`` when the
  class chain stays in this file (``ClassInfo.bases``/``local_bases``); otherwise the call's
  literal arguments (with their positions) go into ``ctx.facts["TL004"]`` with the file's
  ``__init__`` signatures, and ``check_project`` follows ``Project.ancestors``.
* A DataLoader's batch size counts when the loader feeds training, or when the file trains
  (the training model's sites and bindings).
* Class bodies (dataclass / config-class fields), parameter defaults, ``argparse`` and test
  and config files are never reported; zero and negative values (``weight_decay=0``,
  ``max_epochs=-1``: "off" / "unlimited") are not either.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from torchlint.context import dotted_name
from torchlint.filekinds import CONFIG_FILES_DESCRIPTION, is_config_file, is_test_file
from torchlint.finding import Finding, Severity, Span
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.libraries import LIGHTNING_ROOTS, is_library
from torchlint.semantic.model import FUNCTION, ClassInfo, Loop
from torchlint.semantic.training import EPOCH_VAR
from torchlint.torch_api import (
    OPTIMIZER_CLASSES,
    is_optimizer_class,
    is_optimizer_constructor,
    mode_switch,
    scheduler_kind,
)

__all__ = ["HardCodedHyperparameter", "is_config_file", "is_test_file", "numeric_value"]

# -- what is watched ---------------------------------------------------------------------

OPTIMIZER_KEYWORDS = ("lr", "momentum", "weight_decay")
# Positional parameters of torch.optim constructors (index 0 is ``params``).
_OPTIMIZER_POSITIONS: dict[str, dict[int, str]] = {
    "SGD": {1: "lr", 2: "momentum", 4: "weight_decay"},
    "Adam": {1: "lr", 4: "weight_decay"},
    "AdamW": {1: "lr", 4: "weight_decay"},
    "Adamax": {1: "lr", 4: "weight_decay"},
    "NAdam": {1: "lr", 4: "weight_decay"},
    "RAdam": {1: "lr", 4: "weight_decay"},
    "Adagrad": {1: "lr", 3: "weight_decay"},
    "Adadelta": {1: "lr", 4: "weight_decay"},
    "RMSprop": {1: "lr", 4: "weight_decay", 5: "momentum"},
    "ASGD": {1: "lr", 5: "weight_decay"},
}
# Optimizers whose second positional parameter is not the learning rate.
_NO_POSITIONAL_LR = {"ZeroRedundancyOptimizer", "DistributedOptimizer"}

# torch.optim.lr_scheduler: positional parameters after the optimizer.
_SCHEDULER_POSITIONS: dict[str, tuple[str, ...]] = {
    "StepLR": ("step_size", "gamma"),
    "MultiStepLR": ("milestones", "gamma"),
    "ExponentialLR": ("gamma",),
    "CosineAnnealingLR": ("T_max", "eta_min"),
    "CosineAnnealingWarmRestarts": ("T_0", "T_mult", "eta_min"),
    "OneCycleLR": ("max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start"),
    "CyclicLR": ("base_lr", "max_lr", "step_size_up", "step_size_down"),
    "LinearLR": ("start_factor", "end_factor", "total_iters"),
    "ConstantLR": ("factor", "total_iters"),
    "PolynomialLR": ("total_iters", "power"),
    "ReduceLROnPlateau": ("mode", "factor", "patience"),
    "SequentialLR": ("schedulers", "milestones"),
    # Hugging Face schedule factories (transformers / diffusers)
    "get_linear_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_cosine_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_cosine_with_hard_restarts_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_polynomial_decay_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_constant_schedule_with_warmup": ("num_warmup_steps",),
    "get_inverse_sqrt_schedule": ("num_warmup_steps",),
    "get_scheduler": ("optimizer", "num_warmup_steps", "num_training_steps"),  # (name, optimizer, ...)
}
SCHEDULER_KEYWORDS = frozenset({
    "step_size", "gamma", "milestones", "T_max", "T_0", "T_mult", "eta_min", "max_lr", "base_lr",
    "total_steps", "epochs", "steps_per_epoch", "pct_start", "div_factor", "final_div_factor",
    "step_size_up", "step_size_down", "start_factor", "end_factor", "total_iters", "factor",
    "patience", "power", "min_lr", "base_momentum", "max_momentum", "num_warmup_steps",
    "num_training_steps",
})
DATALOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
_CLIP_NORM_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm",
}
_CLIP_VALUE_FUNCTIONS = {"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"}
TRAINING_ARGUMENTS_KEYWORDS = ("learning_rate", "per_device_train_batch_size", "num_train_epochs", "weight_decay",
                               "warmup_steps", "warmup_ratio", "max_grad_norm")
LIGHTNING_TRAINER_KEYWORDS = ("max_epochs", "gradient_clip_val")
EPOCHS = "epochs"  # the name an epoch loop's bound goes by (for ignore-names)

DESCRIPTIONS = {
    "lr": "learning rate", "learning_rate": "learning rate", "max_lr": "maximum learning rate",
    "base_lr": "base learning rate", "momentum": "momentum", "weight_decay": "weight decay",
    "batch_size": "batch size", "per_device_train_batch_size": "batch size", "num_train_epochs": "epoch count",
    "max_epochs": "epoch count", EPOCHS: "epoch count", "max_norm": "gradient-clipping max_norm",
    "max_grad_norm": "gradient-clipping max_norm", "clip_value": "gradient-clipping value",
    "gradient_clip_val": "gradient-clipping value", "warmup_steps": "warmup length",
    "num_warmup_steps": "warmup length", "warmup_ratio": "warmup ratio",
}
_WHY = "so it cannot be swept, logged or reproduced; read it from a config or a command-line argument"

# Calls whose keywords configure a command line, never a hyperparameter in use.
_ARGPARSE_METHODS = {"add_argument", "set_defaults", "add_option"}

# -- literals ----------------------------------------------------------------------------

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)


def numeric_value(node: cst.BaseExpression) -> float | list | None:
    """The value of a numeric literal (``3``, ``1e-3``, ``-1``, ``0.1 * 2``, ``10 ** -4``), or
    of a list/tuple of them (``[30, 80]``); None for anything else."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = numeric_value(node.expression)
        if isinstance(inner, (int, float)):
            return -inner if isinstance(node.operator, cst.Minus) else inner
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left, right = numeric_value(node.left), numeric_value(node.right)
        if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
            return None
        try:
            if isinstance(node.operator, cst.Power):
                if abs(right) > 64:
                    return None
                return left ** right
            return {
                cst.Add: lambda: left + right, cst.Subtract: lambda: left - right,
                cst.Multiply: lambda: left * right, cst.Divide: lambda: left / right,
                cst.FloorDivide: lambda: left // right, cst.Modulo: lambda: left % right,
            }[type(node.operator)]()
        except (ArithmeticError, ValueError):
            return None
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        values = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                return None
            v = numeric_value(el.value)
            if not isinstance(v, (int, float)):
                return None
            values.append(v)
        return values
    return None


def _positive(value: Any, floor: float = 0) -> bool:
    """Zero and negative values mean "off" or "unlimited" (``weight_decay=0``,
    ``max_epochs=-1``), not a tuned value."""
    if isinstance(value, list):
        return any(isinstance(v, (int, float)) and v > floor for v in value)
    return isinstance(value, (int, float)) and value > floor


# -- epoch loops (the loop variable's shape, EPOCH_VAR, is the training model's) ---------

_TRAIN_CALL = re.compile(r"train|fit", re.IGNORECASE)
_EPOCH_CALL = re.compile(r"epoch", re.IGNORECASE)
_RUN_CALL = re.compile(r"train|fit|run", re.IGNORECASE)
_RANGES = {"range", "trange"}
# Some call in the file must look like this for any loop to be an epoch loop.
_TRAINISH_CALL = re.compile(r"train|fit|epoch|backward|step", re.IGNORECASE)


def _call_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


class HardCodedHyperparameter(Rule):
    code = "TL004"
    name = "hard-coded-hyperparameter"
    severity = Severity.WARNING
    default_enabled = True
    summary = "Training hyperparameter (lr, batch size, epochs, ...) hard-coded as a literal in code"
    options = {
        "extend-names": Option([], list, "extra keyword names to watch, in any call (e.g. warmup_epochs)", item_kind=str),
        "ignore-names": Option([], list, "hyperparameter names never to report (e.g. batch_size, epochs)", item_kind=str),
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, *_test.py, conftest.py)"),
        "skip-config-files": Option(True, bool, f"skip config files ({CONFIG_FILES_DESCRIPTION})"),
    }
    # A finding needs one of: an optimizer (its module says "optim", or its class name), a
    # scheduler ("optim"/"schedule"), a DataLoader, clipping ("clip"), a Trainer or
    # TrainingArguments, an optimizer keyword on a project class (lr, momentum,
    # weight_decay), or a range loop; or a keyword the options add.
    requires_text = ("optim", "schedule", "DataLoader", "clip", "Trainer", "TrainingArguments", "momentum",
                     "weight_decay", "lr", "range", *sorted(OPTIMIZER_CLASSES))
    skips_test_files = True

    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        extra = (options or {}).get("extend-names") or ()
        return any(t in text for t in cls.requires_text) or any(name in text for name in extra)

    VALID = [
        # Everything read from argparse (its defaults included) or a config object.
        """
        import argparse
        import torch
        from torch.utils.data import DataLoader
        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--lr", type=float, default=3e-4)
            parser.add_argument("--epochs", type=int, default=30)
            args = parser.parse_args()
            opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=cfg.weight_decay)
            loader = DataLoader(ds, batch_size=cfg.batch_size, num_workers=4)
            for epoch in range(args.epochs):
                for x in loader:
                    model(x).backward()
                    opt.step()
        """,
        # Function parameter defaults are the configurable interface.
        """
        import torch
        def make_optimizer(params, lr=0.01, momentum=0.9):
            return torch.optim.SGD(params, lr=lr, momentum=momentum)
        """,
        # Module-level UPPER_CASE constants.
        """
        import torch
        LR = 1e-3
        EPOCHS = 10
        def train(model, loader):
            opt = torch.optim.Adam(model.parameters(), lr=LR)
            for epoch in range(EPOCHS):
                for x in loader:
                    model(x).backward()
                    opt.step()
        """,
        # Dataclass / config-class fields: class bodies are where values are declared.
        """
        from dataclasses import dataclass
        from transformers import TrainingArguments
        @dataclass
        class Config:
            lr: float = 3e-4
            batch_size: int = 64
            epochs: int = 30
        class Defaults:
            args = TrainingArguments("out", learning_rate=2e-5)
        """,
        # Architecture sizes, num_workers, betas and eps are not training hyperparameters.
        """
        import torch
        from torch import nn
        from torch.utils.data import DataLoader
        def build(cfg, ds):
            model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 10))
            opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
            loader = DataLoader(ds, batch_size=cfg.batch_size, num_workers=8, shuffle=True)
            return model, opt, loader
        """,
        # Loops over range that are not epoch loops: retries, layers, warm-up iterations.
        """
        import torch
        from torch import nn
        def setup(model, x, opt):
            layers = [nn.Linear(8, 8) for _ in range(3)]
            for i in range(3):
                layers.append(nn.Linear(8, 8))
            for attempt in range(5):
                if connect():
                    break
            for _ in range(10):
                model(x).sum().backward()
                opt.step()
        """,
        # Test files are skipped.
        Valid(
            """
            import torch
            def test_sgd(model):
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            path="tests/test_optim.py",
        ),
        # Config files are skipped: that is where hyperparameters belong.
        Valid(
            """
            from transformers import TrainingArguments
            def training_args():
                return TrainingArguments("out", learning_rate=2e-5, num_train_epochs=3)
            """,
            path="configs/finetune.py",
        ),
        # A local assigned from a parameter or a config somewhere is not literal-only.
        """
        import torch
        def train(model, args):
            lr = 0.1
            if args.lr is not None:
                lr = args.lr
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            n_epochs = args.epochs
            for epoch in range(n_epochs):
                train_one_epoch(model, opt)
        """,
        # Zero / negative mean "off" / "unlimited"; a parameter-group dict is not watched.
        """
        import torch
        import lightning as L
        def setup(model, cfg):
            opt = torch.optim.AdamW(
                [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                lr=cfg.lr, weight_decay=0.0,
            )
            trainer = L.Trainer(max_epochs=-1, max_steps=cfg.steps)
            return opt, trainer
        """,
        # An LR-schedule plot: the epoch loop does not train.
        """
        import torch
        def plot(opt):
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.95 ** e)
            lrs = []
            for epoch in range(100):
                sched.step()
                lrs.append(sched.get_last_lr())
        """,
        # A sweep loop over literal values is not one hard-coded value; a local rebound by a loop.
        """
        import torch
        def sweep(model):
            for lr in (0.1, 0.01):
                torch.optim.SGD(model.parameters(), lr=lr)
        """,
        # Option: a name in ignore-names is never reported.
        Valid(
            """
            from torch.utils.data import DataLoader
            def loaders(ds):
                return DataLoader(ds, batch_size=32)
            """,
            options={"ignore-names": ["batch_size"]},
        ),
        # Option: test files can be checked, but this one reads its values from arguments.
        Valid(
            """
            import torch
            def test_fit(model, lr):
                torch.optim.SGD(model.parameters(), lr)
            """,
            path="tests/test_fit.py",
            options={"skip-tests": False},
        ),
        # A DataLoader that does not feed training (parallel metadata reading, evaluation in a
        # file that never trains): its batch size is not a training hyperparameter.
        """
        import torch.utils.data
        class VideoClips:
            def _read_timestamps(self, paths):
                loader = torch.utils.data.DataLoader(Timestamps(paths), batch_size=16, num_workers=self.workers)
                return [t for batch in loader for t in batch]
        def evaluate(model, ds):
            return [model(x) for x in torch.utils.data.DataLoader(ds, batch_size=256)]
        """,
        # In a file that trains, a non-training loader of one sample at a time.
        """
        import torch
        from torch.utils.data import DataLoader
        def predict(model, ds):
            return [model(x) for x in DataLoader(ds, batch_size=1)]
        def fit(model, opt, loader):
            for x in loader:
                model(x).backward()
                opt.step()
        """,
        # Test-support packages count as tests.
        Valid(
            """
            from torch.utils.data import DataLoader
            def mocked_dataloaders(ds):
                return DataLoader(ds, shuffle=True, batch_size=2)
            """,
            path="src/pkg/test_utils/training.py",
        ),
        # A lower-case module-level variable read inside a function is not a local of it.
        """
        import torch
        lr = 0.1
        def train(model):
            return torch.optim.SGD(model.parameters(), lr=lr)
        """,
    ]
    INVALID = [
        # Keyword learning rate and momentum of a torch.optim optimizer.
        Invalid(
            """
            import torch
            def train(model):
                opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            """,
            lines=(4, 4),
            messages=(
                "learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged "
                "or reproduced; read it from a config or a command-line argument",
                "momentum 0.9 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
            ),
        ),
        # Positional learning rate; an aliased import.
        Invalid(
            """
            from torch import optim as o
            def train(model):
                return o.SGD(model.parameters(), 0.1)
            """,
            lines=(4,),
            messages=(
                "learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
            ),
        ),
        # A lower-case local assigned only a literal: reported at the literal.
        Invalid(
            """
            import torch
            def train(model):
                lr = 1e-3
                opt = torch.optim.Adam(model.parameters(), lr=lr)
            """,
            lines=(4,),
            messages=(
                "learning rate 1e-3 is hard-coded: `lr` is assigned only this literal and passed to "
                "`torch.optim.Adam(...)`, so it cannot be swept, logged or reproduced; read it from a config "
                "or a command-line argument",
            ),
        ),
        # Epoch loop bound, directly and through a local; range(1, N + 1).
        Invalid(
            """
            def train(model, loader, opt):
                for epoch in range(30):
                    train_one_epoch(model, loader, opt)
                num_epochs = 5
                for ep in range(1, num_epochs + 1):
                    train_one_epoch(model, loader, opt)
            """,
            lines=(3, 5),
            messages=(
                "epoch count 30 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
                "epoch count 5 is hard-coded: `num_epochs` is assigned only this literal and bounds the "
                "epoch loop, so it cannot be swept, logged or reproduced; read it from a config or a "
                "command-line argument",
            ),
        ),
        # A loop variable not named like an epoch, whose body runs a training data loop.
        Invalid(
            """
            def train(model, loader, optimizer):
                for i in range(10):
                    for x, y in loader:
                        optimizer.zero_grad()
                        model(x, y).backward()
                        optimizer.step()
            """,
            lines=(3,),
            messages=(
                "epoch count 10 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # Scheduler arguments, keyword and positional; milestones as a list.
        Invalid(
            """
            from torch.optim import lr_scheduler
            def schedules(opt, cfg):
                a = lr_scheduler.StepLR(opt, 30, gamma=0.1)
                b = lr_scheduler.MultiStepLR(opt, milestones=[30, 80], gamma=cfg.gamma)
                c = lr_scheduler.OneCycleLR(opt, 0.1, total_steps=cfg.steps)
            """,
            lines=(4, 4, 5, 6),
            messages=(
                "`step_size` 30 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be "
                "swept, logged or reproduced; read it from a config or a command-line argument",
                "`gamma` 0.1 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
                "`milestones` [30, 80] is hard-coded in `torch.optim.lr_scheduler.MultiStepLR(...)`, so it "
                "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
                "maximum learning rate 0.1 is hard-coded in `torch.optim.lr_scheduler.OneCycleLR(...)`, so "
                "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # DataLoader batch size and gradient clipping in script top-level code.
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=64, num_workers=4)
            for x in loader:
                model(x).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            """,
            lines=(4, 7),
            messages=(
                "batch size 64 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
                "gradient-clipping max_norm 1.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
                "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # Hugging Face TrainingArguments and schedule factories; Lightning Trainer.
        Invalid(
            """
            from transformers import TrainingArguments, get_linear_schedule_with_warmup
            import pytorch_lightning as pl
            def main(opt, n):
                args = TrainingArguments("out", learning_rate=2e-5, per_device_train_batch_size=16, num_train_epochs=3)
                sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=500, num_training_steps=n)
                trainer = pl.Trainer(max_epochs=10, accelerator="gpu")
            """,
            lines=(5, 5, 5, 6, 7),
            messages=(
                "learning rate 2e-5 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
                "swept, logged or reproduced; read it from a config or a command-line argument",
                "batch size 16 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
                "swept, logged or reproduced; read it from a config or a command-line argument",
                "epoch count 3 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
                "swept, logged or reproduced; read it from a config or a command-line argument",
                "warmup length 500 is hard-coded in `transformers.get_linear_schedule_with_warmup(...)`, so "
                "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
                "epoch count 10 is hard-coded in `pytorch_lightning.Trainer(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # A same-file optimizer subclass: keyword and positional learning rate.
        Invalid(
            """
            import torch
            class MyAdam(torch.optim.Adam):
                def __init__(self, params, lr=1e-3, weight_decay=0.0):
                    super().__init__(params, lr=lr, weight_decay=weight_decay)
            class WarmAdam(MyAdam):
                pass
            def build(model):
                a = MyAdam(model.parameters(), lr=3e-4)
                b = WarmAdam(model.parameters(), 3e-4, 0.01)
            """,
            lines=(9, 10, 10),
            messages=(
                "learning rate 3e-4 is hard-coded in `MyAdam(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
                "learning rate 3e-4 is hard-coded in `WarmAdam(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
                "weight decay 0.01 is hard-coded in `WarmAdam(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
            ),
        ),
        # Accelerate / Fabric clipping and a LightningModule's configure_optimizers.
        Invalid(
            """
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    return torch.optim.AdamW(self.parameters(), lr=1e-3, weight_decay=0.05)
            def loop(accelerator, fabric, model, opt):
                accelerator.clip_grad_norm_(model.parameters(), 0.5)
                fabric.clip_gradients(model, opt, max_norm=2.0)
            """,
            lines=(6, 6, 8, 9),
            messages=(
                "learning rate 1e-3 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
                "or reproduced; read it from a config or a command-line argument",
                "weight decay 0.05 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
                "or reproduced; read it from a config or a command-line argument",
                "gradient-clipping max_norm 0.5 is hard-coded in `accelerator.clip_grad_norm_(...)`, so it "
                "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
                "gradient-clipping max_norm 2.0 is hard-coded in `fabric.clip_gradients(...)`, so it cannot "
                "be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # Option: extra names to watch, in any call; test files checked when asked.
        Invalid(
            """
            def build(cfg):
                return make_schedule(cfg.opt, warmup_epochs=5)
            """,
            lines=(3,),
            messages=(
                "`warmup_epochs` 5 is hard-coded in `make_schedule(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
            ),
            options={"extend-names": ["warmup_epochs"]},
        ),
        Invalid(
            """
            import torch
            def test_fit(model):
                torch.optim.SGD(model.parameters(), lr=0.5)
            """,
            lines=(4,),
            messages=(
                "learning rate 0.5 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
            ),
            path="tests/test_fit.py",
            options={"skip-tests": False},
        ),
        # DataLoaders: one that shuffles or is named for training, anywhere; any other one in
        # a file that trains.
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader
            def loaders(train_ds, val_ds):
                train_loader = DataLoader(train_ds, batch_size=128)
                val_loader = DataLoader(val_ds, batch_size=256)
                return train_loader, val_loader
            def train_dataloader(ds):
                return DataLoader(ds, 32)
            def fit(model, loader):
                opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            """,
            lines=(5, 6, 9),
            messages=(
                "batch size 128 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
                "batch size 256 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
                "batch size 32 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # tqdm around the range, and the fixture's shape.
        Invalid(
            """
            from tqdm import tqdm
            def fit(model, loader, opt):
                for epoch in tqdm(range(20)):
                    model.train()
                    for x in loader:
                        model(x).backward()
                        opt.step()
            """,
            lines=(4,),
            messages=(
                "epoch count 20 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
    ]

    def __init__(self, ctx, options: dict[str, Any]):
        super().__init__(ctx, options)
        path = ctx.path
        self._skip = bool(options.get("skip-config-files", True) and is_config_file(path))
        self._ignore = frozenset(options.get("ignore-names") or ())
        self._extra = frozenset(options.get("extend-names") or ()) - self._ignore
        self._reported: set[int] = set()
        # Settled in ``finish`` (they need the semantic / training model, built only then):
        # in walk order: (None, _check's arguments) for a watched argument that is a name,
        # (range loop, its bound) for a loop that may be an epoch loop
        self._pending: list[tuple[cst.For | None, tuple]] = []
        self._loaders: list[tuple[cst.Call, list]] = []  # non-training DataLoaders
        self._class_calls: list[cst.Call] = []  # calls that may construct an optimizer subclass
        self._subclasses: set[str] = set()  # names of this file's classes that may subclass an optimizer
        # Cheap necessary conditions noted during the walk, so the semantic model is built
        # only where it can change the answer:
        self._trainish = False  # a call named train/fit/epoch/backward/step somewhere
        self._literal_names: set[str] = set()  # names assigned a numeric literal somewhere
        self._inits: dict[str, list[str]] = {}  # qualified class name -> __init__ parameters

    # -- where code counts ----------------------------------------------------------------
    def _in_code(self, node: cst.CSTNode) -> bool:
        """In a function body or module-level code: not a class body, not a parameter default."""
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, cst.Param):
                return False
            if isinstance(anc, (cst.FunctionDef, cst.Module)):
                return True
            if isinstance(anc, cst.ClassDef):
                return False
        return True

    # -- visits ---------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """Note a class that may subclass an optimizer, and its ``__init__`` parameters (for
        ``check_project``, when the class is called from another file)."""
        if self._skip or not node.bases or not any(self._may_be_optimizer(b.value) for b in node.bases):
            return
        self._subclasses.add(node.name.value)
        init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None:
            return
        outer = [a for a in self.ctx.ancestors(node) if isinstance(a, (cst.ClassDef, cst.FunctionDef))]
        if all(isinstance(a, cst.ClassDef) for a in outer):  # the project index keeps these (``Outer.Inner``)
            self._inits[".".join([*(a.name.value for a in reversed(outer)), node.name.value])] = _init_params(init)

    def _may_be_optimizer(self, base: cst.BaseExpression) -> bool:
        """A base that is a library optimizer, an earlier class of this file that may be one,
        or an import from outside the libraries (not ``nn.Module``)."""
        if isinstance(base, cst.Name) and not self.ctx.is_imported(base):
            return base.value in self._subclasses
        qualified = self.ctx.qualified_name(base) or ""
        return _is_library_optimizer(qualified) or not is_library(qualified)

    def visit_Assign(self, node: cst.Assign) -> None:
        if numeric_value(node.value) is not None:
            self._literal_names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name) and numeric_value(node.value) is not None:
            self._literal_names.add(node.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._trainish and _TRAINISH_CALL.search(_call_name(node)):
            self._trainish = True
        if self._skip or not node.args:
            return
        watched = self._watched(node)
        if not watched or not self._in_code(node):
            return
        callee = self.ctx.qualified_name(node.func) or "the call"
        if callee in DATALOADERS and not self._training_loader(node):
            self._loaders.append((node, watched))  # reported if the file trains (finish)
            return
        for name, value in watched:
            self._check(name, value, node, f"in `{callee}(...)`", f"passed to `{callee}(...)`")

    def visit_For(self, node: cst.For) -> None:
        if self._skip or EPOCHS in self._ignore:
            return
        stop = self._range_stop(node.iter)
        if stop is None or numeric_value(stop) is None and not isinstance(stop, cst.Name):
            return
        if self._in_code(node):
            where = "in the epoch loop's `range(...)`"
            self._pending.append((node, (EPOCHS, stop, node, where, "bounds the epoch loop")))

    def finish(self) -> None:
        for loop, args in self._pending:
            if loop is None or self._trainish and self._is_epoch_loop(loop):
                self._check(*args, walking=False)
        if self._loaders and self._file_trains():
            for call, watched in self._loaders:
                callee = self.ctx.qualified_name(call.func)
                for name, value in watched:
                    # batch_size=1 outside a training loader: one sample at a time, by design
                    self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`", floor=1,
                                walking=False)
        if self._class_calls or self._inits:
            self._check_class_calls()

    # -- what a call watches --------------------------------------------------------------
    def _watched(self, call: cst.Call) -> list[tuple[str, cst.BaseExpression]] | None:
        """(hyperparameter name, argument value) for each watched argument; None when the
        call is none of the watched kinds (an empty list when it is one, with nothing
        watched in it)."""
        ctx = self.ctx
        func = call.func
        qualified = ctx.qualified_name(func)
        last = qualified.rsplit(".", 1)[-1] if qualified else _call_name(call)
        imported = ctx.is_imported(func)
        if imported and qualified:
            if is_optimizer_constructor(ctx, func):
                return self._args(call, _library_positions(qualified), OPTIMIZER_KEYWORDS)
            kind = scheduler_kind(ctx, func)
            if kind is not None:
                names = _SCHEDULER_POSITIONS.get(kind, ())
                positions = {i + 1: n for i, n in enumerate(names) if n in SCHEDULER_KEYWORDS}
                return self._args(call, positions, SCHEDULER_KEYWORDS)
            if qualified in DATALOADERS:
                return self._args(call, {1: "batch_size"}, ("batch_size",))
            if qualified in _CLIP_NORM_FUNCTIONS:
                return self._args(call, {1: "max_norm"}, ("max_norm",))
            if qualified in _CLIP_VALUE_FUNCTIONS:
                return self._args(call, {1: "clip_value"}, ("clip_value",))
            root = qualified.split(".", 1)[0]
            if root == "transformers" and last.endswith("TrainingArguments"):
                return self._args(call, {}, TRAINING_ARGUMENTS_KEYWORDS)
            if root in LIGHTNING_ROOTS and last == "Trainer":
                return self._args(call, {}, LIGHTNING_TRAINER_KEYWORDS)
        elif isinstance(func, cst.Attribute):
            if last in ("clip_grad_norm_", "clip_grad_value_"):
                # accelerator.clip_grad_norm_(params, max_norm); FSDP's model.clip_grad_norm_(max_norm)
                name = "max_norm" if last == "clip_grad_norm_" else "clip_value"
                positional = [a for a in call.args if a.keyword is None and not a.star]
                return self._args(call, {1 if len(positional) >= 2 else 0: name}, (name,))
            if last == "clip_gradients":  # Fabric / LightningModule
                return self._args(call, {}, ("max_norm", "clip_val", "gradient_clip_val"))
            if last in _ARGPARSE_METHODS:
                return []
        last = _call_name(call)
        if last[:1].isupper() and (isinstance(func, cst.Name) or imported):
            # maybe an optimizer subclass of this file or of another project file (finish)
            self._class_calls.append(call)
        if self._extra:
            return self._args(call, {}, ())
        return None

    def _args(self, call: cst.Call, positions: dict[int, str], keywords) -> list[tuple[str, cst.BaseExpression]]:
        out = []
        index = 0
        for arg in call.args:
            if arg.star:
                if arg.star == "*":
                    positions = {}  # later positionals no longer line up
                continue
            if arg.keyword is None:
                name = positions.get(index)
                index += 1
            else:
                name = arg.keyword.value
                if name not in keywords and name not in self._extra:
                    continue
            if name is not None and name not in self._ignore:
                out.append((name, arg.value))
        return out

    # -- data loaders ----------------------------------------------------------------------
    def _training_loader(self, call: cst.Call) -> bool:
        """A DataLoader that feeds training: it shuffles, or its variable or the function
        building it is named ``train...`` (``train_loader = ...``, ``def train_dataloader``)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "shuffle":
                if isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    return True
        parent = self.ctx.parent(call)
        if isinstance(parent, cst.Assign) and any(
            "train" in (dotted_name(t.target) or "").rsplit(".", 1)[-1].lower() for t in parent.targets
        ):
            return True
        function = self.ctx.enclosing_function(call)
        return function is not None and "train" in function.name.value.lower()

    def _file_trains(self) -> bool:
        """Does this file train (backward, an optimizer step or construction, a trainer, a
        ``training_step``)? A DataLoader elsewhere (reading video metadata, evaluating) has a
        batch size that is not a training hyperparameter."""
        training = self.ctx.semantic.training
        if training.sites.backward or training.sites.step or training.sites.fit \
                or training.bindings["optimizer"] or training.bindings["trainer"]:
            return True
        model = training.model
        if any(s.kind == FUNCTION and s.name == "training_step" for s in model.scopes.values()):
            return True
        ctx = self.ctx
        for site in model.calls:
            func = site.node.func
            if is_optimizer_constructor(ctx, func) \
                    or (ctx.qualified_name(func) or "").rsplit(".", 1)[-1] == "Trainer" and ctx.is_imported(func):
                return True
        return False

    # -- epoch loops ---------------------------------------------------------------------
    def _range_stop(self, it: cst.BaseExpression) -> cst.BaseExpression | None:
        """``N`` of ``range(N)``, ``range(1, N)``, ``trange(N)``, ``tqdm(range(N))``."""
        if not isinstance(it, cst.Call):
            return None
        func = it.func
        name = func.value if isinstance(func, cst.Name) else None
        if name is None and isinstance(func, cst.Attribute) and func.attr.value in ("tqdm", "trange"):
            name = func.attr.value
        if name in ("tqdm", "track", "progress_bar") and it.args and isinstance(it.args[0].value, cst.Call):
            return self._range_stop(it.args[0].value)
        if name not in _RANGES or name == "range" and self.ctx.is_imported(func):
            return None
        args = [a for a in it.args if a.keyword is None]
        if not args or len(args) > 3 or any(a.star for a in args):
            return None
        stop = args[0] if len(args) == 1 else args[1]
        return _strip_plus_one(stop.value)

    def _is_epoch_loop(self, node: cst.For) -> bool:
        """It calls ``train_one_epoch``/``run_epoch``-like functions; or its variable is named
        like an epoch and it trains; or its body runs a data loop (not over ``range``) that trains."""
        model = self.ctx.semantic.model
        loop = model.loops.get(node)
        if loop is None:
            return False
        names = [_call_name(site.node) for site in model.calls_in_loop(loop)]
        if any(_EPOCH_CALL.search(name) and _RUN_CALL.search(name) for name in names):
            return True
        var = node.target.value if isinstance(node.target, cst.Name) else None
        if var is not None and EPOCH_VAR.search(var) and (
                any(_TRAIN_CALL.search(name) for name in names) or self.ctx.semantic.training.loop_runs(loop)):
            return True
        return any(self._trains(inner) for inner in loop.scope.loops if _inside(inner, loop)
                   and isinstance(inner.node, cst.For) and self._range_stop(inner.node.iter) is None)

    def _trains(self, loop: Loop) -> bool:
        """An iteration does backward or an optimizer step, or calls ``train...``/``fit...``
        (not ``model.train()``)."""
        if self.ctx.semantic.training.loop_runs(loop):
            return True
        return any(_TRAIN_CALL.search(_call_name(site.node)) and mode_switch(site.node) is None
                   for site in self.ctx.semantic.model.calls_in_loop(loop))

    # -- values --------------------------------------------------------------------------
    def _check(self, name: str, value: cst.BaseExpression, anchor: cst.CSTNode, where: str, used: str,
               floor: float = 0, *, walking: bool = True) -> None:
        """Report ``value`` when it is a literal above ``floor``, or a literal-only local (those
        wait for ``finish`` while the walk is on: the semantic model answers then)."""
        number = numeric_value(value)
        if number is not None:
            if _positive(number, floor):
                self._report(name, value, f"is hard-coded {where}")
        elif isinstance(value, cst.Name):
            if walking:
                self._pending.append((None, (name, value, anchor, where, used, floor)))
                return
            for literal in self._literal_local(value, anchor) or ():
                if _positive(numeric_value(literal), floor):
                    self._report(name, literal,
                                 f"is hard-coded: `{value.value}` is assigned only this literal and {used}")

    def _report(self, name: str, literal: cst.BaseExpression, what: str) -> None:
        if id(literal) in self._reported:
            return
        self._reported.add(id(literal))
        text = _shown(self.ctx, literal)
        desc = DESCRIPTIONS.get(name, f"`{name}`")
        self.report(literal, f"{desc} {text} {what}, {_WHY}")

    def _literal_local(self, name: cst.Name, anchor: cst.CSTNode) -> list[cst.BaseExpression] | None:
        """The literals a lower-case local (of the function enclosing ``anchor``, the call or
        loop using ``name``, or of module-level code when used there) may hold where it is
        used, when every binding reaching there is a literal one; else None."""
        if name.value.isupper() or name.value not in self._literal_names:
            return None
        model = self.ctx.semantic.model
        home = model.scope_of(anchor)
        home = home.function() or model.module
        found = model.reaching(name.value, anchor)
        if not found or any(b.scope is not home or b.kind not in ("assign", "ann") for b in found):
            return None
        if any(numeric_value(b.value) is None for b in found):
            return None
        return [b.value for b in found]

    # -- optimizer subclasses (this file, and other project files through facts) ------------
    def _check_class_calls(self) -> None:
        """Calls to a class of this file that subclasses an optimizer are checked here; calls
        to one whose chain leaves the file go to ``check_project`` (``ctx.facts``)."""
        model = None
        candidates = []
        for call in self._class_calls:
            func = call.func
            if isinstance(func, cst.Name) and not self.ctx.is_imported(func):
                if func.value not in self._subclasses:
                    continue
                model = model or self.ctx.semantic.model
                info = next((model.classes[b.node] for b in reversed(model.reaching(func.value, call))
                             if b.kind == "class"), None)
                if info is None:
                    continue
                positions = _local_positions(info)
                target = ["local", info.qualname]
            else:
                qualified = self.ctx.qualified_name(func) or ""
                if is_library(qualified):
                    continue
                info, positions, target = None, None, ["ext", qualified]
            if not self._in_code(call):
                continue
            callee = dotted_name(func)
            if positions is not None:
                for name, value in self._args(call, positions, OPTIMIZER_KEYWORDS):
                    self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`", walking=False)
            elif info is None or _has_external_base(info):
                args = self._candidate_args(call)
                if args:
                    candidates.append({"callee": target, "shown": callee, "args": args})
        facts: dict[str, Any] = {}
        if candidates:
            facts["calls"] = candidates
        if self._inits:
            facts["inits"] = self._inits
        if facts:
            self.ctx.facts[self.code] = facts

    def _candidate_args(self, call: cst.Call) -> list[list]:
        """Literal arguments of a call to a class that another file may show to be an
        optimizer: [keyword or position, shown text, span (``Span.to_json``), variable or ""] (positions computed here: only for such calls)."""
        out = []
        index = 0
        for arg in call.args:
            if arg.star:
                break
            if arg.keyword is None:
                key: str | int = index
                index += 1
                if key == 0 or key > 6:
                    continue
            else:
                key = arg.keyword.value
                if key not in OPTIMIZER_KEYWORDS or key in self._ignore:
                    continue
            for literal, var in self._literals(arg.value, call):
                out.append([key, _shown(self.ctx, literal), self.ctx.span(literal).to_json(), var])
        return out

    def _literals(self, value: cst.BaseExpression, anchor: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
        number = numeric_value(value)
        if number is not None:
            return [(value, "")] if _positive(number) else []
        if isinstance(value, cst.Name):
            return [(lit, value.value) for lit in self._literal_local(value, anchor) or () if _positive(numeric_value(lit))]
        return []

    @classmethod
    def check_project(cls, project, options: dict[str, Any]):
        ignore = set(options.get("ignore-names") or ())
        out = []
        for record in project.records:
            facts = record.facts.get(cls.code) or {}
            for call in facts.get("calls", ()):
                kind, name = call["callee"]
                if kind == "local":
                    qualified = f"{record.module_name}.{name}" if record.module_name else name
                else:
                    hit = project.resolve_symbol(name, record)
                    if hit is None:
                        continue
                    qualified = f"{hit[0].module_name}.{hit[1]}" if hit[0].module_name else hit[1]
                positions = _project_positions(project, qualified)
                if positions is None:
                    continue
                for key, text, span, var in call["args"]:
                    name = key if isinstance(key, str) else positions.get(key)
                    if name is None or name in ignore:
                        continue
                    desc = DESCRIPTIONS.get(name, f"`{name}`")
                    callee = call["shown"]
                    if var:
                        what = f"is hard-coded: `{var}` is assigned only this literal and passed to `{callee}(...)`"
                    else:
                        what = f"is hard-coded in `{callee}(...)`"
                    out.append(Finding.at(cls, record.path, Span.from_json(span), f"{desc} {text} {what}, {_WHY}"))
        # One literal passed twice (a local used by two calls) is one finding.
        return list({(f.path, f.line, f.column): f for f in out}.values())


def _strip_plus_one(node: cst.BaseExpression) -> cst.BaseExpression:
    """``N + 1`` -> ``N`` when ``N`` is a name (``range(1, n_epochs + 1)``)."""
    if (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) and isinstance(node.left, cst.Name)
            and isinstance(node.right, cst.Integer) and node.right.value == "1"):
        return node.left
    return node


def _inside(inner: Loop, outer: Loop) -> bool:
    current = inner.outer
    while current is not None and current is not outer:
        current = current.outer
    return current is outer


# -- optimizer classes: where lr / momentum / weight_decay sit among positional arguments ---

def _library_positions(qualified: str) -> dict[int, str]:
    """A library optimizer's positional hyperparameters (index 0 is ``params``)."""
    last = qualified.rsplit(".", 1)[-1]
    if last in _NO_POSITIONAL_LR or qualified.startswith("torch.distributed.optim."):
        return {}
    return _OPTIMIZER_POSITIONS.get(last, {1: "lr"})


def _is_library_optimizer(qualified: str) -> bool:
    return is_optimizer_class(qualified, lambda: "." in qualified)  # dotted: an import, expanded


def _init_params(init: cst.FunctionDef) -> list[str]:
    """``__init__``'s positional parameter names after ``self``."""
    return [p.name.value for p in [*init.params.posonly_params, *init.params.params]][1:]


def _from_init(init: list[str] | None, inherited: dict[int, str]) -> dict[int, str]:
    if init is None:
        return inherited
    return {i: n for i, n in enumerate(init) if n in OPTIMIZER_KEYWORDS}


def _local_positions(info: ClassInfo, depth: int = 0) -> dict[int, str] | None:
    """For a class of this file that subclasses a library optimizer through classes of this
    file, its positional hyperparameters; None if it is not known to be one here."""
    if depth > 8:
        return None
    for base in info.bases:
        local = next((c for c in info.local_bases if c.name == base), None)
        if local is not None:
            inherited = _local_positions(local, depth + 1)
        else:
            inherited = _library_positions(base) if _is_library_optimizer(base) else None
        if inherited is not None:
            init = info.methods.get("__init__")
            return _from_init(_init_params(init) if init is not None else None, inherited)
    return None


def _has_external_base(info: ClassInfo, depth: int = 0) -> bool:
    """A base (or a same-file base's base) imported from outside the libraries: only the
    project can say whether it is an optimizer."""
    if depth > 8:
        return False
    for base in info.bases:
        local = next((c for c in info.local_bases if c.name == base), None)
        if local is not None:
            if _has_external_base(local, depth + 1):
                return True
        elif "." in base and not is_library(base):
            return True
    return False


def _project_positions(project, qualified: str) -> dict[int, str] | None:
    """Positional hyperparameters of a project class (canonical name) whose ancestors reach a
    library optimizer: the nearest ``__init__`` of a project class decides (its parameters,
    from the TL004 facts of its file; keywords only when unknown), else the optimizer's."""
    init = None
    for name in [qualified, *project.ancestors(qualified)]:
        found = project.class_fact(name)
        if found is not None:
            record, fact = found
            if init is None and "__init__" in fact["methods"]:
                inits = (record.facts.get(HardCodedHyperparameter.code) or {}).get("inits") or {}
                init = inits.get(fact["name"], [])
        elif _is_library_optimizer(name):
            return _from_init(init, _library_positions(name))
    return None


def _shown(ctx, literal: cst.BaseExpression) -> str:
    text = ctx.module.code_for_node(literal).strip()
    return text if len(text) <= 30 else text[:27] + "..."
