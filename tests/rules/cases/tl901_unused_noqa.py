"""TL901's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid

_MANY = ("noqa codes {} silence nothing on this line: remove them, so that they cannot hide a finding this line "
         "gets later")
_ONE = "noqa code {} silences nothing on this line: remove it, so that it cannot hide a finding this line gets later"


VALID = [
    "x = 1  # noqa\n",  # blanket: may serve another linter
    "import os  # noqa: F401\n",  # another tool's code
    "x = 1  # noqa: E501, BLE001 (flake8's)\n",
    '"""# noqa: TL001 in a docstring is no comment."""\n',
    "x = 1  # noqa: TL999\n",  # unknown: TL902's, not this rule's
    "x = 1  # noqa: TL100\n",  # traced: its findings need --trace
    "x = 1  # noqa: TL901, TL902\n",  # the noqa rules' own codes are not judged
    "x = 1  # a comment that mentions noqa without being one\n",
    "# torchlint: noqa: TL001\nx = 1\n",  # file-level: not a line directive
]


INVALID = [
    Invalid("x = 1  # noqa: TL001\n", lines=(1,), messages=(_ONE.format("TL001"),), fixed="x = 1\n"),
    Invalid("x = 1  # noqa: missing-zero-grad\n", lines=(1,), messages=(_ONE.format("TL001"),), fixed="x = 1\n"),
    Invalid("x = 1  # noqa : TL002\n", lines=(1,), messages=(_ONE.format("TL002"),), fixed="x = 1\n"),
    # the explanation after the codes stays, as a comment of its own
    Invalid("x = 1  # noqa: TL001, TL004 because of the tests\n", lines=(1,),
            messages=(_MANY.format("TL001, TL004"),), fixed="x = 1  # because of the tests\n"),
    # the codes of other tools (and unknown ones, TL902's) stay, as written
    Invalid("x = 1  # noqa: E501, TL003\n", lines=(1,), messages=(_ONE.format("TL003"),),
            fixed="x = 1  # noqa: E501\n"),
    Invalid("x = 1  # NOQA:TL003,TL999  # why\n", lines=(1,), messages=(_ONE.format("TL003"),),
            fixed="x = 1  # noqa: TL999  # why\n"),
    Invalid("x = 1  # noqa: tl006\n", lines=(1,), messages=(_ONE.format("TL006"),), fixed="x = 1\n"),
    Invalid('x = """a\nb"""  # noqa: TL005\n', lines=(2,), messages=(_ONE.format("TL005"),),
            fixed='x = """a\nb"""\n'),
    Invalid("x = 1  # noqa: TL000\n", lines=(1,), messages=(_ONE.format("TL000"),), fixed="x = 1\n"),
    # another comment before or after the directive stays
    Invalid("x = 1  # explained # noqa: TL001\ny = 2  # noqa: TL002  # type: ignore\n", lines=(1, 2),
            messages=(_ONE.format("TL001"), _ONE.format("TL002")),
            fixed="x = 1  # explained\ny = 2  # type: ignore\n"),
    # a directive alone on its line goes with its line
    Invalid("def f():\n    # noqa: TL001\n    return 1\n", lines=(2,), messages=(_ONE.format("TL001"),),
            fixed="def f():\n    return 1\n"),
    Invalid("x = 1\t#noqa:TL001,TL001 flaky\r\ny = 2\r\n", lines=(1,), messages=(_ONE.format("TL001"),),
            fixed="x = 1\t# flaky\r\ny = 2\r\n"),
]
