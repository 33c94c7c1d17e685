"""TL005 across packages linted in one run (issue 40: findings must not depend on what else is in
the run): each package gets the findings it gets alone."""

from __future__ import annotations

import textwrap

from torchlint.project import FileRecord, Project
from torchlint.semantic.packages import Packages
from torchlint.testing import lint_tree

BLOCK = """
    import torch.nn as nn
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.head = nn.Linear(4, 2)
        def forward(self, x):
            return self.fc(x)
    """


def _tl005(files: dict[str, str]) -> list[tuple[str, int]]:
    found = lint_tree({p: textwrap.dedent(c) for p, c in files.items()}, ["TL005"])
    return sorted((f.path, f.line) for f in found)


def test_a_read_through_an_object_in_another_package_does_not_hide_the_layer():
    alone = _tl005({"p1/blocks.py": BLOCK})
    assert alone == [("p1/blocks.py", 7)]
    other = {"p2/use.py": "from model import Net\nmodel = Net()\ny = model.head(x)\n",
             "p2/model.py": BLOCK.replace("Block", "Net").replace("self.fc(x)", "self.head(self.fc(x))")}
    assert _tl005({"p1/blocks.py": BLOCK, **other}) == alone


def test_a_read_through_an_object_in_the_same_package_still_counts():
    files = {"p1/blocks.py": BLOCK, "p1/train.py": "from blocks import Block\nmodel = Block()\ny = model.head(x)\n"}
    assert _tl005(files) == []


def test_a_class_of_the_same_name_in_another_package_is_no_subclass():
    other = {"p2/net.py": "from timm.layers import Block\nclass MyBlock(Block):\n    def forward(self, x):\n"
                          "        return super().forward(x)\n"}
    assert _tl005({"p1/blocks.py": BLOCK, **other}) == [("p1/blocks.py", 7)]
    # in the same package, an unfollowed base of that name may be this class: not reported
    same = {"p1/net.py": other["p2/net.py"]}
    assert _tl005({"p1/blocks.py": BLOCK, **same}) == []


def test_packages_join_files_by_imports_and_directories():
    records = [FileRecord("a/sub/x.py", "a.sub.x", imports={"y": "y"}), FileRecord("a/y.py", "a.y"),
               FileRecord("c/z.py", "c.z"), FileRecord("c/w.py", "c.w"), FileRecord("d/y.py", "d.y")]
    packages = Packages(Project(records))
    assert packages.together("c/z.py", "c/w.py")
    assert not packages.together("a/sub/x.py", "c/z.py")
    # ``import y`` from a/sub/x.py: a/y.py (in a directory above it), not d/y.py
    assert packages.together("a/sub/x.py", "a/y.py")
    assert not packages.together("a/sub/x.py", "d/y.py")


def test_an_import_another_package_happens_to_satisfy_joins_nothing():
    records = [FileRecord("r1/train.py", "r1.train", imports={"utils": "utils"}), FileRecord("r2/utils.py", "r2.utils"),
               FileRecord("r3/scripts/run.py", "r3.scripts.run", imports={"models": "pkg.models"}),
               FileRecord("r3/src/pkg/models.py", "r3.src.pkg.models"),
               FileRecord("r4/a/b.py", "r4.a.b", imports={"c": "r4.c"}), FileRecord("r4/c.py", "r4.c")]
    packages = Packages(Project(records))
    assert not packages.together("r1/train.py", "r2/utils.py")
    assert packages.together("r3/scripts/run.py", "r3/src/pkg/models.py")  # a src layout
    assert packages.together("r4/a/b.py", "r4/c.py")  # a module of the package above
