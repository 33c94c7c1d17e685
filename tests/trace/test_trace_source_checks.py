"""What a trace target's source alone shows (trace/source_checks.py) is said before the trace
child starts; and the plan's command-line edges: precision names as Lightning's, decimal GB
and binary GiB, --fail-on-plan, one activations figure."""

from __future__ import annotations

import argparse
import io
import textwrap

import pytest

from torchlint import trace_settings
from torchlint.errors import UsageError
from torchlint.trace import command, gpus, plan, report
from torchlint.trace.source_checks import check_target


def _write(tmp_path, source):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


NET = """\
import torch.nn as nn
from helpers import Imported


class Net(nn.Module):
    def __init__(self, n_classes, hidden=64, *, dropout):
        super().__init__()
        self.fc = nn.Linear(hidden, n_classes)


class Child(Net):
    pass


def make(depth, width=8):
    return Net(depth, dropout=0.1)
"""


@pytest.mark.parametrize("attr, args, kwargs, message", [
    ("Net", [], {}, r"model.py:Net needs constructor arguments \(n_classes, dropout; model.py, line 5\); "
                    r"pass them with --args/--kwargs \(JSON\)"),
    ("Net", [10], {}, r"needs constructor arguments \(dropout; model.py, line 5\)"),
    ("make", [], {"width": 4}, r"needs constructor arguments \(depth; model.py, line 15\)"),
    ("Nett", [], {}, r"bad trace target 'model.py:Nett': model.py defines no 'Nett' \(it defines: Child, Net, make\)"),
])
def test_what_the_source_shows_is_said_before_any_child(tmp_path, attr, args, kwargs, message):
    path = _write(tmp_path, NET)
    with pytest.raises(UsageError, match=message):
        check_target(f"model.py:{attr}", path, attr, args, kwargs)


@pytest.mark.parametrize("attr, args, kwargs", [
    ("Net", [10], {"dropout": 0.1}),
    ("Net", [], {"n_classes": 10, "dropout": 0.0, "hidden": 3}),
    ("Child", [], {}),  # inherited __init__: the child finds out
    ("Imported", [], {}),  # bound by an import: not read here
    ("make", [3], {}),
])
def test_targets_the_source_cannot_rule_out_pass(tmp_path, attr, args, kwargs):
    check_target(f"model.py:{attr}", _write(tmp_path, NET), attr, args, kwargs)


@pytest.mark.parametrize("source", [
    "from models import *\n",
    "def __getattr__(name):\n    return None\n",
    "try:\n    from a import Net\nexcept ImportError:\n    Net = None\n",
    "import torch\n\n@torch.no_grad\nclass Net:\n    def __init__(self, x): ...\n",
])
def test_names_bound_in_ways_the_source_does_not_settle_are_left_to_the_child(tmp_path, source):
    check_target("model.py:Net", _write(tmp_path, source), "Net", [], {})


def test_the_command_stops_before_starting_a_child(tmp_path, monkeypatch):
    path = _write(tmp_path, NET)
    monkeypatch.setattr(command, "run_jobs", lambda *a, **k: pytest.fail("a trace child was started"))
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    with pytest.raises(UsageError, match="needs constructor arguments"):
        command.run(parser.parse_args([f"{path}:Net"]), None, None, stdout=io.StringIO())


# ------------------------------------------------------------------ the plan's names and units

def _parse(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(["x.py:Net", *argv])


@pytest.mark.parametrize("given, meant", [
    ("bf16-mixed", "bf16-mixed"), ("bf16-master", "bf16-master"), ("16-mixed", "fp16-amp"),
    ("bf16-true", "bf16"), ("32-true", "fp32"), ("FP16-AMP", "fp16-amp"),
])
def test_precision_names_as_lightning_means_them(given, meant):
    assert _parse("--precision", given).precision == meant


def test_an_unknown_precision_names_the_choices(capsys):
    with pytest.raises(SystemExit):
        _parse("--precision", "fp8")
    assert "unknown precision 'fp8' (choose from fp32, bf16, fp16-amp, bf16-mixed, bf16-master" in capsys.readouterr().err


def test_lightning_bf16_mixed_keeps_fp32_weights_and_no_master_copy():
    assert "bf16-mixed" in plan.AUTOCAST and "bf16-master" not in plan.AUTOCAST
    m = {"precision": "bf16-mixed", "weight_bytes": 400, "grad_bytes": 400, "optimizer_bytes": 800,
         "step_extra_bytes": 0, "block_weight_bytes": 0, "activation_bytes": [100], "backward_peak_bytes": [900]}
    pure = plan.in_bf16(m)
    assert (pure["weight_bytes"], pure["grad_bytes"], pure["master_bytes"]) == (200, 200, 0)
    assert pure["backward_peak_bytes"] == [700]  # its backward peak held fp32 gradients


@pytest.mark.parametrize("text, size", [("24GB", 24 * 10**9), ("24GiB", 24 * 2**30), ("512MB", 512 * 10**6),
                                        ("512MiB", 512 * 2**20), ("8g", 8 * 2**30), ("1TB", 10**12), (64, 64 * 2**20)])
def test_gb_is_decimal_and_gib_binary(text, size):
    assert trace_settings.parse_memory(text, "test", "memory-limit") == size


def test_an_accelerator_names_its_memory_in_gib():
    label, size = gpus.lookup("h100")
    assert label == "NVIDIA H100 (80 GiB)" and size == 80 * 2**30
    assert "GB" not in "".join(label for label, _ in gpus.ACCELERATORS.values())


def test_fail_on_plan_is_off_by_default():
    assert _parse().fail_on_plan is False and _parse("--fail-on-plan").fail_on_plan is True


def test_a_report_with_a_plan_shows_one_activations_figure():
    from torchlint.trace.records import TraceResult

    result = TraceResult.from_json({"status": "ok", "params": 10, "calls": [], "inputs": [],
                                    "totals": {"params": 10, "trainable_params": 10, "param_bytes": 40,
                                               "buffer_bytes": 0, "activation_bytes": 123}})
    without = report._totals(result, None)
    with_plan = report._totals(result, None, planned=True)
    assert any("activations:" in line for line in without)
    assert not any("activations:" in line for line in with_plan)
