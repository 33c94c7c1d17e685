"""Benchmark: the memory plan's predicted peak against a real training step on a CUDA GPU.

    python benchmarks/memory_plan_cuda.py          # needs torch with a CUDA GPU
    python benchmarks/memory_plan_cuda.py --dry    # the predictions only (meta device, no GPU)

For each configuration the plan is made as ``torchlint trace --optimizer ...`` makes it: the
model is built on the meta device, :func:`torchlint.trace.child.memory.measure` runs one step
there at the input's batch size and twice it, and :func:`torchlint.trace.plan.per_rank` gives
the peak, also at a batch size the child never ran (the plan's straight line).  The same model
then runs two real training steps on the GPU (forward, ``.sum()`` loss, backward, optimizer
step, gradients cleared), and the second step's ``torch.cuda.max_memory_allocated()`` is the
real peak (the input counted in both).  The table prints both and their difference; the
script exits 1 when any configuration is off by more than ``--tolerance`` (default 15%).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks"), str(REPO / "tests" / "trace" / "models")]

import planned  # noqa: E402  (tests/trace/models/planned.py)
import torch  # noqa: E402
import trace_7b  # noqa: E402  (its model classes are defined on import)

from torchlint.shapes import InputSpec  # noqa: E402
from torchlint.trace import plan  # noqa: E402
from torchlint.trace.child import memory  # noqa: E402

MiB = 2**20


def _stack(dim, depth):
    return lambda: planned.Stack(dim, depth)


def _llama(layers, dim, vocab):
    def build():
        return trace_7b.Transformer(vocab=vocab, dim=dim, layers=layers, heads=max(1, dim // 128),
                                    hidden=int(math.ceil(dim * 8 / 3 / 256) * 256))
    return build


# name, model factory, input shape (batch first) and dtype, optimizer, precision, batch the plan predicts for
CONFIGS = [
    ("MLP stack 256x4, adamw fp32", _stack(256, 4), [128, 128, 256], "float32", "adamw", "fp32", None),
    ("  same, predicted at batch 512", _stack(256, 4), [128, 128, 256], "float32", "adamw", "fp32", 512),
    ("MLP stack 512x8, sgd fp32", _stack(512, 8), [64, 128, 512], "float32", "sgd", "fp32", None),
    ("MLP stack 512x8, sgd-momentum fp32", _stack(512, 8), [64, 128, 512], "float32", "sgd-momentum", "fp32", None),
    ("MLP stack 1024x4, adamw bf16", _stack(1024, 4), [32, 256, 1024], "float32", "adamw", "bf16", None),
    ("decoder 2x512 vocab 32k, adamw fp32", _llama(2, 512, 32000), [8, 512], "int64", "adamw", "fp32", None),
    ("  same, predicted at batch 32", _llama(2, 512, 32000), [8, 512], "int64", "adamw", "fp32", 32),
    ("decoder 4x1024 vocab 32k, adam fp32", _llama(4, 1024, 32000), [4, 1024], "int64", "adam", "fp32", None),
    ("decoder 4x1024 vocab 32k, adamw bf16", _llama(4, 1024, 32000), [4, 1024], "int64", "adamw", "bf16", None),
]

_OPTIMIZERS = {
    "adamw": lambda p: torch.optim.AdamW(p), "adam": lambda p: torch.optim.Adam(p),
    "sgd": lambda p: torch.optim.SGD(p, lr=0.01),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
}


def _on(device, factory):
    torch.manual_seed(0)
    with torch.device(device):
        return factory()


def predicted(factory, shape, dtype, optimizer, precision, batch):
    """The plan's figures for one rank (``plan.per_rank``) at ``batch``."""
    measured = memory.measure(torch, _on("meta", factory), [InputSpec(list(shape), dtype)], "meta", None,
                              {"optimizer": optimizer, "precision": precision})
    return plan.per_rank(measured, plan.Setup(batch=batch))


def real(factory, shape, dtype, optimizer, precision, batch, math_attention=False):
    """The second real step's peaks: (whole step, forward and backward, optimizer step), and
    what was allocated before it (weights, optimizer state, the input)."""
    model = _on("cuda", factory)
    if precision == "bf16":
        model.to(torch.bfloat16)
    opt = _OPTIMIZERS[optimizer](model.parameters())
    size = [batch or shape[0], *shape[1:]]
    if dtype == "int64":
        x = torch.randint(0, 100, size, device="cuda")
    else:
        x = torch.randn(size, device="cuda", dtype=torch.bfloat16 if precision == "bf16" else torch.float32)
    attention = contextlib.nullcontext()
    if math_attention:  # what the meta device runs: the attention matrix is materialised
        from torch.nn.attention import SDPBackend, sdpa_kernel
        attention = sdpa_kernel(SDPBackend.MATH)
    with attention:
        for _ in range(2):  # the second step holds the optimizer state all along
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            model(x).float().sum().backward()
            torch.cuda.synchronize()
            backward = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            opt.step()
            torch.cuda.synchronize()
            step = torch.cuda.max_memory_allocated()
            opt.zero_grad(set_to_none=True)
    reserved = torch.cuda.memory_reserved()  # reserved only grows (no empty_cache): the run's most
    del model, opt, x
    torch.cuda.empty_cache()
    return {"peak": max(backward, step), "backward_peak": backward, "step_peak": step, "before": before,
            "reserved": reserved}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry", action="store_true", help="predictions only, no GPU")
    parser.add_argument("--tolerance", type=float, default=0.15)
    parser.add_argument("--breakdown", action="store_true",
                        help="also the backward and optimizer-step peaks and the reserved peak, plan against real")
    parser.add_argument("--math-attention", action="store_true",
                        help="run the real step's attention on SDPA's math kernel, as the meta device does")
    opts = parser.parse_args()
    if not opts.dry and not torch.cuda.is_available():
        print("needs a CUDA GPU (or --dry)")
        return 2
    if not opts.dry:
        print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    extra = (f" {'plan bwd':>9} {'real bwd':>9} {'plan step':>9} {'real step':>9} {'plan resv':>9} {'real resv':>9}"
             if opts.breakdown else "")
    print(f"{'configuration':<40} {'plan MiB':>10} {'real MiB':>10} {'plan/real':>10}{extra}")
    worst = 0.0
    for name, factory, shape, dtype, optimizer, precision, batch in CONFIGS:
        figures = predicted(factory, shape, dtype, optimizer, precision, batch)
        if opts.dry:
            print(f"{name:<40} {figures['peak'] / MiB:>10.1f}")
            continue
        measured = real(factory, shape, dtype, optimizer, precision, batch, opts.math_attention)
        ratio = figures["peak"] / measured["peak"]
        worst = max(worst, abs(ratio - 1))
        row = f"{name:<40} {figures['peak'] / MiB:>10.1f} {measured['peak'] / MiB:>10.1f} {ratio:>10.3f}"
        if opts.breakdown:
            row += "".join(f" {v / MiB:>9.1f}" for v in (figures["backward_peak"], measured["backward_peak"],
                                                         figures["step_peak"], measured["step_peak"],
                                                         figures.get("reserved_peak", 0), measured["reserved"]))
        print(row)
    if opts.dry:
        return 0
    print(f"largest difference: {worst:.1%} (tolerance {opts.tolerance:.0%})")
    return 0 if worst <= opts.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
