"""The pre-commit hook, run for real: ``pre-commit try-repo <this repo> torchlint --all-files``
and ``pre-commit run`` with the README's configuration, in a temporary git repository.

Slow: pre-commit builds the hook's virtual environment from PyPI (try-repo twice, in
temporary stores; ``pre-commit run`` once, in the module's PRE_COMMIT_HOME). Deselect with
``-m "not slow"``; ``python -m pytest`` (and so ``.ci/run``) runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from integrations_support import REPO_ROOT, RULES, example_blocks, fix_blocks, readme_blocks, torchlint_argv

from torchlint.cli import main

pytestmark = pytest.mark.slow

TIMEOUT = 900


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update({
        "PRE_COMMIT_HOME": str(home),
        "PRE_COMMIT_COLOR": "never",
        "GIT_AUTHOR_NAME": "torchlint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "torchlint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
    })
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _commit_all(cwd: Path, env: dict[str, str], message: str) -> str:
    _git(cwd, env, "add", "-A")
    _git(cwd, env, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", message)
    return _git(cwd, env, "rev-parse", "HEAD").strip()


_IGNORED_NAMES = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist",
                  ".torchlint_cache"}


def _working_tree_files(env: dict[str, str]) -> list[str] | None:
    """The repository's files as git sees them (tracked and untracked, not ignored), or None
    when it is not a git checkout."""
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0 or Path(done.stdout.strip()).resolve() != REPO_ROOT:
        return None
    listed = _git(REPO_ROOT, env, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return [name for name in listed.split("\0") if name]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str, dict[str, str]]:
    """(repository, revision, environment) for pre-commit: this repository at HEAD when its
    working tree is clean (CI's fresh clone), otherwise a committed snapshot of the working
    tree, so the hook under test is the code under test. One PRE_COMMIT_HOME per session run:
    the hook environment is built once."""
    base = tmp_path_factory.mktemp("precommit")
    env = _env(base / "pre-commit-home")
    files = _working_tree_files(env)
    if files is not None and not _git(REPO_ROOT, env, "status", "--porcelain").strip():
        return REPO_ROOT, _git(REPO_ROOT, env, "rev-parse", "HEAD").strip(), env
    snapshot = base / "torchlint-snapshot"
    snapshot.mkdir()
    if files is None:
        files = [p.relative_to(REPO_ROOT).as_posix() for p in REPO_ROOT.rglob("*")
                 if p.is_file() and not _IGNORED_NAMES & set(p.relative_to(REPO_ROOT).parts)
                 and not p.name.endswith((".pyc", ".egg-info"))]
    for name in files:
        source = REPO_ROOT / name
        if source.is_file():  # tracked files deleted in the working tree are left out
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _git(snapshot, env, "init", "-q")
    return snapshot, _commit_all(snapshot, env, "snapshot of the torchlint working tree"), env


def _pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)


def _hook_rules():
    """The rules whose catalog Example the buggy files hold: every rule on by default (the
    hook runs with the default selection) but TL000 when there are any, else TL000 (a
    syntax error)."""
    return [r for r in RULES if r.code != "TL000" and r.default_enabled] or [r for r in RULES if r.code == "TL000"]


def _write_files(project: Path, fixed: bool) -> dict[str, str]:
    """One file per rule: its catalog Example (or, fixed, its Use instead), silencing the
    other rules in that file so that each file tests one rule."""
    codes = [r.code for r in RULES]
    written = {}
    for rule in _hook_rules():
        others = [c for c in codes if c not in (rule.code, "TL000")]
        header = f"# torchlint: noqa: {','.join(others)}\n" if others else ""
        blocks = fix_blocks(rule) if fixed else example_blocks(rule)
        directory = project / rule.code.lower()
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir()
        for n, block in enumerate(blocks):
            rel = f"{rule.code.lower()}/train{'' if n == 0 else n}.py"
            (project / rel).write_text(header + block, encoding="utf-8")
            written[rel] = rule.code
    return written


def _new_project(base: Path, env: dict[str, str]) -> Path:
    project = base
    project.mkdir()
    _git(project, env, "init", "-q")
    (project / "README.md").write_text("a project using torchlint\n")
    return project


def _hook_env_python(home: Path) -> Path:
    pythons = sorted(home.glob("repo*/py_env-*/bin/python")) + sorted(home.glob("repo*/py_env-*/Scripts/python.exe"))
    assert pythons, f"no hook environment under {home}: {sorted(p.name for p in home.iterdir())}"
    return pythons[0]


def test_try_repo_fails_on_buggy_code_and_passes_once_fixed(hook_repo, tmp_path):
    repo, rev, env = hook_repo
    project = _new_project(tmp_path / "user-project", env)
    buggy = _write_files(project, fixed=False)
    _commit_all(project, env, "buggy training code")

    failed = _pre_commit(project, env, "try-repo", str(repo), "torchlint", "--ref", rev, "--all-files",
                         "--color", "never")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "torchlint" in output and "Failed" in output
    for rel, code in buggy.items():
        assert f"{rel}:" in output and code in output, (rel, code, output)
    assert "Traceback" not in output

    _write_files(project, fixed=True)
    _commit_all(project, env, "fixed")
    passed = _pre_commit(project, env, "try-repo", str(repo), "torchlint", "--ref", rev, "--all-files",
                         "--color", "never")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def _readme_config(repo: Path, rev: str) -> dict:
    [config] = [d for d in map(yaml.safe_load, readme_blocks("yaml")) if isinstance(d, dict) and "repos" in d]
    [entry] = config["repos"]
    entry["repo"], entry["rev"] = str(repo), rev  # the README's snippet, pointing at the code under test
    return config


def test_readme_config_and_baseline(hook_repo, tmp_path, monkeypatch, capsys):
    """The README's .pre-commit-config.yaml fails on buggy code; the README's baseline
    commands and hook ``args`` then let it pass, until a new finding appears."""
    repo, rev, env = hook_repo
    project = _new_project(tmp_path / "big-repo", env)
    buggy = _write_files(project, fixed=False)
    config = _readme_config(repo, rev)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    _commit_all(project, env, "existing code with findings")

    failed = _pre_commit(project, env, "run", "--all-files", "--color", "never")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    for rel in buggy:
        assert f"{rel}:" in failed.stdout

    # the hook's environment (in PRE_COMMIT_HOME; try-repo's is temporary) has torchlint, not torch
    python = _hook_env_python(Path(env["PRE_COMMIT_HOME"]))
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('torch') is None, "
                            "u.find_spec('torchlint') is not None, u.find_spec('libcst') is not None)"],
        capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == ["True", "True", "True"], probe.stdout + probe.stderr
    assert not list(python.parent.parent.glob("lib/python*/site-packages/torch"))

    # adopt with a baseline, as the README says
    [write_command] = [line for block in readme_blocks("sh") for line in block.splitlines()
                       if line.startswith("torchlint ") and "--write-baseline" in line]
    monkeypatch.chdir(project)
    assert main(torchlint_argv(write_command)) == 0
    capsys.readouterr()
    [hook_snippet] = [d for d in map(yaml.safe_load, readme_blocks("yaml"))
                      if isinstance(d, list) and isinstance(d[0], dict) and d[0].get("id") == "torchlint"
                      and "--baseline" in d[0].get("args", ())]
    config["repos"][0]["hooks"] = hook_snippet
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    _commit_all(project, env, "torchlint baseline")

    passed = _pre_commit(project, env, "run", "--all-files", "--color", "never")
    assert passed.returncode == 0, passed.stdout + passed.stderr

    # a new buggy file is reported, the baselined ones are not
    rel, code = next(iter(buggy.items()))
    new_file = project / "new_module" / "train.py"
    new_file.parent.mkdir()
    new_file.write_text((project / rel).read_text(encoding="utf-8"), encoding="utf-8")
    _commit_all(project, env, "new code")
    failed_again = _pre_commit(project, env, "run", "--all-files", "--color", "never")
    assert failed_again.returncode == 1, failed_again.stdout + failed_again.stderr
    assert "new_module/train.py:" in failed_again.stdout and code in failed_again.stdout
    assert f"{rel}:" not in failed_again.stdout


def test_readme_fix_variant_fixes_and_then_passes(hook_repo, tmp_path):
    """The README's ``args: [--fix]`` hook: the first run fixes the file (pre-commit fails a
    hook that changed files), the second passes."""
    repo, rev, env = hook_repo
    project = _new_project(tmp_path / "fixing", env)
    config = _readme_config(repo, rev)
    [hook] = [d for d in map(yaml.safe_load, readme_blocks("yaml"))
              if isinstance(d, list) and isinstance(d[0], dict) and "--fix" in d[0].get("args", ())]
    config["repos"][0]["hooks"] = hook
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    model = project / "model.py"
    buggy = ("import torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n"
             "    def forward(self, x):\n        return F.dropout(x, 0.5)\n")
    model.write_text(buggy)
    _commit_all(project, env, "a module whose dropout ignores eval()")
    failed = _pre_commit(project, env, "run", "--all-files", "--color", "never")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert model.read_text() == buggy.replace("0.5)", "0.5, training=self.training)")
    assert "files were modified by this hook" in failed.stdout
    passed = _pre_commit(project, env, "run", "--all-files", "--color", "never")
    assert passed.returncode == 0, passed.stdout + passed.stderr
