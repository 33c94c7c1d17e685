"""The child's diagnosis table and records, in-process (torch, but no child process)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from torchlint.trace.child import diagnose as dg  # noqa: E402
from torchlint.trace.records import Diagnosis, Failure, TraceResult  # noqa: E402


def _diagnose(layer, x, history=(), exc=None, inputs=()):
    if exc is None:
        try:
            layer(x)
        except Exception as caught:  # noqa: BLE001
            exc = caught
        else:
            exc = RuntimeError("ran")
    return dg.diagnose(torch, layer, (x,), exc, list(history), inputs)


def test_table_rows_are_distinct():
    kinds = [k.kinds for k in dg.LAYER_KINDS]
    assert kinds[0].startswith("Linear") and "MultiheadAttention" in kinds
    assert len(set(kinds)) == len(kinds)


def test_linear_names_the_flattened_layer():
    d = _diagnose(nn.Linear(4096, 10), torch.randn(4, 16384),
                  history=[("conv2", "Conv2d", [4, 64, 16, 16])])
    assert d == Diagnosis(expected="input [..., 4096] (in_features=4096)",
                          problem="in_features=4096 but the input has 16384 features (shape [4, 16384])",
                          fix="in_features should be 16384 (= 64*16*16)",
                          attribute="in_features", should_be=16384)


def test_model_input_of_the_wrong_rank_is_the_inputs_fault():
    # [4, 32, 32] given for (N, C, H, W): Conv2d reads it as one sample with 4 channels
    d = _diagnose(nn.Conv2d(3, 8, 3), torch.randn(4, 32, 32), inputs=([4, 32, 32],))
    assert d == Diagnosis(
        expected="a 4-D input (N, C, H, W)",
        problem="the model's input [4, 32, 32] is 3-D, but its first layer `Conv2d` needs a 4-D input (N, C, H, W) "
                "(it would read [4, 32, 32] as one sample with 4 channels)",
        fix="the input lacks its channel dimension, the layer is right: use an input of shape [4, 3, 32, 32] "
            "(--input-shape 4,3,32,32, or input-shape in the trace config)",
        input_fault=True)
    d = _diagnose(nn.Conv2d(3, 8, 3), torch.randn(32, 32), inputs=([32, 32],))
    assert d.input_fault and d.fix.startswith("the input is wrong, not the layer: use an input of shape "
                                              "(N, C, H, W) with C=3")
    # the same tensor made by an earlier layer is the layer's fault, as before
    d = _diagnose(nn.Conv2d(3, 8, 3), torch.randn(4, 32, 32), inputs=([4, 32, 32],),
                  history=[("stem", "Conv2d", [4, 32, 32])])
    assert d.input_fault is None and d.attribute == "in_channels"


def test_linear_subclass_uses_the_linear_row():
    class MyLinear(nn.Linear):
        pass

    d = _diagnose(MyLinear(3, 2), torch.randn(2, 5))
    assert d.attribute == "in_features" and d.should_be == 5


def test_conv_channels_rank_and_kernel():
    d = _diagnose(nn.Conv2d(3, 8, 3), torch.randn(2, 16, 8, 8),
                  history=[("features.0", "Conv2d", [2, 16, 8, 8])])
    assert d.fix == "in_channels should be 16 (`features.0` (Conv2d) outputs 16 channels)"
    assert (d.attribute, d.should_be) == ("in_channels", 16)
    d = _diagnose(nn.Conv2d(3, 8, 3), torch.randn(2, 3, 4, 4, 4))
    assert d.problem == "Conv2d expects a 4-D input (N, C, H, W) but got a 5-D input [2, 3, 4, 4, 4]"
    d = _diagnose(nn.Conv1d(3, 8, 5), torch.randn(2, 3, 2),
                  exc=RuntimeError("Kernel size can't be greater than actual input size"))
    assert d.problem == "the input [2, 3, 2] is spatially smaller than the kernel (5,)"
    assert d.attribute is None


def test_norms():
    d = _diagnose(nn.BatchNorm2d(32), torch.randn(2, 64, 4, 4))
    assert (d.attribute, d.should_be, d.fix) == ("num_features", 64, "num_features should be 64")
    d = _diagnose(nn.InstanceNorm1d(4, affine=True), torch.randn(2, 6, 5))
    assert d.should_be == 6
    d = _diagnose(nn.GroupNorm(2, 8), torch.randn(2, 6, 5))
    assert d.problem == "num_channels=8 but the input has 6 channels"
    d = _diagnose(nn.LayerNorm(16), torch.randn(2, 5, 12))
    assert d.expected == "input ending in 16 (normalized_shape=(16,))"
    assert (d.attribute, d.should_be) == ("normalized_shape", 12)
    d = _diagnose(nn.LayerNorm([4, 16]), torch.randn(2, 5, 12))
    assert d.should_be == (5, 12)


def test_embedding_dtype_and_range():
    d = _diagnose(nn.Embedding(10, 4), torch.randn(2, 3))
    assert d.problem == "Embedding got float32 input; it needs integer token indices"
    d = _diagnose(nn.Embedding(10, 4), torch.tensor([[1, 12]]))
    assert (d.attribute, d.should_be) == ("num_embeddings", 13)
    meta = torch.empty(2, 3, dtype=torch.int64, device="meta")
    assert dg.diagnose(torch, nn.Embedding(10, 4), (meta,), RuntimeError("x"), []) is None


def test_recurrent_and_attention():
    d = _diagnose(nn.LSTM(8, 4), torch.randn(2, 3, 5), history=[("proj", "Linear", [2, 3, 5])])
    assert (d.attribute, d.should_be, d.fix) == ("input_size", 5, "input_size should be 5")
    d = _diagnose(nn.GRU(8, 4), torch.randn(2, 3, 4, 8))
    assert d.expected == "a 2-D or 3-D input" and d.attribute is None
    mha = nn.MultiheadAttention(16, 2)
    x = torch.randn(3, 2, 12)
    d = dg.diagnose(torch, mha, (x, x, x), RuntimeError("x"), [])
    assert d.problem == "embed_dim=16 but the query has 12 features"


def test_nothing_to_say():
    assert _diagnose(nn.ReLU(), torch.randn(2, 3), exc=RuntimeError("boom")) is None
    assert _diagnose(nn.Linear(3, 2), torch.randn(2, 3), exc=RuntimeError("other")) is None
    assert dg.diagnose(torch, nn.Linear(3, 2), ("not a tensor",), RuntimeError("x"), []) is None


def test_view_in_forward_code():
    exc = RuntimeError("shape '[2, 4096]' is invalid for input of size 131072")
    d = dg.diagnose_forward(exc, [("conv", "Conv2d", [2, 64, 32, 32])], [])
    assert d.problem == "view/reshape to [2, 4096] does not fit the tensor [2, 64, 32, 32] (131072 elements)"
    assert d.fix.endswith("use x.flatten(1) or x.view(x.size(0), 65536)")
    assert dg.diagnose_forward(RuntimeError("other"), [], []) is None


def test_records_round_trip():
    failure = Failure("forward", exc_type="RuntimeError", message="m", kind="layer",
                      module={"name": "fc1", "type": "Linear", "builtin": True}, received=[])
    failure.add(Diagnosis(expected="e", problem="p", fix="f"))
    result = TraceResult("failed", model_type="Net", params=3, inputs=[{"shape": [1], "dtype": "float32"}],
                         failure=failure)
    data = result.to_json()
    assert "attribute" not in data["failure"] and "owner" not in data["failure"]
    assert data["failure"]["fix"] == "f" and data["failure"]["received"] == []
    back = TraceResult.from_json({**data, "event": "result", "id": "0"})
    assert back == result and isinstance(back.failure, Failure)
    error = TraceResult.from_json({"status": "error", "error_kind": "child", "message": "x", "output": "log"})
    assert error.output == "log" and error.params is None
