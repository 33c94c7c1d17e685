"""Every rule's cases (``tests/rules/cases/<rule module>.py``) and its catalog page's examples."""

from __future__ import annotations

import ast
import json
import re
import textwrap

import pytest

from tests.rules.cases import cases_of
from torchlint import catalog
from torchlint.finding import Finding
from torchlint.rule import Invalid, Valid, all_rules
from torchlint.testing import fix_snippet, lint_snippet

RULES = all_rules()
CASES = {rule.code: cases_of(rule) for rule in RULES}
# A traced rule's catalog blocks run `check --trace` (torch in a child process): slow
CATALOG_RULES = [pytest.param(r, marks=pytest.mark.slow) if r.traced else r for r in RULES]


def _valid_cases():
    for rule in RULES:
        for i, case in enumerate(CASES[rule.code][0]):
            yield pytest.param(rule, case, id=f"{rule.code}-valid-{i}")


def _invalid_cases():
    for rule in RULES:
        for i, case in enumerate(CASES[rule.code][1]):
            yield pytest.param(rule, case, id=f"{rule.code}-invalid-{i}")


@pytest.mark.parametrize(("rule", "case"), list(_valid_cases()))
def test_valid_case_is_not_reported(rule, case: Valid):
    findings = lint_snippet(case.code, select=[rule.code], path=case.path, options={rule.code: case.options})
    assert findings == [], f"{rule.code} reported on valid code:\n{case.code}\n{findings}"


@pytest.mark.parametrize(("rule", "case"), list(_invalid_cases()))
def test_invalid_case_is_reported(rule, case: Invalid):
    assert case.lines and len(case.messages) == len(case.lines), \
        f"{rule.code}: an invalid case states the line and the exact message of every finding"
    findings = lint_snippet(case.code, select=[rule.code], path=case.path, options={rule.code: case.options})
    assert findings, f"{rule.code} did not report on:\n{case.code}"
    findings.sort(key=lambda f: (f.line, f.column))
    assert all(f.rule == rule.code and f.name == rule.name and f.severity == rule.severity for f in findings)
    assert [f.line for f in findings] == list(case.lines), findings
    assert [f.message for f in findings] == list(case.messages)


def test_every_rule_has_enough_cases():
    for rule in RULES:
        if rule.code == "TL000" or rule.traced:  # TL000: the parser's cases; traced: tests/trace
            continue
        valid, invalid = CASES[rule.code]
        assert len(valid) >= 8, f"{rule.code}: {len(valid)} valid cases"
        assert len(invalid) >= 8, f"{rule.code}: {len(invalid)} invalid cases"


def test_rule_modules_hold_no_cases():
    """The cases live in tests/rules/cases/, not in the rule's module."""
    for rule in RULES:
        assert not hasattr(rule, "VALID") and not hasattr(rule, "INVALID"), rule.code


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_catalog_page_structure(rule):
    text = catalog.page(rule.code, rule.name)
    assert catalog.title(text) == f"{rule.code} {rule.name}"
    sections = catalog.sections(text)
    for heading in catalog.SECTIONS:
        assert heading in sections, f"{rule.code} page lacks '## {heading}'"
    assert catalog.first_paragraph(sections["What it does"])
    assert catalog.code_blocks(sections["Example"]), "Example needs a ```python block"
    assert catalog.code_blocks(sections["Use instead"]), "Use instead needs a ```python block"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_catalog_options_are_generated_from_rule_options(rule):
    raw = catalog.page_path(rule.code, rule.name).read_text(encoding="utf-8")
    block = catalog.generated_block(raw, catalog.OPTIONS_BLOCK)
    assert block is not None, f"{rule.code} page lacks the <!-- options:start/end --> markers under '## Options'"
    assert block == catalog.options_block(rule), "regenerate with: python tools/generate.py"
    options = catalog.sections(catalog.page(rule.code, rule.name))["Options"]
    assert options.startswith(block.strip()), f"{rule.code}: the generated block must open '## Options'"
    for key, opt in rule.options.items():  # what the block promises, stated plainly
        assert f"`{key}`" in options and f"default `{json.dumps(opt.default)}`" in options


def test_catalog_page_hides_generated_block_markers():
    for rule in RULES:
        assert ":start -->" not in catalog.page(rule.code, rule.name)


def _findings(rule, block: str, tmp_path, monkeypatch) -> list:
    """Static rules lint the block in memory; traced rules run ``check --trace`` on it."""
    if not rule.traced:
        return lint_snippet(block, select=[rule.code], path="train.py")
    pytest.importorskip("torch")
    from torchlint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(block)
    out = tmp_path / "out.json"
    code = main(["check", "--isolated", "--no-cache", "--trace", "--select", rule.code, "--format", "json",
                 "-o", str(out), "model.py"])
    assert code in (0, 1)
    derived = ("url", "fingerprint")  # --format json adds them to a finding's fields
    return [Finding.from_dict({k: v for k, v in d.items() if k not in derived}) for d in json.loads(out.read_text())]


@pytest.mark.parametrize("rule", CATALOG_RULES, ids=[r.code for r in RULES])
def test_catalog_example_is_reported(rule, tmp_path, monkeypatch):
    sections = catalog.sections(catalog.page(rule.code, rule.name))
    for block in catalog.code_blocks(sections["Example"]):
        findings = _findings(rule, block, tmp_path, monkeypatch)
        assert findings, f"{rule.code}: catalog Example not reported:\n{block}"
        assert {f.rule for f in findings} == {rule.code}


@pytest.mark.parametrize("rule", CATALOG_RULES, ids=[r.code for r in RULES])
def test_catalog_use_instead_is_clean(rule, tmp_path, monkeypatch):
    sections = catalog.sections(catalog.page(rule.code, rule.name))
    for block in catalog.code_blocks(sections["Use instead"]):
        assert _findings(rule, block, tmp_path, monkeypatch) == [], block


def test_every_catalog_page_belongs_to_a_rule():
    names = {f"{r.code}-{r.name}.md" for r in RULES}
    pages = {p.name for p in catalog.catalog_dir().glob("*.md")} - {"README.md"}
    assert pages <= names, f"pages without a rule: {pages - names}"


# -- fixes -------------------------------------------------------------------------------

@pytest.mark.parametrize(("rule", "case"), list(_invalid_cases()))
def test_invalid_case_fix(rule, case: Invalid):
    """A case whose findings carry a fix states the code after it (``fixed``, with unsafe fixes
    applied), and the fix: makes exactly that code, which parses, where the rule reports only
    the findings that had no fix, and which fixing again leaves as it is. A case without a fix
    states none."""
    findings = lint_snippet(case.code, select=[rule.code], path=case.path, options={rule.code: case.options})
    fixes = [f.fix for f in findings if f.fix is not None]
    assert {fix.applicability for fix in fixes} <= set(rule.fixable), \
        f"{rule.code} attaches fixes it does not declare in `fixable`: {fixes}"
    if case.fixed is None:
        assert not fixes, f"{rule.code}: the case's findings carry fixes; state the code after them (fixed=...)"
        return
    assert fixes, f"{rule.code}: `fixed` is given but no finding carries a fix"
    options = {rule.code: case.options}
    fixed = fix_snippet(case.code, [rule.code], path=case.path, options=options)
    assert fixed == textwrap.dedent(case.fixed), f"{rule.code} fixed the case into:\n{fixed}"
    ast.parse(fixed)
    left = lint_snippet(fixed, select=[rule.code], path=case.path, options=options)
    assert len(left) == len(findings) - len(fixes) and not any(f.fix for f in left), \
        f"{rule.code} still reports what it fixed:\n{fixed}\n{left}"
    assert fix_snippet(fixed, [rule.code], path=case.path, options=options) == fixed, "fixing twice changed the code"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_fix_safety_section_matches_fixable(rule):
    """The page's ``## Fix safety`` is written and says what the rule's ``fixable`` declares:
    each applicability of the fixes it attaches (as a word: "unsafe" does not say "safe"), or,
    for a rule that attaches none, that it has no fix ("no fix", "no automatic fix", ...)."""
    text = catalog.sections(catalog.page(rule.code, rule.name))["Fix safety"].lower()
    assert text.strip() and "todo" not in text, f"{rule.code}: fill in ## Fix safety"
    if not rule.fixable:
        assert re.search(r"\bno (automatic |auto)?fix(es)?\b|\bnot (auto)?fixable\b|\bno single (mechanical )?edit\b",
                         text), f"{rule.code}: a rule without fixes says so ('no fix') in ## Fix safety"
    for applicability in rule.fixable:
        assert re.search(rf"\b{applicability}\b", text), \
            f"{rule.code}: ## Fix safety does not say its fix is {applicability}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.fixable], ids=[r.code for r in RULES if r.fixable])
def test_a_fixable_rule_has_a_fixed_case(rule):
    assert any(case.fixed is not None for case in CASES[rule.code][1]), f"{rule.code}: no invalid case shows its fix"
