"""``torchlint trace`` end to end, and ``check --trace`` (apply_trace)."""

from __future__ import annotations

import argparse
import io
import json
import re

import pytest

from torchlint.errors import UsageError
from torchlint.finding import Finding, Severity
from torchlint.trace import command, confirm
from trace_helpers import MODELS, REPO

torch = pytest.importorskip("torch")


def _args(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def _run(*argv, config=None, config_path=None):
    out = io.StringIO()
    code = command.run(_args(*argv), config, config_path, stdout=out)
    return code, out.getvalue()


def test_readme_demo_fixture(in_repo):
    code, out = _run("fixtures/shape_bug/model.py:SmallCNN", "--input-shape", "4,3,32,32")
    assert code == 1
    assert "fixtures/shape_bug/model.py:22:9: TL100 shape-mismatch `fc1` (Linear): in_features=4096 " \
           "but the input has 16384 features (shape [4, 16384])" in out
    assert "defined:  fixtures/shape_bug/model.py:22  self.fc1 = nn.Linear(64 * 8 * 8, 128)" in out
    assert "fix:      in_features should be 16384 (= 64*16*16)" in out
    assert re.search(r"\n5\s+conv2\s+Conv2d\s+\[4, 32, 16, 16\]\s+\[4, 64, 16, 16\]\s+18,496\n", out)
    assert re.search(r"\s+fc1\s+Linear\s+\[4, 16384\]\s+FAILED", out)
    assert out.rstrip().endswith("Trace failed.")


def test_clean_cnn_json_on_cpu(in_repo):
    code, out = _run("tests/trace/models/cnn.py:GoodCNN", "--device", "cpu", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["status"] == "ok" and doc["device"] == "cpu" and doc["failure"] is None
    assert doc["inputs_inferred"] and doc["inputs"][0]["shape"] == [2, 3, 32, 32]
    assert doc["unused"] == [] and doc["nonfinite"] == [] and doc["findings"] == []
    assert doc["totals"]["params"] == 11642 and doc["totals"]["batch"] == 2
    assert [c["name"] for c in doc["calls"]][:2] == ["", "conv1"]


def test_constructor_arguments_from_config_and_table(in_repo):
    cfg = {"models": {"tests/trace/models/misc.py:MLP": {"kwargs": {"in_dim": 3, "hidden": 4},
                                                         "input-shape": [5, 3]}}}
    code, out = _run("tests/trace/models/misc.py:MLP", "--device", "cpu", config=cfg,
                     config_path=str(REPO / "pyproject.toml"))
    assert code == 0, out
    assert "Input: [5, 3]\n" in out
    assert re.search(r"net\.2\s+Linear\s+\[5, 4\]\s+\[5, 2\]", out)
    assert "Modules never called: none" in out and out.rstrip().endswith("Trace ran clean.")


def test_tracing_writes_no_bytecode_into_the_project(tmp_path):
    (tmp_path / "layers.py").write_text("import torch.nn as nn\n\ndef block():\n    return nn.Linear(4, 2)\n")
    (tmp_path / "model.py").write_text("import torch.nn as nn\nfrom layers import block\n\n\n"
                                       "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                                       "        self.fc = block()\n\n    def forward(self, x):\n        return self.fc(x)\n")
    code, out = _run(f"{tmp_path / 'model.py'}:Net", "--input-shape", "3,4")
    assert code == 0, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["layers.py", "model.py"]


# ------------------------------------------------------------------ result -> exit code, no child


@pytest.fixture
def fake_child(monkeypatch):
    def install(result):
        monkeypatch.setattr(command, "run_jobs", lambda jobs, **kw: {jobs[0]["id"]: result})
    return install


def test_child_errors_are_usage_errors(in_repo, fake_child):
    fake_child({"status": "error", "error_kind": "needs-args",
                "message": "x.py:MLP needs constructor arguments (in_dim, hidden); pass them with --args"})
    with pytest.raises(UsageError, match="needs constructor arguments"):  # the source alone does not show it
        _run("tests/trace/models/misc.py:MLP", "--args", "[4, 8]")
    fake_child({"status": "error", "error_kind": "no-cuda", "message": "--device cuda needs a CUDA GPU"})
    with pytest.raises(UsageError, match="needs a CUDA GPU"):
        _run("tests/trace/models/misc.py:MLP", "--args", "[4, 8]", "--device", "cuda")


def test_timeout_and_exit_are_failed_traces(in_repo, fake_child):
    fake_child({"status": "failed", "failure": {"phase": "timeout", "kind": "timeout",
                                                "message": "the trace did not finish within 60 s",
                                                "output": "sleeping forever"}})
    code, out = _run("tests/trace/models/sleeps.py:Slow")
    assert code == 1 and "did not finish within 60 s" in out and "output: sleeping forever" in out
    fake_child({"status": "failed", "failure": {"phase": "import", "kind": "other",
                                                "message": "user code called sys.exit(3)"}})
    code, out = _run("tests/trace/models/exits_at_import.py:Net", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "failed" and "sys.exit(3)" in doc["failure"]["message"]


def test_nonfinite_is_exit_1(in_repo, fake_child):
    fake_child({"status": "nonfinite", "params": 25, "inputs": [{"shape": [2, 4], "dtype": "float32"}],
                "calls": [], "nonfinite": [{"name": "log", "type": "NaNLayer", "nan": True,
                                            "inf": False, "inputs_finite": True}]})
    code, out = _run("tests/trace/models/misc.py:MakesNaN", "--device", "cpu")
    assert code == 1
    assert "log (NaNLayer): NaN  <- first appears here" in out


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_trace_reports_peak_memory(in_repo):  # pragma: no cover - no GPU in CI
    code, out = _run("tests/trace/models/cnn.py:GoodCNN", "--device", "cuda")
    assert code == 0 and "CUDA peak:" in out


# ------------------------------------------------------------------ check --trace


def _tl005(cls, attr, line):
    return Finding("TL005", "unused-layer", Severity.WARNING, "tests/trace/models/misc.py", line, 9,
                   line, 20, f"`self.{attr}` is never used", extra={"class": cls, "attribute": attr})


def test_check_trace_merges_findings(in_repo):
    static = [
        _tl005("UnusedLayer", "extra", 12),  # never called: confirmed
        _tl005("DynamicUse", "block_a", 22),  # called through getattr(): dropped
        _tl005("DynamicUse", "eval_head", 24),  # used in eval mode only: dropped
        _tl005("MLP", "net", 36),  # built from the config entry and used: dropped
        _tl005("TwoTower", "left", 45),  # two inputs, no shapes: not traced, unchanged
        Finding("TL001", "other", Severity.WARNING, "tests/trace/models/cnn.py", 1, 1, 1, 2, "untouched"),
    ]
    warnings = []
    files = [MODELS / "cnn.py", MODELS / "misc.py", MODELS / "exits_at_import.py"]
    cfg = {"timeout": 60, "models": {"tests/trace/models/misc.py:MLP": {"args": [3, 4]}}}
    out = confirm.apply_trace(static, files, cfg, str(REPO / "pyproject.toml"), warn=warnings.append)
    by_rule = {}
    for f in out:
        by_rule.setdefault(f.rule, []).append(f)
    assert [(f.extra["class"], f.confirmed) for f in by_rule["TL005"]] == [
        ("UnusedLayer", True), ("TwoTower", None)]
    assert by_rule["TL001"][0].confirmed is None
    tl100 = {(f.path, f.line, f.column): f for f in by_rule["TL100"]}
    assert sorted(tl100) == [("tests/trace/models/cnn.py", 28, 9), ("tests/trace/models/cnn.py", 43, 13),
                             ("tests/trace/models/cnn.py", 58, 13)]
    fc1 = tl100[("tests/trace/models/cnn.py", 28, 9)]
    assert fc1.confirmed is True and fc1.severity is Severity.ERROR and fc1.name == "shape-mismatch"
    assert "in_features should be 16384 (= 64*16*16)" in fc1.message
    assert "inferred; no common input size ran" in fc1.message
    assert fc1.to_dict()["confirmed"] is True
    # NeedsValues cannot run on meta, exits_at_import.py calls sys.exit: warnings, not TL100.
    assert len(warnings) == 2, warnings
    assert "exits_at_import.py:Net" in warnings[0] and "sys.exit(3)" in warnings[0]
    assert "misc.py:NeedsValues" in warnings[1] and "--device cpu" in warnings[1]
