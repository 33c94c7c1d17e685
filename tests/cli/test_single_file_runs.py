"""Issue 13 item 1: linting one file gives that file's findings in a whole-project run.

Every rule's multi-file cases are also run both ways by ``torchlint.testing.lint_tree``
(``each_alone``); these tests go through the command line, the cache and root discovery."""

from __future__ import annotations

import json

BASE = """\
import torch.nn as nn

class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.stem(x).mean((2, 3))
"""
CHILD = """\
from pkg.base import Base

class Child(Base):
    def forward(self, x):
        return self.head(super().forward(x))
"""


def _findings(run, *args):
    code, out, err = run("check", "--format", "json", *args)
    assert code in (0, 1), err
    return [(f["path"], f["rule"], f["line"]) for f in json.loads(out)]


def test_a_base_class_layer_used_by_a_subclass_in_another_file(project, run):
    """Pre-commit names only pkg/base.py: TL005 must still see pkg/child.py."""
    (project.root / ".git").mkdir()
    project.write("pkg/__init__.py", "")
    project.write("pkg/base.py", BASE)
    project.write("pkg/child.py", CHILD)
    assert _findings(run, "--select", "TL005", ".") == []
    assert _findings(run, "--select", "TL005", "pkg/base.py") == []
    assert _findings(run, "--select", "TL005", "--no-cache", "pkg/base.py") == []
    project.write("pkg/child.py", CHILD.replace("self.head(", "("))  # the subclass no longer uses it
    assert _findings(run, "--select", "TL005", "pkg/base.py") == [("pkg/base.py", "TL005", 7)]


def test_only_the_named_files_are_reported_and_the_rest_comes_from_the_cache(project, run):
    (project.root / ".git").mkdir()
    project.write("pkg/__init__.py", "")
    project.write("pkg/base.py", BASE)
    project.write("pkg/child.py", CHILD)
    project.write("pkg/broken.py", "def f(:\n")  # TL000 in the whole run, not in a run naming child.py
    assert ("pkg/broken.py", "TL000", 1) in _findings(run, "--select", "ALL", ".")
    code, out, err = run("check", "--select", "ALL", "-v", "--format", "json", "pkg/child.py")
    assert all(f["path"] == "pkg/child.py" for f in json.loads(out))
    assert "cache" in err and " 0 miss(es)" in err  # every other file's record came from the cache


def test_the_project_root_is_the_configuration_directory(project, run):
    """No git repository: the configuration's directory bounds the project."""
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL005']\n")
    project.write("pkg/__init__.py", "")
    project.write("pkg/base.py", BASE)
    project.write("pkg/child.py", CHILD)
    assert _findings(run, "pkg/base.py") == []



def test_without_a_configuration_or_git_root_the_named_paths_are_the_project(project, run):
    """Nothing marks a project (a directory of unrelated checkouts, say): only what is named
    is read, so a base class is judged without the sibling file's subclass."""
    project.write("pkg/__init__.py", "")
    project.write("pkg/base.py", BASE)
    project.write("pkg/child.py", CHILD)
    assert _findings(run, "--select", "TL005", "--no-cache", "pkg/base.py") == [("pkg/base.py", "TL005", 7)]
    assert _findings(run, "--select", "TL005", "--no-cache", "pkg") == []
