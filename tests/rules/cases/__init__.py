"""Each rule's cases, one module per rule named as the rule's module
(``tests/rules/cases/tl001_missing_zero_grad.py`` for ``torchlint/checks/tl001_missing_zero_grad.py``):
``VALID``, code the rule must not report (``Valid``, or a plain string), and ``INVALID``, code
it must report with every finding's line and exact message and, where the findings carry a
fix, the whole file after ``--fix --unsafe-fixes`` (``Invalid``). ``tools/new_rule.py`` writes
a new rule's module; ``tests/test_rule_cases.py`` runs them all."""

from __future__ import annotations

import importlib
from pathlib import Path

from torchlint.rule import Invalid, Rule, Valid

HERE = Path(__file__).resolve().parent


def module_of(rule: type[Rule]) -> str:
    """The name of the cases module of ``rule`` (its own module's last part)."""
    return rule.__module__.rsplit(".", 1)[-1]


def cases_of(rule: type[Rule]) -> tuple[list[Valid], list[Invalid]]:
    """``rule``'s valid cases (each a ``Valid``) and invalid ones; none for a rule without a
    cases module (a rule a test defines)."""
    if not (HERE / f"{module_of(rule)}.py").exists():
        return [], []
    module = importlib.import_module(f"tests.rules.cases.{module_of(rule)}")
    valid = [Valid(case) if isinstance(case, str) else case for case in getattr(module, "VALID", [])]
    return valid, list(getattr(module, "INVALID", []))
