"""Device mismatch on meta (TL101): a CPU tensor made in ``forward`` meeting the model's meta
tensors.

On the meta device the model's parameters, buffers and inputs are meta tensors; a tensor that
``forward`` creates without ``device=`` is on the CPU.  A GPU run fails where the two meet, but
not every meta kernel checks devices (``F.linear`` with a CPU input passes), so the tracer
checks every op itself: :meth:`DeviceWatch.check` raises :class:`DeviceMismatch` before an op
that mixes them, as a GPU would.  Where each CPU tensor came from (the user line that created
it, followed through the ops it went through) is kept by :meth:`DeviceWatch.note`, only for
CPU outputs (rare on meta: the cost is nothing for models without the bug).
"""

from __future__ import annotations

import weakref
from typing import Any

from torchlint.trace.child.failure import DeviceMismatch, current_user_frame, op_name
from torchlint.trace.records import Frame

# Ops that take a tensor on another device legitimately: conversions, copies, indexing (a CPU
# index into a GPU tensor is allowed), ops that read only the other tensor's size, and ops
# that want their lengths on the CPU (packed sequences; CTC's lengths).
_CROSS_DEVICE_OK = {"to", "type_as", "copy_", "__getitem__", "__setitem__", "view_as", "expand_as",
                    "reshape_as", "new_tensor", "new_zeros", "new_ones", "new_empty", "new_full",
                    "__repr__", "__format__", "size", "dim", "numel", "pack_padded_sequence",
                    "_pack_padded_sequence", "ctc_loss", "_has_compatible_shallow_copy_type", "set_",
                    "__set__", "is_same_size", "equal"}
# Recurrent ops take a packed sequence's ``batch_sizes``, an integer CPU tensor by design.
_CPU_INTEGERS_OK = {"lstm", "gru", "rnn_tanh", "rnn_relu", "_pad_packed_sequence", "pad_packed_sequence"}
MAX_ORIGINS = 4096


def flat_tensors(torch: Any, args: Any, kwargs: Any) -> list[Any]:
    """The tensors among an op's arguments (one level into lists and tuples)."""
    out = []
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(b for b in a if isinstance(b, torch.Tensor))
    return out


class DeviceWatch:
    def __init__(self, torch: Any):
        self.torch = torch
        self.origins: dict[int, tuple[Any, Frame | None, str]] = {}

    def origin(self, t: Any) -> tuple[Frame | None, str] | None:
        found = self.origins.get(id(t))
        if found is None or found[0]() is not t:
            return None
        return found[1], found[2]

    def check(self, func: Any, tensors: list[Any]) -> None:
        """Raise :class:`DeviceMismatch` when ``func`` mixes meta tensors with a CPU tensor that
        is not a 0-dim scalar (PyTorch lets those meet any device)."""
        name = op_name(func)
        if name in _CROSS_DEVICE_OK:
            return
        integers_ok = name in _CPU_INTEGERS_OK
        cpu = next((t for t in tensors if t.device.type == "cpu" and t.dim() > 0
                    and not (integers_ok and not t.is_floating_point())), None)
        if cpu is None or not any(t.device.type == "meta" for t in tensors):
            return
        created = self.origin(cpu)
        raise DeviceMismatch({"op": name, "created": created[0] if created else None,
                              "created_by": created[1] if created else None,
                              "shape": [int(s) for s in cpu.shape]})

    def note(self, func: Any, tensors: list[Any], outputs: list[Any]) -> None:
        """Remember where the CPU tensors in ``outputs`` came from: the origin of a CPU input,
        else this op (a creation) at the current user line."""
        new = [t for t in outputs if t.device.type == "cpu" and t.dim() > 0]
        if not new or len(self.origins) >= MAX_ORIGINS:
            return
        inherited = next((o for o in map(self.origin, tensors) if o is not None), None)
        origin = inherited or (current_user_frame(), op_name(func))
        for t in new:
            try:
                self.origins[id(t)] = (weakref.ref(t), *origin)
            except TypeError:  # pragma: no cover - not weak-referenceable
                pass
