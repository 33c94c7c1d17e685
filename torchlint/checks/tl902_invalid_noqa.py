"""TL902 invalid-noqa: a malformed noqa comment, or one naming a rule that does not exist.

Found by ``torchlint.noqa.scan``, which lexes noqa comments as ruff does, and reported by the
engine's suppression step (``torchlint.noqa.noqa_findings``). It covers what ruff reports
as lexer warnings, RUF102 (invalid rule code) and PGH004's missing colon: a directive that
silences nothing because it is malformed (``#noqaTL001``, ``# noqa:`` without a code,
``# noqa: TL001abc``), one that silences every rule because its colon is missing
(``# noqa TL002``), and a ``TL`` code or a rule name after a comma that names no rule.
Free text after ``noqa:`` (``# noqa: kept for flake8``) is flake8's blanket noqa: it is
reported only when a torchlint finding on its line is left unsilenced.
Codes of other tools are never reported.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class InvalidNoqa(Rule):
    code = codes.INVALID_NOQA
    name = "invalid-noqa"
    severity = Severity.WARNING
    summary = "A malformed noqa comment, or one naming a rule that does not exist"
    # Reported by the engine's suppression step (torchlint.noqa), not by visiting a tree: it has
    # no visitor, and this precheck keeps it from making the engine parse a file for nothing.
    requires_text = ("noqa", "NOQA")

