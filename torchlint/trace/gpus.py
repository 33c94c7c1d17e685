"""Common accelerators and their memory, for ``torchlint trace --gpu NAME``.

Memory is what the vendor sells the card with, taken as GiB (an "80 GB" H100 has 80 GiB of
HBM; ``nvidia-smi`` shows slightly less: the driver and the CUDA context take a few hundred
MiB, which the plan's margin has to cover). Sizes are written as IEC units: GiB is 2**30 bytes.
"""

from __future__ import annotations

import re

GIB = 1 << 30

# name -> (what it is, memory in GiB); names are matched without case, spaces or dashes.
ACCELERATORS: dict[str, tuple[str, float]] = {
    "a100-40": ("NVIDIA A100", 40), "a100-80": ("NVIDIA A100", 80),
    "h100": ("NVIDIA H100", 80), "h100-94": ("NVIDIA H100 NVL", 94),
    "h200": ("NVIDIA H200", 141), "b200": ("NVIDIA B200", 180),
    "gh200": ("NVIDIA GH200", 96),
    "l4": ("NVIDIA L4", 24), "l40s": ("NVIDIA L40S", 48),
    "t4": ("NVIDIA T4", 16), "v100-16": ("NVIDIA V100", 16),
    "v100-32": ("NVIDIA V100", 32), "a10g": ("NVIDIA A10G", 24),
    "a6000": ("NVIDIA RTX A6000", 48),
    "rtx3090": ("NVIDIA GeForce RTX 3090", 24), "rtx4090": ("NVIDIA GeForce RTX 4090", 24),
    "rtx5090": ("NVIDIA GeForce RTX 5090", 32),
    "mi250x": ("AMD Instinct MI250X", 128), "mi300x": ("AMD Instinct MI300X", 192),
    "tpu-v5e": ("Google TPU v5e", 16), "tpu-v5p": ("Google TPU v5p", 95),
}
# Other spellings of the same cards.
ALIASES = {"a100": "a100-80", "a10080gb": "a100-80", "a10040gb": "a100-40", "h10080gb": "h100",
           "3090": "rtx3090", "4090": "rtx4090", "5090": "rtx5090", "h100nvl": "h100-94"}


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name.lower())


_BY_KEY = {_key(name): name for name in ACCELERATORS}


def lookup(name: str) -> tuple[str, int] | None:
    """(the accelerator's description, its memory in bytes) for a table name or alias."""
    key = _key(name)
    canonical = _BY_KEY.get(key) or ALIASES.get(key)
    if canonical is None:
        return None
    name, gib = ACCELERATORS[canonical]
    return f"{name} ({gib:g} GiB)", int(gib * GIB)


def names() -> str:
    """The table's names, for an error message."""
    return ", ".join(ACCELERATORS)
