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
    return root(qualified) in LIBRARY_ROOTS


def is_lightning(qualified: str) -> bool:
    return root(qualified) in LIGHTNING_ROOTS


def only_foreign(qualified_names) -> bool:
    """Imports (qualified names) of another ML framework (TensorFlow, JAX, scikit-learn, ...)
    and of no torch library: the file's models and losses are not torch's."""
    roots = {root(q) for q in qualified_names}
    return bool(roots & FOREIGN_FRAMEWORKS) and not roots & TORCH_LIBRARIES
