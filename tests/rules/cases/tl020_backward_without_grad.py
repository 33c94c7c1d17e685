"""TL020's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl020_backward_without_grad import message
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # The fix: the step outside the evaluation block.
    """
        import torch
        import torch.nn.functional as F
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            val_loss = F.cross_entropy(model(vx), vy)
        """,
    # The loss computed with autograd on, its backward and step inside no_grad: the graph was
    # recorded when the loss was computed, so this trains (d2l's Trainer.fit_epoch).
    """
        import torch
        def fit_epoch(model, batch, optim):
            loss = model.training_step(batch)
            optim.zero_grad()
            with torch.no_grad():
                loss.backward()
                optim.step()
        """,
    # enable_grad inside a no_grad function turns autograd back on (a SAM-style step).
    """
        import torch
        @torch.no_grad()
        def first_step(model, x, y, loss_fn):
            with torch.enable_grad():
                loss = loss_fn(model(x), y)
                loss.backward()
        """,
    # set_grad_enabled(phase == "train"): the tutorial's train/val loop records when training.
    """
        import torch
        for phase in ["train", "val"]:
            for x, y in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    loss = criterion(model(x), y)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
        """,
    # A teacher's targets under no_grad, the student's loss outside (distillation, DQN targets).
    """
        import torch
        import torch.nn.functional as F
        with torch.no_grad():
            target = teacher(x)
        loss = F.mse_loss(student(x), target)
        loss.backward()
        """,
    # inference_mode(False) decides nothing: autograd stays on.
    """
        import torch
        with torch.inference_mode(False):
            loss = model(x).sum()
            loss.backward()
        """,
    # A leaf made under no_grad that asks for grad records afterwards.
    """
        import torch
        with torch.no_grad():
            delta = torch.zeros_like(x, requires_grad=True)
        delta.backward(grad)
        """,
    # A helper called both with and without no_grad: the callers disagree.
    """
        import torch
        def step(model, x, y, opt):
            loss = model(x, y)
            loss.backward()
            opt.step()
        step(model, x, y, opt)
        with torch.no_grad():
            step(model, vx, vy, opt)
        """,
    # The loss bound again after the no_grad block: the backward sees the later one.
    """
        import torch
        with torch.no_grad():
            loss = model(x).sum()
        print(loss)
        loss = model(x).sum()
        loss.backward()
        """,
    # A tutorial demonstrating the error, catching it.
    """
        import torch
        with torch.no_grad():
            z = w @ x
        try:
            z.backward()
        except RuntimeError as e:
            print(e)
        """,
    # A Lightning training_step: Lightning runs the backward of what it returns.
    """
        import torch
        import pytorch_lightning as pl
        class Model(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                x, y = batch
                with torch.no_grad():
                    t = self.teacher(x)
                return torch.nn.functional.mse_loss(self(x), t)
        """,
]

INVALID: list[Invalid] = [
    # The page's example: the whole training step inside no_grad.
    Invalid("""
        import torch
        import torch.nn.functional as F

        with torch.no_grad():
            for x, y in loader:
                optimizer.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
        """, lines=(9,), messages=(message("loss", "inside `torch.no_grad()`"),)),
    # A decorator turns autograd off for the whole function.
    Invalid("""
        import torch
        @torch.inference_mode()
        def predict(model, x, y, optimizer):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        """, lines=(6,), messages=(message("loss", "under `@torch.inference_mode()`"),)),
    # torch.no_grad spelled as a bare decorator object from an import.
    Invalid("""
        from torch import no_grad
        @no_grad()
        def train_step(model, batch, opt):
            opt.zero_grad()
            model(batch).mean().backward()
            opt.step()
        """, lines=(6,), messages=(message("model(batch).mean()", "under `@no_grad()`"),)),
    # set_grad_enabled(False) earlier in the block.
    Invalid("""
        import torch
        torch.set_grad_enabled(False)
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        """, lines=(6,), messages=(message("loss", "after `torch.set_grad_enabled(False)`"),)),
    # The loss computed under no_grad, its backward after the block.
    Invalid("""
        import torch
        with torch.no_grad():
            logits = net(x_query)
            loss_q = torch.nn.functional.cross_entropy(logits, y_query)
        optimizer.zero_grad()
        loss_q.backward()
        optimizer.step()
        """, lines=(7,), messages=(message("loss_q", "inside `torch.no_grad()`"),)),
    # A training function only ever called inside no_grad.
    Invalid("""
        import torch
        def train_one_epoch(model, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                loss = model(x, y)
                loss.backward()
                opt.step()
        with torch.no_grad():
            for epoch in range(10):
                train_one_epoch(model, loader, opt)
        """, lines=(7,), messages=(message("loss", "in `train_one_epoch()`, which is only called with autograd off"),)),
    # GradScaler: scale() multiplies where the backward is written.
    Invalid("""
        import torch
        loss = torch.nn.functional.mse_loss(model(x), y)
        with torch.no_grad():
            scaler.scale(loss).backward()
        """, lines=(5,), messages=(message("scaler.scale(loss)", "inside `torch.no_grad()`"),)),
    # torch.autograd.backward, and a loss scaled after the no_grad block.
    Invalid("""
        import torch
        with torch.inference_mode():
            loss = model(x).sum()
        torch.autograd.backward(loss / accumulation_steps)
        """, lines=(5,), messages=(message("loss / accumulation_steps", "inside `torch.inference_mode()`"),)),
    # A method of a trainer, several items in the with.
    Invalid("""
        import torch
        class Trainer:
            def step(self, batch):
                with torch.no_grad(), autocast():
                    loss = self.model(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        """, lines=(8,), messages=(message("loss", "inside `torch.no_grad()`"),)),
]
