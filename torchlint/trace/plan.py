"""The memory plan: what the child measured (:mod:`torchlint.trace.child.memory`), per rank
under a sharding, against a target accelerator; the verdict, the largest batch size that
fits and what to change when it does not.

Per rank, with ``n`` ranks (the figures are the child's, at the input's batch size):

* ``ddp``: nothing is sharded; DDP's gradient buckets hold a second copy of the gradients
  when ``n > 1`` (``gradient_as_bucket_view=False``, the default).
* ``zero1``: the optimizer state and the fp32 master weights are split ``n`` ways;
  ``zero2`` the gradients too; ``zero3``/``fsdp`` the weights too, with one repeated block's
  weights gathered at a time (the whole model when it has no repeated blocks).
* The step's peak is the larger of the backward peak (weights, master, optimizer state and
  the measured peak of what forward and backward keep alive, less the gradients other ranks
  hold) and the optimizer step (weights, master, optimizer state, gradients and the step's
  measured temporaries).

Activations grow linearly with the batch: the child measured two batch sizes, which gives
the slope and the largest batch size that fits.

The peak is the allocated peak (what ``torch.cuda.max_memory_allocated()`` counts), with its
phase (forward, backward, optimizer step).  The reserved peak adds what the child's replay of
PyTorch's caching allocator (:mod:`torchlint.trace.allocator`) reserved beyond the allocated
peak at the measured batch size on one GPU; at another batch size or under a sharding that
overhead is carried over unchanged (an estimate).  The CUDA context is
:data:`CUDA_CONTEXT_BYTES`, a measured figure with its source.  Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# --optimizer NAME -> (torch.optim class name, constructor keywords)
OPTIMIZERS: dict[str, tuple[str, dict[str, Any]]] = {
    "adamw": ("AdamW", {}), "adam": ("Adam", {}), "sgd": ("SGD", {"lr": 0.01}),
    "sgd-momentum": ("SGD", {"lr": 0.01, "momentum": 0.9}), "adafactor": ("Adafactor", {}),
    "adagrad": ("Adagrad", {}), "rmsprop": ("RMSprop", {}), "adamax": ("Adamax", {}),
    "nadam": ("NAdam", {}), "radam": ("RAdam", {}), "adadelta": ("Adadelta", {}),
}
# How the optimizer's step runs: "auto" as PyTorch picks it for CUDA tensors (foreach where the
# optimizer has it, never fused by default); the others as the training code asks with
# ``foreach=True``/``foreach=False``/``fused=True``.
OPTIMIZER_IMPLS = ("auto", "foreach", "for-loop", "fused")
PRECISIONS = ("fp32", "bf16", "fp16-amp", "bf16-mixed", "bf16-master")
# Lightning's names for the same setups (``Trainer(precision=...)``): "bf16-mixed" means there
# what it means here, fp32 weights with bf16 autocast; bf16 weights with an fp32 master copy
# (DeepSpeed's and Megatron's bf16) is "bf16-master", which Lightning has no name for.
PRECISION_ALIASES = {"32": "fp32", "32-true": "fp32", "bf16-true": "bf16", "16-mixed": "fp16-amp",
                     "16": "fp16-amp"}
# The precisions that keep fp32 weights, gradients and optimizer state and run the forward
# and backward under autocast.
AUTOCAST = ("fp16-amp", "bf16-mixed")
# The CUDA context: what the driver, the kernels and cuBLAS/cuDNN hold on the GPU before the
# first tensor, outside torch.cuda.memory_reserved().  The one public measurement found:
# 141,426,688 bytes on a Tesla T4, torch 2.11.0+cu128 (CUDA 12.8), after initialisation, a first
# cuBLAS matmul and a first cuDNN convolution (mem_get_info() less memory_reserved()), in
# highwaterlabs/torch-preflight tests/calibration/measured_cuda.json.  It differs by GPU, driver
# and CUDA version: a figure to leave room for, not a bound.
CUDA_CONTEXT_BYTES = 141_426_688
CUDA_CONTEXT_SOURCE = "a Tesla T4's, torch 2.11 + CUDA 12.8 (torch-preflight's measured_cuda.json)"
# How far the plan's allocated peak was from torch.cuda.max_memory_allocated() where it was
# checked (benchmarks/memory_plan_cuda.py on an H200, benchmarks/memory_measured.py against
# public T4 runs); see the README's memory-plan section.
ERROR_BAND = ("error band, from the benchmarks: allocated peak within 15% of real fp32 and bf16 steps on "
              "an H200; fp16-amp Hugging Face steps on a T4 (public runs) 1-8% low, up to 26% low where "
              "the GPU kept the attention matrix and the plan assumed a fused SDPA kernel")
SHARDINGS = ("none", "ddp", "zero1", "zero2", "zero3", "fsdp")
MAX_WORLD = 4096


def human_bytes(n: int | float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


@dataclass
class Target:
    label: str  # "NVIDIA H100 (80 GiB)" or "a GPU with 80.0 GiB"
    capacity: int  # bytes per accelerator


@dataclass
class Setup:
    sharding: str = "none"
    world_size: int = 1
    batch: int | None = None  # None: the measured batch size


def _line(points: list[int], batches: list[int]) -> tuple[float, float]:
    """(intercept, slope) of the line through the two measured points."""
    if len(points) < 2 or len(batches) < 2 or batches[1] == batches[0]:
        return float(points[0]), 0.0
    slope = (points[1] - points[0]) / (batches[1] - batches[0])
    return points[0] - slope * batches[0], slope


def per_rank(m: dict[str, Any], setup: Setup) -> dict[str, int]:
    """Each component's bytes on one rank, and the step's ``peak``."""
    n = max(1, setup.world_size)
    sharding = setup.sharding
    batches = m.get("batches") or []
    batch = setup.batch if setup.batch is not None else (batches[0] if batches else None)
    a0, a1 = _line(m["activation_bytes"], batches)
    f0, f1 = _line(m["backward_peak_bytes"], batches)
    activations = a0 + a1 * (batch or 0)
    backward = f0 + f1 * (batch or 0)
    weights, grads = m["weight_bytes"], m["grad_bytes"]
    master, optimizer, extra = m["master_bytes"], m["optimizer_bytes"], m["step_extra_bytes"]
    if sharding in ("zero1", "zero2", "zero3", "fsdp"):
        optimizer, master, extra = optimizer / n, master / n, extra / n
    if sharding in ("zero2", "zero3", "fsdp"):
        grads = grads / n
    if sharding in ("zero3", "fsdp"):
        gathered = m["block_weight_bytes"] if m.get("blocks") else weights - weights / n
        weights = weights / n + gathered
    buckets = m["grad_bytes"] if sharding in ("none", "ddp") and n > 1 else 0
    held = weights + master + optimizer + m["buffer_bytes"] + buckets
    backward_peak = held + backward - (m["grad_bytes"] - grads)
    step_peak = held + grads + extra
    peak = max(backward_peak, step_peak)
    out: dict[str, Any] = {k: int(math.ceil(v)) for k, v in {
        "weights": weights, "master": master, "gradients": grads, "optimizer": optimizer,
        "buffers": m["buffer_bytes"], "ddp_buckets": buckets, "activations": activations,
        "backward_peak": backward_peak, "step_peak": step_peak, "peak": peak}.items()}
    out["peak_phase"] = "optimizer step" if step_peak > backward_peak else m.get("fwd_bwd_peak_phase", "backward")
    alloc = m.get("allocator")
    if alloc:  # the caching allocator's segments beyond what is allocated, replayed at the measured batch
        out["reserved_peak"] = out["peak"] + max(0, alloc["reserved_peak_bytes"] - alloc["allocated_peak_bytes"])
    return out


def largest_batch(m: dict[str, Any], setup: Setup, capacity: int) -> int | None:
    """The largest batch size whose peak fits in ``capacity`` (0: none does; None: the
    activations do not grow with the batch, so the batch size is not the limit)."""
    base = per_rank(m, Setup(setup.sharding, setup.world_size, 0))
    if base["peak"] > capacity:
        return 0
    slope = _line(m["backward_peak_bytes"], m.get("batches") or [])[1]
    if slope <= 0:
        return None
    return int((capacity - base["backward_peak"]) // slope)


def smallest_world(m: dict[str, Any], sharding: str, batch: int | None, capacity: int) -> int | None:
    """The fewest ranks on which ``sharding`` fits at this batch size (None: not up to MAX_WORLD)."""
    n = 2
    while n <= MAX_WORLD:
        if per_rank(m, Setup(sharding, n, batch))["peak"] <= capacity:
            return n
        n = n + 1 if n < 16 else n * 2
    return None


def in_bf16(m: dict[str, Any]) -> dict[str, Any]:
    """The measurement as pure bf16 would give it: fp32 parts halved, no master copy
    (an estimate from the measured figures, not a measurement)."""
    full = m["precision"] in ("fp32", *AUTOCAST)
    halve = (lambda v: v // 2) if full else (lambda v: v)
    out = dict(m, precision="bf16", master_bytes=0, weight_bytes=halve(m["weight_bytes"]),
               grad_bytes=halve(m["grad_bytes"]), optimizer_bytes=m["optimizer_bytes"] // 2,
               step_extra_bytes=m["step_extra_bytes"] // 2,
               block_weight_bytes=halve(m["block_weight_bytes"]))
    if m["precision"] == "fp32":
        out["activation_bytes"] = [v // 2 for v in m["activation_bytes"]]
        out["backward_peak_bytes"] = [v // 2 for v in m["backward_peak_bytes"]]
    elif m["precision"] in AUTOCAST:  # its backward peak held fp32 gradients
        out["backward_peak_bytes"] = [v - m["grad_bytes"] // 2 for v in m["backward_peak_bytes"]]
    return out


def advice(m: dict[str, Any], setup: Setup, capacity: int) -> list[dict[str, Any]]:
    """What to change, each with its peak per rank: checkpointing, a smaller batch, zero3, bf16."""
    out: list[dict[str, Any]] = []

    def add(change: str, flags: str, mm: dict[str, Any], s: Setup, note: str = "") -> None:
        peak = per_rank(mm, s)["peak"]
        out.append({"change": change, "flags": flags, "peak_bytes": peak, "fits": peak <= capacity,
                    "note": note})

    ckpt = m.get("checkpointed")
    if ckpt and not m.get("checkpointing"):
        batches = m.get("batches") or []
        measured = dict(m, activation_bytes=[ckpt["activation_bytes"]],
                        backward_peak_bytes=[ckpt["backward_peak_bytes"]], batches=batches[:1])
        add(f"activation checkpointing of the {m['blocks']} repeated blocks", "--checkpointing",
            measured, Setup(setup.sharding, setup.world_size, batches[0] if batches else None))
    batch = setup.batch or (m.get("batches") or [None])[0]
    fits_batch = largest_batch(m, setup, capacity)
    if fits_batch and batch and fits_batch < batch:
        add(f"batch size {fits_batch}", "", m, Setup(setup.sharding, setup.world_size, fits_batch))
    sharded = setup.sharding if setup.sharding in ("zero3", "fsdp") else "zero3"
    here_fits = False
    if sharded != setup.sharding and setup.world_size > 1:
        add(f"ZeRO-3 / FSDP on the {setup.world_size} GPUs",
            f"--sharding zero3 --world-size {setup.world_size}", m, Setup("zero3", setup.world_size, batch))
        here_fits = out[-1]["fits"]
    n = None if here_fits else smallest_world(m, sharded, batch, capacity)
    if n is not None and n > setup.world_size:
        add(f"ZeRO-3 / FSDP on {n} GPUs", f"--sharding {sharded} --world-size {n}", m, Setup(sharded, n, batch))
    if m["precision"] != "bf16":
        add("pure bf16 weights, gradients and optimizer state", "--precision bf16", in_bf16(m),
            setup, note="estimated from this measurement")
    return out


def make_plan(m: dict[str, Any], setup: Setup, target: Target | None) -> dict[str, Any]:
    """The plan as JSON: the measurement, the per-rank figures and, with a target, the
    verdict, the largest batch size and the advice."""
    rank = per_rank(m, setup)
    plan: dict[str, Any] = {"measured": m, "sharding": setup.sharding, "world_size": setup.world_size,
                            "per_rank": rank}
    if target is not None:
        fits = rank["peak"] <= target.capacity
        plan.update({
            "gpu": target.label, "gpu_bytes": target.capacity, "fits": fits,
            "margin_bytes": target.capacity - rank["peak"],
            "largest_batch": largest_batch(m, setup, target.capacity),
            "advice": [] if fits else advice(m, setup, target.capacity),
        })
    return plan


# --------------------------------------------------------------------------- text

_PRECISION_TEXT = {
    "fp32": "fp32",
    "bf16": "pure bf16 (weights, gradients, optimizer state and activations)",
    "bf16-master": "bf16-master (bf16 weights, gradients and activations; fp32 master weights and optimizer state)",
    "bf16-mixed": "bf16-mixed (fp32 weights, gradients and optimizer state; bf16 activations under autocast)",
    "fp16-amp": "fp16-amp (fp32 weights, gradients and optimizer state; fp16 activations under autocast)",
}


def render_text(plan: dict[str, Any]) -> list[str]:
    """The plan as report lines."""

    m, rank = plan["measured"], plan["per_rank"]
    n, sharding = plan["world_size"], plan["sharding"]
    batches = m.get("batches") or []
    where = f"{n} ranks, {sharding}" if n > 1 else "one GPU, no sharding"
    out = [f"Memory plan: one training step with {m['optimizer']}{_impl_text(m)}, {_PRECISION_TEXT[m['precision']]}, "
           f"batch size {batches[0] if batches else '?'}{', activation checkpointing' if m['checkpointing'] else ''} "
           f"({where}; per GPU)"]
    rows = [("weights", rank["weights"], "")]
    if rank["master"]:
        rows.append(("fp32 master weights", rank["master"], ""))
    rows += [("gradients", rank["gradients"], ""),
             ("optimizer state", rank["optimizer"], f"{m['optimizer']}'s state after one step")]
    if rank["buffers"]:
        rows.append(("buffers", rank["buffers"], ""))
    if rank["ddp_buckets"]:
        rows.append(("DDP gradient buckets", rank["ddp_buckets"], "gradient_as_bucket_view=True saves it"))
    per_sample = _per_sample(m["activation_bytes"], batches)
    rows += [("activations", rank["activations"],
              "saved for backward" + (f", {human_bytes(per_sample)} per sample" if per_sample else "")),
             ("backward peak", rank["backward_peak"], "weights and state, and the most that forward and backward held at once"),
             ("optimizer step", rank["step_peak"],
              f"weights, gradients, state and the {m.get('optimizer_impl', 'for-loop')} step's temporaries"),
             ("peak", rank["peak"], f"allocated, as torch.cuda.max_memory_allocated counts it; in the {rank['peak_phase']}")]
    if "reserved_peak" in rank:
        rows += [("reserved peak", rank["reserved_peak"],
                  ("the caching allocator's segments, as torch.cuda.max_memory_reserved counts them; "
                   "PyTorch's block sizes replayed")),
                 ("with CUDA context", rank["reserved_peak"] + CUDA_CONTEXT_BYTES,
                  f"the context taken as {human_bytes(CUDA_CONTEXT_BYTES)}: {CUDA_CONTEXT_SOURCE}")]
    width = max(len(r[0]) for r in rows)
    for label, value, note in rows:
        out.append(f"  {label + ':':<{width + 1}} {human_bytes(value):>10}" + (f"  ({note})" if note else ""))
    if m["checkpointing"] and not m["blocks"]:
        out.append("  (--checkpointing: the model has no repeated blocks (a ModuleList or Sequential of "
                   "one class), so nothing was checkpointed)")
    out.append(f"  ({ERROR_BAND})")
    if "fits" not in plan:
        out.append("  (pass --gpu NAME or --gpu-memory SIZE for a verdict)")
        return out
    cap = plan["gpu_bytes"]
    gpu = plan["gpu"] if "iB" in plan["gpu"] else f"{plan['gpu']} ({human_bytes(cap)})"  # the label names its size
    card = rank.get("reserved_peak", rank["peak"]) + CUDA_CONTEXT_BYTES
    if plan["fits"] and card > cap:
        out.append(f"Fits on {gpu} by the allocated peak ({human_bytes(plan['margin_bytes'])} to spare), "
                   f"but not with the allocator's reserve and the CUDA context ({human_bytes(card)}): tight")
    elif plan["fits"]:
        out.append(f"Fits on {gpu}: {human_bytes(plan['margin_bytes'])} to spare by the allocated peak, "
                   f"{human_bytes(cap - card)} with the allocator's reserve and the CUDA context")
    else:
        out.append(f"Does not fit on {gpu}: {human_bytes(rank['peak'])} needed, "
                   f"{human_bytes(-plan['margin_bytes'])} short")
    largest = plan["largest_batch"]
    if largest is None:
        out.append("Largest batch size that fits: not limited by the batch (the activations do not grow with it)")
    elif largest == 0:
        out.append("Largest batch size that fits: none (weights, gradients and optimizer state alone do not fit)")
    else:
        out.append(f"Largest batch size that fits: {largest}")
    if plan.get("advice"):
        out.append("What would change it:")
        for a in plan["advice"]:
            verdict = "fits" if a["fits"] else "does not fit"
            flags = f" ({a['flags']})" if a["flags"] else ""
            note = f"; {a['note']}" if a["note"] else ""
            out.append(f"  - {a['change']}{flags}: {human_bytes(a['peak_bytes'])} per GPU, {verdict}{note}")
    return out


def _impl_text(m: dict[str, Any]) -> str:
    impl = m.get("optimizer_impl")
    if not impl:
        return ""
    if m.get("optimizer_impl_asked", "auto") == "auto":
        return f" ({impl}, as PyTorch runs it on a GPU)"
    if m.get("optimizer_impl_source"):
        return f" ({impl}, as {m['optimizer_impl_source']} asks)"
    return f" ({impl})"


def _per_sample(points: list[int], batches: list[int]) -> float:
    return _line(points, batches)[1] if points else 0.0
