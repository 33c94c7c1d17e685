"""Suppression comments."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from torchlint.noqa import Suppressions, scan


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
