"""Hostile configuration and baseline values are one-line errors (exit 2), never internal
errors or endless runs (issue 10, items 6 and 9)."""

from __future__ import annotations

import pytest

from torchlint import cli
from torchlint import run as run_layer
from torchlint import trace_settings as trace_config
from torchlint.errors import ConfigError

DEEP = 100_000


def _one_line_error(run, *args: str) -> str:
    code, out, err = run(*args)
    assert code == 2, (code, out, err[-500:])
    assert err.count("\n") == 1 and err.startswith("torchlint: error: "), err[-500:]
    assert "internal error" not in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("key, pattern", [
    ("exclude", "!"), ("exclude", "\\\\"), ("extend-exclude", "[z-a]"), ("extend-exclude", "!"), ("extend-include", "[z-a]"),
])
def test_invalid_exclude_pattern_is_a_config_error(project, run, key, pattern):
    project.write("pyproject.toml", f'[tool.torchlint]\n{key} = ["build", "{pattern}"]\n')
    project.write("a.py", "x = 1\n")
    err = _one_line_error(run, "check", ".")
    assert "pyproject.toml" in err and f"`{key}`" in err and repr(pattern.replace("\\\\", "\\")) in err


@pytest.mark.parametrize("pattern", ["!", "[z-a]"])
def test_invalid_per_file_ignores_pattern_is_a_config_error(project, run, pattern):
    project.write("torchlint.toml", f'[per-file-ignores]\n"{pattern}" = ["TL000"]\n')
    project.write("a.py", "x = 1\n")
    err = _one_line_error(run, "check", ".")
    assert "torchlint.toml" in err and "per-file-ignores" in err and repr(pattern) in err


@pytest.mark.parametrize("value", ["[" * DEEP + "]" * DEEP, "{a = " * DEEP + "1" + "}" * DEEP])
@pytest.mark.parametrize("name", ["pyproject.toml", "torchlint.toml"])
def test_deeply_nested_config_is_a_config_error(project, run, name, value):
    header = "[tool.torchlint]\n" if name == "pyproject.toml" else ""
    project.write(name, f"{header}exclude = {value}\n")
    project.write("a.py", "x = 1\n")
    for args in (("check", "."), ("check", "--config", name, ".")):
        err = _one_line_error(run, *args)
        assert name in err and "nested too deeply" in err


def test_deeply_nested_baseline_is_a_usage_error(project, run):
    project.write("a.py", "x = 1\n")
    project.write("base.json", '{"torchlint-baseline": 1, "findings": ' + "[" * DEEP + "]" * DEEP + "}")
    err = _one_line_error(run, "check", "--baseline", "base.json", ".")
    assert "base.json" in err and "nested too deeply" in err


@pytest.mark.parametrize("line", [
    "timeout = nan", "timeout = inf", "timeout = -inf", "timeout = -1", "timeout = 0", "timeout = 1e300",
    "memory-limit = nan", "memory-limit = inf", "memory-limit = -inf", "memory-limit = -1",
    'memory-limit = "' + "9" * 400 + 'GiB"', "memory-limit = 1e300",
])
def test_trace_values_are_config_errors(project, run, line):
    project.write("pyproject.toml", f"[tool.torchlint.trace]\n{line}\n")
    project.write("a.py", "x = 1\n")
    err = _one_line_error(run, "check", ".")
    assert "pyproject.toml" in err and f"`trace.{line.split()[0]}`" in err


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0, -5, 86400.5, True, "60"])
def test_timeout_bounds(value):
    with pytest.raises(ConfigError):
        trace_config.parse_timeout(value, "x", "timeout")


def test_sane_trace_values_are_kept():
    cfg = trace_config.load({"timeout": 86400, "memory-limit": "1.5GiB"})
    assert cfg.timeout == 86400.0 and cfg.memory_limit == 3 << 29
    assert trace_config.parse_memory(0, "x", "m") is None and trace_config.parse_memory("none", "x", "m") is None


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "1e9"])
def test_trace_command_timeout_is_validated(project, run, value):
    project.write("m.py", "class Net:\n    pass\n")
    err = _one_line_error(run, "trace", "--isolated", "m.py:Net", f"--timeout={value}")
    assert "--timeout must be a positive number of seconds" in err


def test_huge_jobs_is_capped_at_the_files_and_a_maximum(project, run, monkeypatch):
    for i in range(3):
        project.write(f"m{i}.py", "x = 1\n")
    seen = []
    real = run_layer.lint_files

    def spy(files, settings, cwd=None, *, jobs=1, **kwargs):
        seen.append(jobs)
        return real(files, settings, cwd, jobs=jobs, **kwargs)

    monkeypatch.setattr(run_layer, "lint_files", spy)
    code, _, err = run("check", "-v", "--no-cache", "-j", "99999999999", ".")
    assert code == 0 and seen == [3]
    assert "-j 99999999999 capped to 3" in err
    assert cli.effective_jobs(99999999999, 10**6) == cli.MAX_JOBS
    assert cli.effective_jobs(None, 0) == 1


def test_jobs_that_is_not_a_number_is_a_usage_error(project, run):
    assert run("check", "-j", "9" * 5000, ".")[0] == 2
