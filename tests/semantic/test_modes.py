"""``semantic.modes``: which model a loop evaluates or an epoch switches, where training resumes
after a switch (TL011), and functional code that reads the mode (TL008)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import modes
from torchlint.semantic.callgraph import enclosing_function


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def code(sem, node) -> str:
    return sem.ctx.module.code_for_node(node)


def loop(sem, iterable: str):
    """The loop over ``iterable`` (its iterable's code)."""
    return next(lp for lp in sem.model.loops.values() if code(sem, lp.node.iter) == iterable)


def site(sem, call: str):
    """The call site whose code is ``call``."""
    return next(s for s in sem.model.calls if code(sem, s.node) == call)


def function(sem, name: str) -> cst.FunctionDef:
    return next(s.node for s in sem.model.scopes.values()
                if isinstance(s.node, cst.FunctionDef) and s.node.name.value == name)


# -- which model a loop evaluates ------------------------------------------------------------

EVALUATE = """
    import torch
    from lib import get_model
    class Net(torch.nn.Module):
        pass
    def evaluate(model, val_loader):
        for x in val_loader:
            model(x)
    def build(val_loader):
        model = Net().to("cuda")
        for x in val_loader:
            model(x)
    def fetch(val_loader):
        model = get_model(3).to("cuda")
        for x in val_loader:
            model(x)
    def moved(model, val_loader):
        model = model.to("cuda")
        for x in val_loader:
            model(x)
    def classes(val_loader):
        for x in val_loader:
            Net()(x)
    net = Net()
    evaluate(net, None)
    """


def test_model_called_is_a_model_the_loop_calls_not_a_class_it_builds():
    _, sem = analyses(EVALUATE)
    assert [modes.model_called(sem, lp) for lp in sem.model.loops.values()] == ["model", "model", "model", "model", None]


def test_imported_factories_names_the_imported_builders_of_every_binding():
    _, sem = analyses(EVALUATE)
    at = {enclosing_function(sem.model, lp.scope).name.value: lp.node for lp in sem.model.loops.values()}
    assert modes.imported_factories(sem, "model", at["fetch"]) == ["lib.get_model"]
    assert modes.imported_factories(sem, "model", at["build"]) == []  # Net is the file's own class
    assert modes.imported_factories(sem, "model", at["evaluate"]) == []  # a parameter


def test_built_here_when_the_function_builds_the_model_itself():
    _, sem = analyses(EVALUATE)
    at = {enclosing_function(sem.model, lp.scope).name.value: lp.node for lp in sem.model.loops.values()}
    assert modes.built_here(sem, "model", at["build"], function(sem, "build"))
    assert not modes.built_here(sem, "model", at["moved"], function(sem, "moved"))  # .to() of a parameter
    assert not modes.built_here(sem, "model", at["evaluate"], function(sem, "evaluate"))


def test_argument_class_is_the_class_every_same_file_caller_passes():
    _, sem = analyses(EVALUATE)
    assert modes.argument_class(sem, function(sem, "evaluate"), "model") == "m.Net"
    assert modes.argument_class(sem, function(sem, "evaluate"), "val_loader") is None  # None passed
    assert modes.argument_class(sem, function(sem, "build"), "model") is None  # no parameter
    assert modes.argument_class(sem, sem.ctx.module, "model") is None  # no function


def test_argument_class_needs_one_class_from_all_callers():
    _, sem = analyses("""
        class A: pass
        class B: pass
        def evaluate(model):
            pass
        a, b = A(), B()
        x = A()
        evaluate(a)
        evaluate(model=x)
        """)
    assert modes.argument_class(sem, function(sem, "evaluate"), "model") is None  # a: tuple target
    _, sem = analyses("""
        class A: pass
        class B: pass
        def evaluate(model):
            pass
        a = A()
        b = B()
        evaluate(a)
        evaluate(b)
        """)
    assert modes.argument_class(sem, function(sem, "evaluate"), "model") is None
    _, sem = analyses("""
        class A: pass
        class T:
            def evaluate(self, model):
                pass
            def run(self):
                a = A()
                self.evaluate(a)
                self.evaluate(model=a)
        """)
    assert modes.argument_class(sem, function(sem, "evaluate"), "model") == "m.A"


def test_only_model_class_is_the_class_of_the_file_s_one_model():
    _, sem = analyses("""
        import torch
        class Net(torch.nn.Module):
            pass
        model = Net()
        for x in loader:
            model(x)
        """)
    assert modes.only_model_class(sem, loop(sem, "loader").node) == "m.Net"
    _, sem = analyses("""
        import torch
        class Net(torch.nn.Module):
            pass
        model = Net()
        critic = Net()
        opt = torch.optim.SGD(model.parameters())
        opt2 = torch.optim.SGD(critic.parameters())
        for x in loader:
            model(x)
        """)
    assert len(sem.training.bindings["model"]) != 1
    assert modes.only_model_class(sem, loop(sem, "loader").node) is None


# -- an epoch that switches a model to eval mode ----------------------------------------------

EPOCHS = """
    import copy
    import torch
    def validate(model, loader):
        model.eval()
    def check(model):
        ema = copy.deepcopy(model)
        ema.eval()
    def train(model, blocks, loader, opt):
        for epoch in range(10):
            for x in loader:
                model(x).backward()
                opt.step()
            validate(model, loader)
            check(model)
            fresh = Net()
            fresh.eval()
        for block in blocks:
            block(1).backward()
            opt.step()
            block.eval()
            validate(block, loader)
    """


def test_built_anew_is_a_copy_or_a_model_built_in_the_iteration_or_the_callee():
    _, sem = analyses(EPOCHS)
    epoch = loop(sem, "range(10)")
    assert modes.built_anew(sem, "ema", site(sem, "ema.eval()"), epoch)  # built in the callee
    assert modes.built_anew(sem, "fresh", site(sem, "fresh.eval()"), epoch)  # built in the iteration
    assert not modes.built_anew(sem, "model", site(sem, "model.eval()"), epoch)  # the trained model


def test_receiver_iterated_is_the_loop_s_own_target_directly_or_as_the_argument_passed():
    _, sem = analyses(EPOCHS)
    blocks, epoch = loop(sem, "blocks"), loop(sem, "range(10)")
    inside = [s for s in sem.model.calls if blocks in s.all_loops]
    assert modes.receiver_iterated(sem, "block", site(sem, "block.eval()"), blocks, inside)
    assert modes.receiver_iterated(sem, "model", site(sem, "model.eval()"), blocks, inside)  # validate(block, ...)
    inside = [s for s in sem.model.calls if epoch in s.all_loops]
    assert not modes.receiver_iterated(sem, "model", site(sem, "model.eval()"), epoch, inside)
    assert not modes.receiver_iterated(sem, "fresh", site(sem, "fresh.eval()"), epoch, inside)


def test_innermost_training_loop_around_a_site():
    _, sem = analyses(EPOCHS)
    training = sem.training
    assert modes.innermost_training_loop(training, site(sem, "fresh.eval()")) is loop(sem, "range(10)")
    assert modes.innermost_training_loop(training, site(sem, "opt.step()")) is loop(sem, "loader")
    assert modes.innermost_training_loop(training, site(sem, "block.eval()")) is loop(sem, "blocks")
    assert modes.innermost_training_loop(training, site(sem, "model.eval()")) is None  # in validate: no loop


def test_trains_after_an_anchor_directly_or_through_a_callee():
    _, sem = analyses("""
        def update(model, x, opt):
            model(x).backward()
            opt.step()
        def run(model, loader, opt):
            for epoch in range(3):
                model.eval()
                update(model, 1, opt)
                log(epoch)
            for epoch in range(3):
                update(model, 1, opt)
                model.eval()
                log(epoch)
        """)
    first, second = sorted(sem.model.loops.values(), key=lambda lp: lp.order)
    evals = sorted((s for s in sem.model.calls if code(sem, s.node) == "model.eval()"), key=lambda s: s.order)
    assert modes.trains_after(sem, sem.model.calls_in_loop(first), evals[0])  # update() after it
    assert not modes.trains_after(sem, sem.model.calls_in_loop(second), evals[1])
    assert modes.trains_after(sem, sem.graph.sites(function(sem, "update")), site(sem, "model(x)"))  # the step


def test_caller_key_is_the_argument_passed_or_the_caller_s_self_path():
    _, sem = analyses("""
        def validate(net, loader):
            net.eval()
        class Trainer:
            def validate(self):
                self.model.eval()
            def fit(self, model):
                for epoch in range(3):
                    validate(model, None)
                    self.validate()
        """)
    model = sem.model
    helper = next(f for f in (enclosing_function(model, s.scope) for s in model.calls)
                  if isinstance(f, cst.FunctionDef) and f.name.value == "validate" and model.class_of(f) is None)
    method = next(f for f in (enclosing_function(model, s.scope) for s in model.calls)
                  if isinstance(f, cst.FunctionDef) and f.name.value == "validate" and f is not helper)
    assert modes.caller_key(model, site(sem, "validate(model, None)"), helper, "net") == "model"
    assert modes.caller_key(model, site(sem, "validate(model, None)"), helper, "other") is None  # no parameter
    assert modes.caller_key(model, site(sem, "self.validate()"), method, "self.model") == "self.model"


def test_rebound_in_a_loop():
    _, sem = analyses("""
        model = make()
        for x in loader:
            model = other()
        for model in models:
            pass
        for y in loader2:
            pass
        """)
    assert modes.rebound_in(sem, "model", loop(sem, "loader"))
    assert modes.rebound_in(sem, "model", loop(sem, "models"))  # the loop's own target
    assert not modes.rebound_in(sem, "model", loop(sem, "loader2"))


# -- functional code that reads the mode -----------------------------------------------------

@pytest.mark.parametrize(("body", "expected"), [
    ("return F.dropout(x, 0.1) if self.training else x", True),
    ("if self.training and self.p:\n        x = F.dropout(x, self.p)\n    return x", True),
    ("if not self.training:\n        return x\n    return F.dropout(x, 0.1)", True),
    ("if not training:\n        raise ValueError()\n    return F.dropout(x, 0.1)", True),
    ("y = F.dropout(x, 0.1)\n    if not self.training:\n        return x\n    return y", False),  # after the call
    ("if self.p:\n        x = F.dropout(x, self.p)\n    return x", False),
    ("return F.dropout(x, 0.1)", False),
])
def test_mode_guarded(body, expected):
    _, sem = analyses(f"import torch.nn.functional as F\ndef forward(self, x, training=True):\n    {body}\n")
    call = next(s.node for s in sem.model.calls if code(sem, s.node.func) == "F.dropout")
    assert modes.mode_guarded(sem, call) is expected


@pytest.mark.parametrize(("body", "expected"), [
    ("p = self.p if self.training else 0.0\n    return F.dropout(x, p)", True),
    ("p = 0 if not self.training else self.p\n    return F.dropout(x, p=p)", True),
    ("dropout_p = self.p\n    if not training:\n        dropout_p = 0.0\n    return F.dropout(x, dropout_p)", True),
    ("p = self.p if self.training else 0.5\n    return F.dropout(x, p)", False),  # never zero
    ("p = 0.0\n    return F.dropout(x, p)", False),  # zero, but not by the mode
    ("return F.dropout(x, self.p)", False),  # no variable
    ("return F.dropout(x)", False),  # no rate
])
def test_rate_off_outside_training(body, expected):
    _, sem = analyses(f"import torch.nn.functional as F\ndef forward(self, x, training=True):\n    {body}\n")
    call = next(s.node for s in sem.model.calls if code(sem, s.node.func) == "F.dropout")
    assert modes.rate_off_outside_training(sem, call) is expected


# -- what a model may be (model_classes), and whose mode a switch sets (issues 39, 40) ------

CLASSES = """
    import torch
    import torch.nn as nn
    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.1)
    class Wrap(nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder
    def net(X):
        return X
    seq = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    plain = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    enc = Enc()
    model = Wrap(enc)
    ghost = Missing()
    def evaluate(m, loader):
        for x in loader:
            m(x)
    evaluate(model, None)
    evaluate(net, None)
    """


def test_model_classes_follows_sequentials_handed_models_functions_and_parameters():
    _, sem = analyses(CLASSES)
    end = sem.ctx.module.body[-1]
    assert modes.model_classes(sem, "seq", end) == ["torch.nn.Sequential", modes.HOLDS_MODE_LAYER]
    assert modes.model_classes(sem, "plain", end) == ["torch.nn.Sequential"]
    assert modes.model_classes(sem, "model", end) == ["m.Wrap", "m.Enc"]
    assert modes.model_classes(sem, "net", end) == [modes.NOT_A_MODEL]
    assert modes.model_classes(sem, "ghost", end) == [modes.UNREAD + "Missing"]
    call = site(sem, "m(x)")
    assert modes.model_classes(sem, "m", call.node) == ["m.Wrap", "m.Enc", modes.NOT_A_MODEL]


def test_class_layers_skips_a_dropout_layer_built_in_forward():
    _, sem = analyses("""
        import torch.nn as nn
        class Fresh(nn.Module):
            def forward(self, x, d):
                return nn.Dropout(d)(x)
        class Lazy(nn.Module):
            def forward(self, x):
                self.drop = nn.Dropout(0.1)
                return self.drop(x)
        """)
    layers = modes.class_layers(sem)
    assert layers["Fresh"][0] is False and layers["Lazy"][0] is True


SWITCHES = """
    def train(model, loader):
        model.train()
    def evaluate(net, loader):
        net.eval()
    for epoch in range(3):
        train(model, loader)
        evaluate(model, loader)
        other.eval()
    """


def test_switch_reaches_the_model_a_caller_passes_and_not_another():
    _, sem = analyses(SWITCHES)
    loop = next(iter(sem.model.loops.values()))
    inside = [s for s in sem.model.calls if loop in s.all_loops]
    to_eval, other = site(sem, "net.eval()"), site(sem, "other.eval()")
    assert modes.switch_reaches(sem, to_eval, "model", inside)
    assert not modes.switch_reaches(sem, other, "model", inside)
    assert modes.level_key(sem, to_eval, "net", inside) == "model"
    assert modes.switched_anywhere(sem, "eval", "model") and not modes.switched_anywhere(sem, "eval", "third")


def test_the_calls_that_switch_a_mode():
    """``switching_sites``: the calls ``switches`` names a mode for, by mode, in order."""
    _, sem = analyses("""
        model.eval()
        model.train(False)
        model.apply(set_bn_eval)
        freeze_bn(model)  # (no mode in its name)
        model.train()
        enable_dropout(model)
        evaluate(model)
        model.forward(x)
        """)
    assert [code(sem, s.node) for s in modes.switching_sites(sem, "eval")] == [
        "model.eval()", "model.train(False)", "model.apply(set_bn_eval)"]
    assert [code(sem, s.node) for s in modes.switching_sites(sem, "train")] == ["model.train()", "enable_dropout(model)"]
    for mode in ("eval", "train"):
        assert modes.switching_sites(sem, mode) == [s for s in sem.model.calls if modes.switches(sem, s.node) == mode]


def test_fresh_and_attention_dropout():
    _, sem = analyses("""
        import torch.nn as nn
        import torch.nn.functional as F
        y = nn.Dropout(0.5)(x)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
        b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
        """)
    assert modes.fresh_dropout(sem.model, site(sem, "nn.Dropout(0.5)(x)").node) == "Dropout"
    assert modes.attention_dropout(site(sem, "F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)").node) is not None
    assert modes.attention_dropout(site(sem, "F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)").node) is None


@pytest.mark.parametrize("construct, path, zero", [
    ("d = Dec()\n", "nb.ipynb", True),                       # the default, never overridden
    ("d = Dec(do_prob=0)\n", "nb.ipynb", True),               # a literal zero given
    ("d = Dec(do_prob=0.5)\n", "nb.ipynb", False),            # a rate given
    ("d = Dec(do_prob=args.p)\n", "nb.ipynb", False),         # a rate from elsewhere
    ("d = Dec()\n", "m.py", False),                           # another module may construct it
])
def test_rate_always_zero(construct, path, zero):
    src = ("import torch.nn.functional as F\nclass Dec:\n    def __init__(self, do_prob=0.0):\n"
           "        self.p = do_prob\n    def forward(self, x):\n        return F.dropout(x, self.p)\n" + construct)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    call = next(s.node for s in ctx.semantic.model.calls if code(ctx.semantic, s.node).startswith("F.dropout"))
    assert modes.rate_always_zero(ctx.semantic, call) is zero


@pytest.mark.parametrize("src, given", [
    ("class N:\n    def forward(self, x, d):\n        return F.dropout(x, d)\n", True),
    ("class N:\n    def forward(self, x, d):\n        return nn.Dropout(d)(x)\n", True),
    ("class N:\n    def forward(self, x):\n        return F.dropout(x, self.p)\n", False),
    ("def helper(x, d):\n    return F.dropout(x, d)\n", False),
    ("class N:\n    def forward(self, x, d):\n        d = d * 2\n        return F.dropout(x, d)\n", False),
])
def test_rate_given_per_call(src, given):
    src = "import torch.nn as nn\nimport torch.nn.functional as F\n" + src
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    dropouts = [s.node for s in ctx.semantic.model.calls if "ropout(" in code(ctx.semantic, s.node)]
    call = max(dropouts, key=lambda c: len(code(ctx.semantic, c)))  # nn.Dropout(d)(x), not nn.Dropout(d)
    assert modes.rate_given_per_call(ctx.semantic, call) is given


@pytest.mark.parametrize("tail, idle", [
    ("D = Disc().cuda()\nG.eval()\n", True),                    # another model switched
    ("D = Disc().cuda()\nD.eval()\n", False),                   # this one switched
    ("D = Disc()\ndef score(m):\n    m.eval()\nscore(D)\n", False),  # switched through a parameter
    ("nets = [Disc()]\n", False),                               # handed on unbound
    ("", False),                                                # built nowhere here
    ("D = Disc()\nmodels[0].eval()\n", True),                   # a receiver unrelated to D
])
def test_never_switched_to_eval(tail, idle):
    src = "import torch.nn as nn\nclass Disc(nn.Module):\n    def forward(self, x):\n        return x\n" + tail
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    info = next(iter(ctx.semantic.model.classes.values()))
    assert modes.never_switched_to_eval(ctx.semantic, info) is idle


# -- review packages: a fragment's model, batch norms frozen one by one ----------------------

def test_bound_nowhere_is_a_name_no_code_of_the_file_binds():
    _, sem = analyses("""
        import torch
        from zoo import *
        """)
    assert not modes.bound_nowhere(sem, "net")  # a star import may bring it
    _, sem = analyses("""
        import torch
        from zoo import build
        def f(model):
            global late
            with torch.no_grad():
                return net(x), model(x), late(x), print(x), later(x)
        later = build()
        """)
    assert modes.bound_nowhere(sem, "net")
    assert modes.model_classes(sem, "net", site(sem, "net(x)").node) == [modes.UNBOUND]
    for name in ("model", "late", "later", "print", "build", "self.net"):
        assert not modes.bound_nowhere(sem, name), name


def test_selected_submodule_is_a_pick_in_a_loop_over_the_model_s_modules():
    _, sem = analyses("""
        import torch.nn as nn
        for n, m in model.named_modules():
            if "backbone" in n and isinstance(m, nn.BatchNorm2d):
                m.eval()
        for m in model.modules():
            if not isinstance(m, nn.BatchNorm2d):
                continue
            m.train(False)
        for c in model.children():
            c.eval()
        for block in blocks:
            if block.frozen:
                block.eval()
        """)
    assert modes.selected_submodule(sem, "m", site(sem, "m.eval()"))
    assert modes.selected_submodule(sem, "m", site(sem, "m.train(False)"))
    assert not modes.selected_submodule(sem, "c", site(sem, "c.eval()"))  # every child: the whole model
    assert not modes.selected_submodule(sem, "block", site(sem, "block.eval()"))  # no walk of a model's modules


def test_selected_submodule_through_apply_of_a_helper_that_picks():
    _, sem = analyses("""
        import torch.nn as nn
        def set_bn_eval(m):
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        def set_bn_eval_early(m):
            if not isinstance(m, nn.BatchNorm2d):
                return
            m.eval()
        def set_eval(m):
            m.eval()
        model.apply(set_bn_eval)
        model.apply(set_bn_eval_early)
        model.apply(set_eval)
        model.apply(lambda m: m.eval())
        """)
    assert modes.selected_submodule(sem, "model", site(sem, "model.apply(set_bn_eval)"))
    assert modes.selected_submodule(sem, "model", site(sem, "model.apply(set_bn_eval_early)"))
    assert not modes.selected_submodule(sem, "model", site(sem, "model.apply(set_eval)"))
    assert not modes.selected_submodule(sem, "model", site(sem, "model.apply(lambda m: m.eval())"))
