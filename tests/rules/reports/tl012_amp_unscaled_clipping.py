"""TL012's cases adapted from public reports: gradients clipped, read or stepped while a
``GradScaler`` still has them multiplied by the loss scale, or a scaler never updated
(``BUGS``); and the fixed or similar code that unscales first, steps through the scaler, lets a
framework clip, or runs without a scaler (``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

BUGS = [
    # minGPT's DDP trainer: the clip right after the scaled backward
    """
    import torch

    class Trainer:
        def __init__(self, config, model, optimizer):
            self.config = config
            self.model = model
            self.optimizer = optimizer
            self.scaler = torch.cuda.amp.GradScaler() if config.use_amp else None

        def _run_batch(self, source, targets):
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.config.use_amp):
                _, loss = self.model(source, targets)
            self.optimizer.zero_grad(set_to_none=True)
            if self.config.use_amp:
                self.scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
                self.optimizer.step()
            return loss.item()
    # https://github.com/pytorch/examples/issues/1196
    """,
    # a U-Net training script: the scaler may be disabled by a flag, the clip still sees scaled values
    """
    import torch
    import torch.nn as nn

    def train_model(model, train_loader, device, epochs=5, learning_rate=1e-5, amp=False, gradient_clipping=1.0):
        optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=1e-8, momentum=0.999)
        grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
        criterion = nn.CrossEntropyLoss()
        for epoch in range(1, epochs + 1):
            model.train()
            for images, true_masks in train_loader:
                images, true_masks = images.to(device), true_masks.to(device)
                with torch.autocast(device.type, enabled=amp):
                    loss = criterion(model(images), true_masks)
                optimizer.zero_grad(set_to_none=True)
                grad_scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
                grad_scaler.step(optimizer)
                grad_scaler.update()
    # https://github.com/milesial/Pytorch-UNet/issues/468
    """,
    # a weather model's trainer: clipping under a configured maximum norm, after accumulation
    """
    import torch

    class Trainer:
        def __init__(self, model, grad_max_norm, grad_accum_every):
            self.model = model
            self.grad_max_norm = grad_max_norm
            self.grad_accum_every = grad_accum_every

        def train_one_epoch(self, loader, optimizer, scaler, criterion):
            for i, (x, y) in enumerate(loader):
                with torch.autocast(device_type="cuda", enabled=True):
                    loss = criterion(self.model(x), y) / self.grad_accum_every
                scaler.scale(loss).backward()
                if (i + 1) % self.grad_accum_every == 0:
                    if self.grad_max_norm > 0:
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.grad_max_norm)
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
    # https://github.com/NCAR/miles-credit/pull/141
    """,
    # a diffusion fine-tuner: the clip threshold applied to scaled gradients
    """
    import torch

    def train(unet, text_encoder, dataloader, optimizer, args):
        scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
        for batch in dataloader:
            with torch.autocast("cuda", enabled=args.amp):
                loss = unet(batch["latents"], text_encoder(batch["tokens"]))
            scaler.scale(loss).backward()
            if args.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(parameters=unet.parameters(), max_norm=args.clip_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    # https://github.com/victorchall/EveryDream2trainer/pull/175
    """,
    # a semi-supervised learner: the loss scaler and clipping behind their own flags
    """
    import torch

    class FixMatch:
        def __init__(self, model, optimizer, args):
            self.model = model
            self.optimizer = optimizer
            self.args = args
            self.loss_scaler = torch.cuda.amp.GradScaler()

        def train_step(self, total_loss):
            if self.args.amp:
                self.loss_scaler.scale(total_loss).backward()
                if self.args.clip > 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
                self.loss_scaler.step(self.optimizer)
                self.loss_scaler.update()
            else:
                total_loss.backward()
                if self.args.clip > 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
                self.optimizer.step()
            self.model.zero_grad()
    # https://github.com/TorchSSL/TorchSSL/pull/59
    """,
    # a diffusers trainer: clipping the UNet's gradients before the scaler's step
    """
    import torch

    def step(unet, optimizer, scaler, lr_scheduler, loss, fp16):
        if fp16:
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
            optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
    # https://github.com/harubaru/waifu-diffusion/issues/64
    """,
    # an engine that adds gradient noise and clips in helpers, on the scaled gradients
    """
    import torch

    class Engine:
        def __init__(self, model, optimizer, grad_clip, grad_noise):
            self.model = model
            self.optimizer = optimizer
            self.grad_clip = grad_clip
            self.grad_noise = grad_noise
            self._grad_scaler = torch.cuda.amp.GradScaler()

        def _apply_grad_noise(self):
            for p in self.model.parameters():
                if p.grad is not None:
                    p.grad += torch.randn_like(p.grad) * self.grad_noise

        def _clip_grads(self):
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)

        def train_step(self, total_loss):
            self._grad_scaler.scale(total_loss).backward()
            if self.grad_noise:
                self._apply_grad_noise()
            if self.grad_clip:
                self._clip_grads()
            self._grad_scaler.step(self.optimizer)
            self._grad_scaler.update()
    # https://github.com/rwth-i6/returnn/pull/1595
    """,
    # a GAN voice model: the optimizers stepped directly on top of the scaler's steps
    """
    import torch

    def train_and_evaluate(net_g, net_d, optim_g, optim_d, loader, discriminator_loss, generator_loss):
        scaler = torch.cuda.amp.GradScaler(enabled=True)
        for x, y in loader:
            with torch.autocast("cuda"):
                y_hat = net_g(x)
                loss_disc = discriminator_loss(net_d(y), net_d(y_hat.detach()))
            optim_d.zero_grad()
            scaler.scale(loss_disc).backward()
            optim_d.step()
            with torch.autocast("cuda"):
                loss_gen = generator_loss(net_d(y_hat))
            optim_g.zero_grad()
            scaler.scale(loss_gen).backward()
            optim_g.step()
            scaler.update()
    # https://github.com/IAHispano/Applio/pull/860
    """,
    # an MNIST example: the scaler stepped, never updated
    """
    import torch
    import torch.nn.functional as F

    def train(args, model, device, train_loader, optimizer, epoch):
        scaler = torch.cuda.amp.GradScaler()
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = F.nll_loss(model(data), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            if batch_idx % args.log_interval == 0:
                print(epoch, batch_idx, loss.item())
    # https://github.com/Azure/MS-AMP/pull/45
    """,
    # the gradient norm logged from the scaled gradients
    """
    import torch

    def train_step(model, optimizer, scaler, loss, logger, step):
        scaler.scale(loss).backward()
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for p in model.parameters() if p.grad is not None]), 2)
        logger.log({"grad_norm": grad_norm.item()}, step=step)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    # https://github.com/languini-kitchen/languini-kitchen/pull/7
    """,
    # a lip-reading recipe: the unscale_ line commented out above the clip
    """
    import torch

    def train_one_epoch(params, model, optimizer, scheduler, scaler, train_dl, compute_loss):
        for batch_idx, batch in enumerate(train_dl):
            params.batch_idx_train += 1
            with torch.cuda.amp.autocast(enabled=params.use_fp16):
                loss = compute_loss(model, batch)
            scaler.scale(loss).backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scheduler.step_batch(params.batch_idx_train)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    # https://github.com/k2-fsa/icefall/pull/2081
    """,
]

LOOKALIKES = [
    # the U-Net script as fixed: unscale, then clip
    """
    import torch

    def step(model, optimizer, grad_scaler, loss, gradient_clipping):
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        grad_scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
        grad_scaler.step(optimizer)
        grad_scaler.update()
    # https://github.com/milesial/Pytorch-UNet/pull/470
    """,
    # optical flow training: unscale, clip, step, schedule, update
    """
    import torch

    def train(model, train_loader, optimizer, scheduler, args, sequence_loss):
        scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision)
        for image1, image2, flow, valid in train_loader:
            optimizer.zero_grad()
            flow_predictions = model(image1, image2, iters=args.iters)
            loss = sequence_loss(flow_predictions, flow, valid)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.step(optimizer)
            scheduler.step()
            scaler.update()
    # https://github.com/princeton-vl/RAFT/issues/104
    """,
    # nanoGPT: the scaler enabled only for float16, unscaled before the optional clip
    """
    import torch

    def train(model, get_batch, optimizer, dtype, grad_clip, gradient_accumulation_steps, max_iters):
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
        for it in range(max_iters):
            for micro_step in range(gradient_accumulation_steps):
                X, Y = get_batch("train")
                logits, loss = model(X, Y)
                scaler.scale(loss / gradient_accumulation_steps).backward()
            if grad_clip != 0.0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    # https://github.com/karpathy/nanoGPT/pull/106
    """,
    # Accelerate clips through the accelerator, which unscales first
    """
    def train_one_epoch(accelerator, model, optimizer, lr_scheduler, dataloader, max_grad_norm):
        for step, batch in enumerate(dataloader):
            with accelerator.accumulate(model):
                optimizer.zero_grad()
                _, loss = model(**batch)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
    # https://github.com/huggingface/accelerate/issues/641
    """,
    # the MNIST example as fixed: step, then update
    """
    import torch
    import torch.nn.functional as F

    def train(model, device, train_loader, optimizer):
        scaler = torch.cuda.amp.GradScaler()
        model.train()
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = F.nll_loss(model(data), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    # https://github.com/Azure/MS-AMP/pull/45
    """,
    # a view-synthesis trainer: unscale, measure the norm, skip the step when too large, always update
    """
    import torch

    def train_step(model, optimizer, scaler, loss, grad_clip_norm, skip_threshold):
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        total_grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=grad_clip_norm)
        if total_grad_norm.item() < skip_threshold:
            scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    # https://github.com/Haian-Jin/LVSM/pull/19
    """,
    # a detection engine: clip only after unscaling, zero the gradients after the update
    """
    import torch

    def train_one_epoch(model, criterion, data_loader, optimizer, scaler, max_norm):
        for samples, targets in data_loader:
            with torch.cuda.amp.autocast(enabled=True):
                outputs = model(samples)
                losses = sum(criterion(outputs, targets).values())
            scaler.scale(losses).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    # https://github.com/IDEA-Research/DN-DETR/issues/18
    """,
    # a video segmentation model: no clipping, the step through the scaler
    """
    import torch

    class Model:
        def __init__(self, net, optimizer):
            self.net = net
            self.optimizer = optimizer
            self.scaler = torch.cuda.amp.GradScaler()

        def do_pass(self, data):
            with torch.cuda.amp.autocast(enabled=True):
                loss = self.net(data)
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
    # https://github.com/hkchengrex/STCN/issues/44
    """,
    # the GAN voice model as fixed: both optimizers stepped through the scaler, unscaled before clipping
    """
    import torch

    def train_and_evaluate(net_g, net_d, optim_g, optim_d, loader, discriminator_loss, generator_loss):
        scaler = torch.cuda.amp.GradScaler(enabled=True)
        for x, y in loader:
            with torch.autocast("cuda"):
                y_hat = net_g(x)
                loss_disc = discriminator_loss(net_d(y), net_d(y_hat.detach()))
            optim_d.zero_grad()
            scaler.scale(loss_disc).backward()
            scaler.unscale_(optim_d)
            torch.nn.utils.clip_grad_value_(net_d.parameters(), 1000.0)
            scaler.step(optim_d)
            with torch.autocast("cuda"):
                loss_gen = generator_loss(net_d(y_hat))
            optim_g.zero_grad()
            scaler.scale(loss_gen).backward()
            scaler.unscale_(optim_g)
            torch.nn.utils.clip_grad_value_(net_g.parameters(), 1000.0)
            scaler.step(optim_g)
            scaler.update()
    # https://github.com/IAHispano/Applio/pull/860
    """,
    # the gradient norm logged after unscaling
    """
    import torch

    def train_step(model, optimizer, scaler, loss, logger, step):
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for p in model.parameters() if p.grad is not None]), 2)
        logger.log({"grad_norm": grad_norm.item()}, step=step)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    # https://github.com/languini-kitchen/languini-kitchen/pull/7
    """,
    # the semi-supervised learner as fixed: unscaled before the clip
    """
    import torch

    def train_step(model, optimizer, loss_scaler, total_loss, clip):
        loss_scaler.scale(total_loss).backward()
        if clip > 0:
            loss_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        loss_scaler.step(optimizer)
        loss_scaler.update()
        model.zero_grad()
    # https://github.com/TorchSSL/TorchSSL/pull/59
    """,
    # a callback that clips only when no scaler is used (fp32), the scaler path unscaling first
    """
    import torch

    class OptimizerCallback:
        def __init__(self, grad_clip_fn, scaler=None):
            self.grad_clip_fn = grad_clip_fn
            self.scaler = scaler

        def on_batch_end(self, model, optimizer, loss):
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(optimizer)
                self.grad_clip_fn(model.parameters())
                self.scaler.step(optimizer)
                self.scaler.update()
            else:
                loss.backward()
                self.grad_clip_fn(model.parameters())
                optimizer.step()
    # https://github.com/catalyst-team/catalyst/issues/1319
    """,
]
