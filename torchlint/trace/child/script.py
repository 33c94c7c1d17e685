"""One ``torchlint run`` job in the trace child: the user's script, run as ``python SCRIPT
ARGS`` would run it, inside the :class:`.fence.Fence`, watched by an :class:`.observe.Observer`.

The job: ``script`` (absolute path), ``argv``, ``workdir`` (the run's temporary directory,
made and removed by torchlint), ``device`` (``fake-cuda``: meta stands for CUDA; ``meta``: every
tensor on meta; ``cpu``: the script's own devices, nothing faked), ``steps``, ``passes``, ``eval_batches`` and
``synthetic_data``.  The result is a :class:`~torchlint.trace.records.TraceResult` whose
``observations`` are the findings of the run and ``run`` its summary.
"""

from __future__ import annotations

import os
import runpy
import sys
import tempfile
import time
from typing import Any

from torchlint.trace.child.failure import exception_failure
from torchlint.trace.child.fence import Fence
from torchlint.trace.child.observe import Observer, StopRun
from torchlint.trace.child.process import add_user_path
from torchlint.trace.records import TraceResult

# Loggers offline, hubs offline: nothing the script asks for goes over the network.
OFFLINE = {"WANDB_MODE": "disabled", "WANDB_SILENT": "true", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COMET_AUTO_LOG_DISABLE": "true",
           "COMET_OFFLINE": "true", "NEPTUNE_MODE": "offline", "CLEARML_OFFLINE_MODE": "1",
           "DISABLE_MLFLOW_INTEGRATION": "TRUE", "TQDM_DISABLE": "1"}


def run_script_job(job: dict[str, Any], cwd: str) -> TraceResult:
    import torch

    script = os.path.realpath(job["script"])
    workdir = job["workdir"]
    device = job.get("device", "fake-cuda")
    fake = device != "cpu"
    observer = Observer(torch, [os.path.dirname(script), cwd], steps=int(job.get("steps", 3)),
                        passes=int(job.get("passes", 2)), eval_batches=int(job.get("eval_batches", 2)))
    observer.fake_gpu = device == "fake-cuda"
    os.environ.update(OFFLINE)
    os.environ["MLFLOW_TRACKING_URI"] = "file:" + os.path.join(workdir, "mlruns")
    os.environ["COMET_OFFLINE_DIRECTORY"] = os.path.join(workdir, "comet")
    sys.dont_write_bytecode = True  # no __pycache__ written beside the user's modules
    scratch = os.path.join(workdir, "tmp")  # the script's own temporary files
    os.makedirs(scratch, exist_ok=True)
    os.environ["TMPDIR"] = tempfile.tempdir = scratch
    sys.argv = [script, *job.get("argv", [])]
    add_user_path(os.path.dirname(script))
    result = TraceResult("ok")
    summary: dict[str, Any] = {"device": device}
    started = time.perf_counter()
    torch.manual_seed(0)
    fence = Fence(torch, observer, workdir, bool(job.get("synthetic_data")), device=device)
    with fence:
        try:
            runpy.run_path(script, run_name="__main__")
            summary["ended"] = "finished"
        except StopRun as stop:
            summary["ended"] = f"bound ({stop.reason})"
        except SystemExit as exc:
            code = exc.code
            summary["ended"] = "exit"
            summary["exit_code"] = code if isinstance(code, int) or code is None else 1
        except BaseException as exc:  # noqa: BLE001 - the script's own error is the result
            summary["ended"] = "failed"
            observation = observer.failed(exc)
            if observation is None:
                result.status = "failed"
                result.failure = exception_failure("run", exc, None, None, device="meta" if fake else "cpu")
        observations = observer.finish()
    summary.update(observer.summary())
    summary["seconds"] = round(time.perf_counter() - started, 3)
    summary["written"] = sorted(fence.files.written)[:50]
    summary["blocked"] = fence.blocked[:20]
    result.observations = observations
    result.run = summary  # type: ignore[assignment]
    return result
