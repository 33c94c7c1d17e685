"""The inputs of the forward pass: inferred from the first layer, read from the class's
``# torchlint: input-shape=`` comment, and made as tensors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchlint import shapes
from torchlint.trace.child.failure import JobError
from torchlint.trace.child.values import source_file

_ATTRS = ("in_features", "in_channels", "num_embeddings", "input_size", "batch_first",
          "num_features", "normalized_shape")


def first_layer(model: Any) -> tuple[str, Any] | None:
    """The first built-in layer with parameters, in registration (``__init__``) order.

    User modules that own raw ``nn.Parameter``s (a positional embedding, a class token) are
    skipped: their shape says nothing about the input.
    """
    for name, mod in model.named_modules():
        if not type(mod).__module__.startswith("torch.nn"):
            continue
        if any(True for _ in mod.parameters(recurse=False)):
            return name, mod
    return None


def infer_inputs(model: Any) -> shapes.Inference | None:
    first = first_layer(model)
    if first is None:
        return None
    return infer_from(*first)


def infer_from(name: str, mod: Any) -> shapes.Inference | None:
    if mod is None:
        return None
    attrs = {}
    for key in _ATTRS:
        value = getattr(mod, key, None)
        if value is not None:
            attrs[key] = list(value) if isinstance(value, (tuple, list)) else value
    return shapes.infer_candidates(name, type(mod).__name__, attrs)


def inline_shape(cls: type) -> tuple[list[shapes.InputSpec], int] | None:
    """The ``# torchlint: input-shape=...`` comment on the model's class, if any."""
    path = source_file(cls)
    if not path:
        return None
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return shapes.find_inline_shape(source, cls.__qualname__)
    except shapes.ShapeError as exc:
        raise JobError("bad-inline-shape", f"{path}: {cls.__qualname__}: {exc}") from None


def embedding_bound(model: Any) -> int | None:
    bounds = [int(m.num_embeddings) for m in model.modules()
              if type(m).__name__ in ("Embedding", "EmbeddingBag") and getattr(m, "num_embeddings", 0)]
    return min(bounds) if bounds else None


def make_inputs(torch: Any, specs: list[shapes.InputSpec], device: str, high: int | None) -> list[Any]:
    gen = torch.Generator().manual_seed(0)
    tensors = []
    for spec in specs:
        dtype = getattr(torch, spec.dtype)
        if device == "meta":
            tensors.append(torch.empty(spec.shape, dtype=dtype, device="meta"))
            continue
        if dtype.is_floating_point:
            t = torch.randn(spec.shape, generator=gen).to(dtype)
        elif dtype == torch.bool:
            t = torch.randint(0, 2, spec.shape, generator=gen).bool()
        else:
            t = torch.randint(0, max(1, high or 2), spec.shape, generator=gen, dtype=dtype)
        tensors.append(t.to(device))
    return tensors

