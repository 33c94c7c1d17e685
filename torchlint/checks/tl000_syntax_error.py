"""TL000 syntax-error: the file could not be read or parsed, so nothing in it was checked."""

from __future__ import annotations

from torchlint.finding import Severity
from torchlint.rule import Invalid, Rule


class SyntaxErrorRule(Rule):
    code = "TL000"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "File could not be read or parsed; none of its code was checked"
    precision = "very-high"  # SARIF: a file that does not parse is never a false alarm
    # Reported by the engine itself (torchlint.engine), not by visiting a tree.

    VALID = ["import torch\n\nx = torch.zeros(3)\n"]
    INVALID = [
        Invalid(
            "def train(:\n    pass\n",
            lines=(1,),
            messages=("syntax error: invalid syntax; nothing in this file was checked",),
        ),
        Invalid(
            "x = (" * 300 + "1" + ")" * 300 + "\n",
            lines=(1,),
            messages=("syntax error: too many nested parentheses; nothing in this file was checked",),
        ),
        Invalid(
            "x = " + "-" * 50000 + "1\n",
            lines=(1,),
            messages=("file is nested too deeply to analyse (ran out of stack); nothing in this file was checked",),
        ),
    ]
