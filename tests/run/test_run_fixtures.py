"""``torchlint run`` on the training-script pairs of ``fixtures/run`` (issue 44).

Each ``buggy.py`` marks the lines where the dry run must report a bug (``# run: TL0xx``); its
``fixed.py`` changes only the bugs and must get nothing.  All scripts run as jobs of one
trace child (one torch import), each in a temporary directory of its own.
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
from pathlib import Path

import pytest

from torchlint.testing import lint_tree
from torchlint.trace.dryrun import CONFIRMS, findings_of, merge
from torchlint.trace.records import TraceResult
from torchlint.trace.runner import run_jobs

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "run"
def _runnable(pair: Path) -> bool:
    """A pair written for a library (lightning) runs where it is installed."""
    text = (pair / "buggy.py").read_text(encoding="utf-8")
    return "import lightning" not in text or importlib.util.find_spec("lightning") is not None


PAIRS = sorted(d.name for d in FIXTURES.iterdir() if (d / "buggy.py").is_file() and _runnable(d))
MARK = re.compile(r"#\s*run:\s*((?:TL\d{3}\s*)+)")
# What the issue asks the dry run to observe, each in at least one pair.
OBSERVED = {"TL001", "TL002", "TL003", "TL005", "TL011", "TL012", "TL013", "TL014", "TL017", "TL021",
            "TL100", "TL101", "TL102", "TL103", "TL104"}


def marks(path: Path) -> set[tuple[str, int]]:
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = MARK.search(line)
        if m:
            found.update((code, number) for code in m.group(1).split())
    return found


@pytest.fixture(scope="module")
def results() -> dict[str, TraceResult]:
    jobs = []
    for name in PAIRS:
        for kind in ("buggy", "fixed"):
            jobs.append({"id": f"{name}/{kind}", "kind": "script", "script": str(FIXTURES / name / f"{kind}.py"),
                         "workdir": tempfile.mkdtemp(prefix="torchlint-run-test-"), "device": "fake-cuda"})
    raw = run_jobs(jobs, cwd=FIXTURES, timeout=120)
    return {key: TraceResult.from_json(value) for key, value in raw.items()}


def test_at_least_ten_pairs_cover_every_observation():
    assert len(PAIRS) >= 10
    assert all((FIXTURES / name / "fixed.py").is_file() for name in PAIRS)
    covered = {code for name in PAIRS for code, _ in marks(FIXTURES / name / "buggy.py")}
    assert OBSERVED <= covered, f"no pair plants {sorted(OBSERVED - covered)}"


@pytest.mark.parametrize("name", PAIRS)
def test_buggy_script_gets_exactly_its_planted_bugs(results, name):
    result = results[f"{name}/buggy"]
    assert result.status == "ok", (result.message, result.failure, result.output)
    path = f"{name}/buggy.py"
    found = {(f.rule, f.line) for f in findings_of(result, FIXTURES) if f.path == path}
    assert found == marks(FIXTURES / path)
    assert all(f.path == path for f in findings_of(result, FIXTURES))


@pytest.mark.parametrize("name", PAIRS)
def test_fixed_script_gets_nothing(results, name):
    result = results[f"{name}/fixed"]
    assert result.status == "ok", (result.message, result.failure, result.output)
    assert findings_of(result, FIXTURES) == []
    assert result.run["ended"] in ("finished", "bound (passes)", "bound (steps)")
    assert result.run["steps"] >= 1


def confirmed_static(results, name):
    path = f"{name}/buggy.py"
    static = lint_tree({path: (FIXTURES / path).read_text(encoding="utf-8")}, dedent=False, each_alone=False)
    observed = findings_of(results[f"{name}/buggy"], FIXTURES)
    return static, observed, merge(static, observed, FIXTURES)


@pytest.mark.parametrize("name", PAIRS)
def test_static_findings_of_the_same_bug_are_confirmed(results, name):
    """A static finding of a bug the run saw in the same loop is marked confirmed (and the
    run's finding is not repeated beside it); the run's other findings are added."""
    static, observed, merged = confirmed_static(results, name)
    confirmed = [f for f in merged if f.confirmed]
    assert all(f.extra["run"] in {o.message for o in observed} for f in confirmed)
    confirming = {f.extra["run"] for f in confirmed}
    assert len(merged) == len(static) + len([o for o in observed if o.message not in confirming])
    planted = marks(FIXTURES / f"{name}/buggy.py")
    for f in static:
        if any(f.rule in CONFIRMS.get(code, (code,)) and f.line == line for code, line in planted):
            assert any(m.confirmed and (m.rule, m.line) == (f.rule, f.line) for m in merged), f


def test_most_planted_bugs_with_a_static_finding_are_confirmed(results):
    confirmed = sum(1 for name in PAIRS for f in confirmed_static(results, name)[2] if f.confirmed)
    assert confirmed >= 10
