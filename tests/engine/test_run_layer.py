"""The run layer's shape (issue 11 item 5): data flows one way, one way to build a finding,
``skip-tests`` handled once, rule metadata read from the rule classes."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import torchlint
from torchlint.finding import Finding, Span
from torchlint.rule import all_rules
from torchlint.testing import lint_tree

PACKAGE = Path(torchlint.__file__).parent


def _imports(module: str) -> set[str]:
    """Every torchlint module ``module`` imports, at any depth of its code (function-level
    and ``TYPE_CHECKING`` imports included)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("torchlint"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("torchlint"))
    return found


@pytest.mark.parametrize("module, forbidden", [
    ("engine", {"torchlint.pool", "torchlint.cache", "torchlint.run"}),
    ("pool", {"torchlint.cache", "torchlint.run"}),
    ("cache", {"torchlint.pool", "torchlint.run"}),
])
def test_data_flows_one_way(module, forbidden):
    assert not _imports(module) & forbidden


def test_the_run_layer_drives_engine_cache_and_pool():
    imported = _imports("run")
    assert {"torchlint.engine", "torchlint.pool"} <= imported
    assert "torchlint.cache" in imported  # for its type only: the caller makes the cache


def _package_files():
    return [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]


def test_findings_are_built_only_by_finding_at():
    """``Finding(...)`` is called nowhere but in ``finding.py`` (``Finding.at``, ``from_dict``)."""
    offenders = []
    for path in _package_files():
        if path.name == "finding.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Finding":
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_one_location_encoding():
    """LibCST ranges become 1-based spans in ``Span.of_range`` only."""
    offenders = [str(p.relative_to(PACKAGE)) for p in _package_files()
                 if p.name != "finding.py" and "start.column + 1" in p.read_text()]
    assert offenders == []
    assert Span.from_json(Span(1, 2, 3, 4).to_json()) == Span(1, 2, 3, 4)


def test_rule_codes_and_names_are_not_copied_outside_their_rule_modules():
    """TL000/TL005/TL100 (and every other rule's) code and name are read from the rule class,
    the registry generated from the classes, or ``codes`` (the codes the core names): no string
    constant equal to one appears in torchlint's code anywhere else."""
    metadata = {r.code for r in all_rules()} | {r.name for r in all_rules()}
    offenders = []
    for path in _package_files():
        if "checks" in path.relative_to(PACKAGE).parts or path.name in ("registry.py", "codes.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in metadata:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert offenders == []


def test_finding_at_takes_the_rules_metadata():
    rule = next(r for r in all_rules() if r.code == "TL000")
    f = Finding.at(rule, "a.py", Span.point(3, 5), "m", extra={"k": 1})
    assert (f.rule, f.name, f.severity, f.line, f.column, f.end_line, f.end_column) == (
        "TL000", "syntax-error", rule.severity, 3, 5, 3, 6)
    assert f.span == Span(3, 5, 3, 6) and f.extra == {"k": 1}


# -- skip-tests: declared by the rule, applied by the engine and the run layer --------------

def test_rules_that_skip_test_files_declare_the_option_and_never_check_it_themselves():
    skipping = [r for r in all_rules() if r.skips_test_files]
    assert {r.code for r in skipping} >= {"TL003", "TL004", "TL006"}
    for rule in all_rules():
        assert ("skip-tests" in rule.options) == rule.skips_test_files, rule.code
        source = Path(sys.modules[rule.__module__].__file__).read_text()
        assert "is_test_file(" not in source, rule.code


UNSEEDED = "import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n"
EVAL = "import torch\nmodel.eval()\nout = model(x)\n"


@pytest.mark.parametrize("code, source", [("TL006", UNSEEDED), ("TL003", EVAL)])
def test_skip_tests_is_applied_by_the_run_layer(code, source):
    assert lint_tree({"train.py": source}, select=[code])  # a finding outside tests
    assert lint_tree({"tests/test_train.py": source}, select=[code]) == []
    kept = lint_tree({"tests/test_train.py": source}, select=[code], options={code: {"skip-tests": False}})
    assert [f.path for f in kept] == ["tests/test_train.py"]


def test_a_skipping_rule_without_a_project_pass_is_not_run_on_test_files(monkeypatch):
    from torchlint import engine
    from torchlint.checks.tl003_eval_without_no_grad import EvalWithoutNoGrad

    ran = []
    monkeypatch.setattr(EvalWithoutNoGrad, "finish", lambda self: ran.append(self.ctx.path))
    # TL003 has a project pass (a test file's calls under no_grad count): pretend it has none
    monkeypatch.setattr(EvalWithoutNoGrad, "has_project_pass", classmethod(lambda cls: False))
    engine.analyze_source("tests/test_x.py", EVAL.encode(), frozenset({"TL003"}))
    engine.analyze_source("x.py", EVAL.encode(), frozenset({"TL003"}))
    assert ran == ["x.py"]


def test_a_pool_takes_the_largest_files_first_and_results_keep_their_order(tmp_path):
    # With several workers the long files start first (no worker finishing one alone at the
    # end); the results still come back in the files' own order.
    from torchlint import run
    from torchlint.config import Settings
    from torchlint.files import SourceFile

    sizes = {"a.py": 10, "b.py": 3000, "c.py": 200}
    files = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_text("x = 1\n" + "#" * size + "\n")
        files.append(SourceFile(path, name))
    files.append(SourceFile(tmp_path / "gone.py", "gone.py"))
    files.append(SourceFile(tmp_path / "stdin.py", "stdin.py", data=b"y = 2\n" + b"#" * 1000))
    assert run._largest_first(files) == [1, 4, 2, 0, 3]
    settings = Settings(enabled=frozenset({"TL000"}), rule_options={}, root=tmp_path)
    results = run.analyse(files, settings, jobs=2)
    assert [r.path for r in results] == [f.display for f in files]
    assert "cannot read file" in results[3].findings[0].message
