"""What a call does to the random number generators: which global generator (torch,
Python's ``random``, numpy's) a library function seeds, which calls draw from an unseeded
global generator, and which functions read like seeding helpers. Recognisers of one name
or call at a time, shared by TL006 and the project index."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.libraries import LIGHTNING_ROOTS, UTILITY_ROOTS
from torchlint.torch_api import is_false_literal

TORCH, RANDOM, NUMPY = "torch", "random", "numpy"
ALL_GENERATORS = (TORCH, RANDOM, NUMPY)

# torch.manual_seed, torch.cuda.manual_seed(_all), torch.random.manual_seed, other backends.
_TORCH_SEED = re.compile(r"^torch(\.(cuda|random|xpu|mps|npu|hpu|mlu))?\.manual_seed(_all)?$")
# Library seeders that seed Python's random, numpy and torch together.
_SEED_ALL = {
    "transformers.set_seed", "transformers.trainer_utils.set_seed", "transformers.enable_full_determinism",
    "transformers.trainer_utils.enable_full_determinism", "accelerate.utils.set_seed",
    "accelerate.utils.random.set_seed",
}
PY_RANDOM_USES = {
    "random", "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "triangular",
    "betavariate", "paretovariate", "weibullvariate", "getrandbits", "randbytes", "binomialvariate",
}
# numpy.random attributes that are not draws from the global generator.
NUMPY_NOT_USES = {
    "seed", "default_rng", "RandomState", "Generator", "SeedSequence", "get_state", "set_state",
    "BitGenerator", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "bit_generator", "mtrand",
}
# Roots whose functions can never be a project seed helper: classified by name, never resolved.
EXTERNAL_ROOTS = UTILITY_ROOTS | {"torch"}
# Method names that seed one generator object, not the global torch generator
# (torch.Generator().manual_seed, rng.seed, env.seed).
OBJECT_SEED_METHODS = {"seed", "manual_seed", "initial_seed", "manual_seed_all"}
_RANDOM_SPLIT = {"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"}


def seedish(name: str) -> bool:
    """A name that reads like a seeding helper: set_seed, seed_everything, fix_seed, init_seeds."""
    low = name.lower()
    return "seed" in low and not low.startswith(("get", "_get", "initial", "worker_init")) and low != "seed_worker"


def known_generators(qualified: str) -> set[str] | None:
    """What a library function seeds, for names torchlint knows (None: not a known library
    name, resolve it through the project or by its name)."""
    root, _, rest = qualified.partition(".")
    last = qualified.rsplit(".", 1)[-1]
    if root in LIGHTNING_ROOTS:
        return set(ALL_GENERATORS) if last == "seed_everything" else None
    if qualified in _SEED_ALL:
        return set(ALL_GENERATORS)
    if root == "torch":
        return {TORCH} if _TORCH_SEED.match(qualified) else set()
    if root == "random":
        return {RANDOM} if rest == "seed" else set()
    if root == "numpy":
        return {NUMPY} if rest == "random.seed" else set()
    if root in EXTERNAL_ROOTS:
        return set()
    return None


def random_use(qualified: str) -> str | None:
    """``random`` / ``numpy`` when the call draws from that global generator."""
    if qualified.startswith("random."):
        return RANDOM if qualified[7:] in PY_RANDOM_USES else None
    if qualified.startswith("numpy.random."):
        rest = qualified[13:]
        return NUMPY if "." not in rest and rest not in NUMPY_NOT_USES else None
    return None


def display_use(qualified: str) -> str:
    """How a message names a draw: ``np.random.permutation``, ``random.shuffle``."""
    return "np.random." + qualified[13:] if qualified.startswith("numpy.random.") else qualified


def unseeded_random_split(qualified: str, call: cst.Call) -> bool:
    """``random_split(ds, lengths)`` drawing from torch's global generator (no ``generator``)."""
    if qualified not in _RANDOM_SPLIT:
        return False
    return not any(a.keyword is not None and a.keyword.value == "generator" for a in call.args) and \
        sum(1 for a in call.args if a.keyword is None and not a.star) < 3


def shuffling_loader(qualified: str, call: cst.Call) -> bool:
    """``DataLoader(ds, shuffle=<not False>)``: its order is drawn from torch's global generator."""
    if qualified not in ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"):
        return False
    return any(a.keyword is not None and a.keyword.value == "shuffle" and not is_false_literal(a.value)
               for a in call.args)
