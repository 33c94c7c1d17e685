"""Describe what flows through the model (shapes and dtypes, never values) and where classes
are defined.  Shared by the tracer, the failure analysis and the diagnosis."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any


def describe(torch: Any, obj: Any, depth: int = 0) -> Any:
    if isinstance(obj, torch.Tensor):
        return {"shape": [int(s) for s in obj.shape], "dtype": str(obj.dtype).replace("torch.", "")}
    if depth > 3:
        return {"type": type(obj).__name__}
    if isinstance(obj, (list, tuple)):
        items = [describe(torch, o, depth + 1) for o in list(obj)[:8]]
        if len(obj) > 8:
            items.append({"type": f"... {len(obj) - 8} more"})
        return items
    if isinstance(obj, dict):
        return {"dict": {str(k): describe(torch, v, depth + 1) for k, v in list(obj.items())[:8]}}
    if obj is None or isinstance(obj, (bool, int, float)):
        return {"value": obj if not isinstance(obj, float) or math.isfinite(obj) else str(obj)}
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields and depth < 2:  # dataclass outputs (e.g. ModelOutput)
        try:
            return {"dict": {str(k): describe(torch, getattr(obj, k, None), depth + 1)
                             for k in list(fields)[:8]}}
        except Exception:  # noqa: BLE001
            pass
    return {"type": type(obj).__name__}


def tensors_in(torch: Any, obj: Any, depth: int = 0) -> list[Any]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth > 3:
        return []
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in tensors_in(torch, o, depth + 1)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in tensors_in(torch, o, depth + 1)]
    return []


def source_file(obj: Any) -> str | None:
    try:
        f = inspect.getsourcefile(obj)
        return str(Path(f).resolve()) if f else None
    except (TypeError, OSError):
        return None


def class_line(cls: Any) -> int | None:
    try:
        return inspect.getsourcelines(cls)[1]
    except (TypeError, OSError):
        return None

