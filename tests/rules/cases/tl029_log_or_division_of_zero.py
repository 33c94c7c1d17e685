"""TL029's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid

# TODO: at least 8 of each (tests/test_rule_cases.py counts them).
VALID: list[Valid | str] = [
    # Code that must stay silent, each a trap: "...", or Valid("...", path=..., options=...).
]

INVALID: list[Invalid] = [
    # Invalid("...", lines=(N,), messages=("the exact message",)), one message per finding;
    # fixed="..." (the whole file after the fix) where the findings carry a fix.
]
