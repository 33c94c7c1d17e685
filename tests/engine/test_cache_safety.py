"""The cache cannot be forged or go stale (issue 10, items 14 and 15).

A cache directory may be committed to a repository or unpacked from anywhere: an entry this
machine did not sign is a miss, a signed entry is still checked field by field, and no link
leads a read or a write out of the cache directory.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from torchlint import cache as cache_mod
from torchlint.cache import Cache
from torchlint.config import build_settings
from torchlint.run import lint_files
from torchlint.files import discover

BUGGY = "import torch\n\ndef broken(:\n"
CLEAN = "x = 1\n"
KEY_A, KEY_B = b"a" * 32, b"b" * 32


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def _run(root: Path, cache_dir: Path | None, secret: bytes | None = KEY_A):
    settings = build_settings(None, None, root=root)
    cache = Cache(cache_dir, settings.enabled, settings.rule_options, secret=secret) if cache_dir else None
    result = lint_files(discover(["."], settings, root).files, settings, root, jobs=1, cache=cache)
    return [f.to_dict() for f in result.findings], cache


def _entry_of(cache: Cache, root: Path, rel: str) -> Path:
    """The file's own entry, with the run pack removed: a pack would otherwise serve the
    file without reading its entry (the pack's own checks are tested below)."""
    pack = cache.pack_path()
    if pack is not None and pack.exists():
        pack.unlink()
    return Path(cache._entry(cache.key(rel, (root / rel).read_bytes())))


def _forge(cache: Cache, root: Path, rel: str, mutate, *, sign: bool) -> None:
    """Rewrite the entry of ``rel`` after ``mutate(payload)``, signed with the cache's own key
    (the signature cannot tell it from a real one) or with a made-up signature."""
    entry = _entry_of(cache, root, rel)
    payload = json.loads(entry.read_bytes())["entry"]
    mutate(payload)
    body = json.dumps(payload).encode()
    mac = cache._sign(body) if sign else b"0" * 64
    entry.write_bytes(b'{"mac":"' + mac + b'","entry":' + body + b"}")


def _passwd_finding(payload):
    payload["findings"] = [{**payload["findings"][0], "path": "/etc/passwd", "line": 1,
                            "message": "::error file=x::injected"}]


def _no_findings(payload):
    payload["findings"] = []


@pytest.mark.parametrize("mutate", [_passwd_finding, _no_findings])
def test_an_unsigned_forged_entry_is_a_miss(tree, mutate):
    expected, _ = _run(tree, None)
    assert [f["path"] for f in expected] == ["buggy.py"]
    _, cache = _run(tree, tree / "c")
    _forge(cache, tree, "buggy.py", mutate, sign=False)
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.misses == 1


def test_a_forged_entry_in_the_old_unsigned_format_is_a_miss(tree):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    entry = _entry_of(cache, tree, "buggy.py")
    payload = json.loads(entry.read_bytes())["entry"]
    _no_findings(payload)
    entry.write_text(json.dumps(payload))  # what torchlint wrote before entries were signed
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.misses == 1


def test_an_entry_signed_with_another_key_is_a_miss(tree):
    _run(tree, tree / "c", secret=KEY_A)
    _, cache = _run(tree, tree / "c", secret=KEY_B)
    assert (cache.hits, cache.misses) == (0, 2)
    _, cache = _run(tree, tree / "c", secret=KEY_B)
    assert (cache.hits, cache.misses) == (2, 0)


def _set(path, value):
    def mutate(payload):
        target = payload
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return mutate


@pytest.mark.parametrize("mutate", [
    _passwd_finding,
    _set(("findings", 0, "rule"), "TL999"),
    _set(("findings", 0, "name"), "something-else"),
    _set(("findings", 0, "severity"), "fatal"),
    _set(("findings", 0, "line"), True),
    _set(("findings", 0, "line"), "1"),
    _set(("findings", 0, "column"), -1),
    _set(("findings", 0, "message"), ["not", "a", "string"]),
    _set(("findings", 0, "unexpected"), 1),
    _set(("findings",), {"not": "a list"}),
    _set(("path",), "clean.py"),
    _set(("record", "path"), "/etc/passwd"),
    _set(("record", "is_package"), 1),
    _set(("record", "imports"), {"torch": 1}),
    _set(("record", "star_imports"), [None]),
    _set(("record", "facts"), {"TL999": "{}"}),
    _set(("record", "facts"), {"TL005": {"decoded": "instead of JSON text"}}),
    _set(("record", "suppressions"), {"lines": {"x": None}, "file": False}),
    _set(("record", "suppressions"), {"lines": {}, "file": "TL001"}),
    _set(("record", "unanalysed"), None),
    _set(("record", "unanalysed"), False),
    _set(("record", "extra"), 1),
])
def test_a_signed_entry_is_still_checked_field_by_field(tree, mutate):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    _forge(cache, tree, "buggy.py", mutate, sign=True)
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.misses == 1


def test_a_committed_forged_cache_hides_nothing_end_to_end(tree, run):
    code, out, _ = run("check", "--format", "json", ".")
    assert code == 1
    for entry in (tree / ".torchlint_cache").rglob("*.json"):
        payload = json.loads(entry.read_bytes())["entry"]
        _no_findings(payload)
        entry.write_text(json.dumps({"mac": "0" * 64, "entry": payload}, separators=(",", ":")))
    code2, out2, err = run("check", "--format", "json", "-v", ".")
    assert (code2, json.loads(out2)) == (code, json.loads(out))
    assert "0 hit(s), 2 miss(es)" in err


def test_a_symlinked_cache_directory_is_not_followed(tree, run):
    elsewhere = tree / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tree / ".torchlint_cache")
    code, out, err = run("check", "--format", "concise", "-v", ".")
    assert code == 1 and "buggy.py" in out
    assert "symbolic link" in err and "cache off" in err
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_bucket_is_neither_read_nor_written_through(tree):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    entry = _entry_of(cache, tree, "buggy.py")
    outside = tree / "outside"
    entry.parent.rename(outside)  # a valid, signed copy of the entries lives outside ...
    os.symlink(outside, entry.parent)  # ... and the bucket's subdirectory points there
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.hits <= 1 and cache.misses >= 1
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


def test_a_symlinked_entry_is_a_miss_and_is_replaced_not_written_through(tree):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    entry = _entry_of(cache, tree, "buggy.py")
    outside = tree / "outside.json"
    entry.rename(outside)
    os.symlink(outside, entry)
    before = outside.read_bytes()
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and (cache.hits, cache.misses) == (1, 1)
    assert outside.read_bytes() == before and not entry.is_symlink()


def test_a_fifo_entry_is_a_miss_not_a_hang(tree):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    entry = _entry_of(cache, tree, "buggy.py")
    entry.unlink()
    os.mkfifo(entry)
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.misses == 1


@pytest.mark.parametrize("which", ["python_version", "libcst_version"])
def test_the_key_includes_the_python_and_libcst_versions(tree, monkeypatch, which):
    _, cache = _run(tree, tree / "c")
    before = cache.settings
    monkeypatch.setattr(cache_mod, which, lambda: "0.0.0")
    # a TL000 cached by one parser is not served to another
    findings, cache = _run(tree, tree / "c")
    assert cache.settings != before and cache.hits == 0
    assert any(f["rule"] == "TL000" for f in findings)


def test_stale_temporary_files_are_removed(tree):
    _, cache = _run(tree, tree / "c")
    (tree / "new.py").write_text("y = 2\n")  # the next run writes its entry ...
    subdir = _entry_of(cache, tree, "new.py").parent
    subdir.mkdir(exist_ok=True)
    stale, fresh = subdir / ".tmp-killed.json", subdir / ".tmp-running.json"  # ... where a killed run left these
    for p in (stale, fresh):
        p.write_text("{")
    old = time.time() - 2 * cache_mod.STALE_TMP_SECONDS
    os.utime(stale, (old, old))
    _run(tree, tree / "c")
    assert not stale.exists() and fresh.exists()


def test_the_key_is_created_once_private_and_outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.delenv(cache_mod.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = cache_mod.key_file()
    assert path == tmp_path / "xdg" / "torchlint" / "key"
    key = cache_mod.load_key(path)
    assert len(key) == cache_mod.KEY_BYTES and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cache_mod.load_key(path) == key
    assert [p.name for p in path.parent.iterdir()] == ["key"]  # no temporary file left
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.key_file() == tmp_path / "home" / ".cache" / "torchlint" / "key"


@pytest.mark.parametrize("content", [None, b"short"])
def test_without_a_key_the_run_goes_on_without_the_cache(tree, run, monkeypatch, content):
    if content is None:  # the key cannot be created: its directory would be inside a file
        (tree / "file").write_text("")
        monkeypatch.setenv(cache_mod.KEY_ENV, str(tree / "file" / "key"))
    else:
        (tree / "key").write_bytes(content)
        monkeypatch.setenv(cache_mod.KEY_ENV, str(tree / "key"))
    code, out, err = run("check", "--format", "concise", "-v", ".")
    assert code == 1 and "buggy.py" in out
    assert "cache off: no cache key" in err
    assert not list(tree.rglob("*.json"))  # nothing cached


def test_the_project_index_survives_the_cache_and_a_malformed_one_is_a_miss(tree):
    (tree / "model.py").write_text("import torch.nn as nn\n\nclass Net(nn.Module):\n"
                                   "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n")
    _, cache = _run(tree, tree / "c")
    key = cache.key("model.py", (tree / "model.py").read_bytes())
    hit = cache.get("model.py", key)
    assert hit is not None
    assert [c["name"] for c in hit.record.index["classes"]] == ["Net"]
    assert hit.record.index["classes"][0]["bases"] == ["torch.nn.Module"]
    for bad in ({"classes": "Net"}, {"classes": [{"name": "Net"}]}, {"functions": {"f": {"trains": 1}}}, []):
        _forge(cache, tree, "model.py", lambda p, bad=bad: p["record"].__setitem__("index", bad), sign=True)
        assert cache.get("model.py", key) is None, bad


# -- the run pack is an entry like any other -----------------------------------------------

def _forge_pack(cache: Cache, mutate, *, sign: bool) -> None:
    pack = cache.pack_path()
    payload = json.loads(pack.read_bytes())["entry"]
    mutate(payload)
    body = json.dumps(payload).encode()
    pack.write_bytes(b'{"mac":"' + (cache._sign(body) if sign else b"0" * 64) + b'","entry":' + body + b"}")


def _slot(path, value, rel="buggy.py"):
    """Set ``path`` inside the pack's slot for ``rel``: [entry key, findings, light record,
    the record's project digest]."""
    def mutate(payload):
        target = payload["files"][rel]
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return mutate


def _project_rule(rule):
    def mutate(payload):
        for memo in payload["project"].values():
            for f in memo["findings"]:
                f["rule"] = rule
    return mutate


_MALFORMED_SLOTS = [
    _slot((1, 0, "path"), "/etc/passwd"),
    _slot((1, 0, "rule"), "TL999"),
    _slot((0,), "0" * 40),  # the findings of another version of the file
    _slot((2, "suppressions"), {"lines": {"x": None}, "file": False}),
    _slot((2, "cells"), [["1", 0]]),
    _slot((2, "module_name"), 3),
    _slot((2, "extra"), 1),
    _slot((3,), "not a digest"),
    _slot((3,), None),
    lambda payload: payload["files"]["buggy.py"].append("a fifth item"),
]


@pytest.mark.parametrize("mutate", [*_MALFORMED_SLOTS, _slot((1,), [])])
def test_an_unsigned_forged_pack_is_a_miss(tree, mutate):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    _forge_pack(cache, mutate, sign=False)
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and (cache.hits, cache.misses) == (2, 0)  # from the files' own entries


@pytest.mark.parametrize("mutate", _MALFORMED_SLOTS)
def test_a_signed_pack_is_still_checked_field_by_field(tree, mutate):
    expected, _ = _run(tree, None)
    _, cache = _run(tree, tree / "c")
    _forge_pack(cache, mutate, sign=True)
    entry = Path(cache._entry(cache.key("buggy.py", (tree / "buggy.py").read_bytes())))
    entry.unlink()  # so a slot taken on trust would show: buggy.py's findings come from the pack or analysis
    findings, cache = _run(tree, tree / "c")
    assert findings == expected and cache.misses == 1


def test_a_forged_project_memo_in_the_pack_is_recomputed(tree):
    (tree / "model.py").write_text("import torch.nn as nn\n\nclass Net(nn.Module):\n"
                                   "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n"
                                   "    def forward(self, x):\n        return x\n")
    expected, _ = _run(tree, None)
    assert any(f["rule"] == "TL005" for f in expected), "TL005's project pass must report here"
    _, cache = _run(tree, tree / "c")
    for entry in (tree / "c").rglob("*.json"):
        if entry != cache.pack_path() and b'"project"' in entry.read_bytes():
            entry.unlink()  # the memo's own entry: only the pack's copy is left
    _forge_pack(cache, _project_rule("TL999"), sign=True)
    findings, _ = _run(tree, tree / "c")
    assert findings == expected
