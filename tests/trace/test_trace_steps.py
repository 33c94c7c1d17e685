"""Issue 41 items 7 and 8 (``models/steps.py``): TL102 loss-target-mismatch, TL103
batch-norm-one-value and TL104 inplace-breaks-backward, each bug beside its fix, on meta and
on cpu (all jobs in one child), through ``trace`` and ``check --trace``."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from torchlint import trace_settings
from torchlint.errors import ConfigError, UsageError
from torchlint.trace import command, confirm, report
from torchlint.trace.records import TraceResult
from torchlint.trace.runner import run_jobs
from trace_helpers import MODELS, job

torch = pytest.importorskip("torch")

FILE = "tests/trace/models/steps.py"
DEVICES = ("meta", "cpu")
X = [{"shape": [4, 8], "dtype": "float32"}]
BN_LINE = 62  # OneSample.forward's `return self.bn(self.fc(x))` (Batch has the same line)
ADD_LINE = 82  # InplaceAdd.forward's `h += 1`, after `h = torch.sigmoid(self.fc(x))`


def _line(text: str) -> int:
    lines = [i for i, ln in enumerate((MODELS / "steps.py").read_text().splitlines(), 1) if text in ln]
    assert len(lines) == 1, (text, lines)
    return lines[0]


def _fn(name):
    return {"target": {"file": str(MODELS / "steps.py"), "module": None, "attr": name, "display": f"steps.py:{name}"}}


def _target(shape, dtype="float32"):
    return {"shape": shape, "dtype": dtype}


CASES = {  # id -> (class, extra job keys)
    "broadcast": ("BroadcastLoss", {}),
    "squeezed": ("SqueezedLoss", {}),
    "onehot_wrong_width": ("Classifier", {"inputs": X, "loss": _fn("ce_loss"), "loss_target": _target([4, 5])}),
    "float_indices": ("Classifier", {"inputs": X, "loss": _fn("ce_loss"), "loss_target": _target([4])}),
    "indices": ("Classifier", {"inputs": X, "loss": _fn("ce_loss"), "loss_target": _target([4], "int64")}),
    "probabilities": ("Classifier", {"inputs": X, "loss": _fn("ce_loss"), "loss_target": _target([4, 3])}),
    "user_mse_broadcast": ("Regressor", {"inputs": X, "loss": _fn("mse_loss"), "loss_target": _target([4])}),
    "user_mse": ("Regressor", {"inputs": X, "loss": _fn("mse_loss"), "loss_target": _target([4, 1])}),
    "builtin_ce_column": ("Classifier", {"inputs": X, "loss": "ce", "loss_target": _target([4, 1], "int64")}),
    "builtin_ce": ("Classifier", {"inputs": X, "loss": "ce", "loss_target": _target([4], "int64")}),
    "one_sample": ("OneSample", {}),
    "batch": ("Batch", {}),
    "inplace_add": ("InplaceAdd", {}),
    "out_of_place": ("OutOfPlaceAdd", {}),
    "inplace_relu": ("InplaceRelu", {}),
    "inplace_after_linear": ("InplaceAfterLinear", {}),
}
JOBS = [job(f"{key}_{device}", "steps.py", cls, train=True, device=device, **extra)
        for key, (cls, extra) in CASES.items() for device in DEVICES]


@pytest.fixture(scope="module")
def results():
    raw = run_jobs(JOBS, timeout=120)
    return {k: TraceResult.from_json(v) for k, v in raw.items()}


def _findings(results, key, device):
    result = results[f"{key}_{device}"]
    found = report.traced_findings(result)
    if result.status == "failed":
        problem = report.analyse_failure(result.failure, result.model_type)
        if problem.rule is not None:
            found.append(problem.finding())
    return [(f.rule, f.line, f.message) for f in found]


@pytest.mark.parametrize("device", DEVICES)
def test_silent_broadcast_in_forward_is_tl102_at_the_loss_line(results, in_repo, device):
    assert _findings(results, "broadcast", device) == [(
        "TL102", _line("return F.mse_loss(out, y)  # bug"),
        "`mse_loss` gets an input of [4, 1] (float32) and a target of [4] (float32): they broadcast to [4, 4], "
        "so the loss silently compares every input with every target and trains on a wrong value; squeeze the "
        "input's last dimension (`input.squeeze(-1)`)")]
    assert results[f"broadcast_{device}"].status in ("ok", "nonfinite")  # it runs: the bug is silent
    assert _findings(results, "squeezed", device) == []


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_targets_are_checked_at_the_user_loss_line(results, in_repo, device):
    line = _line("return nn.CrossEntropyLoss()(output, target)")
    assert _findings(results, "onehot_wrong_width", device) == [(
        "TL102", line,
        "`cross_entropy` gets an input of [4, 3] (float32) and a target of [4, 5] (float32): it takes class "
        "indices of [4] (int64) or class probabilities of [4, 3] (float), so the loss fails; pass "
        "`target.argmax(1)` for one-hot targets, or one column per class")]
    assert _findings(results, "float_indices", device) == [(
        "TL102", line,
        "`cross_entropy` gets an input of [4, 3] (float32) and a target of [4] (float32): it takes class "
        "indices of [4] (int64) or class probabilities of [4, 3] (float), so the loss fails; pass class "
        "indices as `target.long()`")]
    for good in ("indices", "probabilities"):
        assert _findings(results, good, device) == [], good
        grads = results[f"{good}_{device}"].gradients
        assert grads.backward and grads.error is None and grads.no_grad == []
    assert results[f"indices_{device}"].target == {"shape": [4], "dtype": "int64"}


@pytest.mark.parametrize("device", DEVICES)
def test_user_mse_and_builtin_losses_take_the_target(results, in_repo, device):
    found = _findings(results, "user_mse_broadcast", device)
    assert [(r, ln) for r, ln, _ in found] == [("TL102", _line("return F.mse_loss(output, target)"))]
    assert "they broadcast to [4, 4]" in found[0][2]
    assert _findings(results, "user_mse", device) == []
    # the built-in loss has no line of the user's: the table says it, no finding
    column = results[f"builtin_ce_column_{device}"]
    assert report.traced_findings(column) == [] and report.gradient_problem(column)
    assert [m["problem"] for m in column.losses] == ["shape"]
    assert report.loss_lines(column) == [
        "the --loss: TL102 `cross_entropy` gets an input of [4, 3] (float32) and a target of [4, 1] (int64): "
        "it takes class indices of [4] (int64), so the loss fails; pass `target.squeeze(-1)`"]
    good = results[f"builtin_ce_{device}"]
    assert good.losses is None and good.gradients.backward
    assert good.gradients.loss == "cross-entropy against the target [4] (int64)"


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_on_one_value_per_channel_is_tl103_at_the_call(results, in_repo, device):
    found = _findings(results, "one_sample", device)
    assert len(found) == 1 and found[0][0] == "TL103", found
    assert found[0][1] == BN_LINE
    assert found[0][2].startswith(
        "`bn` (BatchNorm1d) gets one value per channel in training ([1, 8]): batch norm cannot take batch "
        "statistics of a single value and raises 'Expected more than 1 value per channel when training'; "
        "a batch of 1 is what the last batch of a DataLoader with drop_last=False is when "
        "len(dataset) % batch_size == 1; pass drop_last=True")
    assert _findings(results, "batch", device) == []


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_op_that_breaks_backward_is_tl104_naming_the_saving_op(results, in_repo, device):
    assert _findings(results, "inplace_add", device) == [(
        "TL104", ADD_LINE,
        f"`+=` modifies in place a tensor of [4, 8] that `sigmoid` at line {ADD_LINE - 1} saved for backward, so "
        "backward fails ('one of the variables needed for gradient computation has been modified by an "
        "inplace operation'); compute out of place (`x = x + y`, `inplace=False`) or on a `.clone()`")]
    relu = _findings(results, "inplace_relu", device)
    assert [(r, ln) for r, ln, _ in relu] == [("TL104", _line("return self.act(h)"))]
    assert relu[0][2].startswith(f"`relu(inplace=True)` modifies in place a tensor of [4, 8] that `exp` at line "
                                 f"{_line('h = torch.exp(self.fc(x))')} saved")
    for good in ("out_of_place", "inplace_after_linear"):
        assert _findings(results, good, device) == [], good
        assert results[f"{good}_{device}"].gradients.error is None


def test_table_and_exit_code_of_trace_train(in_repo, capsys):
    out = io.StringIO()
    args = _args("InplaceAdd")
    assert command.run(args, None, None, stdout=out) == 1
    text = out.getvalue()
    assert f"{FILE}:{ADD_LINE}: TL104 `+=` modifies in place" in text
    assert text.endswith("Trace ran, but 1 problem(s) in the training step (above).\n")
    out = io.StringIO()
    args = _args("Classifier", input_shape=["4,8"], target_shape="4", target_dtype="int64",
                 loss=f"{FILE}:ce_loss", format="json")
    assert command.run(args, None, None, stdout=out) == 0
    doc = json.loads(out.getvalue())
    assert (doc["findings"], doc["losses"], doc["target"]) == ([], [], {"shape": [4], "dtype": "int64"})
    out = io.StringIO()
    args = _args("Classifier", input_shape=["4,8"], target_shape="4,5", loss=f"{FILE}:ce_loss", format="json")
    assert command.run(args, None, None, stdout=out) == 1
    doc = json.loads(out.getvalue())
    found = doc["findings"]
    assert [(m["loss"], m["problem"], m["frame"]["line"]) for m in doc["losses"]] == [
        ("cross_entropy", "shape", _line("return nn.CrossEntropyLoss()(output, target)"))]
    assert [(f["rule"], f["line"]) for f in found] == [("TL102", _line("return nn.CrossEntropyLoss()(output, target)"))]


def _args(cls, **over):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args([f"{FILE}:{cls}", "--train"])
    for k, v in over.items():
        setattr(args, k, v)
    return args


def test_target_options_and_config(in_repo):
    with pytest.raises(UsageError, match="the default loss \\(sum\\) takes no target"):
        command.loss_arguments(_args("Classifier", target_shape="4"))
    with pytest.raises(UsageError, match="--target-dtype needs --target-shape"):
        command.loss_arguments(_args("Classifier", target_dtype="int64"))
    assert command.loss_arguments(_args("Classifier", target_shape="4", target_dtype="int64", loss="ce")) == {
        "train": True, "loss": "ce", "loss_target": {"shape": [4], "dtype": "int64"}}
    cfg = trace_settings.load({"models": {f"{FILE}:Classifier": {
        "input-shape": [4, 8], "loss": "ce", "target-shape": [4], "target-dtype": "int64"}}})
    entry = cfg.model_for_module("x", "y") or next(iter(cfg.models.values()))
    assert (entry.loss, entry.target.shape, entry.target.dtype) == ("ce", [4], "int64")
    # the entry supplies the loss and target when --train asks for a step, and not otherwise
    assert command.loss_arguments(_args("Classifier"), entry)["loss_target"] == {"shape": [4], "dtype": "int64"}
    plain = _args("Classifier")
    plain.train = False
    assert command.loss_arguments(plain, entry) == {}
    with pytest.raises(ConfigError):
        trace_settings.load({"models": {f"{FILE}:Classifier": {"target-dtype": "int64"}}})
    help_text = io.StringIO()
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    parser.print_help(help_text)
    assert "--target-shape SHAPE" in help_text.getvalue() and "--target-dtype DTYPE" in help_text.getvalue()


def test_check_trace_reports_each_at_its_line(in_repo):
    table = {"timeout": 120, "models": {f"{FILE}:Classifier": {
        "input-shape": [4, 8], "loss": f"{FILE}:ce_loss", "target-shape": [4, 5]}}}
    out = confirm.apply_trace([], [MODELS / "steps.py"], table, None, warn=lambda m: None)
    got = sorted((f.rule, f.line) for f in out)
    assert got == sorted([
        ("TL102", _line("return F.mse_loss(out, y)  # bug")),
        ("TL102", _line("return nn.CrossEntropyLoss()(output, target)")),
        ("TL103", BN_LINE),
        ("TL104", ADD_LINE),
        ("TL104", _line("return self.act(h)")),
    ]), got
    assert all(f.confirmed and f.path == FILE for f in out)
    assert [f.message.rsplit(" (", 1)[1] for f in out if f.rule == "TL103"] == ["traced OneSample on meta with input [1, 8])"]


# --------------------------------------------------------------------------- the loss check alone

def _check(name, a, b, a_dtype=None, b_dtype=None, **kwargs):
    from torchlint.trace.child.losses import check_loss_call

    x = torch.empty(a, dtype=a_dtype or torch.float32, device="meta")
    y = torch.empty(b, dtype=b_dtype or torch.float32, device="meta")
    return check_loss_call(torch, name, (x, y), kwargs)


@pytest.mark.parametrize(("name", "a", "b", "b_dtype", "problem"), [
    ("mse_loss", (4, 1), (4,), None, "broadcast"),
    ("l1_loss", (4,), (4, 1), None, "broadcast"),
    ("smooth_l1_loss", (4, 3), (3,), None, "broadcast"),  # the target broadcast to the input
    ("huber_loss", (4, 3), (4, 2), None, "shape"),
    ("binary_cross_entropy_with_logits", (4, 1), (4,), None, "shape"),  # BCE refuses, never broadcasts
    ("binary_cross_entropy", (4,), (4,), torch.int64, "dtype"),
    ("cross_entropy", (4, 3), (4,), torch.float32, "dtype"),
    ("cross_entropy", (4, 3), (4,), torch.int32, "dtype"),  # meta takes it, the CPU and CUDA kernels do not
    ("cross_entropy", (4, 3), (4, 1), torch.int64, "shape"),
    ("cross_entropy", (4, 3), (4, 5), None, "shape"),
    ("nll_loss", (4, 3), (4, 3), None, "shape"),  # nll_loss takes no probabilities
    ("cross_entropy", (4, 3, 8), (4, 8), torch.bool, "dtype"),
])
def test_loss_mismatches(name, a, b, b_dtype, problem):
    found = _check(name, a, b, b_dtype=b_dtype)
    assert found is not None and found["problem"] == problem, found


@pytest.mark.parametrize(("name", "a", "b", "b_dtype"), [
    ("mse_loss", (4, 1), (4, 1), None),
    ("binary_cross_entropy_with_logits", (4, 5), (4, 5), None),
    ("cross_entropy", (4, 3), (4,), torch.int64),
    ("cross_entropy", (4, 3), (4, 3), None),  # class probabilities
    ("cross_entropy", (4, 3, 8, 8), (4, 8, 8), torch.int64),  # segmentation
    ("nll_loss", (4, 3), (4,), torch.uint8),
    ("cross_entropy", (3,), (), torch.int64),  # one unbatched sample
    ("relu", (4, 1), (4,), None),  # not a loss
    ("mse_loss", (4, 1), (), None),  # a constant target
])
def test_losses_that_agree_are_not_reported(name, a, b, b_dtype):
    assert _check(name, a, b, b_dtype=b_dtype) is None


def test_loss_messages():
    broadcast_to_input = _check("mse_loss", (4, 3), (3,))
    assert report.loss_text(broadcast_to_input) == (
        "`mse_loss` gets an input of [4, 3] (float32) and a target of [3] (float32): the target is broadcast "
        "to the input's shape [4, 3], so every input is compared with the same targets, silently (PyTorch only "
        "warns); give both the same shape")
    assert report.loss_text(_check("cross_entropy", (4, 3), (4,), b_dtype=torch.int32)).endswith(
        "a target of [4] (int32): it takes class indices of [4] (int64), so the loss fails; pass `target.long()`")
    assert report.loss_text(_check("binary_cross_entropy_with_logits", (4, 1), (4,))) == (
        "`binary_cross_entropy_with_logits` gets an input of [4, 1] (float32) and a target of [4] (float32): "
        "the shapes do not broadcast, so the loss fails; give both the same shape")


def test_check_trace_warns_of_a_configured_built_in_loss_it_cannot_place(in_repo):
    table = {"timeout": 120, "models": {f"{FILE}:Classifier": {
        "input-shape": [4, 8], "loss": "ce", "target-shape": [4, 1], "target-dtype": "int64"}}}
    warned = []
    out = confirm.apply_trace([], [MODELS / "steps.py"], table, None, warn=warned.append)
    assert not [f for f in out if f.line == _line("return nn.CrossEntropyLoss()(output, target)")]
    assert [w for w in warned if "Classifier" in w] == [
        f"--trace: {FILE}:Classifier: the configured loss: TL102 `cross_entropy` gets an input of [4, 3] (float32) "
        "and a target of [4, 1] (int64): it takes class indices of [4] (int64), so the loss fails; pass "
        "`target.squeeze(-1)`"]
