"""TL014 sampler-epoch-not-set beyond the embedded cases: fixtures, datasets and training loops
in other modules."""

from __future__ import annotations

from pathlib import Path

from torchlint.checks.tl014_sampler_epoch_not_set import iterable_message, sampler_message
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL014"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl014_sampler_epoch_not_set.py", 14)]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL014"], dedent=False) == []


DATA = """
import torch
from torch.utils.data import IterableDataset
class Lines(IterableDataset):
    def __iter__(self):
        yield from open(self.path)
class Sharded(IterableDataset):
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for i, line in enumerate(open(self.path)):
            if info is None or i % info.num_workers == info.id:
                yield line
"""
TRAIN = """
from torch.utils.data import DataLoader
from data import Lines, Sharded
lines = DataLoader(Lines(), batch_size=8, num_workers=4)
sharded = DataLoader(Sharded(), batch_size=8, num_workers=4)
"""


def test_iterable_dataset_defined_in_another_module():
    findings = lint_tree({"data.py": DATA, "train.py": TRAIN}, select=["TL014"])
    assert [(f.path, f.line, f.message) for f in findings] == [("train.py", 4, iterable_message("Lines", 4))]


LOADERS = """
from torch.utils.data import DataLoader, DistributedSampler
def make_loader(ds):
    return DataLoader(ds, sampler=DistributedSampler(ds))
"""
MAIN = """
from torch.utils.data import DataLoader, DistributedSampler
from engine import train_one_epoch
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, sampler=sampler)
other = DataLoader(train_set, sampler=DistributedSampler(train_set))
for epoch in range(epochs):
    train_one_epoch(model, loader)
    for batch in other:
        step(batch)
"""


def test_loops_in_other_modules():
    """A loader built in one module and returned, or handed to another module's epoch, is not
    judged (the other module may call set_epoch); one iterated here is."""
    findings = lint_tree({"loaders.py": LOADERS, "main.py": MAIN}, select=["TL014"])
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("main.py", 6, sampler_message("other.sampler"))]


# -- the trainer layout across modules (issue 40) -------------------------------------------

TRAINER = """
class Trainer:
    def __init__(self, model, train_loader, optimizer):
        self.model = model
        self.train_loader = train_loader
        self.optimizer = optimizer

    def train_epoch(self):
        for batch in self.train_loader:
            self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
"""
TRAINER_SETTING_EPOCH = TRAINER.replace("            self.train_epoch()",
                                        "            self.train_loader.sampler.set_epoch(epoch)\n"
                                        "            self.train_epoch()")
ENGINE = """
def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for batch in loader:
            optimizer.step()
"""
ONE_PASS = """
def one_pass(model, loader, optimizer):
    for batch in loader:
        model(batch).backward()
        optimizer.step()
"""


def _main(call: str, module: str = "trainer", name: str = "Trainer") -> str:
    return f"""
from torch.utils.data import DataLoader, DistributedSampler
from {module} import {name}
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
{call}
"""


def test_trainer_layout_across_modules():
    findings = lint_tree({"trainer.py": TRAINER, "train.py": _main("Trainer(model, loader, opt).fit(10)")},
                         select=["TL014"])
    assert [(f.path, f.line, f.message) for f in findings] == [("train.py", 4, sampler_message("sampler"))]


def test_trainer_that_sets_the_epoch_is_silent():
    findings = lint_tree({"trainer.py": TRAINER_SETTING_EPOCH,
                          "train.py": _main("Trainer(model, loader, opt).fit(10)")}, select=["TL014"])
    assert findings == []


def test_a_parameter_read_every_epoch_in_another_module():
    findings = lint_tree({"engine.py": ENGINE, "train.py": _main("train(model, loader, opt, 10)", "engine", "train")},
                         select=["TL014"])
    assert [(f.path, f.line) for f in findings] == [("train.py", 4)]


def test_a_parameter_read_once_per_call():
    """Read once by the callee: a bug only when the call itself runs every epoch."""
    once = lint_tree({"steps.py": ONE_PASS, "train.py": _main("one_pass(model, loader, opt)", "steps", "one_pass")},
                     select=["TL014"])
    every = lint_tree({"steps.py": ONE_PASS,
                       "train.py": _main("for epoch in range(10):\n    one_pass(model, loader, opt)", "steps",
                                         "one_pass")},
                      select=["TL014"])
    assert once == [] and [(f.path, f.line) for f in every] == [("train.py", 4)]


def test_two_script_folders_with_a_trainer_module_of_the_same_name():
    """proj_a's trainer reads the loader every epoch without set_epoch; proj_b's trainer (same
    module and class names) sets it: linted together, each gets what it gets alone."""
    a = {"proj_a/trainer.py": TRAINER, "proj_a/train.py": _main("Trainer(model, loader, opt).fit(10)")}
    b = {"proj_b/trainer.py": TRAINER_SETTING_EPOCH, "proj_b/train.py": _main("Trainer(model, loader, opt).fit(10)")}
    alone = [(f.path, f.line) for f in lint_tree(a, select=["TL014"]) + lint_tree(b, select=["TL014"])]
    together = [(f.path, f.line) for f in lint_tree({**a, **b}, select=["TL014"])]
    assert sorted(together) == sorted(alone) == [("proj_a/train.py", 4)]
