"""Configuration: discovery, every key, and clear errors for bad keys and values."""

from __future__ import annotations

import pytest

BAD = "def train(:\n    pass\n"


def test_pyproject_table_is_found_from_subdirectory(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL000"]\n')
    project.write("src/bad.py", BAD)
    assert run("check", "src")[0] == 0


def test_pyproject_without_table_is_skipped_for_parent(project, run):
    project.write("torchlint.toml", 'ignore = ["TL000"]\n')
    project.write("sub/pyproject.toml", '[project]\nname = "x"\n')
    project.write("sub/bad.py", BAD)
    assert run("check", "sub")[0] == 0


def test_torchlint_toml(project, run):
    project.write("torchlint.toml", 'ignore = ["TL000"]\n')
    project.write("bad.py", BAD)
    assert run("check", ".")[0] == 0


def test_isolated_ignores_config(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL000"]\n')
    project.write("bad.py", BAD)
    assert run("check", "--isolated", ".")[0] == 1


def test_explicit_config_file(project, run):
    project.write("other.toml", 'ignore = ["TL000"]\n')
    project.write("bad.py", BAD)
    assert run("check", "--config", "other.toml", ".")[0] == 0
    code, _, err = run("check", "--config", "missing.toml", ".")
    assert code == 2 and "missing.toml" in err


def test_cli_select_overrides_config_ignore(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL000"]\n')
    project.write("bad.py", BAD)
    assert run("check", ".")[0] == 0
    assert run("check", "--select", "TL000", ".")[0] == 1


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[tool.torchlint]\nselectt = ["TL001"]\n', "`selectt`: unknown key, did you mean `select`? (accepted: select, ignore"),
        ('[tool.torchlint]\nselect = ["TL001x"]\n', "`select`: unknown rule code or prefix 'TL001x'"),
        ('[tool.torchlint]\nselect = "TL001"\n', "`select`: expected a list, got the string 'TL001'"),
        ('[tool.torchlint]\nexclude = "build"\n', "`exclude`: expected a list, got the string 'build'"),
        ('[tool.torchlint.per-file-ignores]\n"a.py" = "TL001"\n', "expected a list, got the string 'TL001'"),
        ('[tool.torchlint.TL004]\nignore-names = ["x"]\n',
         "`TL004`: name the table after the rule: hard-coded-hyperparameter"),
        ("[tool.torchlint]\nselect = 3\n", "`select`: expected a list of strings, got 3"),
        ("[tool.torchlint]\nrespect-gitignore = \"yes\"\n", "`respect-gitignore`: expected true or false"),
        ('[tool.torchlint]\nper-file-ignores = ["x"]\n', "`per-file-ignores`: expected a table"),
        ('[tool.torchlint.per-file-ignores]\n"tests/**" = ["TL777"]\n', "unknown rule code or prefix 'TL777'"),
        ("[tool.torchlint\n", "invalid TOML"),
        ('[tool.torchlint.syntax-error]\nfoo = 1\n', "`syntax-error.foo`: unknown option for TL000 (accepted: no options)"),
    ],
)
def test_bad_config_exits_2_naming_file_key_and_accepted(project, run, toml, expected):
    project.write("pyproject.toml", toml)
    project.write("ok.py", "x = 1\n")
    code, out, err = run("check", ".")
    assert code == 2, (out, err)
    assert "pyproject.toml" in err
    assert expected in err
    assert "Traceback" not in err


def test_extend_ignore_and_extend_per_file_ignores_add_to_the_lists(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL001"]\nextend-ignore = ["TL000"]\n')
    project.write("bad.py", BAD)
    assert run("check", ".")[0] == 0
    project.write("pyproject.toml", '[tool.torchlint.per-file-ignores]\n"a/*" = ["TL000"]\n'
                                    '[tool.torchlint.extend-per-file-ignores]\n"b/*" = ["TL000"]\n')
    project.write("a/bad.py", BAD)
    project.write("b/bad.py", BAD)
    code, out, _ = run("check", "--format", "concise", "a", "b", "bad.py")
    assert code == 1 and "bad.py" in out and "a/bad.py" not in out and "b/bad.py" not in out


def test_per_file_ignores(project, run):
    project.write("pyproject.toml", '[tool.torchlint.per-file-ignores]\n"legacy/**" = ["TL000"]\n')
    project.write("legacy/old.py", BAD)
    project.write("new.py", BAD)
    code, out, _ = run("check", "--format", "concise", ".")
    assert code == 1
    assert "new.py" in out and "legacy/old.py" not in out


def test_exclude_and_extend_exclude(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["generated/", "*_pb2.py"]\n')
    project.write("generated/a.py", BAD)
    project.write("api_pb2.py", BAD)
    project.write("build/x.py", BAD)  # default exclusion
    project.write("main.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["main.py"]


def test_extend_include_adds_files_to_directory_runs(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nextend-include = ["*.pyw", "bin/train"]\n')
    project.write("gui.pyw", BAD)
    project.write("bin/train", BAD)
    project.write("bin/notes.txt", "not python\n")
    project.write("other.pyw.txt", "not python\n")
    project.write("main.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["bin/train", "gui.pyw", "main.py"]
    code, out, _ = run("check", ".")
    assert code == 1 and "gui.pyw:" in out and "bin/train:" in out


def test_extend_include_without_it_only_python_and_notebooks(project, run):
    project.write("gui.pyw", BAD)
    project.write("main.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["main.py"]


def test_extend_exclude_wins_over_extend_include(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nextend-include = ["*.pyw"]\nextend-exclude = ["old/"]\n')
    project.write("old/gui.pyw", BAD)
    project.write("gui.pyw", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["gui.pyw"]


def test_exclude_replaces_defaults(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nexclude = ["vendor/"]\n')
    project.write("build/x.py", "x = 1\n")
    project.write("vendor/y.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["build/x.py"]


def test_explicit_file_is_linted_even_if_excluded_unless_force_exclude(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["gen/"]\n')
    project.write("gen/a.py", BAD)
    assert run("check", "gen/a.py")[0] == 1
    assert run("check", "--force-exclude", "gen/a.py")[0] == 0


def test_gitignore_respected_and_optional(project, run):
    project.write(".gitignore", "scratch/\n*.tmp.py\n")
    (project.root / ".git").mkdir()
    project.write("scratch/a.py", BAD)
    project.write("b.tmp.py", BAD)
    project.write("pkg/.gitignore", "local.py\n")
    project.write("pkg/local.py", BAD)
    project.write("pkg/kept.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["pkg/kept.py"]
    project.write("pyproject.toml", "[tool.torchlint]\nrespect-gitignore = false\n")
    _, out, _ = run("check", "--show-files", ".")
    assert out.splitlines() == ["b.tmp.py", "pkg/kept.py", "pkg/local.py", "scratch/a.py"]


def test_gitignore_of_parent_applies_when_linting_subdirectory(project, run):
    (project.root / ".git").mkdir()
    project.write(".gitignore", "*_generated.py\n")
    project.write("src/x_generated.py", BAD)
    project.write("src/y.py", "x = 1\n")
    _, out, _ = run("check", "--show-files", "src")
    assert out.splitlines() == ["src/y.py"]
