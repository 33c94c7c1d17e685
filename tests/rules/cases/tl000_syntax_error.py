"""TL000's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid


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
