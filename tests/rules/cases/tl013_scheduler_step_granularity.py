"""TL013's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl013_scheduler_step_granularity import lightning_message, order_message, per_batch_message, per_epoch_message
from torchlint.rule import Invalid


VALID = [
    # OneCycleLR stepped after every optimizer step.
    """
        import torch
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=len(loader))
        for epoch in range(epochs):
            for x, y in loader:
                loss = criterion(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
        """,
    # StepLR stepped once per epoch, after training.
    """
        from torch.optim.lr_scheduler import StepLR
        scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
        for epoch in range(args.epochs):
            for images, target in train_loader:
                loss = criterion(model(images), target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
        """,
    # ReduceLROnPlateau is stepped with a metric whenever it is ready.
    """
        import torch
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, "min")
        for epoch in range(epochs):
            scheduler.step()
            for x in loader:
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
        """,
    # Step-based training with no epochs: StepLR in iterations, stepped per iteration.
    """
        import torch
        scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.5)
        for it in range(max_iters):
            x = next(data_iter)
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
            scheduler.step()
        """,
    # Lightning with "interval": "step".
    """
        import torch
        import lightning as L
        class Model(L.LightningModule):
            def configure_optimizers(self):
                opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                sched = torch.optim.lr_scheduler.OneCycleLR(opt, 1e-3, total_steps=self.trainer.estimated_stepping_batches)
                return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
        """,
    # Lightning with an epoch scheduler: stepping per epoch is right.
    """
        import torch
        import lightning as L
        class Model(L.LightningModule):
            def configure_optimizers(self):
                opt = torch.optim.SGD(self.parameters(), lr=0.1)
                return [opt], [torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.hparams.max_epochs)]
        """,
    # Lightning manual optimization steps its schedulers itself.
    """
        import torch
        import lightning as L
        class Model(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.automatic_optimization = False
            def training_step(self, batch, idx):
                self.lr_schedulers().step()
            def configure_optimizers(self):
                opt = torch.optim.SGD(self.parameters(), lr=0.1)
                return [opt], [torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)]
        """,
    # CosineAnnealingWarmRestarts stepped per batch with a fractional epoch (documented).
    """
        import torch
        sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=10)
        for epoch in range(epochs):
            for i, (x, y) in enumerate(loader):
                opt.zero_grad()
                criterion(model(x), y).backward()
                opt.step()
                sched.step(epoch + i / len(loader))
        """,
    # Fast-forwarding a resumed schedule: no optimizer step in that loop.
    """
        import torch
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[30, 60], gamma=0.1)
        for _ in range(start_epoch):
            sched.step()
        for epoch in range(start_epoch, epochs):
            train_one_epoch(model, loader, opt)
            sched.step()
        """,
    # A warm-up LambdaLR sized in steps, stepped in the batch loop of the training helper.
    """
        import torch
        warmup = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup_steps))
        def train_step(batch):
            opt.zero_grad()
            model(batch).loss.backward()
            opt.step()
            warmup.step()
        for epoch in range(epochs):
            for batch in loader:
                train_step(batch)
        """,
    # The fp32 branch steps the scheduler; the other steps the optimizer: different branches.
    """
        import torch
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            if skip:
                scheduler.step()
            else:
                optimizer.step()
        """,
    # Stepped at the start of each epoch on purpose: last_epoch rewound before the loop (ultralytics).
    """
        import torch
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
        start_epoch = 0
        scheduler.last_epoch = start_epoch - 1  # do not move
        loader = [torch.randn(8, 4) for _ in range(10)]
        for epoch in range(start_epoch, 100):
            scheduler.step()
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
        """,
    # ... or with the order warning silenced around the step.
    """
        import warnings
        import torch
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
        loader = [torch.randn(8, 4) for _ in range(10)]
        for epoch in range(100):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # 'Detected lr_scheduler.step() before optimizer.step()'
                scheduler.step()
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
        """,
    # Stepped in the batch loop, and once more after it with the optimizer step that flushes
    # gradients still accumulated (holocron's trainer): every optimizer step has its step.
    """
        import torch
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=epochs * len(loader))
        for epoch in range(epochs):
            pending = False
            for i, (x, y) in enumerate(loader):
                criterion(model(x), y).backward()
                pending = True
                if (i + 1) % accumulate == 0:
                    optimizer.step()
                    optimizer.zero_grad()
                    scheduler.step()
                    pending = False
            if pending:
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
        """,
    # A step at the top of the epoch loop that the first iteration skips: it always follows
    # the previous epoch's optimizer steps (so3krates' trainer; a while loop and a for loop).
    """
        import torch
        def train_one_epoch(model, loader, optimizer):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
        def fit(model, loader, optimizer, start_epoch, max_epochs):
            scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.99)
            epoch = start_epoch
            while epoch < max_epochs:
                if epoch > start_epoch:
                    scheduler.step()
                train_one_epoch(model, loader, optimizer)
                epoch += 1
        def fit_for(model, loader, optimizer, epochs):
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)
            for epoch in range(epochs):
                if epoch:
                    scheduler.step()
                train_one_epoch(model, loader, optimizer)
        """,
    # A configured step size times the loader's length counts optimizer steps: stepped per batch.
    """
        import torch
        step_size = cfg.lr_step_epochs * len(train_loader)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=step_size, gamma=0.1)
        for epoch in range(cfg.epochs):
            for x, y in train_loader:
                opt.zero_grad()
                loss_fn(model(x), y).backward()
                opt.step()
                sched.step()
        """,
    # A configured step size stepped once per epoch, through the trainer layout.
    """
        import torch
        class Trainer:
            def __init__(self, model, loader, optimizer, scheduler):
                self.model, self.loader = model, loader
                self.optimizer = optimizer
                self.scheduler = scheduler
            def fit(self, epochs):
                for epoch in range(epochs):
                    for x, y in self.loader:
                        self.optimizer.zero_grad()
                        self.model(x).sum().backward()
                        self.optimizer.step()
                    self.scheduler.step()
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=cfg.step_size)
        Trainer(model, loader, opt, sched).fit(cfg.epochs)
        """,
    # A parameter filled with a step-counting schedule, stepped per batch.
    """
        import torch
        def train(model, loader, opt, scheduler, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                    scheduler.step()
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=epochs * len(loader))
        train(model, loader, opt, sched, epochs)
        """,
    # CosineAnnealingLR sized in iterations by a configuration, stepped per batch.
    """
        from torch.optim.lr_scheduler import CosineAnnealingLR
        sched = CosineAnnealingLR(opt, T_max=cfg.max_iters)
        for epoch in range(cfg.epochs):
            for batch in loader:
                opt.zero_grad()
                model(batch).backward()
                opt.step()
                sched.step()
        """,
    # A run counted in steps (epochs only repeat the data): configured milestones are steps.
    """
        import torch.optim as optim
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=cfg.milestones, gamma=cfg.gamma)
        n_epochs = cfg.n_steps // len(loader) + 1
        for epoch in range(1, n_epochs + 1):
            for mels, texts in loader:
                optimizer.zero_grad()
                model(texts, mels).backward()
                optimizer.step()
                scheduler.step()
        """,
    # The same, ended by a step count inside the loop.
    """
        import torch
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step, gamma=0.5)
        for epoch in range(args.epochs):
            for batch in loader:
                optimizer.zero_grad()
                model(batch).backward()
                optimizer.step()
                scheduler.step()
                global_step += 1
                if global_step >= args.max_steps:
                    break
        """,
    # torchvision's lr_steps are the schedule's decay epochs, not optimizer steps.
    """
        import torch
        lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.lr_steps, gamma=0.1)
        for epoch in range(args.epochs):
            train_one_epoch(model, optimizer, data_loader, device, epoch)
            lr_scheduler.step()
        """,
    # An epoch function stepping its scheduler after its batch loop.
    """
        def train(epoch, loader, model, optimizer, scheduler):
            for x, y in loader:
                optimizer.zero_grad()
                model(x, y).backward()
                optimizer.step()
            scheduler.step()
        for epoch in range(epochs):
            train(epoch, loader, model, optimizer, scheduler)
        """,
    # A SequentialLR counts in its sub-schedulers' unit: a warm-up and a cosine both sized in
    # epochs, stepped once per epoch by Lightning (torchgeo's MoCo/SimCLR trainers).
    """
        import torch
        import lightning
        from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
        class SimCLRTask(lightning.LightningModule):
            def configure_optimizers(self):
                optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
                max_epochs = self.trainer.max_epochs
                warmup_epochs = int(max_epochs * 0.05)
                scheduler = SequentialLR(
                    optimizer,
                    schedulers=[
                        LinearLR(optimizer, total_iters=warmup_epochs),
                        CosineAnnealingLR(optimizer, T_max=max_epochs),
                    ],
                    milestones=[warmup_epochs],
                )
                return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler}}
        """,
    # ... and a ChainedScheduler of epoch schedulers stepped after each epoch's batch loop.
    """
        import torch
        from torch.optim.lr_scheduler import ChainedScheduler, ExponentialLR, StepLR
        sched = ChainedScheduler([StepLR(opt, step_size=30), ExponentialLR(opt, gamma=0.95)])
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                criterion(model(x), y).backward()
                opt.step()
            sched.step()
        """,
]


INVALID = [
    # A test on the epoch that the first iteration passes: the first step still comes first.
    Invalid(
        """
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)
            for epoch in range(90):
                if epoch % 10 == 0:
                    scheduler.step()
                train(model, loader, optimizer)
            """,
        lines=(11,), messages=(order_message("scheduler"),)),
    # pytorch/pytorch 65417-like: OneCycleLR sized in batches, stepped per epoch.
    Invalid(
        """
            import torch
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, epochs=epochs,
                                                            steps_per_epoch=len(train_loader))
            for epoch in range(epochs):
                for x, y in train_loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                scheduler.step()
            """,
        lines=(10,), messages=(per_epoch_message("scheduler", "OneCycleLR"),)),
    # A Hugging Face warm-up stepped after the epoch's training function.
    Invalid(
        """
            from transformers import get_linear_schedule_with_warmup
            def train_epoch(model, loader, optimizer):
                for batch in loader:
                    optimizer.zero_grad()
                    model(**batch).loss.backward()
                    optimizer.step()
            lr_scheduler = get_linear_schedule_with_warmup(optimizer, 100, num_training_steps)
            for epoch in range(num_epochs):
                train_epoch(model, loader, optimizer)
                lr_scheduler.step()
            """,
        lines=(11,), messages=(per_epoch_message("lr_scheduler", "get_linear_schedule_with_warmup"),)),
    # CyclicLR stepped after the batch loop of a train function.
    Invalid(
        """
            from torch.optim import lr_scheduler
            def train(model, loader, opt):
                for x in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                sched.step()
            sched = lr_scheduler.CyclicLR(opt, 1e-4, 1e-2)
            train(model, loader, opt)
            """,
        lines=(8,), messages=(per_epoch_message("sched", "CyclicLR"),)),
    # StepLR sized in epochs, stepped every batch.
    Invalid(
        """
            import torch
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.epochs // 3, gamma=0.1)
            for epoch in range(args.epochs):
                for images, labels in train_loader:
                    optimizer.zero_grad()
                    criterion(model(images), labels).backward()
                    optimizer.step()
                    scheduler.step()
            """,
        lines=(9,), messages=(per_batch_message("scheduler", "StepLR"),)),
    # aimagelab/meshed-memory-transformer 71-like: an epoch scheduler stepped in a per-batch helper.
    Invalid(
        """
            import torch
            sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
            def train_step(x, y):
                opt.zero_grad()
                criterion(model(x), y).backward()
                opt.step()
                sched.step()
            for epoch in range(20):
                for x, y in loader:
                    train_step(x, y)
            """,
        lines=(8,), messages=(per_batch_message("sched", "ExponentialLR"),)),
    # CosineAnnealingLR with T_max in epochs, stepped every batch.
    Invalid(
        """
            from torch.optim.lr_scheduler import CosineAnnealingLR
            sched = CosineAnnealingLR(opt, T_max=num_epochs)
            for epoch in range(num_epochs):
                for batch in dataloader:
                    opt.zero_grad()
                    model(batch).backward()
                    opt.step()
                    sched.step()
            """,
        lines=(9,), messages=(per_batch_message("sched", "CosineAnnealingLR"),)),
    # The pre-1.1 order: the scheduler stepped at the start of the epoch.
    Invalid(
        """
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
            scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [30, 60])
            for epoch in range(90):
                scheduler.step()
                train(model, loader, optimizer)
            """,
        lines=(10,), messages=(order_message("scheduler"),)),
    # scheduler.step() before optimizer.step() in the batch loop.
    Invalid(
        """
            for batch in loader:
                loss = model(batch).loss
                loss.backward()
                lr_scheduler.step()
                optimizer.step()
                optimizer.zero_grad()
            """,
        lines=(5,), messages=(order_message("lr_scheduler"),)),
    # Lightning-AI/pytorch-lightning 5631 / 3205: a warm-up returned without "interval".
    Invalid(
        """
            import torch
            import pytorch_lightning as pl
            from transformers import get_linear_schedule_with_warmup
            class Model(pl.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=2e-5)
                    sched = get_linear_schedule_with_warmup(opt, 500, self.trainer.estimated_stepping_batches)
                    return [opt], [sched]
            """,
        lines=(8,), messages=(lightning_message("get_linear_schedule_with_warmup"),),
        fixed="""
            import torch
            import pytorch_lightning as pl
            from transformers import get_linear_schedule_with_warmup
            class Model(pl.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=2e-5)
                    sched = get_linear_schedule_with_warmup(opt, 500, self.trainer.estimated_stepping_batches)
                    return [opt], [{"scheduler": sched, "interval": "step"}]
            """),
    # ... or with "interval": "epoch" said explicitly.
    Invalid(
        """
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.SGD(self.parameters(), lr=0.1)
                    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, epochs=10, steps_per_epoch=len(self.loader))
                    return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}
            """,
        lines=(7,), messages=(lightning_message("OneCycleLR"),),
        fixed="""
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.SGD(self.parameters(), lr=0.1)
                    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, epochs=10, steps_per_epoch=len(self.loader))
                    return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
            """),
    # The scheduler as the value of "lr_scheduler": wrapped in a dict that says "step".
    Invalid(
        """
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                    return {
                        "optimizer": opt,
                        "lr_scheduler": torch.optim.lr_scheduler.OneCycleLR(
                            opt, max_lr=1e-3, total_steps=self.trainer.estimated_stepping_batches),
                    }
            """,
        lines=(9,), messages=(lightning_message("OneCycleLR"),),
        fixed="""
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                    return {
                        "optimizer": opt,
                        "lr_scheduler": {"scheduler": torch.optim.lr_scheduler.OneCycleLR(
                            opt, max_lr=1e-3, total_steps=self.trainer.estimated_stepping_batches), "interval": "step"},
                    }
            """),
    # The lists are built before the return: no single place to edit, no fix.
    Invalid(
        """
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=self.total_steps)
                    optimizers, schedulers = [opt], [sched]
                    return optimizers, schedulers
            """,
        lines=(7,), messages=(lightning_message("OneCycleLR"),)),
    # StepLR sized by a configuration's step_size counts epochs (unless sized in steps).
    Invalid(
        """
            import torch
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg.step_size, gamma=cfg.gamma)
            for epoch in range(cfg.epochs):
                for x, y in train_loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                    scheduler.step()
            """,
        lines=(9,), messages=(per_batch_message("scheduler", "StepLR"),)),
    # MultiStepLR with milestones from the command line.
    Invalid(
        """
            from torch.optim import lr_scheduler
            sched = lr_scheduler.MultiStepLR(opt, args.milestones, gamma=0.1)
            for epoch in range(args.epochs):
                for batch in loader:
                    opt.zero_grad()
                    model(batch).backward()
                    opt.step()
                    sched.step()
            """,
        lines=(9,), messages=(per_batch_message("sched", "MultiStepLR"),)),
    # CosineAnnealingLR(T_max=200): a literal epoch count, stepped per batch.
    Invalid(
        """
            import torch
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)
            for epoch in range(200):
                for inputs, targets in trainloader:
                    optimizer.zero_grad()
                    criterion(net(inputs), targets).backward()
                    optimizer.step()
                    scheduler.step()
            """,
        lines=(9,), messages=(per_batch_message("scheduler", "CosineAnnealingLR"),)),
    # The trainer layout: built here, kept as self.scheduler, stepped per batch in train_epoch.
    Invalid(
        """
            import torch
            class Trainer:
                def __init__(self, model, train_loader, optimizer, scheduler):
                    self.model = model
                    self.train_loader = train_loader
                    self.optimizer = optimizer
                    self.scheduler = scheduler
                def train_epoch(self):
                    for x, y in self.train_loader:
                        self.optimizer.zero_grad()
                        self.model(x).sum().backward()
                        self.optimizer.step()
                        self.scheduler.step()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
            trainer = Trainer(model, loader, opt, sched)
            for epoch in range(90):
                trainer.train_epoch()
            """,
        lines=(14,), messages=(per_batch_message("self.scheduler", "StepLR"),)),
    # A parameter: train(model, loader, opt, scheduler) stepping per batch.
    Invalid(
        """
            import torch
            def train(model, loader, opt, scheduler):
                for x, y in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                    scheduler.step()
            sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=args.gamma)
            for epoch in range(args.epochs):
                train(model, loader, opt, sched)
            """,
        lines=(8,), messages=(per_batch_message("scheduler", "ExponentialLR"),)),
    # A cap on the steps of each epoch does not make the run counted in steps.
    Invalid(
        """
            import torch
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg.lr_step, gamma=0.5)
            for epoch in range(cfg.epochs):
                for i, batch in enumerate(loader):
                    if i >= cfg.max_steps_per_epoch:
                        break
                    optimizer.zero_grad()
                    model(batch).backward()
                    optimizer.step()
                    scheduler.step()
            """,
        lines=(11,), messages=(per_batch_message("scheduler", "StepLR"),)),
    # The pre-1.1 order inside the epoch function: stepped before its batch loop.
    Invalid(
        """
            def train(epoch, loader, model, optimizer, scheduler):
                scheduler.step()
                for x, y in loader:
                    optimizer.zero_grad()
                    model(x, y).backward()
                    optimizer.step()
            for epoch in range(epochs):
                train(epoch, loader, model, optimizer, scheduler)
            """,
        lines=(3,), messages=(order_message("scheduler"),)),
    # A SequentialLR whose warm-up and cosine count optimizer steps, returned without an
    # interval: reported once (its parts are stepped by it, not by Lightning).
    Invalid(
        """
            import torch
            import lightning
            from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
            class Task(lightning.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                    warmup = LinearLR(opt, start_factor=0.01, total_iters=self.hparams.warmup_steps)
                    cosine = CosineAnnealingLR(opt, T_max=self.trainer.estimated_stepping_batches)
                    sched = SequentialLR(opt, [warmup, cosine], milestones=[self.hparams.warmup_steps])
                    return [opt], [sched]
            """,
        lines=(10,), messages=(lightning_message("SequentialLR"),),
        fixed="""
            import torch
            import lightning
            from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
            class Task(lightning.LightningModule):
                def configure_optimizers(self):
                    opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
                    warmup = LinearLR(opt, start_factor=0.01, total_iters=self.hparams.warmup_steps)
                    cosine = CosineAnnealingLR(opt, T_max=self.trainer.estimated_stepping_batches)
                    sched = SequentialLR(opt, [warmup, cosine], milestones=[self.hparams.warmup_steps])
                    return [opt], [{"scheduler": sched, "interval": "step"}]
            """),
    # A SequentialLR of schedulers sized in epochs, stepped every batch.
    Invalid(
        """
            import torch
            from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
            sched = SequentialLR(opt, schedulers=[LinearLR(opt, total_iters=warmup_epochs),
                                                  CosineAnnealingLR(opt, T_max=num_epochs)], milestones=[warmup_epochs])
            for epoch in range(num_epochs):
                for x, y in loader:
                    opt.zero_grad()
                    criterion(model(x), y).backward()
                    opt.step()
                    sched.step()
            """,
        lines=(11,), messages=(per_batch_message("sched", "SequentialLR"),)),
]
