"""tools/new_rule.py scaffolds a rule that imports, is discovered and is in the README, and
refuses what would clash or is malformed. Runs on a copy of the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint import catalog

REPO = Path(__file__).resolve().parents[2]
NEW = {
    "torchlint/checks/tl090_list_held_layer.py",
    "rules/TL090-list-held-layer.md",
    "tests/rules/cases/tl090_list_held_layer.py",
    "fixtures/buggy_project/tl090_list_held_layer.py",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("torchlint", "rules", "tools", "fixtures"):
        shutil.copytree(REPO / name, root / name, ignore=ignore)
    shutil.copy(REPO / "README.md", root / "README.md")
    (root / "tests" / "rules").mkdir(parents=True)
    return root


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    return subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def tree(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def scaffolded(repo) -> Path:
    before = tree(repo)
    done = run(repo, "tools/new_rule.py", "TL090", "list-held-layer", "--severity", "error",
               "--summary", "A layer kept in a plain list is not registered")
    assert done.returncode == 0, done.stderr
    after = tree(repo)
    assert set(after) - set(before) == NEW
    assert {p for p in before if before[p] != after[p]} == {"README.md", "torchlint/registry.py"}
    return repo


def test_the_new_rule_imports_is_discovered_and_runs(scaffolded):
    probe = (
        "from torchlint.rule import rules_by_code\n"
        "from torchlint.testing import lint_snippet\n"
        "r = rules_by_code()['TL090']\n"
        "assert (r.name, r.severity.value, r.default_enabled) == ('list-held-layer', 'error', True)\n"
        "assert r.__module__ == 'torchlint.checks.tl090_list_held_layer'\n"
        "import runpy\n"
        "cases = runpy.run_path('tests/rules/cases/tl090_list_held_layer.py')\n"
        "assert cases['VALID'] == [] and cases['INVALID'] == []  # the case-count test flags it until filled\n"
        "assert not hasattr(r, 'VALID')\n"
        "assert lint_snippet('import torch\\n', select=['TL090']) == []\n"
    )
    done = run(scaffolded, "-c", probe)
    assert done.returncode == 0, done.stderr


def test_the_page_has_the_six_headings_and_the_options_block(scaffolded):
    text = (scaffolded / "rules" / "TL090-list-held-layer.md").read_text()
    assert catalog.title(text) == "TL090 list-held-layer"
    assert list(catalog.sections(text)) == list(catalog.SECTIONS)
    assert catalog.generated_block(text, catalog.OPTIONS_BLOCK) == "This rule has no options.\n"


def test_the_readme_tables_are_regenerated(scaffolded):
    readme = (scaffolded / "README.md").read_text()
    table = readme.split("<!-- rules-table:start -->\n")[1].split("<!-- rules-table:end -->")[0]
    assert "| TL090 | list-held-layer | on | error | - | A layer kept in a plain list is not registered |" in table
    # generate.py now finds nothing to change.
    done = run(scaffolded, "tools/generate.py")
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["TL090", "other-name"], "TL090 is taken"),
        (["TL001", "brand-new"], "TL001 is taken"),
        (["TL091", "missing-zero-grad"], "missing-zero-grad is taken"),
        (["TL09", "brand-new"], "malformed code"),
        (["tl091", "brand-new"], "malformed code"),
        (["TL0918", "brand-new"], "malformed code"),
        (["TL091", "Brand_New"], "malformed name"),
        (["TL091", "brand--new"], "malformed name"),
        (["TL091", "brand-"], "malformed name"),
        (["TL091", "7-up"], "malformed name"),
    ],
)
def test_refusals_write_nothing(scaffolded, args, says):
    before = tree(scaffolded)
    done = run(scaffolded, "tools/new_rule.py", *args)
    assert done.returncode != 0 and says in done.stderr, done.stderr
    assert tree(scaffolded) == before
