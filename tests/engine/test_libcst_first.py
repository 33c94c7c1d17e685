"""LibCST's parse as the syntax check (``source.libcst_decides``): where a rule needs LibCST's
tree and the text is of a shape on which LibCST's verdict is CPython's, CPython's parser is not
run. Every outcome (findings, TL000 messages and positions, the file's record) is the one the
CPython-first order gives."""

from __future__ import annotations

import random
import symtable
from pathlib import Path

import pytest

from torchlint import checks, engine, source
from torchlint.engine import analyze_source
from torchlint.source import libcst_decides

REPO = Path(__file__).resolve().parents[2]
ALL = frozenset(r.code for r in checks.discover())
TRAINING = (
    "import torch\nfrom torch import nn\n\nmodel = nn.Linear(2, 2)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x, y in loader:\n    loss = nn.functional.mse_loss(model(x), y)\n"
    "    loss.backward()\n    optimizer.step()\n"
)


@pytest.mark.parametrize("text", [
    TRAINING,
    "s = '(' + f'{a:{b:{c}}}'\n",  # three braces: still LibCST's
    "x = [\n" + "    1,\n" * 200 + "]\n",  # a long bracketed list, each line short
    "x = " + "(" * 100 + "1" + ")" * 100 + "\n",
    "s = 'a\\tb\\n' + r'\\d+'\n",  # escapes that always decode
    "s = '" + "a" * 1993 + "'\n",  # a line of 1,999 characters
    "x = (\n" + "    1,\n" * 284 + ")\n",  # a logical line of 1,995 characters
    "",
    "# 1) build the model\nx = f(a)\n",  # a bracket closing nothing in a comment
    "x = f(a)  # (see above\ny = 2\n",  # one left open in a comment
    "s = '''\n# ) inside a string\n'''\n",  # a '#' line inside a string, no quote after it
    "x = (\n" + "    1,  # (\n" * 120 + ")\n",  # a list whose comments open 120 brackets
    # The second look (``_decides_by_scan``): non-ASCII text only in comments and plain
    # strings; brackets counted outside strings and comments.
    "s = 'caf\u00e9'\n",
    "# caf\u00e9 (\nx = 1\n",
    "s = '\u00a0' + \"\U0001f917\" + u'\u00e9' + r'\u00e9)'\n",  # NBSP, an emoji, prefixes
    "s = '''\n\u00e9 [\n'''\n",
    "s = '\u00e9' # '\nx = 1\n",  # a quote in a comment
    '"""Values in [0, 1)."""\nx = f(a)\n',  # a bracket closing nothing in a docstring
    '"""Values in [0, 1)."""\nx = (\n' + "    1,\n" * 200 + ")\n",
    "x = f\"{a['k']}\" + 'caf\u00e9 1)'\n",  # f-strings the scan follows
    "x = f\"{a['(']}\" + 'a)'\n",
    "s = f'{x!r:>{w}}' + f'{{' + '\u00e9'\n",
    "s = f'''\n{a}\n''' + '\u00e9'\n",
])
def test_text_libcst_decides(text):
    assert libcst_decides(text)


@pytest.mark.parametrize("text", [
    # non-ASCII in code (identifiers, valid or not; NBSP), in bytes literals, f-strings or
    # t-strings, or a line break to ``str.splitlines``: CPython refuses some of those
    "caf\u00e9 = 1\n",
    "\u20ac = 1\n",
    "x\u00a0= 1\n",
    "x = b'\u00e9'\n",
    "x = rb'\u00e9'\n",
    "s = f'caf\u00e9'\n",
    "s = t'{a}\u00e9'\n",
    's = "a\u2028b"\n',
    's = "a\x85b"\n',
    "s = 'caf\u00e9\n",  # a string the scan cannot close
    # 3.12's f-strings, nesting their own quotes: CPython 3.11's tokenizer and LibCST's part
    's = f"{x["a"]}" + "\u00e9"\n',
    's = f"{ "a" + \u00e9 + "b" }"\n',  # 3.11 would read '\u00e9' as in a string
    "s = f\"{'\\\"'}\" + '" + "(" * 150 + "'\n",  # a quote hiding brackets
    "s = ')' + '\u00e9'\nx = " + "(" * 150 + "1" + ")" * 150 + "\n",  # too deep all the same
    "s = '\u00e9'\nx = (\n" + "    1,\n" * 290 + ")\n",  # a long logical line all the same
    "if a:\n\tx = 1\n",  # control characters: tabs, form feeds, carriage returns
    "x = 1\r\ny = 2\r\n",
    "x = 1\f\n",
    "s = '\\N{no such name}'\n",  # escapes that may fail to decode
    "s = '\\x1'\n",
    "s = '\\u12'\n",
    "s = '\\U1234'\n",
    "x = 1 + \\\n    2\n",  # a line continuation
    "x = " + "(" * 101 + "1" + ")" * 101 + "\n",  # brackets deeper than LIBCST_MAX_BRACKETS
    "s = f'{a:{b:{c:{d}}}}'\n",  # four braces: an error in every Python
    "x = 1" + "+1" * 1000 + "\n",  # a logical line over LIBCST_MAX_LOGICAL_LINE characters
    "x = (\n" + "    1 +\n" * 300 + "    1)\n",  # the same, over many physical lines
    "s = '" + "a" * 1994 + "'\n",  # a line of 2,000 characters
    "x = (\n" + "    1,\n" * 285 + ")\n",  # a logical line of 2,002
    "x = (\n" + "    1,\n" * 290,  # an unclosed one at the end of the text
    "s = ')'\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n",  # a closing bracket with nothing open
    # A '#' followed by a quote on its line may be inside a string that code follows: kept.
    "s = '#)'\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n",
    "s = '''\n# ) ''' + " + "(" * 300 + "1" + ")" * 300 + "\n",
    "x = " + "(" * 101 + "1" + ")" * 101 + "  # )\n",  # too deep, with or without the comment
])
def test_text_left_to_cpythons_parser(text):
    assert not libcst_decides(text)


# Outcomes the fuzzing behind ``libcst_decides`` turned up, and the classic syntax errors.
TRICKY = [
    "x = (\n",
    "def f(:\n    pass\n",
    "f(**a, *b)\n",
    "nonlocal x\n",  # only symtable refuses it: analysed
    "def f(a, a):\n    pass\n",
    "x = 'abc\\N{nonexistent}'\n",
    "x = b'\u00e9'\n",
    "x = '\\x1'\n",
    "s = f'{x:{y:{z}}}'\n",  # newer syntax (3.12): analysed on every interpreter
    "s = f'{a:{b:{c:{d}}}}'\n",  # an error everywhere
    "x = 1\n        \\\n    y = 2\n",  # a continuation opening an indented line
    "if a:\n\tx = 1\n        y = 2\n",
    "type X = int\n",
    "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
    "x = 1 if y else.5\n",  # valid; LibCST refuses it
    "x = " + "(" * 150 + "1" + ")" * 150 + "\n",
    "x = " + "(" * 250 + "1" + ")" * 250 + "\n",  # CPython's limit: 200
    "x = " + "-" * 900 + "1\n",
    "x = 1" + "+1" * 990 + "\n",
    "# 1) a comment closing nothing\nx = " + "(" * 250 + "1" + ")" * 250 + "\n",
    "# step 1) (\ndef f(:\n    pass\n",
    "s = '''\n# ) ''' + " + "(" * 250 + "1" + ")" * 250 + "\n",
    "caf\u00e9 = 1\n",
    "\u20ac = 1\n",
    "x\u00a0= 1\n",
    "s = 'caf\u00e9' + b'\u00e9'\n",
    's = f"{x["a"]}" + "\u00e9"\n',
    's = f"{ "a" + \u20ac + "b" }"\n',
    "# \u00e9 (\ndef f(:\n    pass\n",
    '"""[0, 1) \u00e9"""\nx = ' + "(" * 250 + "1" + ")" * 250 + "\n",
    "s = 'caf\u00e9\n",
    "s = 'caf\u00e9'\nx = (\n",
    "s = '\u00e9 ('\ndef f(a, a):\n    pass\n",
]


def _cpython_first(monkeypatch):
    monkeypatch.setattr(source, "libcst_decides", lambda text: False)


def _outcome(text: str):
    result = analyze_source("pkg/m.py", (TRAINING + text).encode(), ALL)
    return [f.to_dict() for f in result.findings], result.record.to_json()


@pytest.mark.parametrize("text", TRICKY)
def test_outcome_is_the_cpython_first_one(text, monkeypatch):
    new = _outcome(text)
    _cpython_first(monkeypatch)
    assert new == _outcome(text)


def _decided_by_libcst(rng: random.Random, texts: list[str], rounds: int, mutate) -> list[str]:
    """``rounds`` texts, each a fixture mutated one to three times (``mutate(text, at)``: the
    new text), that ``libcst_decides``; each asserted to have the CPython-first outcome of
    ``read_python`` (the verdict, and TL000's message and position)."""
    direct = lambda fn, *args: fn(*args)  # noqa: E731
    decided = []
    for _ in range(rounds):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng.randrange(len(text)))
        if not libcst_decides(text):
            continue
        decided.append(text)
        first, first_failure = source.read_python(text, None, direct, tree=False)
        old, old_failure = source.read_python(text, None, direct, tree=True)
        assert (first is None, first_failure) == (old is None, old_failure), text
    return decided


def test_mutated_fixtures_have_the_cpython_first_outcome():
    """Tokens inserted into and deleted from the fixtures, as the fuzzing did: the verdict
    (and TL000's message and position) of ``read_python`` is the same in either order."""
    rng = random.Random(20261128)
    texts = [p.read_text() for p in sorted((REPO / "fixtures").rglob("*.py"))]
    snippets = ["(", ")", "[", "]", "{", "}", ":", ",", "=", "*", "lambda", "yield", "await ", "not ",
                " if ", " else ", "\n", "\n    ", "'", '"', 'f"', "{x:{y:{z}}}", "\\", "#", "@", ".",
                "return ", "global x\n", "nonlocal x\n", "import ", ":=", "->", "0x", "1_", "b'", "rb'",
                "def ", "class ", "try:\n", "except*", "match x:\n    case ", "type ", ";", "[T]", "0777"]

    def mutate(text: str, at: int) -> str:
        if rng.random() < 0.3:
            return text[:at] + text[at + rng.randint(1, 5):]
        return text[:at] + rng.choice(snippets) + text[at:]

    assert len(_decided_by_libcst(rng, texts, 300, mutate)) > 200


def test_mutated_non_ascii_fixtures_have_the_cpython_first_outcome():
    """The same, with non-ASCII characters (letters, symbols, NBSP, line separators, an emoji),
    quotes, brackets and f-strings (3.12's included) put in at random places: the texts the
    second look (``_decides_by_scan``) hands to LibCST have the CPython-first outcome."""
    rng = random.Random(20261207)
    texts = [p.read_text() for p in sorted((REPO / "fixtures").rglob("*.py"))]
    odd = ["\u00e9", "\u20ac", "\u00a0", "\U0001f917", "\u2014", "\u00b5", "\u2028", "\x85", "\u200b", "\u3000",
           "e\u0301", "'", '"', "'''", "#", "(", ")", "[", "]", "{", "}", "\n", 'f"', "f'", "b'", "t'", "\\",
           'f"{x["a"]}"', "f'{x['a']}'", 'f"{', '"}"', "{{", "}}", "f'{\"\u00e9\"}'", "\u00e9 = 1\n",
           "\u20ac = 1\n", "b'\u00e9'", "x\u00a0= 1\n", "# \u00e9(\n", "'\u00e9)'", '"""[0, 1)"""']

    def mutate(text: str, at: int) -> str:
        if rng.random() < 0.5:  # into a string or comment, most often
            at = max(text.rfind("#", 0, at), text.rfind("'", 0, at), text.rfind('"', 0, at)) + 1
        return text[:at] + rng.choice(odd) + text[at:]

    decided = _decided_by_libcst(rng, texts, 600, mutate)
    assert sum(not text.isascii() for text in decided) > 50  # decided by the second look alone


def test_text_libcst_decides_never_reaches_cpythons_parser(monkeypatch):
    calls = []
    real = symtable.symtable
    monkeypatch.setattr(symtable, "symtable", lambda *a: calls.append(a) or real(*a))
    result = analyze_source("train.py", TRAINING.encode(), ALL)
    assert calls == [] and result.record.parsed and result.findings
    analyze_source("train.py", (TRAINING + "# caf\u00e9\n").encode(), ALL)
    assert calls == []  # non-ASCII text in a comment: LibCST's parse decides too
    analyze_source("train.py", (TRAINING + "caf\u00e9 = 1\n").encode(), ALL)
    assert len(calls) == 1  # non-ASCII code: CPython's parser checks it first, as before


def test_valid_code_libcst_refuses_is_parsed_once_and_reported(monkeypatch):
    """Code CPython accepts and LibCST refuses (older LibCSTs refused ``else.5``): the
    refusal is the file's TL000, from the one parse."""
    parses = []

    def refuses(text):
        parses.append(text)
        return None, source.ParseFailure("LibCST cannot parse this file: the parser panicked: x", 9, 2)

    monkeypatch.setattr(source, "parse_cst", refuses)
    monkeypatch.setattr(engine, "parse_cst", refuses)
    result = analyze_source("m.py", TRAINING.encode(), ALL)
    (finding,) = result.findings
    assert (finding.rule, finding.line, finding.column) == ("TL000", 9, 2)
    assert finding.message.startswith("LibCST cannot parse this file: the parser panicked: x")
    assert len(parses) == 1
    assert result.record.imports == {"torch": "torch", "nn": "torch.nn"}  # from CPython's tree


def test_other_target_versions_keep_cpythons_parser_first(monkeypatch):
    """Under an older ``target-version`` the syntax CPython accepts is checked against it,
    as before: ``s = f"{x:{y:{z}}}"`` needs 3.12."""
    options = {"TL000": {"target-version": "py311"}}
    result = analyze_source("m.py", (TRAINING + 's = f"{x:{y:{z}}}"\n').encode(), ALL, options)
    (finding,) = [f for f in result.findings if f.rule == "TL000"]
    assert "needs Python 3.12 or newer (target-version is py311)" in finding.message
