"""The code kept for dataclasses' generated methods (``torchlint.speedups.dataclass_code``): the
classes made with it are the classes made without it, and a bad or unwritable cache costs
nothing but the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.speedups import dataclass_code
from torchlint.speedups.dataclass_code import compiled_dataclass_methods, load, save

# Imports LibCST in a fresh interpreter (with the kept code at argv[1] unless it is "-") and
# prints a digest of every method dataclasses generated for its node classes, with what the
# block reused and compiled.
_DIGEST = textwrap.dedent("""
    import contextlib, dataclasses, hashlib, json, sys
    from torchlint.speedups.dataclass_code import compiled_dataclass_methods

    def code_digest(code):
        parts = [code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_flags,
                 code.co_argcount, code.co_kwonlyargcount, code.co_filename, code.co_name]
        parts += [code_digest(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    block = compiled_dataclass_methods(sys.argv[1]) if sys.argv[1] != "-" else contextlib.nullcontext()
    with block as reuse:
        import libcst
        left = "exec" in vars(dataclasses)
    left = "exec" in vars(dataclasses)
    out = {}
    todo = [libcst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        for name in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__"):
            fn = kind.__dict__.get(name)
            if hasattr(fn, "__code__"):
                out[f"{kind.__qualname__}.{name}"] = [code_digest(fn.__code__), repr(fn.__defaults__),
                                                      repr(fn.__annotations__), fn.__qualname__]
    print(json.dumps({"digest": out, "left": left, "reused": getattr(reuse, "reused", None),
                      "compiled": getattr(reuse, "compiled", None)}))
""")


@pytest.fixture(autouse=True)
def _writes_bytecode(monkeypatch):
    """As a default interpreter does (``PYTHONDONTWRITEBYTECODE`` may be set around the tests)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _run(path: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TORCHLINT_NO_SPEEDUPS")}
    out = subprocess.run([sys.executable, "-c", _DIGEST, path], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def test_libcst_classes_are_the_same_with_the_kept_code(tmp_path):
    cache = str(tmp_path / "kept.marshal")
    plain = _run("-")
    cold = _run(cache)
    warm = _run(cache)
    assert len(plain["digest"]) > 200
    assert cold["digest"] == plain["digest"]
    assert warm["digest"] == plain["digest"]
    assert cold["compiled"] > 500 and cold["reused"] == 0
    assert warm["compiled"] == 0 and warm["reused"] > 500  # every text ran code read back
    assert not cold["left"] and not warm["left"]  # dataclasses' own exec is back after the block


def _make(namespace: dict) -> type:
    exec("from dataclasses import dataclass, field\n"  # noqa: S102 - a fixed test class
         "@dataclass(frozen=True)\n"
         "class Point:\n"
         "    x: int\n"
         "    y: 'list[int]' = field(default_factory=list)\n", namespace)
    return namespace["Point"]


def test_a_class_made_in_the_block_behaves_as_one_made_without(tmp_path):
    cache = str(tmp_path / "kept.marshal")
    plain = _make({})
    for _ in range(2):  # compiled, then read back
        with compiled_dataclass_methods(cache):
            kept = _make({})
    assert kept(1) == kept(1, []) and kept(1) != kept(2)
    assert repr(kept(1, [2])) == repr(plain(1, [2])).replace(plain.__qualname__, kept.__qualname__)
    with pytest.raises(Exception, match="cannot assign"):
        kept(1).x = 2
    assert kept.__init__.__annotations__ == plain.__init__.__annotations__


def test_a_damaged_or_foreign_file_is_ignored_and_replaced(tmp_path):
    cache = tmp_path / "kept.marshal"
    for content in (b"", b"garbage", dataclass_code.MAGIC_NUMBER + b"\x00\x01", b"\x00\x00\x00\x00" + b"x" * 40):
        cache.write_bytes(content)
        assert load(str(cache)) == {}
        with compiled_dataclass_methods(str(cache)) as reuse:
            _make({})
        assert reuse.compiled > 0 and reuse.reused == 0
        assert load(str(cache))  # written again, readable
    # A marshalled table of something other than code is not run.
    save(str(cache), {"def f(): pass": "not code"})
    assert load(str(cache)) == {}


def test_nothing_is_written_where_bytecode_is_not(tmp_path, monkeypatch):
    cache = tmp_path / "kept.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with compiled_dataclass_methods(str(cache)) as reuse:
        _make({})
    assert reuse.compiled > 0 and not cache.exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_directory_costs_nothing_but_time(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with compiled_dataclass_methods(str(folder / "kept.marshal")) as reuse:
            _make({})
        assert reuse.compiled > 0 and not list(folder.iterdir())
    finally:
        folder.chmod(0o755)


def test_an_unwritable_path_costs_nothing_but_time(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with compiled_dataclass_methods(str(blocker / "sub" / "kept.marshal")) as reuse:  # a file where a folder must be
        _make({})
    assert reuse.compiled > 0
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_nested_blocks_patch_once(tmp_path):
    import dataclasses

    with compiled_dataclass_methods(str(tmp_path / "a")):
        with compiled_dataclass_methods(str(tmp_path / "b")) as inner:
            _make({})
        assert "exec" in vars(dataclasses)  # the outer block's, still active
        assert inner.compiled == 0
    assert "exec" not in vars(dataclasses)
    assert (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_kept_code_lives_next_to_torchlints_bytecode():
    path = dataclass_code.cache_path()
    assert path is not None
    assert Path(path).parent == Path(__import__("importlib.util").util.cache_from_source(dataclass_code.__file__)).parent
    assert Path(path).name.startswith("dataclass_methods.") and path.endswith(".marshal")


def test_the_command_line_reuses_the_kept_code(tmp_path):
    """Two runs of the console entry point: the second compiles no dataclass method (read
    through ``sys.pycache_prefix``, so the installed package's cache is left alone)."""
    (tmp_path / "a.py").write_text("x = 1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TORCHLINT_NO_SPEEDUPS")}
    probe = textwrap.dedent("""
        import sys
        sys.pycache_prefix = sys.argv[1]
        import torchlint.cli as cli, torchlint.speedups.dataclass_code as dc
        seen = []
        real = dc.compiled_dataclass_methods
        def spy(*a, **k):
            block = real(*a, **k)
            reuse = block.__enter__()
            seen.append(reuse)
            class Wrap:
                def __enter__(self): return reuse
                def __exit__(self, *exc): return block.__exit__(*exc)
            return Wrap()
        dc.compiled_dataclass_methods = spy
        sys.argv = ["torchlint", "check", "--isolated", "-q", "--no-cache", sys.argv[2]]
        code = cli.main()
        print(seen[0].reused, seen[0].compiled, code)
    """)
    runs = [subprocess.run([sys.executable, "-c", probe, str(tmp_path / "prefix"), str(tmp_path / "a.py")],
                           capture_output=True, text=True, env=env, check=True).stdout.split() for _ in range(2)]
    assert int(runs[0][1]) > 500  # LibCST's node classes, compiled once
    assert int(runs[1][1]) == 0 and int(runs[1][0]) > 500
    assert runs[0][2] == runs[1][2] == "0"
