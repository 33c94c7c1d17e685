"""``.gitignore`` matching equal to git's (``torchlint.gitignore``): the patterns themselves,
nested ``.gitignore`` files, re-inclusion that cannot reach inside an ignored directory, and a
differential test against ``git ls-files`` on generated trees."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from torchlint.config import build_settings
from torchlint.files import discover
from torchlint.gitignore import PatternError, Spec, compile_pattern

GIT = shutil.which("git")


def _ignored(lines: list[str], path: str) -> bool:
    return Spec.from_lines(lines).match_file(path)


@pytest.mark.parametrize(("lines", "path", "ignored"), [
    (["*.py"], "a.py", True),
    (["*.py"], "sub/deep/a.py", True),
    (["/a.py"], "sub/a.py", False),
    (["sub/*.py"], "sub/deep/a.py", False),
    (["sub/**/a.py"], "sub/a.py", True),
    (["sub/**/a.py"], "sub/x/y/a.py", True),
    (["**/deep"], "x/deep/a.py", True),
    (["deep/"], "deep", False),  # a file named deep: the pattern is for directories
    (["deep/"], "x/deep/", True),
    (["a?.py"], "ab.py", True),
    (["a?.py"], "a/.py", False),
    (["[ab].py", "![b].py"], "b.py", False),
    (["[!a].py"], "b.py", True),
    (["[[:digit:]]x.py"], "7x.py", True),
    (["*.py", "!sub/**", "sub/deep/"], "sub/deep/d.py", True),  # the reported case: git ignores it
    (["*.py", "!sub/**", "sub/deep/"], "sub/b.py", False),
    (["sub/", "!sub/**"], "sub/b.py", True),  # nothing inside an ignored directory comes back
    (["a.py  "], "a.py", True),  # trailing spaces dropped
    (["a.py\\ "], "a.py ", True),  # unless quoted
    (["\\!x.py"], "!x.py", True),
    (["\\#x.py"], "#x.py", True),
    (["# comment", ""], "# comment", False),
    (["a**b.py"], "axxb.py", True),
    (["a**b.py"], "a/b.py", False),
])
def test_patterns_match_as_git_matches_them(lines, path, ignored):
    assert _ignored(lines, path) is ignored


@pytest.mark.parametrize(("line", "why"), [
    ("!", "empty pattern"), ("[z-a]", "the range z-a is empty"), ("foo\\", "a backslash at the end quotes nothing"),
    ("[[:foo:]].py", "unknown character class [:foo:]"), ("[abc", "a '[' that is never closed"),
])
def test_lines_that_match_nothing_in_git_say_why(line, why):
    with pytest.raises(PatternError, match=why.replace("[", "\\[")):
        compile_pattern(line)


def test_the_reported_tree_and_an_unknown_class_give_one_clean_warning(project, run):
    """Before: ``sub/deep/d.py`` was linted though git ignores it, and ``[[:foo:]].py`` leaked
    pathspec's ``FutureWarning`` with a source line to stderr."""
    project.write(".gitignore", "*.py\n!sub/**\nsub/deep/\n[[:foo:]].py\n")
    for name in ("a.py", "sub/b.py", "sub/deep/d.py"):
        project.write(name, "x = 1\n")
    code, out, err = run("check", "--show-files", ".")
    assert code == 0 and out == "sub/b.py\n"
    assert err == ("torchlint: warning: .gitignore:4: invalid pattern '[[:foo:]].py' ignored "
                   "(unknown character class [:foo:])\n")


# -- against git itself --------------------------------------------------------------------

NAMES = ["a.py", "b.py", "d.py", "ab.py", "x y.py", "!x.py"]
DIRS = ["sub", "deep", "build", "a", "sub/deep", "sub/a", "deep/sub", "a/b/c"]
PATTERNS = ["*.py", "!*.py", "sub/", "sub", "/sub", "!sub/**", "sub/**", "**/deep", "deep/", "a?.py", "[ab].py",
            "[!a].py", "sub/*.py", "**/*.py", "!sub/deep/", "/a.py", "*", "!d.py", "b.py  ", "\\!x.py",
            "sub/**/d.py", "[[:alpha:]].py", "!deep", "a/", "!a/b", "a/**/c", "x\\ y.py", "*/", "!*/", "**/a/*",
            "build", "!build/*.py", "[a-c]*.py", "?.py", "deep/*", "!**/d.py"]


def _git_visible(root: Path) -> set[str]:
    out = subprocess.run([GIT, "-c", "core.excludesFile=/dev/null", "ls-files", "--others", "--exclude-standard",
                          "-z"], cwd=root, capture_output=True, check=True).stdout.decode()
    return {p for p in out.split("\0") if p.endswith(".py")}


def _torchlint_visible(root: Path) -> set[str]:
    settings = build_settings(None, root=root)
    settings.exclude = []
    return {f.path.relative_to(root).as_posix() for f in discover([str(root)], settings, root).files}


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_discovery_equals_git_on_generated_trees(tmp_path):
    rng = random.Random(20261206)
    for case in range(60):
        root = tmp_path / f"case{case}"
        root.mkdir()
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
        for directory in ["", *DIRS]:
            for name in rng.sample(NAMES, 3):
                path = root / directory / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("x = 1\n")
        for directory in rng.sample(["", "", *DIRS], 3):
            lines = rng.sample(PATTERNS, rng.randint(1, 5))
            (root / directory).mkdir(parents=True, exist_ok=True)
            with open(root / directory / ".gitignore", "a") as fh:
                fh.write("\n".join(lines) + "\n")
        expected = _git_visible(root)
        assert _torchlint_visible(root) == expected, (case, {d: (root / d / ".gitignore").read_text()
                                                             for d in ["", *DIRS] if (root / d / ".gitignore").exists()})
