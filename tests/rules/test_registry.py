"""The rule registry (``torchlint/registry.py``) is each rule class's metadata written
out, and a run whose every file comes from the cache reads it instead of importing the rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchlint import checks
from torchlint.rule import RuleInfo, all_rules, rule_classes, rule_index

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

from generate import registry_source  # noqa: E402


def test_the_registry_is_the_rule_modules_metadata():
    """The one list of rules every run reads lists exactly the rule modules of
    ``torchlint/checks/`` (found by name), with their classes' metadata."""
    assert rule_index() == tuple(RuleInfo.of(rule) for rule in checks.discover()), (
        "regenerate with: python tools/generate.py")
    assert all_rules() == checks.discover()


def test_the_registry_file_is_what_generate_writes():
    written = (REPO / "torchlint" / "registry.py").read_text(encoding="utf-8")
    assert written == registry_source(checks.discover()), "regenerate with: python tools/generate.py"


@pytest.mark.parametrize("info", rule_index(), ids=lambda info: info.code)
def test_each_entry_loads_its_own_class(info):
    rule = info.load()
    assert (rule.code, rule.name) == (info.code, info.name)
    assert info.has_project_pass() == rule.has_project_pass()
    assert info.default_options() == rule.default_options()


@pytest.mark.parametrize("path", ["tests/test_train.py", "src/train.py", "conftest.py", "pkg/testing/util.py"])
def test_an_entry_skips_the_files_its_class_skips(path):
    for info in rule_index():
        rule = info.load()
        for options in ({}, {"skip-tests": False}):
            assert info.skips(path, options) == rule.skips(path, options), (info.code, path, options)


def test_rule_classes_imports_only_the_enabled_rules():
    probe = ("import sys\nfrom torchlint.rule import rule_classes\n"
             "print([r.code for r in rule_classes({'TL000', 'TL902'})])\n"
             "print(sorted(m for m in sys.modules if m.startswith('torchlint.checks.tl')))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["['TL000', 'TL902']", "['torchlint.checks.tl000_syntax_error', 'torchlint.checks.tl902_invalid_noqa']"]
    assert [r.code for r in rule_classes({"TL005", "TL001"})] == ["TL001", "TL005"]


# A check run: every file cached on the second run, which then imports neither LibCST nor a rule
# module that has logic (TL000, TL901 and TL902's classes are the engine's and noqa's own).
WARM_PROBE = """
import sys
from torchlint.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("libcst.", "torchlint.semantic",
               "torchlint.engine", "torchlint.context", "torchlint.source", "torchlint.pool")))
print("imported:", heavy, file=sys.stderr)
sys.exit(code)
"""


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WARM_PROBE, "check", "--isolated", "--cache-dir",
                           str(tmp_path / "cache"), "--format", "json", *args],
                          cwd=tmp_path, capture_output=True, text=True)


def test_a_warm_run_imports_no_parser_and_no_rule_logic(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x in loader:\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n"
        "args = argparse.ArgumentParser().parse_args()\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    cold = _check(tmp_path, ".")
    assert "'libcst'" in cold.stderr  # the first run analyses both files
    warm = _check(tmp_path, ".")
    assert warm.stderr.strip().endswith("imported: []"), warm.stderr
    assert warm.returncode == cold.returncode == 1
    assert warm.stdout == cold.stdout  # the same findings: TL001, TL004 and TL000
    assert {'"TL000"', '"TL001"', '"TL004"'} <= {word.strip(",") for word in cold.stdout.split() if word.startswith('"TL')}
    # one file changed: it is analysed again, and the run imports what that takes
    (tmp_path / "broken.py").write_text("x = 1\n")
    again = _check(tmp_path, ".")
    assert "'libcst'" in again.stderr and '"TL000"' not in again.stdout
