"""Benchmark: meta-device trace of a ~7B-parameter decoder-only transformer.

    python benchmarks/trace_7b.py            # 32 layers, hidden 4096: ~6.7 B parameters
    python benchmarks/trace_7b.py --layers 4 # quicker

Runs the real ``torchlint trace`` code path (child process, hooks, table) on
``benchmarks/trace_7b.py:llama_7b`` with the memory plan of a training step (AdamW,
bf16 weights with an fp32 master copy, one H100 80 GiB: ``--optimizer adamw --precision bf16-master --gpu h100``) and
prints the plan's verdict and advice, the wall time of the whole command, the time spent
inside the child on the model (trace, optimizer state, forward and backward at two batch
sizes and once checkpointed), and the peak RSS of the trace process.  On meta nothing is
allocated, so memory stays at the size of torch itself.

The model (LLaMA-7B-like: RMSNorm, q/k/v/o projections, SwiGLU MLP, vocab 32000, no
weight tying) is defined below so the benchmark needs nothing but torch.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# The model classes need torch; the driver (run as a script) does not import it, so the
# measured memory is only the trace's.
if __name__ != "__main__":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class RMSNorm(nn.Module):
        def __init__(self, dim: int, eps: float = 1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    class Attention(nn.Module):
        def __init__(self, dim: int, heads: int):
            super().__init__()
            self.heads = heads
            self.q_proj = nn.Linear(dim, dim, bias=False)
            self.k_proj = nn.Linear(dim, dim, bias=False)
            self.v_proj = nn.Linear(dim, dim, bias=False)
            self.o_proj = nn.Linear(dim, dim, bias=False)

        def forward(self, x):
            b, t, d = x.shape
            h = self.heads

            def split(y):
                return y.view(b, t, h, d // h).transpose(1, 2)

            q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o_proj(y.transpose(1, 2).reshape(b, t, d))

    class MLP(nn.Module):
        def __init__(self, dim: int, hidden: int):
            super().__init__()
            self.gate_proj = nn.Linear(dim, hidden, bias=False)
            self.up_proj = nn.Linear(dim, hidden, bias=False)
            self.down_proj = nn.Linear(hidden, dim, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Block(nn.Module):
        def __init__(self, dim: int, heads: int, hidden: int):
            super().__init__()
            self.input_norm = RMSNorm(dim)
            self.attn = Attention(dim, heads)
            self.post_norm = RMSNorm(dim)
            self.mlp = MLP(dim, hidden)

        def forward(self, x):
            x = x + self.attn(self.input_norm(x))
            return x + self.mlp(self.post_norm(x))

    class Transformer(nn.Module):
        def __init__(self, vocab: int = 32000, dim: int = 4096, layers: int = 32, heads: int = 32,
                     hidden: int = 11008):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.layers = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
            self.norm = RMSNorm(dim)
            self.lm_head = nn.Linear(dim, vocab, bias=False)

        def forward(self, tokens):
            x = self.embed(tokens)
            for layer in self.layers:
                x = layer(x)
            return self.lm_head(self.norm(x))


def llama_7b(layers: int = 32, dim: int = 4096):
    """Factory target: ``benchmarks/trace_7b.py:llama_7b``."""
    return Transformer(dim=dim, layers=layers, heads=max(1, dim // 128),
                       hidden=int(math.ceil(dim * 8 / 3 / 256) * 256))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--dim", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--gpu", default="h100", help="the plan's accelerator (default: h100)")
    parser.add_argument("--table", action="store_true", help="print the full trace table too")
    opts = parser.parse_args()
    cmd = [sys.executable, "-m", "torchlint.trace.command", "benchmarks/trace_7b.py:llama_7b",
           "--kwargs", json.dumps({"layers": opts.layers, "dim": opts.dim}),
           "--input-shape", f"{opts.batch},{opts.seq}", "--dtype", "int64",
           "--optimizer", "adamw", "--precision", "bf16-master", "--gpu", opts.gpu, "--format", "json"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH", "")] if p)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        print(f"trace failed with exit code {proc.returncode}")
        return 1
    doc = json.loads(proc.stdout)
    totals = doc["totals"]
    if opts.table:
        table = subprocess.run(cmd[:-2], cwd=REPO, env=env, capture_output=True, text=True)
        print(table.stdout)
    print(f"model:            {opts.layers} layers, hidden {opts.dim}, "
          f"{totals['params'] / 1e9:.2f} B parameters ({totals['param_bytes'] / 2**30:.1f} GiB in float32, "
          "none allocated)")
    print(f"input:            [{opts.batch}, {opts.seq}] int64 on meta")
    print(f"module calls:     {len(doc['calls'])}")
    print(f"activations est.: {totals['activation_bytes'] / 2**30:.2f} GiB for one training step")
    print(_plan_summary(doc["memory_plan"]))
    print(f"trace in child:   {doc['seconds']:.2f} s (build, forward with hooks, memory plan)")
    print(f"whole command:    {wall:.2f} s (incl. process start and torch import)")
    print(f"peak RSS:         {doc['peak_rss_bytes'] / 2**20:.0f} MiB in the trace child; "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB max over all "
          "processes of the command")
    return 0


def _plan_summary(plan: dict) -> str:
    """The plan's verdict and what would fit, from its JSON."""
    gib = 2 ** 30
    rank = plan["per_rank"]
    verdict = "fits" if plan["fits"] else "does NOT fit"
    lines = [f"memory plan:      {verdict} on one {plan['gpu']}: {rank['peak'] / gib:.1f} GiB per GPU "
             f"(weights {rank['weights'] / gib:.1f}, fp32 master {rank['master'] / gib:.1f}, gradients "
             f"{rank['gradients'] / gib:.1f}, AdamW state {rank['optimizer'] / gib:.1f}, activations "
             f"{rank['activations'] / gib:.1f} GiB)"]
    for advice in plan.get("advice") or []:
        lines.append(f"  {'fits' if advice['fits'] else 'no  '}  {advice['change']}: "
                     f"{advice['peak_bytes'] / gib:.1f} GiB per GPU  {advice['flags']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
