"""TL027 optimizer-stepped-after-other-backward beyond the embedded cases: projects of several
modules."""

from __future__ import annotations

from torchlint.checks.tl027_optimizer_stepped_after_other_backward import message
from torchlint.testing import lint_tree

STEPS = """
import torch

def train(d_model, g_model, loader, criterion, d_optimizer, g_optimizer):
    for lr, hr in loader:
        d_optimizer.zero_grad()
        sr = g_model(lr)
        d_loss = criterion(d_model(hr), 1.0) + criterion(d_model(sr.detach()), 0.0)
        d_loss.backward()
        g_optimizer.step()
"""


def _found(files):
    return [(f.path.rsplit("/", 1)[-1], f.span.line, f.message) for f in lint_tree(files, ["TL027"])]


def test_optimizers_built_by_a_caller_in_another_module_are_not_followed():
    main = """
import torch
from steps import train
d, g = Discriminator(), Generator()
train(d, g, loader, criterion, torch.optim.Adam(d.parameters()), torch.optim.Adam(g.parameters()))
"""
    assert _found({"steps.py": STEPS, "main.py": main}) == []


def test_the_same_train_function_with_its_caller_in_its_module_is_reported():
    caller = """
def main():
    d, g = Discriminator(), Generator()
    train(d, g, loader, criterion, torch.optim.Adam(d.parameters()), torch.optim.Adam(g.parameters()))
"""
    assert _found({"steps.py": STEPS + caller}) == [
        ("steps.py", 10, message("g_optimizer", "g_model", "d_model", "d_optimizer", 9))]


def test_a_gan_class_imported_from_another_module_is_judged_in_its_own():
    gan = """
import torch

class GAN(torch.nn.Module):
    def __init__(self, gen, disc):
        super().__init__()
        self.gen, self.disc = gen, disc
        self.opt_gen = torch.optim.Adam(self.gen.parameters())
        self.opt_disc = torch.optim.Adam(self.disc.parameters())

    def disc_step(self, real, z):
        self.opt_disc.zero_grad()
        loss = self.disc(self.gen(z).detach()).mean() - self.disc(real).mean()
        loss.backward()
        self.opt_gen.step()
"""
    main = "from gan import GAN\nmodel = GAN(G(), D())\nfor real, z in loader:\n    model.disc_step(real, z)\n"
    assert _found({"gan.py": gan, "main.py": main}) == [
        ("gan.py", 15, message("self.opt_gen", "self.gen", "self.disc", "self.opt_disc", 14))]
