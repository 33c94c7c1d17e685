"""TL011 model-mode: evaluation without model.eval(), or model.eval() in the epoch loop with no model.train() before the next training step

TODO: how the rule finds it, for maintainers (what it tracks, what it leaves alone); the
user-facing description is rules/TL011-model-mode.md.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Invalid, Option, Rule, Valid


class ModelMode(Rule):
    code = "TL011"
    name = "model-mode"
    severity = Severity.WARNING
    default_enabled = True
    summary = 'evaluation without model.eval(), or model.eval() in the epoch loop with no model.train() before the next training step'
    # [tool.torchlint.model-mode]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    # Substrings one of which a file must contain for the rule to fire (skips the rest).
    requires_text: tuple[str, ...] = ()

    # TODO: at least 8 of each (tests/test_rule_cases.py counts them).
    VALID: list[Valid | str] = [
        # Code that must stay silent, each a trap: "...", or Valid("...", path=..., options=...).
    ]
    INVALID: list[Invalid] = [
        # Invalid("...", lines=(N,), messages=("the exact message",)), one message per finding.
    ]

    # TODO: the logic. The engine walks each file once and calls visit_<Node>/leave_<Node>;
    # report with self.report(node, message). See CONTRIBUTING.md.
    # def visit_Call(self, node: cst.Call) -> None:
    #     ...
