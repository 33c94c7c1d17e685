"""What went wrong: an exception from user code made into a :class:`Failure` record (the
user's frames, the module that was running, its owner, the diagnosis)."""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchlint.trace.child.diagnose import diagnose, diagnose_forward
from torchlint.trace.child.values import class_line, describe, source_file
from torchlint.trace.records import Diagnosis, Failure, Frame, Owner

if TYPE_CHECKING:
    from torchlint.trace.child.tracer import Tracer

_TORCHLINT_DIR = str(Path(__file__).resolve().parent.parent.parent)
_STDLIB_DIRS = {
    str(Path(p).resolve())
    for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")}
    if p
}


class JobError(Exception):
    """A problem with the job itself (bad target, needs arguments): exit 2 in the parent."""

    def __init__(self, kind: str, message: str, missing: list[str] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.missing = missing  # needs-args: the constructor arguments without a value


class Failed(Exception):
    """User code failed (import, construction or forward): a failed trace, exit 1."""

    def __init__(self, failure: Failure):
        super().__init__(failure.message)
        self.failure = failure


class DeviceMismatch(RuntimeError):
    """An op mixed a CPU tensor made in ``forward`` with the model's meta tensors (raised by
    :mod:`.devices` before the op runs, as a GPU would fail)."""

    def __init__(self, info: dict[str, Any]):
        super().__init__(f"Expected all tensors to be on the same device, but found at least two "
                         f"devices, meta and cpu! (in `{info['op']}`)")
        self.info = info


_SHAPE_WORDS = re.compile(
    r"shape|size|dimension|dim |mat1|mat2|channels|expected input|invalid for input|must match|"
    r"broadcast|normalized_shape|running_mean|reduction dim|out of range|elements not|index",
    re.IGNORECASE)


def is_user_file(filename: str) -> bool:
    known = _USER_FILES.get(filename)
    if known is None:
        known = _USER_FILES[filename] = _is_user_file(filename)
    return known


_USER_FILES: dict[str, bool] = {}


def _is_user_file(filename: str) -> bool:
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


_RESOLVED: dict[str, str] = {}


def _resolved(filename: str) -> str:
    path = _RESOLVED.get(filename)
    if path is None:
        path = _RESOLVED[filename] = str(Path(filename).resolve())
    return path


def frame_info(fs: traceback.FrameSummary) -> Frame:
    info: Frame = {"file": _resolved(fs.filename), "line": fs.lineno,  # type: ignore[typeddict-item]
                   "function": fs.name, "code": (fs.line or "").strip()}
    for attr in ("end_lineno", "colno", "end_colno"):
        value = getattr(fs, attr, None)
        if value is not None:
            info[attr] = value  # type: ignore[literal-required]
    return info


def current_user_frame() -> Frame | None:
    """The innermost frame of user code on the current stack (where an op was called from)."""
    f = sys._getframe(1)
    while f is not None:  # a walk, not traceback.extract_stack(): this runs for every CPU tensor made
        if is_user_file(f.f_code.co_filename):
            return frame_info(traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    return None


def op_name(func: Any) -> str:
    """An op's name as the user wrote it: ``detach``, ``add``, ``data`` for ``Tensor.data``."""
    name = getattr(func, "__name__", "") or type(func).__name__
    if name in ("__get__", "__set__"):
        return getattr(getattr(func, "__self__", None), "__name__", name)
    return name


def exception_failure(phase: str, exc: BaseException, tracer: Tracer | None, model: Any,
                      device: str = "meta") -> Failure:
    """The record of ``exc`` raised in ``phase``; with a tracer, where in the model it
    happened and what the failing layer expected."""
    failure = Failure(phase, exc_type=type(exc).__name__, exc_message=str(exc)[:2000],
                      message=_message(exc)[:2000], kind="other")
    if "DefaultCPUAllocator" in str(exc) or "can't allocate memory" in str(exc):
        failure.message = f"user code ran out of memory ({str(exc)[:300]})"
    _add_user_frames(failure, exc)
    _add_device_hints(failure, phase, exc, device)
    if tracer is None or model is None:
        return failure
    chain = module_chain(exc.__traceback__, tracer)
    if chain:
        _add_failing_module(failure, chain, tracer, model)
        _mark_failed_rows(chain, tracer)
    if isinstance(exc, DeviceMismatch):
        failure.kind, failure.device_mismatch, failure.shape_related = "device", exc.info, False
        return failure
    if not chain:
        failure.shape_related = looks_like_shapes(exc) and not failure.meta_limitation
        return failure
    diag = _diagnose(failure, chain[-1], exc, tracer)
    if diag:
        failure.add(diag)
        failure.shape_related = True
    else:
        failure.shape_related = looks_like_shapes(exc) and not failure.meta_limitation \
            and isinstance(exc, (RuntimeError, ValueError, IndexError, AssertionError))
    return failure


def _message(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        code = exc.code
        return f"user code called sys.exit({code!r})" if code is not None else "user code called sys.exit()"
    if isinstance(exc, KeyboardInterrupt):
        return "user code raised KeyboardInterrupt"
    if isinstance(exc, MemoryError):
        return "user code ran out of memory (MemoryError; see the trace memory-limit setting)"
    return f"{type(exc).__name__}: {exc}"


def looks_like_shapes(exc: BaseException) -> bool:
    return bool(_SHAPE_WORDS.search(str(exc)))


def _add_user_frames(failure: Failure, exc: BaseException) -> None:
    tb = exc.__traceback__
    frames = traceback.extract_tb(tb) if tb is not None else []
    user_frames = [frame_info(f) for f in frames if is_user_file(f.filename)]
    failure.traceback = user_frames[-8:]
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and is_user_file(exc.filename):
        user_frames.append({"file": str(Path(exc.filename).resolve()), "line": exc.lineno,
                            "function": "<module>", "code": (exc.text or "").strip()})
    if user_frames:
        failure.user_frame = user_frames[-1]


def _add_device_hints(failure: Failure, phase: str, exc: BaseException, device: str) -> None:
    if device == "meta" and _META_PROBLEM.search(str(exc)):
        failure.hint = ("the model needs real tensor values here (meta tensors have none); "
                        "rerun with --device cpu")
        failure.meta_limitation = True
    if phase == "build" and device == "meta" and not isinstance(exc, MemoryError) \
            and "memory" not in failure.message and failure.hint is None:
        failure.hint = ("the constructor failed while building on the meta device; "
                        "if it loads weights or needs real values, try --device cpu")


def _add_failing_module(failure: Failure, chain: list[tuple[Any, Any]], tracer: Tracer,
                        model: Any) -> None:
    """The innermost module that was running, what it received, the chain of modules and
    the user-defined owner; ``kind`` says whether a built-in layer or user code raised."""
    mod, args = chain[-1]
    name = tracer.names.get(id(mod), "?")
    builtin = type(mod).__module__.startswith("torch.")
    failure.module = {"name": name, "type": type(mod).__name__, "builtin": builtin}
    failure.received = [describe(tracer.torch, a) for a in (args or ())]
    failure.chain = [{"name": tracer.names.get(id(m), "?"), "type": type(m).__name__}
                     for m, _ in chain]
    failure.owner = owner_of(name, tracer, model)
    failure.kind = "layer" if builtin else "forward"
    if not builtin:
        failure.module["file"] = source_file(type(mod))
        failure.module["class_line"] = class_line(type(mod))


def _diagnose(failure: Failure, innermost: tuple[Any, Any], exc: BaseException,
              tracer: Tracer) -> Diagnosis | None:
    mod, args = innermost
    if failure.kind == "layer":
        try:
            return diagnose(tracer.torch, mod, args or (), exc, tracer.history, tracer.input_shapes)
        except Exception:  # noqa: BLE001
            return None
    extra_shapes = [d["shape"] for d in failure.received or [] if isinstance(d, dict) and "shape" in d]
    return diagnose_forward(exc, tracer.history, extra_shapes)


def _mark_failed_rows(chain: list[tuple[Any, Any]], tracer: Tracer) -> None:
    """Mark the rows of the modules that were running."""
    failing_names = {tracer.names.get(id(m)) for m, _ in chain}
    for row in reversed(tracer.rows):
        if "outputs" not in row and row["name"] in failing_names:
            row["failed"] = True
            failing_names.discard(row["name"])
        if not failing_names:
            break


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


def owner_of(name: str, tracer: Tracer, model: Any) -> Owner | None:
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
                "file": source_file(cls), "class_line": class_line(cls),
                "path": parts[cut:],
                "path_types": [type(modules.get(".".join(parts[:i + 1]))).__name__
                               for i in range(cut, len(parts))]}
    return None

