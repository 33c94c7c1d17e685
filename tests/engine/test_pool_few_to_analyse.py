"""A run of many files starts a process pool only when enough of them are left to analyse: a
file edited since the last run is analysed in the run's own process, not in a pool started for
it alone (the cache answered for the rest)."""

from __future__ import annotations

import json

import pytest

from torchlint import pool
from torchlint.cli import main
from torchlint.checks import discover

ENABLED = frozenset(r.code for r in discover())
TRAIN = (b"import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in data:\n    opt.step()\n"
         b"args = argparse.ArgumentParser().parse_args()\n")


def _items(n: int) -> list[pool.Item]:
    return [(i, f"m{i}.py", TRAIN, ENABLED, {}) for i in range(n)]


@pytest.fixture
def pools(monkeypatch):
    started: list[int] = []
    real = pool._pool

    def counting(workers: int):
        started.append(workers)
        return real(workers)

    monkeypatch.setattr(pool, "_pool", counting)
    return started


@pytest.mark.parametrize("left", [1, pool.MIN_FILES_FOR_POOL - 1])
def test_few_files_left_to_analyse_start_no_pool(pools, left):
    results: dict[int, object] = {}
    pool.analyze_all(iter(_items(left)), 2, results.__setitem__)
    assert pools == [] and sorted(results) == list(range(left))
    assert all(r.findings for r in results.values())  # analysed, here


def test_enough_files_left_to_analyse_start_the_pool(pools):
    results: dict[int, object] = {}
    count = pool.MIN_FILES_FOR_POOL
    pool.analyze_all(iter(_items(count)), 2, results.__setitem__)
    assert pools == [2] and sorted(results) == list(range(count))
    assert all(r.findings for r in results.values())


def test_a_run_of_many_files_with_one_edited_analyses_it_without_a_pool(tmp_path, pools, capsys, monkeypatch):
    """Through the command line: the cold run of 30 files starts the pool; after one file is
    edited the cache answers for the other 29, and the edited one is analysed here."""
    monkeypatch.chdir(tmp_path)
    for i in range(pool.MIN_FILES_FOR_POOL + 6):
        (tmp_path / f"m{i:02}.py").write_bytes(TRAIN)
    args = ["check", "--isolated", "--select", "TL004", "--format", "json", "-j", "2", "--cache-dir", ".c", "."]
    assert main(args) == 1 and pools == [2]
    capsys.readouterr()
    (tmp_path / "m07.py").write_bytes(TRAIN + b"# edited\n")
    assert main(args) == 1 and pools == [2]  # no second pool
    found = json.loads(capsys.readouterr().out)
    assert len(found) == pool.MIN_FILES_FOR_POOL + 6 and "m07.py" in {f["path"] for f in found}
