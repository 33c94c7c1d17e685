"""A directory walk asks ``Excluder.excluded_in``/``linted_name`` (strings, by name) what
``Excluder.excluded``/``linted_kind`` (``Path``s) answer: the same, for every entry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchlint import files
from torchlint.config import Settings
from torchlint.files import Excluder, discover

TREE = {
    ".gitignore": "*.log\n/build_out/\nsub/ignored_here.py\n!keep.log\n",
    "a.py": "", "b.ipynb": "{}", "c.txt": "", "keep.log": "", "x.log": "",
    "build_out/gen.py": "",
    "pkg/__init__.py": "", "pkg/mod.py": "", "pkg/gen_pb2.py": "", "pkg/data.cfg": "",
    "pkg/.gitignore": "local_*.py\n", "pkg/local_tmp.py": "", "pkg/sub/ignored_here.py": "",
    "sub/ignored_here.py": "", "sub/deep/x.py": "", "sub/deep/.gitignore": "x.py\n",
    "venv/lib.py": "", "docs/conf.py": "", "tests/test_a.py": "",
}


@pytest.fixture
def tree(tmp_path):
    (tmp_path / ".git").mkdir()
    for rel, text in TREE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


SETTINGS = [
    {},
    {"extend_exclude": ["*_pb2.py", "docs/", "pkg/mod.py"], "extend_include": ["*.cfg"]},
    {"respect_gitignore": False, "exclude": ["tests"]},
]


@pytest.mark.parametrize("extra", SETTINGS)
@pytest.mark.parametrize("root_at", ["tree", "pkg", "elsewhere"])
def test_by_name_answers_as_by_path(tree, tmp_path_factory, extra, root_at):
    root = {"tree": tree, "pkg": tree / "pkg", "elsewhere": tmp_path_factory.mktemp("other")}[root_at]
    excluder = Excluder(Settings(enabled=frozenset(), rule_options={}, root=root, **extra), tree)
    checked = 0
    for dirpath, dirnames, filenames in os.walk(tree):
        for name, is_dir in [*((d, True) for d in dirnames), *((f, False) for f in filenames)]:
            path = Path(dirpath, name)
            assert excluder.excluded_in(dirpath, name, is_dir) == excluder.excluded(path, is_dir), path
            if not is_dir:
                assert excluder.linted_name(dirpath, name) == excluder.linted_kind(path), path
            checked += 1
    assert checked > 25


def test_the_walk_finds_what_it_found_by_path(tree, monkeypatch):
    settings = Settings(enabled=frozenset(), rule_options={}, root=tree, extend_exclude=["*_pb2.py"])
    by_name = discover(["."], settings, tree)
    assert "pkg/mod.py" in [f.display for f in by_name.files]
    assert not {"x.log", "build_out/gen.py", "pkg/local_tmp.py", "sub/ignored_here.py", "sub/deep/x.py",
                "pkg/gen_pb2.py", "venv/lib.py"} & {f.display for f in by_name.files}
    monkeypatch.setattr(Excluder, "excluded_in", lambda self, d, n, is_dir: self.excluded(Path(d, n), is_dir))
    monkeypatch.setattr(Excluder, "linted_name", lambda self, d, n: self.linted_kind(Path(d, n)))
    assert discover(["."], settings, tree) == by_name


@pytest.mark.parametrize(("path", "base", "rel"), [
    ("/a/b/c.py", "/a", "b/c.py"), ("/a/b", "/a/b", None), ("/ab/c", "/a", None), ("/a/b", "/", "a/b"),
])
def test_inside_is_relative_to(path, base, rel):
    assert files._inside(path, base) == rel
    try:
        expected = Path(path).relative_to(base).as_posix()
    except ValueError:
        expected = None
    assert (expected if expected != "." else None) == rel
