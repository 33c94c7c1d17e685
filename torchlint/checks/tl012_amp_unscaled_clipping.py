"""TL012 amp-unscaled-clipping: gradients clipped, or the optimizer stepped, while the loss
is still scaled by a ``GradScaler``.

For each ``S.scale(loss).backward()`` (``semantic.amp.scaled_backward``, also through a name
holding ``S.scale(loss)``, or a call of a same-file helper that ends with one:
``semantic.amp.scaling_functions``) whose scaler is not
``GradScaler(enabled=False)``, the calls after it in the same function, in source order, up
to ``S.step``/``S.update`` or anything that may unscale (``S.unscale_``, a same-file function
that unscales, any call handed ``S``):

* a torch clipping function (``clip_grad_norm_``, ``clip_grad_value_``), or a same-file
  helper that clips without unscaling (``semantic.amp.clipping_functions``), is reported;
* an optimizer stepped directly (``opt.step()``) is reported;
* the first ``.grad`` read (``semantic.amp.gradient_reads``: values used, not ``is None`` tests
  or stores) is reported;

unless it sits in the other branch of an ``if`` from the backward (the fp32 path). A scaler
stepped (``S.step(opt)``) but never updated anywhere in the file, and never handed to
another function, is reported at its step. ``accelerator.clip_grad_norm_``, Lightning and
bf16 autocast without a scaler never reach the rule.
"""

from __future__ import annotations

from torchlint import torch_api as api
from torchlint.finding import Severity
from torchlint.fixes import UNSAFE, Fix, insert_statement_before, own_statement
from torchlint.rule import Option, Rule
from torchlint.semantic.amp import (clipping_functions, grad_clip, gradient_reads, may_unscale, scaled_backward,
                                    scaler_disabled, scaler_method, scaling_functions, unscaling_functions)
from torchlint.semantic.branches import blocks_around, exclusive
from torchlint.semantic.callgraph import enclosing_function
from torchlint.statements import dotted_name


def clip_message(clip: str, scaler: str, inner: str | None = None) -> str:
    clip = f"{clip}` (which calls `{inner}`)" if inner else f"{clip}`"
    return (f"`{clip} sees gradients still multiplied by the loss scale (`{scaler}.scale(loss).backward()` and no "
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


    def finish(self) -> None:
        semantic = self.ctx.semantic
        model = semantic.model
        scaled = [(site, key) for site in model.calls if (key := scaled_backward(site.node, model)) is not None]
        if not scaled:
            return
        helpers = scaling_functions(semantic)
        for site in model.calls:  # ``self.backward(loss)``: a same-file helper that scales and backpropagates
            helper = next((t for t in semantic.graph.targets(site) if t in helpers), None)
            if helper is not None and enclosing_function(model, site.scope) is not helper:
                scaled.append((site, helpers[helper]))
        scaled.sort(key=lambda pair: pair[0].order)
        unscalers = unscaling_functions(semantic)
        self._clippers = clipping_functions(semantic)
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
            helper = next((t for t in semantic.graph.targets(site) if t in self._clippers), None)
            if helper is not None:  # ``self.clip_gradients()``: a same-file helper that clips
                yield site.node, clip_message(f"{helper.name.value}()", key, self._clippers[helper]), \
                    self._unscale_fix(backward, site, key, function, unscalers)
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
                not all(ctx.inside(clip.node, block) for block in blocks_around(ctx, backward.node)):
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
