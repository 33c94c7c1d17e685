"""``semantic.state_dicts``: a ``load_state_dict`` call's arguments, who chooses its strictness,
whose state dict it loads and what else sees a key mismatch (TL015's questions)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import state_dicts as sd
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def calls_named(ctx, name: str) -> list[cst.Call]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
            and isinstance(n.func, (cst.Name, cst.Attribute))
            and (n.func.attr.value if isinstance(n.func, cst.Attribute) else n.func.value) == name]


def non_strict_load(ctx) -> cst.Call:
    """The one ``load_state_dict(..., strict=False)`` of the snippet."""
    (call,) = [c for c in calls_named(ctx, "load_state_dict") if sd.non_strict(c)]
    return call


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


# -- a load's arguments ----------------------------------------------------------------------

@pytest.mark.parametrize(("code", "expected"), [
    ("m.load_state_dict(s, strict=False)", True),
    ("m.load_state_dict(s, False)", True),  # the second positional argument
    ("m.load_state_dict(s, strict=0)", True),
    ("m.load_state_dict(s)", False),
    ("m.load_state_dict(s, strict=True)", False),
    ("m.load_state_dict(s, strict=flag)", False),  # chosen at run time
    ("m.load_state_dict(*a)", False),
])
def test_non_strict(code, expected):
    assert sd.non_strict(expr(code)) is expected


@pytest.mark.parametrize(("code", "expected"), [
    ("m.load_state_dict(s, strict=False)", "s"),
    ("m.load_state_dict(copy.deepcopy(ckpt['model']), strict=False)", "ckpt['model']"),
    ("m.load_state_dict(state_dict=s, strict=False)", "s"),
    ("m.load_state_dict(strict=False)", None),
])
def test_state_argument(code, expected):
    found = sd.state_argument(expr(code))
    assert (cst.Module([]).code_for_node(found) if found is not None else None) == expected


@pytest.mark.parametrize(("code", "expected"), [
    ("m.state_dict()", True),
    ("m.state_dict(keep_vars=True)", True),  # the same keys
    ("m.state_dict(prefix='x.')", False),
    ("m.state_dict", False),
    ("torch.load(p)", False),
])
def test_is_state_dict_call(code, expected):
    assert sd.is_state_dict_call(expr(code)) is expected


# -- who chooses the strictness --------------------------------------------------------------

STRICT_PARAMETER = """
    def load(model, state, strict):
        if strict:
            model.load_state_dict(state)
        else:
            model.load_state_dict(state, strict=False)
    """

OTHER_BRANCH_STRICT = """
    import torch
    def load(model, path, disable_check):
        if disable_check:
            model.load_state_dict(torch.load(path), strict=False)
        else:
            model.load_state_dict(torch.load(path))
    """

REBOUND_IN_ONE_BRANCH = """
    import torch
    def load(model, path, disable_check):
        if disable_check:
            model.load_state_dict(torch.load(path), strict=False)
        else:
            path = "other.pt"
            model.load_state_dict(torch.load(path))
    """

GLOBAL_TEST = """
    FLAG = True
    def load(model, state):
        if FLAG:
            model.load_state_dict(state, strict=False)
        else:
            model.load_state_dict(state)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (STRICT_PARAMETER, True),
    (OTHER_BRANCH_STRICT, True),
    (REBOUND_IN_ONE_BRANCH, False),  # not the same dict in both branches
    (GLOBAL_TEST, False),  # a module constant, not the caller's choice
    ("model.load_state_dict(state, strict=False)\n", False),  # no function
])
def test_strict_chosen_by_caller(src, expected):
    ctx, model = analyses(src)
    assert sd.strict_chosen_by_caller(ctx, model, non_strict_load(ctx)) is expected


def test_strict_load_in_and_same_value():
    ctx, model = analyses(OTHER_BRANCH_STRICT)
    call = non_strict_load(ctx)
    branch = ctx.enclosing(call, cst.If)
    strict_call = next(c for c in calls_named(ctx, "load_state_dict") if c is not call)
    assert sd.strict_load_in(model, branch.orelse, call)
    assert not sd.strict_load_in(model, branch.body, strict_call)  # the non-strict load is no strict one
    assert not sd.strict_load_in(model, None, call)
    assert sd.same_value(model, sd.state_argument(call), sd.state_argument(strict_call))

    ctx, model = analyses(REBOUND_IN_ONE_BRANCH)
    call = non_strict_load(ctx)
    strict_call = next(c for c in calls_named(ctx, "load_state_dict") if c is not call)
    assert not sd.same_value(model, sd.state_argument(call), sd.state_argument(strict_call))  # same text, other `path`


# -- whose state dict it is ------------------------------------------------------------------

def test_assigned_values_and_stored_value():
    ctx, model = analyses("""
        def f(a, cond):
            x = {}
            if cond:
                x = a
            y = x
            z = a
            self.w = 3
        """)
    y_read = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Name) and n.value == "x"
                  and isinstance(ctx.parent(n), cst.Assign) and ctx.parent(n).value is n)
    assert [cst.Module([]).code_for_node(v) for v in sd.assigned_values(model, y_read)] == ["{}", "a"]
    a_read = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Name) and n.value == "a"
                  and isinstance(ctx.parent(n), cst.Assign) and ctx.parent(n).targets[0].target.value == "z")
    assert sd.assigned_values(model, a_read) is None  # a parameter may hold anything
    target = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and n.attr.value == "w")
    assert isinstance(sd.stored_value(ctx, target), cst.Integer)
    ctx, _ = analyses("self.w += 1\nfor self.v in range(3):\n    pass\n")
    for attr in ("w", "v"):  # not an assignment of a value
        target = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and n.attr.value == attr)
        assert sd.stored_value(ctx, target) is None


@pytest.mark.parametrize(("src", "expected"), [
    ("sd = model.state_dict()\nsd.update(extra)\nmodel.load_state_dict(sd, strict=False)\n", True),
    ("model.load_state_dict({k: v for k, v in model.state_dict().items() if 'head' not in k}, strict=False)\n", True),
    ("model.load_state_dict(model.state_dict(keep_vars=True), strict=False)\n", True),
    ("import torch\nsd = torch.load('x.pt')\nmodel.load_state_dict(sd, strict=False)\n", False),
    ("def f(model, sd):\n    model.load_state_dict(sd, strict=False)\n", False),
])
def test_own_state_dict(src, expected):
    ctx, model = analyses(src)
    assert sd.own_state_dict(model, sd.state_argument(non_strict_load(ctx))) is expected


EMA = """
    import copy
    class Trainer:
        def __init__(self, model):
            self.ema = None
            self.ema = copy.deepcopy(model)
            self.ema = self.ema.to("cuda")
        def swap(self, state):
            self.ema.module.load_state_dict(state, strict=False)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (EMA, True),
    (EMA.replace("self.ema = None", "self.ema = build()"), False),  # not only copies
    (EMA.replace("copy.deepcopy(model)", "AveragedModel(model)"), True),
    (EMA.replace("self.ema.module.load_state_dict", "ema.load_state_dict"), False),  # not an attribute of self
])
def test_averaged_copy(src, expected):
    ctx, _ = analyses(src)
    call = non_strict_load(ctx)
    assert sd.averaged_copy(ctx, ctx.semantic.model, call.func.value) is expected
    assert sd.keys_match(ctx, call) is expected


SNAPSHOT = """
    import copy
    class Reloader:
        def __init__(self, model):
            self.model = model
            self.snapshot = None
            self.snapshot = copy.deepcopy(model.state_dict())
        def reload(self):
            self.model.load_state_dict(self.snapshot, strict=False)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (SNAPSHOT, True),
    (SNAPSHOT.replace("self.snapshot = None", "self.snapshot = torch.load(p)"), False),
])
def test_snapshot_attribute(src, expected):
    ctx, model = analyses(src)
    call = non_strict_load(ctx)
    assert sd.snapshot_attribute(ctx, model, sd.state_argument(call)) is expected
    assert sd.keys_match(ctx, call) is expected


ENTRY = """
    import torch
    def save(model, path):
        torch.save({"ranges": {k: v for k, v in model.state_dict().items() if "range" in k}}, path)
    def load(model, path):
        state = torch.load(path)
        model.load_state_dict(state["ranges"], strict=False)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (ENTRY, True),
    (ENTRY.replace('state["ranges"]', 'state["weights"]'), False),  # no such entry built here
    (ENTRY.replace('state["ranges"]', "state"), False),
])
def test_entry_built_from_state_dict(src, expected):
    ctx, _ = analyses(src)
    call = non_strict_load(ctx)
    assert sd.entry_built_from_state_dict(ctx, sd.state_argument(call)) is expected
    assert sd.keys_match(ctx, call) is expected


OWN_KEYS = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            self.embedding = nn.Embedding(10, 4)
        def init_from(self, w):
            weights = {"embedding.weight": w}
            self.load_state_dict(weights, strict=False)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (OWN_KEYS, True),
    (OWN_KEYS.replace('"embedding.weight"', '"encoder.weight"'), False),  # not an attribute of the class
    (OWN_KEYS.replace("self.load_state_dict", "other.load_state_dict"), False),
    (OWN_KEYS.replace('weights = {"embedding.weight": w}', "weights = {}"), False),  # no keys at all
])
def test_own_keys_literal(src, expected):
    ctx, model = analyses(src)
    call = non_strict_load(ctx)
    assert sd.own_keys_literal(model, call.func.value, sd.state_argument(call)) is expected
    assert sd.keys_match(ctx, call) is expected


SAVER_LOADER = """
    import torch
    class Adapter:
        def save(self, path):
            torch.save({n: p for n, p in self.state_dict().items() if p.requires_grad}, path)
        def load(self, path):
            self.load_state_dict(torch.load(path), strict=False)
    """


@pytest.mark.parametrize(("src", "expected"), [
    (SAVER_LOADER, True),
    (SAVER_LOADER.replace(" if p.requires_grad", ""), False),  # not filtered: the whole dict
    (SAVER_LOADER.replace("torch.save(", "pickle.dump("), False),
])
def test_saved_by_own_class(src, expected):
    ctx, model = analyses(src)
    call = non_strict_load(ctx)
    assert sd.saved_by_own_class(ctx, model, call.func.value) is expected
    assert sd.keys_match(ctx, call) is expected


FILTERED = """
    import torch
    def transfer(model, path):
        ckpt = torch.load(path)
        csd = intersect_dicts(ckpt, model.state_dict())
        model.load_state_dict(csd, strict=False)
        print(f"transferred {len(csd)} items")
    """


@pytest.mark.parametrize(("src", "filtered", "size", "matched"), [
    (FILTERED, True, True, True),
    (FILTERED.replace('        print(f"transferred {len(csd)} items")\n', ""), True, False, False),  # unread count
    (FILTERED.replace("intersect_dicts(ckpt, model.state_dict())",
                      "{k: v for k, v in ckpt.items() if k in model.state_dict()}"), True, True, True),
    (FILTERED.replace("intersect_dicts(ckpt, model.state_dict())", "strip(ckpt)"), False, True, False),
])
def test_filtered_by_own_keys_and_size_read(src, filtered, size, matched):
    ctx, model = analyses(src)
    call = non_strict_load(ctx)
    state = sd.state_argument(call)
    assert sd.filtered_by_own_keys(model, state) is filtered
    assert sd.size_read(model, state) is size
    assert sd.keys_match(ctx, call) is matched


@pytest.mark.parametrize(("code", "expected"), [
    ("intersect_dicts(ckpt, model.state_dict())", True),
    ("{k: v for k, v in ckpt.items() if k in model.state_dict()}", True),
    ("{k: v for k, v in model.state_dict().items()}", False),  # no condition consults it
    ("torch.load(path)", False),
    ("ckpt", False),
])
def test_mentions_own_state_dict(code, expected):
    ctx, model = analyses(f"value = {code}\n")
    value = ctx.module.body[0].body[0].value
    assert sd.mentions_own_state_dict(model, value) is expected


# -- a mismatch seen another way -------------------------------------------------------------

INDEXED_AFTER = """
    def load(model, sd):
        model.load_state_dict(sd, strict=False)
        model.head.weight.data = sd["head.weight"]
    """

INDEXED_BEFORE = """
    def load(model, sd):
        model.head.weight.data = sd["head.weight"]
        model.load_state_dict(sd, strict=False)
    """

SAVED_HERE = """
    import os, torch
    def load(model, path):
        if not os.path.exists(path):
            torch.save(model.state_dict(), path)
        model.load_state_dict(torch.load(path), strict=False)
    """

DIFFERENCES = """
    def load(model, ckpt):
        own = model.state_dict()
        missing = [k for k in own if k not in ckpt]
        model.load_state_dict(ckpt, strict=False)
        print(missing)
    """

FALLBACK = """
    import warnings
    def load(model, sd):
        try:
            model.load_state_dict(sd)
        except RuntimeError:
            warnings.warn("keys differ: loading what matches")
            model.load_state_dict(sd, strict=False)
    """

GUARDED = """
    def load(model, state):
        if any("postdecoder" in k for k in state.keys()):
            model.load_state_dict(state, strict=False)
    """


@pytest.mark.parametrize(("src", "query", "expected"), [
    (INDEXED_AFTER, sd.keys_indexed_after, True),
    (INDEXED_BEFORE, sd.keys_indexed_after, False),
    (INDEXED_AFTER.replace('sd["head.weight"]', "sd[key]"), sd.keys_indexed_after, False),  # no key name written
    (SAVED_HERE, sd.saved_here, True),
    (SAVED_HERE.replace("torch.save(model.state_dict(), path)", "torch.save(other.state_dict(), path)"),
     sd.saved_here, False),  # another module's keys
    (DIFFERENCES, sd.differences_read, True),
    (DIFFERENCES.replace("        print(missing)\n", ""), sd.differences_read, False),  # computed, never read
    (DIFFERENCES.replace("own = model.state_dict()", "own = other.state_dict()"), sd.differences_read, False),
])
def test_mismatch_read_in_the_function(src, query, expected):
    ctx, model = analyses(src)
    call = non_strict_load(ctx)
    assert query(ctx, model, call) is expected
    assert sd.mismatch_seen(ctx, call) is expected


@pytest.mark.parametrize(("src", "query", "expected"), [
    (FALLBACK, sd.strict_fallback, True),
    (FALLBACK.replace('            warnings.warn("keys differ: loading what matches")\n', ""),
     sd.strict_fallback, False),  # a silent fallback
    (FALLBACK.replace("model.load_state_dict(sd)\n", "other.load_state_dict(sd)\n"), sd.strict_fallback, False),
    (GUARDED, sd.key_guarded, True),
    (GUARDED.replace('any("postdecoder" in k for k in state.keys())', '"head.weight" in state'), sd.key_guarded, True),
    (GUARDED.replace('any("postdecoder" in k for k in state.keys())', "len(state) > 3"), sd.key_guarded, False),
    (GUARDED.replace("state.keys()", "other.keys()"), sd.key_guarded, False),  # another dict's keys
])
def test_mismatch_seen_around_the_call(src, query, expected):
    ctx, _ = analyses(src)
    call = non_strict_load(ctx)
    assert query(ctx, call) is expected
    assert sd.mismatch_seen(ctx, call) is expected


@pytest.mark.parametrize(("test", "expected"), [
    ('"head.weight" in state', True),
    ('"head.weight" in state.keys()', True),
    ('any("post" in k for k in state)', True),
    ('"head.weight" in other', False),
    ("k in state", False),  # no key name written
])
def test_tests_key_names(test, expected):
    ctx, _ = analyses(f"if {test}:\n    pass\n")
    assert sd.tests_key_names(ctx, ctx.module.body[0].test, "state") is expected


# -- a receiver that returns itself ----------------------------------------------------------

@pytest.mark.parametrize(("guard", "expected"), [
    ("is_tensor_collection(td)", True),
    ("isinstance(td, TensorDictBase)", True),
    ("isinstance(td, (dict, tensordict.TensorDict))", True),
    ("isinstance(td, nn.Module)", False),
    ("is_tensor_collection(other)", False),
])
def test_returns_itself(guard, expected):
    ctx, _ = analyses(f"def f(td, sd):\n    if {guard}:\n        td.load_state_dict(sd, strict=False)\n")
    assert sd.returns_itself(ctx, non_strict_load(ctx).func.value) is expected


def test_nothing_said_for_a_plain_checkpoint_load():
    ctx, model = analyses("""
        import torch
        def load(model, path):
            model.load_state_dict(torch.load(path), strict=False)
        """)
    call = non_strict_load(ctx)
    assert not sd.keys_match(ctx, call)
    assert not sd.mismatch_seen(ctx, call)
    assert not sd.strict_chosen_by_caller(ctx, model, call)
    assert not sd.returns_itself(ctx, call.func.value)


LAUNCHER = """
    import os
    import tempfile
    class Launcher:
        def collect(self, trainer):
            state_dict = trainer.lightning_module.state_dict()
            weights_path = None
            if trainer.fitting:
                weights_path = os.path.join(tempfile.mkdtemp(), ".temp.ckpt")
                self._strategy.checkpoint_io.save_checkpoint(state_dict, weights_path)
            return Output(weights_path)
        def recover(self, output, trainer):
            if output.weights_path is not None:
                ckpt = self._strategy.checkpoint_io.load_checkpoint(output.{loaded})
                trainer.lightning_module.load_state_dict(ckpt, strict=False)
"""


@pytest.mark.parametrize(("loaded", "expected"), [("weights_path", True), ("ckpt_path", False)])
def test_round_trip_through_temporary_file(loaded, expected):
    ctx, model = analyses(LAUNCHER.replace("{loaded}", loaded))
    assert sd.round_trip_through_temporary_file(ctx, model, non_strict_load(ctx)) is expected


def test_round_trip_needs_a_temporary_file_and_the_same_receiver():
    # A path the user names may hold any checkpoint; another module's dict has other keys.
    user = LAUNCHER.replace("{loaded}", "weights_path").replace(
        'os.path.join(tempfile.mkdtemp(), ".temp.ckpt")', "trainer.ckpt_path")
    ctx, model = analyses(user)
    assert not sd.round_trip_through_temporary_file(ctx, model, non_strict_load(ctx))
    other = LAUNCHER.replace("{loaded}", "weights_path").replace(
        "state_dict = trainer.lightning_module.state_dict()", "state_dict = teacher.state_dict()")
    ctx, model = analyses(other)
    assert not sd.round_trip_through_temporary_file(ctx, model, non_strict_load(ctx))
