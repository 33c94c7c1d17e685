"""One module per rule (``tl001_missing_zero_grad.py`` ...), each defining one ``Rule`` subclass.

Modules are discovered by name, so adding a rule never touches a shared list.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache


@lru_cache(maxsize=1)
def _discover() -> tuple:
    from torchlint.rule import Rule

    found = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value)
    found.sort(key=lambda r: r.code)
    codes = [r.code for r in found]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(found)


def discover() -> list:
    return list(_discover())
