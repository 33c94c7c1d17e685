"""TL004 hard-coded-hyperparameter: a training hyperparameter written as a numeric literal in
a function body or a script's top-level code.

The walk notes the watched calls and the range loops; everything is settled in ``finish``
with the shared layer (``ctx.semantic`` and the ``torchlint.semantic`` modules named below):

* ``visit_Call`` recognises the watched calls -- optimizers, learning-rate schedulers,
  ``DataLoader``, gradient clipping, Hugging Face ``TrainingArguments``, Lightning
  ``Trainer`` -- and maps their arguments (keywords, and positionals through each callee's
  signature, ``semantic.optim_classes``) to hyperparameter names. A watched argument is a
  finding when it is a numeric literal (``semantic.literals``: ``0.1``, ``1e-3``, ``0.1 * 2``,
  ``[30, 80]``) or a lower-case local whose reaching assignments are all such literals;
  the latter is reported at the literal.
* Range loops that are epoch loops (``semantic.epochs``) report their count, also
  ``range(start, start + 200)``.
* Calls to classes that may subclass an optimizer are settled when the class chain stays in
  this file; otherwise their literal arguments go into ``ctx.facts["TL004"]`` and
  ``check_project`` follows ``Project.ancestors``.
* A DataLoader's batch size counts when it feeds training (``semantic.loaders``: it
  shuffles, or a ``train_dataloader`` hook builds it), or when the file trains and the loader
  is not an evaluation one; either way only when it takes more than one sample at a time
  (``batch_size=1`` restates DataLoader's own default).
* Not hard-coded: class bodies, parameter defaults and what fills them in
  (``opt = opt or Adam(...)``, ``if opt is None:`` also around a ``try:``), a literal that
  restates a torch.optim class's own default or a LinearLR warm-up from zero
  (``semantic.optim_classes.is_neutral``), module-level settings (UPPER_CASE, the leading block of
  constants, any under a configurator: ``semantic.settings``), ``argparse``, test and
  config files, zero and negative values ("off" / "unlimited"). Not a training run
  (``semantic.runs``): a file that optimises an input tensor, a function that solves for a
  value it returns (an optimizer over a copy of it), an optimizer stepped once with no loop (in a
  function the file never calls, on made-up tensors only: ``runs.single_demo_step``), one
  whose settings a checkpoint replaces right away (``runs.state_restored``); nor is an ``lr`` that the stepping loop overwrites in every param group (in another
  project file too: an optimizer a function returns to no same-file caller is settled in
  ``check_project``), nor a clipping literal where every optimizer takes its lr from a config.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from torchlint.context import dotted_name
from torchlint.filekinds import CONFIG_FILES_DESCRIPTION, is_config_file, is_test_file
from torchlint.finding import Finding, Severity, Span
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic import epochs, loaders, optim_classes, runs, settings
from torchlint.semantic.branches import exclusive
from torchlint.semantic.libraries import LIGHTNING_ROOTS, is_library
from torchlint.semantic.literals import is_positive, numeric_value
from torchlint.semantic.optim_classes import OPTIMIZER_HYPERPARAMETERS, SCHEDULER_POSITIONS, library_positions
from torchlint.torch_api import OPTIMIZER_CLASSES, is_optimizer_constructor, scheduler_kind

__all__ = ["HardCodedHyperparameter", "is_config_file", "is_test_file", "numeric_value"]

# -- what is watched ---------------------------------------------------------------------

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
_CLIP_NAMES = ("max_norm", "clip_value", "clip_val")  # of the clipping calls, not of a trainer's config
_CLIP_VALUE_FUNCTIONS = {"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"}
TRAINING_ARGUMENTS_KEYWORDS = ("learning_rate", "per_device_train_batch_size", "num_train_epochs", "weight_decay",
                               "warmup_steps", "warmup_ratio", "max_grad_norm")
LIGHTNING_TRAINER_KEYWORDS = ("max_epochs", "gradient_clip_val")
EPOCHS = "epochs"  # the name an epoch loop's bound goes by (for ignore-names)
OPTIMIZER, SCHEDULER, LOADER, OTHER = "optimizer", "scheduler", "loader", "other"

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


class HardCodedHyperparameter(Rule):
    code = "TL004"
    name = "hard-coded-hyperparameter"
    severity = Severity.WARNING
    default_enabled = True
    summary = "Training hyperparameter (lr, batch size, epochs, ...) hard-coded as a literal in code"
    options = {
        "extend-names": Option([], list, "extra keyword names to watch, in any call (e.g. warmup_epochs)", item_kind=str),
        "ignore-names": Option([], list, "hyperparameter names never to report (e.g. batch_size, epochs)", item_kind=str),
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, *_test.py, tests.py, conftest.py)"),
        "skip-config-files": Option(True, bool, f"skip config files ({CONFIG_FILES_DESCRIPTION})"),
    }
    # A finding needs one of: an optimizer (its module says "optim", or its class name), a
    # scheduler ("optim"/"schedule"), a DataLoader, clipping ("clip"), a Trainer or
    # TrainingArguments, an optimizer keyword on a project class (lr, momentum,
    # weight_decay), or a range loop; or a keyword the options add.
    # The commonest first: ``any`` stops at the first present, and each absent one is a scan
    # of the whole text.
    requires_text = ("range", "lr", "optim", "schedule", "DataLoader", "clip", "Trainer", "TrainingArguments",
                     "momentum", "weight_decay", *sorted(OPTIMIZER_CLASSES))
    skips_test_files = True
    # The __init__ of an optimizer subclass another file constructs; the functions that
    # overwrite a learning rate they are handed.
    shared_facts = ("inits", "lr_overwritten")

    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        extra = (options or {}).get("extend-names") or ()
        return any(t in text for t in cls.requires_text) or any(name in text for name in extra)

    VALID = [
        # A validation loader that happens to shuffle is still for evaluation (escapydl's Optuna
        # objective); a module of unittest cases named tests.py is a test file; the optimizer's
        # settings come from the checkpoint loaded right after it is built (cgn-pytorch).
        """
        import torch
        from torch.utils.data import DataLoader
        def objective(trial, model, trainset, valset):
            trainloader = DataLoader(trainset, batch_size=trial.suggest_int("batch", 16, 256), shuffle=True)
            valloader = DataLoader(valset, batch_size=1024, shuffle=True)
            opt = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-1))
            for x, y in trainloader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            return evaluate(model, valloader)
        """,
        Valid(
            """
            import torch
            def test_fit(model, x, y):
                opt = torch.optim.SGD(model.parameters(), lr=0.5)
                for _ in range(100):
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    opt.step()
            """,
            path="monotonicnetworks/tests.py",
        ),
        """
        import torch
        def resume(model, path, loader):
            checkpoint = torch.load(path, weights_only=True)
            model.load_state_dict(checkpoint["model"])
            optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
            optimizer.load_state_dict(checkpoint["optimizer"])
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
        """,
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
        # Evaluation loaders: named for evaluation, over a held-out split (train=False, mode="val",
        # split="test").
        """
        import torch
        from torch.utils.data import DataLoader
        from torchvision import datasets
        def main(model, train_ds, root, fit):
            opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            val_loader = DataLoader(train_ds, batch_size=256)
            testloader = DataLoader(datasets.MNIST(root, train=False), batch_size=1000)
            holdout = ImageFolderSplit(root, mode="val")
            probe = DataLoader(holdout, batch_size=512)
            scored = DataLoader(load_dataset("imdb", split="test"), batch_size=128)
            fit(model, opt, train_ds)
        """,
        # Loaders used only by an evaluation function (under no_grad) or a sampling one.
        """
        import torch
        from torch.utils.data import DataLoader
        @torch.no_grad()
        def score(model, loader):
            return sum(model(x).sum() for x in loader)
        def main(model, ds, fit):
            extra = DataLoader(ds, batch_size=64)
            images = DataLoader(ds, batch_size=16)
            fit(model, torch.optim.SGD(model.parameters(), lr=model.lr))
            print(score(model, extra), len(images))
            draw_samples(model, images)
        """,
        # A loader named for training in a file that never trains.
        """
        from torch.utils.data import DataLoader
        def make_loaders(ds):
            train_loader = DataLoader(ds, batch_size=64)
            return train_loader
        """,
        # The configurator idiom: exec(...) overrides the top-level assignments before it.
        """
        import torch
        from torch.utils.data import DataLoader
        model = build_model()
        batch_size = 12
        learning_rate = 6e-4
        exec(open("configurator.py").read())
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        for x in loader:
            optimizer.zero_grad()
            model(x).backward()
            optimizer.step()
        """,
        # What fills in a parameter's default (`x if p is None else p`, `if p is None: p = ...`).
        """
        import torch
        def fit(model, loader, opt=None, sched=None):
            opt = torch.optim.Adam(model.parameters(), lr=0.01) if opt is None else opt
            if sched is None:
                sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
            for x in loader:
                opt.zero_grad()
                model(x).backward()
                opt.step()
                sched.step()
        """,
        # The fallback built inside `try:` under `if p is None:` (a failed fallback handled there).
        """
        import warnings
        import torch
        class Fitter:
            def __init__(self, net, opt=None):
                if opt is None:
                    try:
                        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
                    except ValueError:
                        warnings.warn("no parameters: no optimizer")
                self.net, self.opt = net, opt
            def fit(self, batches):
                for x in batches:
                    self.opt.zero_grad()
                    self.net(x).sum().backward()
                    self.opt.step()
        """,
        # A literal that restates the torch class's own default changes nothing (LinearLR's
        # end_factor=1.0, StepLR's gamma=0.1, AdamW's weight_decay=0.01); a warm-up "from zero"
        # needs a tiny start_factor (LinearLR refuses 0).
        """
        import torch
        def train(model, loader, cfg):
            opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
            warm = torch.optim.lr_scheduler.LinearLR(opt, 1e-3, 1.0, total_iters=cfg.warmup)
            decay = torch.optim.lr_scheduler.StepLR(opt, cfg.every, gamma=0.1)
            for epoch in range(cfg.epochs):
                for x in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                    warm.step()
                decay.step()
        """,
        # A method solving for a value by gradient descent on a copy of it (a distribution's
        # mode) and returning it: a numerical procedure, not a training run.
        """
        import torch
        class Density:
            def mode(self, guess):
                z = torch.nn.Parameter(guess.detach().clone())
                opt = torch.optim.Adam([z], lr=0.05)
                for _ in range(50):
                    opt.zero_grad()
                    (-self.log_prob(z)).backward()
                    opt.step()
                return z.detach()
        """,
        # One optimizer step with no loop (a smoke test / API demo) is not a training run.
        """
        import torch
        if __name__ == "__main__":
            model = torch.nn.Linear(4, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            opt.zero_grad()
            model(torch.randn(3, 4)).sum().backward()
            opt.step()
        """,
        # One step on made-up tensors in a function no code of the file calls: a pretraining demo
        # (pi-zero-pytorch's recap_pretrain).
        """
        import torch
        def pretrain(state):
            model = Tiny(**state.config).to(state.device)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
            images = torch.randn(1, 3, 32, 32).to(state.device)
            labels = torch.zeros(1, dtype=torch.long)
            loss = model(images, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.save(model.state_dict(), state.path)
        """,
        # A leading block of named module-level constants, whatever their letter case.
        """
        import torch
        from torch.utils.data import DataLoader
        lr = 3e-4
        batch_size = 64
        num_epochs = 10
        model = Net()
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for epoch in range(num_epochs):
            for x in loader:
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
        """,
        # Optimising an input tensor (feature visualisation, style transfer) with a frozen, pretrained
        # model is not a training run.
        """
        import torch
        from torchvision import models
        model = models.resnet18(weights="IMAGENET1K_V1").eval()
        model.requires_grad_(False)
        img = torch.randn(1, 3, 224, 224, requires_grad=True)
        opt = torch.optim.Adam([img], lr=0.05)
        for epoch in range(200):
            opt.zero_grad()
            (-model(img)[0, 3]).backward()
            opt.step()
        """,
        # batch_size=1 is one sample at a time by design, also for a loader named train_loader.
        """
        import torch
        from torch.utils.data import DataLoader
        def loaders(ds, model):
            train_loader = DataLoader(ds, batch_size=1)
            opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            for x in train_loader:
                opt.zero_grad()
                model(x).backward()
                opt.step()
        """,
        # batch_size=1 restates DataLoader's default, also in a shuffled loader (pyrnn's example
        # that draws one batch to plot).
        """
        import torch
        def make_batch(seq_len):
            loader = torch.utils.data.DataLoader(Bits(seq_len), batch_size=1, shuffle=True)
            return [b for b in loader][0]
        """,

        # A clipping literal where the optimizer takes its lr (and the rest) from a config is a fixed
        # safety guard, not a forgotten knob (ultralytics trainer.py, yolov5 train.py).
        """
        import torch
        class Trainer:
            def __init__(self, model, args):
                self.model, self.args = model, args
                self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr0, momentum=args.momentum)
            def optimizer_step(self):
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
                self.optimizer.step()
        """,
        """
        import torch
        from utils import smart_optimizer
        def train(model, loader, opt, hyp):
            optimizer = smart_optimizer(model, opt.optimizer, hyp["lr0"], hyp["momentum"])
            for x in loader:
                model(x).backward()
                torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=5.0)
                optimizer.step()
        """,
        # The fallback built when the caller gave no scheduler (neuralforecast): the branch of
        # ``if self.lr_scheduler:`` that runs without one, the attribute set from a parameter.
        """
        import torch


        class Model:
            def __init__(self, lr_scheduler=None, decay_steps=100):
                self.lr_scheduler = lr_scheduler
                self.decay_steps = decay_steps

            def configure_optimizers(self, lr):
                optimizer = torch.optim.Adam(self.parameters(), lr=lr)
                if self.lr_scheduler:
                    scheduler = self.lr_scheduler(optimizer=optimizer)
                else:
                    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.decay_steps, gamma=0.5)
                return {"optimizer": optimizer, "lr_scheduler": scheduler}
        """,
        # The settings block after a preamble that only sets the import path (pyrnn's examples).
        """
        import sys

        sys.path.append("./")

        import torch
        from data import Digits

        batch_size = 64
        epochs = 10

        loader = torch.utils.data.DataLoader(Digits(), batch_size=batch_size, shuffle=True)
        model = torch.nn.Linear(64, 10)
        opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[1]))
        for epoch in range(int(sys.argv[2])):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
        """,
        # A base lr of 1 under a LambdaLR: the lambda gives the learning rate (phasenet).
        """
        import torch


        def train(model, loader, args):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1.0, weight_decay=args.weight_decay)
            schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda it: args.lr * min(1.0, it / 100))
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
                schedule.step()
        """,
        # L-BFGS's lr=1 is its default and the full quasi-Newton step (deepxde).
        """
        import torch
        def fit(model, x, y, steps):
            opt = torch.optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
            for _ in range(steps):
                def closure():
                    opt.zero_grad()
                    loss = ((model(x) - y) ** 2).mean()
                    loss.backward()
                    return loss
                opt.step(closure)
        """,
    ]
    INVALID = [
        # One step in a function no code of the file calls, on data it is given: another file may
        # call it once per batch.
        Invalid(
            """
            import torch
            def train_step(state, batch):
                model = Tiny(**state.config).to(state.device)
                optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
                images = torch.randn(1, 3, 32, 32).to(state.device)
                loss = model(images, batch.to(state.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
            lines=(5,),
            messages=("learning rate 1e-4 is hard-coded in `torch.optim.Adam(...)`, so it cannot be swept, logged or "
                      "reproduced; read it from a config or a command-line argument",),
        ),
        # A statement that does something else ends the leading block: what follows is code.
        Invalid(
            """
            import sys

            print("starting")

            import torch
            from data import Digits

            batch_size = 64
            epochs = 10

            loader = torch.utils.data.DataLoader(Digits(), batch_size=batch_size, shuffle=True)
            model = torch.nn.Linear(64, 10)
            opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[1]))
            for epoch in range(int(sys.argv[2])):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
            """,
            lines=(9,),
            messages=("batch size 64 is hard-coded: `batch_size` is assigned only this literal and passed to "
                      f"`torch.utils.data.DataLoader(...)`, {_WHY}",),
        ),
        # Any other base lr scales what the LambdaLR's lambda gives: a choice.
        Invalid(
            """
            import torch


            def train(model, loader, args):
                optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=args.weight_decay)
                schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda it: args.lr * min(1.0, it / 100))
                for x in loader:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    optimizer.step()
                    schedule.step()
            """,
            lines=(6,),
            messages=(f"learning rate 0.1 is hard-coded in `torch.optim.AdamW(...)`, {_WHY}",),
        ),
        # ``if not warm_start:`` tests a flag, not an object the caller may give (ESRNN).
        Invalid(
            """
            import torch


            class Forecaster:
                def __init__(self, lr, step_size):
                    self.lr, self.step_size = lr, step_size

                def fit(self, model, loader, warm_start=False):
                    if not warm_start:
                        self.opt = torch.optim.Adam(model.parameters(), lr=self.lr)
                        self.scheduler = torch.optim.lr_scheduler.StepLR(self.opt, step_size=self.step_size, gamma=0.9)
                    for x in loader:
                        self.opt.zero_grad()
                        model(x).sum().backward()
                        self.opt.step()
                    self.scheduler.step()
            """,
            lines=(12,),
            messages=(f"`gamma` 0.9 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, {_WHY}",),
        ),
        # The same branch, but the attribute is not the caller's: the class builds it itself.
        Invalid(
            """
            import torch


            class Model:
                def __init__(self, lr_scheduler=None, decay_steps=100):
                    self.lr_scheduler = make_scheduler()
                    self.decay_steps = decay_steps

                def configure_optimizers(self, lr):
                    optimizer = torch.optim.Adam(self.parameters(), lr=lr)
                    if self.lr_scheduler:
                        scheduler = self.lr_scheduler(optimizer=optimizer)
                    else:
                        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.decay_steps, gamma=0.5)
                    return {"optimizer": optimizer, "lr_scheduler": scheduler}
            """,
            lines=(15,),
            messages=(f"`gamma` 0.5 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, {_WHY}",),
        ),
        # Any other L-BFGS step size is a choice.
        Invalid(
            """
            import torch
            def fit(model, x, y, steps):
                opt = torch.optim.LBFGS(model.parameters(), lr=0.5, line_search_fn="strong_wolfe")
                for _ in range(steps):
                    def closure():
                        opt.zero_grad()
                        loss = ((model(x) - y) ** 2).mean()
                        loss.backward()
                        return loss
                    opt.step(closure)
            """,
            lines=(4,),
            messages=(f"learning rate 0.5 is hard-coded in `torch.optim.LBFGS(...)`, {_WHY}",),
        ),
        # Restored only when resuming: a fresh run trains with the literal.
        Invalid(
            """
            import torch
            def fit(model, loader, resume=None):
                optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
                if resume:
                    optimizer.load_state_dict(torch.load(resume, weights_only=True)["optimizer"])
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
            """,
            lines=(4,),
            messages=("learning rate 0.001 is hard-coded in `torch.optim.Adam(...)`, so it cannot be swept, logged or "
                      "reproduced; read it from a config or a command-line argument",),
        ),
        # Built inside `try:` but not under an `if opt is None:` test: the run's own setting.
        Invalid(
            """
            import torch
            def fit(net, batches, opt=None):
                try:
                    opt = torch.optim.SGD(net.parameters(), lr=0.05)
                except ValueError:
                    return
                for x in batches:
                    opt.zero_grad()
                    net(x).sum().backward()
                    opt.step()
            """,
            lines=(5,),
            messages=(f"learning rate 0.05 is hard-coded in `torch.optim.SGD(...)`, {_WHY}",),
        ),
        # Values other than the torch defaults, and a learning rate even when it is the default.
        Invalid(
            """
            import torch
            def train(model, loader, cfg):
                opt = torch.optim.Adam(model.parameters(), lr=1e-3)
                warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=0.5, total_iters=cfg.n)
                for epoch in range(cfg.epochs):
                    for x in loader:
                        opt.zero_grad()
                        model(x).sum().backward()
                        opt.step()
                        warm.step()
            """,
            lines=(4, 5, 5),
            messages=(
                f"learning rate 1e-3 is hard-coded in `torch.optim.Adam(...)`, {_WHY}",
                f"`start_factor` 0.1 is hard-coded in `torch.optim.lr_scheduler.LinearLR(...)`, {_WHY}",
                f"`end_factor` 0.5 is hard-coded in `torch.optim.lr_scheduler.LinearLR(...)`, {_WHY}",
            ),
        ),
        # Weights fitted from a fresh start (not a copy of a value) are a model being trained.
        Invalid(
            """
            import torch
            def fit_line(xs, ys):
                w = torch.nn.Parameter(torch.zeros(2))
                opt = torch.optim.SGD([w], lr=0.1)
                for _ in range(100):
                    opt.zero_grad()
                    ((xs * w[0] + w[1] - ys) ** 2).mean().backward()
                    opt.step()
                return w.detach()
            """,
            lines=(5,),
            messages=(f"learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, {_WHY}",),
        ),
        # ... but not beside a literal learning rate, nor an optimizer left at its default lr.
        Invalid(
            """
            import torch
            def train(model, loader, args):
                opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=args.momentum)
                for x in loader:
                    model(x).backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
                    opt.step()
            """,
            lines=(4, 7),
            messages=(
                "learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                "reproduced; read it from a config or a command-line argument",
                "gradient-clipping max_norm 10.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
                "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
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
                a = lr_scheduler.StepLR(opt, 30, gamma=0.5)
                b = lr_scheduler.MultiStepLR(opt, milestones=[30, 80], gamma=cfg.gamma)
                c = lr_scheduler.OneCycleLR(opt, 0.1, total_steps=cfg.steps)
            """,
            lines=(4, 4, 5, 6),
            messages=(
                "`step_size` 30 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be "
                "swept, logged or reproduced; read it from a config or a command-line argument",
                "`gamma` 0.5 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be swept, "
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
        Invalid(
            """
            import torch
            def train(model, loader):
                opt = torch.optim.Adam(model.parameters())
                for x in loader:
                    model(x).backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                    opt.step()
            """,
            lines=(7,),
            messages=(
                "gradient-clipping max_norm 0.5 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
                "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # A trainer taking its knobs as arguments (``lr=train_lr``) should take the norm too
        # (denoising_diffusion guided_diffusion.py:932; its sibling trainers take max_grad_norm).
        Invalid(
            """
            import torch
            class Trainer:
                def __init__(self, model, train_lr=1e-4):
                    self.model = model
                    self.opt = torch.optim.Adam(model.parameters(), lr=train_lr)
                def train(self, accelerator, loader):
                    for x in loader:
                        accelerator.backward(self.model(x))
                        accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                        self.opt.step()
            """,
            lines=(10,),
            messages=(
                "gradient-clipping max_norm 1.0 is hard-coded in `accelerator.clip_grad_norm_(...)`, so it "
                "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # The same value in both branches of one ``if`` is one finding; no optimizer is built in
        # the file, so nothing says the clipping is a fixed guard beside configured values.
        Invalid(
            """
            import torch
            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                def optimizer_step(self):
                    self.scaler.unscale_(self.optimizer)
                    if self.device.type == "npu":
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0, foreach=False)
                    else:
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
                    self.scaler.step(self.optimizer)
            """,
            lines=(9,),
            messages=(
                "gradient-clipping max_norm 10.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
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
        # DataLoaders: one that shuffles or that a train_dataloader hook builds, anywhere; any
        # other one that is not for evaluation in a file that trains.
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader
            def loaders(train_ds, extra_ds):
                train_loader = DataLoader(train_ds, batch_size=128)
                extra_loader = DataLoader(extra_ds, batch_size=256)
                return train_loader, extra_loader
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
        # An epoch count written as an offset from the start epoch.
        Invalid(
            """
            def train(model, loader, opt, start_epoch):
                for epoch in range(start_epoch, start_epoch + 200):
                    train_one_epoch(model, loader, opt)
            """,
            lines=(3,),
            messages=(
                "epoch count 200 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
                "logged or reproduced; read it from a config or a command-line argument",
            ),
        ),
        # The stepping loop writes every param group's lr, so the constructor's lr never takes effect;
        # its weight decay does.
        Invalid(
            """
            import torch
            def make_optimizer(model):
                return torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
            def train(model, loader, schedule):
                opt = make_optimizer(model)
                for step, (x, y) in enumerate(loader):
                    opt.zero_grad()
                    model(x, y).backward()
                    for group in opt.param_groups:
                        group["lr"] = schedule(step)
                    opt.step()
            """,
            lines=(4,),
            messages=(
                "weight decay 0.1 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
                "or reproduced; read it from a config or a command-line argument",
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
        self._shown: list[tuple[str, str, cst.CSTNode]] = []  # (name, value as written, literal) reported
        # Noted during the walk, settled in ``finish`` (the shared models answer then):
        self._calls: list[tuple[cst.Call, str, list]] = []  # watched call, its kind, (name, value) pairs
        self._loops: list[tuple[cst.For, cst.BaseExpression]] = []  # range loops that may be epoch loops
        self._class_calls: list[cst.Call] = []  # calls that may construct an optimizer subclass
        self._subclasses: set[str] = set()  # names of this file's classes that may subclass an optimizer
        # Cheap necessary conditions, so the shared models are built only where they can
        # change the answer:
        self._trainish = False  # a call named train/fit/epoch/backward/step somewhere
        self._builds_optimizer = False  # a library optimizer is constructed
        self._literal_names: set[str] = set()  # names assigned a numeric literal somewhere
        self._inits: dict[str, list[str]] = {}  # qualified class name -> __init__ parameters
        self._returned: list[list] = []  # [that function, span, message]: settled in check_project

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
            self._inits[".".join([*(a.name.value for a in reversed(outer)), node.name.value])] = \
                optim_classes.init_params(init)

    def _may_be_optimizer(self, base: cst.BaseExpression) -> bool:
        """A base that is a library optimizer, an earlier class of this file that may be one,
        or an import from outside the libraries (not ``nn.Module``)."""
        if isinstance(base, cst.Name) and not self.ctx.is_imported(base):
            return base.value in self._subclasses
        qualified = self.ctx.qualified_name(base) or ""
        return optim_classes.is_library_optimizer(qualified) or not is_library(qualified)

    def visit_Assign(self, node: cst.Assign) -> None:
        if numeric_value(node.value) is not None:
            self._literal_names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name) and numeric_value(node.value) is not None:
            self._literal_names.add(node.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._trainish and epochs.TRAINISH_CALL.search(epochs.call_name(node)):
            self._trainish = True
        if not self.reports:
            return  # where only shared facts are kept, ``_share_facts`` looks for optimizers itself
        noted = self._noted(node)
        if noted is not None:
            self._builds_optimizer = self._builds_optimizer or noted[0] == OPTIMIZER
            self._calls.append((node, *noted))

    def _noted(self, call: cst.Call) -> tuple[str, list] | None:
        """The call's kind and watched arguments, where the walk notes the call: a watched
        call in code (not in a config file)."""
        if self._skip or not call.args:
            return None
        kind, watched = self._watched(call)
        return (kind, watched) if watched and self._in_code(call) else None

    def visit_For(self, node: cst.For) -> None:
        if self._skip or EPOCHS in self._ignore:
            return
        stop = epochs.range_stop(self.ctx, node.iter)
        if stop is not None and (numeric_value(stop) is not None or isinstance(stop, cst.Name)) and self._in_code(node):
            self._loops.append((node, stop))

    # -- the analysis -----------------------------------------------------------------------
    def finish(self) -> None:
        if not self.reports:
            self._share_facts()
            return
        if self._builds_optimizer and runs.optimises_inputs(self.ctx.semantic):
            return  # style transfer, adversarial examples: not a training run
        self._check_file()
        self._lr_overwritten()

    def _lr_overwritten(self) -> None:
        if self._trainish and "param_groups" in self.ctx.text:
            overwritten = runs.lr_overwritten_callees(self.ctx.semantic)
            if overwritten:
                self.ctx.facts.setdefault(self.code, {})["lr_overwritten"] = sorted(overwritten)

    def _share_facts(self) -> None:
        """Only the facts other files read (``shared_facts``), as ``finish`` stores them: none
        in a file that optimises its inputs. Whether it builds an optimizer (which the walk
        did not note) is asked only where there is something to store."""
        if self._inits:
            self.ctx.facts.setdefault(self.code, {})["inits"] = self._inits
        self._lr_overwritten()
        if self.code in self.ctx.facts and self._optimizer_built() and runs.optimises_inputs(self.ctx.semantic):
            del self.ctx.facts[self.code]

    def _optimizer_built(self) -> bool:
        """What the walk's ``visit_Call`` notes in ``_builds_optimizer``: a library optimizer
        constructed, with a watched argument, in code."""
        return any((noted := self._noted(site.node)) is not None and noted[0] == OPTIMIZER
                   for site in self.ctx.semantic.model.calls)

    def _check_file(self) -> None:
        """This file's findings, and the facts of those settled with the other files."""
        for call, kind, watched in self._calls:
            self._check_call(call, kind, watched)
        if self._trainish:
            training = self.ctx.semantic.training if self._loops else None
            for loop, stop in self._loops:
                if epochs.is_epoch_loop(training, loop):
                    self._check(EPOCHS, stop, loop, "in the epoch loop's `range(...)`", "bounds the epoch loop")
        if self._class_calls or self._inits:
            self._check_class_calls()
        if self._returned:
            self.ctx.facts.setdefault(self.code, {})["returned"] = self._returned

    def _check_call(self, call: cst.Call, kind: str, watched: list) -> None:
        """Report the watched arguments of one call, unless the call is not part of a
        training run's configuration."""
        callee = self.ctx.qualified_name(call.func) or "the call"
        watched = [(n, v) for n, v in watched if isinstance(v, cst.Name) or is_positive(numeric_value(v))
                   and not optim_classes.is_neutral(callee, n, numeric_value(v))]
        if not watched:
            return
        semantic = self.ctx.semantic
        floor, later = 0, None
        if kind == LOADER and loaders.feeds_evaluation(semantic, call):
            return  # ``valloader = DataLoader(valset, ..., shuffle=True)``: shuffled, still for evaluation
        if kind == LOADER:
            if not loaders.feeds_training(self.ctx, call) and not runs.file_trains(semantic):
                return
            floor = 1  # batch_size=1 is DataLoader's own default: one sample at a time, nothing tuned
        if settings.fills_parameter_default(semantic.model, call) or kind == OPTIMIZER and self._not_a_run(call):
            return
        if kind == OPTIMIZER:
            if any(n == "lr" for n, _ in watched):
                if runs.lr_set_every_step(semantic, call) or any(
                        n == "lr" and numeric_value(v) == 1 for n, v in watched) and runs.lr_given_by_lambda(semantic, call):
                    watched = [(n, v) for n, v in watched if n != "lr"]
                else:
                    later = runs.returned_by(semantic, call)  # another file's loop may overwrite it
        elif any(n in _CLIP_NAMES for n, _ in watched) and runs.optimizer_from_config(semantic):
            watched = [(n, v) for n, v in watched if n not in _CLIP_NAMES]  # a fixed guard beside configured ones
        for name, value in watched:
            self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`", floor,
                        later if name == "lr" else None)

    def _not_a_run(self, call: cst.Call) -> bool:
        """The optimizer ``call`` builds makes no training run: stepped once with no loop, or a
        numerical solve for a value the function returns; or its settings are replaced by a
        checkpoint's right away (``opt.load_state_dict(ckpt["optimizer"])`` in the same block)."""
        return runs.single_demo_step(self.ctx.semantic, call) or runs.solves_for_tensor(self.ctx.semantic, call) \
            or runs.state_restored(self.ctx.semantic, call)

    # -- what a call watches --------------------------------------------------------------
    def _watched(self, call: cst.Call) -> tuple[str, list[tuple[str, cst.BaseExpression]] | None]:
        """The call's kind and (hyperparameter name, argument value) for each watched
        argument; None when the call is none of the watched kinds (an empty list when it is
        one, with nothing watched in it)."""
        ctx = self.ctx
        func = call.func
        qualified = ctx.qualified_name(func)
        last = qualified.rsplit(".", 1)[-1] if qualified else epochs.call_name(call)
        imported = ctx.is_imported(func)
        if imported and qualified:
            if is_optimizer_constructor(ctx, func):
                return OPTIMIZER, self._args(call, library_positions(qualified), OPTIMIZER_HYPERPARAMETERS)
            kind = scheduler_kind(ctx, func)
            if kind is not None:
                names = SCHEDULER_POSITIONS.get(kind, ())
                positions = {i + 1: n for i, n in enumerate(names) if n in SCHEDULER_KEYWORDS}
                return SCHEDULER, self._args(call, positions, SCHEDULER_KEYWORDS)
            if qualified in DATALOADERS:
                return LOADER, self._args(call, {1: "batch_size"}, ("batch_size",))
            if qualified in _CLIP_NORM_FUNCTIONS:
                return OTHER, self._args(call, {1: "max_norm"}, ("max_norm",))
            if qualified in _CLIP_VALUE_FUNCTIONS:
                return OTHER, self._args(call, {1: "clip_value"}, ("clip_value",))
            root = qualified.split(".", 1)[0]
            if root == "transformers" and last.endswith("TrainingArguments"):
                return OTHER, self._args(call, {}, TRAINING_ARGUMENTS_KEYWORDS)
            if root in LIGHTNING_ROOTS and last == "Trainer":
                return OTHER, self._args(call, {}, LIGHTNING_TRAINER_KEYWORDS)
        elif isinstance(func, cst.Attribute):
            if last in ("clip_grad_norm_", "clip_grad_value_"):
                # accelerator.clip_grad_norm_(params, max_norm); FSDP's model.clip_grad_norm_(max_norm)
                name = "max_norm" if last == "clip_grad_norm_" else "clip_value"
                positional = [a for a in call.args if a.keyword is None and not a.star]
                return OTHER, self._args(call, {1 if len(positional) >= 2 else 0: name}, (name,))
            if last == "clip_gradients":  # Fabric / LightningModule
                return OTHER, self._args(call, {}, ("max_norm", "clip_val", "gradient_clip_val"))
            if last in _ARGPARSE_METHODS:
                return OTHER, []
        last = epochs.call_name(call)
        if last[:1].isupper() and (isinstance(func, cst.Name) or imported):
            # maybe an optimizer subclass of this file or of another project file (finish)
            self._class_calls.append(call)
        return OTHER, self._args(call, {}, ()) if self._extra else None

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

    # -- values --------------------------------------------------------------------------
    def _check(self, name: str, value: cst.BaseExpression, anchor: cst.CSTNode, where: str, used: str,
               floor: float = 0, later: str | None = None) -> None:
        """Report ``value`` when it is a literal above ``floor``, or a literal-only local."""
        number = numeric_value(value)
        if number is not None:
            if is_positive(number, floor):
                self._report(name, value, f"is hard-coded {where}", later)
        elif isinstance(value, cst.Name):
            for literal in self._literal_local(value, anchor) or ():
                if is_positive(numeric_value(literal), floor):
                    self._report(name, literal,
                                 f"is hard-coded: `{value.value}` is assigned only this literal and {used}", later)

    def _report(self, name: str, literal: cst.BaseExpression, what: str, later: str | None = None) -> None:
        """Report now, or, with ``later`` (the function returning the optimizer to another
        file), in ``check_project`` unless a project file's loop overwrites that optimizer's lr."""
        if id(literal) in self._reported:
            return
        self._reported.add(id(literal))
        text = _shown(self.ctx, literal)
        if any(n == name and t == text and exclusive(self.ctx, other, literal) for n, t, other in self._shown):
            return  # the same value in the other branch of one ``if`` (an NPU and a CUDA call): one finding
        self._shown.append((name, text, literal))
        desc = DESCRIPTIONS.get(name, f"`{name}`")
        if later is None:
            self.report(literal, f"{desc} {text} {what}, {_WHY}")
        else:
            self._returned.append([later, self.ctx.span(literal).to_json(), f"{desc} {text} {what}, {_WHY}"])

    def _literal_local(self, name: cst.Name, anchor: cst.CSTNode) -> list[cst.BaseExpression] | None:
        """The literals a lower-case local (of the function enclosing ``anchor``, or of
        module-level code when used there) may hold where it is used, when every binding
        reaching there is a literal one; else None. Module-level settings (the leading block
        of constants, anything under a configurator) are not locals."""
        if name.value.isupper() or name.value not in self._literal_names:
            return None
        model = self.ctx.semantic.model
        home = model.scope_of(anchor).function() or model.module
        found = model.reaching(name.value, anchor)
        if not found or any(b.scope is not home or b.kind not in ("assign", "ann") for b in found):
            return None
        if any(numeric_value(b.value) is None for b in found):
            return None
        if home is model.module:
            configured = settings.configurator_order(model)
            if name.value in settings.header_constants(model) or configured is not None and all(
                    b.order < configured for b in found):
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
                positions = optim_classes.local_positions(info)
                target = ["local", info.qualname]
            else:
                qualified = self.ctx.qualified_name(func) or ""
                if is_library(qualified):
                    continue
                info, positions, target = None, None, ["ext", qualified]
            if not self._in_code(call) or settings.fills_parameter_default(self.ctx.semantic.model, call) \
                    or self._not_a_run(call):
                continue
            callee = dotted_name(func)
            if positions is not None:
                for name, value in self._args(call, positions, OPTIMIZER_HYPERPARAMETERS):
                    self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`")
            elif info is None or optim_classes.has_external_base(info):
                args = self._candidate_args(call)
                if args:
                    candidates.append({"callee": target, "shown": callee, "args": args})
        facts: dict[str, Any] = {}
        if candidates:
            facts["calls"] = candidates
        if self._inits:
            facts["inits"] = self._inits
        if facts:
            self.ctx.facts.setdefault(self.code, {}).update(facts)

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
                if key not in OPTIMIZER_HYPERPARAMETERS or key in self._ignore:
                    continue
            for literal, var in self._literals(arg.value, call):
                out.append([key, _shown(self.ctx, literal), self.ctx.span(literal).to_json(), var])
        return out

    def _literals(self, value: cst.BaseExpression, anchor: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
        number = numeric_value(value)
        if number is not None:
            return [(value, "")] if is_positive(number) else []
        if isinstance(value, cst.Name):
            return [(lit, value.value) for lit in self._literal_local(value, anchor) or () if is_positive(numeric_value(lit))]
        return []

    @classmethod
    def check_project(cls, project, options: dict[str, Any]):
        ignore = set(options.get("ignore-names") or ())

        def inits(record, fact) -> list[str]:
            return ((record.facts.get(cls.code) or {}).get("inits") or {}).get(fact["name"], [])

        out = []
        overwritten = {n for r in project.records for n in (r.facts.get(cls.code) or {}).get("lr_overwritten", ())}
        for record in project.records:
            facts = record.facts.get(cls.code) or {}
            out.extend(Finding.at(cls, record.path, Span.from_json(span), message)
                       for function, span, message in facts.get("returned", ())
                       if function not in overwritten and runs.HANDED_IN not in overwritten)
            for call in facts.get("calls", ()):
                kind, name = call["callee"]
                if kind == "local":
                    qualified = record.qualified(name)
                else:
                    hit = project.resolve_symbol(name, record)
                    if hit is None:
                        continue
                    qualified = hit[0].qualified(hit[1])
                positions = optim_classes.project_positions(project, qualified, inits)
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


def _shown(ctx, literal: cst.BaseExpression) -> str:
    text = ctx.module.code_for_node(literal).strip()
    return text if len(text) <= 30 else text[:27] + "..."
