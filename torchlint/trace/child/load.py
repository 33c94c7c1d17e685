"""Load the target and build the model: import its file or module, find the class or
factory, check the constructor arguments and ``forward``'s arity."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from torchlint.trace.child.failure import Failed, JobError, exception_failure
from torchlint.trace.child.process import add_user_path


def load_target(target: dict[str, Any], cwd: str) -> Any:
    add_user_path(cwd)
    display = target.get("display") or target["attr"]
    if target.get("file"):
        module = import_file(Path(target["file"]))
    else:
        name = target["module"]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                raise JobError("target-not-found", f"cannot import module {name!r} "
                               f"(looked in {cwd} and sys.path)") from None
            raise Failed(exception_failure("import", exc, None, None)) from None
        except BaseException as exc:  # noqa: BLE001
            raise Failed(exception_failure("import", exc, None, None)) from None
    obj: Any = module
    for part in target["attr"].split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise JobError("target-not-found", f"{display}: {getattr(module, '__name__', '?')} has no "
                           f"attribute {target['attr']!r}") from None
        except BaseException as exc:  # noqa: BLE001 - a property that raises
            raise Failed(exception_failure("import", exc, None, None)) from None
    return obj


def import_file(path: Path) -> Any:
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    root = path.parent
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    name = ".".join(parts) if parts else path.parent.name
    add_user_path(str(root))
    existing = sys.modules.get(name)
    if existing is not None and _same_file(getattr(existing, "__file__", None), path):
        return existing
    try:
        if existing is None and "." in name:
            return importlib.import_module(name)
        if existing is None and name not in sys.stdlib_module_names:
            spec = importlib.util.spec_from_file_location(name, path)
        else:
            name = f"_torchlint_trace_{abs(hash(str(path)))}_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    except BaseException as exc:  # noqa: BLE001 - SystemExit and friends included
        raise Failed(exception_failure("import", exc, None, None)) from None


def _same_file(a: str | None, b: Path) -> bool:
    try:
        return a is not None and Path(a).resolve() == b
    except OSError:  # pragma: no cover
        return False


def constructor(obj: Any, display: str, torch: Any) -> Any:
    nn = torch.nn
    if isinstance(obj, type):
        if not issubclass(obj, nn.Module):
            raise JobError("not-a-module", f"{display} is a class but not a torch.nn.Module subclass")
        return obj
    if isinstance(obj, nn.Module):
        raise JobError("not-a-module", f"{display} is a module instance; name its class or a "
                       "factory function so torchlint can build it on the trace device")
    if callable(obj):
        return obj
    raise JobError("not-a-module", f"{display} is a {type(obj).__name__}, not an nn.Module class "
                   "or a factory function")


def check_signature(ctor: Any, args: list[Any], kwargs: dict[str, Any], display: str) -> None:
    try:
        sig = inspect.signature(ctor)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        missing = [
            p.name for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ][len(args):]
        missing = [m for m in missing if m not in kwargs]
        if missing and not args and not kwargs:
            msg = (f"{display} needs constructor arguments ({', '.join(missing)}); pass them with "
                   "--args/--kwargs (JSON) or a [tool.torchlint.trace.models] entry")
        else:
            msg = f"{display}: the constructor arguments do not fit {sig}: {exc}"
        raise JobError("needs-args", msg, missing=missing) from None


def check_arity(model: Any, count: int, inferred: bool) -> None:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    required_kw = [p for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    var = any(p.kind == p.VAR_POSITIONAL for p in params)
    if count >= len(required) and (var or count <= len(positional)) and not required_kw:
        return
    names = ", ".join(p.name for p in required + required_kw) or "no inputs"
    mtype = type(model).__name__
    if inferred:
        msg = (f"cannot infer the inputs of {mtype}.forward({names}): pass --input-shape once "
               "per input")
    else:
        noun = "shape was" if count == 1 else "shapes were"
        msg = (f"{mtype}.forward({', '.join(p.name for p in params)}) takes {len(required)} "
               f"required input(s) but {count} input {noun} given; pass --input-shape once per input")
    raise JobError("arity", msg)


def model_totals(model: Any) -> dict[str, Any]:
    params = list(model.parameters())
    buffers = list(model.buffers())
    return {
        "params": int(sum(p.numel() for p in params)),
        "trainable_params": int(sum(p.numel() for p in params if p.requires_grad)),
        "param_bytes": int(sum(p.numel() * p.element_size() for p in params)),
        "buffer_bytes": int(sum(b.numel() * b.element_size() for b in buffers)),
    }

