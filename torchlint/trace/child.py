"""The trace child process, started by :mod:`torchlint.trace.supervisor`.

This is the only part of torchlint that imports torch and user code.  It reads its request
(a list of jobs, and the key that signs its results) from stdin before importing anything
else, and for each job builds the model, runs forward passes with hooks and writes signed
JSON lines to the result pipe: ``{"event": "ready"}`` once torch is imported, then
``{"event": "start", "id": ...}`` and ``{"event": "result", "id": ..., ...}`` per job.  The
supervisor checks and relays them, so a crash, ``os._exit`` or hang in user code costs only
the job it happened in.
"""

from __future__ import annotations

import contextlib
import itertools
import importlib
import importlib.util
import inspect
import json
import math
import os
import re
import signal
import sys
import sysconfig
import time
import traceback
import weakref
from pathlib import Path
from typing import Any

from torchlint.trace import shapes, supervisor

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

MAX_ROWS = 20000
MAX_HISTORY = 4096
MAX_NONFINITE = 50

_TORCHLINT_DIR = str(Path(__file__).resolve().parent.parent)
_STDLIB_DIRS = {
    str(Path(p).resolve())
    for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")}
    if p
}


class JobError(Exception):
    """A problem with the job itself (bad target, needs arguments): exit 2 in the parent."""

    def __init__(self, kind: str, message: str, **extra: Any):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.extra = extra


class Failed(Exception):
    """User code failed (import, construction or forward): a failed trace, exit 1."""

    def __init__(self, failure: dict[str, Any]):
        super().__init__(failure.get("message", ""))
        self.failure = failure


# --------------------------------------------------------------------------- entry point

def main() -> None:
    request, emit = connect()
    _apply_memory_limit(request.get("memory_limit"))
    cwd = request.get("cwd") or os.getcwd()
    try:
        import torch  # noqa: F401
    except BaseException as exc:  # ImportError, or a broken install
        for job in request["jobs"]:
            emit({"event": "result", "id": job["id"], "status": "error", "error_kind": "no-torch",
                  "message": f"torch cannot be imported ({type(exc).__name__}: {exc})"})
        os._exit(0)
    if any(job.get("device", "meta") == "meta" for job in request["jobs"]):
        _warm_meta(torch)
    emit({"event": "ready", "torch": torch.__version__})
    for job in request["jobs"]:
        emit({"event": "start", "id": job["id"]})
        started = time.perf_counter()
        try:
            result = run_job(job, cwd)
        except JobError as exc:
            result = {"status": "error", "error_kind": exc.kind, "message": exc.message, **exc.extra}
        except Failed as exc:
            result = {"status": "failed", "failure": exc.failure}
        except BaseException as exc:  # noqa: BLE001 - a bug here must not lose the job
            result = {"status": "failed",
                      "failure": exception_failure("trace", exc, None, None)}
        result.update(event="result", id=job["id"], seconds=round(time.perf_counter() - started, 4),
                      peak_rss_kb=_peak_rss_kb())
        _flush_output()  # the supervisor files what was printed under this job
        try:
            emit(result)
        except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
            emit({"event": "result", "id": job["id"], "status": "failed",
                  "failure": {"phase": "trace", "message": f"unserialisable result: {exc}"}})
    _flush_output()
    os._exit(0)  # user threads or atexit hooks must not keep the child alive


def connect() -> tuple[dict[str, Any], Any]:
    """Read the request from stdin, then set the process up; return it and ``emit``.

    ``emit`` waits after a ``start`` event until the supervisor has taken it in, so that what
    the job prints is filed under the job.  Runs before torch or any user code is imported:
    the signing key only ever lives in ``emit``'s closure, stdin is replaced by /dev/null,
    the result pipe is not inherited by programs the user code runs, the child dies with its
    supervisor, and ``sys.path`` gets ``PYTHONPATH`` and site-packages after the standard
    library.
    """
    data = sys.stdin.buffer.read()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    request = json.loads(data)
    del data
    key = bytes.fromhex(request.pop("key"))
    fd, ack = request.pop("fd"), request.pop("ack")
    os.set_inheritable(fd, False)
    os.set_inheritable(ack, False)
    supervisor.die_with_parent(signal.SIGKILL, request.pop("supervisor"))
    _set_up_path(request.pop("user_site", None))
    counter = itertools.count(1)

    def emit(obj: dict[str, Any]) -> None:
        supervisor.write_all(fd, supervisor.signed_line(key, next(counter), obj))
        if obj.get("event") == "start" and not os.read(ack, 1):
            os._exit(1)  # the supervisor is gone

    return request, emit


# Where user directories (the working directory, a model's package root) go in sys.path:
# after the standard library, before PYTHONPATH and site-packages.
_USER_PATH_INDEX = [0]


def _set_up_path(user_site: bool | None) -> None:
    """sys.path as for ``python`` with PYTHONPATH set, except that the standard library comes
    first: started with ``-I -S``, the interpreter has only the standard library (and the
    bootstrap added this torchlint)."""
    import site

    stdlib = [p for p in sys.path if p != supervisor.ROOT]
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = stdlib + extra
    site.ENABLE_USER_SITE = user_site
    site.main()  # site-packages, .pth files, sitecustomize
    if supervisor.ROOT not in sys.path:  # a source checkout: torchlint is not installed
        sys.path.insert(len(stdlib) + len(extra), supervisor.ROOT)
    _USER_PATH_INDEX[0] = len(stdlib)


def _add_user_path(path: str) -> None:
    if path not in sys.path:
        sys.path.insert(_USER_PATH_INDEX[0], path)


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _peak_rss_kb() -> int:
    if resource is None:  # pragma: no cover
        return 0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss  # bytes on macOS, KiB on Linux


def _warm_meta(torch: Any) -> None:
    """Meta kernels import torch._dynamo & co. on first use (seconds): do it before the job
    clock starts, so a user's timeout only measures the user's model."""
    try:
        x = torch.empty(1, 1, 4, 4, device="meta")
        torch.nn.functional.conv2d(x, torch.empty(1, 1, 3, 3, device="meta"))
        torch.nn.functional.batch_norm(x, None, None, training=True)
    except Exception:  # noqa: BLE001 - only a warm-up
        pass


def _apply_memory_limit(limit: int | None) -> None:
    if not limit or resource is None or not hasattr(resource, "RLIMIT_AS"):
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - platform dependent
        pass


# --------------------------------------------------------------------------- one job

def run_job(job: dict[str, Any], cwd: str) -> dict[str, Any]:
    import torch

    device = job.get("device", "meta")
    check = job.get("mode") == "check"
    if device == "cuda" and not torch.cuda.is_available():
        raise JobError("no-cuda", "--device cuda needs a CUDA GPU, and torch.cuda.is_available() "
                       "is False here (use --device meta or --device cpu)")
    if device not in ("meta", "cpu", "cuda"):
        raise JobError("bad-device", f"unknown device {device!r}")

    obj = load_target(job["target"], cwd)
    ctor = constructor(obj, job["target"].get("display", job["target"]["attr"]), torch)
    args, kwargs = job.get("args") or [], job.get("kwargs") or {}
    check_signature(ctor, args, kwargs, job["target"].get("display", ""))
    torch.manual_seed(0)
    ctx = torch.device(device) if device != "cpu" else contextlib.nullcontext()
    try:
        with ctx:
            model = ctor(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001
        raise Failed(exception_failure("build", exc, None, None, device=device)) from None
    if not isinstance(model, torch.nn.Module):
        raise JobError("not-a-module", f"{job['target'].get('display')} returned "
                       f"{type(model).__name__}, not a torch.nn.Module")
    if type(model).forward is torch.nn.Module.forward:
        raise JobError("no-forward", f"{type(model).__name__} does not define forward()")

    result: dict[str, Any] = {"status": "ok", "model_type": type(model).__name__}
    result.update(model_totals(model))

    inference = None
    comment = None if job.get("inputs") else inline_shape(type(model))
    if job.get("inputs"):
        candidates = [[shapes.InputSpec(s["shape"], s.get("dtype", "float32")) for s in job["inputs"]]]
    elif comment is not None:
        candidates = [comment[0]]
        result["inputs_from_comment"] = {"file": _source_file(type(model)), "line": comment[1]}
    else:
        inference = infer_inputs(model)
        if inference is None:
            first = first_layer(model)
            what = (f"its first layer `{first[0]}` is a {type(first[1]).__name__}, which does not "
                    "tell the input shape") if first else "it has no built-in layers with parameters"
            raise JobError("no-input-shape", f"cannot infer an input shape for "
                           f"{type(model).__name__}: {what}; pass --input-shape (e.g. "
                           "--input-shape 4,3,32,32)")
        candidates = inference.candidates
        result["inferred_from"] = {"layer": inference.layer, "type": inference.layer_type,
                                   "reason": inference.reason}
    check_arity(model, len(candidates[0]), inference is not None)
    high = inference.high if inference else embedding_bound(model)

    modes = ["train", "eval"] if check else ["train"]
    chosen, first_failure, first_trace = _attempt(torch, model, candidates, device, high, modes,
                                                  check, inference is not None)
    if chosen is None and inference is not None:
        # The first layer in __init__ is not always the first one called (a head defined
        # before the backbone): infer again from the layer forward really started with.
        called = first_trace.get("first_layer") if first_trace else None
        if called and called != inference.layer:
            again = infer_from(called, dict(model.named_modules()).get(called))
            if again is not None and len(again.candidates[0]) == len(candidates[0]):
                inference, candidates = again, again.candidates
                high = again.high or high
                result["inferred_from"] = {"layer": again.layer, "type": again.layer_type,
                                           "reason": again.reason + " (the first layer called)"}
                chosen, first_failure, first_trace = _attempt(torch, model, candidates, device,
                                                              high, modes, check, True)
        if chosen is None and first_trace and first_failure is not None:
            called = first_trace.get("first_layer")
            if called is not None and called != inference.layer:
                first_failure["shape_related"] = False  # the inferred input is in doubt
                first_failure["inference_doubtful"] = True
    if chosen is None and inference is not None and not check and len(candidates) > 1:
        # Would another common size run?  Only a hint for the user, the failure stands.
        for specs in candidates[1:]:
            traced = trace_once(torch, model, specs, device, high, ["train"], rows=False)
            if traced.get("failure") is None:
                first_failure["fits"] = [s.to_json() for s in specs]
                break
    if chosen is None:
        assert first_trace is not None and first_failure is not None
        result.update(status="failed", inputs=first_failure["inputs"], failure=first_failure)
        result.update({k: v for k, v in first_trace.items() if k != "failure"})
    else:
        specs, traced = chosen
        result["inputs"] = [s.to_json() for s in specs]
        result.update(traced)
        if traced.get("nonfinite"):
            result["status"] = "nonfinite"
    result["inputs_inferred"] = inference is not None
    if device == "cuda":
        result["cuda_peak_bytes"] = int(torch.cuda.max_memory_allocated())
        result["cuda_device"] = torch.cuda.get_device_name()
    return result


def _attempt(torch: Any, model: Any, candidates: list[list[shapes.InputSpec]], device: str,
             high: int | None, modes: list[str], check: bool, inferred: bool
             ) -> tuple[Any, dict[str, Any] | None, dict[str, Any] | None]:
    """Trace with each candidate input until one runs (``check`` with an inferred input) or
    with the first one only.  Returns (chosen (specs, trace) or None, first failure, its trace)."""
    first_failure: dict[str, Any] | None = None
    first_trace: dict[str, Any] | None = None
    for specs in candidates:
        traced = trace_once(torch, model, specs, device, high, modes, rows=not check)
        if traced.get("failure") is None:
            return (specs, traced), first_failure, first_trace
        if first_failure is None:
            first_failure, first_trace = traced["failure"], traced
            first_failure["inputs"] = [s.to_json() for s in specs]
        if not (check and inferred):
            break  # an explicit shape is not second-guessed; an inferred one gets a hint
    return None, first_failure, first_trace


def load_target(target: dict[str, Any], cwd: str) -> Any:
    _add_user_path(cwd)
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
    _add_user_path(str(root))
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


# --------------------------------------------------------------------------- inputs

_ATTRS = ("in_features", "in_channels", "num_embeddings", "input_size", "batch_first",
          "num_features", "normalized_shape")


def first_layer(model: Any) -> tuple[str, Any] | None:
    """The first built-in layer with parameters, in registration (``__init__``) order.

    User modules that own raw ``nn.Parameter``s (a positional embedding, a class token) are
    skipped: their shape says nothing about the input.
    """
    for name, mod in model.named_modules():
        if not type(mod).__module__.startswith("torch.nn"):
            continue
        if any(True for _ in mod.parameters(recurse=False)):
            return name, mod
    return None


def infer_inputs(model: Any) -> shapes.Inference | None:
    first = first_layer(model)
    if first is None:
        return None
    return infer_from(*first)


def infer_from(name: str, mod: Any) -> shapes.Inference | None:
    if mod is None:
        return None
    attrs = {}
    for key in _ATTRS:
        value = getattr(mod, key, None)
        if value is not None:
            attrs[key] = list(value) if isinstance(value, (tuple, list)) else value
    return shapes.infer_candidates(name, type(mod).__name__, attrs)


def inline_shape(cls: type) -> tuple[list[shapes.InputSpec], int] | None:
    """The ``# torchlint: input-shape=...`` comment on the model's class, if any."""
    path = _source_file(cls)
    if not path:
        return None
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return shapes.find_inline_shape(source, cls.__qualname__)
    except shapes.ShapeError as exc:
        raise JobError("bad-inline-shape", f"{path}: {cls.__qualname__}: {exc}") from None


def embedding_bound(model: Any) -> int | None:
    bounds = [int(m.num_embeddings) for m in model.modules()
              if type(m).__name__ in ("Embedding", "EmbeddingBag") and getattr(m, "num_embeddings", 0)]
    return min(bounds) if bounds else None


def make_inputs(torch: Any, specs: list[shapes.InputSpec], device: str, high: int | None) -> list[Any]:
    gen = torch.Generator().manual_seed(0)
    tensors = []
    for spec in specs:
        dtype = getattr(torch, spec.dtype)
        if device == "meta":
            tensors.append(torch.empty(spec.shape, dtype=dtype, device="meta"))
            continue
        if dtype.is_floating_point:
            t = torch.randn(spec.shape, generator=gen).to(dtype)
        elif dtype == torch.bool:
            t = torch.randint(0, 2, spec.shape, generator=gen).bool()
        else:
            t = torch.randint(0, max(1, high or 2), spec.shape, generator=gen, dtype=dtype)
        tensors.append(t.to(device))
    return tensors


# --------------------------------------------------------------------------- the trace

def trace_once(torch: Any, model: Any, specs: list[shapes.InputSpec], device: str,
               high: int | None, modes: list[str], rows: bool) -> dict[str, Any]:
    tracer = Tracer(torch, model, device, record_rows=rows)
    tracer.install()
    failure = None
    was_training = model.training
    try:
        ctx = torch.device(device) if device != "cpu" else contextlib.nullcontext()
        for mode_index, mode in enumerate(modes):
            model.train(mode == "train")
            tracer.recording = rows and mode_index == 0
            if device == "cuda":
                torch.cuda.reset_peak_memory_stats()
            inputs = make_inputs(torch, specs, device, high)
            try:
                with ctx, torch.no_grad(), tracer.param_mode():
                    output = model(*inputs)
                if mode_index == 0:
                    tracer.final_output = describe(torch, output)
                    tracer.check_final(output)
                if device == "cuda":
                    torch.cuda.synchronize()
            except BaseException as exc:  # noqa: BLE001
                if mode_index == 0:
                    failure = exception_failure("forward", exc, tracer, model, device=device)
                    failure["train"] = mode == "train"
                break
    finally:
        tracer.remove()
        model.train(was_training)
    out = tracer.summary()
    out["failure"] = failure
    return out


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


class Tracer:
    def __init__(self, torch: Any, model: Any, device: str, record_rows: bool = True):
        self.torch = torch
        self.model = model
        self.device = device
        self.record_rows = record_rows
        self.recording = record_rows
        self.names = {}
        for name, mod in model.named_modules():
            self.names.setdefault(id(mod), name)
        self.leaves = {id(m) for m in model.modules() if next(m.children(), None) is None}
        self.rows: list[dict[str, Any]] = []
        self.truncated = False
        self.stack: list[tuple[int, dict[str, Any] | None, Any]] = []
        self.called: set[int] = set()
        self.history: list[tuple[str, str, list[int]]] = []
        self.act_bytes = 0
        self._act_seen: dict[int, Any] = {}
        self.nonfinite: list[dict[str, Any]] = []
        self.final_output: Any = None
        self.handles: list[Any] = []
        self.param_ids = {id(p) for p in model.parameters()} | {id(b) for b in model.buffers()}
        self.params_used: set[int] = set()
        self._counted: set[int] = set()
        self.in_hook = False  # our own tensor calls must not count as parameter use
        self.first_layer: str | None = None  # the first built-in layer with parameters called

    # hooks -----------------------------------------------------------------
    def install(self) -> None:
        for mod in self.model.modules():
            self.handles.append(mod.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(mod.register_forward_hook(self._post, with_kwargs=True))

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles.clear()

    def _pre(self, mod: Any, args: Any, kwargs: Any) -> None:
        self.in_hook = True
        try:
            key = id(mod)
            self.called.add(key)
            if self.first_layer is None and type(mod).__module__.startswith("torch.nn") \
                    and next(iter(mod._parameters.values()), None) is not None:
                self.first_layer = self.names.get(key)
            row = None
            if self.recording:
                if len(self.rows) < MAX_ROWS:
                    row = {"name": self.names.get(key, "?"), "type": type(mod).__name__,
                           "depth": len(self.stack),
                           "inputs": self._describe_call(args, kwargs)}
                    if key not in self._counted:
                        self._counted.add(key)
                        row["params"] = int(sum(p.numel() for p in mod.parameters()))
                    self.rows.append(row)
                else:
                    self.truncated = True
            self.stack.append((key, row, args if self.device != "meta" else None))
        except Exception:  # noqa: BLE001 - a hook must never break the user's forward
            pass
        finally:
            self.in_hook = False
        return None

    def _describe_call(self, args: Any, kwargs: Any) -> list[Any]:
        out = [describe(self.torch, a) for a in args]
        for k, v in (kwargs or {}).items():
            d = describe(self.torch, v)
            out.append({"name": k, "value": d})
        return out

    def _post(self, mod: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.in_hook = True
        try:
            key = id(mod)
            entry = None
            while self.stack:
                entry = self.stack.pop()
                if entry[0] == key:
                    break
            row = entry[1] if entry and entry[0] == key else None
            if row is not None:
                row["outputs"] = describe(self.torch, output)
            tensors = tensors_in(self.torch, output)
            name = self.names.get(key, "?")
            for t in tensors:
                if len(self.history) < MAX_HISTORY:
                    self.history.append((name, type(mod).__name__, [int(s) for s in t.shape]))
            if key in self.leaves and self.recording:
                for t in tensors:
                    ref = self._act_seen.get(id(t))
                    if ref is not None and ref() is t:
                        continue
                    try:
                        self._act_seen[id(t)] = weakref.ref(t)
                    except TypeError:  # pragma: no cover
                        pass
                    self.act_bytes += t.numel() * t.element_size()
            if self.device != "meta" and len(self.nonfinite) < MAX_NONFINITE:
                self._check_finite(name, mod, tensors, args)
        except Exception:  # noqa: BLE001
            pass
        finally:
            self.in_hook = False
        return None

    def _check_finite(self, name: str, mod: Any, tensors: list[Any], args: Any) -> None:
        torch = self.torch
        bad = [t for t in tensors if t.is_floating_point() and not bool(torch.isfinite(t).all())]
        if not bad:
            return
        inputs = [t for t in tensors_in(torch, args) if t.is_floating_point()]
        self.nonfinite.append({
            "name": name, "type": type(mod).__name__,
            "nan": any(bool(torch.isnan(t).any()) for t in bad),
            "inf": any(bool(torch.isinf(t).any()) for t in bad),
            "inputs_finite": all(bool(torch.isfinite(t).all()) for t in inputs),
        })

    def check_final(self, output: Any) -> None:
        if self.device == "meta" or self.nonfinite:
            return
        torch = self.torch
        bad = [t for t in tensors_in(torch, output) if t.is_floating_point()
               and not bool(torch.isfinite(t).all())]
        if bad:
            self.nonfinite.append({"name": "", "type": type(self.model).__name__ + " (output)",
                                   "nan": any(bool(torch.isnan(t).any()) for t in bad),
                                   "inf": any(bool(torch.isinf(t).any()) for t in bad),
                                   "inputs_finite": True})

    # parameter use (a layer whose weights feed an op is in use even if never called) -------
    @contextlib.contextmanager
    def param_mode(self):  # type: ignore[no-untyped-def]
        from torch.overrides import TorchFunctionMode

        tracer = self

        class ParamUse(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                kwargs = kwargs or {}
                if tracer.in_hook:
                    return func(*args, **kwargs)
                try:
                    for a in (*args, *kwargs.values()):
                        if isinstance(a, (list, tuple)):
                            for b in a:
                                if id(b) in tracer.param_ids:
                                    tracer.params_used.add(id(b))
                        elif id(a) in tracer.param_ids:
                            tracer.params_used.add(id(a))
                except Exception:  # noqa: BLE001
                    pass
                return func(*args, **kwargs)

        with ParamUse():
            yield

    # results -----------------------------------------------------------------
    def used(self, mod: Any) -> bool:
        if id(mod) in self.called:
            return True
        for p in mod.parameters():
            if id(p) in self.params_used:
                return True
        for b in mod.buffers():
            if id(b) in self.params_used:
                return True
        return any(self.used(c) for c in mod.children())

    def summary(self) -> dict[str, Any]:
        unused = []
        used_cache: dict[int, bool] = {}

        def is_used(m: Any) -> bool:
            if id(m) not in used_cache:
                used_cache[id(m)] = self.used(m)
            return used_cache[id(m)]

        def walk(prefix: str, mod: Any) -> None:
            for child_name, child in mod.named_children():
                qual = f"{prefix}.{child_name}" if prefix else child_name
                if not is_used(child):
                    unused.append({"name": qual, "type": type(child).__name__,
                                   "params": int(sum(p.numel() for p in child.parameters()))})
                else:
                    walk(qual, child)

        walk("", self.model)
        instances = []
        for name, mod in self.model.named_modules():
            cls = type(mod)
            if cls.__module__.startswith("torch."):
                continue
            attrs = {n: is_used(c) for n, c in mod.named_children()}
            for pname, p in list(mod.named_parameters(recurse=False)) + list(mod.named_buffers(recurse=False)):
                attrs.setdefault(pname, id(p) in self.params_used)
            instances.append({"name": name, "class": cls.__qualname__, "file": _source_file(cls),
                              "attrs": attrs})
        return {
            "calls": self.rows,
            "calls_truncated": self.truncated,
            "unused": unused,
            "instances": instances,
            "activation_bytes": int(self.act_bytes),
            "nonfinite": self.nonfinite,
            "output": self.final_output,
            "first_layer": self.first_layer,
        }


def _source_file(obj: Any) -> str | None:
    try:
        f = inspect.getsourcefile(obj)
        return str(Path(f).resolve()) if f else None
    except (TypeError, OSError):
        return None


def _class_line(cls: Any) -> int | None:
    try:
        return inspect.getsourcelines(cls)[1]
    except (TypeError, OSError):
        return None


# --------------------------------------------------------------------------- failures

_SHAPE_WORDS = re.compile(
    r"shape|size|dimension|dim |mat1|mat2|channels|expected input|invalid for input|must match|"
    r"broadcast|normalized_shape|running_mean|reduction dim|out of range|elements not|index",
    re.IGNORECASE)


def is_user_file(filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return False
    try:
        path = str(Path(filename).resolve())
    except OSError:  # pragma: no cover
        return False
    torch_dir = _torch_dir()
    if torch_dir and path.startswith(torch_dir + os.sep):
        return False
    if path.startswith(_TORCHLINT_DIR + os.sep):
        return False
    if "site-packages" not in path and any(path.startswith(d + os.sep) for d in _STDLIB_DIRS):
        return False
    return True


_TORCH_DIR: list[str | None] = []


def _torch_dir() -> str | None:
    if not _TORCH_DIR:
        mod = sys.modules.get("torch")
        _TORCH_DIR.append(str(Path(mod.__file__).resolve().parent) if mod and mod.__file__ else None)
    return _TORCH_DIR[0]


def frame_info(fs: traceback.FrameSummary) -> dict[str, Any]:
    info: dict[str, Any] = {"file": str(Path(fs.filename).resolve()), "line": fs.lineno,
                            "function": fs.name, "code": (fs.line or "").strip()}
    for attr in ("end_lineno", "colno", "end_colno"):
        value = getattr(fs, attr, None)
        if value is not None:
            info[attr] = value
    return info


def exception_failure(phase: str, exc: BaseException, tracer: Tracer | None, model: Any,
                      device: str = "meta") -> dict[str, Any]:
    if isinstance(exc, SystemExit):
        code = exc.code
        message = f"user code called sys.exit({code!r})" if code is not None else "user code called sys.exit()"
    elif isinstance(exc, KeyboardInterrupt):
        message = "user code raised KeyboardInterrupt"
    elif isinstance(exc, MemoryError):
        message = "user code ran out of memory (MemoryError; see the trace memory-limit setting)"
    else:
        message = f"{type(exc).__name__}: {exc}"
    failure: dict[str, Any] = {"phase": phase, "exc_type": type(exc).__name__,
                               "exc_message": str(exc)[:2000], "message": message[:2000],
                               "kind": "other"}
    if "DefaultCPUAllocator" in str(exc) or "can't allocate memory" in str(exc):
        failure["message"] = f"user code ran out of memory ({str(exc)[:300]})"
    tb = exc.__traceback__
    frames = traceback.extract_tb(tb) if tb is not None else []
    user_frames = [frame_info(f) for f in frames if is_user_file(f.filename)]
    failure["traceback"] = user_frames[-8:]
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and is_user_file(exc.filename):
        user_frames.append({"file": str(Path(exc.filename).resolve()), "line": exc.lineno,
                            "function": "<module>", "code": (exc.text or "").strip()})
    if user_frames:
        failure["user_frame"] = user_frames[-1]
    if device == "meta" and _META_PROBLEM.search(str(exc)):
        failure["hint"] = ("the model needs real tensor values here (meta tensors have none); "
                           "rerun with --device cpu")
        failure["meta_limitation"] = True
    if phase == "build" and device == "meta" and not isinstance(exc, MemoryError) \
            and "memory" not in failure["message"]:
        failure.setdefault("hint", "the constructor failed while building on the meta device; "
                           "if it loads weights or needs real values, try --device cpu")
    if tracer is None or model is None:
        return failure

    chain = module_chain(tb, tracer)
    if not chain:
        failure["shape_related"] = bool(_SHAPE_WORDS.search(str(exc))) and not failure.get("meta_limitation")
        return failure
    mod, args = chain[-1]
    name = tracer.names.get(id(mod), "?")
    builtin = type(mod).__module__.startswith("torch.")
    failure["module"] = {"name": name, "type": type(mod).__name__, "builtin": builtin}
    failure["received"] = [describe(tracer.torch, a) for a in (args or ())]
    failure["chain"] = [{"name": tracer.names.get(id(m), "?"), "type": type(m).__name__}
                        for m, _ in chain]
    failure["owner"] = owner_of(name, tracer, model)
    diag = None
    if builtin:
        failure["kind"] = "layer"
        try:
            diag = diagnose(tracer.torch, mod, args or (), exc, tracer.history)
        except Exception:  # noqa: BLE001
            diag = None
    else:
        failure["kind"] = "forward"
        cls_file = _source_file(type(mod))
        failure["module"]["file"] = cls_file
        failure["module"]["class_line"] = _class_line(type(mod))
        extra_shapes = [d["shape"] for d in failure["received"] if isinstance(d, dict) and "shape" in d]
        diag = diagnose_forward(exc, tracer.history, extra_shapes)
    if diag:
        failure.update(diag)
        failure["shape_related"] = True
    else:
        failure["shape_related"] = bool(_SHAPE_WORDS.search(str(exc))) and not failure.get("meta_limitation") \
            and isinstance(exc, (RuntimeError, ValueError, IndexError, AssertionError))
    # Mark the rows of the modules that were running.
    failing_names = {tracer.names.get(id(m)) for m, _ in chain}
    for row in reversed(tracer.rows):
        if "outputs" not in row and row["name"] in failing_names:
            row["failed"] = True
            failing_names.discard(row["name"])
        if not failing_names:
            break
    return failure


_META_PROBLEM = re.compile(r"meta tensor|meta device|cannot be converted to Scalar|"
                           r"data-dependent|\.item\(\)|Cannot copy out of meta|NotImplementedError.*meta",
                           re.IGNORECASE)


def module_chain(tb: Any, tracer: Tracer) -> list[tuple[Any, Any]]:
    """The modules whose ``__call__`` was running when the exception escaped (outer first)."""
    chain = []
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "_call_impl":
            mod = frame.f_locals.get("self")
            if mod is not None and id(mod) in tracer.names:
                chain.append((mod, frame.f_locals.get("args")))
        tb = tb.tb_next
    return chain


def owner_of(name: str, tracer: Tracer, model: Any) -> dict[str, Any] | None:
    """The nearest user-defined ancestor of module ``name`` and the attribute path from it."""
    if not name:
        return None
    modules = dict(model.named_modules())
    parts = name.split(".")
    for cut in range(len(parts) - 1, -1, -1):
        prefix = ".".join(parts[:cut])
        anc = modules.get(prefix)
        if anc is None:
            continue
        cls = type(anc)
        if cls.__module__.startswith("torch.") and cut > 0:
            continue
        return {"name": prefix, "type": cls.__name__, "qualname": cls.__qualname__,
                "file": _source_file(cls), "class_line": _class_line(cls),
                "path": parts[cut:],
                "path_types": [type(modules.get(".".join(parts[:i + 1]))).__name__
                               for i in range(cut, len(parts))]}
    return None


def _shape(x: Any) -> list[int]:
    return [int(s) for s in x.shape]


def _fmt(shape: list[int]) -> str:
    return shapes.format_shape(shape)


def flatten_source(history: list[tuple[str, str, list[int]]], k: int) -> str:
    """``" (= 64*16*16)"`` when a recent output of ``k`` features per sample was flattened."""
    for _name, _type, shape in reversed(history):
        if len(shape) >= 3 and math.prod(shape[1:]) == k:
            return " (= " + "*".join(str(s) for s in shape[1:]) + ")"
    return ""


def producer(history: list[tuple[str, str, list[int]]], dim: int, value: int) -> str:
    """The layer that made ``value`` channels: the latest conv/norm/linear output, else any."""
    for preferred in (True, False):
        for name, typ, shape in reversed(history):
            if not name or len(shape) <= dim or shape[dim] != value:
                continue
            if preferred and not typ.startswith(("Conv", "Linear", "BatchNorm", "GroupNorm")):
                continue
            return f"`{name}` ({typ})"
    return ""


_VIEW = re.compile(r"shape '\[([^\]]*)\]' is invalid for input of size (\d+)")


def diagnose_forward(exc: BaseException, history: list[tuple[str, str, list[int]]],
                     inputs: list[list[int]]) -> dict[str, Any] | None:
    """A bad ``view``/``reshape`` in forward code: say what the tensor really is."""
    m = _VIEW.search(str(exc))
    if not m:
        return None
    size = int(m.group(2))
    wanted = m.group(1)
    seen = [shape for _n, _t, shape in reversed(history)] + inputs
    for shape in seen:
        if len(shape) >= 2 and math.prod(shape) == size:
            per = math.prod(shape[1:])
            return {"expected": f"a shape with {size} elements",
                    "problem": f"view/reshape to [{wanted}] does not fit the tensor "
                               f"{_fmt(shape)} ({size} elements)",
                    "fix": f"the tensor is {_fmt(shape)}: {per} features per sample"
                           f"{' (= ' + '*'.join(map(str, shape[1:])) + ')' if len(shape) > 2 else ''}; "
                           f"use x.flatten(1) or x.view(x.size(0), {per})"}
    return {"expected": f"a shape with {size} elements",
            "problem": f"view/reshape to [{wanted}] does not fit a tensor of {size} elements",
            "fix": "make the target shape's product equal the number of elements, e.g. "
                   "x.flatten(1) or x.view(x.size(0), -1)"}


def diagnose(torch: Any, mod: Any, args: Any, exc: BaseException,
             history: list[tuple[str, str, list[int]]]) -> dict[str, Any] | None:
    """Say what a built-in layer expected, and how to fix its definition."""
    tname = type(mod).__name__
    x = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if x is None:
        return None
    shape = _shape(x)
    text = str(exc)
    if isinstance(mod, torch.nn.Linear):
        k = shape[-1] if shape else 0
        if shape and k != mod.in_features:
            return {"expected": f"input [..., {mod.in_features}] (in_features={mod.in_features})",
                    "problem": f"in_features={mod.in_features} but the input has {k} features "
                               f"(shape {_fmt(shape)})",
                    "fix": f"in_features should be {k}{flatten_source(history, k)}",
                    "attribute": "in_features", "should_be": k}
        return None
    m = re.fullmatch(r"(Conv|ConvTranspose)([123])d", tname)
    if m and hasattr(mod, "in_channels"):
        d = int(m.group(2))
        layout = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}[d]
        if len(shape) not in (d + 1, d + 2):
            return {"expected": f"a {d + 2}-D input {layout}",
                    "problem": f"{tname} expects a {d + 2}-D input {layout} but got a "
                               f"{len(shape)}-D input {_fmt(shape)}",
                    "fix": f"reshape the input to {layout} before `{tname}` "
                           "(e.g. x.view(N, C, ...)) or use a layer for this input rank"}
        c = shape[1] if len(shape) == d + 2 else shape[0]
        if c != mod.in_channels:
            src = producer(history, 1, c)
            return {"expected": f"{mod.in_channels} input channels (in_channels={mod.in_channels})",
                    "problem": f"in_channels={mod.in_channels} but the input has {c} channels "
                               f"(shape {_fmt(shape)})",
                    "fix": f"in_channels should be {c}" + (f" ({src} outputs {c} channels)" if src else ""),
                    "attribute": "in_channels", "should_be": c}
        if "Kernel size can't be greater" in text or "output size is too small" in text:
            return {"expected": "a spatial size at least the (dilated) kernel size",
                    "problem": f"the input {_fmt(shape)} is spatially smaller than the kernel "
                               f"{tuple(mod.kernel_size)}",
                    "fix": "use a larger input (--input-shape) or fewer downsampling layers before "
                           "this one"}
        return None
    m = re.fullmatch(r"(BatchNorm|InstanceNorm)([123])d", tname)
    if m and hasattr(mod, "num_features"):
        if len(shape) >= 2 and shape[1] != mod.num_features:
            c = shape[1]
            return {"expected": f"{mod.num_features} channels at dim 1 (num_features={mod.num_features})",
                    "problem": f"num_features={mod.num_features} but the input has {c} at dim 1 "
                               f"(shape {_fmt(shape)})",
                    "fix": f"num_features should be {c}", "attribute": "num_features", "should_be": c}
        return None
    if tname == "GroupNorm" and len(shape) >= 2 and shape[1] != mod.num_channels:
        c = shape[1]
        return {"expected": f"{mod.num_channels} channels (num_channels={mod.num_channels})",
                "problem": f"num_channels={mod.num_channels} but the input has {c} channels",
                "fix": f"num_channels should be {c}", "attribute": "num_channels", "should_be": c}
    if tname == "LayerNorm":
        norm = list(mod.normalized_shape)
        tail = shape[-len(norm):] if norm and len(shape) >= len(norm) else shape
        if tail != norm:
            want = tail[0] if len(tail) == 1 else tuple(tail)
            return {"expected": f"input ending in {tuple(norm) if len(norm) > 1 else norm[0]} "
                                f"(normalized_shape={tuple(norm)})",
                    "problem": f"normalized_shape={tuple(norm)} but the input is {_fmt(shape)}",
                    "fix": f"normalized_shape should be {want}", "attribute": "normalized_shape",
                    "should_be": want}
        return None
    if tname in ("Embedding", "EmbeddingBag"):
        if x.is_floating_point():
            return {"expected": "integer indices (int64)",
                    "problem": f"{tname} got {str(x.dtype).replace('torch.', '')} input; it needs "
                               "integer token indices",
                    "fix": "pass integer inputs (--dtype int64), or check that the embedding is "
                           "applied to token ids and not to features"}
        if x.device.type != "meta" and x.numel():
            top = int(x.max())
            if top >= mod.num_embeddings:
                return {"expected": f"indices < num_embeddings={mod.num_embeddings}",
                        "problem": f"index {top} is out of range for num_embeddings={mod.num_embeddings}",
                        "fix": f"num_embeddings should be at least {top + 1}",
                        "attribute": "num_embeddings", "should_be": top + 1}
        return None
    if tname in ("LSTM", "GRU", "RNN"):
        if len(shape) not in (2, 3):
            return {"expected": "a 2-D or 3-D input",
                    "problem": f"{tname} got a {len(shape)}-D input {_fmt(shape)}",
                    "fix": "reshape the input to (L, N, F), or (N, L, F) with batch_first=True"}
        if shape[-1] != mod.input_size:
            k = shape[-1]
            return {"expected": f"input [..., {mod.input_size}] (input_size={mod.input_size})",
                    "problem": f"input_size={mod.input_size} but the input has {k} features",
                    "fix": f"input_size should be {k}{flatten_source(history, k)}",
                    "attribute": "input_size", "should_be": k}
        return None
    if tname == "MultiheadAttention" and shape and shape[-1] != mod.embed_dim:
        k = shape[-1]
        return {"expected": f"query [..., {mod.embed_dim}] (embed_dim={mod.embed_dim})",
                "problem": f"embed_dim={mod.embed_dim} but the query has {k} features",
                "fix": f"embed_dim should be {k}", "attribute": "embed_dim", "should_be": k}
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit("torchlint.trace.child is started by torchlint.trace.supervisor, not by hand")
