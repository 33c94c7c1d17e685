"""TL012's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl012_amp_unscaled_clipping import clip_message, grad_message, step_message, update_message
from torchlint.rule import Invalid


VALID = [
    # The fix: unscale, clip, step through the scaler, update.
    """
        import torch
        scaler = torch.amp.GradScaler()
        for x, y in loader:
            scaler.scale(criterion(model(x), y)).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        """,
    # Accelerate's clip_grad_norm_ unscales itself.
    """
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="fp16")
        for batch in loader:
            accelerator.backward(model(batch).loss)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        """,
    # Lightning clips (and unscales) through the Trainer.
    """
        import lightning as L
        trainer = L.Trainer(precision="16-mixed", gradient_clip_val=1.0)
        trainer.fit(model, loader)
        """,
    # unscale_ in a same-file helper that also clips.
    """
        import torch
        def clip(scaler, optimizer, model):
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler = torch.cuda.amp.GradScaler()
        for x in loader:
            scaler.scale(model(x).sum()).backward()
            clip(scaler, optimizer, model)
            scaler.step(optimizer)
            scaler.update()
        """,
    # A helper of another module handed the scaler may unscale: silent.
    """
        import torch
        from utils import unscale_all
        scaler = torch.cuda.amp.GradScaler()
        for x in loader:
            scaler.scale(model(x).sum()).backward()
            unscale_all(scaler, optimizers)
            torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
            scaler.step(optimizer)
            scaler.update()
        """,
    # bf16 autocast without a scaler: nothing is scaled.
    """
        import torch
        for x in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x).sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """,
    # GradScaler(enabled=False): scale() returns the loss unchanged.
    """
        import torch
        scaler = torch.cuda.amp.GradScaler(enabled=False)
        for x in loader:
            scaler.scale(model(x).sum()).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """,
    # The fp32 branch clips and steps directly; the AMP branch goes through the scaler.
    """
        import torch
        def train_step(loss, use_amp):
            if use_amp:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
        """,
    # Clipping after the scaler stepped and updated: a later phase, gradients are unscaled.
    """
        import torch
        for x in loader:
            scaler.scale(model(x).sum()).backward()
            scaler.step(optimizer)
            scaler.update()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """,
    # The scaler is updated by a helper it is handed to.
    """
        import torch
        from utils import finish_step
        scaler = torch.cuda.amp.GradScaler()
        for x in loader:
            scaler.scale(model(x).sum()).backward()
            scaler.step(optimizer)
            finish_step(scaler)
        """,
    # A self.scaler updated in another method of the class.
    """
        import torch
        class Trainer:
            def __init__(self):
                self.scaler = torch.cuda.amp.GradScaler()
            def backward(self, loss):
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.scaler.step(self.optimizer)
            def end_step(self):
                self.scaler.update()
        """,
    # Gradients tested for presence (not read), then unscaled before their norm is taken.
    """
        import torch
        def step(model, loss):
            scaler.scale(loss).backward()
            missing = [n for n, p in model.named_parameters() if p.grad is None]
            scaler.unscale_(optimizer)
            norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
            scaler.step(optimizer)
            scaler.update()
        """,
    # A clipping helper that unscales first.
    """
        import torch
        scaler = torch.cuda.amp.GradScaler()
        def clip(model, optimizer):
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for x, y in loader:
            scaler.scale(criterion(model(x), y)).backward()
            clip(model, optimizer)
            scaler.step(optimizer)
            scaler.update()
        """,
    # The two-statement form, unscaled before the clip; a backward helper that steps itself.
    """
        import torch
        scaler = torch.cuda.amp.GradScaler()
        def backward_and_step(loss, optimizer):
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        for x, y in loader:
            scaled = scaler.scale(criterion(model(x), y))
            scaled.backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            backward_and_step(criterion(model(x), y), optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """,
    # A name that holds the loss, not its scaled value, on some path.
    """
        import torch
        scaler = torch.cuda.amp.GradScaler()
        for x, y in loader:
            out = criterion(model(x), y)
            if use_amp:
                out = scaler.scale(out)
            out.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
        """,
]


INVALID = [
    # A gradient norm logged from the scaled gradients.
    Invalid(
        """
            import torch
            def step(model, loss):
                scaler.scale(loss).backward()
                norm = torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]).norm()
                scaler.step(optimizer)
                scaler.update()
                return norm
            """,
        lines=(5,), messages=(grad_message("p.grad", "scaler"),)),
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                scaler.scale(criterion(model(x), y)).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """,
        lines=(6,), messages=(clip_message("clip_grad_norm_", "scaler"),),
        fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                scaler.scale(criterion(model(x), y)).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """),
    Invalid(
        """
            from torch.nn.utils import clip_grad_value_
            from torch.amp import GradScaler
            grad_scaler = GradScaler("cuda")
            for batch in loader:
                grad_scaler.scale(model(batch).mean()).backward()
                clip_grad_value_(model.parameters(), 0.1)
                grad_scaler.step(optimizer)
                grad_scaler.update()
            """,
        lines=(7,), messages=(clip_message("clip_grad_value_", "grad_scaler"),),
        fixed="""
            from torch.nn.utils import clip_grad_value_
            from torch.amp import GradScaler
            grad_scaler = GradScaler("cuda")
            for batch in loader:
                grad_scaler.scale(model(batch).mean()).backward()
                grad_scaler.unscale_(optimizer)
                clip_grad_value_(model.parameters(), 0.1)
                grad_scaler.step(optimizer)
                grad_scaler.update()
            """),
    # milesial/Pytorch-UNet 468: clipping between the scaled backward and the scaler step.
    Invalid(
        """
            import torch
            from torch import nn
            def train(model, loader, optimizer, amp):
                grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
                for images, masks in loader:
                    with torch.autocast("cuda", enabled=amp):
                        loss = model(images).sum()
                    optimizer.zero_grad(set_to_none=True)
                    grad_scaler.scale(loss).backward()
                    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    grad_scaler.step(optimizer)
                    grad_scaler.update()
            """,
        lines=(11,), messages=(clip_message("clip_grad_norm_", "grad_scaler"),),
        fixed="""
            import torch
            from torch import nn
            def train(model, loader, optimizer, amp):
                grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
                for images, masks in loader:
                    with torch.autocast("cuda", enabled=amp):
                        loss = model(images).sum()
                    optimizer.zero_grad(set_to_none=True)
                    grad_scaler.scale(loss).backward()
                    grad_scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    grad_scaler.step(optimizer)
                    grad_scaler.update()
            """),
    # A self.scaler in a trainer class.
    Invalid(
        """
            import torch
            class Trainer:
                def __init__(self, model):
                    self.scaler = torch.cuda.amp.GradScaler()
                def step(self, loss):
                    self.scaler.scale(loss).backward()
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """,
        lines=(8,), messages=(clip_message("clip_grad_norm_", "self.scaler"),),
        fixed="""
            import torch
            class Trainer:
                def __init__(self, model):
                    self.scaler = torch.cuda.amp.GradScaler()
                def step(self, loss):
                    self.scaler.scale(loss).backward()
                    self.scaler.unscale_(self.optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """),
    # The optimizer stepped directly while the loss is scaled.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x in loader:
                with torch.autocast("cuda"):
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                optimizer.step()
                optimizer.zero_grad()
            """,
        lines=(8,), messages=(step_message("optimizer", "scaler"),)),
    # Both: clipped and stepped directly.
    Invalid(
        """
            import torch
            def train_step(model, scaler, opt, loss):
                scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            """,
        lines=(5, 6), messages=(clip_message("clip_grad_norm_", "scaler"), step_message("opt", "scaler"))),
    # A scaler stepped but never updated.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x in loader:
                scaler.scale(model(x).sum()).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                optimizer.zero_grad()
            """,
        lines=(8,), messages=(update_message("scaler"),)),
    # Clipping under gradient accumulation, still before the unscale.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for i, batch in enumerate(loader):
                scaler.scale(model(batch).loss / accum).backward()
                if (i + 1) % accum == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    scaler.unscale_(optimizer)
                    scaler.step(optimizer)
                    scaler.update()
            """,
        lines=(7,), messages=(clip_message("clip_grad_norm_", "scaler"),)),
    # A GAN: both scaled backwards reach the generator's clip.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for real in loader:
                scaler.scale(d_loss(real)).backward()
                scaler.step(opt_d)
                scaler.scale(g_loss(real)).backward()
                torch.nn.utils.clip_grad_norm_(generator.parameters(), 10.0)
                scaler.step(opt_g)
                scaler.update()
            """,
        lines=(8,), messages=(clip_message("clip_grad_norm_", "scaler"),),
        fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for real in loader:
                scaler.scale(d_loss(real)).backward()
                scaler.step(opt_d)
                scaler.scale(g_loss(real)).backward()
                scaler.unscale_(opt_g)
                torch.nn.utils.clip_grad_norm_(generator.parameters(), 10.0)
                scaler.step(opt_g)
                scaler.update()
            """),
    # The scaled backward in an `if amp` branch; the clip after both branches.
    Invalid(
        """
            import torch
            def step(loss, amp):
                if amp:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if amp:
                    scaler.step(optimizer)
                    scaler.update()
            """,
        lines=(8,), messages=(clip_message("clip_grad_norm_", "scaler"),)),
    # Accumulation: the unscale_ goes into the `if` that clips and steps.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for i, (x, y) in enumerate(loader):
                scaler.scale(criterion(model(x), y) / accum).backward()
                if (i + 1) % accum == 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # log it
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
        lines=(7,), messages=(clip_message("clip_grad_norm_", "scaler"),),
        fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for i, (x, y) in enumerate(loader):
                scaler.scale(criterion(model(x), y) / accum).backward()
                if (i + 1) % accum == 0:
                    scaler.unscale_(optimizer)
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # log it
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """),
    # Clipped group by group: one unscale_ per group would raise; no fix.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x in loader:
                scaler.scale(model(x).sum()).backward()
                for group in optimizer.param_groups:
                    torch.nn.utils.clip_grad_norm_(group["params"], 1.0)
                scaler.step(optimizer)
                scaler.update()
            """,
        lines=(7,), messages=(clip_message("clip_grad_norm_", "scaler"),)),
    # The scaler steps two optimizers after one clip: which to unscale is the author's call; no fix.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x in loader:
                scaler.scale(model(x).sum()).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(encoder_optimizer)
                scaler.step(decoder_optimizer)
                scaler.update()
            """,
        lines=(6,), messages=(clip_message("clip_grad_norm_", "scaler"),)),
    # The two-statement form: the scaled loss kept in a name, then its backward.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                scaled = scaler.scale(criterion(model(x), y))
                scaled.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """,
        lines=(7,), messages=(clip_message("clip_grad_norm_", "scaler"),),
        fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                scaled = scaler.scale(criterion(model(x), y))
                scaled.backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """),
    # A same-file helper that clips, called between the scaled backward and the step.
    Invalid(
        """
            import torch
            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                    self.scaler = torch.cuda.amp.GradScaler()
                def clip_gradients(self):
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                def step(self, loss):
                    self.scaler.scale(loss).backward()
                    self.clip_gradients()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """,
        lines=(11,), messages=(clip_message("clip_gradients()", "self.scaler", "clip_grad_norm_"),),
        fixed="""
            import torch
            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                    self.scaler = torch.cuda.amp.GradScaler()
                def clip_gradients(self):
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                def step(self, loss):
                    self.scaler.scale(loss).backward()
                    self.scaler.unscale_(self.optimizer)
                    self.clip_gradients()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """),
    # A same-file helper that scales and backpropagates; the clip after its call.
    Invalid(
        """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            def backward(loss):
                scaler.scale(loss).backward()
            def train(model, loader, optimizer, criterion):
                for x, y in loader:
                    backward(criterion(model(x), y))
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    scaler.step(optimizer)
                    scaler.update()
            """,
        lines=(9,), messages=(clip_message("clip_grad_norm_", "scaler"),),
        fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            def backward(loss):
                scaler.scale(loss).backward()
            def train(model, loader, optimizer, criterion):
                for x, y in loader:
                    backward(criterion(model(x), y))
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    scaler.step(optimizer)
                    scaler.update()
            """),
]
