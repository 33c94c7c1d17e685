"""Measure what one training step holds in memory, in the trace child (on meta: nothing is
allocated).

* **Weights, gradients**: the bytes of the parameters' storages (each storage once) and of the
  trainable ones (a gradient per trainable parameter).
* **Optimizer state**: the real optimizer is built on the trainable parameters, given a
  gradient each and stepped once; its state tensors' bytes are counted.  Optimizers whose
  step reads a value (``.item()``) fail on meta after their state is made: that state counts.
  It runs the implementation a GPU runs (:func:`as_on_cuda`: foreach where PyTorch picks it
  on CUDA) or the one the training code asks for; the step's temporaries are measured.
* **Allocator**: every allocation and free of the step is recorded and replayed through
  PyTorch's caching allocator (:func:`simulate_allocator`) for the reserved peak.
* **Activations**: the forward runs under ``torch.autograd.graph.saved_tensors_hooks``; every
  storage saved for backward is counted once (views share storage), parameters and buffers
  excluded.
* **Backward peak**: every tensor an op creates during the forward and backward is counted
  from its creation until its storage is freed (a ``TorchDispatchMode`` and a weak reference
  per storage); the most alive at once is the peak on top of the weights and the optimizer
  state.  It holds the saved activations, the temporaries and the gradients as backward makes
  them, so it is measured, not the upper bound "all activations plus all gradients".
* **Precision**: ``bf16`` runs everything in bfloat16.  ``bf16-master`` keeps an fp32 master
  copy of the trainable weights and fp32 optimizer state, and computes (weights, gradients,
  activations) in bfloat16.  ``fp16-amp`` (autocast and a grad scaler) and ``bf16-mixed``
  (autocast to bfloat16, as Lightning names it) keep fp32 weights, gradients and state and
  run the forward under autocast; ``torch.autocast`` does not run on meta, so
  :func:`autocast_like` makes its casts (CUDA's op lists, the weight-cast cache) above
  autograd: the half-precision weight copies and the float32 inputs of LayerNorm, softmax
  and the losses are saved for backward as on a GPU.
* **Attention**: on meta, ``F.scaled_dot_product_attention`` runs its math kernel, which keeps
  the (batch, heads, queries, keys) attention weights for backward; a GPU runs the fused
  kernels (flash or memory-efficient attention), which keep the output and one log-sum-exp
  per query. So on meta each such call runs the memory-efficient kernel's meta implementation
  instead (:func:`fused_attention`), where a GPU would run a fused kernel: measured on an
  H200, the plan of a decoder with ``is_causal`` attention was up to 24% over the real peak
  with the math kernel's figures, and within 3% of it with the math kernel forced on the GPU.

Each figure is measured at two batch sizes (the input's first dimension, and twice it) so the
parent can solve for the batch size that fits (:mod:`torchlint.trace.plan`).
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Callable, Iterator

from torchlint import shapes
from torchlint.trace.child.failure import JobError
from torchlint.trace.child.inputs import make_inputs
from torchlint.trace.child.libraries import meta_as_fake
from torchlint.trace.child.step import LossError, backward_from_outputs
from torchlint.trace.plan import OPTIMIZERS

FLOAT_INPUTS = ("float32", "float64")



class StorageSet:
    """Storages counted once each, forgotten when freed; ``live`` bytes and their ``peak``."""

    def __init__(self, on_free: bool = True, events: list[tuple[int, int | None]] | None = None):
        self.on_free = on_free
        self.events = events  # (serial, bytes) for each storage added, (serial, None) when it is freed
        self._serial = 0
        self.live = 0
        self.peak = 0
        self.total = 0  # everything ever added
        self.ops: set[str] = set()  # the ops run, where tracking_live was asked for them
        self._refs: dict[int, Any] = {}

    def add(self, tensor: Any) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse or a subclass without storage
            return
        key = id(storage)
        ref = self._refs.get(key)
        if ref is not None and ref() is storage:
            return
        size = int(storage.nbytes())
        self._serial += 1
        if self.events is not None:
            self.events.append((self._serial, size))
        self._refs[key] = weakref.ref(storage, self._freed(key, size, self._serial))
        self.total += size
        self.live += size
        self.peak = max(self.peak, self.live)

    def _freed(self, key: int, size: int, serial: int) -> Callable[[Any], None]:
        def freed(_ref: Any) -> None:
            if self.on_free and self._refs.get(key) is _ref:
                del self._refs[key]
                self.live -= size
                if self.events is not None:
                    self.events.append((serial, None))
        return freed

    def __contains__(self, tensor: Any) -> bool:
        ref = self._refs.get(id(tensor.untyped_storage()))
        return ref is not None and ref() is tensor.untyped_storage()


@contextlib.contextmanager
def tracking_live(torch: Any, ops: bool = False, events: list[tuple[int, int | None]] | None = None,
                  device: str | None = None) -> Iterator[StorageSet]:
    """Every tensor an op creates inside the block (not the storage of one it was given),
    alive until its storage is freed; with ``ops`` the names of the ops run (``live.ops``);
    with ``device`` only the tensors on that device type (``torchlint run``: meta, the fake GPU)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    live = StorageSet(events=events)

    class Live(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if ops:
                live.ops.add(func.__name__)
            # an in-place op or a view returns storage that was there before
            given = {id(t.untyped_storage()) for t in _tensors(torch, [*args, *kwargs.values()])}
            for t in _tensors(torch, out):
                if (device is None or t.device.type == device) and id(t.untyped_storage()) not in given:
                    live.add(t)
            return out

    with Live():
        yield live


# The memory-efficient kernel's limits on the head dimension (CUDA's sdp_utils): where a GPU
# could not run a fused kernel either, the math kernel's figures stand.
_FUSED_MAX_HEAD_DIM = 256
_FUSED_HEAD_DIM_MULTIPLE = 8


@contextlib.contextmanager
def fused_attention(torch: Any) -> Iterator[None]:
    """Inside the block, ``F.scaled_dot_product_attention`` on 4-d floating-point query, key
    and value of one head count and a head dimension a fused kernel takes runs
    ``aten._scaled_dot_product_efficient_attention`` (what it saves for backward is what a
    GPU's fused kernel saves); any other call runs as written. A boolean mask becomes the
    additive bias CUDA's dispatcher makes of it."""
    from torch.overrides import TorchFunctionMode

    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    fused = fused_sdpa(torch)
    if sdpa is None or fused is None:
        yield
        return

    class Fused(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            if func is sdpa:
                out = fused(*args, **kwargs)
                if out is not None:
                    return out
            return func(*args, **kwargs)

    with Fused():
        yield


def fused_sdpa(torch: Any) -> Callable[..., Any] | None:
    """``F.scaled_dot_product_attention`` as a fused kernel runs it (see :func:`fused_attention`):
    a function of its arguments returning the output, or None where the kernel would not take
    them (the caller runs the call as written); None where this torch lacks the kernel."""
    try:
        efficient = torch.ops.aten._scaled_dot_product_efficient_attention
    except (AttributeError, RuntimeError):  # a torch without the kernel: the math figures stand
        return None

    def fused(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
              is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False) -> Any:
        tensors = (query, key, value)
        head_dim = query.shape[-1] if query.dim() == 4 else 0
        if enable_gqa or any(t.dim() != 4 or not t.is_floating_point() for t in tensors) \
                or len({t.shape[1] for t in tensors}) != 1 or key.shape[-1] != head_dim \
                or not 0 < head_dim <= _FUSED_MAX_HEAD_DIM or head_dim % _FUSED_HEAD_DIM_MULTIPLE:
            return None
        bias = attn_mask
        if bias is not None and bias.dtype == torch.bool:
            bias = torch.zeros(bias.shape, dtype=query.dtype, device=query.device).masked_fill(
                bias.logical_not(), float("-inf"))
        return efficient(query, key, value, bias, True, dropout_p, is_causal, scale=scale)[0]

    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return fused(*args, **kwargs)
        except (TypeError, RuntimeError, NotImplementedError):  # arguments the kernel refuses
            return None

    return guarded


# torch.autocast's op lists for CUDA (aten/src/ATen/autocast_mode.cpp): the ops that run in the
# lower precision, and those that run in float32 (including the "fp32_set_opt_dtype" ones:
# softmax, sum, ... compute and return float32 when given no dtype).  Named as the Python
# functions and Tensor methods that reach them.
AUTOCAST_LOWER = frozenset({
    "linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv",
    "addr", "mv", "einsum", "chain_matmul", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "conv_tbc", "prelu", "scaled_dot_product_attention",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"})
AUTOCAST_FP32 = frozenset({
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
    "rsqrt", "sinh", "tan", "pow", "__pow__", "softplus", "layer_norm", "group_norm", "norm",
    "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "cross_entropy",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm",
    "logsumexp", "interpolate", "softmax", "log_softmax", "prod", "cumprod", "cumsum", "sum"})


@contextlib.contextmanager
def autocast_like(torch: Any, dtype: Any) -> Iterator[None]:
    """``torch.autocast`` as CUDA runs it, for tensors of any device (it does not run on meta):
    inside the block the ops of :data:`AUTOCAST_LOWER` get their float32 arguments cast to
    ``dtype`` and those of :data:`AUTOCAST_FP32` their half-precision ones cast to float32;
    the casts of leaf tensors that require grad (the weights) are cached for the block, as
    autocast caches them.  The casts are made above autograd, so what the ops save for
    backward (the half-precision weight copies, LayerNorm's float32 input) is what a GPU keeps."""
    from torch.overrides import TorchFunctionMode

    cache: dict[int, tuple[Any, Any]] = {}
    half = (torch.float16, torch.bfloat16)

    def cast(obj: Any, to: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            if not obj.is_floating_point() or obj.dtype == torch.float64 or obj.dtype == to:
                return obj
            if to == torch.float32 and obj.dtype not in half:
                return obj
            if to != torch.float32 and obj.dtype != torch.float32:
                return obj
            if to != torch.float32 and obj.requires_grad and obj.is_leaf:
                hit = cache.get(id(obj))
                if hit is not None and hit[0] is obj:
                    return hit[1]
                cache[id(obj)] = (obj, obj.to(to))
                return cache[id(obj)][1]
            return obj.to(to)
        if isinstance(obj, (list, tuple)) and any(isinstance(o, torch.Tensor) for o in obj):
            return type(obj)(cast(o, to) for o in obj)
        return obj

    class Autocast(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            to = dtype if name in AUTOCAST_LOWER else torch.float32 if name in AUTOCAST_FP32 else None
            if to is not None and not (to == torch.float32 and kwargs.get("dtype") is not None):
                args = tuple(cast(a, to) for a in args)
                kwargs = {k: cast(v, to) for k, v in kwargs.items()}
            return func(*args, **kwargs)

    try:
        with Autocast():
            yield
    finally:
        cache.clear()


def _tensors(torch: Any, obj: Any) -> list[Any]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(torch, o)]
    return []


def storage_bytes(tensors: Any) -> int:
    seen = StorageSet(on_free=False)
    for t in tensors:
        seen.add(t)
    return seen.total


def measure(torch: Any, model: Any, specs: list[shapes.InputSpec], device: str,
            high: int | None, options: dict[str, Any]) -> dict[str, Any]:
    """The memory of one training step of ``model`` (see the module's docstring), as JSON."""
    precision = options.get("precision", "fp32")
    checkpointing = bool(options.get("checkpointing"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise JobError("no-trainable", "the memory plan needs a trainable parameter; every "
                       "parameter of the model has requires_grad=False")
    half = {"bf16": torch.bfloat16, "bf16-master": torch.bfloat16, "bf16-mixed": torch.bfloat16,
            "fp16-amp": torch.float16}.get(precision)
    if precision == "bf16":
        model.to(torch.bfloat16)
    step_events: list[tuple[int, int | None]] = []
    optimizer_bytes, step_extra, impl = optimizer_state(torch, model, options.get("optimizer", "adamw"),
                                                        options.get("optimizer_impl", "auto"), step_events)
    # the weights the optimizer steps: fp32, except in pure bf16
    stepped_trainable = storage_bytes(trainable)
    held = _storage_sizes([*model.parameters(), *model.buffers()])  # on the GPU all along
    if precision == "bf16-master":
        held = _storage_sizes([*model.parameters(), *model.buffers()], half=True) + _storage_sizes(trainable)
    master = stepped_trainable if precision == "bf16-master" else 0
    autocast = half if precision in ("fp16-amp", "bf16-mixed") else None
    if half is not None and autocast is None:
        model.to(half)
        name = str(half).replace("torch.", "")  # the inputs as the training loop casts them
        specs = [shapes.InputSpec(s.shape, name if s.dtype in FLOAT_INPUTS else s.dtype) for s in specs]
    # under autocast (autocast_like) the weights and gradients stay float32, the inputs too
    weights, grads, grads_fix = storage_bytes(model.parameters()), storage_bytes(trainable), 0
    blocks = repeated_blocks(model)
    batch = specs[0].shape[0] if specs and specs[0].shape else None
    sizes = [batch, 2 * batch] if batch else [None]
    record: dict[str, Any] = {}
    runs = [one_step(torch, model, with_batch(specs, batch, size), device, high,
                     blocks if checkpointing else [], record if i == 0 else None, autocast)
            for i, size in enumerate(sizes)]
    simulated = simulate_allocator(held, record["events"], record["split"], step_events)
    out = {
        "precision": precision, "optimizer": options.get("optimizer", "adamw"),
        "optimizer_impl": impl, "optimizer_impl_asked": options.get("optimizer_impl", "auto"),
        "optimizer_impl_source": options.get("optimizer_impl_source"),
        "checkpointing": checkpointing, "weight_bytes": weights, "master_bytes": master,
        "grad_bytes": grads, "optimizer_bytes": optimizer_bytes, "step_extra_bytes": step_extra,
        "buffer_bytes": storage_bytes(model.buffers()),
        "batches": sizes if batch else [],
        "activation_bytes": [r[0] for r in runs], "backward_peak_bytes": [r[1] + grads_fix for r in runs],
        "blocks": len(blocks),
        "block_weight_bytes": max((storage_bytes(b.parameters()) for b in blocks), default=0),
        # at the first batch size: where forward and backward peaked, and the caching allocator
        # replayed over the step (torchlint.trace.allocator)
        "fwd_bwd_peak_phase": "forward" if record["forward_peak"] >= runs[0][1] else "backward",
        "allocator": simulated,
    }
    if blocks and not checkpointing:
        saved, peak = one_step(torch, model, specs, device, high, blocks, autocast=autocast)
        out["checkpointed"] = {"activation_bytes": saved, "backward_peak_bytes": peak + grads_fix}
    return out


def _storage_sizes(tensors: Any, half: bool = False) -> list[int]:
    """Each distinct storage's bytes (halved with ``half``: the bf16 copy of fp32 weights)."""
    seen = StorageSet(on_free=False, events=[])
    for t in tensors:
        seen.add(t)
    return [size // 2 if half else size for _serial, size in seen.events or [] if size is not None]


def simulate_allocator(held: list[int], step: list[tuple[int, int | None]], split: int,
                       optimizer: list[tuple[int, int | None]]) -> dict[str, int]:
    """PyTorch's caching allocator (:mod:`torchlint.trace.allocator`) over two training steps:
    ``held`` (weights, buffers, master weights) and the optimizer's state allocated first,
    then each step's forward and backward (``step[:split]``), the optimizer step's
    temporaries and the frees that end the step (the gradients).  Its peaks: allocated (each
    block rounded as the allocator rounds it) and reserved."""
    from torchlint.trace import allocator

    freed = {serial for serial, size in optimizer if size is None}
    state = [size for serial, size in optimizer if size is not None and serial not in freed]
    temporaries = [e for e in optimizer if e[0] in freed]
    alloc = allocator.Allocator()
    for i, size in enumerate([*held, *state]):
        alloc.malloc(("held", i), size)
    for repeat in range(2):
        for part, events in (("step", step[:split]), ("optimizer", temporaries), ("step", step[split:])):
            for serial, size in events:
                key = (repeat, part, serial)
                if size is None:
                    alloc.free(key)
                else:
                    alloc.malloc(key, size)
    return {"allocated_peak_bytes": alloc.peak_allocated, "reserved_peak_bytes": alloc.peak_reserved}


def with_batch(specs: list[shapes.InputSpec], batch: int | None, size: int | None) -> list[shapes.InputSpec]:
    """``specs`` with the batch dimension (the first, where it equals the first input's) set to ``size``."""
    if batch is None or size == batch:
        return specs
    return [shapes.InputSpec([size, *s.shape[1:]] if s.shape and s.shape[0] == batch else list(s.shape),
                             s.dtype) for s in specs]


@contextlib.contextmanager
def as_on_cuda(torch: Any) -> Iterator[bool]:
    """Inside the block ``torch.optim`` takes meta (and cpu) tensors for CUDA ones when it picks its
    implementation: an optimizer left to choose (``foreach=None, fused=None``) runs the one it
    runs on a GPU (``_default_to_fused_or_foreach``: foreach for Adam, AdamW, SGD, RMSprop and
    the others that have it; never fused by default; the for-loop for Adafactor), and
    ``fused=True`` is accepted (the fused kernels have meta implementations).  Yields False
    where this torch lacks the private functions patched (its own choice on meta then stands)."""
    try:
        import torch.optim.optimizer as optim_module
    except ImportError:  # pragma: no cover - every torch with torch.optim has it
        yield False
        return
    names = ("_get_foreach_kernels_supported_devices", "_get_fused_kernels_supported_devices")
    saved = {n: getattr(optim_module, n) for n in names if callable(getattr(optim_module, n, None))}

    def with_meta(original: Callable[[], Any]) -> Callable[[], list[str]]:
        return lambda: [*original(), "meta", "cpu"]

    for name, original in saved.items():
        setattr(optim_module, name, with_meta(original))
    try:
        yield len(saved) == len(names)
    finally:
        for name, original in saved.items():
            setattr(optim_module, name, original)


def _implementation_kwargs(cls: Any, impl: str) -> dict[str, Any]:
    """The constructor keywords that ask ``cls`` for ``impl`` (none for "auto", or where the
    class has no such keyword)."""
    import inspect

    try:
        accepted = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return {}
    wanted = {"foreach": {"foreach": True}, "for-loop": {"foreach": False},
              "fused": {"fused": True}}.get(impl, {})
    return {k: v for k, v in wanted.items() if k in accepted}


def optimizer_state(torch: Any, model: Any, name: str, impl: str = "auto",
                    events: list[tuple[int, int | None]] | None = None) -> tuple[int, int, str]:
    """(bytes of the optimizer's state after one step, the step's temporaries beyond it, the
    implementation that ran: "foreach", "fused" or "for-loop").  ``impl`` "auto" runs what
    PyTorch picks for CUDA tensors (:func:`as_on_cuda`); "foreach", "for-loop" and "fused"
    what the training code asks with ``foreach=``/``fused=``.  The foreach step holds one
    more copy of the state's size (``torch._foreach_sqrt`` of every ``exp_avg_sq`` at once,
    for Adam), the for-loop one parameter's temporaries at a time, the fused kernel none."""
    cls_name, kwargs = OPTIMIZERS[name]
    cls = getattr(torch.optim, cls_name, None)
    if cls is None:
        raise JobError("bad-optimizer", f"torch {torch.__version__} has no torch.optim.{cls_name}")
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.zeros_like(p)
    asked = _implementation_kwargs(cls, impl)
    try:
        try:
            size, extra, ops = _step_once(torch, cls, params, {**kwargs, **asked}, events)
        except RuntimeError:
            if "fused" not in asked:
                raise
            # a fused kernel without a meta implementation (SGD's, Adagrad's): its state is the
            # for-loop's, and the kernel updates every tensor in place (no temporaries)
            if events is not None:
                events.clear()
            size, _extra, ops = _step_once(torch, cls, params, {**kwargs, "foreach": False}, events)
            if events is not None:  # the fused kernel's step: the state, no temporaries
                freed = {serial for serial, size in events if size is None}
                events[:] = [e for e in events if e[0] not in freed]
            return size, 0, "fused"
        if "fused" in asked:
            return size, extra, "fused"
        if "foreach" in asked:
            return size, extra, "foreach" if asked["foreach"] else "for-loop"
        return size, extra, "foreach" if any(op.startswith("_foreach_") for op in ops) else "for-loop"
    except RuntimeError as exc:
        raise JobError("optimizer-failed", f"torch.optim.{cls_name} could not step on "
                       f"{params[0].device.type}: {exc}") from None
    finally:
        for p in params:
            p.grad = None


def _step_once(torch: Any, cls: Any, params: list[Any], kwargs: dict[str, Any],
               events: list[tuple[int, int | None]] | None = None) -> tuple[int, int, set[str]]:
    """Build the optimizer (as it is built for CUDA tensors) and step it once: (its state's
    bytes, the step's temporaries beyond them, the ops the step ran)."""
    with as_on_cuda(torch):
        try:
            optimizer = cls(params, **kwargs)
        except ValueError as exc:
            raise JobError("bad-optimizer", f"torch.optim.{cls.__name__}({kwargs}): {exc}") from None
        inner: list[tuple[int, int | None]] = []  # the state's frees, when the optimizer goes, stay out
        with tracking_live(torch, ops=True, events=inner) as live:
            try:
                optimizer.step()
            except RuntimeError:
                if len(optimizer.state) < len(params) or any(
                        op.startswith("_fused_") for op in live.ops) or kwargs.get("fused"):
                    raise  # failed before making its state, or a fused kernel failed
        if events is not None:
            events.extend(inner)
    device = params[0].device
    state = [t for s in optimizer.state.values() for t in s.values()
             if isinstance(t, torch.Tensor) and t.device == device]
    size = storage_bytes(state)
    return size, max(0, live.peak - size), live.ops


def training_kwargs(model: Any) -> dict[str, Any]:
    """The keywords a training step passes where ``forward`` takes them: ``use_cache=False``
    (Hugging Face models make a KV cache by default, which training never reads, and which a
    checkpointed block's recomputation would append to a second time)."""
    import inspect

    try:
        accepted = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return {}
    return {"use_cache": False} if "use_cache" in accepted else {}


def one_step(torch: Any, model: Any, specs: list[shapes.InputSpec], device: str,
             high: int | None, checkpoint_blocks: list[Any], record: dict[str, Any] | None = None,
             autocast: Any = None) -> tuple[int, int]:
    """Forward and backward once: (bytes saved for backward, peak bytes alive), parameters
    and buffers not counted in either.  With ``record``, also its ``forward_peak`` (the most
    alive before backward), ``events`` (every allocation and free, in order, as
    :class:`StorageSet` records them) and ``split`` (how many of them came before the step
    ended: the rest are frees when the gradients and outputs are dropped)."""
    events: list[tuple[int, int | None]] | None = [] if record is not None else None
    persistent = StorageSet(on_free=False)
    for t in (*model.parameters(), *model.buffers()):
        persistent.add(t)
    saved = StorageSet(on_free=False)

    def pack(t: Any) -> Any:
        if t not in persistent:
            saved.add(t)
        return t

    ctx = torch.device(device) if device != "cpu" else contextlib.nullcontext()

    def attention() -> Any:
        return fused_attention(torch) if device == "meta" else contextlib.nullcontext()

    def casting() -> Any:
        return autocast_like(torch, autocast) if autocast is not None else contextlib.nullcontext()

    @contextlib.contextmanager
    def recompute() -> Iterator[None]:  # a checkpointed block's recomputation: the forward's attention
        with attention(), casting():  # and casts (entered when the recomputation runs, not when made)
            yield

    was_training = model.training
    model.train()
    try:
        with ctx, attention(), meta_as_fake(torch), tracking_live(torch, events=events) as live, \
                torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), \
                checkpointed(torch, checkpoint_blocks, saved, persistent, recompute):
            inputs = make_inputs(torch, specs, device, high)
            with casting():
                outputs = model(*inputs, **training_kwargs(model))
            del inputs
            forward_peak = live.peak
            if backward_from_outputs(outputs, "sum") is None:
                raise LossError("no output of the model depends on a trainable parameter: there is "
                                "nothing to differentiate")
            del outputs
        if record is not None:
            record.update(forward_peak=forward_peak, events=events, split=len(events or []))
        return saved.total, live.peak
    finally:
        for p in model.parameters():
            p.grad = None
        model.train(was_training)


@contextlib.contextmanager
def checkpointed(torch: Any, blocks: list[Any], saved: StorageSet, persistent: StorageSet,
                 recompute: Callable[[], Any] = contextlib.nullcontext) -> Iterator[None]:
    """Activation checkpointing on each of ``blocks`` (non-reentrant ``torch.utils.checkpoint``);
    the inputs each block keeps for its recomputation count as saved. ``recompute`` makes the
    context the recomputation in backward runs in (the forward's own, :func:`fused_attention`)."""
    from torch.utils.checkpoint import checkpoint

    def contexts() -> tuple[Any, Any]:
        return contextlib.nullcontext(), recompute()

    def wrap(forward: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            for t in _tensors(torch, list(args) + list(kwargs.values())):
                if t not in persistent:
                    saved.add(t)
            return checkpoint(forward, *args, use_reentrant=False, preserve_rng_state=False,
                              context_fn=contexts, **kwargs)
        return run

    for block in blocks:
        block.forward = wrap(block.forward)
    try:
        yield
    finally:
        for block in blocks:
            del block.forward


def repeated_blocks(model: Any) -> list[Any]:
    """The blocks to checkpoint: the children of the outermost ``ModuleList``/``Sequential``
    whose children are two or more modules of one class with parameters (transformer layers,
    ResNet stages)."""
    import torch

    found: list[Any] = []
    skip: set[int] = set()
    for mod in model.modules():
        if id(mod) in skip:
            for child in mod.children():
                skip.add(id(child))
            continue
        if not isinstance(mod, (torch.nn.ModuleList, torch.nn.Sequential)):
            continue
        children = list(mod.children())
        kinds = {type(c) for c in children}
        if len(children) >= 2 and len(kinds) == 1 and any(True for _ in children[0].parameters()):
            found += children
            skip.update(id(c) for c in children)
    return found
