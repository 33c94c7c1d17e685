"""One training step's loss and backward, in the trace child."""

from __future__ import annotations

from typing import Any

from torchlint.trace.child.values import tensors_in


def backward_from_outputs(outputs: Any, loss_spec: Any) -> None:
    """Reduce the model's outputs to a scalar loss and call ``backward()`` on it.

    ``loss_spec`` None: the loss is the sum of every floating-point output tensor that
    depends on a parameter (the gradients then flow to everything the outputs used).
    Raises ``ValueError`` when no output depends on a parameter (nothing to differentiate).
    """
    import torch

    if loss_spec is not None:
        raise ValueError(f"loss {loss_spec!r} is not supported here: only the sum of the outputs")
    parts = [t.sum() for t in tensors_in(torch, outputs)
             if t.is_floating_point() and t.requires_grad]
    if not parts:
        raise ValueError("no output of the model depends on a trainable parameter: there is "
                         "nothing to differentiate")
    loss = parts[0]
    for part in parts[1:]:
        loss = loss + part
    loss.backward()
