"""Whether a file times code: a timer read, a ``Timer`` made, CUDA events that time.

TL004 asks it of a file named for a benchmark (``filekinds.is_benchmark_file``): a timing
benchmark holds its hyperparameters fixed on purpose, so that only what it measures varies
between its runs or its variants (ignite's ``benchmark_fp32.py``, ``benchmark_torch_cuda_amp.py``
train one model with one ``SGD(lr=0.01)`` and time an epoch). A file named for a benchmark
that times nothing (a research script training on a benchmark data set) is not one.
"""

from __future__ import annotations

import libcst as cst

from torchlint.torch_api import keyword_arg

# Clocks and timers, by qualified name.
_CLOCKS = frozenset({
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "timeit.timeit", "timeit.repeat", "timeit.default_timer",
    "timeit.Timer", "torch.utils.benchmark.Timer", "torch.utils.benchmark.timer.Timer",
})


def times_code(model) -> bool:
    """Some call of the file reads a clock or makes a timer: one of ``_CLOCKS``, an imported
    class named ``Timer`` (``ignite.handlers.Timer``, ``codetiming.Timer``), or
    ``torch.cuda.Event(enable_timing=True)``."""
    for call in model.nodes_of(cst.Call):
        qualified = model.qualified_name(call.func) or ""
        if qualified in _CLOCKS:
            return True
        if qualified.rsplit(".", 1)[-1] == "Timer" and model.is_imported(call.func):
            return True
        if qualified in ("torch.cuda.Event", "torch.Event") and keyword_arg(call, "enable_timing") is not None:
            return True
    return False
