"""Autofix: ``--fix``, ``--unsafe-fixes``, ``--diff``, ``--fix-only``, the configuration keys,
the fix loop (``run.fix_files``), edits (``torchlint.fixes``) and how fixes are reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import Edit, Fix, apply_fixes, unified_diff

# TL008 (a safe fix) and TL009 (an unsafe one).
CODE = """\
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5)  # keep this comment


def step(h, y):
    return F.cross_entropy(F.softmax(h, dim=1), y)
"""
SAFE_FIXED = CODE.replace("F.dropout(x, 0.5)", "F.dropout(x, 0.5, training=self.training)")
ALL_FIXED = SAFE_FIXED.replace("F.cross_entropy(F.softmax(h, dim=1), y)", "F.cross_entropy(h, y)")
SELECT = ("--select", "TL008,TL009", "--no-cache")


def test_fix_applies_safe_fixes_only_and_says_what_is_left(project, run):
    path = project.write("model.py", CODE)
    code, out, err = run("check", *SELECT, "--fix", "--format", "concise", ".")
    assert path.read_text() == SAFE_FIXED
    assert code == 1  # the unsafe fix's finding remains
    assert "torchlint: 1 fixed, 1 remaining (1 fixable with --unsafe-fixes)" in err
    assert "model.py:11:28: TL009 [activation-before-loss]" in out  # no [*]: --fix does not apply it
    assert "TL008" not in out


def test_unsafe_fixes_apply_both(project, run):
    path = project.write("model.py", CODE)
    code, out, err = run("check", *SELECT, "--fix", "--unsafe-fixes", ".")
    assert path.read_text() == ALL_FIXED
    assert code == 0
    assert "torchlint: 2 fixed, 0 remaining" in err


def test_text_formats_mark_what_fix_would_fix(project, run):
    project.write("model.py", CODE)
    code, out, _ = run("check", *SELECT, "--format", "concise", ".")
    assert code == 1
    assert "model.py:7:16: TL008 [*] [functional-dropout-ignores-eval]" in out
    assert "TL009 [activation-before-loss]" in out
    assert out.rstrip().endswith("[*] 1 fixable with --fix (1 more with --unsafe-fixes)")
    _, out, _ = run("check", *SELECT, "--unsafe-fixes", "--format", "concise", ".")
    assert "TL009 [*] [activation-before-loss]" in out
    assert out.rstrip().endswith("[*] 2 fixable with --fix")
    _, out, _ = run("check", "--select", "TL009", "--no-cache", "--format", "concise", ".")
    assert out.rstrip().endswith("Checked 1 file.\n1 fixable with --fix --unsafe-fixes")


def test_fix_only_reports_nothing_and_exits_0(project, run):
    path = project.write("model.py", CODE)
    code, out, err = run("check", *SELECT, "--fix-only", ".")
    assert (code, out) == (0, "")
    assert path.read_text() == SAFE_FIXED
    assert "1 fixed, 1 remaining" in err


def test_diff_writes_nothing_and_applies_with_git_and_patch(project, run, tmp_path):
    path = project.write("pkg/model.py", CODE)
    code, out, err = run("check", *SELECT, "--diff", "--unsafe-fixes", ".")
    assert code == 1 and path.read_text() == CODE
    assert out.startswith("--- a/pkg/model.py\n+++ b/pkg/model.py\n")
    assert "2 would be fixed, 0 remaining" in err
    (tmp_path / "fix.diff").write_text(out)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        subprocess.run(["git", "apply", "--check", "fix.diff"], cwd=tmp_path, check=True)
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-s", "-i", "fix.diff"], cwd=tmp_path, check=True)
        assert path.read_text() == ALL_FIXED
        assert run("check", *SELECT, "--diff", "--unsafe-fixes", ".")[:2] == (0, "")  # nothing left to fix


def test_diff_of_nothing_exits_0(project, run):
    project.write("model.py", "import torch\n")
    assert run("check", *SELECT, "--diff", ".")[:2] == (0, "")


def test_crlf_and_mode_are_kept(project, run):
    path = project.write("model.py", CODE.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    assert run("check", *SELECT, "--fix", "--unsafe-fixes", ".")[0] == 0
    assert path.read_bytes() == ALL_FIXED.replace("\n", "\r\n").encode()
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_suppressed_findings_are_not_fixed(project, run):
    code = CODE.replace("# keep this comment", "# noqa: TL008")
    path = project.write("model.py", code)
    run("check", *SELECT, "--fix", ".")
    assert path.read_text() == code


def test_findings_the_baseline_hides_are_not_fixed(project, run):
    path = project.write("model.py", CODE)
    assert run("check", *SELECT, "--write-baseline", "baseline.json", ".")[0] == 0
    code, _, err = run("check", *SELECT, "--baseline", "baseline.json", "--fix", "--unsafe-fixes", ".")
    assert code == 0 and path.read_text() == CODE
    assert "0 fixed, 0 remaining" in err


def test_configuration_keys(project, run):
    project.write("pyproject.toml", '[tool.torchlint]\nfix = true\nunsafe-fixes = true\nunfixable = ["TL008"]\n')
    path = project.write("model.py", CODE)
    run("check", *SELECT, ".")
    assert path.read_text() == CODE.replace("F.cross_entropy(F.softmax(h, dim=1), y)", "F.cross_entropy(h, y)")
    path.write_text(CODE)
    run("check", *SELECT, "--no-fix", ".")
    assert path.read_text() == CODE
    assert run("check", *SELECT, "--show-files", ".")[:2] == (0, "model.py\n")  # fix = true does not get in the way
    assert run("check", *SELECT, "--add-noqa", ".")[0] == 0 and "# noqa: TL008" in path.read_text()
    project.write("pyproject.toml", '[tool.torchlint]\nfixable = "TL008"\n')
    code, _, err = run("check", *SELECT, "--fix", ".")
    assert code == 2 and "fixable" in err and "Traceback" not in err
    project.write("pyproject.toml", '[tool.torchlint]\nfix = "yes"\n')
    code, _, err = run("check", *SELECT, ".")
    assert code == 2 and "fix" in err


def test_fix_cannot_go_with_add_noqa(project, run):
    project.write("model.py", CODE)
    code, _, err = run("check", "--fix", "--add-noqa", ".")
    assert code == 2 and "--fix cannot be used with --add-noqa" in err
    code, _, err = run("check", "--diff", "--trace", ".")  # the trace would import the unfixed code
    assert code == 2 and "--diff cannot be used with --trace" in err


def test_json_and_sarif_carry_the_fix(project, run):
    project.write("model.py", CODE)
    _, out, _ = run("check", *SELECT, "--format", "json", ".")
    fixes = [f.get("fix") for f in json.loads(out)]
    assert fixes[0] == {"title": "Pass training=self.training", "applicability": "safe", "edits": [
        {"line": 7, "column": 32, "end_line": 7, "end_column": 32, "content": ", training=self.training"}]}
    assert fixes[1]["applicability"] == "unsafe"
    _, out, _ = run("check", *SELECT, "--format", "sarif", ".")
    result = json.loads(out)["runs"][0]["results"][0]
    change = result["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "model.py"
    assert change["replacements"] == [{"deletedRegion": {"startLine": 7, "startColumn": 32, "endLine": 7, "endColumn": 32},
                                       "insertedContent": {"text": ", training=self.training"}}]
    assert result["fixes"][0]["properties"] == {"applicability": "safe"}


def test_the_fix_survives_the_cache(project, run):
    path = project.write("model.py", CODE)
    assert run("check", "--select", "TL008,TL009", ".")[0] == 1  # fills the cache
    _, out, _ = run("check", "--select", "TL008,TL009", "--format", "json", ".")
    assert json.loads(out)[0]["fix"]["title"] == "Pass training=self.training"
    assert run("check", "--select", "TL008,TL009", "--fix", "--unsafe-fixes", ".")[0] == 0
    assert path.read_text() == ALL_FIXED


def test_rules_shows_a_fix_column(run):
    _, out, _ = run("rules")
    assert out.splitlines()[0].split()[:5] == ["Code", "Name", "Default", "Severity", "Fix"]
    assert [line.split()[4] for line in out.splitlines() if line.startswith(("TL008", "TL009", "TL005"))] == \
        ["-", "safe", "unsafe"]
    _, out, _ = run("rules", "--format", "json")
    assert {r["rule"]: r["fixable"] for r in json.loads(out)}["TL009"] == ["unsafe"]


# -- the fix loop ------------------------------------------------------------------------

def _finding(path: str, fix: Fix) -> Finding:
    return Finding("TL008", "functional-dropout-ignores-eval", Severity.WARNING, path, 1, 1, 1, 2, "m", fix=fix)


def _run_loop(tmp_path: Path, monkeypatch, text: str, fix: Fix):
    """``fix_files`` on one file whose every lint reports one finding with ``fix``."""
    from torchlint import run as run_layer
    from torchlint.files import SourceFile
    from torchlint.testing import make_settings

    path = tmp_path / "m.py"
    path.write_text(text)
    monkeypatch.setattr(run_layer, "lint_files", lambda *a, **k: run_layer.RunResult([_finding("m.py", fix)], [], ["m.py"]))
    files = [SourceFile(path, "m.py")]
    return run_layer.fix_files(files, make_settings(), tmp_path, applies=lambda f: True)


def test_a_fix_that_keeps_coming_back_is_reported(tmp_path, monkeypatch):
    fix = Fix.safe("add a line", Edit(Span(1, 1, 1, 1), "pass\n"))
    outcome = _run_loop(tmp_path, monkeypatch, "x = 1\n", fix)
    assert [p for p, _ in outcome.problems] == ["m.py"]
    assert "after 10 passes" in outcome.problems[0][1]
    assert outcome.changed["m.py"] == (b"x = 1\n", b"pass\n" * 10 + b"x = 1\n")


def test_a_fix_that_breaks_the_code_is_not_kept(tmp_path, monkeypatch):
    fix = Fix.safe("break it", Edit(Span(1, 1, 1, 1), "def ("))
    outcome = _run_loop(tmp_path, monkeypatch, "x = 1\n", fix)
    assert outcome.changed == {} and "does not compile" in outcome.problems[0][1]


def test_a_file_changed_on_disk_is_not_written(project, run, monkeypatch):
    from torchlint import cli

    path = project.write("model.py", CODE)
    real = cli.report_fixes

    def meddle(outcome, files, settings, args):
        path.write_text(CODE + "# edited meanwhile\n")
        return real(outcome, files, settings, args)

    monkeypatch.setattr(cli, "report_fixes", meddle)
    code, _, err = run("check", *SELECT, "--fix", ".")
    assert code == 2 and "changed on disk" in err
    assert path.read_text() == CODE + "# edited meanwhile\n"


# -- edits -------------------------------------------------------------------------------

def test_overlapping_fixes_wait_for_the_next_pass_and_equal_ones_count_once():
    a = Fix.safe("a", Edit(Span(1, 1, 1, 2), "X"))
    b = Fix.safe("b", Edit(Span(1, 1, 1, 3), "Y"))
    c = Fix.safe("c", Edit(Span(2, 1, 2, 1), "Z"))
    text, applied = apply_fixes("abc\nde\n", [a, b, c, Fix.safe("a", Edit(Span(1, 1, 1, 2), "X"))])
    assert text == "Xbc\nZde\n"
    assert applied == [a, c, a]


def test_fix_json_round_trip_and_validation():
    fix = Fix.unsafe("t", Edit(Span(1, 2, 3, 4), "new"))
    assert Fix.from_json(fix.to_json()) == fix and Fix.valid_json(fix.to_json())
    assert not Fix.valid_json({"title": "t", "applicability": "maybe", "edits": []})
    assert not Fix.valid_json({"title": "t", "applicability": "safe", "edits": [[0, 1, 1, 1, "x"]]})


def test_unified_diff_marks_a_missing_last_newline():
    diff = unified_diff("m.py", "a = 1\nb = 2", "a = 1\nb = 3")
    assert diff.endswith("-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n")


def test_an_inserted_line_takes_the_files_line_ending(project, run):
    loop = ("import torch\n\n\ndef train(model, loader, loss_fn):\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        loss.backward()\n"
            "        optimizer.step()\n")
    path = project.write("train.py", loop.replace("\n", "\r\n").encode())
    assert run("check", "--select", "TL001", "--no-cache", "--fix", "--unsafe-fixes", ".")[0] == 0
    fixed = loop.replace("    for x, y in loader:\n", "    for x, y in loader:\n        optimizer.zero_grad()\n")
    assert path.read_bytes() == fixed.replace("\n", "\r\n").encode()


def _stdin(monkeypatch, text: str) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_standard_input_is_fixed_as_ruff_fixes_it(project, run, monkeypatch):
    """``--fix -`` prints the fixed source on standard output (the input where nothing was
    fixed) and what remains on standard error; ``--diff -`` prints the diff; nothing is written."""
    _stdin(monkeypatch, CODE)
    code, out, err = run("check", *SELECT, "--fix", "--format", "concise", "-", "--stdin-filename", "model.py")
    assert out == SAFE_FIXED and code == 1  # the unsafe fix's finding remains, on standard error
    assert "torchlint: 1 fixed, 1 remaining (1 fixable with --unsafe-fixes)" in err
    assert "model.py:11:28: TL009 [activation-before-loss]" in err
    assert not (project.root / "model.py").exists()
    _stdin(monkeypatch, CODE)
    code, out, err = run("check", *SELECT, "--fix", "--unsafe-fixes", "-")
    assert (code, out) == (0, ALL_FIXED) and "1 remaining" not in err
    _stdin(monkeypatch, CODE)
    code, out, _ = run("check", *SELECT, "--fix-only", "-q", "-")
    assert (code, out) == (0, SAFE_FIXED)
    _stdin(monkeypatch, ALL_FIXED)  # nothing to fix: the input itself
    assert run("check", *SELECT, "--fix", "-")[:2] == (0, ALL_FIXED)
    _stdin(monkeypatch, CODE)
    code, out, _ = run("check", *SELECT, "--diff", "-")
    assert code == 1 and out.startswith("--- a/-\n+++ b/-\n") and "+        return F.dropout(x, 0.5, training=self.training)" in out
    _stdin(monkeypatch, CODE)  # without a fixing flag: findings marked fixable, nothing printed but the report
    code, out, _ = run("check", *SELECT, "--format", "concise", "-")
    assert code == 1 and "TL008 [*]" in out and "import torch.nn" not in out


def _notebook(*sources, as_list: bool = True, indent: int = 1, ensure_ascii: bool = False) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# A notebook \u00e9\n"]}]
    for source in sources:
        cells.append({"cell_type": "code", "metadata": {"tags": ["x"]}, "execution_count": 3,
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": ["done\n"]}],
                      "source": source.splitlines(keepends=True) if as_list else source})
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                       "metadata": {"language_info": {"name": "python"}}}, indent=indent, ensure_ascii=ensure_ascii,
                      sort_keys=True) + "\n"


@pytest.mark.parametrize("as_list, indent, ensure_ascii", [(True, 1, False), (False, 1, False), (True, 2, True),
                                                          (True, None, False)])
def test_a_notebook_is_fixed_in_its_cells_and_every_other_byte_stays(project, run, as_list, indent, ensure_ascii):
    """The fixes edit the cells' sources in the JSON; the rest (metadata, outputs, markdown,
    layout, escapes) stays byte for byte: the fixed file is what nbformat would write for
    the fixed cells."""
    header, model = CODE.split("\n\n\nclass", 1)
    text = _notebook("%matplotlib inline\n" + header + "\n", "class" + model.rstrip("\n"), as_list=as_list,
                     indent=indent, ensure_ascii=ensure_ascii)
    path = project.write("model.ipynb", text)
    code, out, _ = run("check", *SELECT, "--format", "concise", ".")
    assert "model.ipynb:cell 3:line 3:16: TL008 [*]" in out
    assert run("check", *SELECT, "--fix", "--unsafe-fixes", ".")[0] == 0
    fixed_header, fixed_model = ALL_FIXED.split("\n\n\nclass", 1)
    assert path.read_text(encoding="utf-8") == _notebook("%matplotlib inline\n" + fixed_header + "\n",
                                                         "class" + fixed_model.rstrip("\n"), as_list=as_list,
                                                         indent=indent, ensure_ascii=ensure_ascii)


def test_a_notebook_fix_in_a_cell_ipython_indents_and_never_on_a_masked_line(project, run):
    # IPython strips a cell's common indentation: the fix lands at the columns as written
    cell = "".join("    " + line if line.strip() else line for line in CODE.splitlines(keepends=True))
    path = project.write("model.ipynb", _notebook(cell))
    assert run("check", *SELECT, "--fix", ".")[0] == 1
    assert "F.dropout(x, 0.5, training=self.training)  # keep this comment" in json.loads(path.read_text())[
        "cells"][1]["source"][6]
    # a finding on a line whose IPython syntax was masked carries no fix (nothing edits it)
    from torchlint.notebook import in_cells, read_notebook

    notebook = read_notebook(_notebook("x = 1\n!pip install torch\ny = 2\n").encode())
    finding = Finding("TL008", "n", Severity.WARNING, "p.ipynb", 1, 1, 1, 2, "m", fix=Fix.safe("t", Edit(Span(1, 1, 1, 1), "z")))
    assert in_cells(finding, notebook.cells.to_json()).fix == finding.fix
    on_magic = replace(finding, line=2, end_line=2, fix=Fix.safe("t", Edit(Span(2, 1, 2, 1), "z")))
    assert in_cells(on_magic, notebook.cells.to_json()).fix is None


def test_a_notebooks_fix_in_json_is_in_its_cells_lines_and_sarif_has_none(project, run):
    text = _notebook("import torch\n", CODE)
    project.write("model.ipynb", text)
    _, out, _ = run("check", *SELECT, "--format", "json", ".")
    tl008 = next(f for f in json.loads(out) if f["rule"] == "TL008")
    assert (tl008["cell"], tl008["line"]) == (3, 7)
    assert [(e["line"], e["end_line"]) for e in tl008["fix"]["edits"]] == [(7, 7)]
    _, out, _ = run("check", *SELECT, "--format", "sarif", ".")
    assert not any("fixes" in r for r in json.loads(out)["runs"][0]["results"])


# -- fixes never corrupt: one read, compile check, one fixing run at a time ------------------

def test_a_fix_compiled_away_by_cpythons_compiler_is_not_kept(tmp_path, monkeypatch):
    """``ast.parse`` accepts a keyword argument given twice; the compiler does not."""
    fix = Fix.safe("twice", Edit(Span(1, 6, 1, 6), ", k=2"))
    outcome = _run_loop(tmp_path, monkeypatch, "f(k=1)\n", fix)
    assert outcome.changed == {} and "does not compile" in outcome.problems[0][1]


def test_edits_are_never_applied_to_bytes_other_than_those_they_were_computed_on(project, run, monkeypatch):
    """A line deleted while the fix run analyses the file: the edits computed on the old bytes
    are not applied to the new ones (before, ``loss.detach()``-style edits landed at shifted
    positions), and the edited file is not written."""
    from torchlint import run as run_layer

    path = project.write("model.py", CODE)
    real = run_layer.lint_files
    edited = "# a line added while torchlint runs\n" + CODE.replace("import torch.nn as nn\n", "", 1)

    def meddle(files, *args, **kwargs):
        if path.read_text() == CODE:
            path.write_text(edited)
        return real(files, *args, **kwargs)

    monkeypatch.setattr(run_layer, "lint_files", meddle)
    code, _, err = run("check", *SELECT, "--fix", ".")
    assert code == 2 and "model.py: changed on disk while torchlint fixed it; not written" in err
    assert path.read_text() == edited


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def test_two_fix_runs_at_once_leave_every_file_fixed_once(tmp_path):
    """Editors and pre-commit run fixes concurrently: two ``--fix --unsafe-fixes`` processes on
    one tree, again and again; every file compiles and equals the result of one run alone
    (each fix applied once: no ``model.eval()`` twice, no ``training=`` given twice)."""
    import sys

    source = Path(__file__).resolve().parents[2] / "fixtures" / "buggy_project"
    reference = tmp_path / "reference"
    shutil.copytree(source, reference)
    command = [sys.executable, "-m", "torchlint", "check", "--fix", "--unsafe-fixes", "--no-cache", "-q", "."]
    subprocess.run(command, cwd=reference, capture_output=True, timeout=300)
    expected = _tree(reference)
    assert expected != _tree(source)  # there is something to fix
    for trial in range(6):
        tree = tmp_path / f"trial{trial}"
        shutil.copytree(source, tree)
        runs = [subprocess.Popen(command, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        for proc in runs:
            proc.communicate(timeout=300)
        got = _tree(tree)
        for name, data in got.items():
            compile(data, name, "exec")
        assert got == expected, trial
