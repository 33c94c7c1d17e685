"""Trace many small models in one child process (one torch import) and check each result."""

from __future__ import annotations

import pytest

from torchlint.trace import report
from torchlint.trace.runner import run_jobs
from trace_helpers import MODELS, job

torch = pytest.importorskip("torch")

JOBS = [
    job("good", "cnn.py", "GoodCNN"),
    job("linear", "cnn.py", "LinearMismatch", inputs=[{"shape": [4, 3, 32, 32], "dtype": "float32"}]),
    job("conv", "cnn.py", "ConvMismatch"),
    job("view", "cnn.py", "BadView"),
    job("unused", "misc.py", "UnusedLayer"),
    job("dynamic", "misc.py", "DynamicUse", mode="check"),
    job("needs_args", "misc.py", "MLP"),
    job("with_args", "misc.py", "MLP", args=[6], kwargs={"hidden": 5}),
    job("two_inferred", "misc.py", "TwoTower"),
    job("two_inputs", "misc.py", "TwoTower",
        inputs=[{"shape": [3, 10], "dtype": "float32"}, {"shape": [3, 20], "dtype": "float32"}]),
    job("tokens", "misc.py", "TokenClassifier"),
    job("tokens_cpu", "misc.py", "TokenClassifier", device="cpu",
        inputs=[{"shape": [2, 9], "dtype": "int64"}]),
    job("embed_float", "misc.py", "TokenClassifier", inputs=[{"shape": [2, 9], "dtype": "float32"}]),
    job("factory", "misc.py", "make_classifier", kwargs={"vocab": 20}),
    job("comment", "misc.py", "Commented"),
    job("nan_cpu", "misc.py", "MakesNaN", device="cpu"),
    job("needs_values", "misc.py", "NeedsValues"),
    job("head_first", "misc.py", "HeadFirst"),
    job("channels_last_check", "misc.py", "ChannelsLast", mode="check"),
    job("not_module", "misc.py", "NotAModel"),
    {"id": "package", "target": {"file": None, "module": "pkg.model", "attr": "build",
                                 "display": "pkg.model:build"}, "kwargs": {"dim": 8}, "device": "meta"},
    job("missing", "misc.py", "Nope"),
    job("exits", "exits_at_import.py", "Net"),
    job("greedy", "crashes.py", "Greedy"),
    job("after_greedy", "cnn.py", "GoodCNN", device="cpu"),
    job("crash", "crashes.py", "Crash"),
    job("after_crash", "misc.py", "UnusedLayer", device="cpu"),  # a fresh child takes over
]
if not torch.cuda.is_available():
    JOBS.append(job("cuda", "misc.py", "UnusedLayer", device="cuda"))


@pytest.fixture(scope="module")
def broken_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("broken") / "syntax_error.py"
    path.write_text("import torch\n\nclass Broken(:\n    pass\n")
    return path


@pytest.fixture(scope="module")
def results(broken_file):
    syntax = job("syntax", "syntax_error.py", "Broken")
    syntax["target"]["file"] = str(broken_file)
    at = next(i for i, j in enumerate(JOBS) if j["id"] == "crash")
    jobs = JOBS[:at] + [syntax] + JOBS[at:]  # before the crash: no extra child needed
    return run_jobs(jobs, timeout=60, memory_limit=4 << 30, cwd=MODELS)


def problem(result):
    assert result["status"] == "failed", result
    return report.analyse_failure(result["failure"], result.get("model_type", ""))


def test_correct_cnn(results):
    r = results["good"]
    assert r["status"] == "ok" and r["inputs_inferred"]
    assert r["inputs"] == [{"shape": [2, 3, 32, 32], "dtype": "float32"}]
    assert r["inferred_from"]["layer"] == "conv1"
    names = [c["name"] for c in r["calls"]]
    assert names[:3] == ["", "conv1", "pool"] and "head.1" in names
    fc = next(c for c in r["calls"] if c["name"] == "head.1")
    assert fc["inputs"][0]["shape"] == [2, 1024] and fc["outputs"]["shape"] == [2, 10]
    assert r["calls"][0]["outputs"]["shape"] == [2, 10]
    assert r["params"] == sum(c.get("params", 0) for c in r["calls"] if c["depth"] == 0)
    assert r["param_bytes"] == 4 * r["params"]
    assert r["activation_bytes"] > 0 and r["unused"] == []


def test_linear_in_features_mismatch(results):
    p = problem(results["linear"])
    assert p.tl100
    assert p.failure["module"] == {"name": "fc1", "type": "Linear", "builtin": True}
    assert p.failure["fix"] == "in_features should be 16384 (= 64*16*16)"
    assert p.failure["received"][0]["shape"] == [4, 16384]
    assert "in_features=4096" in p.failure["expected"]
    assert p.location.path == MODELS / "cnn.py"
    assert p.location.code == "self.fc1 = nn.Linear(64 * 8 * 8, 32)"
    assert (p.location.line, p.location.column) == (28, 9)
    rendered = report.render_problem(p)
    assert rendered.splitlines()[0].endswith(
        "cnn.py:28:9: TL100 shape-mismatch `fc1` (Linear): in_features=4096 but the input has "
        "16384 features (shape [4, 16384])")
    assert "called:" in rendered and "self.fc1(x)" in rendered


def test_conv_channel_mismatch_points_into_sequential(results):
    p = problem(results["conv"])
    assert p.tl100 and p.failure["module"]["name"] == "features.2"
    assert p.failure["fix"] == "in_channels should be 16 (`features.0` (Conv2d) outputs 16 channels)"
    assert (p.location.line, p.location.code) == (43, "nn.Conv2d(32, 32, 3, padding=1),")


def test_bad_view_in_forward(results):
    p = problem(results["view"])
    assert p.tl100 and p.failure["kind"] == "forward"
    assert p.location.code == "x = x.view(-1, 4095)" and p.location.line == 58
    assert p.location.column == 13  # the `x.view(...)` call, from the 3.11 traceback positions
    assert "x.flatten(1)" in p.failure["fix"] and "[2, 64, 32, 32]" in p.failure["fix"]


def test_unused_layer_and_dynamic_use(results):
    assert [u["name"] for u in results["unused"]["unused"]] == ["extra"]
    dynamic = results["dynamic"]
    assert dynamic["status"] == "ok" and dynamic["unused"] == []
    attrs = dynamic["instances"][0]["attrs"]
    assert attrs == {"fc1": True, "block_a": True, "scale": True, "eval_head": True}


def test_constructor_arguments(results):
    assert results["needs_args"]["status"] == "error"
    assert results["needs_args"]["error_kind"] == "needs-args"
    assert "needs constructor arguments (in_dim, hidden)" in results["needs_args"]["message"]
    ok = results["with_args"]
    assert ok["status"] == "ok" and ok["inputs"][0]["shape"] == [2, 6]


def test_multiple_inputs(results):
    assert results["two_inferred"]["error_kind"] == "arity"
    r = results["two_inputs"]
    assert r["status"] == "ok"
    assert [i["inputs"] for i in r["calls"][:1]] == [[{"shape": [3, 10], "dtype": "float32"},
                                                      {"shape": [3, 20], "dtype": "float32"}]]


def test_integer_inputs(results):
    r = results["tokens"]
    assert r["status"] == "ok" and r["inputs"] == [{"shape": [2, 16], "dtype": "int64"}]
    assert "Embedding" in r["inferred_from"]["reason"]
    assert results["tokens_cpu"]["status"] == "ok"
    p = problem(results["embed_float"])
    assert p.failure["module"]["type"] == "Embedding" and "--dtype int64" in p.failure["fix"]
    assert results["factory"]["status"] == "ok" and results["factory"]["model_type"] == "TokenClassifier"


def test_inline_comment_shape(results):
    r = results["comment"]
    assert r["status"] == "ok" and r["inputs"] == [{"shape": [3, 5, 7], "dtype": "float32"}]
    assert not r["inputs_inferred"] and r["inputs_from_comment"]["line"] == 69


def test_nan_on_cpu(results):
    r = results["nan_cpu"]
    assert r["status"] == "nonfinite"
    first = r["nonfinite"][0]
    assert (first["name"], first["type"], first["nan"], first["inputs_finite"]) == ("log", "NaNLayer", True, True)


def test_meta_limitation_is_not_a_shape_error(results):
    p = problem(results["needs_values"])
    assert not p.tl100 and "--device cpu" in p.failure["hint"]


def test_bad_targets(results):
    assert results["not_module"]["error_kind"] == "not-a-module"
    assert results["missing"]["error_kind"] == "target-not-found"


def test_sys_exit_at_import(results):
    p = problem(results["exits"])
    assert not p.tl100 and p.failure["phase"] == "import"
    assert "sys.exit(3)" in p.headline
    assert p.failure["output"] == "setting up, then exiting"
    assert p.location.code == "sys.exit(3)"


def test_memory_blowup_and_crash_are_contained(results):
    p = problem(results["greedy"])
    assert "out of memory" in p.headline
    assert results["after_greedy"]["status"] == "ok"
    crash = problem(results["crash"])
    assert crash.failure["phase"] == "crash" and "SIGKILL" in crash.headline
    assert results["after_crash"]["status"] == "ok"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_gpu(results):
    assert results["cuda"]["error_kind"] == "no-cuda"


def test_timeout_kills_a_hang():
    r = run_jobs([job("sleep", "sleeps.py", "Slow", device="cpu")], timeout=1.5, cwd=MODELS)["sleep"]
    assert r["status"] == "failed" and r["failure"]["phase"] == "timeout"
    assert "within 1.5 s" in r["failure"]["message"]
    assert r["failure"]["output"] == "sleeping forever"


def test_failure_in_a_submodule_defined_in_another_file(results):
    p = problem(results["package"])
    assert p.tl100 and p.failure["module"]["name"] == "blocks.0.down"
    assert p.failure["owner"]["qualname"] == "FeedForward" and p.failure["owner"]["path"] == ["down"]
    assert p.location.path == MODELS / "pkg" / "layers.py" and p.location.line == 8
    assert p.failure["fix"] == "in_features should be 32"


def test_inference_follows_the_first_layer_called(results):
    r = results["head_first"]
    assert r["status"] == "ok", r.get("failure")
    assert r["inferred_from"]["layer"] == "backbone.0"
    assert r["inputs"] == [{"shape": [2, 3, 32, 32], "dtype": "float32"}]


def test_channels_last_input_is_tried_before_reporting(results):
    r = results["channels_last_check"]
    assert r["status"] == "ok" and r["inputs"][0]["shape"] == [2, 32, 32, 3]


def test_syntax_error_points_at_the_line(results, broken_file):
    p = problem(results["syntax"])
    assert p.failure["phase"] == "import" and "SyntaxError" in p.headline
    assert p.location.path == broken_file and p.location.line == 3
