"""The trace: forward hooks on every module record the calls, shapes, activation sizes,
non-finite outputs and which parameters were used."""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

from torchlint import shapes
from torchlint.trace.child.devices import DeviceWatch, flat_tensors
from torchlint.trace.child.failure import exception_failure
from torchlint.trace.child.failure import current_user_frame, op_name
from torchlint.trace.child.gradients import BackwardOrder, Cuts, StepLoss, make_target, take_step
from torchlint.trace.child.inplace import INPLACE_ERROR, find_inplace
from torchlint.trace.child.inputs import make_inputs
from torchlint.trace.child.losses import LOSSES, check_loss_call
from torchlint.trace.child.step import backward_from_outputs
from torchlint.trace.child.libraries import meta_as_fake
from torchlint.trace.child.values import describe, source_file, tensors_in
from torchlint.trace.records import CallRow, Instance, NonFinite, Traced, UnusedModule

MAX_ROWS = 20000
MAX_HISTORY = 4096
MAX_NONFINITE = 50
MAX_LOSSES = 20


def trace_once(torch: Any, model: Any, specs: list[shapes.InputSpec], device: str,
               high: int | None, modes: list[str], rows: bool, loss: StepLoss | None = None) -> Traced:
    """Run the forward pass once per mode (train, then eval for ``check --trace``), hooked;
    with ``loss``, the training-mode pass runs with gradients and is followed by backward.
    What the first mode recorded, and its failure if it failed.

    The forward runs without a default device, as in training: a tensor ``forward`` creates
    without ``device=`` is on the CPU, and meeting the model's tensors fails (TL101)."""
    tracer = Tracer(torch, model, device, record_rows=rows, input_shapes=[list(s.shape) for s in specs])
    tracer.install()
    failure = None
    gradients = None
    was_training = model.training
    try:
        for mode_index, mode in enumerate(modes):
            model.train(mode == "train")
            step = loss is not None and mode_index == 0
            tracer.recording = rows and mode_index == 0
            tracer.start_pass(step)
            if device == "cuda":
                torch.cuda.reset_peak_memory_stats()
            inputs = make_inputs(torch, specs, device, high)
            try:
                if step:
                    model.zero_grad(set_to_none=True)
                with (torch.enable_grad() if step else torch.no_grad()), tracer.op_mode(), meta_as_fake(torch):
                    output = model(*inputs)
                if mode_index == 0:
                    tracer.final_output = describe(torch, output)
                    tracer.check_final(output)
                if step:
                    assert loss is not None
                    gradients = take_step(torch, model, output, loss, tracer)
                if device == "cuda":
                    torch.cuda.synchronize()
            except BaseException as exc:  # noqa: BLE001
                if mode_index == 0:
                    failure = exception_failure("forward", exc, tracer, model, device=device)
                    failure.train = mode == "train"
                break
    finally:
        tracer.remove()
        model.train(was_training)
    if gradients is not None and gradients.error and INPLACE_ERROR in gradients.error and loss is not None:
        gradients.inplace = _find_inplace(torch, model, specs, device, high, loss, gradients.error)
    out = tracer.summary()
    out.failure = failure
    out.gradients = gradients
    return out


def _find_inplace(torch: Any, model: Any, specs: list[shapes.InputSpec], device: str, high: int | None,
                  loss: StepLoss, error: str) -> Any:
    """The step again, unhooked, watched by :func:`.inplace.find_inplace` (TL104)."""
    was_training = model.training

    def run_step() -> None:
        model.zero_grad(set_to_none=True)
        with torch.enable_grad():
            output = model(*make_inputs(torch, specs, device, high))
            backward_from_outputs(output, loss.spec, make_target(torch, loss, output, device))

    model.train(True)
    try:
        return find_inplace(torch, run_step, error)
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)


class Tracer:
    def __init__(self, torch: Any, model: Any, device: str, record_rows: bool = True,
                 input_shapes: list[list[int]] | None = None):
        self.torch = torch
        self.model = model
        self.device = device
        self.record_rows = record_rows
        self.recording = record_rows
        self.names = {}
        for name, mod in model.named_modules():
            self.names.setdefault(id(mod), name)
        self.leaves = {id(m) for m in model.modules() if next(m.children(), None) is None}
        self.rows: list[CallRow] = []
        self.truncated = False
        self.stack: list[tuple[int, CallRow | None, Any]] = []
        self.called: set[int] = set()
        self.history: list[tuple[str, str, list[int]]] = []
        self.act_bytes = 0
        self._act_seen: dict[int, Any] = {}
        self.nonfinite: list[NonFinite] = []
        self.final_output: Any = None
        self.handles: list[Any] = []
        self.param_ids = {id(p) for p in model.parameters()} | {id(b) for b in model.buffers()}
        self.params_used: set[int] = set()
        self._counted: set[int] = set()
        self.in_hook = False  # our own tensor calls must not count as parameter use
        self.first_layer: str | None = None  # the first built-in layer with parameters called
        self.input_shapes = tuple(input_shapes or ())  # the model's inputs
        self.devices = DeviceWatch(torch) if device == "meta" else None
        self.cuts: Cuts | None = None  # graph cuts, in the pass followed by backward
        self.order: BackwardOrder | None = None  # NaN/Inf output gradients (cpu/cuda step)
        self.losses: list[Any] = []  # losses whose two sides disagree (TL102)
        self.in_step = False  # computing the training step's loss (--loss), not forward

    def start_pass(self, step: bool) -> None:
        self.cuts = Cuts(self.torch) if step else None
        self.order = BackwardOrder(self.torch) if step and self.device != "meta" else None

    # hooks -----------------------------------------------------------------
    def install(self) -> None:
        for mod in self.model.modules():
            self.handles.append(mod.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(mod.register_forward_hook(self._post, with_kwargs=True))

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles.clear()

    def _pre(self, mod: Any, args: Any, kwargs: Any) -> None:
        self.in_hook = True
        try:
            key = id(mod)
            self.called.add(key)
            if self.first_layer is None and type(mod).__module__.startswith("torch.nn") \
                    and next(iter(mod._parameters.values()), None) is not None:
                self.first_layer = self.names.get(key)
            row = None
            if self.recording:
                if len(self.rows) < MAX_ROWS:
                    row = {"name": self.names.get(key, "?"), "type": type(mod).__name__,
                           "depth": len(self.stack),
                           "inputs": self._describe_call(args, kwargs)}
                    if key not in self._counted:
                        self._counted.add(key)
                        row["params"] = int(sum(p.numel() for p in mod.parameters()))
                    self.rows.append(row)
                else:
                    self.truncated = True
            self.stack.append((key, row, args if self.device != "meta" else None))
        except Exception:  # noqa: BLE001 - a hook must never break the user's forward
            pass
        finally:
            self.in_hook = False
        return None

    def _describe_call(self, args: Any, kwargs: Any) -> list[Any]:
        out = [describe(self.torch, a) for a in args]
        for k, v in (kwargs or {}).items():
            d = describe(self.torch, v)
            out.append({"name": k, "value": d})
        return out

    def _post(self, mod: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.in_hook = True
        try:
            key = id(mod)
            entry = None
            while self.stack:
                entry = self.stack.pop()
                if entry[0] == key:
                    break
            row = entry[1] if entry and entry[0] == key else None
            if row is not None:
                row["outputs"] = describe(self.torch, output)
            tensors = tensors_in(self.torch, output)
            name = self.names.get(key, "?")
            for t in tensors:
                if len(self.history) < MAX_HISTORY:
                    self.history.append((name, type(mod).__name__, [int(s) for s in t.shape]))
            if key in self.leaves and self.recording:
                for t in tensors:
                    ref = self._act_seen.get(id(t))
                    if ref is not None and ref() is t:
                        continue
                    try:
                        self._act_seen[id(t)] = weakref.ref(t)
                    except TypeError:  # pragma: no cover
                        pass
                    self.act_bytes += t.numel() * t.element_size()
            if self.device != "meta" and len(self.nonfinite) < MAX_NONFINITE:
                self._check_finite(name, mod, tensors, args)
            if self.order is not None:
                self.order.watch(name, tensors)
        except Exception:  # noqa: BLE001
            pass
        finally:
            self.in_hook = False
        return None

    def _check_finite(self, name: str, mod: Any, tensors: list[Any], args: Any) -> None:
        torch = self.torch
        bad = [t for t in tensors if t.is_floating_point() and not bool(torch.isfinite(t).all())]
        if not bad:
            return
        inputs = [t for t in tensors_in(torch, args) if t.is_floating_point()]
        self.nonfinite.append({
            "name": name, "type": type(mod).__name__,
            "nan": any(bool(torch.isnan(t).any()) for t in bad),
            "inf": any(bool(torch.isinf(t).any()) for t in bad),
            "inputs_finite": all(bool(torch.isfinite(t).all()) for t in inputs),
        })

    def check_final(self, output: Any) -> None:
        if self.device == "meta" or self.nonfinite:
            return
        torch = self.torch
        bad = [t for t in tensors_in(torch, output) if t.is_floating_point()
               and not bool(torch.isfinite(t).all())]
        if bad:
            self.nonfinite.append({"name": "", "type": type(self.model).__name__ + " (output)",
                                   "nan": any(bool(torch.isnan(t).any()) for t in bad),
                                   "inf": any(bool(torch.isinf(t).any()) for t in bad),
                                   "inputs_finite": True})

    # every op of the forward pass: parameter use (a layer whose weights feed an op is in use
    # even if never called), device mismatch on meta, graph cuts before a backward ---------
    @contextlib.contextmanager
    def op_mode(self):  # type: ignore[no-untyped-def]
        from torch.overrides import TorchFunctionMode

        tracer = self

        class Ops(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                kwargs = kwargs or {}
                if tracer.in_hook:
                    return func(*args, **kwargs)
                tracer.check_loss(func, args, kwargs)
                tensors = tracer.before_op(func, args, kwargs)
                result = func(*args, **kwargs)
                tracer.after_op(func, tensors, result)
                return result

        with Ops():
            yield

    @contextlib.contextmanager
    def loss_mode(self):  # type: ignore[no-untyped-def]
        """The training step's loss: only the loss check (TL102) watches its ops."""
        from torch.overrides import TorchFunctionMode

        tracer = self

        class Losses(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                kwargs = kwargs or {}
                tracer.check_loss(func, args, kwargs)
                return func(*args, **kwargs)

        self.in_step = True
        try:
            with Losses():
                yield
        finally:
            self.in_step = False

    def check_loss(self, func: Any, args: Any, kwargs: Any) -> None:
        """Note a loss called with an output and a target that disagree (TL102)."""
        if len(self.losses) >= MAX_LOSSES or getattr(func, "__name__", None) not in LOSSES:
            return
        try:
            found = check_loss_call(self.torch, op_name(func), tuple(args), kwargs)
            if found is None:
                return
            frame = current_user_frame()
            if frame is not None:
                found["frame"] = frame
            if self.in_step:
                found["step"] = True
            key = (found["loss"], frame["file"] if frame else None, frame["line"] if frame else None)
            if all((f["loss"], f.get("frame", {}).get("file"), f.get("frame", {}).get("line")) != key
                   for f in self.losses):
                self.losses.append(found)
        except Exception:  # noqa: BLE001 - a check must never break the user's forward
            pass

    def before_op(self, func: Any, args: Any, kwargs: Any) -> list[Any]:
        """Record parameter use; raise ``DeviceMismatch`` on meta (see :mod:`.devices`)."""
        try:
            tensors = flat_tensors(self.torch, args, kwargs)
            for t in tensors:
                if id(t) in self.param_ids:
                    self.params_used.add(id(t))
        except Exception:  # noqa: BLE001 - a hook must never break the user's forward
            return []
        if self.devices is not None:
            self.devices.check(func, tensors)
        return tensors

    def after_op(self, func: Any, tensors: list[Any], result: Any) -> None:
        try:
            if self.devices is not None:
                self.devices.note(func, tensors, tensors_in(self.torch, result))
            if self.cuts is not None:
                self.cuts.note(func, tensors, result)
        except Exception:  # noqa: BLE001
            pass

    # results -----------------------------------------------------------------
    def used(self, mod: Any) -> bool:
        if id(mod) in self.called:
            return True
        for p in mod.parameters():
            if id(p) in self.params_used:
                return True
        for b in mod.buffers():
            if id(b) in self.params_used:
                return True
        return any(self.used(c) for c in mod.children())

    def summary(self) -> Traced:
        unused: list[UnusedModule] = []
        used_cache: dict[int, bool] = {}

        def is_used(m: Any) -> bool:
            if id(m) not in used_cache:
                used_cache[id(m)] = self.used(m)
            return used_cache[id(m)]

        def walk(prefix: str, mod: Any) -> None:
            for child_name, child in mod.named_children():
                qual = f"{prefix}.{child_name}" if prefix else child_name
                if not is_used(child):
                    unused.append({"name": qual, "type": type(child).__name__,
                                   "params": int(sum(p.numel() for p in child.parameters()))})
                else:
                    walk(qual, child)

        walk("", self.model)
        instances: list[Instance] = []
        for name, mod in self.model.named_modules():
            cls = type(mod)
            if cls.__module__.startswith("torch."):
                continue
            attrs = {n: is_used(c) for n, c in mod.named_children()}
            for pname, p in list(mod.named_parameters(recurse=False)) + list(mod.named_buffers(recurse=False)):
                attrs.setdefault(pname, id(p) in self.params_used)
            instances.append({"name": name, "class": cls.__qualname__, "file": source_file(cls),
                              "attrs": attrs})
        return Traced(calls=self.rows, calls_truncated=self.truncated, unused=unused,
                      instances=instances, activation_bytes=int(self.act_bytes),
                      nonfinite=self.nonfinite, model_output=self.final_output,
                      first_layer=self.first_layer, losses=self.losses)

