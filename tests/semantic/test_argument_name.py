"""callgraph.argument_name: what a caller's value goes by inside a same-file callee."""

from __future__ import annotations

from tests.semantic.test_semantic import analyses, call, fn
from torchlint.semantic.callgraph import argument_name


SRC = (
    "def predict(m, x):\n    return m(x)\n"
    "class Runner:\n"
    "    def _batch(this, x):\n        return this.model(x)\n"
    "    def forward(self, x):\n        return x\n"
    "    def run(self, x):\n        self._batch(x)\n        self.forward(x)\n"
    "predict(model, x)\npredict(x=x, m=model)\npredict(*args)\nRunner._batch(r, x)\n"
)


def test_positional_keyword_bound_self_and_refusals():
    ctx, sem = analyses(SRC)
    model = sem.model
    predict = fn(ctx, "predict")
    plain, keyword, starred = (model.call_site(c) for c in call(ctx, "predict"))
    assert argument_name(model, plain, predict, "model") == "m"
    assert argument_name(model, keyword, predict, "model") == "m"
    assert argument_name(model, plain, predict, "y") is None
    assert argument_name(model, starred, predict, "model") is None
    batch, forward = fn(ctx, "_batch"), fn(ctx, "forward")
    bound = model.call_site(call(ctx, "self._batch")[0])
    assert argument_name(model, bound, batch, "self.model") == "this.model"
    assert argument_name(model, bound, batch, "x") == "x"
    assert argument_name(model, model.call_site(call(ctx, "self.forward")[0]), forward, "self") is None
    assert argument_name(model, model.call_site(call(ctx, "Runner._batch")[0]), batch, "r") is None
