"""TL013 scheduler-step-granularity: cases adapted from public reports (see ``__init__``)."""

from tests.rules.reports import Report

BUGS = [
    # SRGAN: StepLR sized in epochs (epochs // 2) for both networks, stepped after every batch.
    """
    import torch
    schedulerD = torch.optim.lr_scheduler.StepLR(optimizerD, step_size=epochs // 2, gamma=0.1)
    schedulerG = torch.optim.lr_scheduler.StepLR(optimizerG, step_size=epochs // 2, gamma=0.1)
    for epoch in range(epochs):
        for i, (lr, hr) in enumerate(dataloader):
            optimizerD.zero_grad()
            d_loss(netD, netG, lr, hr).backward()
            optimizerD.step()
            optimizerG.zero_grad()
            g_loss(netD, netG, lr, hr).backward()
            optimizerG.step()
            schedulerD.step()
            schedulerG.step()
    # https://github.com/Lornatang/SRGAN-PyTorch/issues/1
    """,
    # Lightning steps a OneCycleLR once per epoch unless told "interval": "step".
    """
    import torch
    import pytorch_lightning as pl
    class Model(pl.LightningModule):
        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            lr_scheduler = torch.optim.lr_scheduler.OneCycleLR(
                optimizer, max_lr=1e-1, steps_per_epoch=self.steps_per_epoch, epochs=self.epochs)
            return [optimizer], [lr_scheduler]
    # https://github.com/pytorch/pytorch/issues/65417
    """,
    # A 1cycle schedule handed to a training function that steps its scheduler once per epoch.
    """
    import torch
    def train_with_early_stopping(model, optimizer, criterion, train_loader, valid_loader, n_epochs,
                                  patience=20, scheduler=None):
        for epoch in range(n_epochs):
            for X_batch, y_batch in train_loader:
                loss = criterion(model(X_batch), y_batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            if scheduler is not None:
                scheduler.step()
    n_epochs = 60
    optimizer = torch.optim.NAdam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, epochs=n_epochs, steps_per_epoch=len(train_loader), max_lr=1e-2)
    train_with_early_stopping(model, optimizer, criterion, train_loader, valid_loader, n_epochs, scheduler=scheduler)
    # https://github.com/ageron/handson-mlp/issues/28
    """,
    # SimCLR: a cosine schedule as long as one epoch's batches, stepped once per epoch.
    """
    import torch
    class SimCLR:
        def train(self, train_loader, epochs):
            optimizer = torch.optim.Adam(self.model.parameters(), 3e-4)
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0)
            for epoch_counter in range(epochs):
                for (xis, xjs), _ in train_loader:
                    optimizer.zero_grad()
                    loss = self._step(xis, xjs)
                    loss.backward()
                    optimizer.step()
                if epoch_counter >= 10:
                    scheduler.step()
    # https://github.com/sthalles/SimCLR/issues/8
    """,
    # A CyclicLR in Lightning without "interval": "step": the cycle moves once per epoch.
    """
    import torch
    import pytorch_lightning as pl
    class LitModel(pl.LightningModule):
        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=1e-3, momentum=0.9)
            scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=1e-4, max_lr=1e-2, step_size_up=200)
            return {"optimizer": optimizer, "lr_scheduler": scheduler}
    # https://github.com/Lightning-AI/pytorch-lightning/issues/5631
    """,
    # ivadomed: the cosine schedule over num_epochs stepped in the batch loop.
    """
    import torch
    optimizer = torch.optim.Adam(model.parameters(), lr=initial_lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, num_epochs)
    for epoch in range(1, num_epochs + 1):
        model.train()
        for i, batch in enumerate(train_loader):
            preds = model(batch["input"])
            loss = loss_fct(preds, batch["gt"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
    # https://github.com/ivadomed/ivadomed/pull/55
    """,
    # The transfer-learning tutorial's train_model(model, criterion, optimizer, scheduler) stepping
    # a StepLR(step_size=7) per batch.
    """
    import torch
    from torch.optim import lr_scheduler
    def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
        for epoch in range(num_epochs):
            for inputs, labels in dataloaders["train"]:
                optimizer.zero_grad()
                loss = criterion(model(inputs), labels)
                loss.backward()
                optimizer.step()
                scheduler.step()
        return model
    optimizer_ft = torch.optim.SGD(model_ft.parameters(), lr=0.001, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)
    model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=25)
    # https://github.com/pytorch/tutorials/pull/640
    """,
    # Cosine annealing over the run's iterations, stepped once per epoch.
    """
    import torch
    total_iters = num_epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_iters, eta_min=1e-6)
    for epoch in range(num_epochs):
        for noisy, clean in train_loader:
            optimizer.zero_grad()
            criterion(denoiser(noisy), clean).backward()
            optimizer.step()
        scheduler.step()
    # https://github.com/GarrickZ2/Image-Denoising/pull/3
    """,
    # The trainer layout across modules: a OneCycleLR(total_steps=max_steps) handed to a
    # TrainingLoop that keeps it on self and steps it once per epoch.
    Report(files={
        "loop.py": """
            class TrainingLoop:
                def __init__(self, model, optimizer, loader, lr_scheduler, epochs):
                    self.model = model
                    self.optimizer = optimizer
                    self.loader = loader
                    self.lr_scheduler = lr_scheduler
                    self.epochs = epochs
                def run(self):
                    for epoch in range(self.epochs):
                        for batch in self.loader:
                            self.optimizer.zero_grad()
                            self.model(batch).backward()
                            self.optimizer.step()
                        self.lr_scheduler.step()
            """,
        "train.py": """
            import torch
            from loop import TrainingLoop
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-4, total_steps=max_steps)
            TrainingLoop(model, optimizer, loader, scheduler, epochs=1).run()
            # https://github.com/CodefyUI/CodefyUI/issues/297
            """,
    }),
    # A trainer class in trainer.py stepping its scheduler after every optimizer step, handed a
    # StepLR sized by the command line's step size (in epochs) by train.py.
    Report(files={
        "trainer.py": """
            class Trainer:
                def __init__(self, model, train_loader, optimizer, scheduler):
                    self.model = model
                    self.train_loader = train_loader
                    self.optimizer = optimizer
                    self.scheduler = scheduler
                def train_epoch(self):
                    for x, y in self.train_loader:
                        loss = self.model.loss(x, y)
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
                        self.scheduler.step()
                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()
            """,
        "train.py": """
            import torch
            from trainer import Trainer
            optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.step_size, gamma=args.gamma)
            Trainer(model, train_loader, optimizer, scheduler).fit(args.epochs)
            # https://github.com/pytorch/pytorch/issues/3814
            """,
    }),
    # ReActNet: the epoch schedule stepped at the start of train(), before the epoch's first
    # optimizer step (the first value of the schedule is skipped).
    """
    import torch
    def train(epoch, train_loader, model, criterion, optimizer, scheduler):
        scheduler.step()
        model.train()
        for i, (images, target) in enumerate(train_loader):
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (1.0 - step / args.epochs), last_epoch=-1)
    for epoch in range(args.epochs):
        train(epoch, train_loader, model, criterion, optimizer, scheduler)
    # https://github.com/liuzechun/ReActNet/issues/32
    """,
]

LOOKALIKES = [
    # SRGAN fixed: the epoch schedules stepped after the batch loop.
    """
    import torch
    schedulerD = torch.optim.lr_scheduler.StepLR(optimizerD, step_size=epochs // 2, gamma=0.1)
    schedulerG = torch.optim.lr_scheduler.StepLR(optimizerG, step_size=epochs // 2, gamma=0.1)
    for epoch in range(epochs):
        for i, (lr, hr) in enumerate(dataloader):
            optimizerD.zero_grad()
            d_loss(netD, netG, lr, hr).backward()
            optimizerD.step()
            optimizerG.zero_grad()
            g_loss(netD, netG, lr, hr).backward()
            optimizerG.step()
        schedulerD.step()
        schedulerG.step()
    # https://github.com/Lornatang/SRGAN-PyTorch/issues/1
    """,
    # Lightning told to step the 1cycle schedule every optimizer step.
    """
    import torch
    import pytorch_lightning as pl
    class Model(pl.LightningModule):
        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            lr_scheduler = torch.optim.lr_scheduler.OneCycleLR(
                optimizer, max_lr=1e-1, steps_per_epoch=self.steps_per_epoch, epochs=self.epochs)
            return [optimizer], [{"scheduler": lr_scheduler, "interval": "step"}]
    # https://github.com/pytorch/pytorch/issues/65417
    """,
    # The 1cycle schedule stepped after each batch in the training function.
    """
    import torch
    def train(model, optimizer, criterion, train_loader, n_epochs, scheduler=None):
        for epoch in range(n_epochs):
            for X_batch, y_batch in train_loader:
                loss = criterion(model(X_batch), y_batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if scheduler is not None:
                    scheduler.step()
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, epochs=n_epochs, steps_per_epoch=len(train_loader), max_lr=1e-2)
    train(model, optimizer, criterion, train_loader, n_epochs, scheduler=scheduler)
    # https://github.com/ageron/handson-mlp/issues/28
    """,
    # SimCLR fixed: the cosine schedule over one epoch's batches stepped per batch.
    """
    import torch
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0)
    for epoch_counter in range(epochs):
        for (xis, xjs), _ in train_loader:
            optimizer.zero_grad()
            loss = step(model, xis, xjs)
            loss.backward()
            optimizer.step()
            scheduler.step()
    # https://github.com/sthalles/SimCLR/issues/8
    """,
    # CyclicLR stepped every optimizer step in Lightning.
    """
    import torch
    import pytorch_lightning as pl
    class LitModel(pl.LightningModule):
        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=1e-3, momentum=0.9)
            scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=1e-4, max_lr=1e-2, step_size_up=200)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
    # https://github.com/Lightning-AI/pytorch-lightning/issues/5631
    """,
    # Tacotron: a run counted in steps; the configured milestones are steps, stepped per batch.
    """
    import torch.optim as optim
    def train_model(cfg):
        optimizer = optim.Adam(tacotron.parameters(), lr=cfg.train.optimizer.lr)
        scheduler = optim.lr_scheduler.MultiStepLR(
            optimizer=optimizer, milestones=cfg.train.scheduler.milestones, gamma=cfg.train.scheduler.gamma)
        n_epochs = cfg.train.n_steps // len(loader) + 1
        start_epoch = global_step // len(loader) + 1
        for epoch in range(start_epoch, n_epochs + 1):
            for i, (mels, texts) in enumerate(loader, 1):
                optimizer.zero_grad()
                loss = tacotron(texts, mels)
                loss.backward()
                optimizer.step()
                scheduler.step()
    # https://github.com/bshall/Tacotron/issues/3
    """,
    # A linear warm-up schedule over the training steps, stepped per batch as it should be.
    """
    from transformers import get_linear_schedule_with_warmup
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0,
                                                num_training_steps=len(dataloader) * epochs)
    for epoch in range(epochs):
        for step, batch in enumerate(dataloader):
            loss = model(*batch)
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    # https://github.com/rpryzant/causal-bert-pytorch/issues/9
    """,
    # The documentation's StepLR, stepped once per epoch after training and validation.
    """
    from torch.optim.lr_scheduler import StepLR
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(model, loader, optimizer)
        validate(model, val_loader)
        scheduler.step()
    # https://github.com/pytorch/pytorch/issues/54393
    """,
    # A poly schedule counted in iterations, stepped per batch with an explicit epoch.
    """
    class Trainer:
        def _train_epoch(self, epoch):
            for batch_idx, (data, target) in enumerate(self.train_loader):
                self.lr_scheduler.step(epoch=epoch - 1)
                self.optimizer.zero_grad()
                self.loss(self.model(data), target).backward()
                self.optimizer.step()
    # https://github.com/yassouali/pytorch-segmentation/issues/74
    """,
    # torchvision's detection reference: a warm-up LinearLR over the first iterations stepped per
    # batch in engine.py, the MultiStepLR over epochs stepped per epoch in train.py.
    Report(files={
        "engine.py": """
            import torch
            def train_one_epoch(model, optimizer, data_loader, device, epoch):
                model.train()
                lr_scheduler = None
                if epoch == 0:
                    warmup_iters = min(1000, len(data_loader) - 1)
                    lr_scheduler = torch.optim.lr_scheduler.LinearLR(
                        optimizer, start_factor=0.001, total_iters=warmup_iters)
                for images, targets in data_loader:
                    losses = sum(model(images, targets).values())
                    optimizer.zero_grad()
                    losses.backward()
                    optimizer.step()
                    if lr_scheduler is not None:
                        lr_scheduler.step()
            """,
        "train.py": """
            import torch
            from engine import train_one_epoch
            lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.lr_steps, gamma=0.1)
            for epoch in range(args.start_epoch, args.epochs):
                train_one_epoch(model, optimizer, data_loader, device, epoch)
                lr_scheduler.step()
            # https://github.com/pytorch/vision/issues/8629
            """,
    }),
    # A StepLR(step_size=1) decaying every epoch, handed to train_model and stepped per epoch.
    """
    from torch.optim import lr_scheduler
    def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
        for epoch in range(num_epochs):
            for inputs, labels in dataloaders["train"]:
                optimizer.zero_grad()
                criterion(model(inputs), labels).backward()
                optimizer.step()
            scheduler.step()
        return model
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=1, gamma=0.98)
    model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=25)
    # https://github.com/miraclewkf/MobileNetV2-PyTorch/issues/7
    """,
    # KAIR: MultiStepLR milestones in iterations, stepped with the current step each iteration.
    """
    from torch.optim import lr_scheduler
    class ModelPlain:
        def define_scheduler(self):
            self.schedulers.append(lr_scheduler.MultiStepLR(self.G_optimizer, self.opt_train["G_scheduler_milestones"],
                                                            self.opt_train["G_scheduler_gamma"]))
        def update_learning_rate(self, n):
            for scheduler in self.schedulers:
                scheduler.step(n)
    for epoch in range(1000000):
        for i, train_data in enumerate(train_loader):
            current_step += 1
            model.update_learning_rate(current_step)
            model.optimize_parameters(current_step)
    # https://github.com/cszn/KAIR/issues/101
    """,
    # ivadomed fixed: the cosine schedule over num_epochs stepped once per epoch.
    """
    import torch
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, num_epochs)
    for epoch in range(1, num_epochs + 1):
        model.train()
        for i, batch in enumerate(train_loader):
            loss = loss_fct(model(batch["input"]), batch["gt"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
    # https://github.com/ivadomed/ivadomed/pull/55
    """,
    # The trainer layout with the 1cycle schedule stepped after each optimizer step.
    Report(files={
        "loop.py": """
            class TrainingLoop:
                def __init__(self, model, optimizer, loader, lr_scheduler, epochs):
                    self.model = model
                    self.optimizer = optimizer
                    self.loader = loader
                    self.lr_scheduler = lr_scheduler
                    self.epochs = epochs
                def run(self):
                    for epoch in range(self.epochs):
                        for batch in self.loader:
                            self.optimizer.zero_grad()
                            self.model(batch).backward()
                            self.optimizer.step()
                            self.lr_scheduler.step()
            """,
        "train.py": """
            import torch
            from loop import TrainingLoop
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-4, total_steps=max_steps)
            TrainingLoop(model, optimizer, loader, scheduler, epochs=1).run()
            # https://github.com/CodefyUI/CodefyUI/issues/297
            """,
    }),
]
