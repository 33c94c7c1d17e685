"""ruff's spellings of the command line, where they mean what torchlint's do: ``--output-format``,
``-e``, ``-n``, ``--extend-ignore``, ``--exclude``/``--extend-exclude``, ``--per-file-ignores``,
``--show-fixes``, ``--exit-non-zero-on-fix``, ``--watch``, the ``clean`` and ``version``
subcommands, and "did you mean" for what is mistyped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from torchlint import __version__
from torchlint.config import rebase_pattern

BAD = "def train(:\n    pass\n"
GOOD = "import torch\n\nx = torch.zeros(3)\n"
# TL004 (a warning) on line 4
# (TL004 on line 4: the script reads its settings from the command line)
WARNS = ("import torch\n\nmodel = torch.nn.Linear(2, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
         "import argparse\nargs = argparse.ArgumentParser().parse_args()\n")
# TL002 with a safe fix, TL001 with an unsafe one
FIXABLE = """\
import torch


def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""
REPO = Path(__file__).resolve().parents[2]


def _paths(out: str) -> list[str]:
    return sorted({json.loads(line)["path"] for line in out.splitlines()})


# -- aliases -------------------------------------------------------------------------------

def test_output_format_is_format(project, run):
    project.write("bad.py", BAD)
    assert run("check", "--output-format", "json", ".")[1] == run("check", "--format", "json", ".")[1]
    code, out, _ = run("check", "--output-format", "concise", ".")
    assert code == 1 and out.startswith("bad.py:1:11: TL000")


def test_short_exit_zero_and_no_cache(project, run):
    project.write("bad.py", BAD)
    assert run("check", "-n", ".")[0] == 1
    assert not (project.root / ".torchlint_cache").exists()
    assert run("check", "-n", "-e", ".")[0] == 0
    assert run("check", ".")[0] == 1
    assert (project.root / ".torchlint_cache").is_dir()


def test_extend_ignore_adds_to_ignore(project, run):
    project.write("bad.py", BAD)
    project.write("warn.py", WARNS)
    code, out, _ = run("check", "--format", "json-lines", "--extend-ignore", "TL000", ".")
    assert code == 1 and _paths(out) == ["warn.py"]
    code, out, _ = run("check", "--ignore", "TL004", "--extend-ignore", "syntax-error", ".")
    assert code == 0, out
    project.write("pyproject.toml", "[tool.torchlint]\nextend-ignore = ['TL004']\n")
    assert _paths(run("check", "--format", "json-lines", ".")[1]) == ["bad.py"]


# -- exclusions and per-file-ignores from the command line ----------------------------------

def test_exclude_and_extend_exclude(project, run):
    for rel in ("a.py", "legacy/b.py", "gen/c.py", "build/d.py"):
        project.write(rel, BAD)
    everything_but_build = ["a.py", "gen/c.py", "legacy/b.py"]
    assert _paths(run("check", "--format", "json-lines", ".")[1]) == everything_but_build
    code, out, _ = run("check", "--format", "json-lines", "--extend-exclude", "legacy/,gen", ".")
    assert _paths(out) == ["a.py"]
    # --exclude replaces the defaults (build/ is linted again), --extend-exclude adds to it
    code, out, _ = run("check", "--format", "json-lines", "--exclude", "legacy/", ".")
    assert _paths(out) == ["a.py", "build/d.py", "gen/c.py"]
    code, out, _ = run("check", "--format", "json-lines", "--exclude", "legacy/", "--extend-exclude", "*.py", ".")
    assert code == 0 and out == ""


def test_exclude_adds_to_the_configuration(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nextend-exclude = ['legacy/']\n")
    for rel in ("a.py", "legacy/b.py", "gen/c.py"):
        project.write(rel, BAD)
    assert _paths(run("check", "--format", "json-lines", "--extend-exclude", "gen/", ".")[1]) == ["a.py"]
    # --exclude replaces the configuration's exclude, not its extend-exclude
    assert _paths(run("check", "--format", "json-lines", "--exclude", "gen/", ".")[1]) == ["a.py"]


def test_command_line_patterns_are_relative_to_the_working_directory(project, run, monkeypatch):
    project.write("pyproject.toml", "[tool.torchlint]\n")
    for rel in ("pkg/gen/a.py", "pkg/b.py", "gen/c.py", "other/pkg/gen/d.py"):
        project.write(rel, BAD)
    monkeypatch.chdir(project.root / "pkg")

    def linted(out: str) -> list[str]:  # paths outside the working directory are shown absolute
        return sorted(Path(os.path.realpath(p)).relative_to(project.root.resolve()).as_posix() for p in _paths(out))

    # anchored: pkg/gen only; the configuration (the project root) is one directory up
    code, out, _ = run("check", "--format", "json-lines", "--exclude", "/gen", "..")
    assert linted(out) == ["gen/c.py", "other/pkg/gen/d.py", "pkg/b.py"]
    # a name matches at any depth below the working directory only
    code, out, _ = run("check", "--format", "json-lines", "--per-file-ignores", "gen/:TL000", "..")
    assert linted(out) == ["gen/c.py", "other/pkg/gen/d.py", "pkg/b.py"]


def test_rebase_pattern():
    root, base = Path("/r"), Path("/r/sub")
    assert rebase_pattern("x/", root, root) == "x/"
    assert rebase_pattern("gen", base, root) == "/sub/**/gen"
    assert rebase_pattern("/gen/", base, root) == "/sub/gen/"
    assert rebase_pattern("a/b.py", base, root) == "/sub/a/b.py"
    assert rebase_pattern("!keep.py", base, root) == "!/sub/**/keep.py"
    # the root inside the working directory
    assert rebase_pattern("sub/gen", Path("/r"), Path("/r/sub")) == "/gen"
    assert rebase_pattern("*/gen", Path("/r"), Path("/r/sub")) == "/gen"
    assert rebase_pattern("other/gen", Path("/r"), Path("/r/sub")) is None
    assert rebase_pattern("**/gen", Path("/r"), Path("/r/sub")) == "/**/gen"
    assert rebase_pattern("gen", Path("/r"), Path("/r/sub")) == "gen"
    assert rebase_pattern("/sub", Path("/r"), Path("/r/sub")) == "/**"
    # apart: only an unanchored name can match
    assert rebase_pattern("gen", Path("/a"), Path("/b")) == "gen"
    assert rebase_pattern("x/gen", Path("/a"), Path("/b")) is None


def test_per_file_ignores_on_the_command_line(project, run):
    project.write("pyproject.toml", "[tool.torchlint.per-file-ignores]\n'legacy/*' = ['TL000']\n")
    for rel in ("a.py", "legacy/b.py", "tests/c.py", "tests/d.py"):
        project.write(rel, BAD)
    project.write("scripts/w.py", WARNS)
    assert _paths(run("check", "--format", "json-lines", ".")[1]) == ["a.py", "scripts/w.py", "tests/c.py", "tests/d.py"]
    # repeatable; replaces the configuration's table (legacy/ is reported again), as in ruff
    code, out, _ = run("check", "--format", "json-lines", "--per-file-ignores", "tests/c.py:TL000",
                       "--per-file-ignores", "scripts/w.py:TL004,TL006", ".")
    assert _paths(out) == ["a.py", "legacy/b.py", "tests/d.py"]
    # --extend-per-file-ignores adds to it; rule names count as codes
    code, out, _ = run("check", "--format", "json-lines", "--extend-per-file-ignores", "tests/**:syntax-error", ".")
    assert _paths(out) == ["a.py", "scripts/w.py"]


@pytest.mark.parametrize("value, error", [
    ("tests/*", "expected PATTERN:CODES"),
    (":TL001", "expected PATTERN:CODES"),
    ("tests/*:", "expected PATTERN:CODES"),
    ("tests/*:TL999", "unknown rule code or prefix 'TL999'"),
    ("[z-a]:TL001", "invalid pattern '[z-a]'"),
])
def test_bad_per_file_ignores_are_usage_errors(project, run, value, error):
    project.write("a.py", GOOD)
    code, _, err = run("check", "--per-file-ignores", value, ".")
    assert code == 2 and error in err and "Traceback" not in err


# -- fixing ------------------------------------------------------------------------------

def test_show_fixes_lists_what_was_fixed(project, run):
    path = project.write("train.py", FIXABLE)
    code, out, err = run("check", "--fix", "--show-fixes", "--select", "TL001,TL002", ".")
    assert "Fixed 1 finding:\n    1 \u00d7 TL002 (loss-kept-with-graph)\n  in 1 file: train.py" in err
    assert "loss.detach()" in path.read_text() or "loss.item()" in path.read_text()
    assert code == 1  # TL001 is left: its fix is unsafe
    path.write_text(FIXABLE)
    code, out, err = run("check", "--diff", "--unsafe-fixes", "--show-fixes", "--select", "TL001,TL002", ".")
    assert code == 1 and path.read_text() == FIXABLE
    assert "Would fix 2 findings:" in err and "1 \u00d7 TL001 (missing-zero-grad)" in err
    code, out, err = run("check", "--fix", "--show-fixes", "--select", "TL004", ".")
    assert "Fixed 0 findings." in err


def test_exit_non_zero_on_fix(project, run):
    path = project.write("train.py", FIXABLE)
    # every finding fixed: 0 without the flag...
    assert run("check", "--fix", "--select", "TL002", ".")[0] == 0
    path.write_text(FIXABLE)
    # ... 1 with it, as a fix was applied
    assert run("check", "--fix", "--exit-non-zero-on-fix", "--select", "TL002", ".")[0] == 1
    assert run("check", "--fix", "--exit-non-zero-on-fix", "--select", "TL002", ".")[0] == 0  # nothing left to fix
    path.write_text(FIXABLE)
    assert run("check", "--fix-only", "--exit-non-zero-on-fix", "--select", "TL002", ".")[0] == 1
    path.write_text(FIXABLE)
    assert run("check", "--fix-only", "--select", "TL002", ".")[0] == 0
    path.write_text(FIXABLE)
    assert run("check", "--fix", "--exit-non-zero-on-fix", "-e", "--select", "TL002", ".")[0] == 0  # -e wins


# -- watch ---------------------------------------------------------------------------------

def test_watch_loop_runs_again_only_on_change():
    from torchlint.watch import watch

    states = iter([1, 1, 1, 2, 2, 3, 3])
    runs, sleeps = [], []
    code = watch(lambda: runs.append(len(sleeps)) or 0, lambda: next(states), sleep=sleeps.append, rounds=6,
                 stream=open(os.devnull, "w"))
    assert code == 0
    assert sleeps == [0.5] * 6
    assert runs == [0, 3, 5]  # first, then after the looks that saw state 2 and state 3


def test_watch_ends_on_ctrl_c_with_exit_0():
    from torchlint.watch import watch

    def sleep(_):
        raise KeyboardInterrupt

    assert watch(lambda: 1, lambda: 0, sleep=sleep, stream=open(os.devnull, "w")) == 0


def test_watch_in_process_lints_again_after_an_edit(project, run, monkeypatch):
    import torchlint.watch

    path = project.write("train.py", GOOD)
    real = torchlint.watch.watch
    edits = iter([lambda: None, lambda: path.write_text(BAD), lambda: None])

    def bounded(run_once, state, **_):
        return real(run_once, state, sleep=lambda _: next(edits)(), rounds=3)

    monkeypatch.setattr(torchlint.watch, "watch", bounded)
    code, out, err = run("check", "--watch", "--output-format", "concise", "-n", ".")
    assert code == 0
    assert out.count("All checks passed!") == 1
    assert out.count("train.py:1:11: TL000") == 1  # linted again after the edit, once
    assert "watching for file changes" in err and "file changes detected, linting again" in err


@pytest.mark.parametrize("flag", ["--show-files", "--add-noqa", "--write-baseline=b.json"])
def test_watch_refuses_one_shot_flags(project, run, flag):
    project.write("a.py", GOOD)
    code, _, err = run("check", "--watch", flag, ".")
    assert code == 2 and "--watch cannot be used with" in err


def test_watch_subprocess_until_ctrl_c(tmp_path):
    """The real loop, polling every 0.5 s: the first report, an edit, the second report,
    then SIGINT ends it with exit 0. Bounded by a deadline."""
    (tmp_path / "train.py").write_text(GOOD)
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    # Ctrl-C reaches the process as on a terminal, even where this test runs with SIGINT ignored
    # (a shell's background job: the ignored disposition is inherited, and Python then never
    # installs its KeyboardInterrupt handler)
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "check", "--watch", "-n", "--output-format", "concise",
                             "."], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(text: str, count: int) -> None:
        deadline = time.monotonic() + 60
        while sum(text in line for line in lines) < count:
            assert time.monotonic() < deadline and proc.poll() is None, (lines, proc.poll())
            time.sleep(0.05)

    try:
        wait_for("All checks passed!", 1)
        time.sleep(0.6)  # a modification time the first look did not see
        (tmp_path / "train.py").write_text(BAD)
        wait_for("TL000", 1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        err = proc.stderr.read()
        assert "stopped watching" in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- clean and version -----------------------------------------------------------------------

def test_version_subcommand(project, run):
    assert run("version") == (0, f"torchlint {__version__}\n", "")
    assert json.loads(run("version", "--output-format", "json")[1]) == {"version": __version__}


def test_clean_and_version_are_not_paths_any_more(project, run):
    """Before, `torchlint clean` linted a path named clean: TL000/E902 "no such file"."""
    for command in ("clean", "version"):
        code, out, err = run(command)
        assert code == 0 and "no such file" not in out + err and "E902" not in out


def test_clean_removes_every_cache_under_the_working_directory(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\n")
    project.write("a.py", BAD)
    project.write("sub/b.py", BAD)
    run("check", ".")
    (project.root / "sub" / ".torchlint_cache").mkdir()  # an older run's, from sub/
    (project.root / "sub" / ".torchlint_cache" / "x").write_text("x")
    keep = project.write("notes/.torchlint_cache_notes.txt", "mine")
    code, out, err = run("clean")
    assert code == 0, err
    assert sorted(out.splitlines()) == ["Removed .torchlint_cache", "Removed sub/.torchlint_cache"]
    assert not (project.root / ".torchlint_cache").exists() and not (project.root / "sub" / ".torchlint_cache").exists()
    assert keep.exists() and (project.root / "a.py").exists()
    assert run("clean")[1] == "No cache to remove.\n"


def test_clean_from_a_subdirectory_removes_the_projects_cache(project, run, monkeypatch):
    project.write("pyproject.toml", "[tool.torchlint]\ncache-dir = 'var/lint-cache'\n")
    project.write("sub/b.py", BAD)
    run("check", ".")
    cache = project.root / "var" / "lint-cache"
    assert (cache / "CACHEDIR.TAG").is_file()
    monkeypatch.chdir(project.root / "sub")
    code, out, _ = run("clean")
    assert code == 0 and out == f"Removed {cache}\n"
    assert not cache.exists() and (project.root / "var").is_dir()


def test_clean_leaves_a_configured_directory_that_is_no_cache(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\ncache-dir = 'data'\n")
    data = project.write("data/train.csv", "1,2\n")
    assert run("clean") == (0, "No cache to remove.\n", "")
    assert data.exists()


def test_clean_does_not_follow_links(project, run, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "precious.txt").write_text("x")
    os.symlink(outside, project.root / ".torchlint_cache")
    assert run("clean") == (0, "No cache to remove.\n", "")
    assert (outside / "precious.txt").exists()


# -- did you mean ----------------------------------------------------------------------------

def test_a_misspelt_configuration_key_names_the_closest(project, run):
    project.write("a.py", GOOD)
    project.write("pyproject.toml", "[tool.torchlint]\nextend-exlude = ['x']\n")
    code, _, err = run("check", ".")
    assert code == 2 and "`extend-exlude`: unknown key, did you mean `extend-exclude`?" in err
    project.write("pyproject.toml", "[tool.torchlint]\nper_file_ignores = {}\n")
    assert "did you mean `per-file-ignores`?" in run("check", ".")[2]
    project.write("pyproject.toml", "[tool.torchlint.hard-coded-hyperparameter]\nignore-name = ['lr']\n")
    assert "unknown option for TL004, did you mean `ignore-names`?" in run("check", ".")[2]
    project.write("pyproject.toml", "[tool.torchlint]\nzzzzzz = 1\n")
    err = run("check", ".")[2]
    assert "`zzzzzz`: unknown key (accepted:" in err and "did you mean" not in err


def test_mistyped_subcommands_options_and_rules_are_named(project, run):
    assert "unknown command 'verison', did you mean 'version'?" in run("verison")[2]
    assert "unknown command 'claen', did you mean 'clean'?" in run("claen")[2]
    code, _, err = run("check", "--exit-zeroo", ".")
    assert code == 2 and "unrecognized arguments: --exit-zeroo (did you mean --exit-zero?)" in err
    code, _, err = run("rule", "missing-zero-gard")
    assert code == 2 and "unknown rule 'missing-zero-gard', did you mean 'missing-zero-grad'?" in err
    code, _, err = run("check", "--output-format", "jsno", ".")
    assert code == 2 and "unknown format" in err and "did you mean 'json'?" in err
