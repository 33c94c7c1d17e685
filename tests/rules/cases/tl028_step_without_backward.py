"""TL028's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl028_step_without_backward import cleared_message, forgotten_message
from torchlint.rule import Invalid, Valid

_SETUP = """
        import torch
        import torch.nn as nn

        model = Net()
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        """

VALID: list[Valid | str] = [
    # The fix: backward between zero_grad and step.
    _SETUP + """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    # Clearing after the step: the next iteration's step follows its own backward.
    _SETUP + """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
    # Gradient accumulation, the step at the top of the iteration: it applies the backwards of
    # the previous iterations.
    _SETUP + """
        for i, (x, y) in enumerate(loader):
            if i > 0 and i % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
            loss = criterion(model(x), y) / accumulation_steps
            loss.backward()
        """,
    # LBFGS: the closure differentiates.
    _SETUP + """
        for x, y in loader:
            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                return loss
            optimizer.step(closure)
        """,
    # The backward runs in a helper of the file.
    _SETUP + """
        def backward_pass(x, y):
            loss = criterion(model(x), y)
            loss.backward()
            return loss
        for x, y in loader:
            optimizer.zero_grad()
            backward_pass(x, y)
            optimizer.step()
        """,
    # The backward runs in a method inherited from another module.
    """
        from base import BaseModel

        class Pix2Pix(BaseModel):
            def optimize_parameters(self):
                self.forward()
                self.optimizer_G.zero_grad()
                self.backward_G()
                self.optimizer_G.step()
        """,
    # A step helper: its caller runs the backward first.
    """
        class Trainer:
            def optimizer_step(self):
                self.optimizer.step()
                self.optimizer.zero_grad()
        """,
    # Gradients written by hand (an optimizer test).
    """
        import torch
        params = [torch.nn.Parameter(torch.ones(3))]
        opt = torch.optim.SGD(params, lr=0.1)
        opt.zero_grad()
        for p in params:
            p.grad = torch.full_like(p, 0.5)
        opt.step()
        """,
    # accelerate's backward.
    _SETUP + """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
        """,
    # The loss handed to code the file does not show, which may differentiate it.
    _SETUP + """
        from utils import backprop
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            backprop(loss)
            optimizer.step()
        """,
    # Clearing between backward and step: TL001 reports it at the zero_grad().
    _SETUP + """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.zero_grad()
            optimizer.step()
        """,
]

INVALID: list[Invalid] = [
    # The page's example: the backward forgotten.
    Invalid(_SETUP + """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            optimizer.step()
        """, lines=(12,), messages=(cleared_message("optimizer", 10),)),
    # The step before the backward.
    Invalid(_SETUP + """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            optimizer.step()
            loss.backward()
        """, lines=(12,), messages=(cleared_message("optimizer", 10),)),
    # No clearing and no backward: the loss is only printed.
    Invalid(_SETUP + """
        for x, y in loader:
            output = model(x)
            loss = criterion(output, y)
            optimizer.step()
            print(loss.item())
        """, lines=(12,), messages=(forgotten_message("optimizer", "loss"),)),
    # A module's zero_grad() clears the optimizer's parameters too.
    Invalid(_SETUP + """
        for x, y in loader:
            model.zero_grad()
            loss = criterion(model(x), y)
            optimizer.step()
        """, lines=(12,), messages=(cleared_message("optimizer", 10),)),
    # A training step function, outside any loop.
    Invalid("""
        def train_step(model, optimizer, criterion, x, y):
            optimizer.zero_grad()
            out = model(x)
            loss = criterion(out, y)
            optimizer.step()
            return loss.item()
        """, lines=(6,), messages=(cleared_message("optimizer", 3),)),
    # A method of a trainer class, the backward after the step.
    Invalid("""
        import torch.nn.functional as F

        class Trainer:
            def train_batch(self, x, y):
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(x), y)
                self.optimizer.step()
                loss.backward()
                return loss
        """, lines=(8,), messages=(cleared_message("self.optimizer", 6),)),
    # A GradScaler step with no scaled backward.
    Invalid(_SETUP + """
        scaler = torch.cuda.amp.GradScaler()
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.step(optimizer)
            scaler.update()
        """, lines=(14,), messages=(cleared_message("optimizer", 11),)),
    # A GAN's discriminator update without its backward.
    Invalid("""
        import torch
        netD, netG = Discriminator(), Generator()
        optD = torch.optim.Adam(netD.parameters())
        optG = torch.optim.Adam(netG.parameters())
        for real in loader:
            optD.zero_grad()
            d_loss = criterion(netD(real), ones) + criterion(netD(netG(z).detach()), zeros)
            optD.step()
            optG.zero_grad()
            g_loss = criterion(netD(netG(z)), ones)
            g_loss.backward()
            optG.step()
        """, lines=(9,), messages=(cleared_message("optD", 7),)),
    # set_to_none by hand, then the step.
    Invalid(_SETUP + """
        for x, y in loader:
            for p in model.parameters():
                p.grad = None
            loss = criterion(model(x), y)
            optimizer.step()
        """, lines=(13,), messages=(cleared_message("optimizer", 11),)),
]
