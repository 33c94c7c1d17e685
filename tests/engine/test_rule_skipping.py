"""Skipping a rule on a file whose text cannot trigger it (``Rule.requires_text``) must be
sound: it may save time, never a finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchlint import engine
from torchlint.rule import all_rules
from torchlint.testing import lint_tree
from tests.rules.cases import cases_of

REPO = Path(__file__).resolve().parents[2]
STATIC_RULES = [r for r in all_rules() if not r.traced and r.code != "TL000"]


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_every_invalid_case_passes_the_textual_precheck(rule):
    for case in cases_of(rule)[1]:
        assert rule.might_apply(textwrap.dedent(case.code)), f"{rule.code} would skip its own INVALID case:\n{case.code}"


def _fixture_files() -> dict[str, str]:
    return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures").rglob("*.py"))}


def test_fixtures_give_the_same_findings_without_skipping(monkeypatch):
    files = _fixture_files()
    with_skipping = lint_tree(files, dedent=False)
    monkeypatch.setattr(engine, "SKIP_RULES", False)
    without = lint_tree(files, dedent=False)
    assert with_skipping == without
    assert with_skipping, "the buggy fixtures must give findings, or this test proves nothing"


def test_skipping_happens_on_unrelated_files():
    # A file with nothing torch-like in it is not worth parsing for any rule.
    text = "def add(a, b):\n    return a + b\n"
    assert [r.code for r in STATIC_RULES if r.might_apply(text)] == []


def test_turning_skipping_off_runs_every_rule(monkeypatch):
    # The switch the benchmark uses must reach rules that override might_apply too.
    unrelated = "def add(a, b):\n    return a + b\n"
    seen = []
    for rule in STATIC_RULES:
        monkeypatch.setattr(rule, "__init__", lambda self, ctx, options, _code=rule.code: seen.append(_code) or setattr(self, "ctx", ctx) or setattr(self, "opts", options))
    monkeypatch.setattr(engine, "SKIP_RULES", False)
    engine.analyze_source("a.py", unrelated.encode(), frozenset(r.code for r in STATIC_RULES))
    assert sorted(seen) == sorted(r.code for r in STATIC_RULES)


def test_options_reach_the_precheck():
    from torchlint.checks.tl004_hard_coded_hyperparameter import HardCodedHyperparameter as R

    text = "def f(make):\n    make(warmup_epochs=5)\n"
    assert not R.might_apply(text)
    assert R.might_apply(text, {"extend-names": ["warmup_epochs"]})


def test_a_precheck_written_out_answers_as_its_required_text():
    """TL023's ``might_apply`` looks at each ``<``/``>`` instead of scanning for each of its
    57 listed strings: the same answer on every text built from their pieces."""
    import random

    from torchlint.checks.tl023_threshold_on_logits import ThresholdOnLogits as R

    pieces = ["<", ">", "=", " ", "0", ".", "5", "7", "x", "round", "rounds", "ro", "und", "\n", "a", "(", ")"]
    rng = random.Random(23)
    texts = ["", "<", ">", "0<", " >", "x >= 0.5", "0 .< ", "<=.", "9 >", ">0.", "< 0", "a<b", "x = round"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(20000)]
    for text in texts:
        assert R.might_apply(text) == any(t in text for t in R.requires_text), text


def test_text_markers_are_answered_as_in_answers():
    """``textscan.contains`` (every pre-check's test of a file's text) rules markers out through
    a lower-cased word they share: on texts built from the markers' pieces, in other cases and
    with characters whose lower case is ASCII or longer (the Kelvin sign, ``İ``, a final
    sigma), every answer is ``marker in text``'s, asked in any order, texts interleaved."""
    import random

    from torchlint.semantic.settings import _CONFIG_MARKERS
    import re

    from torchlint.textscan import _PLAIN, contains, contains_any, contains_lowered, is_lowered_word

    markers = sorted({*_CONFIG_MARKERS, *(m for r in STATIC_RULES for m in r.requires_text), "Kelvin", "kk", "ıi"})
    pieces = ["args", "ARGS", "Args", "arg", ".", "[", "soft", "max", "Soft", "MAX", "noqa", "NoQa", "_", "loss",
              "Loss", "\u212a", "\u0130", "\u03a3", "\u03c3", " ", "\n", "(", ")", "x", "el", "vin", "ı", "i",
              "\xe9", "\ud800", "\x1c", "\u3000", "\xa0", "\t", "0", "is", "to", "hp", "HP", "scale", "self", "]"]
    rng = random.Random(8)
    texts = ["", "args.", "SOFTMAX", "\u212aelvin", "ARGS[0]", "config.lr", "x is y", "a.to(b)", "\xe9args."]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    for text in texts:
        asked = rng.sample(markers, 40)
        for marker in asked:
            assert contains(text, marker) == (marker in text), (text, marker)
        other = rng.choice(texts)
        assert contains_any(other, tuple(asked)) == any(m in other for m in asked), (other, asked)
        for word in ("args", "arg", "soft", "noqa", "kelvin", "i\u0307", "loss", "is", "hp", "args[", " is", "x("):
            assert contains_lowered(text, word) == (word in text.lower()), (text, word)
            if _PLAIN.fullmatch(word):
                words = re.split("[^a-z0-9_]", text.lower()) if text.isascii() else None
                assert is_lowered_word(text, word) == (words is None or word in words), (text, word)
