"""The loss's two sides: a loss function called with an output and a target whose shapes or
dtypes disagree (TL102), seen as the op runs, in ``forward`` or in the training step's loss.

:func:`check_loss_call` is pure: given an op and its arguments it says whether the op is a
loss whose input and target disagree, and how.  It decides from shapes and dtypes alone, so
meta and cpu agree (the kernels do not: on meta ``cross_entropy`` takes an int32 target that
the CPU kernel refuses).  The silent case matters most: ``mse_loss`` of an ``(N, 1)`` output
and an ``(N,)`` target broadcasts to ``(N, N)`` and trains on a wrong loss without an error.
"""

from __future__ import annotations

from typing import Any

from torchlint.trace.records import LossMismatch

# Element-wise losses: the target has the input's shape (a different but broadcastable shape
# runs, on every pair: the silent bug).
ELEMENTWISE = frozenset({"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                         "binary_cross_entropy_with_logits", "soft_margin_loss", "kl_div",
                         "poisson_nll_loss"})
# Class-index losses: class indices of shape (N, d1, ...) (int64), or for cross_entropy class
# probabilities of the input's shape (floating point).
CLASS_INDEX = frozenset({"cross_entropy", "nll_loss", "multi_margin_loss"})
LOSSES = ELEMENTWISE | CLASS_INDEX
_TARGET_NAMES = {"kl_div": "target", "poisson_nll_loss": "target"}


def _two_sides(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    first = "log_input" if name == "poisson_nll_loss" else "input"
    values = list(args[:2])
    while len(values) < 2:
        values.append(None)
    if values[0] is None:
        values[0] = kwargs.get(first)
    if values[1] is None:
        values[1] = kwargs.get(_TARGET_NAMES.get(name, "target"))
    return values[0], values[1]


def _side(t: Any) -> dict[str, Any]:
    return {"shape": [int(s) for s in t.shape], "dtype": str(t.dtype).replace("torch.", "")}


def broadcast_shape(a: list[int], b: list[int]) -> list[int] | None:
    """The shape ``a`` and ``b`` broadcast to, or None when they do not."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return out[::-1]


def check_loss_call(torch: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> LossMismatch | None:
    """The mismatch between the two sides of loss ``name`` called with ``args``/``kwargs``
    (``name`` as ``torch.nn.functional`` spells it), or None (not a loss, or they agree)."""
    if name not in LOSSES:
        return None
    inp, target = _two_sides(name, args, kwargs)
    if not isinstance(inp, torch.Tensor) or not isinstance(target, torch.Tensor):
        return None
    a, b = _side(inp), _side(target)
    found: LossMismatch = {"loss": name, "input": a, "target": b, "problem": ""}
    if name in ELEMENTWISE:
        binary = name.startswith("binary_cross_entropy")
        if a["shape"] != b["shape"]:
            wide = broadcast_shape(a["shape"], b["shape"])
            if wide is None or binary:  # BCE refuses any target shaped unlike its input
                found["problem"] = "shape"
            elif target.dim() == 0:
                return None  # a constant target (`mse_loss(x, torch.tensor(0.))`): meant
            else:
                found["problem"] = "broadcast"
                found["broadcast"] = wide
        elif binary and not target.is_floating_point():
            found["problem"] = "dtype"
        return found if found["problem"] else None
    # class indices, or (cross_entropy) class probabilities
    shape, tshape = a["shape"], b["shape"]
    expected = [shape[0], *shape[2:]] if len(shape) >= 2 else []
    if target.is_floating_point():
        if name == "cross_entropy" and tshape == shape:
            return None  # class probabilities (soft or one-hot labels)
        found["problem"] = "dtype" if tshape == expected else "shape"
        found["expected"] = {"shape": expected, "dtype": "int64"}
        if name == "cross_entropy":
            found["probabilities"] = shape
        return found
    if target.dtype == torch.bool or target.is_complex():
        found["problem"] = "dtype"
    elif tshape != expected:
        found["problem"] = "shape"
    elif target.dtype not in (torch.int64, torch.uint8):
        found["problem"] = "dtype"  # int32 indices: the CPU and CUDA kernels refuse them
    if not found["problem"]:
        return None
    found["expected"] = {"shape": expected, "dtype": "int64"}
    return found
