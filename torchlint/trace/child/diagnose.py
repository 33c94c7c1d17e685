"""Say what a layer expected and how to fix its definition: one table row per layer kind."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from torchlint import shapes
from torchlint.trace.records import Diagnosis


def _shape(x: Any) -> list[int]:
    return [int(s) for s in x.shape]


def _fmt(shape: list[int]) -> str:
    return shapes.format_shape(shape)


def flatten_source(history: list[tuple[str, str, list[int]]], k: int) -> str:
    """``" (= 64*16*16)"`` when a recent output of ``k`` features per sample was flattened."""
    for _name, _type, shape in reversed(history):
        if len(shape) >= 3 and math.prod(shape[1:]) == k:
            return " (= " + "*".join(str(s) for s in shape[1:]) + ")"
    return ""


def producer(history: list[tuple[str, str, list[int]]], dim: int, value: int) -> str:
    """The layer that made ``value`` channels: the latest conv/norm/linear output, else any."""
    for preferred in (True, False):
        for name, typ, shape in reversed(history):
            if not name or len(shape) <= dim or shape[dim] != value:
                continue
            if preferred and not typ.startswith(("Conv", "Linear", "BatchNorm", "GroupNorm")):
                continue
            return f"`{name}` ({typ})"
    return ""


_VIEW = re.compile(r"shape '\[([^\]]*)\]' is invalid for input of size (\d+)")


def diagnose_forward(exc: BaseException, history: list[tuple[str, str, list[int]]],
                     inputs: list[list[int]]) -> Diagnosis | None:
    """A bad ``view``/``reshape`` in forward code: say what the tensor really is."""
    m = _VIEW.search(str(exc))
    if not m:
        return None
    size = int(m.group(2))
    wanted = m.group(1)
    seen = [shape for _n, _t, shape in reversed(history)] + inputs
    for shape in seen:
        if len(shape) >= 2 and math.prod(shape) == size:
            per = math.prod(shape[1:])
            return Diagnosis(expected=f"a shape with {size} elements",
                             problem=f"view/reshape to [{wanted}] does not fit the tensor "
                                     f"{_fmt(shape)} ({size} elements)",
                             fix=f"the tensor is {_fmt(shape)}: {per} features per sample"
                                 f"{' (= ' + '*'.join(map(str, shape[1:])) + ')' if len(shape) > 2 else ''}; "
                                 f"use x.flatten(1) or x.view(x.size(0), {per})")
    return Diagnosis(expected=f"a shape with {size} elements",
                     problem=f"view/reshape to [{wanted}] does not fit a tensor of {size} elements",
                     fix="make the target shape's product equal the number of elements, e.g. "
                         "x.flatten(1) or x.view(x.size(0), -1)")


@dataclass(frozen=True)
class Layer:
    """The failing built-in layer and what it was called with."""

    torch: Any
    mod: Any
    tname: str  # its class name
    x: Any  # the first argument (a tensor)
    shape: list[int]
    text: str  # the exception's message
    history: list[tuple[str, str, list[int]]]  # (module, type, output shape), in call order
    inputs: tuple[list[int], ...] = ()  # the shapes of the model's inputs

    def gets_model_input(self) -> bool:
        """The layer received one of the model's inputs as is (nothing ran before it)."""
        return not self.history and self.shape in self.inputs


def _linear(layer: Layer) -> Diagnosis | None:
    mod, shape = layer.mod, layer.shape
    k = shape[-1] if shape else 0
    if shape and k != mod.in_features:
        return Diagnosis(expected=f"input [..., {mod.in_features}] (in_features={mod.in_features})",
                         problem=f"in_features={mod.in_features} but the input has {k} features "
                                 f"(shape {_fmt(shape)})",
                         fix=f"in_features should be {k}{flatten_source(layer.history, k)}",
                         attribute="in_features", should_be=k)
    return None


_CONV = re.compile(r"(Conv|ConvTranspose)([123])d")
_LAYOUT = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def _conv(layer: Layer) -> Diagnosis | None:
    mod, shape, tname = layer.mod, layer.shape, layer.tname
    m = _CONV.fullmatch(tname)
    assert m is not None
    d = int(m.group(2))
    layout = _LAYOUT[d]
    if len(shape) != d + 2 and layer.gets_model_input():
        return _input_rank(layer, d, layout)
    if len(shape) not in (d + 1, d + 2):
        return Diagnosis(expected=f"a {d + 2}-D input {layout}",
                         problem=f"{tname} expects a {d + 2}-D input {layout} but got a "
                                 f"{len(shape)}-D input {_fmt(shape)}",
                         fix=f"reshape the input to {layout} before `{tname}` "
                             "(e.g. x.view(N, C, ...)) or use a layer for this input rank")
    c = shape[1] if len(shape) == d + 2 else shape[0]
    if c != mod.in_channels:
        src = producer(layer.history, 1, c)
        return Diagnosis(expected=f"{mod.in_channels} input channels (in_channels={mod.in_channels})",
                         problem=f"in_channels={mod.in_channels} but the input has {c} channels "
                                 f"(shape {_fmt(shape)})",
                         fix=f"in_channels should be {c}" + (f" ({src} outputs {c} channels)" if src else ""),
                         attribute="in_channels", should_be=c)
    if "Kernel size can't be greater" in layer.text or "output size is too small" in layer.text:
        return Diagnosis(expected="a spatial size at least the (dilated) kernel size",
                         problem=f"the input {_fmt(shape)} is spatially smaller than the kernel "
                                 f"{tuple(mod.kernel_size)}",
                         fix="use a larger input (--input-shape) or fewer downsampling layers before "
                             "this one")
    return None


def _input_rank(layer: Layer, d: int, layout: str) -> Diagnosis:
    """The model's input has the wrong rank for its first layer: the input's fault (a missing
    channel dimension, say), not the layer's."""
    shape, mod, tname = layer.shape, layer.mod, layer.tname
    problem = f"the model's input {_fmt(shape)} is {len(shape)}-D, but its first layer `{tname}` needs a " \
              f"{d + 2}-D input {layout}"
    if len(shape) == d + 1:
        problem += f" (it would read {_fmt(shape)} as one sample with {shape[0]} channels)"
        right = [shape[0], int(mod.in_channels), *shape[1:]]
        fix = (f"the input lacks its channel dimension, the layer is right: use an input of shape "
               f"{_fmt(right)} (--input-shape {','.join(map(str, right))}, or input-shape in the trace config)")
    else:
        fix = (f"the input is wrong, not the layer: use an input of shape {layout} with C={mod.in_channels} "
               "(--input-shape, or input-shape in the trace config)")
    return Diagnosis(expected=f"a {d + 2}-D input {layout}", problem=problem, fix=fix, input_fault=True)


def _batch_norm(layer: Layer) -> Diagnosis | None:
    mod, shape = layer.mod, layer.shape
    if len(shape) >= 2 and shape[1] != mod.num_features:
        c = shape[1]
        return Diagnosis(expected=f"{mod.num_features} channels at dim 1 (num_features={mod.num_features})",
                         problem=f"num_features={mod.num_features} but the input has {c} at dim 1 "
                                 f"(shape {_fmt(shape)})",
                         fix=f"num_features should be {c}", attribute="num_features", should_be=c)
    return None


def _group_norm(layer: Layer) -> Diagnosis | None:
    mod, shape = layer.mod, layer.shape
    if len(shape) >= 2 and shape[1] != mod.num_channels:
        c = shape[1]
        return Diagnosis(expected=f"{mod.num_channels} channels (num_channels={mod.num_channels})",
                         problem=f"num_channels={mod.num_channels} but the input has {c} channels",
                         fix=f"num_channels should be {c}", attribute="num_channels", should_be=c)
    return None


def _layer_norm(layer: Layer) -> Diagnosis | None:
    shape = layer.shape
    norm = list(layer.mod.normalized_shape)
    tail = shape[-len(norm):] if norm and len(shape) >= len(norm) else shape
    if tail != norm:
        want = tail[0] if len(tail) == 1 else tuple(tail)
        return Diagnosis(expected=f"input ending in {tuple(norm) if len(norm) > 1 else norm[0]} "
                                  f"(normalized_shape={tuple(norm)})",
                         problem=f"normalized_shape={tuple(norm)} but the input is {_fmt(shape)}",
                         fix=f"normalized_shape should be {want}", attribute="normalized_shape",
                         should_be=want)
    return None


def _embedding(layer: Layer) -> Diagnosis | None:
    x, mod, tname = layer.x, layer.mod, layer.tname
    if x.is_floating_point():
        return Diagnosis(expected="integer indices (int64)",
                         problem=f"{tname} got {str(x.dtype).replace('torch.', '')} input; it needs "
                                 "integer token indices",
                         fix="pass integer inputs (--dtype int64), or check that the embedding is "
                             "applied to token ids and not to features")
    if x.device.type != "meta" and x.numel():
        top = int(x.max())
        if top >= mod.num_embeddings:
            return Diagnosis(expected=f"indices < num_embeddings={mod.num_embeddings}",
                             problem=f"index {top} is out of range for num_embeddings={mod.num_embeddings}",
                             fix=f"num_embeddings should be at least {top + 1}",
                             attribute="num_embeddings", should_be=top + 1)
    return None


def _recurrent(layer: Layer) -> Diagnosis | None:
    mod, shape, tname = layer.mod, layer.shape, layer.tname
    if len(shape) not in (2, 3):
        return Diagnosis(expected="a 2-D or 3-D input",
                         problem=f"{tname} got a {len(shape)}-D input {_fmt(shape)}",
                         fix="reshape the input to (L, N, F), or (N, L, F) with batch_first=True")
    if shape[-1] != mod.input_size:
        k = shape[-1]
        return Diagnosis(expected=f"input [..., {mod.input_size}] (input_size={mod.input_size})",
                         problem=f"input_size={mod.input_size} but the input has {k} features",
                         fix=f"input_size should be {k}{flatten_source(layer.history, k)}",
                         attribute="input_size", should_be=k)
    return None


def _attention(layer: Layer) -> Diagnosis | None:
    mod, shape = layer.mod, layer.shape
    if shape and shape[-1] != mod.embed_dim:
        k = shape[-1]
        return Diagnosis(expected=f"query [..., {mod.embed_dim}] (embed_dim={mod.embed_dim})",
                         problem=f"embed_dim={mod.embed_dim} but the query has {k} features",
                         fix=f"embed_dim should be {k}", attribute="embed_dim", should_be=k)
    return None


def _named(*names: str) -> Callable[[Layer], bool]:
    return lambda layer: layer.tname in names


@dataclass(frozen=True)
class LayerKind:
    """One row of :data:`LAYER_KINDS`: which layers it covers, and the check that says what
    such a layer expected and how to fix its definition (None: nothing to say)."""

    kinds: str  # for people: the layer classes the row covers
    matches: Callable[[Layer], bool]
    check: Callable[[Layer], Diagnosis | None]


# The first row that matches the failing layer decides.
LAYER_KINDS: tuple[LayerKind, ...] = (
    LayerKind("Linear (and its subclasses)",
              lambda layer: isinstance(layer.mod, layer.torch.nn.Linear), _linear),
    LayerKind("Conv1d/2d/3d, ConvTranspose1d/2d/3d",
              lambda layer: bool(_CONV.fullmatch(layer.tname)) and hasattr(layer.mod, "in_channels"),
              _conv),
    LayerKind("BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d",
              lambda layer: bool(re.fullmatch(r"(BatchNorm|InstanceNorm)[123]d", layer.tname))
              and hasattr(layer.mod, "num_features"), _batch_norm),
    LayerKind("GroupNorm", _named("GroupNorm"), _group_norm),
    LayerKind("LayerNorm", _named("LayerNorm"), _layer_norm),
    LayerKind("Embedding, EmbeddingBag", _named("Embedding", "EmbeddingBag"), _embedding),
    LayerKind("LSTM, GRU, RNN", _named("LSTM", "GRU", "RNN"), _recurrent),
    LayerKind("MultiheadAttention", _named("MultiheadAttention"), _attention),
)


def diagnose(torch: Any, mod: Any, args: Any, exc: BaseException,
             history: list[tuple[str, str, list[int]]], inputs: tuple[list[int], ...] = ()) -> Diagnosis | None:
    """Say what a built-in layer expected, and how to fix its definition (or the input, when
    the model's input itself does not fit its first layer)."""
    x = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if x is None:
        return None
    layer = Layer(torch, mod, type(mod).__name__, x, _shape(x), str(exc), history, inputs)
    for kind in LAYER_KINDS:
        if kind.matches(layer):
            return kind.check(layer)
    return None
