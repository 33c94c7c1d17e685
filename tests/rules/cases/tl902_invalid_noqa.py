"""TL902's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid


VALID = [
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


INVALID = [
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
    # A flake8 code without its letter (torchvision's ``# noqa: 401``): flake8 reads it as a
    # blanket noqa, ruff rejects it (astral-sh/ruff#8157).
    Invalid("import os  # noqa: 401\nimport sys  # noqa: 501\n", lines=(1, 2), messages=(
        "`# noqa: 401` names no rule code, so it silences nothing here (ruff rejects it too), while flake8 reads "
        "a bare number as a blanket `# noqa`; write the code with its letter (`# noqa: F401`)",
        "`# noqa: 501` names no rule code, so it silences nothing here (ruff rejects it too), while flake8 reads "
        "a bare number as a blanket `# noqa`; write the code with its letter (`# noqa: E501`)",)),
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
