"""Which in-place op broke backward (TL104), and which op had saved the tensor it modified.

Autograd's error ("one of the variables needed for gradient computation has been modified by
an inplace operation: ..., which is output 0 of SigmoidBackward0, is at version 1") names
neither line.  Only after a step failed with it, :func:`find_inplace` runs the step again with
saved-tensor hooks (every tensor an op saves for backward is kept with its version, the op
and the user line that ran it) under a function mode that notes the first op after which a
saved tensor's version moved; the unpack hook of backward finds the saved tensor whose
version moved, which names both lines.  The step that passes pays nothing.
"""

from __future__ import annotations

from typing import Any, Callable

from torchlint.trace.child.failure import current_user_frame, op_name
from torchlint.trace.records import InplaceInfo

INPLACE_ERROR = "modified by an inplace operation"
MAX_SAVED = 20000
_SPELLED = {"__iadd__": "+=", "__isub__": "-=", "__imul__": "*=", "__itruediv__": "/=",
            "__ifloordiv__": "//=", "__ipow__": "**=", "__iand__": "&=", "__ior__": "|=",
            "__setitem__": "item assignment"}


class _Found(Exception):
    pass


def spelled(func: Any, kwargs: dict[str, Any]) -> str:
    """An op as the user wrote it: ``+=``, ``relu(inplace=True)``, ``add_``."""
    name = op_name(func)
    if name in _SPELLED:
        return _SPELLED[name]
    if kwargs.get("inplace") is True:
        return f"{name}(inplace=True)"
    return name


def mutates(func: Any, kwargs: dict[str, Any]) -> bool:
    """Whether an op may write into a tensor it was given (``add_``, ``+=``, ``x[i] = ...``,
    ``out=``, ``inplace=True``)."""
    name = op_name(func)
    return (name in _SPELLED or (name.endswith("_") and not name.endswith("__"))
            or kwargs.get("inplace") is True or kwargs.get("out") is not None)


def find_inplace(torch: Any, run_step: Callable[[], None], message: str) -> InplaceInfo:
    """Run ``run_step`` (forward, loss, backward) again, watching saved tensors; what it
    found, with autograd's ``message`` (its first line) either way."""
    from torch.overrides import TorchFunctionMode

    info: InplaceInfo = {"message": message.split("\n", 1)[0][:500]}
    saved: list[list[Any]] = []  # [tensor, version, op, frame, (op, frame) that modified it]
    current = ["an op"]

    def pack(t: Any) -> Any:
        if len(saved) >= MAX_SAVED:
            return ("raw", t)
        saved.append([t, t._version, current[0], current_user_frame(), None])
        return ("saved", len(saved) - 1)

    def unpack(packed: Any) -> Any:
        kind, value = packed
        if kind == "raw":
            return value
        rec = saved[value]
        if rec[0]._version != rec[1]:
            info["saved_by"], info["shape"] = rec[2], [int(s) for s in rec[0].shape]
            if rec[3] is not None:
                info["saved_frame"] = rec[3]
            if rec[4] is not None:
                info["op"] = rec[4][0]
                if rec[4][1] is not None:
                    info["frame"] = rec[4][1]
            raise _Found()
        return rec[0]

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            outer = current[0]
            current[0] = spelled(func, kwargs)
            try:
                result = func(*args, **kwargs)
            finally:
                name, current[0] = current[0], outer
            if not mutates(func, kwargs):
                return result
            moved = [rec for rec in saved if rec[4] is None and rec[0]._version != rec[1]]
            if moved:
                frame = current_user_frame()
                for rec in moved:
                    rec[4] = (name, frame)
            return result

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack), Watch():
            run_step()
    except _Found:
        pass
    except Exception:  # noqa: BLE001 - the error the step already had, or another one
        pass
    return info
