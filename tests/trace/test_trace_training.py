"""Issue 17: a training step in the trace (gradients, frozen parameters, NaN gradients) and
TL101 device-mismatch, on the small models of ``models/training.py``.  All jobs run in one
child (one torch import)."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from torchlint.errors import UsageError
from torchlint.finding import Finding, Severity
from torchlint.trace import command, confirm, report
from torchlint.trace.records import TraceResult
from torchlint.trace.runner import run_jobs
from trace_helpers import MODELS, REPO, job

torch = pytest.importorskip("torch")

FILE = "tests/trace/models/training.py"
INPUT = [{"shape": [4, 8], "dtype": "float32"}]


def _line(text: str) -> int:
    """The line of ``models/training.py`` holding ``text`` (exactly one)."""
    lines = [i for i, ln in enumerate((MODELS / "training.py").read_text().splitlines(), 1) if text in ln]
    assert len(lines) == 1, (text, lines)
    return lines[0]


def _train(job_id, attr, **extra):
    return job(job_id, "training.py", attr, inputs=INPUT, train=True, **extra)


JOBS = [
    _train("detached", "Detached"),
    _train("no_grad", "NoGradEncoder"),
    _train("argmax", "ArgmaxRouting"),
    _train("frozen", "FrozenBackbone"),
    _train("data", "DataCut"),
    _train("log0_cpu", "LogOfZero", device="cpu"),
    _train("log0_meta", "LogOfZero"),
    _train("cpu_mask", "CpuMask"),
    job("cpu_mask_no_train", "training.py", "CpuMask", inputs=INPUT),
    _train("cpu_into_linear", "CpuInputToLayer"),
    _train("device_aware", "DeviceAware"),
    _train("device_aware_cpu", "DeviceAware", device="cpu"),
    job("packed", "training.py", "PackedRNN", train=True, inputs=[{"shape": [2, 5, 8], "dtype": "float32"}]),
    _train("mse", "Detached", loss="mse"),
    _train("ce", "Detached", loss="ce"),
    _train("user_loss", "Detached", loss={"target": {"file": str(MODELS / "training.py"), "module": None,
                                                     "attr": "first_output_loss", "display": "training.py:first_output_loss"}}),
    _train("bad_loss", "Detached", loss={"target": {"file": str(MODELS / "training.py"), "module": None,
                                                    "attr": "not_a_scalar", "display": "training.py:not_a_scalar"}}),
]


@pytest.fixture(scope="module")
def results():
    raw = run_jobs(JOBS, timeout=120)
    return {k: TraceResult.from_json(v) for k, v in raw.items()}


def _no_grad(result):
    return {g["name"]: g for g in result.gradients.no_grad}


def test_layer_cut_off_by_detach_is_reported_with_its_lines(results, in_repo):
    result = results["detached"]
    assert result.status == "ok"
    groups = _no_grad(result)
    assert list(groups) == ["encoder"]
    cause = groups["encoder"]["cause"]
    assert (cause["kind"], cause["op"], cause["frame"]["line"]) == ("cut", "detach", _line(".detach()"))
    loc = report.group_location(groups["encoder"])
    assert (loc.display_path(), loc.line) == (FILE, _line("self.encoder = nn.Linear(8, 16)"))
    text = report.render_table(result, "t", "meta", None)
    assert (f"    encoder (Linear, 144 params)  {FILE}:{_line('self.encoder = nn.Linear(8, 16)')}  "
            "self.encoder = nn.Linear(8, 16)") in text
    assert (f"      cut off by `.detach()` at {FILE}:{_line('.detach()')}  "
            "h = torch.relu(self.encoder(x)).detach()") in text
    assert text.endswith("Trace ran, but 1 group(s) of trainable parameters get no gradient.")
    assert report.gradient_problem(result)


def test_no_grad_block_non_differentiable_op_and_unused_layer(results, in_repo):
    encoder = _no_grad(results["no_grad"])["encoder"]
    assert encoder["type"] == "Sequential" and encoder["params"] == 416  # one group for the block
    assert (encoder["cause"]["op"], encoder["cause"]["frame"]["line"]) == ("no_grad", _line("h = self.encoder(x)"))
    groups = _no_grad(results["argmax"])
    assert (groups["router"]["cause"]["op"], groups["router"]["cause"]["frame"]["line"]) == ("argmax", _line("argmax"))
    assert groups["spare"]["cause"] == {"kind": "unused"}  # what TL005 says statically
    assert report.cause_text(groups["spare"]["cause"]) == "never used by forward (an unused layer: TL005)"
    assert results["argmax"].gradients.modules["experts"]["status"] == "ok"
    scale = _no_grad(results["data"])["scale"]  # a bare parameter, read through .data
    assert (scale["type"], scale["params"], scale["cause"]["op"]) == ("Parameter", 8, "data")
    assert report.cause_text(scale["cause"]).startswith(f"cut off by `.data` at {FILE}:{_line('self.scale.data')}")


def test_frozen_backbone_is_listed_apart_not_as_a_finding(results):
    result = results["frozen"]
    grads = result.gradients
    assert grads.no_grad == [] and (grads.trainable, grads.frozen_params) == (68, 416)
    assert [(g["name"], g["type"], g["params"]) for g in grads.frozen] == [("backbone", "Sequential", 416)]
    assert grads.modules["backbone"] == {"status": "frozen", "norm": None}
    assert not report.gradient_problem(result)
    text = report.render_table(result, "t", "meta", None)
    assert "  parameters:   484 (1.9 KiB); trainable 68, frozen 416\n" in text  # the trainable/frozen split
    assert "  frozen (requires_grad=False, intended: not a problem):\n    backbone (Sequential, 416 params)" in text
    assert text.endswith("Trace ran clean.")


def test_nan_gradient_from_log_of_zero_on_cpu(results):
    result = results["log0_cpu"]
    assert result.status == "nonfinite" and result.nonfinite == []  # the forward itself is finite
    grads = result.gradients
    assert [(n["name"], n["nan"]) for n in grads.nonfinite] == [("fc.weight", True), ("fc.bias", True)]
    assert grads.nonfinite_origin == "fc"
    assert grads.modules["fc"] == {"status": "nonfinite", "norm": "nan"}
    assert grads.modules["out"]["status"] == "ok" and grads.modules["out"]["norm"] > 0
    text = report.render_table(result, "t", "cpu", None)
    assert "  NaN/Inf gradients: fc.weight (NaN), fc.bias (NaN)" in text
    assert f"  gradient norm per top-level module: fc nan, out {grads.modules['out']['norm']:.3g}\n" in text
    assert "first non-finite in backward: the gradient of `fc`'s output" in text
    # the Grad column: the norm of each top-level module's gradient
    assert any(ln.split()[1:3] == ["fc", "Linear"] and ln.split()[-1] == "NaN" for ln in text.splitlines())
    # on meta there are no values: no NaN check, no norms
    meta = results["log0_meta"].gradients
    assert meta.nonfinite == [] and meta.modules["fc"] == {"status": "ok", "norm": None}


def test_cpu_tensor_made_in_forward_is_tl101_at_its_creation_line(results, in_repo):
    for key in ("cpu_mask", "cpu_mask_no_train"):
        result = results[key]
        assert result.status == "failed" and result.failure.kind == "device"
        problem = report.analyse_failure(result.failure, result.model_type)
        assert problem.rule.code == "TL101" and not problem.tl100
        assert (problem.location.display_path(), problem.location.line) == (FILE, _line("mask = torch.ones(h.shape[-1])"))
        assert problem.headline == ("`ones(...)` makes a CPU tensor (1x8) in forward that meets the model's tensors "
                                    f"in `mul` at line {_line('return h * mask')}: this fails with a device mismatch "
                                    "on a GPU")
        finding = problem.finding()
        assert finding.rule == "TL101" and finding.severity is Severity.ERROR and finding.confirmed
        assert "create it with torch.ones(..., device=x.device) or x.new_ones(...)" in finding.message


def test_cpu_input_to_a_layer_is_caught_though_meta_linear_accepts_it(results):
    result = results["cpu_into_linear"]
    info = result.failure.device_mismatch
    assert (info["op"], info["created_by"], info["created"]["line"]) == ("linear", "zeros", _line("bias = torch.zeros"))


def test_device_aware_model_is_clean(results):
    # device=, a buffer, a 0-dim scalar and a CPU index tensor: no mismatch on meta or cpu
    # and a packed sequence: its lengths and batch sizes are CPU tensors by design
    for key in ("device_aware", "device_aware_cpu", "packed"):
        assert results[key].status == "ok", results[key].failure
        assert results[key].gradients.no_grad == []


def test_losses(results):
    assert results["mse"].gradients.loss == "MSE against a zero target"
    assert results["ce"].gradients.loss == "cross-entropy against class-0 targets"
    for key in ("mse", "ce", "user_loss"):
        grads = results[key].gradients
        assert grads.backward and grads.error is None and list(_no_grad(results[key])) == ["encoder"]
    assert results["user_loss"].gradients.loss == "`training.py:first_output_loss`"
    bad = results["bad_loss"].gradients
    assert not bad.backward and bad.error == "the loss function returned a tensor of shape [4, 4], not a scalar tensor"


def _args(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_loss_flags():
    assert command.loss_arguments(_args("t.py:M")) == {}
    assert command.loss_arguments(_args("t.py:M", "--train")) == {"train": True, "loss": "sum"}
    assert command.loss_arguments(_args("t.py:M", "--loss", "ce")) == {"train": True, "loss": "ce"}
    user = command.loss_arguments(_args("t.py:M", "--loss", f"{FILE}:first_output_loss"))
    assert user["loss"]["target"]["attr"] == "first_output_loss"
    with pytest.raises(UsageError, match="--loss 'hinge': expected sum, mse, ce or"):
        command.loss_arguments(_args("t.py:M", "--loss", "hinge"))
    with pytest.raises(UsageError, match="--loss: bad loss function 'nope.py:f'"):
        command.loss_arguments(_args("t.py:M", "--loss", "nope.py:f"))


def test_trace_train_command_json(in_repo):
    out = io.StringIO()
    code = command.run(_args(f"{FILE}:Detached", "--train", "--input-shape", "4,8", "--format", "json"),
                       stdout=out)
    doc = json.loads(out.getvalue())
    assert code == 1  # a layer without a gradient
    grads = doc["gradients"]
    assert grads["no_grad"][0]["definition"] == {"path": FILE, "line": _line("self.encoder = nn.Linear(8, 16)"),
                                                 "code": "self.encoder = nn.Linear(8, 16)"}
    assert grads["no_grad"][0]["explanation"].startswith("cut off by `.detach()` at ")
    assert "owner" not in grads["no_grad"][0]
    out = io.StringIO()
    code = command.run(_args(f"{FILE}:CpuMask", "--input-shape", "4,8", "--format", "json"), stdout=out)
    doc = json.loads(out.getvalue())
    assert code == 1 and doc["failure"]["rule"] == "TL101"
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [("TL101", _line("mask = torch.ones(h.shape[-1])"))]


def test_check_trace_confirms_tl010_and_reports_tl101_once(in_repo):
    line = _line("mask = torch.ones(h.shape[-1])")
    static = [Finding("TL010", "tensor-without-device", Severity.WARNING, FILE, line, 16, line, 39, "static")]
    out = confirm.apply_trace(static, [MODELS / "training.py"], {"timeout": 120}, None, warn=lambda m: None)
    found = sorted((f.rule, f.line, f.confirmed) for f in out)
    # CpuMask: the static TL010 finding confirmed, no TL101 on its line; CpuInputToLayer: TL101
    # (no static finding there); the other classes trace clean.
    assert found == [("TL010", line, True), ("TL101", _line("bias = torch.zeros"), True)]


def test_check_trace_verbose_says_what_was_traced_with_which_input(in_repo):
    notes = []
    confirm.apply_trace([], [MODELS / "training.py"], {"timeout": 120}, None, warn=lambda m: None,
                        note=notes.append)
    frozen = next(n for n in notes if ":FrozenBackbone " in n)
    assert frozen.startswith(f"--trace: traced {FILE}:FrozenBackbone on meta with input [2, 8] (inferred from "
                             "`backbone.0`: ")
    assert frozen.endswith("); an inferred input can hide a shape bug: pin the real one in "
                           f"[tool.torchlint.trace.models.\"{FILE}:FrozenBackbone\"] input-shape = [2, 8]")
    assert not any(":CpuMask " in n for n in notes)  # failed traces are findings or warnings
    assert (f"--trace: {FILE}:Detached: `encoder` (Linear) gets no gradient: cut off by `.detach()` at "
            f"{FILE}:{_line('.detach()')}  h = torch.relu(self.encoder(x)).detach()") in notes


def test_wrong_input_rank_is_diagnosed_as_the_inputs_fault(in_repo):
    out = io.StringIO()
    code = command.run(_args("tests/trace/models/cnn.py:GoodCNN", "--input-shape", "4,32,32"), stdout=out)
    text = out.getvalue()
    assert code == 1 and "TL100" not in text  # not a finding against the layer
    assert ("    fix:      the input lacks its channel dimension, the layer is right: use an input of shape "
            "[4, 3, 32, 32] (--input-shape 4,3,32,32, or input-shape in the trace config)") in text


def test_time_line_includes_the_child_start_and_torch_import(results):
    result = results["frozen"]
    assert 0 < result.torch_import_seconds < result.startup_seconds
    line = next(ln for ln in report.render_table(result, "t", "meta", None).splitlines() if "  trace: " in ln)
    assert (f"s after {result.startup_seconds:.2f} s starting the trace process, "
            f"{result.torch_import_seconds:.2f} s of it importing torch, peak RSS") in line


def test_timed_out_trace_shows_where_it_hung(in_repo):
    raw = run_jobs([job("sleep", "sleeps.py", "Slow", device="cpu")], timeout=1.5, cwd=MODELS)["sleep"]
    failure = TraceResult.from_json(raw).failure
    assert failure.phase == "timeout" and failure.output == "sleeping forever"  # the dump is taken out
    assert (failure.user_frame["line"], failure.user_frame["function"]) == (14, "forward")
    text = report.render_problem(report.analyse_failure(failure))
    assert text.startswith("tests/trace/models/sleeps.py:14:13: the trace did not finish within 1.5 s")
    assert "    code:   time.sleep(1)\n    stack:  forward (tests/trace/models/sleeps.py:14)\n" in text


def test_hung_stack_parsing():
    from torchlint.trace.runner import hung_stack

    output = ("before\nThread 0x00007f (most recent call first):\n"
              '  File "/proj/model.py", line 9 in helper\n'
              '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1 in _call_impl\n'
              '  File "/proj/model.py", line 20 in forward\nafter')
    rest, frames = hung_stack(output)
    assert rest == "before\nafter"
    assert [(f["line"], f["function"]) for f in frames] == [(20, "forward"), (9, "helper")]  # innermost last


def _row(name, typ, depth, params=None, **extra):
    row = {"name": name, "type": typ, "depth": depth, "inputs": [{"shape": [2, 8], "dtype": "float32"}],
           "outputs": {"shape": [2, 8], "dtype": "float32"}, **extra}
    if params is not None:
        row["params"] = params
    return row


def _stack_rows(blocks=32, failed_at=None):
    rows = [_row("", "Net", 0, 1000), _row("embed", "Linear", 1, 72)]
    for k in range(blocks):
        rows.append(_row(f"layers.{k}", "Block", 1, 72, **({"failed": True} if k == failed_at else {})))
        rows.append(_row(f"layers.{k}.fc", "Linear", 2, 72))
    rows.append(_row("embed", "Linear", 1))  # the embedding called again (tied output layer)
    return rows


def _table(rows, depth=None):
    result = TraceResult("ok", params=1000, calls=rows)
    return report.render_table(result, "t", "meta", None, depth).split("\n\nTotals")[0].splitlines()[5:]


def test_repeated_blocks_fold_and_reused_modules_get_a_legend():
    lines = _table(_stack_rows())
    assert [ln.split() for ln in lines] == [
        ["1", "(root)", "Net", "[2,", "8]", "[2,", "8]", "1,000"],
        ["2", "embed", "Linear", "[2,", "8]", "[2,", "8]", "72"],
        ["3", "layers.0-31", "32", "×", "Block", "[2,", "8]", "[2,", "8]", "2,304"],
        ["4", "embed", "Linear", "[2,", "8]", "[2,", "8]", "=#2"],
        ["Params", "=#N:", "the", "module", "of", "row", "N,", "called", "again", "(its", "parameters", "are",
         "counted", "once,", "there)"]]
    # --depth N: every call down to N, nothing folded
    assert [ln.split()[1] for ln in _table(_stack_rows(4), depth=1)[:-1]] == \
        ["(root)", "embed", "layers.0", "layers.1", "layers.2", "layers.3", "embed"]
    # two blocks are not folded; a failed block stays in view and ends the run before it
    assert "layers.0-1" not in "\n".join(_table(_stack_rows(2)))
    names = [ln.split()[1] for ln in _table(_stack_rows(6, failed_at=4))[:-1]]
    assert names == ["(root)", "embed", "layers.0-3", "layers.4", "layers.4.fc", "layers.5", "layers.5.fc", "embed"]


def test_depth_flag():
    assert _args("t.py:M", "--depth", "2").depth == 2
    with pytest.raises(SystemExit):
        _args("t.py:M", "--depth", "-1")
