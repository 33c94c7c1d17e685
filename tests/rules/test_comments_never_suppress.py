"""No comment switches a finding off (issue 39): only ``# noqa`` and configuration do.

Every rule's INVALID cases are linted again with TODO/FIXME/BUG/HACK/XXX comments and wording
that states a deliberate choice ("intentionally", "on purpose", "ignored") written above and
beside each reported line: every finding must still be reported. A comment may name a problem
precisely because it is one.
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

import pytest

from tests.rules.cases import cases_of
from torchlint.rule import all_rules
from torchlint.testing import lint_snippet

_ABOVE = ("# TODO: FIXME this is intentionally ignored on purpose (deliberately kept, "
          "the sum/strict/unused/weights_only/dropout choice is documented here); XXX HACK BUG")
_BESIDE = "  # TODO FIXME: intentionally left as is, on purpose, ignored"

RULES = [r for r in all_rules() if not r.traced and not r.code.startswith("TL9") and r.code != "TL000"]


def _line_ends(code: str) -> set[int]:
    """Lines whose end is the end of a (logical or physical) line of code, outside strings and
    without a comment: a trailing comment can go there."""
    ends, commented = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type in (tokenize.NEWLINE, tokenize.NL):
            ends.add(tok.start[0])
        elif tok.type == tokenize.COMMENT:
            commented.add(tok.start[0])
    return ends - commented


def commented(code: str, lines: set[int]) -> str:
    """``code`` with a comment line above each of ``lines`` and a trailing comment on it."""
    ends = _line_ends(code)
    out = []
    for number, text in enumerate(code.splitlines(), 1):
        if number in lines:
            previous = out[-1].rstrip() if out else ""
            if not previous.endswith("\\"):
                out.append(" " * (len(text) - len(text.lstrip())) + _ABOVE)
            if number in ends and text.strip():
                text += _BESIDE
        out.append(text)
    return "\n".join(out) + "\n"


def _cases():
    for rule in RULES:
        for i, case in enumerate(cases_of(rule)[1]):
            yield pytest.param(rule, case, id=f"{rule.code}-invalid-{i}")


@pytest.mark.parametrize(("rule", "case"), list(_cases()))
def test_todo_fixme_comments_never_suppress(rule, case):
    code = textwrap.dedent(case.code)
    options = {rule.code: case.options}
    before = lint_snippet(code, select=[rule.code], path=case.path, options=options)
    with_comments = commented(code, {f.line for f in before})
    try:
        ast.parse(with_comments)
    except SyntaxError:
        pytest.skip("a comment line cannot go there (inside a string)")
    after = lint_snippet(with_comments, select=[rule.code], path=case.path, options=options)
    assert len(after) == len(before), (f"{rule.code}: a comment switched a finding off\n{with_comments}\n"
                                       f"before: {before}\nafter: {after}")
    assert sorted(f.column for f in after) == sorted(f.column for f in before)  # the same calls


def test_a_todo_comment_does_not_suppress_a_plain_bug():
    code = textwrap.dedent("""
        import torch
        def finetune(model, path):
            state = torch.load(path, weights_only=True)
            # TODO: FIXME strict=False is intentional, the keys are ignored on purpose
            model.load_state_dict(state, strict=False)  # XXX HACK deliberately non-strict
        """)
    assert [f.rule for f in lint_snippet(code, select=["TL015"])] == ["TL015"]
