"""The training step's loss and backward: one way of running a step, shared by the gradient
report (``trace --train``) and the memory plan.

:func:`backward_from_outputs` is pure: it reduces what ``forward`` returned to a scalar,
calls ``backward`` and returns the loss; it reports nothing (the caller looks at the
gradients).  ``loss_spec`` is one of :data:`BUILTIN_LOSSES` or a callable (a user loss
``module:function``, loaded by the job) called with the model's output as ``forward``
returned it, and with the target as its second argument where the job has one
(``--target-shape``/``--target-dtype``): ``mse`` and ``ce`` then take that target instead of
their zeros.
"""

from __future__ import annotations

from typing import Any, Callable

from torchlint.trace.child.values import tensors_in
from torchlint.trace.records import BUILTIN_LOSSES

__all__ = ["BUILTIN_LOSSES", "LossError", "backward_from_outputs", "class_count", "loss_from_outputs"]


class LossError(Exception):
    """The outputs cannot make this loss (no floating-point output, a wrong rank for ``ce``,
    a user loss that returned no scalar)."""


def loss_from_outputs(outputs: Any, loss_spec: str | Callable[..., Any], target: Any = None) -> Any:
    """The scalar loss of ``outputs`` (against ``target`` where given: see the module docstring)."""
    import torch

    if callable(loss_spec):
        loss = loss_spec(outputs) if target is None else loss_spec(outputs, target)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise LossError(f"the loss function returned {_what(loss)}, not a scalar tensor")
        return loss.reshape(())
    floats = [t for t in tensors_in(torch, outputs) if t.is_floating_point()]
    if not floats:
        raise LossError("forward returned no floating-point tensor to take a loss of")
    if loss_spec == "sum":
        return sum(t.float().sum() for t in floats)
    out = floats[0]
    if loss_spec == "mse":
        return torch.nn.functional.mse_loss(out, torch.zeros_like(out) if target is None else target)
    if loss_spec == "ce":
        if target is not None:
            return torch.nn.functional.cross_entropy(out, target)
        if out.dim() < 2:
            raise LossError(f"--loss ce needs class scores of shape (N, C, ...), the output is "
                            f"{list(out.shape)}")
        target = torch.zeros((out.shape[0], *out.shape[2:]), dtype=torch.long, device=out.device)
        return torch.nn.functional.cross_entropy(out, target)
    raise LossError(f"unknown loss {loss_spec!r}")


def class_count(torch: Any, outputs: Any) -> int | None:
    """The number of classes an output scores (its dim 1; the last dim of a 1-D output), for
    class-index targets that must stay below it."""
    floats = [t for t in tensors_in(torch, outputs) if t.is_floating_point()]
    if not floats or floats[0].dim() == 0:
        return None
    out = floats[0]
    return int(out.shape[1]) if out.dim() >= 2 else int(out.shape[0])


def backward_from_outputs(outputs: Any, loss_spec: str | Callable[..., Any], target: Any = None) -> Any:
    """Reduce ``outputs`` to the loss and call ``backward``; the loss, or None when it does
    not require grad (nothing in the forward pass was differentiable: no backward ran)."""
    loss = loss_from_outputs(outputs, loss_spec, target)
    if not loss.requires_grad:
        return None
    loss.backward()
    return loss


def _what(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"a tensor of shape {list(shape)}" if shape is not None else type(value).__name__
