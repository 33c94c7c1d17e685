"""Suppression comments."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from torchlint.noqa import Suppressions, _comments, comment_lines, comments_by_line, scan


def test_bare_noqa_suppresses_every_rule_on_its_line():
    sup = scan("x = 1  # noqa\ny = 2\n")
    assert sup.suppresses("TL001", 1) and sup.suppresses("TL004", 1)
    assert not sup.suppresses("TL001", 2)


def test_noqa_with_codes():
    sup = scan("opt.step()  # noqa: TL001, TL002\nz  # noqa:TL003 TL004\n")
    assert sup.suppresses("TL001", 1) and sup.suppresses("TL002", 1)
    assert not sup.suppresses("TL003", 1)
    assert sup.suppresses("TL003", 2) and sup.suppresses("TL004", 2)


def test_file_level_noqa():
    sup = scan('"""doc."""\n# torchlint: noqa\nimport torch\n')
    assert sup.suppresses("TL005", 99)


def test_file_level_noqa_with_codes():
    sup = scan("# torchlint: noqa: TL004,TL006\nimport torch\n")
    assert sup.suppresses("TL004", 10) and sup.suppresses("TL006", 1)
    assert not sup.suppresses("TL001", 10)


def test_file_level_comment_must_stand_alone():
    sup = scan("x = 1  # torchlint: noqa\n")
    assert sup.file is False  # a trailing comment is a line-level noqa, not a file-level one
    assert sup.suppresses("TL001", 1)


def test_noqa_suppresses_real_finding(project, run):
    project.write("a.py", "def f(:  # noqa: TL000\n")
    project.write("b.py", "def f(:  # noqa: TL001\n")
    code, out, _ = run("check", "--format", "concise", ".")
    assert code == 1
    assert "a.py" not in out and "b.py" in out


@given(st.dictionaries(st.integers(1, 50), st.one_of(st.none(), st.frozensets(st.sampled_from(["TL001", "TL002", "TL006"]), min_size=1))))
def test_json_round_trip(lines):
    sup = Suppressions(lines=lines, file=False)
    assert Suppressions.from_json(sup.to_json()) == sup


@given(st.text())
def test_scan_never_raises(text):
    scan(text)


# -- issue 10, item 13: lines counted as the parser counts them; only real comments count --------

def test_file_level_noqa_inside_a_docstring_silences_nothing():
    sup = scan('"""How to silence torchlint:\n\n# torchlint: noqa\n"""\nimport torch\n')
    assert sup.file is False
    assert not sup.suppresses("TL005", 4)


def test_noqa_inside_a_string_suppresses_nothing():
    sup = scan('x = "# noqa"\ny = f"{x} # noqa: TL001"\nz = \'\'\'\n  # noqa\n\'\'\'\n')
    assert sup.lines == {} and sup.file is False


def test_noqa_after_a_string_holding_a_hash_still_counts():
    sup = scan("x = '#'  # noqa: TL002\ny = 'it''s'  # noqa\n")
    assert sup.lines == {1: frozenset({"TL002"}), 2: None}


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_only_cr_and_lf_end_lines(separator, newline):
    # str.splitlines also breaks at form feeds, U+2028, NEL...: the parser does not.
    text = newline.join([f's = "a{separator}b"', "x = 1  # noqa: TL001", f"# {separator} torchlint: noqa: TL003",
                         "y = 2  # noqa"]) + newline
    sup = scan(text)
    assert sup.lines == {2: frozenset({"TL001"}), 4: None}, sup.lines


@pytest.mark.parametrize("separator", ["\x0c", "\x85", "\u2028"])
def test_suppression_lands_on_the_parsers_line(project, run, separator):
    project.write("a.py", f's = "{separator}"\ndef f(:  # noqa: TL000\n')
    code, out, _ = run("check", "--format", "concise", "--no-cache", ".")
    assert code == 0 and "a.py" not in out, out


def test_docstring_does_not_silence_the_file(project, run):
    project.write("a.py", '"""Example.\n# torchlint: noqa\n"""\ndef f(:\n')
    code, out, _ = run("check", "--format", "concise", "--no-cache", ".")
    assert code == 1 and "a.py:4" in out


@given(st.lists(st.sampled_from(["#", "'", '"', "\\", "\n", "\r", "\x0c", "\u2028", " ", "x", "=", "f", "noqa",
                                 ":TL001", "(", ")", ";"]), max_size=30).map("".join))
@example("\\\r\n")  # a backslash, then the end of the file: tokenize raises, CPython parses it
@example("x = 1  # noqa: TL001\\\r\n")
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
def test_scan_finds_the_comments_the_tokenizer_finds(text):
    # On valid Python the small lexer must agree with the tokenizer (on anything else it only
    # has to stay silent, see test_scan_never_raises).
    import ast
    import io
    import tokenize
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences
            ast.parse(text)
    except (SyntaxError, ValueError):
        assume(False)
    expected = {}
    try:  # a backslash before the end of the file is valid Python the tokenizer gives up on
        for t in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if t.type == tokenize.COMMENT and "noqa" in t.string.lower():
                expected[t.start[0]] = t.string
    except tokenize.TokenError:
        pass
    found = {line: comment for line, _, comment in _comments(text)}
    assert found == expected


@given(st.lists(st.sampled_from(["#", "'", '"', "'''", '"""', "\\", "\n", "\r\n", " ", "x", "=", "f", "r", "b",
                                 "(", ")", "[", "]", "  # c", ":"]), max_size=30).map("".join))
@example("\\\r\n")  # a backslash, then the end of the file: tokenize raises, CPython parses it
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
def test_every_comment_is_the_one_the_tokenizer_finds(text):
    # ``semantic.comments`` reads every comment of a file with this lexer (tokenize costs
    # twenty times as much): on valid Python it must agree with the tokenizer, line for line.
    import ast
    import io
    import tokenize
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError):
        assume(False)
    expected = {}
    try:  # a backslash before the end of the file is valid Python the tokenizer gives up on
        for t in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if t.type == tokenize.COMMENT:
                expected[t.start[0]] = t.string
    except tokenize.TokenError:
        pass
    assert comments_by_line(text) == expected


def test_comments_by_line_skips_hashes_in_strings_and_docstrings():
    text = 'x = "# not"  # one\ns = """\n# inside\n"""\n# two \nf(r\'\\\'#\')  # three\n'
    assert comments_by_line(text) == {1: "# one", 5: "# two ", 6: "# three"}


# -- issue 13, item 3: ruff's grammar, rule names, lines that cannot hold a comment ------------

@pytest.mark.parametrize(("comment", "codes"), [
    ("# noqa : TL002", frozenset({"TL002"})),
    ("# noqa: missing-zero-grad", frozenset({"TL001"})),
    ("# noqa: missing-zero-grad, TL004", frozenset({"TL001", "TL004"})),
    ("# noqa:TL001TL002", frozenset({"TL001", "TL002"})),
    ("# noqa: TL001 because the loop is unrolled", frozenset({"TL001"})),
    ("# noqa TL002", None),  # no colon: every rule, as ruff reads it (and TL902 reports it)
])
def test_directives_are_read_as_ruff_reads_them(comment, codes):
    assert scan(f"x = 1  {comment}\n").lines == {1: codes}


@pytest.mark.parametrize("comment", ["#noqaTL001", "# noqa:", "# noqa: TL001abc", "# noqa: some words", "# noqa;TL1"])
def test_malformed_directives_silence_nothing(comment):
    sup = scan(f"x = 1  {comment}\n")
    assert sup.lines == {} and len(sup.problems) == 1


def test_lines_inside_a_multi_line_string_map_to_its_last_line():
    text = 'x = f("""a\nb\nc""", y)  # noqa: TL004\nz = a + \\\n    b  # noqa: TL001\n'
    assert comment_lines(text) == {1: 3, 2: 3, 4: 5}
    sup = scan(text)
    assert sup.suppresses("TL004", 1) and sup.suppresses("TL004", 2) and sup.suppresses("TL001", 4)
    assert not sup.suppresses("TL004", 4)


def test_new_fields_round_trip_through_json():
    sup = scan("x = 1  # noqa: TL001, TL999\n")
    assert sup.directives and sup.problems
    assert Suppressions.from_json(sup.to_json()) == sup


# -- --add-noqa ------------------------------------------------------------------------------------

def test_add_noqa_appends_merges_and_keeps_line_breaks():
    from torchlint.noqa import add_noqa

    text = "a = 1\r\nb = 2  # noqa: TL001 explained\r\nc = 3  # noqa\r\nd = 4   \r\ne = 5"
    new, edited, malformed = add_noqa(text, {1: {"TL004", "TL002"}, 2: {"TL004", "TL001"}, 3: {"TL004"}, 4: {"TL006"},
                                             5: {"TL003"}})
    assert new == ("a = 1  # noqa: TL002, TL004\r\nb = 2  # noqa: TL001, TL004 explained\r\nc = 3  # noqa\r\n"
                   "d = 4  # noqa: TL006\r\ne = 5  # noqa: TL003")
    assert (edited, malformed) == (4, [])


def test_add_noqa_on_multi_line_statements_edits_each_line_once():
    from torchlint.noqa import add_noqa

    text = 'x = f(\n    """a\nb""",\n    lr=0.1,\n)\ny = a + \\\n    b\n'
    # line 2 ends inside the string (comment on line 3), line 6 with a backslash (comment on 7)
    new, edited, _ = add_noqa(text, {2: {"TL004"}, 3: {"TL002"}, 4: {"TL004"}, 6: {"TL001"}})
    assert new == ('x = f(\n    """a\nb""",  # noqa: TL002, TL004\n    lr=0.1,  # noqa: TL004\n)\n'
                   'y = a + \\\n    b  # noqa: TL001\n')
    assert edited == 3
    sup = scan(new)
    assert sup.suppresses("TL004", 2) and sup.suppresses("TL001", 6) and sup.problems == []


def test_add_noqa_leaves_a_malformed_comment_alone():
    from torchlint.noqa import add_noqa

    assert add_noqa("x = 1  # noqa:\n", {1: {"TL004"}}) == ("x = 1  # noqa:\n", 0, [1])


def test_free_text_noqa_is_reported_only_where_a_torchlint_finding_is_left():
    """``# noqa: <words>`` is flake8's blanket noqa: TL902 says it silences nothing only on a line
    where torchlint has a finding; a misspelt rule name is reported everywhere (review4 TL902_3)."""
    from torchlint.testing import lint_snippet

    code = (
        "import torch\n"
        "import torch.nn as nn\n"
        "model = nn.Linear(2, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)  # noqa: tuned by hand\n"
        "x = 1  # noqa: this sets Config.param_init, not Module._param_init\n"
        "y = 2  # noqa: missing-zero-gard\n"
        "args = argparse.ArgumentParser().parse_args()\n"
    )
    found = [(f.rule, f.line) for f in lint_snippet(code, select=["TL902", "TL004"], path="train.py")]
    assert sorted(found) == [("TL004", 4), ("TL902", 4), ("TL902", 6)]
    assert [(f.rule, f.line) for f in lint_snippet(code, select=["TL902"], path="train.py")] == [("TL902", 6)]


def test_a_problem_keeps_whether_it_is_free_text_through_the_cache():
    sup = scan("x = 1  # noqa: for flake8 only\n")
    assert [p.prose for p in sup.problems] == [True]
    assert Suppressions.from_json(sup.to_json()).problems == sup.problems
