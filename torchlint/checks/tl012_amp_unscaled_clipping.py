"""TL012 amp-unscaled-clipping: gradients clipped, or the optimizer stepped, while the loss
is still scaled by a ``GradScaler``.

For each ``S.scale(loss).backward()`` (``semantic.amp.scaled_backward``) whose scaler is not
``GradScaler(enabled=False)``, the calls after it in the same function, in source order, up
to ``S.step``/``S.update`` or anything that may unscale (``S.unscale_``, a same-file function
that unscales, any call handed ``S``):

* a torch clipping function (``clip_grad_norm_``, ``clip_grad_value_``) is reported;
* an optimizer stepped directly (``opt.step()``) is reported;
* the first ``.grad`` read (``semantic.amp.gradient_reads``: values used, not ``is None`` tests
  or stores) is reported;

unless it sits in the other branch of an ``if`` from the backward (the fp32 path). A scaler
stepped (``S.step(opt)``) but never updated anywhere in the file, and never handed to
another function, is reported at its step. ``accelerator.clip_grad_norm_``, Lightning and
bf16 autocast without a scaler never reach the rule.
"""

from __future__ import annotations

import libcst as cst

from torchlint import torch_api as api
from torchlint.context import dotted_name
from torchlint.finding import Severity
from torchlint.fixes import UNSAFE, Fix, insert_statement_before, own_statement
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.amp import (gradient_reads, grad_clip, may_unscale, scaled_backward, scaler_disabled,
                                    scaler_method, unscaling_functions)
from torchlint.semantic.branches import exclusive
from torchlint.semantic.callgraph import enclosing_function


def clip_message(clip: str, scaler: str) -> str:
    return (f"`{clip}` sees gradients still multiplied by the loss scale (`{scaler}.scale(loss).backward()` and no "
            f"`{scaler}.unscale_(optimizer)` before it): the threshold is compared with gradients ~65536x too large; "
            f"call `{scaler}.unscale_(optimizer)` before clipping")


def step_message(optimizer: str, scaler: str) -> str:
    return (f"`{optimizer}.step()` applies gradients still multiplied by the loss scale "
            f"(`{scaler}.scale(loss).backward()` above): updates are ~65536x too large and inf/NaN steps are not "
            f"skipped; call `{scaler}.step({optimizer})` then `{scaler}.update()`")


def grad_message(grad: str, scaler: str) -> str:
    return (f"`{grad}` is read while the gradients are still multiplied by the loss scale "
            f"(`{scaler}.scale(loss).backward()` and no `{scaler}.unscale_(optimizer)` before it): its values are "
            f"~65536x too large; call `{scaler}.unscale_(optimizer)` first")


def update_message(scaler: str) -> str:
    return (f"`{scaler}.step()` but `{scaler}.update()` is never called: the loss scale never adapts and the next "
            f"`{scaler}.step()` raises; call `{scaler}.update()` after each `{scaler}.step(optimizer)`")


class AmpUnscaledClipping(Rule):
    code = "TL012"
    name = "amp-unscaled-clipping"
    severity = Severity.ERROR
    default_enabled = True
    summary = ("gradients clipped, or the optimizer stepped, while the loss is scaled by a GradScaler "
               "(no scaler.unscale_ first); a scaler never updated")
    options: dict[str, Option] = {}
    requires_text = (".scale(",)
    fixable = (UNSAFE,)  # scaler.unscale_(optimizer) above a clip

    VALID: list[Valid | str] = [
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
    ]
    INVALID: list[Invalid] = [
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
    ]

    def finish(self) -> None:
        semantic = self.ctx.semantic
        model = semantic.model
        scaled = [(site, key) for site in model.calls if (key := scaled_backward(site.node)) is not None]
        if not scaled:
            return
        unscalers = unscaling_functions(semantic)
        reported: set = set()
        for backward, key in scaled:
            if scaler_disabled(semantic, key, backward.node):
                continue
            for node, message, fix in self._after(backward, key, unscalers):
                if node not in reported:
                    reported.add(node)
                    self.report(node, message, fix=fix)
        self._never_updated(scaled)

    def _after(self, backward, key: str, unscalers: set):
        """(node, message, fix) for clips, direct optimizer steps and ``.grad`` reads after
        ``backward`` in its function, before anything that unscales or ends the step."""
        ctx, semantic = self.ctx, self.ctx.semantic
        model = semantic.model
        function = enclosing_function(model, backward.scope)
        end = None
        for site in model.calls:
            if site.order <= backward.order or enclosing_function(model, site.scope) is not function:
                continue
            if scaler_method(site.node, key) in ("step", "update") or may_unscale(semantic, site, key, unscalers):
                end = site.order
                break
            if exclusive(ctx, backward.node, site.node):
                continue
            clip = grad_clip(ctx, site.node)
            if clip is not None:
                yield site.node, clip_message(clip, key), self._unscale_fix(backward, site, key, function, unscalers)
                continue
            optimizer = api.step_optimizer(ctx, site.node)
            if optimizer is not None and api.expr_key(site.node.func.value) == optimizer:
                yield site.node, step_message(optimizer, key), None
        read = next((node for node in gradient_reads(ctx, function, backward.order, end)
                     if not exclusive(ctx, backward.node, node)), None)
        if read is not None:
            yield read, grad_message(api.expr_key(read) or "x.grad", key), None

    def _unscale_fix(self, backward, clip, key: str, function, unscalers: set) -> Fix | None:
        """``S.unscale_(opt)`` on its own line above the clip, where that is the one edit: the
        clip is a statement of its own, runs whenever the backward ran (every ``if``/loop/``try``
        around the backward is around the clip too) and once per backward (no loop of its own);
        after it, up to ``S.update()`` or the function's end, the scaler steps exactly one
        optimizer (a name or attribute), in the clip's loops, and nothing else may unscale
        (``unscale_`` twice before an update raises). Unsafe: a helper of another module may
        still unscale the same optimizer."""
        ctx, semantic = self.ctx, self.ctx.semantic
        statement = own_statement(ctx, clip.node)
        loops = ctx.enclosing_loops(clip.node)
        if statement is None or loops != ctx.enclosing_loops(backward.node) or \
                not all(ctx.inside(clip.node, block) for block in _blocks_around(ctx, backward.node)):
            return None
        steps = []
        for site in semantic.model.calls:
            if site.order <= clip.order or enclosing_function(semantic.model, site.scope) is not function:
                continue
            method = scaler_method(site.node, key)
            if method == "update":
                break
            if method == "step":
                steps.append(site)
            elif may_unscale(semantic, site, key, unscalers):
                return None
        if len(steps) != 1 or ctx.enclosing_loops(steps[0].node) != loops or not steps[0].node.args:
            return None
        scaler, optimizer = steps[0].node.func.value, steps[0].node.args[0]
        if optimizer.keyword is not None or optimizer.star or dotted_name(optimizer.value) is None:
            return None
        code = f"{ctx.module.code_for_node(scaler)}.unscale_({ctx.module.code_for_node(optimizer.value)})"
        edit = insert_statement_before(ctx, statement, code)
        return Fix.unsafe(f"Call {code} before clipping", edit) if edit else None

    def _never_updated(self, scaled) -> None:
        model = self.ctx.semantic.model
        for key in dict.fromkeys(key for _, key in scaled):
            uses = [s for s in model.calls if scaler_method(s.node, key) in ("step", "update")
                    or any(api.expr_key(a.value) == key for a in s.node.args)]
            steps = [s for s in uses if scaler_method(s.node, key) == "step"]
            if steps and len(steps) == len(uses):
                self.report(steps[0].node, update_message(key))


_CONTROL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Match)


def _blocks_around(ctx, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The ``if``/loop/``try``/``match`` statements around ``node`` inside its function."""
    blocks = []
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(anc, _CONTROL):
            blocks.append(anc)
    return blocks
