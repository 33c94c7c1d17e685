"""What the dry run of a script sees (``torchlint run``), turned into observations at lines.

:class:`Observer` is told by :mod:`.fence` and :mod:`.fakecuda` of every top-level model
call, backward, optimizer step, ``zero_grad``, scheduler step, GradScaler call, gradient
clip, loss call, in-place op on a tensor that requires grad, and DataLoader pass; it keeps
the few facts that decide each observation and bounds the run (:class:`StopRun`):

=========  =========================================================================
TL001      a backward after an optimizer step that left the gradients of the last
           step in place (no ``zero_grad``, no ``grad = None``, no ``grad.zero_()``)
TL002      a name in the stepping frame keeps a tensor whose graph holds an earlier
           step's loss, or a list/dict of such tensors that grows step over step
TL003      a model called in eval mode with autograd recording, and no backward
           before the model's next call (evaluation)
TL005      a layer of a trained model whose parameters never got a gradient
TL011      a model with dropout or batch norm called in training mode with no
           backward before its next call (evaluation), or trained in eval mode after
           it was trained in training mode
TL012      ``clip_grad_*`` on parameters a GradScaler scaled and did not unscale
TL013      ``scheduler.step()`` before the first ``optimizer.step()``; a per-batch
           scheduler stepped once per epoch, a per-epoch one every batch
TL014      a DistributedSampler read twice with the same epoch
TL017      one optimizer step over the backwards of several batches, none scaled
TL021      a layer of a trained model whose parameters are in no optimizer
TL102      a loss called with an output and target that disagree (shape, dtype)
=========  =========================================================================

Exceptions (TL100 shape, TL101 device, TL103 batch norm, TL104 in-place) are read by
:func:`Observer.failed` from the exception the script ended with.
"""

from __future__ import annotations

import os
import re
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from torchlint.codes import (
    ACCUMULATION_WITHOUT_SCALING,
    AMP_UNSCALED_CLIPPING,
    BATCH_NORM_ONE_VALUE,
    DEVICE_MISMATCH,
    EVAL_WITHOUT_NO_GRAD,
    INPLACE_BREAKS_BACKWARD,
    LEGACY_AUTOGRAD_API,
    LOSS_KEPT_WITH_GRAPH,
    LOSS_TARGET_MISMATCH,
    MISSING_ZERO_GRAD,
    MODEL_MODE,
    OPTIMIZER_MISSES_PARAMETERS,
    SAMPLER_EPOCH_NOT_SET,
    SCHEDULER_STEP_GRANULARITY,
    SHAPE_MISMATCH,
    UNUSED_LAYER,
)
from torchlint.trace.child.failure import DeviceMismatch, looks_like_shapes
from torchlint.trace.child.inplace import INPLACE_ERROR, spelled
from torchlint.trace.child.losses import LOSSES, check_loss_call
from torchlint.trace.records import Observation

_TORCHLINT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PER_BATCH = {"OneCycleLR", "CyclicLR"}
PER_EPOCH = {"StepLR", "MultiStepLR", "ExponentialLR"}
MAX_BATCHES_PER_PASS = 64
ONE_VALUE = "Expected more than 1 value per channel when training"
ZERO_DIM_INDEX = "invalid index of a 0-dim tensor"
_ENVIRONMENT = ("NVIDIA driver", "CUDA driver", "not compiled with CUDA", "CUDA error", "cudaError",
                "No CUDA GPUs", "CUDA is not available")


_NOT_OWNERS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class StopRun(BaseException):
    """Raised out of the script where a bound is reached (a BaseException: the script's
    ``except Exception`` does not swallow it)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Call:
    """A top-level model call (one called from the script, not from another module)."""

    module: Any  # weakref
    site: tuple[str, int] | None
    training: bool
    grad: bool
    stochastic: bool  # holds dropout or batch norm
    loader_pass: int  # the DataLoader pass it ran in (0: none)
    recorded: bool = False  # its output has a grad_fn
    outputs: tuple[Any, ...] = ()  # the grad_fns of its outputs, to find in a backward's graph


@dataclass
class Window:
    """One epoch of a training DataLoader: from a pass's start to the next pass's start."""

    steps: int = 0
    schedulers: dict[int, list[Any]] = field(default_factory=dict)  # id -> [scheduler ref, count, site]


class Observer:
    def __init__(self, torch: Any, roots: Iterable[str], steps: int = 3, passes: int = 2, eval_batches: int = 2):
        self.torch = torch
        self.roots = [os.path.realpath(r) for r in roots]
        self.max_steps = steps
        self.max_passes = passes
        self.eval_batches = eval_batches
        self.max_total_steps = steps * (passes + 1)
        self.found: dict[tuple[str, str, int, str], Observation] = {}
        self._project: dict[str, bool] = {}
        # counters (the summary)
        self.steps = self.backwards = self.passes = self.batches_total = self.forwards = 0
        self.iterations, self.last_step_batch = 0, -1  # optimizer steps in distinct batches
        self.lr: list[list[float]] = []
        self.memory: Any = None  # the fake GPU's live tensors (memory.StorageSet), set by the fence
        self.fake_gpu = True  # meta stands for CUDA (False with --run-device meta or cpu)
        # model calls
        self.depth = 0
        self.current: Call | None = None
        self.last_site: tuple[str, int] | None = None
        self.pending: list[Call] = []  # model calls no backward has reached yet
        self.pass_steps: dict[int, int] = {}  # DataLoader pass -> optimizer steps in it
        self.current_pass = 0
        self.trained_in_train_mode: set[int] = set()
        self.trained: dict[int, Any] = {}  # id -> the models whose forward reached a backward
        self._stochastic: dict[int, bool] = {}
        self.made_at: dict[tuple[int, str], tuple[str, int]] = {}
        # steps and gradients
        self.optimizers: dict[int, Any] = {}  # id -> every optimizer built
        self.snapshot: dict[int, tuple[Any, int, int]] = {}  # param id -> (ref, grad id, version) at its last step
        self.got_grad: set[int] = set()
        self.in_optimizer: set[int] = set()  # parameter ids in an optimizer, at the last step
        self.trained_params: dict[int, list[tuple[str, int]]] = {}  # model id -> (name, parameter id)
        self.step_backwards: list[tuple[tuple[str, int] | None, bool, int]] = []  # site, scaled, batch
        self.batch_index = 0
        self.scaled_from: dict[int, Any] = {}  # id(scaler.scale(loss)) -> loss
        self.scaling: dict[int, set[int]] = {}  # scaler id -> ids of optimizers unscaled since update
        self.scheduler_seen: set[int] = set()
        self.windows: dict[int, Window] = {}
        self.loader_passes: dict[int, int] = {}
        self.sampler_epochs: dict[int, int] = {}
        self.inplace_sites: list[tuple[str, tuple[str, int] | None, list[int]]] = []
        self.kept: dict[str, int] = {}  # TL002: container name -> graph-holding elements at the last step
        self.accumulators: dict[str, int] = {}  # TL002: tensor name -> id of its grad_fn at the last step
        self.old_losses: list[tuple[int, Any]] = []  # (batch, grad_fn) of the last losses backwarded

    # ------------------------------------------------------------------ where
    def is_project(self, filename: str) -> bool:
        known = self._project.get(filename)
        if known is None:
            path = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
            known = bool(path) and "site-packages" not in path and not path.startswith(_TORCHLINT_DIR + os.sep) \
                and any(path.startswith(r + os.sep) for r in self.roots)
            self._project[filename] = known
        return known

    def where(self, frame: Any = None) -> tuple[str, int] | None:
        """The innermost line of the script's own code on the stack."""
        f = frame or sys._getframe(1)
        while f is not None:
            if self.is_project(f.f_code.co_filename):
                return os.path.realpath(f.f_code.co_filename), f.f_lineno
            f = f.f_back
        return None

    def called_from_torch(self) -> bool:
        """Whether the patched method was called by torch itself (a scheduler's first step,
        made by its constructor), looking past the observer and the fence's wrapper."""
        f = sys._getframe(3)
        return f is not None and not self.is_project(f.f_code.co_filename) and (
            os.sep + "torch" + os.sep in f.f_code.co_filename)

    def observe(self, code: str, site: tuple[str, int] | None, message: str, **extra: Any) -> None:
        if site is None:
            return
        key = (code, site[0], site[1], extra.get("name", ""))
        if key not in self.found:
            self.found[key] = Observation(code=code, file=site[0], line=site[1], message=message, **extra)

    # ------------------------------------------------------------------ model calls
    def stochastic(self, module: Any) -> bool:
        known = self._stochastic.get(id(module))
        if known is None:
            nn = self.torch.nn
            kinds = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)
            known = any(isinstance(m, kinds) for m in module.modules())
            self._stochastic[id(module)] = known
        return known

    def forward_pre(self, module: Any, args: Any) -> None:
        self.depth += 1
        if self.depth == 1:
            site = self.where(sys._getframe(1))
            self.last_site = site
            self.current = Call(weakref.ref(module), site, bool(module.training), self.torch.is_grad_enabled(),
                                self.stochastic(module), self.current_pass)
        return None

    def forward_post(self, module: Any, args: Any, output: Any) -> None:
        self.depth = max(0, self.depth - 1)
        call = self.current
        if self.depth or call is None or call.module() is not module:
            return None
        self.current = None
        self.forwards += 1
        call.outputs = tuple(_grad_fns(self.torch, output))
        call.recorded = bool(call.outputs)
        self.pending.append(call)
        if len(self.pending) > 256:
            self.judge(self.pending[:128])
            del self.pending[:128]
        return None

    def judge(self, calls: Iterable[Call]) -> None:
        """Model calls no backward reached: evaluation, where they ran in a pass with no optimizer
        step (or outside any pass) or in eval mode."""
        for call in calls:
            evaluating = not self.pass_steps.get(call.loader_pass, 0)
            if call.training and not evaluating:
                continue  # an extra forward inside a training epoch: not an evaluation
            self.evaluated(call)

    def evaluated(self, call: Call) -> None:
        """A model call no backward reached: evaluation."""
        module = call.module()
        name = type(module).__name__ if module is not None else "the model"
        if call.training and call.stochastic:
            self.observe(MODEL_MODE, call.site, f"`{name}` was called in training mode with no backward after it "
                         "(evaluation): its dropout/batch norm were active; call model.eval() before "
                         "evaluating (found by the dry run)")
        elif not call.training and call.grad and call.recorded:
            self.observe(EVAL_WITHOUT_NO_GRAD, call.site, f"`{name}` was called in eval mode while autograd was recording, "
                         "and no backward followed: the activations were kept for nothing; wrap the evaluation "
                         "in torch.no_grad() (found by the dry run)")

    def trained_call(self, call: Call) -> None:
        module = call.module()
        if module is None:
            return
        self.trained[id(module)] = module
        if call.training:
            self.trained_in_train_mode.add(id(module))
        elif call.stochastic and id(module) in self.trained_in_train_mode:
            self.observe(MODEL_MODE, call.site, f"`{type(module).__name__}` was trained in eval mode after an "
                         "earlier step in training mode: model.eval() with no model.train() before this "
                         "training step; dropout/batch norm are off (found by the dry run)")

    def registered(self, module: Any, name: str, submodule: Any) -> None:
        site = self.where(sys._getframe(1))
        if site is not None:
            self.made_at[(id(module), name)] = site
        return None

    # ------------------------------------------------------------------ backward and steps
    def backward(self, loss: Any) -> None:
        self.backwards += 1
        site = self.where(sys._getframe(1))
        reached = _graph_ids(loss.grad_fn) if isinstance(loss, self.torch.Tensor) and loss.grad_fn is not None \
            else set()
        kept = []
        for call in self.pending:
            # trained: its output is in this backward's graph; a call under no_grad before it (a GAN's
            # sample for the discriminator) is part of the same training step
            if any(id(fn) in reached for fn in call.outputs) or not call.recorded \
                    and call.loader_pass == self.current_pass:
                self.trained_call(call)
            else:
                kept.append(call)
        self.pending = kept
        torch = self.torch
        if isinstance(loss, torch.Tensor):
            source = self.scaled_from.get(id(loss), loss)
            fn = type(source.grad_fn).__name__ if source.grad_fn is not None else ""
            self.step_backwards.append((site, fn.startswith(("DivBackward", "MulBackward")), self.batch_index))
            if source.grad_fn is not None:
                self.old_losses = [*self.old_losses[-7:], (self.batch(), source.grad_fn)]
        if not self.steps and self.backwards > self.max_total_steps:
            raise StopRun("steps")  # a loop that trains without an optimizer (p.data -= lr * p.grad)

    def batch(self) -> int:
        """Which iteration this is: the DataLoader batch, else the optimizer steps so far."""
        return self.batch_index if self.batch_index else self.steps

    def cleared(self, params: Iterable[Any]) -> None:
        for p in params:
            self.snapshot.pop(id(p), None)

    def written(self, tensor: Any) -> None:
        """An in-place op wrote ``tensor`` (``p.grad.data.zero_()`` clears a gradient)."""
        if not self.snapshot:
            return
        try:
            storage = tensor.untyped_storage()._cdata
        except Exception:  # noqa: BLE001
            return
        for key, (ref, _, _) in list(self.snapshot.items()):
            p = ref()
            if p is not None and p.grad is not None and p.grad.untyped_storage()._cdata == storage:
                del self.snapshot[key]

    def optimizer_made(self, opt: Any, *args: Any, **kwargs: Any) -> None:
        self.optimizers[id(opt)] = opt

    def step_pre(self, opt: Any) -> None:
        # the bound counts iterations: a GAN's two optimizers step once each per batch
        if self.batch_index == 0 or self.batch_index != self.last_step_batch:
            if self.iterations >= self.max_total_steps:
                raise StopRun("steps")
            self.iterations += 1
            self.last_step_batch = self.batch_index
        self.optimizers[id(opt)] = opt
        params = [p for g in opt.param_groups for p in g["params"]]
        self.got_grad.update(id(p) for p in params if p.grad is not None)
        stale = 0
        for p in params:  # a gradient this optimizer applied last step, added to since, never cleared
            kept = self.snapshot.get(id(p))
            if kept is not None and p.grad is not None and id(p.grad) == kept[1] and p.grad._version > kept[2]:
                stale += 1
        if stale and self.step_backwards:
            self.observe(MISSING_ZERO_GRAD, self.step_backwards[-1][0], f"this backward() added to the gradients the last "
                         f"optimizer step had already applied ({stale} parameter(s) never cleared): they add up "
                         "step after step; call optimizer.zero_grad() each iteration (found by the dry run)")
        batches = {b for _, _, b in self.step_backwards}
        if len(self.step_backwards) > 1 and len(batches) > 1 and not any(s for _, s, _ in self.step_backwards):
            site = self.step_backwards[0][0]
            self.observe(ACCUMULATION_WITHOUT_SCALING, site, f"one optimizer step over the backwards of {len(batches)} batches, and "
                         "no loss was divided by the number of batches accumulated: the gradient is that many "
                         "times too large (found by the dry run)")
        self.step_backwards = []
        self.keeps_graph(sys._getframe(2))

    def step_post(self, opt: Any) -> None:
        params = [p for g in opt.param_groups for p in g["params"]]
        self.got_grad.update(id(p) for p in params if p.grad is not None)  # a step(closure) ran its backward
        # the trained models' parameters as they were trained (a trainer may move them after)
        self.in_optimizer = {id(p) for o in self.live_optimizers() for g in o.param_groups for p in g["params"]}
        for model in self.trained.values():
            self.trained_params[id(model)] = [(n, id(p)) for n, p in model.named_parameters() if p.requires_grad]
        self.steps += 1
        self.pass_steps[self.current_pass] = self.pass_steps.get(self.current_pass, 0) + 1
        for window in self.windows.values():
            window.steps += 1
        self.lr.append([float(g.get("lr", 0.0)) if not hasattr(g.get("lr"), "item") else 0.0
                        for o in self.live_optimizers() for g in o.param_groups[:1]])
        for g in opt.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    self.snapshot[id(p)] = (weakref.ref(p), id(p.grad), p.grad._version)

    def live_optimizers(self) -> list[Any]:
        return list(self.optimizers.values())

    # ------------------------------------------------------------------ TL002
    def keeps_graph(self, frame: Any) -> None:
        """At a step: what keeps an earlier step's graph, among the names of the stepping frame
        (one level into the objects they hold: ``self.losses``, ``module.outputs``) and the
        attributes of the trained models (a Lightning module's list, stepped by the trainer's
        loop): a tensor whose graph reaches an earlier loss, or a container that grows with
        tensors that have a graph."""
        if self.steps < 1:
            return
        torch = self.torch
        named: list[tuple[str, Any, tuple[str, int] | None, list[int]]] = []
        seen: set[int] = set()
        f = frame
        while f is not None and not self.is_project(f.f_code.co_filename):
            f = f.f_back
        if f is not None:
            site, region = (os.path.realpath(f.f_code.co_filename), f.f_lineno), [f.f_code.co_firstlineno, f.f_lineno]
            for name, value in list(f.f_locals.items()):
                named.append((name, value, site, region))
                attributes = None if isinstance(value, _NOT_OWNERS + (torch.Tensor,)) else getattr(value, "__dict__", None)
                if isinstance(attributes, dict) and not name.startswith("__"):
                    seen.add(id(value))
                    named.extend((f"{name}.{k}", v, site, region) for k, v in list(attributes.items())[:256]
                                 if isinstance(v, (torch.Tensor, list, dict)))
        for model in self.trained.values():
            source = _class_file(type(model))
            if id(model) in seen or source is None or not self.is_project(source[0]):
                continue
            named.extend((f"{type(model).__name__}.{k}", v, source, [source[1], source[1]])
                         for k, v in list(vars(model).items())[:256]
                         if not k.startswith("_") and isinstance(v, (torch.Tensor, list, dict)))
        losses = {id(fn) for _, fn in self.old_losses}
        now = self.batch()
        old = {id(fn) for batch, fn in self.old_losses if batch < now}  # losses of earlier iterations
        for name, value, site, region in named:
            if isinstance(value, torch.Tensor):
                fn = value.grad_fn
                before = self.accumulators.get(name)
                self.accumulators[name] = id(fn)
                if fn is None or id(fn) in losses or before is None or before == id(fn):
                    continue  # a loss itself, or not rebuilt since the last step: not an accumulator
                if old and _reaches(fn, old):
                    self.observe(LOSS_KEPT_WITH_GRAPH, site, f"`{name}` keeps the autograd graph of every step: it was "
                                 "built from an earlier step's loss; accumulate loss.item() or loss.detach() "
                                 "(found by the dry run)", name=name, region=region)
            elif isinstance(value, (list, dict)) and value:
                items = list(value.values()) if isinstance(value, dict) else value
                count = sum(1 for v in items[-64:] if isinstance(v, torch.Tensor) and v.grad_fn is not None)
                before = self.kept.get(name)
                self.kept[name] = count
                if before is not None and count > before:
                    self.observe(LOSS_KEPT_WITH_GRAPH, site, f"`{name}` grows by tensors with their autograd graph at every "
                                 "step: each step's graph stays in memory; store loss.item() or .detach() "
                                 "(found by the dry run)", name=name, region=region)

    # ------------------------------------------------------------------ schedulers, scalers, clipping
    def scheduler_step(self, scheduler: Any, *args: Any, **kwargs: Any) -> None:
        if self.called_from_torch():
            return
        site = self.where(sys._getframe(2))
        kind = type(scheduler).__name__
        if self.steps == 0 and id(scheduler) not in self.scheduler_seen:
            self.observe(SCHEDULER_STEP_GRANULARITY, site, f"{kind}.step() ran before the first optimizer.step(): the first "
                         "learning rate of the schedule is skipped; step the scheduler after the optimizer "
                         "(found by the dry run)")
        self.scheduler_seen.add(id(scheduler))
        for window in self.windows.values():
            entry = window.schedulers.setdefault(id(scheduler), [weakref.ref(scheduler), 0, site])
            entry[1] += 1

    def close_window(self, key: int) -> None:
        window = self.windows.pop(key, None)
        if window is None or window.steps < 2:
            return
        for ref, count, site in window.schedulers.values():
            scheduler = ref()
            kind = type(scheduler).__name__ if scheduler is not None else ""
            rates = ", ".join(f"{r[0]:.3g}" for r in self.lr[-window.steps - 1:] if r)
            if kind in PER_BATCH and count == 1:
                self.observe(SCHEDULER_STEP_GRANULARITY, site, f"{kind} is a per-batch schedule but was stepped once in an epoch of "
                             f"{window.steps} optimizer steps (learning rate per step: {rates}): it runs "
                             "len(loader) times too slowly; step it after every optimizer.step() "
                             "(found by the dry run)")
            elif kind in PER_EPOCH and count >= window.steps:
                self.observe(SCHEDULER_STEP_GRANULARITY, site, f"{kind} is a per-epoch schedule but was stepped after every one of "
                             f"{window.steps} optimizer steps (learning rate per step: {rates}): it decays "
                             "len(loader) times too fast; step it once per epoch (found by the dry run)")

    def scaled(self, scaler: Any, result: Any, outputs: Any = None, *args: Any, **kwargs: Any) -> None:
        self.scaling[id(scaler)] = set()
        if isinstance(result, self.torch.Tensor) and isinstance(outputs, self.torch.Tensor):
            self.scaled_from = {id(result): outputs}

    def unscaled(self, scaler: Any, optimizer: Any = None, *args: Any, **kwargs: Any) -> None:
        self.scaling.setdefault(id(scaler), set()).add(id(optimizer))

    def scaler_updated(self, scaler: Any, *args: Any, **kwargs: Any) -> None:
        self.scaling.pop(id(scaler), None)

    def clipped(self, parameters: Any = None, *args: Any, **kwargs: Any) -> None:
        if not self.scaling:
            return
        torch = self.torch
        params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters or [])
        ids = {id(p) for p in params}
        owners = {id(o) for o in self.live_optimizers()
                  if any(id(p) in ids for g in o.param_groups for p in g["params"])}
        if any(owners - unscaled for unscaled in self.scaling.values()):
            self.observe(AMP_UNSCALED_CLIPPING, self.where(sys._getframe(2)), "gradients were clipped while the GradScaler's "
                         "scale was still in them (no scaler.unscale_(optimizer) before clipping): the clip "
                         "threshold applies to scaled gradients (found by the dry run)")

    def sampler_pass(self, sampler: Any) -> None:
        epoch = getattr(sampler, "epoch", 0)
        before = self.sampler_epochs.get(id(sampler))
        self.sampler_epochs[id(sampler)] = epoch
        if before is not None and before == epoch:
            self.observe(SAMPLER_EPOCH_NOT_SET, self.where(sys._getframe(2)), "the DistributedSampler was read again with "
                         f"the same epoch ({epoch}): every epoch sees the same order; call "
                         "sampler.set_epoch(epoch) each epoch (found by the dry run)")

    # ------------------------------------------------------------------ losses and in-place ops
    def loss_call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if name not in LOSSES:
            return None
        found = check_loss_call(self.torch, name, args, kwargs)
        if found is not None:
            a, b = found["input"], found["target"]
            problem = {"shape": "shapes differ", "dtype": "dtypes differ",
                       "broadcast": f"they broadcast to {found.get('broadcast')}, a wrong loss"}[found["problem"]]
            expected = found.get("expected")
            wanted = f"; it takes a target of {expected['shape']} ({expected['dtype']})" if expected else ""
            self.observe(LOSS_TARGET_MISMATCH, self.where(sys._getframe(2)),
                         f"{name} got an output of {a['shape']} ({a['dtype']}) and a target of {b['shape']} "
                         f"({b['dtype']}): {problem}{wanted} (found by the dry run)")
        return None

    def inplace(self, func: Any, kwargs: dict[str, Any], tensor: Any) -> None:
        if len(self.inplace_sites) > 256:
            del self.inplace_sites[:128]
        self.inplace_sites.append((spelled(func, kwargs), self.where(sys._getframe(2)), list(tensor.shape)))

    # ------------------------------------------------------------------ data
    def batches(self, loader: Any, source: Iterable[Any]) -> Iterator[Any]:
        key = id(loader)
        if self.loader_passes.get(key, 0) >= self.max_passes or self.passes >= 8 * self.max_passes:
            raise StopRun("passes")  # this loader trained max_passes epochs (evaluation passes are free)
        self.judge(self.pending)  # what ran before this pass and no backward reached
        self.pending = []
        self.passes += 1
        self.current_pass = self.passes
        self.pass_steps[self.passes] = 0
        self.close_window(key)
        self.windows[key] = Window()
        steps0, backwards0, yielded, stepped = self.steps, self.backwards, 0, 0
        try:
            for batch in source:
                self.batch_index += 1
                self.batches_total += 1
                steps = self.steps
                yield batch
                yielded += 1
                stepped += self.steps > steps  # this batch ended in an optimizer step
                if stepped >= self.max_steps or (self.backwards == backwards0 and yielded >= self.eval_batches) \
                        or yielded >= MAX_BATCHES_PER_PASS:
                    break
        finally:  # the pass is over (its end, the bound, or the script's own break)
            self.current_pass = 0
            if self.steps == steps0:  # no step in this pass: not a training epoch
                self.windows.pop(key, None)
            else:
                self.loader_passes[key] = self.loader_passes.get(key, 0) + 1

    # ------------------------------------------------------------------ the end
    def failed(self, exc: BaseException) -> Observation | None:
        """The observation an exception out of the script stands for, or None."""
        self.pending = []  # the calls cut short by the exception were no evaluation
        site = _innermost(self, exc)
        text = str(exc).split("\n", 1)[0][:300]
        if isinstance(exc, DeviceMismatch):
            info = exc.info
            created = info.get("created")
            place = (os.path.realpath(created["file"]), created["line"]) if created and self.is_project(
                created.get("file", "")) else site
            by = f" by {info.get('created_by')}" if info.get("created_by") else ""
            self.observe(DEVICE_MISMATCH, place, f"a CPU tensor {info.get('shape')} made here{by} meets the model's CUDA "
                         f"tensors in `{info.get('op')}`"
                         + (f" (line {site[1]})" if site and place != site else "")
                         + ": on a GPU this fails (Expected all tensors to be on the same device); create it "
                         "with device= (found by the dry run)")
            return self.found.get((DEVICE_MISMATCH, *place, "")) if place else None
        if INPLACE_ERROR in text:
            shape = _shape_in(str(exc))
            where_ = next((s for op, s, shp in reversed(self.inplace_sites) if s and (shape is None or shp == shape)),
                          None)
            op = next((op for op, s, shp in reversed(self.inplace_sites) if s == where_), "an in-place op")
            place = where_ or site
            self.observe(INPLACE_BREAKS_BACKWARD, place, f"`{op}` modified a tensor autograd had saved for backward, so "
                         f"backward fails: {text[:200]} (found by the dry run)")
            return self.found.get((INPLACE_BREAKS_BACKWARD, *place, "")) if place else None
        if ONE_VALUE in text:
            place = self.last_site or site
            self.observe(BATCH_NORM_ONE_VALUE, place, f"batch norm in training got one value per channel (a batch of 1): "
                         f"{text} — drop the last incomplete batch (drop_last=True) or use a batch of 2 or more "
                         "(found by the dry run)")
            return self.found.get((BATCH_NORM_ONE_VALUE, *place, "")) if place else None
        if ZERO_DIM_INDEX in text:  # loss.data[0]: an error since PyTorch 0.5
            self.observe(LEGACY_AUTOGRAD_API, site, f"{type(exc).__name__}: {text} (found by the dry run)")
            return self.found.get((LEGACY_AUTOGRAD_API, *site, "")) if site else None
        said = next((o for o in self.found.values() if o["code"] == LOSS_TARGET_MISMATCH and site and o["line"] == site[1]), None)
        if said is not None:
            return said  # the loss mismatch already said it
        if any(word in text for word in _ENVIRONMENT):
            return None  # what this machine lacks (a driver, a CUDA build): no finding in the script
        if not isinstance(exc, (RuntimeError, ValueError, IndexError, AssertionError)):
            return None  # a NameError, an AttributeError of an old API: the script's own failure
        if looks_like_shapes(exc) or self.fake_gpu and "device" in text and "meta" in text:
            message = text.replace("meta", "cuda") if "device" in text else text
            code = DEVICE_MISMATCH if self.fake_gpu and "device" in text and "meta" in text else SHAPE_MISMATCH
            self.observe(code, site, f"{type(exc).__name__}: {message} (found by the dry run)")
            return self.found.get((code, *site, "")) if site else None
        return None

    def finish(self) -> list[Observation]:
        self.judge(self.pending)
        self.pending = []
        self.parameters_never_trained()
        return sorted(self.found.values(), key=lambda o: (o["file"], o["line"], o["code"]))

    def parameters_never_trained(self) -> None:
        """TL005 / TL021 for the layers of each trained model: no gradient at any step, or in
        no optimizer; only for models some of whose parameters were trained."""
        if not self.steps:
            return
        in_optimizer = self.in_optimizer
        for model in self.trained.values():
            named = self.trained_params.get(id(model), [])
            if not any(p in in_optimizer for _, p in named):
                continue
            for code, missing in ((OPTIMIZER_MISSES_PARAMETERS, {n for n, p in named if p not in in_optimizer}),
                                  (UNUSED_LAYER, {n for n, p in named if p in in_optimizer
                                                  and p not in self.got_grad})):
                for layer in _whole_layers(model, missing):
                    parent, _, attr = layer.rpartition(".")
                    owner = model.get_submodule(parent) if parent else model
                    site = self.made_at.get((id(owner), attr))
                    kind = type(model.get_submodule(layer)).__name__
                    if code == OPTIMIZER_MISSES_PARAMETERS:
                        message = (f"`{layer}` ({kind}) of {type(model).__name__} is in no optimizer: it was put "
                                   "there after the optimizer was built over model.parameters(), so it is never "
                                   "trained (found by the dry run)")
                    else:
                        message = (f"`{layer}` ({kind}) of {type(model).__name__} never got a gradient in "
                                   f"{self.steps} training steps: forward never uses it (found by the dry run)")
                    self.observe(code, site, message, name=layer)

    def summary(self) -> dict[str, Any]:
        return {"steps": self.steps, "backwards": self.backwards, "passes": self.passes,
                "batches": self.batches_total, "forwards": self.forwards, "lr": self.lr[:32],
                **({"peak_bytes": self.peak_bytes()} if self.memory is not None else {})}

    def live_bytes(self) -> int:
        return int(self.memory.live) if self.memory is not None else 0

    def peak_bytes(self) -> int:
        return int(self.memory.peak) if self.memory is not None else 0


def _class_file(cls: type) -> tuple[str, int] | None:
    """Where a class is defined: (its file, its first line)."""
    import inspect

    try:
        return os.path.realpath(inspect.getsourcefile(cls) or ""), inspect.getsourcelines(cls)[1]
    except (TypeError, OSError):
        return None


def _grad_fns(torch: Any, output: Any, depth: int = 0) -> list[Any]:
    """The grad_fns of the tensors in a model's output (one level into tuples, dicts, dataclasses)."""
    if isinstance(output, torch.Tensor):
        return [output.grad_fn] if output.grad_fn is not None else []
    if depth > 2:
        return []
    if isinstance(output, (list, tuple)):
        items = list(output[:8])
    elif isinstance(output, dict):
        items = list(output.values())[:8]
    elif isinstance(getattr(output, "__dict__", None), dict):
        items = list(vars(output).values())[:8]
    else:
        return []
    return [fn for item in items for fn in _grad_fns(torch, item, depth + 1)]


def _graph_nodes(fn: Any, limit: int) -> Iterator[int]:
    """The ids of the nodes of the autograd graph under ``fn``, each once, at most ``limit``."""
    seen: set[int] = set()
    stack = [fn]
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield id(node)
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)


def _graph_ids(fn: Any, limit: int = 200000) -> set[int]:
    """The ids of the nodes of the autograd graph under ``fn``."""
    return set(_graph_nodes(fn, limit))


def _reaches(fn: Any, targets: set[int], limit: int = 20000) -> bool:
    """Whether the autograd graph under ``fn`` holds one of ``targets`` (ids of grad_fns)."""
    return any(node in targets for node in _graph_nodes(fn, limit))


def _whole_layers(model: Any, names: set[str]) -> list[str]:
    """The smallest submodules all of whose trainable parameters are in ``names``."""
    if not names:
        return []
    layers = []
    for path, module in model.named_modules():
        if not path:
            continue
        own = [f"{path}.{n}" for n, p in module.named_parameters() if p.requires_grad]
        if own and all(n in names for n in own) and not any(path.startswith(done + ".") for done in layers):
            layers.append(path)
    return layers


def _innermost(observer: Observer, exc: BaseException) -> tuple[str, int] | None:
    tb, found = exc.__traceback__, None
    while tb is not None:
        if observer.is_project(tb.tb_frame.f_code.co_filename):
            found = (os.path.realpath(tb.tb_frame.f_code.co_filename), tb.tb_lineno)
        tb = tb.tb_next
    return found


_SHAPE = re.compile(r"\[torch\.\w+ \[([\d, ]*)\]\]")


def _shape_in(text: str) -> list[int] | None:
    m = _SHAPE.search(text)
    if m is None:
        return None
    return [int(x) for x in m.group(1).split(",") if x.strip()]
