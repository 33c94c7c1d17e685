"""callgraph's argument binding: what a caller's value goes by inside a same-file callee
(``argument_name``), and what a call binds to a parameter (``bound_argument``)."""

from __future__ import annotations

from tests.semantic.test_semantic import analyses, call, fn
import libcst as cst
import pytest

from torchlint.semantic.callgraph import argument_name, bound_argument


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


@pytest.mark.parametrize("call, param, bound", [
    ("f(1, 2)", "b", "2"), ("f(1, b=3)", "b", "3"), ("f(b=3, a=1)", "a", "1"), ("f(1)", "b", None),
    ("f(1, 2, 3)", "c", None),  # past the positional parameters: *args
    ("f(*xs)", "a", ...), ("f(1, *xs)", "a", "1"), ("f(1, *xs, b=2)", "b", ...), ("f(**kw)", "a", ...),
    ("f(a=1, **kw)", "a", "1"), ("f(1, c=4)", "c", "4"),  # a keyword-only parameter, by keyword
])
def test_what_a_call_binds_to_a_parameter(call, param, bound):
    """``bound_argument`` for ``def f(a, b, *args, c=0)``: by keyword or place; None where the
    call passes nothing for it; ``...`` where a ``*``/``**`` before it hides that."""
    found = bound_argument(cst.parse_expression(call), ["a", "b"], param)
    assert (found if found is ... or found is None else cst.Module([]).code_for_node(found)) == bound
