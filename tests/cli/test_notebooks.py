"""Jupyter notebooks: code cells linted as Python, IPython syntax masked, findings by cell in
every output format, noqa in cells, directory runs, bad notebooks, the cache."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from torchlint.notebook import Cells, NotebookError, cell_lines, in_cells, mask_cell, read_notebook
from torchlint.finding import Finding, Severity

SETUP = "import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters())\n"
# cell 3: the loop never clears the gradients (TL001 on its line 5)
NO_ZERO_GRAD = ("losses = []\nfor x, y in loader:\n    loss = nn.functional.mse_loss(model(x), y)\n    loss.backward()\n"
                "    optimizer.step()\n")
# cell 5: every loss kept with its graph (TL002 on its line 6)
KEPT_LOSS = ("for x, y in loader:\n    optimizer.zero_grad()\n    loss = nn.functional.mse_loss(model(x), y)\n"
             "    loss.backward()\n    optimizer.step()\n    losses.append(loss)\n")
# the file (all cells) clears the gradients elsewhere: in cell 5's loop
TL001 = ("optimizer.step() in this loop applies gradients that were never cleared in it (the zero_grad() outside "
         "does not run every iteration), so they add up across iterations; call optimizer.zero_grad() once per iteration")
TL002 = ("`losses.append(loss)` keeps each iteration's autograd graph alive, so memory grows every step; "
         "store `loss.item()` (or `loss.detach()`) instead")
CONFIG = '[tool.torchlint]\nselect = ["TL000", "TL001", "TL002", "TL901"]\n'


def notebook(*cells: tuple[str, str], language: str = "python") -> str:
    """An nbformat 4 notebook of ``(cell type, source)`` cells, written as Jupyter writes it."""
    def cell(kind: str, source: str) -> dict:
        data = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
        return {**data, "execution_count": None, "outputs": []} if kind == "code" else data

    return json.dumps({"cells": [cell(k, s) for k, s in cells], "nbformat": 4, "nbformat_minor": 5,
                       "metadata": {"language_info": {"name": language}}}, indent=1)


BUGGY = notebook(("markdown", "# Training\n"), ("code", "%matplotlib inline\n!pip install x\n" + SETUP),
                 ("code", NO_ZERO_GRAD), ("markdown", "Again, keeping the losses:\n"), ("code", KEPT_LOSS))


@pytest.fixture
def buggy(project):
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", BUGGY)
    return project


# -- the done-when: both findings, with cell and line, in every format --------------------

def test_full_and_concise_name_the_cell_and_its_line(buggy, run):
    code, out, err = run("check", "nb.ipynb", "--format", "concise", "--no-cache")
    assert (code, err) == (1, "")
    assert out.splitlines() == [f"nb.ipynb:cell 3:line 5:5: TL001 [missing-zero-grad] {TL001}",
                                f"nb.ipynb:cell 5:line 6:5: TL002 [*] [loss-kept-with-graph] {TL002}",
                                "Found 2 problems (1 error, 1 warning). Checked 1 file.",
                                "[*] 1 fixable with --fix (1 more with --unsafe-fixes)"]
    code, out, _ = run("check", "nb.ipynb", "--no-cache")
    # the code frame shows the cell's lines, numbered in the cell, and stops at the cell's end
    assert f"nb.ipynb:cell 3:line 5:5: TL001 [missing-zero-grad] {TL001}\n  |\n4 |     loss.backward()\n" \
           "5 |     optimizer.step()\n  |     ^^^^^^^^^^^^^^^^ TL001\n  |\n" in out


def test_json_and_json_lines_carry_the_cell(buggy, run):
    _, out, _ = run("check", "nb.ipynb", "--format", "json", "--no-cache")
    found = [(o["rule"], o["cell"], o["line"], o["column"], o["end_line"], o["end_column"]) for o in json.loads(out)]
    assert found == [("TL001", 3, 5, 5, 5, 21), ("TL002", 5, 6, 5, 6, 24)]
    _, out, _ = run("check", "nb.ipynb", "--format", "json-lines", "--no-cache")
    assert [(o["cell"], o["line"]) for o in map(json.loads, out.splitlines())] == [(3, 5), (5, 6)]


def test_sarif_points_into_the_notebooks_json_and_puts_the_cell_in_properties(buggy, run):
    _, out, _ = run("check", "nb.ipynb", "--format", "sarif", "--no-cache")
    results = json.loads(out)["runs"][0]["results"]
    # line 33 of the file is `    "    optimizer.step()\n"`: column 10 is its `o`
    assert [(r["ruleId"], r["properties"], r["locations"][0]["physicalLocation"]["region"]) for r in results] == [
        ("TL001", {"cell": 3}, {"startLine": 33, "startColumn": 10, "endLine": 33, "endColumn": 26}),
        ("TL002", {"cell": 5}, {"startLine": 54, "startColumn": 10, "endLine": 54, "endColumn": 29})]
    assert all(set(r["partialFingerprints"]) == {"torchlint/v1", "primaryLocationLineHash"} for r in results)


def test_github_and_junit_name_the_cell(buggy, run):
    _, out, _ = run("check", "nb.ipynb", "--format", "github", "--no-cache")
    assert out.splitlines()[0] == (f"::error file=nb.ipynb,line=33,col=10,endLine=33,endColumn=26,"
                                   f"title=torchlint (TL001) in cell 3::{TL001}")
    assert "line=54,col=10,endLine=54,endColumn=29,title=torchlint (TL002) in cell 5::" in out.splitlines()[1]
    _, out, _ = run("check", "nb.ipynb", "--format", "junit", "--no-cache")
    cases = ET.fromstring(out).iter("testcase")
    assert [(c.get("name"), c.get("line")) for c in cases] == [
        ("TL001 missing-zero-grad at cell 3, line 5, column 5", "5"),
        ("TL002 loss-kept-with-graph at cell 5, line 6, column 5", "6")]


def test_a_clean_notebook_gives_nothing(project, run):
    project.write("pyproject.toml", CONFIG)
    project.write("clean.ipynb", notebook(("code", "%matplotlib inline\n!pip install x\n" + SETUP),
                                          ("code", KEPT_LOSS.replace("losses.append(loss)", "print(loss.item())"))))
    assert run("check", "clean.ipynb", "--no-cache") == (0, "All checks passed! Checked 1 file.\n", "")


# -- IPython syntax -------------------------------------------------------------------------

def test_magics_shell_escapes_and_help_lines_give_no_tl000(project, run):
    project.write("pyproject.toml", CONFIG)
    project.write("magic.ipynb", notebook(
        ("code", "%matplotlib inline\n!pip install x\nfiles = !ls\nt = %timeit -o sum(range(9))\n"),
        ("code", "%%bash\nthis cell is read by the magic, not by Python\n"),
        ("code", "%%time\nimport torch\n"),
        ("code", "import torch\ntorch.zeros?\n??torch.nn\nif True:\n    %time torch.ones(2)\n    !nvidia-smi\n"),
        ("code", "x = (3\n     % 2)\ns = '''\n!not a shell escape\n'''\n")))
    assert run("check", "magic.ipynb", "--no-cache") == (0, "All checks passed! Checked 1 file.\n", "")


def test_masking_keeps_lines_and_leaves_python_alone():
    assert mask_cell(["%matplotlib inline", "x = !ls", "if x:", "    y?", "z = (1", "% 2)", "a != b"]) == [
        "pass", "pass", "if x:", "    pass", "z = (1", "% 2)", "a != b"]
    assert mask_cell(["%%bash", "echo hi"]) == ["", ""]
    assert mask_cell(["s = 'is it?'", "t = '''", "why?", "'''", "# what?"]) == [
        "s = 'is it?'", "t = '''", "why?", "'''", "# what?"]


def test_cells_split_into_lines_where_python_does():
    assert cell_lines("a = '\u2028'\r\nb = '\x0c'\rc\n") == ["a = '\u2028'", "b = '\x0c'", "c"]
    assert cell_lines("") == [""] and cell_lines("x") == ["x"] and cell_lines("x\n\n") == ["x", ""]
    read = read_notebook(notebook(("code", "s = '\u2028'\nt = 1\n"), ("code", "u = 2")).encode())
    assert read.text == "s = '\u2028'\nt = 1\nu = 2\n" and read.cells.to_json() == [[1, 1], [2, 3], [0, 3]]


def test_a_syntax_error_in_a_cell_is_tl000_at_its_cell(project, run):
    project.write("pyproject.toml", CONFIG)
    project.write("broken.ipynb", notebook(("code", "import torch\n"), ("code", "x = 1\ndef f(:\n    pass\n")))
    code, out, _ = run("check", "broken.ipynb", "--format", "concise", "--no-cache")
    assert code == 1
    assert out.splitlines()[0].startswith("broken.ipynb:cell 2:line 2:7: TL000 [syntax-error] syntax error:")


# -- noqa, directories, bad notebooks, the cache -----------------------------------------

def test_noqa_works_in_a_cell(project, run):
    project.write("pyproject.toml", CONFIG)
    kept = KEPT_LOSS.replace("losses.append(loss)", "losses.append(loss)  # noqa: TL002")
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", "losses = []\n"), ("code", kept)))
    assert run("check", "nb.ipynb", "--no-cache") == (0, "All checks passed! Checked 1 file.\n", "")


def test_directory_runs_include_notebooks_and_extend_exclude_leaves_them_out(buggy, run):
    buggy.write("train.py", "import torch\n")
    assert run("check", ".", "--show-files")[1] == "nb.ipynb\ntrain.py\n"
    buggy.write("pyproject.toml", CONFIG + 'extend-exclude = ["*.ipynb"]\n')
    assert run("check", ".", "--show-files")[1] == "train.py\n"
    # named, a notebook is linted whatever the exclusions (as a named .py file is)
    assert run("check", "nb.ipynb", "--no-cache")[0] == 1


def test_a_named_notebook_is_never_read_as_python(project, run):
    # its JSON is a valid Python expression: read as Python it would "pass"
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", BUGGY.replace("null", "None"))
    code, out, _ = run("check", "nb.ipynb", "--format", "concise", "--no-cache")
    assert code == 1
    assert out.splitlines() == ["nb.ipynb:1:1: TL000 [syntax-error] invalid notebook: not JSON (line 22, column 23: "
                                "Expecting value); nothing in this file was checked",
                                "Found 1 problem (1 error, 0 warnings). Checked 1 file."]


def test_an_invalid_notebook_is_one_line_and_the_rest_is_still_linted(buggy, run):
    buggy.write("bad.ipynb", "{\"cells\": [")
    buggy.write("other.ipynb", json.dumps({"nbformat": 4}))
    code, out, err = run("check", ".", "--format", "concise", "--no-cache")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "bad.ipynb:1:1: TL000 [syntax-error] invalid notebook: not JSON (line 1, column 12: Expecting value); "
        "nothing in this file was checked",
        f"nb.ipynb:cell 3:line 5:5: TL001 [missing-zero-grad] {TL001}",
        f"nb.ipynb:cell 5:line 6:5: TL002 [*] [loss-kept-with-graph] {TL002}",
        "other.ipynb:1:1: TL000 [syntax-error] invalid notebook: no \"cells\" list (only nbformat 4 notebooks are "
        "read); nothing in this file was checked",
        "Found 4 problems (3 errors, 1 warning). Checked 3 files.",
        "[*] 1 fixable with --fix (1 more with --unsafe-fixes)"]


def test_a_notebook_in_another_language_has_no_python_to_lint(project, run):
    project.write("pyproject.toml", CONFIG)
    project.write("r.ipynb", notebook(("code", "library(torch)\nx <- 1\n"), language="R"))
    assert run("check", "r.ipynb", "--no-cache") == (0, "All checks passed! Checked 1 file.\n", "")


def test_the_cache_keeps_cells_and_is_keyed_on_the_notebooks_bytes(buggy, run):
    first = run("check", "nb.ipynb", "--format", "json")
    assert run("check", "nb.ipynb", "--format", "json", "-v")[1] == first[1]  # from the cache
    assert "1 hit(s), 0 miss(es)" in run("check", "nb.ipynb", "-v")[2]
    buggy.write("nb.ipynb", BUGGY.replace("losses.append(loss)", "losses.append(loss.item())"))
    code, out, err = run("check", "nb.ipynb", "--format", "concise", "-v")
    assert "0 hit(s), 1 miss(es)" in err
    assert out.splitlines()[:-2] == [f"nb.ipynb:cell 3:line 5:5: TL001 [missing-zero-grad] {TL001}"]


# -- the pieces ----------------------------------------------------------------------------

def test_cells_map_joined_lines_to_cells():
    read = read_notebook(BUGGY.encode())
    assert read.cells.to_json() == [[2, 1], [3, 8], [5, 13], [0, 18], [-1, 1, 2]]  # lines 1-2: IPython syntax
    assert [read.cells.locate(n) for n in (1, 7, 8, 12, 13, 18, 19)] == [
        (2, 1, 7), (2, 7, 7), (3, 1, 5), (3, 5, 5), (5, 1, 6), (5, 6, 6), None]
    assert read.text.splitlines()[:2] == ["pass", "pass"] and read.source.splitlines()[0] == "%matplotlib inline"
    assert Cells.from_json(read.cells.to_json()) == read.cells


def test_in_cells_adds_the_cell_and_leaves_other_files_alone():
    finding = Finding("TL001", "missing-zero-grad", Severity.ERROR, "nb.ipynb", 14, 5, 14, 21, "m")
    assert in_cells(finding, [[2, 1], [3, 10], [0, 14]]).extra == {"cell": 3, "cell_line": 5, "cell_end_line": 5,
                                                                    "cell_lines": 5}
    assert in_cells(finding, []) is finding


@pytest.mark.parametrize("data, message", [
    (b"\xff", "invalid notebook: not UTF-8 (byte 0: invalid start byte)"),
    (b"[]", 'invalid notebook: no "cells" list (only nbformat 4 notebooks are read)'),
    (b'{"cells": [{"cell_type": "code", "source": 3}]}', "invalid notebook: cell 1 has a source that is not text"),
])
def test_what_is_not_a_notebook_is_one_line(data, message):
    with pytest.raises(NotebookError) as caught:
        read_notebook(data)
    assert str(caught.value) == message


def test_add_noqa_leaves_notebooks_untouched(buggy, run):
    buggy.write("train.py", "import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n")
    code, _, err = run("check", ".", "--add-noqa", "--no-cache")
    assert code == 0
    assert (buggy.root / "nb.ipynb").read_text() == BUGGY
    assert "opt.step()  # noqa: TL001" in (buggy.root / "train.py").read_text()
    assert err == ("torchlint: warning: nb.ipynb: not edited: --add-noqa does not edit notebooks; add the "
                   "`# noqa: CODE` comments in the cells\ntorchlint: added 1 noqa comment\n")


def test_max_file_size_measures_a_notebooks_code_not_its_outputs(buggy, run):
    document = json.loads(BUGGY)
    document["cells"][1]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                        "data": {"image/png": "A" * 30_000}}]
    buggy.write("nb.ipynb", json.dumps(document))
    buggy.write("pyproject.toml", CONFIG + 'max-file-size = "20kB"\n')
    code, out, _ = run("check", "nb.ipynb", "--format", "concise", "--no-cache")
    assert [line.split(" ")[:2] for line in out.splitlines()[:-2]] == [["nb.ipynb:cell", "3:line"], ["nb.ipynb:cell", "5:line"]]
    buggy.write("pyproject.toml", CONFIG + 'max-file-size = "300B"\n')  # the cells' code is 395 bytes
    code, out, _ = run("check", "nb.ipynb", "--format", "concise", "--no-cache")
    assert out.splitlines()[0].startswith("nb.ipynb:1:1: TL000 [syntax-error] file is too large to analyse (0.00")


# -- as Jupyter runs them: one bad cell loses that cell alone, indented cells, cell magics ----

CELL_NOTE = "; this cell was not checked (the notebook's other cells were)"
# TL001 where no other loop of the notebook clears the gradients
TL001_ALONE = ("optimizer.step() in this loop applies gradients that were never cleared, so they add up across "
               "iterations; call optimizer.zero_grad() once per iteration")


def _concise(run, name: str) -> list[str]:
    code, out, err = run("check", name, "--format", "concise", "--no-cache")
    assert "internal error" not in err and "Traceback" not in err, err
    return [line for line in out.splitlines() if ": TL" in line]


def test_a_bad_cell_amid_good_ones_is_one_tl000_and_the_other_cells_are_linted(project, run):
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", "x = # TODO: fill in\n"), ("code", NO_ZERO_GRAD),
                                       ("code", "y = ???\n"), ("code", KEPT_LOSS)))
    assert _concise(run, "nb.ipynb") == [
        f"nb.ipynb:cell 2:line 1:5: TL000 [syntax-error] syntax error: invalid syntax{CELL_NOTE}",
        f"nb.ipynb:cell 3:line 5:5: TL001 [missing-zero-grad] {TL001}",
        f"nb.ipynb:cell 4:line 1:5: TL000 [syntax-error] syntax error: invalid syntax{CELL_NOTE}",
        f"nb.ipynb:cell 5:line 6:5: TL002 [*] [loss-kept-with-graph] {TL002}",
    ]


def test_a_cell_jupyter_cannot_compile_for_want_of_a_character_is_that_cell_alone(project, run):
    """JSON's escapes allow a lone surrogate and NUL in a cell; no Python source can hold them.
    Before, a lone surrogate was "internal error: UnicodeEncodeError" and the run was lost."""
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", "label = '\udc80'\n"), ("code", "z = '\0'\n"),
                                       ("code", NO_ZERO_GRAD)))
    project.write("other.py", "def f(:\n")
    code, out, err = run("check", ".", "--format", "concise", "--no-cache")
    assert code == 1 and "internal error" not in err
    assert out.splitlines()[:-2] == [
        "nb.ipynb:cell 2:line 1:10: TL000 [syntax-error] cannot read cell: a lone surrogate (U+DC80), not a character; "
        f"Python cannot compile this cell{CELL_NOTE}",
        f"nb.ipynb:cell 3:line 1:6: TL000 [syntax-error] cannot read cell: a NUL character; Python cannot compile "
        f"this cell{CELL_NOTE}",
        f"nb.ipynb:cell 4:line 5:5: TL001 [missing-zero-grad] {TL001_ALONE}",
        "other.py:1:7: TL000 [syntax-error] syntax error: invalid syntax; nothing in this file was checked",
    ]


def test_a_notebook_with_an_integer_of_thousands_of_digits_is_linted(project, run):
    """Before: "internal error: ValueError: Exceeds the limit (4300 digits)", no findings for
    any file. The metadata's number does not matter to the code."""
    project.write("pyproject.toml", CONFIG)
    document = json.loads(notebook(("code", SETUP), ("code", NO_ZERO_GRAD)))
    document["metadata"]["n"] = 0
    project.write("nb.ipynb", json.dumps(document).replace('"n": 0', '"n": ' + "9" * 5000))
    assert _concise(run, "nb.ipynb") == [f"nb.ipynb:cell 2:line 5:5: TL001 [missing-zero-grad] {TL001_ALONE}"]


def test_an_indented_cell_is_read_as_ipython_reads_it_and_columns_are_as_written(project, run):
    """IPython strips the indentation of a cell's first line from every line (``leading_indent``)."""
    project.write("pyproject.toml", CONFIG)
    indented = "".join("  " + line if line else line for line in NO_ZERO_GRAD.splitlines(keepends=True))
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", "\n" + indented)))
    assert _concise(run, "nb.ipynb") == [f"nb.ipynb:cell 2:line 6:7: TL001 [missing-zero-grad] {TL001_ALONE}"]


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1 -r 1", "%%capture out", "%%prun -s cumulative",
                                   "%%debug", "%%memit"])
def test_cell_magics_that_run_python_have_their_body_linted(project, run, magic):
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", f"{magic}\n{NO_ZERO_GRAD}")))
    assert _concise(run, "nb.ipynb") == [f"nb.ipynb:cell 2:line 6:5: TL001 [missing-zero-grad] {TL001_ALONE}"]


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile train.py", "%%html", "%%script python", "%%sh"])
def test_other_cell_magics_mask_their_cell(project, run, magic):
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", notebook(("code", SETUP), ("code", f"{magic}\n{NO_ZERO_GRAD}")))
    assert run("check", "nb.ipynb", "--no-cache") == (0, "All checks passed! Checked 1 file.\n", "")


def test_mask_cell_strips_ipythons_leading_indent_and_keeps_the_line_count():
    assert mask_cell(["", "    x = 1", "    if x:", "        y = 2", "  z"]) == ["", "x = 1", "if x:", "    y = 2", "  z"]
    assert mask_cell(["\t%%time", "\tx = 1"]) == ["", "x = 1"]
    assert mask_cell(["%%timeit", "!ls", "f()"]) == ["", "pass", "f()"]
    read = read_notebook(notebook(("code", "a = 1\n"), ("code", "   b = 2\n   c = 3\n")).encode())
    assert read.text == "a = 1\nb = 2\nc = 3\n" and read.cells.to_json() == [[1, 1], [2, 2, 3], [0, 3]]
    assert Cells.from_json(read.cells.to_json()) == read.cells


def test_ipython_lines_continued_with_a_backslash_and_automagic_lines_are_masked(project, run):
    """``%run x \\`` and ``!cmd \\`` continue onto the next lines; ``pip install x`` and ``cd ..``
    are line magics under IPython's automagic (found in course notebooks: false TL000s)."""
    project.write("pyproject.toml", CONFIG)
    project.write("nb.ipynb", notebook(
        ("code", "%run Main.py  \\\n    --niter 10000   \\\n    --lr 0.001\n"),
        ("code", "!python train.py \\\n    --epochs 3\n"),
        ("code", "pip install torch-lr-finder\n"), ("code", "cd ../\n"), ("code", "ls -la data\n"),
        ("code", SETUP), ("code", NO_ZERO_GRAD)))
    assert _concise(run, "nb.ipynb") == [f"nb.ipynb:cell 7:line 5:5: TL001 [missing-zero-grad] {TL001_ALONE}"]


def test_a_name_that_is_python_is_not_taken_for_a_magic():
    assert mask_cell(["ls = [1, 2]", "pwd", "time = 3", "run(x)", "cd ../"]) == ["ls = [1, 2]", "pwd", "time = 3",
                                                                                "run(x)", "pass"]
    # an assignment, call or subscript continued on the next lines (the first line alone is no
    # Python): IPython never reads them as magics (config = ConfigDict(... gave a false TL000)
    multi = ["config = ConfigDict(", "    dict(a=1))", "time = (", "  3)", "who = [", "  1]", "env[k] = (", "  2)",
             "config.update(", "  a=1)"]
    assert mask_cell(multi) == multi


def test_notebook_checkpoints_are_not_linted(buggy, run):
    (buggy.root / ".ipynb_checkpoints").mkdir()
    (buggy.root / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_text(BUGGY)
    code, out, _ = run("check", ".", "--format", "concise", "--no-cache")
    assert ".ipynb_checkpoints" not in out and "nb.ipynb:cell 3" in out


def test_lines_a_message_names_are_counted_in_their_cell(project, run):
    """TL003 names the line of the ``eval()``: before, it counted lines across all cells
    ("line 224", past the end of every cell)."""
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL003"]\n')
    project.write("nb.ipynb", notebook(("code", SETUP + "model.eval()\n"),
                                       ("code", "for x, y in loader:\n    pred = model(x)\n    print(pred)\n"),
                                       ("code", "model.eval()\nout = model(x)\nprint(out)\n")))
    lines = _concise(run, "nb.ipynb")
    assert len(lines) == 2, lines
    assert "after `model.eval()` (cell 1, line 6)" in lines[0] and lines[0].startswith("nb.ipynb:cell 2:line 2:")
    assert "after `model.eval()` (line 1)" in lines[1] and lines[1].startswith("nb.ipynb:cell 3:line 2:")


def test_sarif_and_github_point_into_the_notebooks_json(buggy, run):
    """GitHub annotates the .ipynb file itself: the region is the JSON line nbformat wrote the
    source line on (one per array element), with its line hash, never the cell's own line."""
    from torchlint.formats.linehash import line_hashes, read_as_github

    raw = (buggy.root / "nb.ipynb").read_text().splitlines()
    code, out, _ = run("check", "nb.ipynb", "--format", "sarif", "--no-cache")
    results = json.loads(out)["runs"][0]["results"]
    assert [r["properties"]["cell"] for r in results] == [3, 5]
    hashes = line_hashes(read_as_github(buggy.root / "nb.ipynb"))
    for result, needle in zip(results, ('"    optimizer.step()\\n"', '"    losses.append(loss)\\n"')):
        region = result["locations"][0]["physicalLocation"]["region"]
        line = raw[region["startLine"] - 1]
        assert line.strip().rstrip(",") == needle, line
        assert line[region["startColumn"] - 1:].startswith(needle.strip('"')[4:])  # the code, after its indent
        assert result["partialFingerprints"]["primaryLocationLineHash"] == hashes[region["startLine"] - 1]
    code, out, _ = run("check", "nb.ipynb", "--format", "github", "--no-cache")
    first = out.splitlines()[0]
    step = next(i for i, text in enumerate(raw, 1) if '"    optimizer.step()\\n"' in text)
    assert f"line={step}," in first and "title=torchlint (TL001) in cell 3" in first
