"""One job, start to end, and the child's main loop."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from torchlint import shapes
from torchlint.trace.child.failure import Failed, JobError, exception_failure
from torchlint.trace.child.gradients import StepLoss
from torchlint.trace.child.inputs import embedding_bound, first_layer, infer_from, infer_inputs, inline_shape
from torchlint.trace.child.load import check_arity, check_signature, constructor, load_target, model_totals
from torchlint.trace.child.memory import measure as measure_memory
from torchlint.trace.child.process import (apply_memory_limit, connect, flush_output, peak_rss_kb, wait_for_jobs,
                                            warm_meta)
from torchlint.trace.child.script import run_script_job
from torchlint.trace.child.step import BUILTIN_LOSSES
from torchlint.trace.child.tracer import trace_once
from torchlint.trace.child.values import source_file
from torchlint.trace.records import Failure, Traced, TraceResult


def main() -> None:
    request, emit = connect()
    apply_memory_limit(request.get("memory_limit"))
    cwd = request.get("cwd") or os.getcwd()
    started = time.perf_counter()
    try:
        import torch  # noqa: F401
    except BaseException as exc:  # ImportError, or a broken install
        for job in wait_for_jobs(request):
            no_torch = TraceResult("error", error_kind="no-torch",
                                   message=f"torch cannot be imported ({type(exc).__name__}: {exc})")
            emit({"event": "result", "id": job["id"], **no_torch.to_json()})
        os._exit(0)
    imported = time.perf_counter()
    ahead = request.get("jobs") is None  # started ahead of its jobs: warm up as told
    if ahead and request.get("warm_meta", True) or not ahead and any(
            job.get("device", "meta") in ("meta", "fake-cuda") for job in request["jobs"]):
        warm_meta(torch)
    emit({"event": "ready", "torch": torch.__version__, "import_seconds": round(imported - started, 4),
          "warm_seconds": round(time.perf_counter() - imported, 4)})
    for job in wait_for_jobs(request):
        emit({"event": "start", "id": job["id"]})
        started = time.perf_counter()
        result = run_job_safely(job, cwd)
        result.seconds = round(time.perf_counter() - started, 4)
        result.peak_rss_kb = peak_rss_kb()
        flush_output()  # the supervisor files what was printed under this job
        try:
            emit({"event": "result", "id": job["id"], **result.to_json()})
        except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
            broken = Failure("trace", message=f"unserialisable result: {exc}")
            emit({"event": "result", "id": job["id"], "status": "failed", "failure": broken.to_json()})
    flush_output()
    os._exit(0)  # user threads or atexit hooks must not keep the child alive


def run_job_safely(job: dict[str, Any], cwd: str) -> TraceResult:
    """:func:`run_job`, with every way it can end made into a result."""
    try:
        return run_job(job, cwd)
    except JobError as exc:
        return TraceResult("error", error_kind=exc.kind, message=exc.message, missing=exc.missing)
    except Failed as exc:
        return TraceResult("failed", failure=exc.failure)
    except BaseException as exc:  # noqa: BLE001 - a bug here must not lose the job
        return TraceResult("failed", failure=exception_failure("trace", exc, None, None))


# --------------------------------------------------------------------------- one job

def run_job(job: dict[str, Any], cwd: str) -> TraceResult:
    import torch

    if job.get("kind") == "script":  # ``torchlint run``: the user's own script
        return run_script_job(job, cwd)

    device = job.get("device", "meta")
    check = job.get("mode") == "check"
    check_device(torch, device)
    model = build_model(torch, job, cwd, device)
    result = TraceResult("ok", model_type=type(model).__name__, **model_totals(model))
    candidates, inference = choose_inputs(model, job, result)
    check_arity(model, len(candidates[0]), inference is not None)
    high = inference.high if inference else embedding_bound(model)
    modes = ["train", "eval"] if check else ["train"]
    loss = step_loss(job, cwd)

    chosen, failure, failed_trace = _attempt(torch, model, candidates, device, high, modes,
                                             check, inference is not None, loss)
    if chosen is None and inference is not None:
        chosen, failure, failed_trace, candidates, high = retry_from_first_called(
            torch, model, inference, candidates, device, high, modes, check, result,
            failure, failed_trace, loss)
    if chosen is None and inference is not None and not check and len(candidates) > 1:
        assert failure is not None
        failure.fits = other_size_that_fits(torch, model, candidates[1:], device, high)
    if chosen is None:
        assert failed_trace is not None and failure is not None
        result.status, result.inputs, result.failure = "failed", failure.inputs, failure
        result.set_traced(failed_trace)
    else:
        specs, traced = chosen
        result.inputs = [s.to_json() for s in specs]
        result.set_traced(traced)
        if traced.nonfinite or (traced.gradients is not None and traced.gradients.nonfinite):
            result.status = "nonfinite"
        if job.get("plan"):
            try:
                result.memory = measure_memory(torch, model, specs, device, high, job["plan"])
            except JobError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user's backward, or the optimizer
                result.status, result.failure = "failed", exception_failure("step", exc, None, None,
                                                                            device=device)
    result.inputs_inferred = inference is not None
    if loss is not None and loss.target is not None:
        result.target = {"shape": list(loss.target["shape"]), "dtype": loss.target.get("dtype", "float32")}
    if device == "cuda":
        result.cuda_peak_bytes = int(torch.cuda.max_memory_allocated())
        result.cuda_device = torch.cuda.get_device_name()
    return result


def check_device(torch: Any, device: str) -> None:
    if device == "cuda" and not torch.cuda.is_available():
        raise JobError("no-cuda", "--device cuda needs a CUDA GPU, and torch.cuda.is_available() "
                       "is False here (use --device meta or --device cpu)")
    if device not in ("meta", "cpu", "cuda"):
        raise JobError("bad-device", f"unknown device {device!r}")


def step_loss(job: dict[str, Any], cwd: str) -> StepLoss | None:
    """The loss of the training step (``"train": true`` jobs): ``"loss"`` names a built-in
    loss or is ``{"target": ...}``, a user function ``module:function`` taking the output
    (and the target, with ``"loss_target": {"shape", "dtype"}``: ``--target-shape``)."""
    if not job.get("train"):
        return None
    spec = job.get("loss") or "sum"
    target = job.get("loss_target")
    if isinstance(spec, dict):
        fn = load_target(spec["target"], cwd)
        if not callable(fn):
            raise JobError("bad-loss", f"--loss {spec['target'].get('display')}: not a function")
        return StepLoss(fn, f"`{spec['target'].get('display')}`", target)
    if spec not in BUILTIN_LOSSES:
        raise JobError("bad-loss", f"unknown loss {spec!r}")
    text = BUILTIN_LOSSES[spec]
    if target is not None and spec != "sum":
        text = text.split(" against ")[0] + f" against the target {list(target['shape'])} ({target.get('dtype', 'float32')})"
    return StepLoss(spec, text, target if spec != "sum" else None)


def build_model(torch: Any, job: dict[str, Any], cwd: str, device: str) -> Any:
    """Import the target and call it on ``device``; the model, or JobError / Failed."""
    target = job["target"]
    obj = load_target(target, cwd)
    ctor = constructor(obj, target.get("display", target["attr"]), torch)
    args, kwargs = job.get("args") or [], job.get("kwargs") or {}
    check_signature(ctor, args, kwargs, target.get("display", ""))
    torch.manual_seed(0)
    ctx = torch.device(device) if device != "cpu" else contextlib.nullcontext()
    try:
        with ctx:
            model = ctor(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001
        raise Failed(exception_failure("build", exc, None, None, device=device)) from None
    if not isinstance(model, torch.nn.Module):
        raise JobError("not-a-module", f"{target.get('display')} returned "
                       f"{type(model).__name__}, not a torch.nn.Module")
    if type(model).forward is torch.nn.Module.forward:
        raise JobError("no-forward", f"{type(model).__name__} does not define forward()")
    return model


def choose_inputs(model: Any, job: dict[str, Any], result: TraceResult
                  ) -> tuple[list[list[shapes.InputSpec]], shapes.Inference | None]:
    """The candidate inputs: given, from the class's comment, else inferred (and the
    inference, which ``result`` records)."""
    if job.get("inputs"):
        return [[shapes.InputSpec(s["shape"], s.get("dtype", "float32")) for s in job["inputs"]]], None
    comment = inline_shape(type(model))
    if comment is not None:
        result.inputs_from_comment = {"file": source_file(type(model)), "line": comment[1]}
        return [comment[0]], None
    inference = infer_inputs(model)
    if inference is None:
        first = first_layer(model)
        what = (f"its first layer `{first[0]}` is a {type(first[1]).__name__}, which does not "
                "tell the input shape") if first else "it has no built-in layers with parameters"
        raise JobError("no-input-shape", f"cannot infer an input shape for "
                       f"{type(model).__name__}: {what}; pass --input-shape (e.g. "
                       "--input-shape 4,3,32,32)")
    result.inferred_from = {"layer": inference.layer, "type": inference.layer_type,
                            "reason": inference.reason}
    return inference.candidates, inference


def retry_from_first_called(torch: Any, model: Any, inference: shapes.Inference,
                            candidates: list[list[shapes.InputSpec]], device: str,
                            high: int | None, modes: list[str], check: bool, result: TraceResult,
                            failure: Failure | None, failed_trace: Traced | None,
                            loss: StepLoss | None) -> tuple[Any, ...]:
    """The first layer in __init__ is not always the first one called (a head defined before
    the backbone): infer again from the layer forward really started with.  Returns
    (chosen, failure, its trace, candidates, high) as they stand after the retry."""
    chosen = None
    called = failed_trace.first_layer if failed_trace else None
    if called and called != inference.layer:
        again = infer_from(called, dict(model.named_modules()).get(called))
        if again is not None and len(again.candidates[0]) == len(candidates[0]):
            inference, candidates = again, again.candidates
            high = again.high or high
            result.inferred_from = {"layer": again.layer, "type": again.layer_type,
                                    "reason": again.reason + " (the first layer called)"}
            chosen, failure, failed_trace = _attempt(torch, model, candidates, device, high, modes,
                                                     check, True, loss)
    if chosen is None and failed_trace and failure is not None:
        called = failed_trace.first_layer
        if called is not None and called != inference.layer:
            failure.shape_related = False  # the inferred input is in doubt
            failure.inference_doubtful = True
    return chosen, failure, failed_trace, candidates, high


def other_size_that_fits(torch: Any, model: Any, others: list[list[shapes.InputSpec]],
                         device: str, high: int | None) -> list[dict[str, Any]] | None:
    """Would another common size run?  Only a hint for the user, the failure stands."""
    for specs in others:
        traced = trace_once(torch, model, specs, device, high, ["train"], rows=False)
        if traced.failure is None:
            return [s.to_json() for s in specs]
    return None


def _attempt(torch: Any, model: Any, candidates: list[list[shapes.InputSpec]], device: str,
             high: int | None, modes: list[str], check: bool, inferred: bool,
             loss: StepLoss | None) -> tuple[Any, Failure | None, Traced | None]:
    """Trace with each candidate input until one runs (``check`` with an inferred input) or
    with the first one only.  Returns (chosen (specs, trace) or None, first failure, its trace)."""
    first_failure: Failure | None = None
    first_trace: Traced | None = None
    for specs in candidates:
        traced = trace_once(torch, model, specs, device, high, modes, rows=not check, loss=loss)
        if traced.failure is None:
            return (specs, traced), first_failure, first_trace
        if first_failure is None:
            first_failure, first_trace = traced.failure, traced
            first_failure.inputs = [s.to_json() for s in specs]
        if not (check and inferred):
            break  # an explicit shape is not second-guessed; an inferred one gets a hint
    return None, first_failure, first_trace
