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

from torchlint.finding import Severity
from torchlint.rule import Invalid, Rule, Valid


class InvalidNoqa(Rule):
    code = "TL902"
    name = "invalid-noqa"
    severity = Severity.WARNING
    summary = "A malformed noqa comment, or one naming a rule that does not exist"
    # Reported by the engine's suppression step (torchlint.noqa), not by visiting a tree: it has
    # no visitor, and this precheck keeps it from making the engine parse a file for nothing.
    requires_text = ("noqa", "NOQA")

    VALID: list[Valid | str] = [
        "x = 1  # noqa\n",
        "x = 1  # noqa: TL001, TL002\n",
        "x = 1  # noqa : TL002\n",  # ruff allows space before the colon
        "x = 1  # noqa: missing-zero-grad, TL004\n",
        "x = 1  # noqa: E501 line too long, kept for the table\n",  # another tool's code, then an explanation
        "x = 1  # noqa because the test needs it\n",  # a blanket noqa with an explanation
        "x = 1  # noqa:TL001,,TL002\n",
        'x = "# noqa: TL999"\n',  # inside a string
        "# torchlint: noqa: TL004\nx = 1\n",
        "x = 1  # see the noqa docs\n",  # mentions noqa, is none
        # free text after ``noqa:`` (flake8's blanket noqa) on a line torchlint reports nothing on:
        # another tool's directive (review4 TL902_3)
        "param_init = (\n    None  # noqa: this sets Config.param_init, not Module._param_init\n)\n",
    ]
    INVALID: list[Invalid] = [
        Invalid("x = 1  # noqa: TL999\n", lines=(1,), messages=(
            "`# noqa: TL999` names TL999, which is not a torchlint rule: correct it or remove it "
            "(see `torchlint rules`)",)),
        Invalid("x = 1  # noqa TL002\n", lines=(1,), messages=(
            "`# noqa TL002` has no colon, so it silences every rule on this line, not only TL002: "
            "write `# noqa: TL002`",)),
        Invalid("x = 1  # noqa missing-zero-grad\n", lines=(1,), messages=(
            "`# noqa missing-zero-grad` has no colon, so it silences every rule on this line, not only "
            "missing-zero-grad: write `# noqa: missing-zero-grad`",)),
        Invalid("x = 1  #noqaTL001\n", lines=(1,), messages=(
            "`#noqaTL001` is not a noqa directive, so it silences nothing: write `# noqa` or `# noqa: CODE`",)),
        Invalid("x = 1  # noqa:\n", lines=(1,), messages=(
            "`# noqa:` names no rule code, so it silences nothing: write `# noqa: TL001` or a rule name "
            "(`# noqa: missing-zero-grad`)",)),
        Invalid("x = 1  # noqa: missing-zero-gard\n", lines=(1,), messages=(
            "`# noqa: missing-zero-gard` names no rule code, so it silences nothing: write `# noqa: TL001` or a "
            "rule name (`# noqa: missing-zero-grad`)",)),
        Invalid("x = 1  # noqa: TL001abc\n", lines=(1,), messages=(
            "`# noqa: TL001abc` is not a list of rule codes, so it silences nothing: separate codes with commas "
            "or spaces",)),
        Invalid("x = 1  # noqa: TL001, lost-layer\n", lines=(1,), messages=(
            "`# noqa: TL001, lost-layer` names lost-layer, which is not a torchlint rule: correct it or remove it "
            "(see `torchlint rules`)",)),
        Invalid("# torchlint: noqa: TL899\nx = 1\n", lines=(1,), messages=(
            "`# torchlint: noqa: TL899` names TL899, which is not a torchlint rule: correct it or remove it "
            "(see `torchlint rules`)",)),
        Invalid("x = 1  # noqa: TL002  # noqa; TL001\ny = 2  # NOQA:TL003;\n", lines=(2,), messages=(
            "`# NOQA:TL003;` is not a list of rule codes, so it silences nothing: separate codes with commas "
            "or spaces",)),
    ]
