"""``literals.string_value`` / ``integer_value`` give exactly LibCST's ``evaluated_value``."""

import libcst as cst
import pytest

from torchlint.semantic.literals import integer_value, string_value

STRINGS = [
    '""', "''", '"a"', "'a'", '""""""', "''''''", '"""a"""', "'''a'''", '"""it\'s"""', "'''say \"hi\"'''",
    '"\'\'\'"', "'\"\"\"'", 'r"a"', 'R"a"', 'u"a"', 'U"a"', 'b"a"', 'B"a"', 'rb"a"', 'Br"a"',
    '"a\\nb"', 'r"a\\nb"', '"a\\\\b"', '"\\x41"', '"\\N{EN DASH}"', '"\\u00e9"', 'b"\\x00"',
    '"é → ×"', '"""multi\nline"""', "'''a\nb\n'''", '"{}-x.pt"', '"%s_%d.pkl"', '"a#b"', '"\\\n"',
    '"""a\r\nb"""', '"""a\rb"""', "''' '' '''", '""" "" """',
]


@pytest.mark.parametrize("text", STRINGS)
def test_string_value_is_evaluated_value(text):
    node = cst.parse_expression(text) if "\r" not in text else cst.SimpleString(text)
    assert isinstance(node, cst.SimpleString)
    got, want = string_value(node), node.evaluated_value
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("text", ["0", "00", "7", "10", "1_000", "0x1F", "0o17", "0b101", "123456789012345678901234567890"])
def test_integer_value_is_evaluated_value(text):
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Integer)
    got, want = integer_value(node), node.evaluated_value
    assert got == want and type(got) is type(want)
