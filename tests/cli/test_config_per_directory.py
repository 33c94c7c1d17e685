"""Issue 13 item 2: configuration per directory, as ruff resolves it. Each file uses the
nearest configuration above it (up to the project root), ``extend`` inherits, the cache
lives at the project root, and results never depend on the order of the paths."""

from __future__ import annotations

import json

BAD = "def train(:\n    pass\n"
ROOT = "[tool.torchlint]\nselect = ['TL000']\n"
SUB_IGNORES = "[tool.torchlint]\nselect = ['TL000']\nignore = ['TL000']\n"


def _paths(run, *args):
    code, out, err = run("check", "--format", "json", *args)
    assert code in (0, 1), err
    return sorted(f["path"] for f in json.loads(out))


def test_each_file_uses_the_nearest_configuration(project, run):
    project.write("pyproject.toml", ROOT)
    project.write("sub/pyproject.toml", SUB_IGNORES)
    project.write("bad.py", BAD)
    project.write("sub/bad.py", BAD)
    assert _paths(run, ".") == ["bad.py"]
    assert _paths(run, "sub/bad.py") == []
    assert _paths(run, "bad.py") == ["bad.py"]
    assert _paths(run, "sub") == []


def test_a_torchlint_toml_in_a_subdirectory_counts_too(project, run):
    project.write("pyproject.toml", ROOT)
    project.write("sub/torchlint.toml", "ignore = ['TL000']\n")
    project.write("sub/deeper/bad.py", BAD)
    assert _paths(run, ".") == []


def test_results_never_depend_on_the_order_of_the_paths(project, run):
    project.write("pyproject.toml", ROOT)
    project.write("sub/pyproject.toml", SUB_IGNORES)
    project.write("bad.py", BAD)
    project.write("sub/bad.py", BAD)
    one = run("check", "--no-cache", "--format", "json", "sub/bad.py", "bad.py")
    other = run("check", "--no-cache", "--format", "json", "bad.py", "sub/bad.py")
    assert one == other and one[0] == 1
    assert [f["path"] for f in json.loads(one[1])] == ["bad.py"]


def test_extend_inherits_relative_to_the_configuration_file(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL000']\nignore = ['TL000']\n")
    project.write("sub/pyproject.toml", "[tool.torchlint]\nextend = '../pyproject.toml'\nmax-file-size = '4MB'\n")
    project.write("other/pyproject.toml", "[tool.torchlint]\nmax-file-size = '4MB'\n")
    project.write("sub/bad.py", BAD)
    project.write("other/bad.py", BAD)
    assert _paths(run, ".") == ["other/bad.py"]  # other/ does not inherit: the defaults select TL000


def test_a_selection_extends_the_inherited_one(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL004']\n")
    project.write("sub/pyproject.toml", "[tool.torchlint]\nextend = '../pyproject.toml'\nextend-select = ['TL000']\n")
    project.write("sub/x.py", "x = 1\n")
    code, out, _ = run("check", "--show-settings", "sub/x.py")
    assert code == 0
    assert 'select = ["TL000", "TL004"]\n' in out


def test_an_extend_cycle_is_an_error_naming_the_files(project, run):
    project.write("a/pyproject.toml", "[tool.torchlint]\nextend = '../b/pyproject.toml'\n")
    project.write("b/pyproject.toml", "[tool.torchlint]\nextend = '../a/pyproject.toml'\n")
    project.write("a/x.py", "x = 1\n")
    code, _, err = run("check", "a")
    assert code == 2
    assert "cycle" in err and "a/pyproject.toml" in err and "b/pyproject.toml" in err
    assert "Traceback" not in err


def test_an_extend_of_a_missing_file_is_an_error(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nextend = 'nowhere.toml'\n")
    project.write("x.py", "x = 1\n")
    code, _, err = run("check", ".")
    assert code == 2 and "nowhere.toml" in err and "no such file" in err


def test_the_cache_lives_at_the_project_root(project, run):
    project.write("pyproject.toml", ROOT)
    project.write("sub/pyproject.toml", SUB_IGNORES)
    project.write("sub/bad.py", BAD)
    assert _paths(run, "sub/bad.py") == []
    assert (project.root / ".torchlint_cache").is_dir()
    assert not (project.root / "sub" / ".torchlint_cache").exists()


def test_per_file_ignores_are_relative_to_their_configuration_file(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL000']\n[tool.torchlint.per-file-ignores]\n"
                                    "'legacy/*.py' = ['TL000']\n")
    project.write("sub/pyproject.toml", "[tool.torchlint]\nextend = '../pyproject.toml'\n"
                                        "[tool.torchlint.extend-per-file-ignores]\n'gen/*.py' = ['TL000']\n")
    for path in ("legacy/bad.py", "gen/bad.py", "sub/legacy/bad.py", "sub/gen/bad.py"):
        project.write(path, BAD)
    # legacy/*.py is the root's (relative to it), gen/*.py sub/'s
    assert _paths(run, ".") == ["gen/bad.py", "sub/legacy/bad.py"]


def test_show_settings_prints_the_resolved_settings_of_a_file(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL004']\n")
    project.write("sub/pyproject.toml", "[tool.torchlint]\nextend = '../pyproject.toml'\n"
                                        "[tool.torchlint.hard-coded-hyperparameter]\nignore-names = ['lr']\n")
    project.write("sub/x.py", "x = 1\n")
    code, out, err = run("check", "--show-settings", "sub/x.py")
    assert code == 0, err
    root = project.root.resolve()
    assert f"# configuration: {root / 'sub' / 'pyproject.toml'}\n" in out
    assert f"#   extends: {root / 'pyproject.toml'}\n" in out
    assert f"# project root: {root}\n" in out
    assert 'select = ["TL004"]\n' in out
    assert 'hard-coded-hyperparameter.ignore-names = ["lr"]\n' in out
    code, out, _ = run("check", "--show-settings", "other.py")
    assert code == 2


def test_each_file_is_analysed_with_its_own_rule_options(project, run):
    optimizer = "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nargs = argparse.ArgumentParser().parse_args()\n"
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['TL004']\n")
    project.write("sub/pyproject.toml", "[tool.torchlint]\nextend = '../pyproject.toml'\n"
                                        "[tool.torchlint.hard-coded-hyperparameter]\nignore-names = ['lr']\n")
    project.write("train.py", optimizer)
    project.write("sub/train.py", optimizer)
    assert _paths(run, ".") == ["train.py"]
    assert _paths(run, "sub/train.py", "train.py") == ["train.py"]  # the cache keys each file's options
    assert _paths(run, "train.py", "sub/train.py") == ["train.py"]
