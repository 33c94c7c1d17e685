"""Every process-wide change the dry run of a script makes (``torchlint run``), in one place.

The dry run executes the user's script in the trace child (a process of its own, behind the
supervisor).  For the script to run as it would on a GPU, a few steps only, without touching
the user's files or the network, the child changes these, all installed by :class:`Fence` on
entry and restored on exit (nothing else in torchlint patches anything at run time):

=======================  ===================================================================
``torch.cuda``           ``is_available()`` is True, one device, its queries answer; "cuda"
                         tensors are meta tensors (:class:`FakeCuda`, a function mode); with
                         ``--run-device meta`` every tensor is (the default device)
``DataLoader``           no worker processes or pinned memory; each pass yields a few batches
                         (:meth:`Observer.batches`), the same first sample with
                         ``--synthetic-data``
``torch.optim``          step hooks (global, public), ``zero_grad``, schedulers' ``step``
``GradScaler``           ``scale``/``unscale_``/``update`` noted; ``clip_grad_*`` noted
``nn.Module``            global forward and registration hooks (public), ``zero_grad``
files                    ``open``/``os.open`` for writing, ``os.makedirs``/``mkdir``/``remove``
                         /``rename``/``replace``/``rmdir``, ``shutil.rmtree``, ``torch.save``:
                         a path outside the run's temporary directory is mapped into it
network                  ``socket.connect``/``create_connection``/``getaddrinfo`` refuse
``torch.compile``        returns the model (or function) as it is
=======================  ===================================================================

This is containment of accidents, not a sandbox: C code (a native library writing a file)
passes by it, and the script runs with the user's privileges.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import shutil
import socket
from typing import Any, Callable

from torchlint.trace.child import synthetic
from torchlint.trace.child.fakecuda import LegacyCudaType, fake_cuda
from torchlint.trace.child.memory import as_on_cuda, fused_sdpa, tracking_live
from torchlint.trace.child.observe import Observer

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Blocked(OSError):
    pass


class Files:
    """Paths outside the run's temporary directory, mapped into it for writing (and for
    reading back what the run wrote)."""

    def __init__(self, workdir: str):
        self.workdir = os.path.realpath(workdir)
        self.root = os.path.join(self.workdir, "files")
        self.written: dict[str, str] = {}

    def inside(self, path: str) -> bool:
        return path == self.workdir or path.startswith(self.workdir + os.sep)

    def mapped(self, path: Any, create: bool = True) -> Any:
        """Where a write to ``path`` goes: itself inside the temporary directory, else a copy
        of its absolute path under it."""
        if not isinstance(path, (str, bytes, os.PathLike)):
            return path  # a file descriptor
        text = os.fsdecode(os.fspath(path))
        full = os.path.abspath(text)
        if self.inside(os.path.realpath(os.path.dirname(full)) + os.sep + os.path.basename(full)):
            return path
        target = os.path.join(self.root, full.lstrip(os.sep))
        if create:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            self.written[full] = target
        return target

    def read(self, path: Any) -> Any:
        if not isinstance(path, (str, bytes, os.PathLike)):
            return path
        full = os.path.abspath(os.fsdecode(os.fspath(path)))
        return self.written.get(full, path)


def _writes(mode: str) -> bool:
    return any(c in mode for c in "wax+")


class Fence:
    """Install every change on entry, undo all of them on exit (in reverse order)."""

    def __init__(self, torch: Any, observer: Observer, workdir: str, synthetic_data: bool, device: str = "fake-cuda"):
        self.torch = torch
        self.device = device  # fake-cuda, meta (everything), cpu (nothing faked)
        self.fake_cuda = device != "cpu"
        self.observer = observer
        self.files = Files(workdir)
        self.synthetic_data = synthetic_data
        self._undo: list[Callable[[], None]] = []
        self.blocked: list[str] = []

    # ------------------------------------------------------------------ plumbing
    def patch(self, owner: Any, name: str, value: Any) -> None:
        old = owner.__dict__[name] if isinstance(owner, type) and name in owner.__dict__ else getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, old))

    def handle(self, handle: Any) -> None:
        self._undo.append(handle.remove)

    def __enter__(self) -> "Fence":
        try:
            if self.fake_cuda:
                self._cuda()
            self._data()
            self._optim()
            self._modules()
            self._files()
            self._network()
            self._compile()
            if self.synthetic_data:
                synthetic.install(self)
            if self.device == "meta":
                self._on_meta()
            if self.fake_cuda:
                # optimizers choose their implementation as on a GPU (fused=True runs on meta);
                # attention runs a fused kernel's meta implementation, as a GPU would (FakeCuda)
                implementations = as_on_cuda(self.torch)
                implementations.__enter__()
                self._undo.append(lambda: implementations.__exit__(None, None, None))
                # the fake GPU's memory: every meta tensor from its op to its free
                live = tracking_live(self.torch, device="meta")
                self.observer.memory = live.__enter__()
                self._undo.append(lambda: live.__exit__(None, None, None))
            # last, so that it is the mode the script's own calls reach first
            mode = fake_cuda(self.torch, self.observer, fake=self.fake_cuda, everything=self.device == "meta",
                             attention=fused_sdpa(self.torch) if self.fake_cuda else None)
            mode.__enter__()
            self._undo.append(lambda: mode.__exit__(None, None, None))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            try:
                self._undo.pop()()
            except Exception:  # noqa: BLE001 - restore what can be restored
                pass

    # ------------------------------------------------------------------ torch.cuda
    def _cuda(self) -> None:
        cuda = self.torch.cuda
        props = _Properties()
        answers: dict[str, Any] = {
            "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
            "set_device": lambda *a, **k: None, "synchronize": lambda *a, **k: None,
            "empty_cache": lambda: None, "ipc_collect": lambda: None, "is_initialized": lambda: True,
            "get_device_name": lambda *a, **k: props.name,
            "get_device_capability": lambda *a, **k: (props.major, props.minor),
            "get_device_properties": lambda *a, **k: props, "is_bf16_supported": lambda *a, **k: True,
            "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None, "seed": lambda: None,
            "seed_all": lambda: None,
            "memory_allocated": lambda *a, **k: self.observer.live_bytes(),
            "max_memory_allocated": lambda *a, **k: self.observer.peak_bytes(),
            "memory_reserved": lambda *a, **k: self.observer.live_bytes(),
            "max_memory_reserved": lambda *a, **k: self.observer.peak_bytes(),
            "reset_peak_memory_stats": lambda *a, **k: None, "reset_max_memory_allocated": lambda *a, **k: None,
            "mem_get_info": lambda *a, **k: (props.total_memory, props.total_memory),
            "is_current_stream_capturing": lambda: False, "get_rng_state": lambda *a, **k: self.torch.get_rng_state(),
            "set_rng_state": lambda *a, **k: None, "get_rng_state_all": lambda: [self.torch.get_rng_state()],
            "set_rng_state_all": lambda *a, **k: None, "current_stream": lambda *a, **k: _Stream(),
            "default_stream": lambda *a, **k: _Stream(), "stream": lambda *a, **k: contextlib.nullcontext(),
        }
        for name, value in answers.items():
            if hasattr(cuda, name):
                self.patch(cuda, name, value)
        for name, dtype in _LEGACY_TYPES.items():  # Tensor = torch.cuda.FloatTensor; Tensor(64, 1).fill_(1.0)
            if hasattr(cuda, name):
                self.patch(cuda, name, LegacyCudaType(self.torch, name, getattr(self.torch, dtype)))
        accelerator = getattr(self.torch, "accelerator", None)  # torch >= 2.6: the device-generic API
        if accelerator is not None:
            device = self.torch.device("cuda", 0)
            generic = {"is_available": lambda *a, **k: True, "current_accelerator": lambda *a, **k: device,
                       "device_count": lambda: 1, "current_device_index": lambda: 0, "current_device_idx": lambda: 0,
                       "set_device_index": lambda *a, **k: None, "set_device_idx": lambda *a, **k: None,
                       "synchronize": lambda *a, **k: None, "current_stream": lambda *a, **k: _Stream(),
                       "set_stream": lambda *a, **k: None, "empty_cache": lambda *a, **k: None}
            for name, value in generic.items():
                if hasattr(accelerator, name):
                    self.patch(accelerator, name, value)

    def _compile(self) -> None:
        """``torch.compile(model)`` is the model itself: the run checks what the code does, and
        compiling for a fake device would only cost time."""
        def compile_(model: Any = None, *args: Any, **kwargs: Any) -> Any:
            return model if model is not None else (lambda fn: fn)

        self.patch(self.torch, "compile", compile_)

    def _on_meta(self) -> None:
        """``--run-device meta``: every parameter and buffer on meta as it is registered (the
        model is built where the script builds it, then lives on meta); batches and the
        tensors the script's own code makes go there too (:class:`.fakecuda.FakeCuda`)."""
        from torch.nn.modules import module as module_mod

        torch = self.torch

        def parameter(module: Any, name: str, param: Any) -> Any:
            if param is None or param.is_meta:
                return None
            return torch.nn.Parameter(param.to("meta"), requires_grad=param.requires_grad)

        def buffer(module: Any, name: str, value: Any) -> Any:
            return value.to("meta") if value is not None and not value.is_meta else None

        self.handle(module_mod.register_module_parameter_registration_hook(parameter))
        self.handle(module_mod.register_module_buffer_registration_hook(buffer))

    # ------------------------------------------------------------------ data
    def _data(self) -> None:
        from torch.utils.data import DataLoader

        observer, fence = self.observer, self
        init, iterate = DataLoader.__init__, DataLoader.__iter__

        def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
            kwargs["num_workers"] = 0  # no worker processes: the batches come from this process
            kwargs["pin_memory"] = False  # pinning needs a real GPU
            kwargs.pop("persistent_workers", None)
            kwargs.pop("prefetch_factor", None)
            kwargs.pop("pin_memory_device", None)
            kwargs.pop("multiprocessing_context", None)
            if len(args) > 5:  # num_workers given by position (dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)
                args = args[:5]
            init(loader, *args, **kwargs)

        def __iter__(loader: Any) -> Any:
            source = synthetic.first_sample_batches(loader) if fence.synthetic_data else iterate(loader)
            if fence.device == "meta":
                source = (synthetic.on_meta(fence.torch, batch) for batch in source)
            return observer.batches(loader, source)

        self.patch(DataLoader, "__init__", __init__)
        self.patch(DataLoader, "__iter__", __iter__)
        try:
            from torch.utils.data.distributed import DistributedSampler
        except ImportError:  # pragma: no cover
            return
        sampler_iter = DistributedSampler.__iter__

        def sampler__iter__(sampler: Any) -> Any:
            observer.sampler_pass(sampler)
            return sampler_iter(sampler)

        self.patch(DistributedSampler, "__iter__", sampler__iter__)

    # ------------------------------------------------------------------ optimizers, schedulers, scalers
    def _optim(self) -> None:
        torch, observer = self.torch, self.observer
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        self.handle(register_optimizer_step_pre_hook(lambda opt, args, kwargs: observer.step_pre(opt)))
        self.handle(register_optimizer_step_post_hook(lambda opt, args, kwargs: observer.step_post(opt)))
        self._wrap(torch.optim.Optimizer, "__init__", observer.optimizer_made, after=True)
        zero_grad = torch.optim.Optimizer.zero_grad

        def optimizer_zero_grad(opt: Any, *args: Any, **kwargs: Any) -> Any:
            observer.cleared(p for g in opt.param_groups for p in g["params"])
            return zero_grad(opt, *args, **kwargs)

        self.patch(torch.optim.Optimizer, "zero_grad", optimizer_zero_grad)
        schedulers = torch.optim.lr_scheduler
        for cls in {getattr(schedulers, "LRScheduler", None), schedulers.ReduceLROnPlateau}:
            if cls is None:
                continue
            self._wrap(cls, "step", observer.scheduler_step)
        from torch.amp import grad_scaler

        scaler = grad_scaler.GradScaler
        self._wrap(scaler, "scale", observer.scaled, after=True)
        self._wrap(scaler, "unscale_", observer.unscaled)
        self._wrap(scaler, "update", observer.scaler_updated)
        import torch.nn.utils as nn_utils
        import torch.nn.utils.clip_grad as clip_grad

        for module in (nn_utils, clip_grad):
            for name in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"):
                original = getattr(module, name, None)
                if original is not None:
                    self.patch(module, name, _clipping(original, observer.clipped, torch))

    def _wrap(self, cls: Any, name: str, note: Callable[..., Any], after: bool = False) -> None:
        original = getattr(cls, name)

        def wrapper(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if not after:
                note(obj, *args, **kwargs)
                return original(obj, *args, **kwargs)
            result = original(obj, *args, **kwargs)
            note(obj, result, *args, **kwargs)
            return result

        wrapper.__name__ = getattr(original, "__name__", name)
        wrapper.__doc__ = getattr(original, "__doc__", None)
        self.patch(cls, name, wrapper)

    # ------------------------------------------------------------------ modules
    def _modules(self) -> None:
        from torch.nn.modules import module as module_mod

        observer = self.observer
        self.handle(module_mod.register_module_forward_pre_hook(observer.forward_pre))
        self.handle(module_mod.register_module_forward_hook(observer.forward_post, always_call=True))
        self.handle(module_mod.register_module_module_registration_hook(observer.registered))
        zero_grad = self.torch.nn.Module.zero_grad

        def module_zero_grad(module: Any, *args: Any, **kwargs: Any) -> Any:
            observer.cleared(module.parameters())
            return zero_grad(module, *args, **kwargs)

        self.patch(self.torch.nn.Module, "zero_grad", module_zero_grad)

    # ------------------------------------------------------------------ files
    def _files(self) -> None:
        files, torch = self.files, self.torch
        real_open, os_open = builtins.open, os.open

        def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            target = files.mapped(file) if _writes(mode) else files.read(file)
            return real_open(target, mode, *args, **kwargs)

        def os_open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            target = files.mapped(path) if flags & _WRITE_FLAGS else files.read(path)
            return os_open(target, flags, *args, **kwargs)

        self.patch(builtins, "open", open_)
        self.patch(io, "open", open_)
        self.patch(os, "open", os_open_)
        for name in ("makedirs", "mkdir", "remove", "unlink", "rmdir"):
            self.patch(os, name, _mapped_first(getattr(os, name), files))
        for name in ("rename", "replace"):
            self.patch(os, name, _mapped_both(getattr(os, name), files))
        self.patch(shutil, "rmtree", _mapped_first(shutil.rmtree, files))
        save = torch.save

        def torch_save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            return save(obj, files.mapped(f), *args, **kwargs)

        self.patch(torch, "save", torch_save)
        load = torch.load

        def torch_load(f: Any, *args: Any, **kwargs: Any) -> Any:
            return load(files.read(f), *args, **kwargs)

        self.patch(torch, "load", torch_load)

    # ------------------------------------------------------------------ network
    def _network(self) -> None:
        blocked = self.blocked

        def refuse(what: str) -> Callable[..., Any]:
            def refused(*args: Any, **kwargs: Any) -> Any:
                target = args[1] if what == "connect" and len(args) > 1 else args[0] if args else ""
                blocked.append(f"{what} {target!r}"[:200])
                raise Blocked(f"network access is refused during `torchlint run` ({what} {target!r})")
            return refused

        self.patch(socket.socket, "connect", refuse("connect"))
        self.patch(socket.socket, "connect_ex", refuse("connect"))
        self.patch(socket, "create_connection", refuse("create_connection"))
        self.patch(socket, "getaddrinfo", refuse("getaddrinfo"))


_LEGACY_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                 "ByteTensor": "uint8", "CharTensor": "int8", "BoolTensor": "bool"}


class _Stream:
    """What a CUDA stream answers on the fake device: everything is already done."""

    def synchronize(self) -> None:
        pass

    def wait_stream(self, *args: Any) -> None:
        pass

    def query(self) -> bool:
        return True

    def is_capturing(self) -> bool:
        return False

    def record_event(self, *args: Any) -> None:
        return None


class _Properties:
    """What ``torch.cuda.get_device_properties`` answers on the fake device."""

    name = "torchlint fake CUDA (meta)"
    major, minor = 8, 0
    total_memory = 80 * 1024**3
    multi_processor_count = 108
    is_integrated = False
    is_multi_gpu_board = False


def _clipping(function: Callable[..., Any], note: Callable[..., Any], torch: Any) -> Callable[..., Any]:
    """``clip_grad_*`` noted; a generator of parameters is read once, for both."""
    def clipped(parameters: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(parameters, torch.Tensor):
            parameters = list(parameters)
        note(parameters)
        return function(parameters, *args, **kwargs)

    clipped.__name__ = getattr(function, "__name__", "clipped")
    clipped.__doc__ = getattr(function, "__doc__", None)
    return clipped


def _mapped_first(function: Callable[..., Any], files: Files) -> Callable[..., Any]:
    def mapped(path: Any, *args: Any, **kwargs: Any) -> Any:
        return function(files.mapped(path), *args, **kwargs)

    return mapped


def _mapped_both(function: Callable[..., Any], files: Files) -> Callable[..., Any]:
    def mapped(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        return function(files.read(src) if files.read(src) != src else files.mapped(src, create=False),
                        files.mapped(dst), *args, **kwargs)

    return mapped
