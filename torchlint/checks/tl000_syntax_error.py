"""TL000 syntax-error: the file could not be read or parsed, so nothing in it was checked."""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class SyntaxErrorRule(Rule):
    code = codes.SYNTAX_ERROR
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "File could not be read or parsed; none of its code was checked"
    precision = "very-high"  # SARIF: a file that does not parse is never a false alarm
    # Reported by the engine itself (torchlint.engine), not by visiting a tree.

