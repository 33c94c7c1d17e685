"""``--show-settings FILE`` prints TOML for a ``[tool.torchlint]`` table: it parses, it holds
every setting, and written back as the file's configuration it gives the same settings."""

from __future__ import annotations

import sys

import pytest

from torchlint.config import TOP_LEVEL_KEYS
from torchlint.rule import all_rules
from torchlint.settings_toml import toml_string, toml_value

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = """\
[tool.torchlint]
select = ["TL0"]
ignore = ["TL003"]
extend-exclude = ["legacy/"]
max-file-size = "2MB"
target-version = "py311"
fixable = ["TL00"]
unfixable = ["TL008"]
cache-dir = "var/cache"

[tool.torchlint.per-file-ignores]
"research/*.py" = ["TL004"]
"scripts/*" = ["TL006"]

[tool.torchlint.trace]
timeout = 30

[tool.torchlint.trace.models."models/net.py:Net"]
kwargs = { hidden = 64, "odd key" = "a \\"quoted\\" value" }
input-shape = [4, 8]
"""
SUB = """\
[tool.torchlint]
extend = "../pyproject.toml"
extend-ignore = ["TL006"]
unsafe-fixes = true

[tool.torchlint.extend-per-file-ignores]
"notebook_*.py" = ["TL005"]

[tool.torchlint.hard-coded-hyperparameter]
ignore-names = ["lr", "momentum"]
"""


def _show(run, path: str, *args: str) -> str:
    code, out, err = run("check", *args, "--show-settings", path)
    assert code == 0, err
    return out


def _settings_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if not line.startswith("#")]


def test_the_output_is_toml_with_every_setting(project, run):
    project.write("pyproject.toml", ROOT)
    project.write("research/pyproject.toml", SUB)
    project.write("research/notebook_export.py", "x = 1\n")
    out = _show(run, "research/notebook_export.py")
    data = tomllib.loads(out)
    root = project.root.resolve()
    assert out.startswith("# torchlint settings for research/notebook_export.py")
    assert f"# configuration: {root / 'research' / 'pyproject.toml'}\n" in out
    assert f"#   extends: {root / 'pyproject.toml'}\n" in out
    assert f"# project root: {root}\n" in out
    settable = set(TOP_LEVEL_KEYS) - {"extend", "extend-select", "extend-ignore", "extend-per-file-ignores"}
    assert settable <= set(data), settable - set(data)
    codes = [r.code for r in all_rules()]
    assert data["select"] == [c for c in codes if c.startswith("TL0") and c not in ("TL003", "TL006")]
    assert sorted(data["select"] + data["ignore"]) == sorted(codes)
    # per-file-ignores: only what matches the file; the root's research/*.py is relative to the
    # root, so it is shown as the file's own path, the original in a comment
    assert data["per-file-ignores"] == {"/notebook_export.py": ["TL004"], "notebook_*.py": ["TL005"]}
    assert f"# from per-file-ignores research/*.py (relative to {root})\n" in out
    assert data["fix"] is False and data["unsafe-fixes"] is True
    assert data["fixable"] == [c for c in codes if c.startswith("TL00")]
    assert data["unfixable"] == ["TL008"]
    assert data["extend-exclude"] == ["legacy/"]
    assert data["target-version"] == "py311" and data["max-file-size"] == 2_000_000
    assert data["cache-dir"] == "../var/cache" or data["cache-dir"].endswith("/var/cache")
    assert data["trace"]["models"]["models/net.py:Net"]["kwargs"] == {"hidden": 64, "odd key": 'a "quoted" value'}
    assert data["hard-coded-hyperparameter"]["ignore-names"] == ["lr", "momentum"]
    for rule in all_rules():
        if rule.options:
            assert set(data[rule.name]) == set(rule.options)


@pytest.mark.parametrize("target", ["research/pyproject.toml", "research/torchlint.toml"])
def test_written_back_it_gives_the_same_settings(project, run, target):
    project.write("pyproject.toml", ROOT)
    project.write("research/pyproject.toml", SUB)
    project.write("research/notebook_export.py", "x = 1\n")
    first = _show(run, "research/notebook_export.py")
    # the output, pasted into the file's own configuration, replacing it (no extend any more)
    (project.root / "research" / "pyproject.toml").unlink()
    body = "[tool.torchlint]\n" + first if target.endswith("pyproject.toml") else first
    project.write(target, body)
    second = _show(run, "research/notebook_export.py")
    assert tomllib.loads(second) == tomllib.loads(first)
    assert _settings_lines(second) == _settings_lines(first)
    assert "#   extends:" not in second
    # and once more: stable
    project.write(target, "[tool.torchlint]\n" + second if target.endswith("pyproject.toml") else second)
    assert _show(run, "research/notebook_export.py") == second


def test_defaults_and_command_line_flags_round_trip(project, run):
    project.write("x.py", "x = 1\n")
    first = _show(run, "x.py", "--isolated", "--select", "TL001,TL004", "--per-file-ignores", "x.py:TL004",
                  "--extend-exclude", "gen/")
    data = tomllib.loads(first)
    assert "# configuration: none, the defaults (--isolated)\n" in first
    assert data["select"] == ["TL001", "TL004"] and data["per-file-ignores"] == {"x.py": ["TL004"]}
    assert data["extend-exclude"] == ["gen/"] and data["cache-dir"] == ".torchlint_cache"
    project.write("torchlint.toml", first)
    second = _show(run, "x.py")
    assert _settings_lines(second) == _settings_lines(first)


def test_a_file_no_per_file_ignore_matches(project, run):
    project.write("pyproject.toml", "[tool.torchlint.per-file-ignores]\n'tests/*' = ['TL004']\n")
    project.write("src/x.py", "x = 1\n")
    out = _show(run, "src/x.py")
    assert tomllib.loads(out)["per-file-ignores"] == {}
    assert "# per-file-ignores: none matches this file\n" in out


@pytest.mark.parametrize("value", [
    "plain", 'quote " and backslash \\', "tab\tnewline\ncr\r", "\x00\x1f\x7f", "snowman \u2603",
    ["a", 1, 2.5, True, [], {}], {"a b": {"c.d": [1]}}, float("inf"), -3,
])
def test_values_are_valid_toml(value):
    assert tomllib.loads(f"k = {toml_value(value)}")["k"] == value


def test_a_lone_surrogate_is_written_escaped():
    assert tomllib.loads(f"k = {toml_string('bad' + chr(0xDCFF))}")["k"] == "bad\\xff"
