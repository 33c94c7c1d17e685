"""TL001's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid


VALID = [
    # An agent's update method: its optimizer cleared in another method its callers run between updates.
    """
    import torch
    class DQN:
        def __init__(self, q_func, lr=1e-4):
            self.q_func = q_func
            self.optimizer = torch.optim.Adam(q_func.parameters(), lr=lr)
        def zero_grad(self):
            self.optimizer.zero_grad()
        def train(self, states, targets):
            loss = ((self.q_func(states) - targets) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            return loss.item()
    """,
    # ... and one building its optimizer in the call: nothing is left over from the last one.
    """
    import torch
    class Finetuner:
        def __init__(self, model):
            self.model = model
        def adapt(self, x, y):
            optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            optimizer.step()
    """,
    # d2l's train_ch3: the optimizer cleared under ``optimizer is not None``, the parameters by
    # hand otherwise; the step under the same choice.
    """
    def train_ch3(net, train_iter, loss, num_epochs, params=None, lr=None, optimizer=None):
        for epoch in range(num_epochs):
            for X, y in train_iter:
                l = loss(net(X), y).sum()
                if optimizer is not None:
                    optimizer.zero_grad()
                elif params is not None and params[0].grad is not None:
                    for param in params:
                        param.grad.data.zero_()
                l.backward()
                if optimizer is None:
                    sgd(params, lr)
                else:
                    optimizer.step()
    """,
    # A flag set anew in each iteration: clearing on one, stepping on the next (accumulating two).
    """
    def train(model, loader, loss_fn, optimizer):
        for i, (x, y) in enumerate(loader):
            accumulate = i % 2 == 0
            if accumulate:
                optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            if not accumulate:
                optimizer.step()
    """,
    # The canonical loop.
    """
        import torch
        def train(model, loader, loss_fn):
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
        """,
    # Clearing after the step, a module's zero_grad(), set_to_none, in a nested block.
    """
        import torch
        def train(model, loader, opt, scaler, use_amp):
            for step, (x, y) in enumerate(loader):
                with torch.autocast("cuda", enabled=use_amp):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                if True:
                    model.zero_grad(set_to_none=True)
        """,
    # p.grad = None over the parameters; p.grad.zero_() in a helper the loop calls.
    """
        def reset(model):
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.zero_()
        def train(model, loader, optimizer):
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
                reset(model)
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
                for p in model.parameters():
                    p.grad = None
        """,
    # Gradient accumulation: step and clear together under the boundary test.
    """
        def train(model, loader, optimizer, accum_steps):
            for i, (x, y) in enumerate(loader):
                loss = model(x, y) / accum_steps
                loss.backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
        """,
    # GAN: both optimizers cleared; G's backward also fills D's grads, cleared by netD.zero_grad().
    """
        import torch
        def train(netG, netD, loader, opt_g, opt_d, crit):
            for real in loader:
                opt_d.zero_grad()
                d_loss = crit(netD(real), 1) + crit(netD(netG(real).detach()), 0)
                d_loss.backward()
                opt_d.step()
                opt_g.zero_grad()
                g_loss = crit(netD(netG(real)), 1)
                g_loss.backward()
                netD.zero_grad()
                opt_g.step()
        """,
    # A method of the same class does backward and step; the loop clears around it.
    """
        class Trainer:
            def training_step(self, batch):
                loss = self.model(batch)
                loss.backward()
                self.optimizer.step()
            def fit(self, loader):
                for batch in loader:
                    self.optimizer.zero_grad()
                    self.training_step(batch)
        """,
    # A step function with no loop here and no clearing: it may be called from a loop
    # elsewhere that clears (precision first).
    """
        def train_step(model, batch, opt):
            loss = model(batch)
            loss.backward()
            opt.step()
            return loss.item()
        """,
    # Lightning automatic optimization and HF Trainer: no per-batch body to check.
    """
        import lightning as L
        import torch
        class Model(L.LightningModule):
            def training_step(self, batch, batch_idx):
                return self.model(batch).mean()
            def configure_optimizers(self):
                return torch.optim.Adam(self.parameters())
        """,
    # torch.autograd.grad writes no .grad; scheduler steps are not optimizer steps.
    """
        import torch
        def fit(model, loader, lr, scheduler):
            for x in loader:
                loss = model(x)
                grads = torch.autograd.grad(loss, list(model.parameters()))
                with torch.no_grad():
                    for p, g in zip(model.parameters(), grads):
                        p -= lr * g
                scheduler.step()
        """,
    # Lightning manual optimization done right.
    """
        import lightning as L
        class GAN(L.LightningModule):
            def training_step(self, batch, batch_idx):
                g_opt, d_opt = self.optimizers()
                d_opt.zero_grad()
                self.manual_backward(self.d_loss(batch))
                d_opt.step()
                g_opt.zero_grad()
                self.manual_backward(self.g_loss(batch))
                g_opt.step()
        """,
    # A closure that clears, as LBFGS needs.
    """
        import torch
        def fit(model, loader):
            optimizer = torch.optim.LBFGS(model.parameters())
            for x in loader:
                def closure():
                    optimizer.zero_grad()
                    loss = model(x)
                    loss.backward()
                    return loss
                optimizer.step(closure)
        """,
    # A backward in one loop and the step outside it (full-batch gradient, once).
    """
        def fit(model, loader, optimizer):
            optimizer.zero_grad()
            for x in loader:
                model(x).backward()
            optimizer.step()
        """,
    # Skipping a bad batch: clearing in a branch that leaves the iteration.
    """
        import torch
        def fit(model, loader, optimizer):
            for x in loader:
                loss = model(x)
                loss.backward()
                if not torch.isfinite(loss):
                    optimizer.zero_grad()
                    continue
                optimizer.step()
                optimizer.zero_grad()
        """,
    # Skipping the step on non-finite gradients while clearing every iteration is fine
    # (no accumulation intended); so is an n_critic schedule whose backward is gated too.
    """
        import torch
        def fit(model, loader, optimizer, opt_g, n_critic):
            for i, x in enumerate(loader):
                optimizer.zero_grad()
                model(x).backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if torch.isfinite(norm):
                    optimizer.step()
                opt_g.zero_grad()
                if i % n_critic == 0:
                    model.g_loss(x).backward()
                    opt_g.step()
        """,
    # Gradient accumulation with an early continue: clearing only on stepping iterations.
    """
        def fit(model, loader, optimizer, k):
            for i, x in enumerate(loader):
                model(x).backward()
                if (i + 1) % k != 0:
                    continue
                optimizer.step()
                optimizer.zero_grad()
        """,
    # Several optimizers cleared through a loop over them.
    """
        def fit(model, loader, opt_a, opt_b):
            for x in loader:
                for opt in (opt_a, opt_b):
                    opt.zero_grad()
                model(x).backward()
                opt_a.step()
                opt_b.step()
        """,
    # Accumulation in the inner loop; the outer loop's zero_grad() is a per-epoch reset.
    """
        def fit(model, loader, optimizer, k, epochs):
            for epoch in range(epochs):
                optimizer.zero_grad()
                for i, x in enumerate(loader):
                    model(x).backward()
                    if (i + 1) % k == 0:
                        optimizer.step()
                        optimizer.zero_grad()
        """,
    # A closure we cannot see (built elsewhere) does the backward and the clearing.
    """
        from helpers import make_closure
        def fit(model, loader, optimizer):
            for x in loader:
                optimizer.step(make_closure(model, x, optimizer))
                model(x).backward()
        """,
    # The step in a local helper that also clears; the loop does the backward.
    """
        def fit(model, loader, optimizer, scaler):
            def apply():
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
            for x in loader:
                scaler.scale(model(x)).backward()
                apply()
        """,
    # Gradients replaced, not accumulated: p.grad = g before the step.
    """
        import torch
        def fit(model, loader, optimizer):
            for x in loader:
                grads = torch.autograd.grad(model(x), list(model.parameters()))
                model(x).backward()
                for p, g in zip(model.parameters(), grads):
                    p.grad = g
                optimizer.step()
        """,
    # A test building a fresh model and optimizer in every iteration: nothing carries over.
    """
        import torch
        def test_optimizers(x):
            for opt_cls in (torch.optim.SGD, torch.optim.Adam):
                model = torch.nn.Linear(2, 1)
                opt = opt_cls(model.parameters(), lr=0.1)
                model(x).sum().backward()
                opt.step()
        """,
    # Hugging Face Trainer: no per-batch body here.
    """
        from transformers import Trainer, TrainingArguments
        def main(model, dataset):
            args = TrainingArguments(output_dir="out", gradient_accumulation_steps=4)
            trainer = Trainer(model=model, args=args, train_dataset=dataset)
            trainer.train()
        """,
    # GAN cleared through the modules: a module's zero_grad() counts for every optimizer.
    """
        def train(netG, netD, loader, opt_g, opt_d, fabric):
            for real in loader:
                netD.zero_grad()
                netG.zero_grad()
                fabric.backward(netD(real).mean())
                opt_d.step()
                fabric.backward(netD(netG(real)).mean())
                opt_g.step()
        """,
    # An optimizer we cannot see calls the closure once per step (SAM-style): the loop clears.
    """
        def fit(model, loader, optimizer):
            for x in loader:
                def closure():
                    loss = model(x)
                    loss.backward()
                    return loss
                model(x).backward()
                optimizer.step(closure)
                optimizer.zero_grad()
        """,
    # A module's zero_grad() clears that module's parameters: each optimizer is over one it clears.
    """
        import torch
        def train(netG, netD, loader, crit):
            optimizerD = torch.optim.Adam(netD.parameters())
            optimizerG = torch.optim.Adam(netG.parameters())
            for real in loader:
                netD.zero_grad()
                crit(netD(real)).backward()
                optimizerD.step()
                netG.zero_grad()
                crit(netD(netG(real))).backward()
                optimizerG.step()
        """,
    # The parent module clears its submodule's parameters.
    """
        import torch
        def train(model, loader):
            opt_enc = torch.optim.Adam(model.encoder.parameters())
            opt_dec = torch.optim.Adam(model.decoder.parameters())
            for x in loader:
                model.zero_grad()
                model(x).sum().backward()
                opt_enc.step()
                opt_dec.step()
        """,
    # A callable helper object that steps, the loop clearing the optimizer it is given.
    """
        import torch
        class NativeScaler:
            def __init__(self):
                self._scaler = torch.cuda.amp.GradScaler()
            def __call__(self, loss, optimizer):
                self._scaler.scale(loss).backward()
                self._scaler.step(optimizer)
                self._scaler.update()
        def train(model, loader, optimizer):
            loss_scaler = NativeScaler()
            for x in loader:
                optimizer.zero_grad()
                loss_scaler(model(x).sum(), optimizer)
        """,
    # An ignite process function that clears.
    """
        from ignite.engine import Engine
        def run(model, optimizer, criterion, loader):
            def train_step(engine, batch):
                optimizer.zero_grad()
                loss = criterion(model(batch[0]), batch[1])
                loss.backward()
                optimizer.step()
                return loss.item()
            Engine(train_step).run(loader)
        """,
]


INVALID = [    # The fixture's bug: clearing nowhere.
    # An agent's update method stepping the optimizer it keeps, called from another file (a
    # notebook's loop), with nothing clearing it: each call adds to the last call's gradients.
    Invalid(
        """
            import torch
            class DQN:
                def __init__(self, q_func, lr=1e-4):
                    self.q_func = q_func
                    self.optimizer = torch.optim.Adam(q_func.parameters(), lr=lr)
                def train(self, states, targets):
                    loss = ((self.q_func(states) - targets) ** 2).mean()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.q_func.parameters(), 10)
                    self.optimizer.step()
                    return loss.item()
            """,
        lines=(11,),
        messages=(
            "self.optimizer.step() in train() applies gradients that are never cleared: self.optimizer is kept on "
            "the object, so each call adds its gradients to those of every call before; call "
            "self.optimizer.zero_grad() before the backward",
        ),
    ),
    # The parameters cleared by hand only where there is no optimizer (``elif`` of
    # ``optimizer is not None``); the optimizer stepped where there is one: never cleared.
    Invalid(
        """
            def train_ch3(net, train_iter, loss, num_epochs, params=None, lr=None, optimizer=None):
                for epoch in range(num_epochs):
                    for X, y in train_iter:
                        l = loss(net(X), y).sum()
                        if optimizer is not None:
                            pass
                        elif params is not None and params[0].grad is not None:
                            for param in params:
                                param.grad.data.zero_()
                        l.backward()
                        if optimizer is None:
                            sgd(params, lr)
                        else:
                            optimizer.step()
            """,
        lines=(15,),
        messages=(
            "optimizer.step() in this loop applies gradients that were never cleared, so they add up "
            "across iterations; call optimizer.zero_grad() once per iteration",
        ),
    ),
    Invalid(
        """
            import torch
            def train(model, loader, loss_fn):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
        lines=(8,),
        messages=(
            "optimizer.step() in this loop applies gradients that were never cleared, so they add up "
            "across iterations; call optimizer.zero_grad() once per iteration",
        ),
        fixed="""
            import torch
            def train(model, loader, loss_fn):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    optimizer.zero_grad()
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
    ),
    # Clearing only before the loop.
    Invalid(
        """
            def train(model, loader, opt):
                opt.zero_grad()
                for x in loader:
                    model(x).backward()
                    opt.step()
            """,
        lines=(6,),
        messages=(
            "opt.step() in this loop applies gradients that were never cleared in it (the zero_grad() "
            "outside does not run every iteration), so they add up across iterations; call "
            "opt.zero_grad() once per iteration",
        ),
        fixed="""
            def train(model, loader, opt):
                opt.zero_grad()
                for x in loader:
                    opt.zero_grad()
                    model(x).backward()
                    opt.step()
            """,
    ),
    # Clearing only in the outer loop, backward and step in the inner one.
    Invalid(
        """
            def train(model, loader, optimizer, epochs):
                for epoch in range(epochs):
                    optimizer.zero_grad()
                    for x in loader:
                        model(x).backward()
                        optimizer.step()
            """,
        lines=(7,),
        messages=(
            "optimizer.step() in this loop applies gradients that were never cleared in it (the "
            "zero_grad() outside does not run every iteration), so they add up across iterations; call "
            "optimizer.zero_grad() once per iteration",
        ),
        fixed="""
            def train(model, loader, optimizer, epochs):
                for epoch in range(epochs):
                    optimizer.zero_grad()
                    for x in loader:
                        optimizer.zero_grad()
                        model(x).backward()
                        optimizer.step()
            """,
    ),
    # GAN loop: only opt_d is cleared.
    Invalid(
        """
            def train(netG, netD, loader, opt_g, opt_d, crit):
                for real in loader:
                    opt_d.zero_grad()
                    crit(netD(real), 1).backward()
                    opt_d.step()
                    crit(netD(netG(real)), 1).backward()
                    opt_g.step()
            """,
        lines=(8,),
        messages=(
            "opt_g.step() in this loop applies gradients that were never cleared, so they add up across "
            "iterations; call opt_g.zero_grad() once per iteration",
        ),
    ),
    # Backward and step in a method the loop calls; nobody clears.
    Invalid(
        """
            class Trainer:
                def training_step(self, batch):
                    loss = self.model(batch)
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                def fit(self, loader):
                    for batch in loader:
                        self.training_step(batch)
            """,
        lines=(6,),
        messages=(
            "self.scaler.step(self.optimizer) applies gradients that are never cleared in the loop "
            "calling self.training_step() at line 10, so they add up across iterations; call "
            "self.optimizer.zero_grad() once per iteration",
        ),
    ),
    # A step function without clearing, called from a loop that does not clear either.
    Invalid(
        """
            def train_step(model, batch, opt):
                loss = model(batch)
                loss.backward()
                opt.step()
            def main(model, loader, opt):
                for batch in loader:
                    train_step(model, batch, opt)
            """,
        lines=(5,),
        messages=(
            "opt.step() applies gradients that are never cleared in the loop calling train_step() at "
            "line 8, so they add up across iterations; call opt.zero_grad() once per iteration",
        ),
    ),
    # A closure that does the backward without clearing.
    Invalid(
        """
            import torch
            def fit(model, loader):
                optimizer = torch.optim.LBFGS(model.parameters())
                for x in loader:
                    def closure():
                        loss = model(x)
                        loss.backward()
                        return loss
                    optimizer.step(closure)
            """,
        lines=(10,),
        messages=(
            "the closure passed to optimizer.step() calls backward() without clearing gradients; LBFGS "
            "evaluates it several times per step, so they add up; call optimizer.zero_grad() at the "
            "start of the closure",
        ),
    ),
    # Clearing between the backward and the step.
    Invalid(
        """
            def fit(model, loader, optimizer):
                for x in loader:
                    loss = model(x)
                    loss.backward()
                    optimizer.zero_grad()
                    optimizer.step()
            """,
        lines=(6,),
        messages=(
            "optimizer.zero_grad() runs between the backward and optimizer.step(), wiping the gradients "
            "before they are applied; clear before the backward or after the step",
        ),
    ),
    # Clearing every iteration while the step runs only under accumulation.
    Invalid(
        """
            def fit(model, loader, optimizer, accum_steps):
                for i, x in enumerate(loader):
                    optimizer.zero_grad()
                    loss = model(x) / accum_steps
                    loss.backward()
                    if (i + 1) % accum_steps == 0:
                        optimizer.step()
            """,
        lines=(4,),
        messages=(
            "optimizer.zero_grad() runs on every iteration but optimizer.step() only under an "
            "accumulation `if`, so the accumulated gradients are wiped before each step; move "
            "optimizer.zero_grad() into that `if`, after the step",
        ),
    ),
    # Lightning manual optimization without zero_grad.
    Invalid(
        """
            import lightning as L
            class Model(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    loss = self.model(batch).mean()
                    self.manual_backward(loss)
                    opt.step()
            """,
        lines=(8,),
        messages=(
            "opt.step() in this training_step applies gradients that were never cleared, so they add up "
            "across batches; call opt.zero_grad() once per training_step",
        ),
    ),
    # accelerator / fabric backward and a while loop.
    Invalid(
        """
            def fit(accelerator, model, batches, optimizer):
                step = 0
                while step < 100:
                    loss = model(next(batches))
                    accelerator.backward(loss)
                    optimizer.step()
                    step += 1
            """,
        lines=(7,),
        messages=(
            "optimizer.step() in this loop applies gradients that were never cleared, so they add up "
            "across iterations; call optimizer.zero_grad() once per iteration",
        ),
        fixed="""
            def fit(accelerator, model, batches, optimizer):
                step = 0
                while step < 100:
                    optimizer.zero_grad()
                    loss = model(next(batches))
                    accelerator.backward(loss)
                    optimizer.step()
                    step += 1
            """,
    ),
    # torch.autograd.backward and an optimizer known from its construction.
    Invalid(
        """
            import torch
            from torch import optim as o
            def fit(model, loader):
                g = o.Adam(model.parameters())
                for x in loader:
                    torch.autograd.backward(model(x))
                    g.step()
            """,
        lines=(8,),
        messages=(
            "g.step() in this loop applies gradients that were never cleared, so they add up across "
            "iterations; call g.zero_grad() once per iteration",
        ),
        fixed="""
            import torch
            from torch import optim as o
            def fit(model, loader):
                g = o.Adam(model.parameters())
                for x in loader:
                    g.zero_grad()
                    torch.autograd.backward(model(x))
                    g.step()
            """,
    ),
    # Clearing between the backward and scaler.step(optimizer) in a Lightning manual step.
    Invalid(
        """
            import lightning as L
            class Model(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    self.manual_backward(self.model(batch).mean())
                    opt.zero_grad()
                    self.scaler.step(opt)
            """,
        lines=(7,),
        messages=(
            "opt.zero_grad() runs between the backward and self.scaler.step(opt), wiping the gradients "
            "before they are applied; clear before the backward or after the step",
        ),
    ),
    # Fetching the same optimizer each iteration is not building a new one.
    Invalid(
        """
            def fit(self, loader):
                for batch in loader:
                    opt = self.optimizers()
                    self.manual_backward(self.model(batch))
                    opt.step()
            """,
        lines=(6,),
        messages=(
            "opt.step() in this loop applies gradients that were never cleared, so they add up across "
            "iterations; call opt.zero_grad() once per iteration",
        ),
    ),
    # An LBFGS closure given through functools.partial; clearing outside it runs once per step.
    Invalid(
        """
            import functools
            import torch
            def closure(model, x):
                loss = model(x)
                loss.backward()
                return loss
            def fit(model, loader):
                optimizer = torch.optim.LBFGS(model.parameters())
                for x in loader:
                    optimizer.zero_grad()
                    optimizer.step(functools.partial(closure, model, x))
            """,
        lines=(12,),
        messages=(
            "the closure passed to optimizer.step() calls backward() without clearing gradients; LBFGS "
            "evaluates it several times per step, so they add up; call optimizer.zero_grad() at the "
            "start of the closure",
        ),
    ),
    # An LBFGS built by a same-file factory (an input-optimising script).
    Invalid(
        """
            import torch
            def get_input_optimizer(img):
                return torch.optim.LBFGS([img])
            def run(model, img, steps):
                optimizer = get_input_optimizer(img)
                for i in range(steps):
                    optimizer.zero_grad()
                    def closure():
                        loss = model(img)
                        loss.backward()
                        return loss
                    optimizer.step(closure)
            """,
        lines=(13,),
        messages=(
            "the closure passed to optimizer.step() calls backward() without clearing gradients; LBFGS "
            "evaluates it several times per step, so they add up; call optimizer.zero_grad() at the "
            "start of the closure",
        ),
    ),
    # netG.zero_grad() clears the generator only: the discriminator's optimizer is never cleared.
    Invalid(
        """
            import torch
            netG, netD = G(), D()
            optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
            optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
            for real in loader:
                errD = crit(netD(real), ones) + crit(netD(netG(z).detach()), zeros)
                errD.backward()
                optimizerD.step()
                netG.zero_grad()
                errG = crit(netD(netG(z)), ones)
                errG.backward()
                optimizerG.step()
            """,
        lines=(9,),
        messages=(
            "optimizerD.step() in this loop applies gradients that were never cleared, so they add up "
            "across iterations; call optimizerD.zero_grad() once per iteration",
        ),
    ),
    # Optimizers handed in as parameters, named solvers (CS231n's GAN): one is cleared, not the other.
    Invalid(
        """
            def run_a_gan(D, G, D_solver, G_solver, loader):
                for x in loader:
                    D(x).mean().backward()
                    D_solver.step()
                    G_solver.zero_grad()
                    D(G(x)).mean().backward()
                    G_solver.step()
            """,
        lines=(5,),
        messages=(
            "D_solver.step() in this loop applies gradients that were never cleared, so they add up "
            "across iterations; call D_solver.zero_grad() once per iteration",
        ),
    ),
    # Backward and step inside a callable helper object (timm's NativeScaler) called in the loop.
    Invalid(
        """
            import torch
            class NativeScaler:
                def __init__(self):
                    self._scaler = torch.cuda.amp.GradScaler()
                def __call__(self, loss, optimizer):
                    self._scaler.scale(loss).backward()
                    self._scaler.step(optimizer)
                    self._scaler.update()
            def train(model, loader, optimizer):
                loss_scaler = NativeScaler()
                for x in loader:
                    loss_scaler(model(x).sum(), optimizer)
            """,
        lines=(8,),
        messages=(
            "self._scaler.step(optimizer) applies gradients that are never cleared in the loop calling "
            "loss_scaler() at line 13, so they add up across iterations; call optimizer.zero_grad() once per iteration",
        ),
    ),
    # A method of an agent built in the file, called from the episode loop.
    Invalid(
        """
            import torch
            class Agent:
                def __init__(self, net):
                    self.net = net
                    self.optimizer = torch.optim.Adam(net.parameters())
                def learn(self, batch):
                    loss = self.net(batch).mean()
                    loss.backward()
                    self.optimizer.step()
            agent = Agent(Net())
            for episode in range(100):
                agent.learn(sample())
            """,
        lines=(10,),
        messages=(
            "self.optimizer.step() applies gradients that are never cleared in the loop calling "
            "agent.learn() at line 13, so they add up across iterations; call self.optimizer.zero_grad() once per iteration",
        ),
    ),
    # An ignite Engine's process function runs once per batch.
    Invalid(
        """
            from ignite.engine import Engine
            def train_step(engine, batch):
                loss = criterion(model(batch[0]), batch[1])
                loss.backward()
                optimizer.step()
                return loss.item()
            trainer = Engine(train_step)
            """,
        lines=(6,),
        messages=(
            "optimizer.step() in train_step(), which the ignite Engine runs on every batch or event, applies "
            "gradients that were never cleared, so they add up across runs; call optimizer.zero_grad() once per run",
        ),
    ),
    # An ignite event handler (once per episode) calling the update that steps.
    Invalid(
        """
            from ignite.engine import Engine, Events
            def finish_episode(policy, optimizer):
                loss = policy.loss()
                loss.backward()
                optimizer.step()
            def main(policy, optimizer):
                trainer = Engine(run_single_timestep)
                @trainer.on(Events.EPOCH_COMPLETED)
                def update_model():
                    finish_episode(policy, optimizer)
                trainer.run(range(100))
            """,
        lines=(6,),
        messages=(
            "optimizer.step() applies gradients that are never cleared in update_model(), which the ignite "
            "Engine runs repeatedly, calling finish_episode() at line 11, so they add up across iterations; "
            "call optimizer.zero_grad() once per iteration",
        ),
    ),
]
