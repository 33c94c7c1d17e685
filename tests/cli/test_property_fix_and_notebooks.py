"""Property tests of ``--fix`` and of notebooks.

``--fix``: the buggy fixture files, mutated (lines of comments, blank lines and ``pass``
statements put between their lines, at the indentation there), fixed with every rule and
``--unsafe-fixes``: the result compiles, only the lines the fixes' edits cover change (what a
fix inserts goes next to them), and fixing the result again changes nothing.

Notebooks: generated nbformat JSON (cells of every type with sources of any text, lone
surrogates and NULs included, metadata of any shape, numbers of thousands of digits) and
byte-level mutations of a real notebook, linted through the command line in every report
format: never an internal error, every exit 0 or 1.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from torchlint.cli import main
from torchlint.rule import rule_index
from torchlint.testing import fix_snippet, lint_snippet

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted((REPO / "fixtures" / "buggy_project").glob("*.py"))
SETTINGS = settings(max_examples=40, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ALL = [info.code for info in rule_index() if not info.traced]


def _indent_at(lines: list[str], index: int) -> str:
    """The indentation a line put before ``lines[index]`` may have (that of the next code line)."""
    for line in lines[index:]:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


@st.composite
def mutated_fixture(draw) -> str:
    path = draw(st.sampled_from(FIXTURES))
    lines = path.read_text().splitlines()
    insertions = draw(st.lists(st.tuples(st.integers(0, len(lines)), st.sampled_from(["# note", "", "pass"])),
                               max_size=6))
    for index, text in sorted(insertions, reverse=True):
        before = lines[index - 1].rstrip() if index else ""
        if before.endswith(("(", "[", "{", ",", "\\")) or (before.endswith(":") and text == ""):
            continue  # inside a bracket or before a block's first line: not where a line can go
        lines.insert(index, (_indent_at(lines, index) + text) if text else "")
    return "\n".join(lines) + "\n"


def _edited_lines(code: str) -> set[int]:
    lines = set()
    for finding in lint_snippet(code, ALL):
        if finding.fix is not None:
            for edit in finding.fix.edits:
                lines.update(range(edit.span.line, edit.span.end_line + 1))
    return lines


@SETTINGS
@given(mutated_fixture())
def test_fix_compiles_changes_only_finding_lines_and_is_idempotent(code):
    try:
        compile(code, "<mutated>", "exec")
    except SyntaxError:
        return  # a mutation that broke the file: nothing to fix
    fixed = fix_snippet(code, ALL)
    compile(fixed, "<fixed>", "exec")
    edited = _edited_lines(code)
    old, new = code.splitlines(), fixed.splitlines()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1 + 1, i2 + 1)) <= edited, (tag, old[i1:i2], sorted(edited))
        elif tag == "insert":
            assert {i1, i1 + 1} & edited, (tag, i1, new, sorted(edited))
    assert fix_snippet(fixed, ALL) == fixed


# -- notebooks -------------------------------------------------------------------------------

TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=40)
CODE = st.sampled_from(["import torch\n", "for x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n",
                        "%%time\nx = 1\n", "  y = 2\n  z = 3\n", "x = # TODO\n", "!pip install torch\n",
                        "model?\n", "def f(:\n", "losses.append(loss)\n"])
SOURCE = st.one_of(CODE, TEXT, st.lists(st.one_of(CODE, TEXT), max_size=4), st.integers(), st.none())
JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                       max_leaves=8)
CELL = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw", "other", 3]),
                              "source": SOURCE}, optional={"metadata": JSONISH, "outputs": JSONISH})
NOTEBOOK = st.fixed_dictionaries({"cells": st.one_of(st.lists(CELL, max_size=5), JSONISH)},
                                 optional={"metadata": JSONISH, "nbformat": JSONISH})


def _lint_notebook(raw: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nb.ipynb"
        path.write_bytes(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass"))
        for fmt in ("full", "sarif", "github"):
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(["check", "--isolated", "--no-cache", "--format", fmt, str(path)])
            assert code in (0, 1) and "internal error" not in err.getvalue(), (fmt, err.getvalue())


@SETTINGS
@given(NOTEBOOK, st.integers(0, 6000))
def test_generated_notebooks_never_cause_an_internal_error(document, digits):
    text = json.dumps(document)
    if digits > 4300:  # an integer of thousands of digits somewhere in the JSON
        text = text.replace("{", '{"n": %s, ' % ("7" * digits), 1) if text.startswith("{") else text
    _lint_notebook(text)


BASE = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
                              "source": ["import torch\n", "for x in loader:\n", "    loss = model(x)\n",
                                         "    loss.backward()\n", "    opt.step()\n"]}],
                   "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, len(BASE)), st.integers(0, 3), st.binary(max_size=3)), min_size=1, max_size=4))
def test_mutated_notebook_bytes_never_cause_an_internal_error(edits):
    data = bytearray(BASE.encode())
    for at, cut, put in edits:
        data[at:at + cut] = put
    _lint_notebook(bytes(data))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_each_fixture_fixes_to_code_that_compiles_and_stays_fixed(path):
    fixed = fix_snippet(path.read_text(), ALL)
    compile(fixed, path.name, "exec")
    assert fix_snippet(fixed, ALL) == fixed
