"""``semantic.updates``: the events an optimizer step follows, what an optimizer covers where it
is stepped, and which models a loss is computed from."""

from __future__ import annotations

import libcst as cst

from tests.semantic.test_modes import analyses
from torchlint.semantic.updates import (BACKWARD, CLEAR, HELPER, STEP, is_loss_value, models_reached,
                                        optimizer_covers, step_history, visible_optimizers)
from torchlint.tree import iter_nodes


def _steps(sem):
    return {sem.ctx.line_of(site.node): (site, key) for site, key in sem.training.sites.step}


def _kinds(sem, events):
    return [(e.kind, sem.ctx.line_of(e.node)) for e in events]


def _target(sem, name, line):
    return next(n for n in iter_nodes(sem.ctx.module) if isinstance(n, cst.Name) and n.value == name
                and sem.ctx.line_of(n) == line)


def test_history_reads_the_iteration_around():
    _, sem = analyses("""
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            optimizer.step()
            loss.backward()
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """)
    steps = _steps(sem)
    first = step_history(sem, *steps[5])
    assert first.cleared is not None and sem.ctx.line_of(first.cleared.node) == 3
    assert first.since_clear == [] and first.in_loop
    assert _kinds(sem, first.after) == [(BACKWARD, 6)]
    second = step_history(sem, *steps[10])
    assert _kinds(sem, second.since_clear) == [(BACKWARD, 9)]
    assert sem.ctx.line_of(second.cleared.node) == 11  # the previous iteration's


def test_helpers_hand_written_gradients_and_since_update():
    _, sem = analyses("""
        import torch
        def backprop(loss):
            loss.backward()
        def step(model, opt, x):
            opt.zero_grad()
            backprop(model(x).sum())
            opt.step()
        def manual(params, opt):
            opt.zero_grad()
            for p in params:
                p.grad = torch.ones_like(p)
            opt.step()
        class T(Base):
            def run(self):
                self.opt_d.zero_grad()
                self.backward_D()
                self.opt_g.step()
        """)
    steps = _steps(sem)
    assert _kinds(sem, step_history(sem, *steps[8]).since_clear) == [(HELPER, 7)]
    assert [e.kind for e in step_history(sem, *steps[13]).since_clear] == [BACKWARD]
    history = step_history(sem, *steps[18])
    assert _kinds(sem, history.since_update) == [(HELPER, 17)]
    assert history.cleared is None
    # the phase was opened by clearing another optimizer
    assert history.opened_by.kind == CLEAR and history.opened_by.key == "self.opt_d"
    assert _kinds(sem, [step_history(sem, *steps[8]).opened_by]) == [(CLEAR, 6)]


def test_optimizer_covers_through_callers_and_visible_optimizers():
    _, sem = analyses("""
        import torch
        def train(d, g, opt_d, opt_g):
            opt_d.step()
            opt_g.step()
        D, G = Disc(), Gen()
        od = torch.optim.Adam(D.parameters())
        og = torch.optim.Adam(G.parameters())
        train(D, G, od, og)
        og.step()
        """)
    steps = _steps(sem)
    assert optimizer_covers(sem, *steps[4]) == ("d",)
    assert optimizer_covers(sem, *steps[5]) == ("g",)
    assert optimizer_covers(sem, *steps[10]) == ("G",)
    assert sorted(w.binding.key for w in visible_optimizers(sem, steps[10][0])) == ["od", "og"]


def test_models_reached():
    _, sem = analyses("""
        import torch
        models = {"netD", "netG", "self.enc"}
        fake = netG(z)
        d_loss = crit(netD(real), 1) + crit(netD(fake.detach()), 0)
        g_loss = crit(netD(fake), 1)
        h = enc_out
        for t in range(n):
            out, h = netD(x, h)
        buf = torch.zeros(3)
        buf[0] = netG(z).sum()
        total = buf.sum() + out.item()
        """)
    models = frozenset({"netD", "netG"})
    assert models_reached(sem, _target(sem, "d_loss", 5), models) == {"netD"}
    assert models_reached(sem, _target(sem, "g_loss", 6), models) == {"netD", "netG"}
    assert models_reached(sem, _target(sem, "total", 12), models) == {"netG"}


def test_is_loss_value():
    _, sem = analyses("""
        import torch.nn.functional as F
        loss = F.cross_entropy(out, y)
        other = criterion(out, y) + 0.1 * reg
        acc = (out.argmax(1) == y).float().mean()
        """)
    names = {n.value: n for n in iter_nodes(sem.ctx.module) if isinstance(n, cst.Name)}
    assert is_loss_value(sem, names["loss"]) and is_loss_value(sem, names["other"])
    assert not is_loss_value(sem, names["acc"])
    assert CLEAR and STEP


def test_where_models_are_met_and_what_a_function_is_handed():
    from torchlint.semantic.updates import handed_optimizers, model_keys, models_reached_where, within
    _, sem = analyses("""
        import torch
        def train(generator, discriminator, d_optimizer, g_optimizer, loader):
            for real in loader:
                loss = discriminator(real).mean() + score
                d_optimizer.step()
        score = discriminator0(z).mean()
        g, d = Gen(), Disc()
        train(g, d, torch.optim.Adam(d.parameters()), torch.optim.Adam(g.parameters()), loader)
        """)
    site, _ = _steps(sem)[6]
    assert handed_optimizers(sem, site) == {"d_optimizer": ("discriminator",), "g_optimizer": ("generator",)}
    assert {"generator", "discriminator"} <= model_keys(sem, site)
    where = models_reached_where(sem, _target(sem, "loss", 5), frozenset({"discriminator", "discriminator0"}))
    loop = site.all_loops[-1].node
    assert all(within(sem, n, loop) for n in where["discriminator"])
    assert not any(within(sem, n, loop) for n in where["discriminator0"])


def test_kept_optimizer_steps():
    from torchlint.semantic.updates import kept_optimizer_steps

    _, sem = analyses("""
        import torch
        class Agent:
            def __init__(self, net):
                self.net = net
                self.optimizer = torch.optim.Adam(net.parameters())
            def train(self, x):
                self.net(x).sum().backward()
                self.optimizer.step()
            def local(self, x):
                opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
                self.net(x).sum().backward()
                opt.step()
        class Cleared:
            def __init__(self, net):
                self.net, self.opt = net, torch.optim.Adam(net.parameters())
            def zero_grad(self):
                self.opt.zero_grad()
            def update(self, x):
                self.net(x).sum().backward()
                self.opt.step()
        class Called:
            def __init__(self, net):
                self.net, self.opt = net, torch.optim.Adam(net.parameters())
            def update(self, x):
                self.net(x).sum().backward()
                self.opt.step()
            def fit(self, xs):
                for x in xs:
                    self.update(x)
        """)
    methods = {(s.cls.name, s.node.name.value): s.node for s in sem.model.scopes.values()
               if s.cls is not None and isinstance(s.node, cst.FunctionDef)}
    got = {k: kept_optimizer_steps(sem, fn) for k, fn in methods.items() if k[1] != "__init__"}
    assert got == {("Agent", "train"): frozenset({"self.optimizer"}), ("Agent", "local"): frozenset(),
                   ("Cleared", "zero_grad"): frozenset(), ("Cleared", "update"): frozenset(),
                   ("Called", "update"): frozenset(), ("Called", "fit"): frozenset()}
