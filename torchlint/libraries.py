"""ONE table of library roots (replacing the copies in TL002, TL004, TL005, TL006)."""

from __future__ import annotations

LIGHTNING_ROOTS = frozenset({"lightning", "pytorch_lightning", "lightning_fabric"})
# Libraries built on torch: their classes/functions are never project code to resolve.
TORCH_LIBRARIES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning", "lightning_fabric",
    "transformers", "accelerate", "timm", "ignite", "torchtune", "skorch", "diffusers", "peft", "bitsandbytes",
    "apex", "deepspeed", "fairscale", "torchmetrics", "datasets",
})
# Other ML frameworks: a file importing one of these (and no torch library) is not torch code.
FOREIGN_FRAMEWORKS = frozenset({"tensorflow", "keras", "jax", "flax", "sklearn", "mxnet", "paddle", "onnxruntime",
                                "xgboost", "lightgbm", "catboost"})
# The standard library and common utilities: never a project helper.
UTILITY_ROOTS = frozenset({
    "numpy", "random", "os", "sys", "math", "time", "json", "re", "logging", "typing", "collections", "functools",
    "itertools", "warnings", "pathlib", "argparse", "copy", "dataclasses", "inspect", "abc", "enum", "contextlib",
    "subprocess", "shutil", "glob", "pickle", "datetime", "builtins", "operator", "io", "tempfile", "socket",
    "threading", "multiprocessing", "uuid", "hashlib", "string", "textwrap", "traceback", "platform", "signal",
    "statistics", "struct", "queue", "heapq", "bisect", "weakref", "types", "importlib", "unittest", "pytest",
    "tqdm", "scipy", "pandas", "sklearn", "PIL", "cv2", "matplotlib",
})
LIBRARY_ROOTS = TORCH_LIBRARIES | FOREIGN_FRAMEWORKS | UTILITY_ROOTS


def root(qualified: str) -> str:
    return qualified.split(".", 1)[0]


def is_library(qualified: str) -> bool:
    """A name from a library torchlint never resolves into (not project code)."""
    return qualified.split(".", 1)[0] in LIBRARY_ROOTS  # (``root``, inlined: asked per imported callee)


def is_lightning(qualified: str) -> bool:
    return root(qualified) in LIGHTNING_ROOTS


def only_foreign(qualified_names) -> bool:
    """Imports (qualified names) of another ML framework (TensorFlow, JAX, scikit-learn, ...)
    and of no torch library: the file's models and losses are not torch's."""
    roots = {root(q) for q in qualified_names}
    return bool(roots & FOREIGN_FRAMEWORKS) and not roots & TORCH_LIBRARIES


_NN_NOT_MODULES = {"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"}


def torch_nn_class(qualified: str) -> str | None:
    """``torch.nn.Linear`` / ``torch.nn.modules.conv.Conv2d`` -> the module class's name; None
    for ``nn.Parameter``, ``nn.init.*``, ``nn.functional.*``, ``nn.utils.*``, ... (a name, no node:
    the project pass asks it about qualified bases)."""
    if not qualified.startswith("torch.nn."):
        return None
    parts = qualified[9:].split(".")
    last = parts[-1]
    if not last[:1].isupper() or last in _NN_NOT_MODULES:
        return None
    if len(parts) > 1 and parts[0] != "modules":
        return None
    return last


def is_lightning_module(qualified: str) -> bool:
    """Lightning's ``LightningModule`` (``lightning.pytorch.LightningModule``, ...)."""
    return is_lightning(qualified) and qualified.rsplit(".", 1)[-1] == "LightningModule"


def is_module_base(qualified: str) -> bool:
    """A library base that makes a class an ``nn.Module``: a ``torch.nn`` module class or
    Lightning's ``LightningModule``."""
    return torch_nn_class(qualified) is not None or is_lightning_module(qualified)
