"""The process pool and the cache give exactly the findings of a plain serial run."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from torchlint import pool
from torchlint.cache import Cache
from torchlint.config import build_settings
from torchlint.run import lint_files
from torchlint.files import discover

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """The fixtures plus enough extra files (some broken) to make the pool worth starting."""
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    for i in range(30):
        (tmp_path / "gen").mkdir(exist_ok=True)
        body = "def broken(:\n" if i % 7 == 0 else f"import torch\n\nx{i} = torch.zeros({i})\n"
        (tmp_path / "gen" / f"m{i:02}.py").write_text(body)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(root: Path, *, jobs: int, cache_dir: Path | None, cli=None):
    settings = build_settings(None, cli, root=root)
    cache = Cache(cache_dir, settings.enabled, settings.rule_options) if cache_dir else None
    result = lint_files(discover(["."], settings, root).files, settings, root, jobs=jobs, cache=cache)
    return [f.to_dict() for f in result.findings], cache


def test_jobs_and_cache_do_not_change_findings(tree):
    serial, _ = _run(tree, jobs=1, cache_dir=None)
    assert serial, "the fixtures must give findings"
    parallel, _ = _run(tree, jobs=2, cache_dir=None)
    assert parallel == serial
    cold, cache = _run(tree, jobs=2, cache_dir=tree / "c")
    assert cold == serial and cache.hits == 0
    warm, cache = _run(tree, jobs=2, cache_dir=tree / "c")
    assert warm == serial
    assert cache.misses == 0 and cache.hits == len(list(tree.rglob("*.py")))


def test_cache_directory_is_tagged_and_ignored(tree):
    _run(tree, jobs=1, cache_dir=tree / "c")
    assert (tree / "c" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (tree / "c" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_edited_file_is_reanalysed(tree):
    _run(tree, jobs=1, cache_dir=tree / "c")
    target = tree / "gen" / "m01.py"
    target.write_text("def broken_now(:\n")
    findings, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert cache.misses == 1
    assert any(f["path"] == "gen/m01.py" and f["rule"] == "TL000" for f in findings)
    target.write_text("x = 1\n")
    findings, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert not any(f["path"] == "gen/m01.py" for f in findings)


def _file_entries(cache_dir: Path) -> list[Path]:
    """The per-file entries (not the run pack, not the project pass's memos)."""
    return sorted(p for p in cache_dir.rglob("*.json") if b'"record":' in p.read_bytes())


def test_corrupt_and_foreign_entries_are_ignored_and_rewritten(tree):
    baseline, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    cache.pack_path().unlink()  # else the run pack serves every file and no entry is read
    entries = _file_entries(tree / "c")
    assert entries
    entries[0].write_text("{not json")
    entries[1].write_bytes(b"\x00\xff garbage")
    data = json.loads(entries[2].read_text())
    data["path"] = "somewhere/else.py"  # an entry that claims another file
    entries[2].write_text(json.dumps(data))
    findings, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert findings == baseline
    assert cache.misses == 3
    findings, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert cache.misses == 0  # rewritten


def test_settings_change_invalidates(tree):
    _run(tree, jobs=1, cache_dir=tree / "c")
    findings, cache = _run(tree, jobs=1, cache_dir=tree / "c", cli={"select": ["ALL"], "ignore": ["TL000"]})
    assert cache.hits == 0
    assert "TL000" not in {f["rule"] for f in findings}


def test_unwritable_cache_is_not_fatal(tree):
    blocker = tree / "blocked"
    blocker.write_text("a file where the cache directory should be")
    findings, _ = _run(tree, jobs=1, cache_dir=blocker / "cache")
    assert findings


def test_crashing_worker_is_isolated_to_its_file(tree, monkeypatch):
    expected, _ = _run(tree, jobs=1, cache_dir=None)
    real = pool.analyze_source

    def dies_on_one_file(path, data, enabled, options):
        if path == "gen/m03.py":
            os._exit(139)  # what a segfault in the native parser looks like to the pool
        return real(path, data, enabled, options)

    monkeypatch.setattr(pool, "analyze_source", dies_on_one_file)
    findings, _ = _run(tree, jobs=2, cache_dir=None)
    crashed = [f for f in findings if f["path"] == "gen/m03.py"]
    assert len(crashed) == 1 and crashed[0]["rule"] == "TL000"
    assert "crashed" in crashed[0]["message"]
    assert [f for f in findings if f["path"] != "gen/m03.py"] == [f for f in expected if f["path"] != "gen/m03.py"]


def test_cli_flags(tree, run):
    code, out, _ = run("check", "--jobs", "2", "--cache-dir", "cc", "--format", "json", ".")
    assert code == 1 and (tree / "cc" / "CACHEDIR.TAG").exists()
    code2, out2, _ = run("check", "--jobs", "1", "--no-cache", "--format", "json", ".")
    assert (code2, json.loads(out2)) == (code, json.loads(out))
    assert not (tree / ".torchlint_cache").exists()
    assert run("check", "--jobs", "0", ".")[0] == 2


def test_concurrent_runs_do_not_corrupt_the_cache(tree):
    # Two real torchlint processes fill the same cache at once; every entry they leave must be
    # whole, and a warm run from it must give the findings of a cache-less run.
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "torchlint", "check", "--isolated", "--jobs", "2", "--cache-dir", "shared-cache",
           "--format", "json", "."]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], [o[1][-500:] for o in outs]
    assert json.loads(outs[0][0]) == json.loads(outs[1][0])
    entries = [p for p in (tree / "shared-cache").rglob("*") if p.is_file() and p.name not in ("CACHEDIR.TAG", ".gitignore")]
    assert entries and not [p for p in entries if p.suffix == ".tmp" or ".tmp" in p.name]
    for entry in entries:
        json.loads(entry.read_bytes())  # whole, valid entries only
    expected, _ = _run(tree, jobs=1, cache_dir=None)
    warm, cache = _run(tree, jobs=1, cache_dir=tree / "shared-cache")
    assert warm == expected and cache.misses == 0


def test_the_project_pass_is_remembered_until_a_file_or_a_setting_changes(tree, monkeypatch):
    from torchlint.checks.tl005_unused_layer import UnusedLayer

    calls = []
    original = UnusedLayer.check_project.__func__

    def counted(cls, project, options):
        calls.append(len(project.records))
        return original(cls, project, options)

    monkeypatch.setattr(UnusedLayer, "check_project", classmethod(counted))
    cold, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 1 and any(f["rule"] == "TL005" for f in cold), "TL005's project pass must report here"
    warm, _ = _run(tree, jobs=2, cache_dir=tree / "c")
    assert warm == cold and len(calls) == 1  # read back, not recomputed
    (tree / "gen" / "m02.py").write_text("y = 2\n")  # any file's change reruns it
    _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 2
    _run(tree, jobs=1, cache_dir=tree / "c", cli={"ignore": ["TL003"]})  # so does a setting
    assert len(calls) == 3
    for entry in (tree / "c").rglob("*.json"):  # a damaged memo is recomputed, never trusted
        if b'"project"' in entry.read_bytes():
            entry.write_bytes(entry.read_bytes().replace(b'"TL005"', b'"TL001"'))
    again, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 4 and again == _run(tree, jobs=1, cache_dir=None)[0]


def test_an_edit_that_changes_no_fact_reads_the_project_pass_back(tree, monkeypatch):
    # The memo is keyed by what the project pass reads of each record (FileRecord.project_digest),
    # not by the files' bytes: a comment at the end changes nothing it reads.
    from torchlint.checks.tl005_unused_layer import UnusedLayer

    calls = []
    original = UnusedLayer.check_project.__func__
    monkeypatch.setattr(UnusedLayer, "check_project",
                        classmethod(lambda cls, project, options: calls.append(1) or original(cls, project, options)))
    cold, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 1 and any(f["rule"] == "TL005" for f in cold), "TL005's project pass must report here"
    model = tree / "fixtures" / "buggy_project" / "model.py"
    assert any(f["rule"] == "TL005" and f["path"] == "fixtures/buggy_project/model.py" for f in cold)
    model.write_text(model.read_text() + "# edited\n")
    edited, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 1 and cache.misses == 1 and edited == cold
    # a line inserted above shifts every position its facts hold: the pass runs again
    model.write_text("# a new first line\n" + model.read_text())
    shifted, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert len(calls) == 2 and shifted == _run(tree, jobs=1, cache_dir=None)[0] != cold
    assert len(calls) == 3  # (the run without a cache)


def test_a_failing_project_pass_is_not_remembered(tree, monkeypatch):
    from torchlint.checks.tl005_unused_layer import UnusedLayer

    def broken(cls, project, options):
        raise RuntimeError("boom")

    original = UnusedLayer.__dict__["check_project"]
    monkeypatch.setattr(UnusedLayer, "check_project", classmethod(broken))
    _run(tree, jobs=1, cache_dir=tree / "c")
    monkeypatch.setattr(UnusedLayer, "check_project", original)
    findings, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert any(f["rule"] == "TL005" for f in findings)


# -- the run pack: a warm run reads one entry --------------------------------------------

def _count_entry_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    real = Cache._load

    def counted(self, path, key):
        reads.append(path)
        return real(self, path, key)

    monkeypatch.setattr(Cache, "_load", counted)
    return reads


def test_a_warm_run_reads_the_run_pack_not_each_entry(tree, monkeypatch):
    expected, _ = _run(tree, jobs=1, cache_dir=None)
    cold, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert cold == expected and cache.pack_path().is_file()
    written = cache.pack_path().stat().st_mtime_ns
    reads = _count_entry_reads(monkeypatch)
    warm, cache = _run(tree, jobs=2, cache_dir=tree / "c")
    assert warm == expected and cache.hits == len(list(tree.rglob("*.py"))) and reads == []
    assert cache.pack_path().stat().st_mtime_ns == written  # nothing changed: not rewritten


def test_after_an_edit_the_unchanged_files_come_from_their_entries_and_the_pack_is_rewritten(tree, monkeypatch):
    _run(tree, jobs=1, cache_dir=tree / "c")
    (tree / "gen" / "m02.py").write_text("import torch\n\nopt = torch.optim.SGD([], lr=0.5)\n")
    expected, _ = _run(tree, jobs=1, cache_dir=None)
    reads = _count_entry_reads(monkeypatch)
    edited, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert edited == expected and cache.misses == 1
    # the edited file's new key is looked up (a miss); the project pass runs again, so every
    # unchanged file's whole record is read back from its entry: each file once
    assert len(reads) == len(set(reads)) == len(list(tree.rglob("*.py")))
    reads.clear()
    again, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert again == expected and cache.misses == 0 and reads == []


def test_a_pack_whose_entries_are_gone_makes_the_run_analyse_again(tree):
    # The pack holds light results only: when the project pass must run and a file's own
    # entry is gone, that file is analysed again, never left with an empty record.
    # (A pack without the memo it needs: as after the torch pin changed, which keys the
    # project pass but no file.)
    expected, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    pack = cache.pack_path()
    for entry in (tree / "c").rglob("*.json"):
        if entry != pack:
            entry.unlink()  # every file's entry and the project pass's memo
    raw = pack.read_bytes()
    data = json.loads(raw[raw.index(b'"entry":') + 8:-1])
    assert data["project"], "the pack holds the memo of the project pass"
    data["project"] = {}
    body = json.dumps(data, separators=(",", ":")).encode()
    pack.write_bytes(b'{"mac":"' + cache._sign(body) + b'","entry":' + body + b"}")
    again, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert again == expected
    assert any(f["rule"] == "TL005" for f in again), "the project pass must report here"
    assert _file_entries(tree / "c")  # and the entries are written back


@pytest.mark.parametrize("damage", ["garbage", "resigned-elsewhere", "another-runs-pack"])
def test_a_damaged_or_foreign_pack_is_a_miss(tree, damage, monkeypatch):
    expected, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    pack = cache.pack_path()
    raw = pack.read_bytes()
    if damage == "garbage":
        pack.write_bytes(raw[: len(raw) // 2])
    elif damage == "resigned-elsewhere":  # a pack signed by another machine's key
        other = Cache(tree / "other", frozenset(), {}, secret=b"k" * 32)
        body = raw[raw.index(b'"entry":') + 8:-1]
        pack.write_bytes(b'{"mac":"' + other._sign(body) + b'","entry":' + body + b"}")
    else:  # signed here, but the pack of another set of paths, copied over this one
        data = json.loads(raw[raw.index(b'"entry":') + 8:-1])
        data["key"] = "0" * 40
        body = json.dumps(data, separators=(",", ":")).encode()
        pack.write_bytes(b'{"mac":"' + cache._sign(body) + b'","entry":' + body + b"}")
    reads = _count_entry_reads(monkeypatch)
    again, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    assert again == expected
    assert len(reads) == len(list(tree.rglob("*.py")))  # each file from its own entry
    _run(tree, jobs=1, cache_dir=tree / "c")
    reads.clear()
    _run(tree, jobs=1, cache_dir=tree / "c")
    assert reads == []  # the pack was rewritten


def test_a_signed_pack_is_still_checked_field_by_field(tree, monkeypatch):
    expected, cache = _run(tree, jobs=1, cache_dir=tree / "c")
    pack = cache.pack_path()
    raw = pack.read_bytes()
    data = json.loads(raw[raw.index(b'"entry":') + 8:-1])
    path = next(p for p, stored in data["files"].items() if stored[1])
    data["files"][path][1][0]["path"] = "somewhere/else.py"  # a finding claiming another file
    other = next(p for p in data["files"] if p != path)
    data["files"][other][2]["cells"] = "not cells"
    body = json.dumps(data, separators=(",", ":")).encode()
    pack.write_bytes(b'{"mac":"' + cache._sign(body) + b'","entry":' + body + b"}")
    reads = _count_entry_reads(monkeypatch)
    again, _ = _run(tree, jobs=1, cache_dir=tree / "c")
    assert again == expected and sorted(reads) == sorted([path, other])


def test_a_demanded_file_edited_without_changing_its_demanded_facts_reads_the_pass_back(tmp_path, monkeypatch):
    # TL011 asks pkg/models.py for its classes' layers (a pending finding evaluates Plain): the
    # memo holds while those facts are what the remembered pass read, whatever the bytes.
    from torchlint.checks.tl011_model_mode import ModelMode

    calls = []
    original = ModelMode.check_project.__func__
    monkeypatch.setattr(ModelMode, "check_project",
                        classmethod(lambda cls, project, options: calls.append(1) or original(cls, project, options)))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    models = pkg / "models.py"
    models.write_text("import torch.nn as nn\n\nclass Plain(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(8, 2)\n")
    (pkg / "evaluate.py").write_text(
        "import torch\nfrom pkg.models import Plain\n\nmodel = Plain()\nmodel.load_state_dict(torch.load('m.pt'))\n"
        "with torch.no_grad():\n    for x, y in test_loader:\n        model(x)\n")
    monkeypatch.chdir(tmp_path)
    cold, _ = _run(tmp_path, jobs=1, cache_dir=tmp_path / "c")
    assert cold == [] and len(calls) == 1  # Plain has neither dropout nor batch norm
    models.write_text(models.read_text() + "# a comment: new bytes, no fact of its record changes\n")
    edited, _ = _run(tmp_path, jobs=1, cache_dir=tmp_path / "c")
    assert edited == [] and len(calls) == 1  # asked again: the same layers, the pass read back
    again, _ = _run(tmp_path, jobs=1, cache_dir=tmp_path / "c")
    assert again == [] and len(calls) == 1
    # Dropout added: the demanded facts change, so the pass runs again and reports.
    models.write_text(models.read_text().replace("nn.Linear(8, 2)", "nn.Sequential(nn.Linear(8, 2), nn.Dropout(0.1))"))
    changed, _ = _run(tmp_path, jobs=1, cache_dir=tmp_path / "c")
    assert len(calls) == 2 and [(f["path"], f["rule"]) for f in changed] == [("pkg/evaluate.py", "TL011")]
    assert changed == _run(tmp_path, jobs=1, cache_dir=None)[0]
