"""Benchmark: the memory plan against public peaks measured on real GPUs (no GPU needed here).

    python benchmarks/memory_measured.py          # needs torch and transformers
    python benchmarks/memory_measured.py --json   # the rows as JSON

The measured figures are other people's, published with the setup that produced them; none
of them was used to choose a constant of the plan (the plan has no fitted constant: every
figure is measured on the meta device, and the two CUDA constants of the reserved peak,
:data:`torchlint.trace.plan.CUDA_CONTEXT_BYTES` and the allocator's rounding, are documented
ones, each with its source in ``plan.py``).

Source of every case below: ``tests/calibration/measured_peaks.json`` of torch-preflight
(github.com/highwaterlabs/torch-preflight, commit 774b839), measured with its
``tests/calibration/measure_cuda.py``: a Tesla T4, torch 2.11.0+cu128, Hugging Face models
from their hub configs, ``torch.autocast("cuda", float16)`` ("amp"; no grad scaler),
``torch.optim.AdamW`` with PyTorch's defaults (foreach on CUDA), and the second of two steps
(``zero_grad(set_to_none=True)``, forward, backward, step) after
``torch.cuda.reset_peak_memory_stats()``: ``max_memory_allocated`` and ``max_memory_reserved``
of that step. The causal LM's loss is ``model(input_ids=ids, labels=ids).loss``; the encoders'
``last_hidden_state.float().pow(2).mean()``; the plan traces a wrapper whose ``forward`` is
exactly that step's forward and loss. Their two ResNet-50 runs need torchvision, which this
benchmark does not install: left out.

Each model is built from its default transformers config (``GPT2Config()``, ``BertConfig()``,
``DistilBertConfig()``: the hub checkpoints' shapes; the parameter counts are checked against
the published ones), on meta, and planned with ``--optimizer adamw --precision fp16-amp``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

GIB = 2**30
SOURCE = ("highwaterlabs/torch-preflight tests/calibration/measured_peaks.json @774b839 "
          "(Tesla T4, torch 2.11.0+cu128, fp16 autocast, AdamW foreach)")

# model, batch, sequence length, measured max_memory_allocated, max_memory_reserved, parameters
CASES = [
    ("gpt2", 4, 128, 2705153536, 3042967552, 124439808),
    ("gpt2", 8, 256, 5736883712, 6092226560, 124439808),
    ("distilbert-base-uncased", 4, 128, 1354818048, 1501560832, 66362880),
    ("distilbert-base-uncased", 8, 256, 1757328384, 1954545664, 66362880),
    ("bert-base-uncased", 4, 128, 2209738240, 2483027968, 109482240),
    ("bert-base-uncased", 8, 256, 3185408000, 3491758080, 109482240),
]


def build(name: str, attn: str = "sdpa") -> Any:
    """The measured run's training step as one module: ``forward(ids)`` returns its loss."""
    import torch
    import transformers as tf

    class CausalLMStep(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = tf.GPT2LMHeadModel(tf.GPT2Config(attn_implementation=attn))

        def forward(self, ids: Any) -> Any:
            # use_cache=False: no cache outlives the forward either way (the run dropped the
            # output at once), and a checkpointed recomputation must not append to one
            return self.model(input_ids=ids, labels=ids, use_cache=False).loss

    class EncoderStep(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any) -> Any:
            return self.model(input_ids=ids).last_hidden_state.float().pow(2).mean()

    if name == "gpt2":
        return CausalLMStep()
    if name == "bert-base-uncased":
        return EncoderStep(tf.BertModel(tf.BertConfig(attn_implementation=attn)))
    return EncoderStep(tf.DistilBertModel(tf.DistilBertConfig(attn_implementation=attn)))


def plan_case(name: str, batch: int, seq: int, attn: str = "sdpa") -> tuple[dict[str, Any], int, float]:
    """(the plan's per-rank figures, the model's parameter count, seconds it took)."""
    import torch

    from torchlint.shapes import InputSpec
    from torchlint.trace import plan
    from torchlint.trace.child import memory

    start = time.perf_counter()
    with torch.device("meta"):
        model = build(name, attn)
    params = sum(p.numel() for p in model.parameters())
    vocab = model.model.config.vocab_size
    measured = memory.measure(torch, model, [InputSpec([batch, seq], "int64")], "meta", vocab,
                              {"optimizer": "adamw", "precision": "fp16-amp"})
    return plan.make_plan(measured, plan.Setup(), None), params, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                        help="the attention the models are built with: sdpa (transformers' default, "
                             "a fused kernel on the GPU) or eager (the attention matrix kept)")
    opts = parser.parse_args()
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("needs transformers (pip install transformers, in a separate environment)")
        return 2
    rows = []
    for name, batch, seq, allocated, reserved, published in CASES:
        doc, params, seconds = plan_case(name, batch, seq, opts.attn)
        rank = doc["per_rank"]
        rows.append({
            "case": f"{name} {batch}x{seq}", "params": params, "params_published": published,
            "plan_allocated": rank["peak"], "measured_allocated": allocated,
            "allocated_error": rank["peak"] / allocated - 1,
            "plan_reserved": rank.get("reserved_peak"), "measured_reserved": reserved,
            "reserved_error": (rank["reserved_peak"] / reserved - 1) if rank.get("reserved_peak") else None,
            "phase": rank.get("peak_phase"), "seconds": seconds,
        })
    if opts.json:
        print(json.dumps({"source": SOURCE, "rows": rows}, indent=1))
        return 0
    print(f"measured: {SOURCE}; planned with {opts.attn} attention")
    print(f"{'case':<30} {'plan alloc':>10} {'measured':>10} {'error':>7} {'plan resv':>10} {'measured':>10} "
          f"{'error':>7}  phase")
    for r in rows:
        resv = (f"{r['plan_reserved'] / GIB:>10.2f} {r['measured_reserved'] / GIB:>10.2f} {r['reserved_error']:>+7.1%}"
                if r["plan_reserved"] else f"{'-':>10} {r['measured_reserved'] / GIB:>10.2f} {'-':>7}")
        print(f"{r['case']:<30} {r['plan_allocated'] / GIB:>10.2f} {r['measured_allocated'] / GIB:>10.2f} "
              f"{r['allocated_error']:>+7.1%} {resv}  {r['phase'] or '-'}"
              + ("" if r["params"] == r["params_published"] else f"  (params {r['params']} != {r['params_published']})"))
    worst = max(abs(r["allocated_error"]) for r in rows)
    print(f"largest allocated error: {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
