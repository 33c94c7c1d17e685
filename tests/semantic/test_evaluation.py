"""``semantic.evaluation``: what one function / module body does that decides whether an
evaluation records autograd (eval switches, forwards, helpers, resets, what is built and
differentiated), and which functions return a gradient as an output (TL003)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.dataflow import Flow
from torchlint.semantic.evaluation import (BodyEvents, checked_by_assertion, differentiating_functions,
                                           eval_no_grad_methods, is_test_function, output_position,
                                           returned_as_output, runs_without_grad_in_eval, scan_body)
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes


def ctx_of(src: str) -> FileContext:
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    return ctx


def function(ctx: FileContext, name: str) -> cst.FunctionDef:
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef) and n.name.value == name)


def scan(src: str, name: str = "f", keys: set[str] | None = None) -> tuple[FileContext, BodyEvents]:
    ctx = ctx_of(src)
    fn = function(ctx, name)
    return ctx, scan_body(ctx, fn, fn, keys)


def text(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


EVALUATE = """
import torch
import torch.nn as nn

def f(model, loader, x):
    model.eval()
    out = model(x)
    feats = model.encoder(x)
    model.forward(x)
    model.to("cpu")
    predict(model, x)
    self.helper(x)
    train_one_epoch(model)
    model.train()
    drop = nn.Dropout(0.5)
    lin = nn.Linear(2, 2)
    loss = out.sum()
    loss.backward()
    net.set_grad_checkpointing()
    torch.set_grad_enabled(False)
    for batch in loader:
        pass
    def inner():
        model(x)
"""


def test_eval_events_and_the_forwards_of_the_evald_key():
    ctx, body = scan(EVALUATE)
    assert [(key, text(ctx, call)) for _, key, call in body.evals] == [("model", "model.eval()")]
    assert body.eval_keys == {"model"}
    # direct, a forward-like submodule, ``.forward``; not ``model.to`` nor the nested def's call
    assert [(key, text(ctx, call), shown) for _, key, call, shown in body.forwards] == [
        ("model", "model(x)", "model"), ("model", "model.encoder(x)", "model.encoder"), ("model", "model.forward(x)", "model")]
    assert all(body.evals[0][0] < index for index, *_ in body.forwards)  # walk order


def test_helpers_resets_built_and_what_is_differentiated():
    ctx, body = scan(EVALUATE)
    helpers = [text(ctx, call) for _, call in body.helpers]
    assert "predict(model, x)" in helpers and "self.helper(x)" in helpers
    assert "train_one_epoch(model)" not in helpers  # may train ``model``: a reset instead
    assert len(body.resets["model"]) == 2  # train_one_epoch(model), model.train()
    assert body.resets["batch"]  # a loop target is rebound
    assert [free for _, free in body.built["drop"]] == [True] and [free for _, free in body.built["lin"]] == [False]
    assert [text(ctx, e) for e in body.grad_exprs] == ["loss"]
    assert body.grad_wanted == {"net"}
    assert body.set_grad_at is not None and not body.wants_input_grad
    forward_at = body.forwards[0][0]
    assert body.parameter_free("drop", forward_at + 1000) and not body.parameter_free("lin", forward_at + 1000)
    assert not body.parameter_free("drop", body.built["drop"][0][0])  # built after


@pytest.mark.parametrize(("line", "key"), [
    ("model = Net().to(dev).eval()", "model"),
    ("model: Net = Net().eval()", "model"),
    ("self.net.eval()", "self.net"),
    ("model.train(False)", "model"),
    ("model.train(mode=False)", "model"),
])
def test_eval_keys(line, key):
    _, body = scan(f"def f():\n    {line}\n")
    assert [k for _, k, _ in body.evals] == [key] and body.eval_keys == {key}


def test_an_eval_of_what_no_key_names_is_no_event():
    _, body = scan("def f():\n    build().eval()\n    a, b = Net().eval(), 1\n")
    assert body.evals == [] and body.eval_keys == set()


@pytest.mark.parametrize("line", [
    "x = torch.randn(3, requires_grad=True)",
    "x.requires_grad_()",
    "x.requires_grad = True",
])
def test_input_gradients_asked_for(line):
    _, body = scan(f"import torch\ndef f(x):\n    {line}\n")
    assert body.wants_input_grad


@pytest.mark.parametrize("line", [
    "x = torch.randn(3, requires_grad=False)",
    "x.requires_grad_(False)",
    "x.requires_grad = False",
])
def test_input_gradients_turned_off(line):
    _, body = scan(f"import torch\ndef f(x):\n    {line}\n")
    assert not body.wants_input_grad


@pytest.mark.parametrize(("lines", "key"), [
    ("model.train()", "model"),
    ("model.train(flag)", "model"),  # maybe training
    ("model = other", "model"),
    ("models[0] = other", "models"),
    ("for model in models:\n        pass", "model"),
    ("with open(p) as model:\n        pass", "model"),
    ("if (model := pick()):\n        pass", "model"),
    ("del model", "model"),
    ("trainer.fit(model)", "model"),
    ("model.freeze()", "model"),
    ("model.fit_epoch()", "model"),
])
def test_resets(lines, key):
    _, body = scan(f"def f(model, models, other, trainer, flag, p):\n    {lines}\n")
    assert body.resets.get(key)


def test_a_torch_call_named_for_training_resets_nothing():
    _, body = scan("import torch\ndef f(model):\n    torch.train_helper(model)\n")
    assert "model" not in body.resets


def test_rebinding_a_key_to_a_chain_on_itself_is_no_reset():
    _, body = scan("def f(model):\n    model = model.to(dev).eval()\n")
    assert "model" not in body.resets and "model" not in body.built
    assert body.eval_keys == {"model"}


def test_set_grad_enabled_counts_as_a_statement_not_in_a_with():
    _, body = scan("import torch\ndef f():\n    with torch.set_grad_enabled(False):\n        pass\n")
    assert body.set_grad_at is None
    _, body = scan("import torch\ndef f():\n    torch.set_grad_enabled(False)\n    torch.set_grad_enabled(True)\n")
    assert body.set_grad_at is not None  # the first one


def test_keys_handed_to_a_helper_count_without_an_eval():
    ctx, body = scan("def predict(net, x):\n    return net(x)\n", "predict", {"net"})
    assert body.evals == [] and [text(ctx, call) for _, _, call, _ in body.forwards] == ["net(x)"]
    _, body = scan("def predict(net, x):\n    return net(x)\n", "predict")
    assert body.forwards == []


def test_lightning_training_step_returns_a_loss_to_differentiate():
    src = "class M:\n    def {name}(self, batch):\n        loss = self.net(batch)\n        return loss\n"
    ctx, body = scan(src.format(name="training_step"), "training_step")
    assert [text(ctx, e) for e in body.grad_exprs] == ["loss"]
    _, body = scan(src.format(name="validation_step"), "validation_step")
    assert body.grad_exprs == []


def test_a_module_body():
    ctx = ctx_of("model = Net()\nmodel.eval()\ny = model(x)\n")
    body = scan_body(ctx, ctx.module, None)
    assert body.function is None and body.node is ctx.module
    assert [key for _, key, _, _ in body.forwards] == ["model"]


FORCES = """
import torch
from torch.autograd import grad

class Potential(torch.nn.Module):
    def forward(self, positions):
        energy = self.net(positions)
        return energy, -torch.autograd.grad(energy, positions)[0]

def forces(energy, positions):
    f = -1 * grad(energy, positions)[0]
    return f

def jac(fn, x):
    return torch.autograd.functional.jacobian(fn, x)

def penalty(out, images):
    gradients = torch.autograd.grad(out, images, create_graph=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()

def weight(loss, layer):
    return torch.autograd.grad(loss, layer, retain_graph=True)[0].detach()

def unrelated(x):
    return x * 2
"""


def test_differentiating_functions():
    ctx = ctx_of(FORCES)
    assert differentiating_functions(ctx.semantic.model) == ["Potential.forward", "forces", "jac"]


def test_no_gradient_no_differentiating_function():
    ctx = ctx_of("import torch\ndef f(x):\n    return torch.grad(x)\n")  # not torch.autograd
    assert differentiating_functions(ctx.semantic.model) == []


def _gradient_call(ctx: FileContext, name: str) -> cst.Call:
    return next(n for n in iter_nodes(function(ctx, name)) if isinstance(n, cst.Call)
                and (dotted_name(n.func) or "").endswith("grad"))


def test_output_position():
    ctx = ctx_of(FORCES)
    assert isinstance(output_position(ctx, _gradient_call(ctx, "forward")), cst.Return)  # -g[0] in a tuple
    assert isinstance(output_position(ctx, _gradient_call(ctx, "forces")), cst.Assign)  # -1 * g[0]
    assert isinstance(output_position(ctx, _gradient_call(ctx, "penalty")), cst.Assign)
    assert isinstance(output_position(ctx, _gradient_call(ctx, "weight")), cst.Attribute)  # .detach()


@pytest.mark.parametrize(("name", "expected"), [
    ("forward", True), ("forces", True), ("penalty", False), ("weight", False),
])
def test_returned_as_output(name, expected):
    ctx = ctx_of(FORCES)
    assert returned_as_output(ctx, function(ctx, name), _gradient_call(ctx, name)) is expected


def test_few_examples_and_module_evals():
    import libcst as cst
    from torchlint.context import Dispatcher, FileContext
    from torchlint.imports import ImportTable
    from torchlint.semantic.evaluation import few_examples, module_evals

    for text, expected in [("x.to(d)[0, None]", True), ("x[:8].cuda()", True), ("x[3].unsqueeze(0)", True),
                           ("x", False), ("x[:n]", False), ("x[0]", False), ("x[mask]", False), ("x[:64]", False)]:
        assert few_examples(cst.parse_expression(text)) is expected, text
    # Code that runs once (with the model): a batch of one, a tensor written out, followed by name.
    once = ("import torch\nx = torch.randn(1, 1, 17, 17)\nbig = torch.randn(64, 3, 8, 8)\n"
            "t = torch.tensor([[0, 2, 1]])\nimg = load(p)\n")
    mod = cst.parse_module(once)
    octx = FileContext("o.py", mod, once, ImportTable("o", False))
    Dispatcher(octx, []).run()
    sem = octx.semantic.model
    names = {t.targets[0].target.value: t.targets[0].target for s in mod.body for t in getattr(s, "body", [])
             if isinstance(t, cst.Assign)}
    assert few_examples(names["x"], sem) and few_examples(names["t"], sem)
    assert not few_examples(names["big"], sem) and not few_examples(names["img"], sem)
    for text, expected in [("load(p).unsqueeze(0)", True), ("img[None]", True), ("torch.rand(size=(2, 20))", True),
                           ("torch.zeros(32, 10)", False), ("Variable(torch.LongTensor([1, 2, 3]))", True),
                           ("torch.tensor(data)", False)]:
        assert few_examples(cst.parse_expression(text), sem) is expected, text
        assert few_examples(cst.parse_expression(text)) is False, text  # only picks by literals without it
    for text, expected in [("feat_type(torch.randn(1, 1, 17, 17))", True), ("torch.cat([x, x])", False),
                           ("transform(img).unsqueeze(0)", True), ("feat_type(x, y)", False)]:
        assert few_examples(cst.parse_expression(text), sem) is expected, text

    src = ("model = Net()\nmodel.eval()\nother = Net()\nother.eval()\ndef f():\n    other.train()\n"
           "if cond:\n    third.eval()\n")
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    assert set(module_evals(ctx, ctx.semantic.model)) == {"model"}


def test_few_iterations():
    import libcst as cst
    from torchlint.semantic.evaluation import few_iterations

    def loop(header):
        return cst.parse_statement(header + "\n    pass\n")
    assert few_iterations([loop("for k in range(10):")]) and few_iterations([loop("for k in range(2, 8):")])
    assert few_iterations([])
    assert not few_iterations([loop("for k in range(100):")]) and not few_iterations([loop("for x in loader:")])
    assert not few_iterations([loop("for k in range(n):")]) and not few_iterations([loop("while True:")])
    assert not few_iterations([loop("for k in range(0, 8, 2):")]) and not few_iterations([loop("for k in range(8, 2):")])


def test_few_examples_made_at_and_fixed_few_examples():
    import libcst as cst
    from torchlint.context import Dispatcher, FileContext
    from torchlint.imports import ImportTable
    from torchlint.semantic.evaluation import few_examples, few_examples_made_at, fixed_few_examples
    from torchlint.tree import iter_nodes

    src = ("import torch\nW = 37\nx = torch.randn(1, 1, W, W)\nx = x * mask\nx = feat_type(x)\n"
           "big = torch.randn(64, 3, 8, 8)\n"
           "for g in G.elements:\n    xt = x.transform(g)\n    a = net(xt)\n    b = net(xt.tensor)\n"
           "    c = net(x.repeat(64, 1, 1, 1))\n    d = net(big.transform(g))\n"
           "for path in paths:\n    e = net(load(path).unsqueeze(0))\n    t = torch.randn(1, 3, 8, 8)\n    f = net(t)\n")
    mod = cst.parse_module(src)
    ctx = FileContext("o.py", mod, src, ImportTable("o", False))
    Dispatcher(ctx, []).run()
    sem = ctx.semantic.model
    calls = {mod.code_for_node(n.args[0].value): n for n in iter_nodes(mod)
             if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "net"}
    randn = next(n for n in iter_nodes(mod) if isinstance(n, cst.Call) and mod.code_for_node(n) == "torch.randn(1, 1, W, W)")
    # Followed through a method of its own, an elementwise mask, a one-argument wrapper and a view.
    assert few_examples_made_at(calls["xt"].args[0].value, sem) is randn
    assert few_examples(calls["xt.tensor"].args[0].value, sem)
    assert not few_examples(calls["x.repeat(64, 1, 1, 1)"].args[0].value, sem)  # grown
    assert not few_examples(calls["big.transform(g)"].args[0].value, sem)
    for text, expected in [("xt", True), ("xt.tensor", True), ("x.repeat(64, 1, 1, 1)", False),
                           ("big.transform(g)", False), ("load(path).unsqueeze(0)", False), ("t", False)]:
        call = calls[text]
        assert fixed_few_examples(call.args[0].value, ctx.enclosing_loops(call), sem) is expected, text


def test_made_up_examples():
    """A handful the code writes out itself, directly, moved, or through a name holding only
    that; not what a caller hands in, a real batch, or a name with two values."""
    from torchlint.semantic.evaluation import made_up_examples

    ctx = ctx_of("import torch\n"
                 "def f(model, images, device, flag):\n"
                 "    dummy = torch.rand(1, 3, 299, 299)\n"
                 "    big = torch.randn(256, 3, 224, 224)\n"
                 "    two = torch.zeros(1, 3)\n"
                 "    if flag:\n"
                 "        two = images\n"
                 "    model(dummy)\n    model(dummy.to(device))\n    model(torch.zeros(2, 3).cuda())\n"
                 "    model(images)\n    model(big)\n    model(two)\n    model(images[None])\n")
    calls = [s.body[0].value for s in function(ctx, "f").body.body
             if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)]
    assert [made_up_examples(c.args[0].value, ctx.semantic.model) for c in calls] == \
        [True, True, True, False, False, False, False]


_EVAL_NO_GRAD = """
import torch
import contextlib
from torch import nn

class M(nn.Module):
    def flair_embed(self, x):
        \"\"\"A context chosen on self.training (flair's TransformerBaseEmbeddings).\"\"\"
        gradient_context = torch.enable_grad() if (self.fine_tune and self.training) else torch.no_grad()
        with gradient_context:
            return self.encoder(x)

    def frozen(self, x):
        with torch.no_grad():
            h = self.net(x)
            return self.head(h)

    @torch.no_grad()
    def decorated(self, x):
        return self.net(x)

    def switched(self, x):
        with torch.set_grad_enabled(self.training):
            return self.net(x)

    def prepared_outside(self, x):
        x = self.prepare(x)
        with torch.no_grad():
            return self.net(x)

    def read_outside(self, x):
        with torch.no_grad():
            h = self.net(x)
        return h @ self.weight

    def fine_tune_only(self, x):
        gradient_context = torch.enable_grad() if self.fine_tune else torch.no_grad()
        with gradient_context:
            return self.net(x)

    def trains_in_eval(self, x):
        with torch.set_grad_enabled(not self.training):
            return self.net(x)

    def plain(self, x):
        return self.net(x)

    def nothing(self, x):
        with torch.no_grad():
            pass
        return x

    def abstract(self, x):
        \"\"\"Subclasses embed.\"\"\"
        raise NotImplementedError

    def stub(self, x): ...

def free(self, x):
    with torch.no_grad():
        return self.net(x)
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("flair_embed", True), ("frozen", True), ("decorated", True), ("switched", True),
    ("prepared_outside", False),  # a call of the module outside the choice may record
    ("read_outside", False),  # a parameter read outside the choice records
    ("fine_tune_only", False),  # fine_tune alone decides: enable_grad after eval() too
    ("trains_in_eval", False), ("plain", False),
    ("nothing", False),  # no call of the module at all: nothing to say
    ("free", False),  # not a method
])
def test_runs_without_grad_in_eval(name, expected):
    ctx = ctx_of(_EVAL_NO_GRAD)
    assert runs_without_grad_in_eval(ctx, function(ctx, name)) is expected


def test_eval_no_grad_methods():
    ctx = ctx_of(_EVAL_NO_GRAD)
    # an abstract stub records nothing either: an instance running it raises
    assert eval_no_grad_methods(ctx) == ["M.abstract", "M.decorated", "M.flair_embed", "M.frozen", "M.stub",
                                         "M.switched"]
    assert eval_no_grad_methods(ctx_of("class M:\n    def f(self, x):\n        return self.net(x)\n")) == []
    assert eval_no_grad_methods(ctx_of("class M:\n    def f(self, x):\n        raise NotImplementedError\n")) == ["M.f"]


@pytest.mark.parametrize(("name", "expected"), [
    ("test_module_to_torchscript", True), ("export_test", True), ("test", False), ("testing", False),
    ("evaluate", False), ("_test", False),
])
def test_is_test_function(name, expected):
    ctx = ctx_of(f"def {name}(m, x):\n    return m(x)\n")
    assert is_test_function(function(ctx, name)) is expected


_ASSERTED = """
import torch
import numpy as np

def a(m, x, ref):
    out = m(x) if x.ndim else m(x[None])
    print(out.shape)
    torch.testing.assert_close(ref, out)

def b(m, x, ref):
    y = m(x)
    assert torch.allclose(y, ref)

def c(m, x, ref):
    np.testing.assert_allclose(m(x).numpy(), ref)

def d(self, m, x):
    self.assertEqual(m(x).shape, (1, 10))

def e(m, x, ref):
    y = m(x)
    assert ref.shape == x.shape
    return y

def f(m, x):
    y = m(x)
    z = m(x)
    assert z.sum() > 0
    return y
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("a", True), ("b", True), ("c", True), ("d", True),
    ("e", False),  # the assertion checks something else
    ("f", False),  # the first forward's value is returned, not checked
])
def test_checked_by_assertion(name, expected):
    ctx = ctx_of(_ASSERTED)
    fn = function(ctx, name)
    call = next(n for n in iter_nodes(fn) if isinstance(n, cst.Call) and dotted_name(n.func) == "m")
    assert checked_by_assertion(ctx, Flow(ctx, ctx.semantic.model), call) is expected
