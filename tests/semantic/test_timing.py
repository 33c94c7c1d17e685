"""semantic.timing.times_code and filekinds.is_benchmark_file: what makes a timing benchmark."""

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.filekinds import is_benchmark_file
from torchlint.imports import ImportTable
from torchlint.semantic.timing import times_code


def model_of(src: str):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx.semantic.model


@pytest.mark.parametrize(("src", "expected"), [
    ("import time\nt = time.perf_counter()\n", True),
    ("from time import time\nstart = time()\n", True),
    ("import timeit\ntimeit.timeit('f()', number=3)\n", True),
    ("from ignite.handlers import Timer\ntimer = Timer(average=True)\n", True),
    ("import torch.utils.benchmark as benchmark\nbenchmark.Timer(stmt='f(x)')\n", True),
    ("import torch\nstart = torch.cuda.Event(enable_timing=True)\n", True),
    ("import torch\nev = torch.cuda.Event()\n", False),  # a sync event times nothing
    ("class Timer:\n    pass\nt = Timer()\n", False),  # the file's own class, not a timer library's
    ("import torch\nx = torch.randn(3)\nprint(x.sum())\n", False),
    ("def time():\n    return 0\nt = time()\n", False),
])
def test_times_code(src, expected):
    assert times_code(model_of(src)) is expected


@pytest.mark.parametrize(("path", "expected"), [
    ("examples/cifar100_amp_benchmark/benchmark_fp32.py", True),
    ("benchmark.py", True), ("bench_attention.py", True), ("tools/step_benchmark.py", True),
    ("benchmarks/train.py", True), ("bench/run.py", True), ("perf_benchmarks/run.py", True),
    ("train.py", False), ("benchmarking_utils/x.py", False), ("src/bencher.py", False),
    ("imagenet/benchmark_data/loader.py", False),
])
def test_is_benchmark_file(path, expected):
    assert is_benchmark_file(path) is expected
