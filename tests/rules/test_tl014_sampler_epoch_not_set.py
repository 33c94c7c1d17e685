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
