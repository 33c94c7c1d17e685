"""Syntax does not depend on the interpreter (issue 13 item 5): files in 3.11-3.14 syntax are
analysed whatever Python runs torchlint (LibCST reads the newest grammar), and
``target-version`` decides which syntax is a TL000 syntax error.

On the 3.11 interpreter these tests run on, the 3.12+ cases go through CPython's rejection,
LibCST's parse, ``torchlint.syntax.features`` and the downlevelled ``ast``; before this
change each was a TL000 "syntax error: invalid syntax" and nothing in the file was checked.
"""

from __future__ import annotations

import json
import textwrap

import libcst as cst
import pytest

from torchlint.engine import analyze_source
from torchlint.syntax import TARGET_VERSIONS, downlevel, features
from torchlint.testing import lint_snippet

UNCLEARED = "opt.step() in this loop applies gradients that were never cleared, so they add up across iterations; call opt.zero_grad() once per iteration"

# A training loop with TL001's bug, inside 3.12-only syntax (PEP 695 and PEP 701).
GENERIC_TRAIN = '''\
import torch

type Batch = tuple[torch.Tensor, torch.Tensor]

def train[M: torch.nn.Module](model: M, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(f"{", ".join(str(v) for v in y)}")
'''


def target(version: str) -> dict:
    return {"TL000": {"target-version": version}}


def test_newer_syntax_is_analysed_not_tl000():
    findings = lint_snippet(GENERIC_TRAIN)
    assert [(f.rule, f.line, f.message) for f in findings] == [("TL001", 9, UNCLEARED)]


def test_syntax_newer_than_target_is_a_syntax_error_naming_the_version():
    findings = lint_snippet(GENERIC_TRAIN, options=target("py311"))
    assert [(f.rule, f.line, f.column, f.message) for f in findings] == [(
        "TL000", 3, 1,
        "syntax error: a `type` statement (PEP 695) needs Python 3.12 or newer (target-version is py311); "
        "nothing in this file was checked")]
    assert [f.rule for f in lint_snippet(GENERIC_TRAIN, options=target("py312"))] == ["TL001"]


# (source, the first feature's version and description, its line and 1-based column)
CASES = [
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", (3, 11), "`except*` (PEP 654)", 1, 1),
    ("x = a[*idx]\n", (3, 11), "a starred subscript (PEP 646)", 1, 7),
    ("def f(*args: *Ts): pass\n", (3, 11), "a starred `*args` annotation (PEP 646)", 1, 7),
    ("type Vec = list[float]\n", (3, 12), "a `type` statement (PEP 695)", 1, 1),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", (3, 12), "type parameters (PEP 695)", 1, 1),
    ("class Box[T]:\n    pass\n", (3, 12), "type parameters (PEP 695)", 1, 1),
    ('s = f"{"quoted"}"\n', (3, 12), "an f-string that reuses its own quotes inside a replacement field", 1, 5),
    ("s = f'{'\\n'.join(a)}'\n", (3, 12), "an f-string that reuses its own quotes inside a replacement field", 1, 5),
    ('s = f"{"\\n".join(a)}"\n', (3, 12), "an f-string that reuses its own quotes inside a replacement field", 1, 5),
    ("s = f'{chr(10)+\"\\n\"}'\n", (3, 12), "a backslash inside an f-string replacement field", 1, 5),
    ('s = f"""{\n    x  # why\n}"""\n', (3, 12), "a comment inside an f-string replacement field", 1, 5),
    ('s = f"{x\n}"\n', (3, 12), "a line break inside a single-quoted f-string's replacement field", 1, 5),
    ('s = f"{x:{f"{w}"}}"\n', (3, 12), "an f-string that reuses its own quotes inside a replacement field", 1, 5),
    ('s = f"{x:{y:{z}}}"\n', (3, 12), "a replacement field nested three deep in format specs", 1, 5),
    ('s = t"hi {name}"\n', (3, 14), "a template string (PEP 750)", 1, 5),
    ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", (3, 14),
     "several exception types without parentheses (PEP 758)", 3, 1),
]


@pytest.mark.parametrize(("source", "version", "what", "line", "column"), CASES)
def test_feature_table(source, version, what, line, column):
    module = cst.parse_module(source)
    first = next(features(module, (3, 10)))
    assert (first.version, first.what) == (version, what)
    below = f"py{version[0]}{version[1] - 1}"
    [finding] = lint_snippet(source, select=["TL000"], options=target(below))
    assert (finding.line, finding.column) == (line, column)
    assert finding.message == (f"syntax error: {what} needs Python {version[0]}.{version[1]} or newer "
                               f"(target-version is {below}); nothing in this file was checked")
    # At its own version (and by default: the newest) the file is no syntax error.
    assert lint_snippet(source, select=["TL000"], options=target(f"py{version[0]}{version[1]}")) == []
    assert lint_snippet(source, select=["TL000"]) == []


def test_type_parameter_default_is_313():
    source = "class Box[T = int]:\n    pass\n"
    assert [(f.version, f.what) for f in features(cst.parse_module(source), (3, 12))] == [
        ((3, 13), "a type parameter default (PEP 696)")]
    [finding] = lint_snippet(source, select=["TL000"], options=target("py312"))
    assert (finding.line, finding.column) == (1, 11)
    assert "PEP 696) needs Python 3.13 or newer (target-version is py312)" in finding.message


@pytest.mark.parametrize("source", [
    "s = f'{a[\"key\"]}'\n",  # other quotes than the f-string's
    's = f"""{a["key"]}"""\n',  # a single quote character inside a triple-quoted f-string
    's = f"{x:#x} {y!r:>{width}}"\n',  # "#" in a format spec is a flag, not a comment
    's = f"{x = }"\n',
    's = f"{x:>{width}} {y:{w}.{p}f}"\n',  # format specs nested two deep
    "s = '#' + f'{x}'\n",
    "def f(a, /, b, *, c): return (y := a)\n",
])
def test_older_syntax_has_no_features(source):
    assert list(features(cst.parse_module(source), (3, 10))) == []
    assert lint_snippet(source, select=["TL000"], options=target("py310")) == []


def test_real_syntax_error_beside_newer_syntax_keeps_cpythons_message():
    findings = lint_snippet("type X = int\ndef train(:\n    pass\n", select=["TL000"])
    assert len(findings) == 1 and findings[0].message.startswith("syntax error: ")
    assert "needs Python" not in findings[0].message


def test_downlevelled_file_gives_imports_and_class_facts():
    source = textwrap.dedent('''\
        import torch.nn as nn
        try:
            from apex import amp
        except* ImportError:
            amp = None

        class Net[T](nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.name = f"{"net"}"
        ''')
    result = analyze_source("net.py", source.encode(), frozenset({"TL000"}))
    assert result.findings == []
    assert result.record.imports == {"nn": "torch.nn", "amp": "apex.amp"}
    assert result.record.index["classes"] == [
        {"name": "Net", "bases": ["torch.nn.Module"], "methods": ["__init__"], "self_attrs": ["fc", "name"]}]


@pytest.mark.parametrize("source", ["t'x'''#e\n", "s = f'a'''  # c\n", "s = f'{a}'\"\"  # c\n"])
def test_an_fstring_touching_another_string_is_read_the_same_in_either_order(source):
    # written as ``''``, the f-string (or t-string) must not run on into the next string: the
    # text CPython's parser reads after downlevelling is valid, as LibCST's parse found it
    import ast

    ast.parse(downlevel(cst.parse_module(source)), feature_version=(3, 10))
    assert lint_snippet(source, select=["TL000"]) == []


def test_downlevel_parses_in_the_oldest_grammar():
    import ast

    source = "".join(case[0] for case in CASES)
    ast.parse(downlevel(cst.parse_module(source)), feature_version=(3, 10))


def test_config_key(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\ntarget-version = "py311"\n')
    project.write("train.py", GENERIC_TRAIN)
    code, out, err = run("check", "--format", "json", "--no-cache", ".")
    assert code == 1, err
    assert [(f["rule"], f["line"]) for f in json.loads(out)] == [("TL000", 3)]
    assert "target-version is py311" in json.loads(out)[0]["message"]


def test_changing_target_version_misses_the_cache(project, run):
    project.write("train.py", GENERIC_TRAIN)
    assert [f["rule"] for f in json.loads(run("check", "--format", "json", ".")[1])] == ["TL001"]
    project.write("pyproject.toml", '[tool.torchlint]\ntarget-version = "py311"\n')
    assert [f["rule"] for f in json.loads(run("check", "--format", "json", ".")[1])] == ["TL000"]


@pytest.mark.parametrize("value", ['"py39"', '"3.12"', "312", '["py312"]'])
def test_bad_target_version(project, run, value):
    project.write("pyproject.toml", f"[tool.torchlint]\ntarget-version = {value}\n")
    project.write("ok.py", "x = 1\n")
    code, _, err = run("check", ".")
    assert code == 2
    assert "`target-version`: unknown Python version" in err and ", ".join(TARGET_VERSIONS) in err
    assert "Traceback" not in err


def test_deep_file_in_newer_syntax_keeps_cpythons_error():
    """CPython rejects the first line, so its depth limit never saw the second; LibCST would
    take minutes on it (its time grows with about the cube of the depth), so the file keeps
    CPython's error instead of reaching LibCST."""
    source = "type X = int\nx = " + "-" * 50_000 + "1\n"
    [finding] = lint_snippet(source, select=["TL000"])
    assert finding.message == "syntax error: invalid syntax; nothing in this file was checked"
