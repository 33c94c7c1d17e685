"""``semantic.constructors``: what a class keeps of its ``__init__`` arguments (``received``),
where a key's value may come from through names, parameters and ``self.`` attributes
(``origins``), which parameters another module may fill (``exposed``), where an argument goes
in a same-file callee (``handed_to``), the name a value is assigned to (``bound_key``), the keys a returned value is kept as (``kept_as``), and
what a file passes to imported callables (``passes``, ``matches``)."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.constructors import (Entry, bound_key, exposed, handed_to, kept_as, matches, origins, passes,
                                             received)
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def calls(ctx, name: str) -> list[cst.Call]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and dotted_name(n.func) == name]


def written(values) -> list[str]:
    return [cst.Module([]).code_for_node(v) for v, _ in values]


TRAINER = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

class Trainer:
    def __init__(self, model, loader, optimizer, scheduler=None, *, device="cpu"):
        self.model = DDP(model.to(device))
        self.loader = loader
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.epochs = 10

    def train_epoch(self):
        for batch in self.loader:
            self.scheduler.step()

class Child(Trainer):
    pass

def train(model, loader, opt, sched):
    for batch in loader:
        sched.step()

def main():
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 30)
    trainer = Trainer(model, loader, opt, scheduler=sched)
    trainer.train_epoch()
    train(model, loader, opt, torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=100))
"""


def test_received_keeps_init_parameters_through_wrappers():
    _, semantic = analyses(TRAINER)
    kept = {"model": ["model"], "loader": ["loader"], "optimizer": ["optimizer"], "scheduler": ["scheduler"]}
    assert received(semantic) == {"Trainer": kept, "Child": kept}  # a subclass without __init__: its base's


def test_origins_of_a_self_attribute_follow_the_constructor_call():
    ctx, semantic = analyses(TRAINER)
    step = calls(ctx, "self.scheduler.step")[0]
    found = origins(semantic, "self.scheduler", step)
    assert [dotted_name(c.func) for c in found.calls()] == ["torch.optim.lr_scheduler.StepLR"]
    assert found.entries == [Entry("Trainer", "scheduler", 3)]


def test_origins_of_a_parameter_follow_the_files_calls():
    ctx, semantic = analyses(TRAINER)
    step = calls(ctx, "sched.step")[0]
    found = origins(semantic, "sched", step)
    assert [dotted_name(c.func) for c in found.calls()] == ["torch.optim.lr_scheduler.OneCycleLR"]
    assert found.entries == [Entry("train", "sched", 3)]


def test_origins_of_a_parameter_nobody_passes_is_an_entry_only():
    ctx, semantic = analyses("""
        def fit(model, scheduler):
            for x in loader:
                scheduler.step()
    """)
    found = origins(semantic, "scheduler", calls(ctx, "scheduler.step")[0])
    assert found.values == [] and found.entries == [Entry("fit", "scheduler", 1)]


def test_origins_of_a_nested_functions_parameter_is_no_entry():
    ctx, semantic = analyses("""
        def outer():
            def inner(scheduler):
                scheduler.step()
    """)
    found = origins(semantic, "scheduler", calls(ctx, "scheduler.step")[0])
    assert found.entries == [] and found.unknown


def test_origins_see_both_branches_and_skip_none():
    ctx, semantic = analyses("""
        import torch
        sched = torch.optim.lr_scheduler.StepLR(opt, 3) if cfg.step else None
        alias = sched
        alias.step()
    """)
    found = origins(semantic, "alias", calls(ctx, "alias.step")[0])
    assert written(found.values) == ["torch.optim.lr_scheduler.StepLR(opt, 3)"]


def test_exposed_lists_module_level_functions_and_class_constructors():
    _, semantic = analyses(TRAINER)
    entries = [entry for entry, _ in exposed(semantic)]
    assert Entry("Trainer", "scheduler", 3) in entries
    assert Entry("Trainer", "device", None) in entries  # keyword-only
    assert Entry("train", "loader", 1) in entries
    assert not any(e.param == "self" for e in entries)
    assert not any(e.owner == "train_epoch" for e in entries)  # a method: its callers hold the object


def test_handed_to_a_constructor_names_the_attributes_it_is_kept_as():
    ctx, semantic = analyses(TRAINER)
    site = semantic.model.call_site(calls(ctx, "Trainer")[0])
    arg = site.node.args[3]
    [place] = handed_to(semantic, site, arg)
    assert (place.param, place.attrs) == ("scheduler", ("scheduler",))


def test_kept_as_follows_a_returned_value_into_the_callers_attribute():
    ctx, semantic = analyses("""
        from torch.utils.data import DataLoader, DistributedSampler
        class Recipe:
            def setup(self):
                self._sampler, self._loader = self._setup_data(ds)
                self.single = self._only_loader(ds)
            def _setup_data(self, ds):
                sampler = DistributedSampler(ds)
                loader = DataLoader(ds, sampler=sampler)
                return sampler, loader
            def _only_loader(self, ds):
                loader = DataLoader(ds)
                return loader
    """)
    [first, second] = calls(ctx, "DataLoader")
    assert kept_as(semantic, "loader", first) == ["loader", "self._loader"]
    assert kept_as(semantic, "sampler", first) == ["sampler", "self._sampler"]
    assert kept_as(semantic, "loader", second) == ["loader", "self.single"]


def test_kept_as_is_the_key_alone_when_nothing_keeps_the_result():
    ctx, semantic = analyses("""
        from torch.utils.data import DataLoader
        def make(ds):
            loader = DataLoader(ds)
            return loader
        for batch in make(ds):
            pass
    """)
    assert kept_as(semantic, "loader", calls(ctx, "DataLoader")[0]) == ["loader"]


def test_passes_describe_arguments_of_imported_callables_by_slot():
    ctx, semantic = analyses("""
        from trainer import Trainer
        import engine
        trainer = Trainer(model, loader, opt, scheduler=sched)
        engine.train(model, loader)
        local(loader)
    """)

    def describe(_, expr, at):
        return dotted_name(expr) if dotted_name(expr) in ("loader", "sched") else None

    assert passes(semantic, describe) == [["trainer.Trainer", 1, "loader"], ["trainer.Trainer", "scheduler", "sched"],
                                          ["engine.train", 1, "loader"]]


def test_matches_by_keyword_or_position():
    entry = Entry("Trainer", "scheduler", 3)
    assert matches(entry, 3) and matches(entry, "scheduler") and matches(entry.to_json(), 3)
    assert not matches(entry, 2) and not matches(entry, "optimizer")
    assert not matches(Entry("Trainer", "device", None), 4)


BOUND = """
import torch
a = Net()
b = Net().to(device).eval()
self.c: Net = Net().cuda()
d = Net() if big else None
e = f = Net()
g = [Net()]
h = Net().fuse()
i = None if small else Net().to(device)
"""


def test_bound_key_the_name_or_attribute_a_value_is_assigned_to():
    ctx, _ = analyses(BOUND)
    nets = calls(ctx, "Net")
    plain = [bound_key(ctx, n) for n in nets]
    through_calls = [bound_key(ctx, n, self_returning=True) for n in nets]
    from_branches = [bound_key(ctx, n, branches=True) for n in nets]
    assert plain == ["a", None, None, None, None, None, None, None]
    assert through_calls == ["a", "b", "self.c", None, None, None, None, None]
    assert from_branches == ["a", None, None, "d", None, None, None, None]
    chained = [bound_key(ctx, n, chained=True) for n in nets]  # every attribute read and call: h = Net().fuse()
    assert chained == ["a", "b", "self.c", None, None, None, "h", None]
