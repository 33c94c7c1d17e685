"""The fake CUDA device of ``torchlint run``: "cuda" tensors are meta tensors.

:class:`FakeCuda` is a function mode (thread-local, entered by :class:`.fence.Fence`) that
sees every torch call the script makes:

* a ``device=`` of "cuda", ``.to("cuda")``, ``.cuda()`` become the meta device, so a model and
  its batches "on the GPU" cost no memory and no time, while a tensor made without ``device=``
  stays on the CPU: where it meets a "cuda" one, the op fails as it would on a GPU
  (:class:`.devices.DeviceWatch` remembers where each CPU tensor was made);
* what needs a value a meta tensor does not have (``loss.item()``, ``float(x)``, ``f"{x:.3f}"``,
  ``if acc > best``, ``x.tolist()``, ``x.cpu()``) gets a placeholder: 1.0, 1 or False, zeros;
* losses, backward and in-place ops are reported to the :class:`.observe.Observer`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from torchlint.trace.child.devices import DeviceWatch, flat_tensors
from torchlint.trace.child.failure import op_name
from torchlint.trace.child.inplace import mutates

_VALUES = {"item", "__bool__", "__float__", "__int__", "__index__", "__complex__"}
_BACKWARD = {"backward"}
_CPU_COPIES = {"cpu", "numpy", "tolist"}


def fake_cuda(torch: Any, observer: Any, fake: bool = True, everything: bool = False,
              attention: Any = None) -> Any:
    """The mode (torch is imported only here, in the child, after its set-up)."""
    from torch.overrides import TorchFunctionMode

    class Mode(FakeCuda, TorchFunctionMode):
        pass

    return Mode(torch, observer, fake, everything, attention)


class FakeCuda:
    """The body of the function mode (mixed with ``TorchFunctionMode`` by :func:`fake_cuda`)."""

    def __init__(self, torch: Any, observer: Any, fake: bool = True, everything: bool = False,
                 attention: Any = None):
        super().__init__()
        self.torch = torch
        self.sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
        self.attention = attention  # memory.fused_sdpa: attention as a GPU's fused kernel runs it
        self.everything = everything  # --run-device meta: a CPU tensor meeting meta ones joins them
        self.meta = torch.device("meta")
        self.observer = observer
        self.fake = fake
        self.devices = DeviceWatch(torch)
        self.torch_dir = os.path.dirname(torch.__file__) + os.sep

    def device(self, d: Any) -> Any:
        if not self.fake or d is None:
            return d
        if isinstance(d, int) and not isinstance(d, bool):
            return self.meta
        if isinstance(d, str) and d.split(":")[0] == "cuda":
            return self.meta
        if isinstance(d, self.torch.device) and d.type == "cuda":
            return self.meta
        return d

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = op_name(func)
        torch = self.torch
        first = args[0] if args else None
        if self.fake:
            if "device" in kwargs:
                kwargs["device"] = self.device(kwargs["device"])
            elif self.everything and name in _FACTORIES and name not in _FROM_DATA \
                    and self.observer.is_project(_caller(1)):
                kwargs["device"] = self.meta  # the script's own tensors (not its data pipeline's)
            if name == "type" and len(args) > 1 and isinstance(args[1], LegacyCudaType) \
                    and isinstance(first, torch.Tensor):
                return first.to(device=self.meta, dtype=args[1].dtype)  # x.type(torch.cuda.FloatTensor)
            if name == "to" or name == "type":
                args = tuple(self.device(a) if isinstance(a, (str, torch.device, int)) and i > 0 else a
                             for i, a in enumerate(args))
            elif name == "cuda" and isinstance(first, torch.Tensor):
                return first.to(self.meta, non_blocking=kwargs.get("non_blocking", False))
            elif name == "pin_memory" and isinstance(first, torch.Tensor):
                return first
            if isinstance(first, torch.Tensor) and first.is_meta:
                if name in _VALUES:  # torch's own reads (GradScaler's found_inf) get 0: nothing found
                    internal = _caller(1).startswith(self.torch_dir)
                    return _placeholder(torch, first, name, 0 if internal else 1)
                if name == "__format__":
                    return format(_placeholder(torch, first, "item"), args[1]) if first.dim() == 0 else format(
                        repr(first), args[1])
                if name in _CPU_COPIES:
                    zeros = torch.zeros(first.shape, dtype=first.dtype)
                    return zeros if name == "cpu" else zeros.tolist() if name == "tolist" else zeros.numpy()
                if name == "to" and _to_cpu(torch, args, kwargs):
                    return torch.zeros(first.shape, dtype=_to_dtype(torch, first, args, kwargs))
                if name == "type" and len(args) > 1 and isinstance(args[1], type) and hasattr(args[1], "dtype"):
                    return torch.zeros(first.shape, dtype=args[1].dtype)  # .type(torch.FloatTensor): a CPU copy
        observer = self.observer
        if name in _BACKWARD:
            observer.backward(first if isinstance(first, torch.Tensor) else kwargs.get("tensors"))
        loss = observer.loss_call(name, args, kwargs)
        tensors = flat_tensors(torch, args, kwargs) if self.fake else ()
        if tensors and self.everything:
            if any(t.is_meta for t in tensors) and any(t.device.type == "cpu" for t in tensors):
                args, kwargs = _joined(torch, args), dict(zip(kwargs, _joined(torch, tuple(kwargs.values()))))
        elif tensors:
            self.devices.check(func, tensors)
        if func is self.sdpa and self.attention is not None and any(
                isinstance(t, torch.Tensor) and t.is_meta for t in args[:3]):
            fused = self.attention(*args, **kwargs)
            if fused is not None:
                return fused
        writes = isinstance(first, torch.Tensor) and mutates(func, kwargs)
        if writes and observer.snapshot:
            observer.written(first)  # ``p.grad.zero_()``, ``p.grad.data.zero_()``
        out = func(*args, **kwargs)
        if writes and first.requires_grad:
            observer.inplace(func, kwargs, first)
        if loss is not None:
            observer.loss_result(loss, out)
        if self.fake and (name in _FACTORIES or any(id(t) in self.devices.origins for t in tensors)):
            outs = out if isinstance(out, (list, tuple)) else (out,)
            self.devices.note(func, list(tensors), [t for t in outs if isinstance(t, torch.Tensor)])
        return out


class LegacyCudaType:
    """``torch.cuda.FloatTensor`` and its kind on the fake device: called with sizes or data it
    makes a meta tensor; ``x.type(torch.cuda.FloatTensor)`` moves ``x`` there
    (:class:`.fakecuda.FakeCuda` reads ``dtype``)."""

    def __init__(self, torch: Any, name: str, dtype: Any):
        self.torch, self.__name__, self.dtype = torch, name, dtype

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        torch = self.torch
        if not args or all(isinstance(a, int) for a in args) or len(args) == 1 and isinstance(args[0], torch.Size):
            sizes = args[0] if len(args) == 1 and isinstance(args[0], torch.Size) else args
            return torch.empty(*sizes, dtype=self.dtype, device="meta")
        return torch.as_tensor(args[0], dtype=self.dtype).to("meta")

    def __repr__(self) -> str:
        return f"torch.cuda.{self.__name__}"


_FROM_DATA = {"from_numpy", "as_tensor", "tensor", "stack", "cat", "zeros_like", "ones_like", "randn_like",
              "rand_like"}  # these follow their data, or take no device=
_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "tensor", "eye",
              "linspace", "zeros_like", "ones_like", "randn_like", "rand_like", "as_tensor", "from_numpy",
              "normal", "randperm", "stack", "cat"}


_TORCHLINT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _caller(depth: int) -> str:
    """The file of the code that made the call, past torchlint's own modes."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(_TORCHLINT):
        f = f.f_back
    return f.f_code.co_filename if f is not None else ""


def _joined(torch: Any, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` with their CPU tensors (one level into lists and tuples) moved to meta."""
    def meta(v: Any) -> Any:
        if isinstance(v, torch.Tensor) and v.device.type == "cpu":
            return v.to("meta")
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(meta(x) for x in v)
        return v

    return tuple(meta(v) for v in values)


def _placeholder(torch: Any, t: Any, name: str, one: int = 1) -> Any:
    """The value a meta tensor's ``.item()`` (and ``float()``, ``bool()``...) stands in with:
    1 (a loss, a count: a divisor that is never 0, a log that is defined), False for booleans
    (``if torch.isnan(loss)``); ``one=0`` for torch's own reads."""
    if t.dtype == torch.bool:
        value: Any = False
    elif t.is_floating_point():
        value = float(one)
    elif t.is_complex():
        value = complex(one)
    else:
        value = one
    convert = {"__bool__": bool, "__float__": float, "__int__": int, "__index__": int, "__complex__": complex}
    return convert[name](value) if name in convert else value


def _to_cpu(torch: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    targets = [*args[1:], kwargs.get("device")]
    for a in targets:
        if isinstance(a, str) and a.split(":")[0] == "cpu" or isinstance(a, torch.device) and a.type == "cpu":
            return True
    return False


def _to_dtype(torch: Any, t: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for a in (*args[1:], kwargs.get("dtype")):
        if isinstance(a, torch.dtype):
            return a
    return t.dtype
