"""The engine: one parse per file, TL000 for unreadable files, rule crashes contained."""

from __future__ import annotations

import json

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlint import checks
from torchlint.engine import analyze_source
from torchlint.finding import Severity
from torchlint.rule import Invalid, Rule
from torchlint.testing import add_rules


def _tl000(project, run, name: str, data: bytes) -> dict:
    project.write(name, data)
    project.write("ok.py", "x = 1\n")
    code, out, err = run("check", "--format", "json", ".")
    assert code == 1, err
    rows = json.loads(out)
    assert [r["path"] for r in rows] == [name]
    assert rows[0]["rule"] == "TL000"
    return rows[0]


def test_syntax_error_position_and_other_files_still_linted(project, run):
    row = _tl000(project, run, "broken.py", b"import torch\n\nfor x in range(3)\n    pass\n")
    assert (row["line"], row["column"]) == (3, 18)
    assert "expected ':'" in row["message"]


def test_binary_file(project, run):
    row = _tl000(project, run, "blob.py", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "binary file" in row["message"]


def test_undecodable_file(project, run):
    row = _tl000(project, run, "latin.py", "x = 'caf\u00e9'\n".encode("latin-1"))
    assert "cannot decode" in row["message"] or "utf-8" in row["message"].lower()


def test_unknown_coding_cookie(project, run):
    row = _tl000(project, run, "odd.py", b"# -*- coding: klingon -*-\nx = 1\n")
    assert "klingon" in row["message"]


def test_pep263_cookie_is_honoured(project, run):
    project.write("latin.py", "# -*- coding: latin-1 -*-\nx = 'caf\u00e9'\n".encode("latin-1"))
    project.write("bom.py", b"\xef\xbb\xbfx = 1\n")
    assert run("check", ".")[0] == 0


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n",  # crashes LibCST's native parser if it ever got there
        "x = " + "-" * 50000 + "1\n",
        "x = 1" + "+1" * 100000 + "\n",
        "x = a" + ".b" * 60000 + "\n",
    ],
    ids=["brackets", "unary", "binop", "attributes"],
)
def test_pathological_nesting_is_reported_not_fatal(project, run, source):
    row = _tl000(project, run, "deep.py", source.encode())
    assert row["line"] == 1


def test_linted_code_is_never_executed(project, run):
    project.write("evil.py", "open('pwned', 'w').write('x')\nimport sys\nsys.exit(3)\n")
    assert run("check", ".")[0] == 0
    assert not (project.root / "pwned").exists()


class _Crashy(Rule):
    code = "TL990"
    name = "crashy"
    severity = Severity.WARNING
    summary = "test rule that raises"
    INVALID = [Invalid("f()\n")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "boom":
            raise ValueError("kaboom")
        self.report(node, "a call")


@pytest.fixture
def with_crashy(monkeypatch):
    add_rules(monkeypatch, _Crashy)


def test_rule_exception_is_contained(project, run, with_crashy):
    project.write("a.py", "f()\nboom()\ng()\n")
    project.write("b.py", "h()\n")
    project.write("c.py", "def f(:\n")
    code, out, err = run("check", "--select", "TL990,TL000", "--format", "concise", ".")
    assert code == 2
    assert "rule TL990 failed on a.py: ValueError: kaboom" in err
    assert "Traceback" not in err
    # the crashing rule's findings for a.py are dropped; other files and rules are reported
    assert "b.py:1:1: TL990" in out
    assert "c.py:1:7: TL000" in out
    assert "a.py" not in out


def test_rule_exception_traceback_with_verbose(project, run, with_crashy):
    project.write("a.py", "boom()\n")
    code, _, err = run("check", "--select", "TL990", "--verbose", ".")
    assert code == 2 and "Traceback" in err and "kaboom" in err


def test_positions_are_one_based_with_exclusive_end(with_crashy):
    result = analyze_source("x.py", b"x = [\n  f(1,\n   2)]\n", frozenset({"TL990"}))
    (finding,) = result.findings
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (2, 3, 3, 6)


def test_analysis_is_pure_and_records_are_serialisable():
    data = b"from torch import optim as o\nimport torch.nn.functional as F\nfrom .utils import set_seed\n"
    first = analyze_source("pkg/train.py", data, frozenset({"TL000"}))
    second = analyze_source("pkg/train.py", data, frozenset({"TL000"}))
    assert first.findings == second.findings
    record = first.record.to_json()
    assert json.loads(json.dumps(record)) == record
    assert record["imports"] == {"o": "torch.optim", "F": "torch.nn.functional", "set_seed": "pkg.utils.set_seed"}
    assert record["module_name"] == "pkg.train"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | st.text(alphabet="()[]{}:=+-*/ \n\tabcdefxyz0123456789.,'\"#\\", max_size=300).map(str.encode))
def test_any_bytes_give_findings_never_exceptions(data):
    result = analyze_source("fuzz.py", data, frozenset(r.code for r in checks.discover()))
    assert result.errors == []
    for finding in result.findings:
        assert finding.line >= 1 and finding.column >= 1


def test_facts_are_kept_encoded_and_decode_to_fresh_copies():
    import pickle

    from torchlint.project import Facts

    facts = Facts({"TL006": {"helpers": ["set_seed"], "entry": None}})
    assert facts["TL006"] == {"helpers": ["set_seed"], "entry": None}
    facts["TL006"]["helpers"].append("x")  # a copy: the record is unchanged
    assert facts["TL006"]["helpers"] == ["set_seed"]
    assert dict(pickle.loads(pickle.dumps(facts))) == dict(facts)
    assert "TL005" not in facts and facts.get("TL005") is None and list(facts) == ["TL006"]


def test_facts_that_json_cannot_hold_are_a_rule_error_not_a_crash():
    import libcst as cst

    from torchlint.context import FileContext
    from torchlint.engine import _encode_facts
    from torchlint.imports import ImportTable

    ctx = FileContext("a.py", cst.parse_module(""), "", ImportTable("a", False))
    ctx.facts = {"TL005": {"classes": {1, 2}}, "TL006": {"entry": "main"}}
    facts = _encode_facts(ctx)
    assert dict(facts) == {"TL006": {"entry": "main"}}
    assert [(e.rule, "JSON" in e.error) for e in ctx.errors] == [("TL005", True)]


def test_name_answers_follow_an_import_the_walk_meets_later():
    # FileContext memoises qualified_name/is_imported from the start; an import that changes
    # what a name means (met inside a function) drops the answers given so far.
    from torchlint.context import FileContext
    from torchlint.imports import ImportTable

    module = cst.parse_module("def f():\n    x = np.zeros(3)\n    import numpy as np\n    from torch import nn\n")
    ctx = FileContext("a.py", module, module.code, ImportTable("a", False))
    call = module.body[0].body.body[0].body[0].value
    assert (ctx.qualified_name(call.func), ctx.is_imported(call.func)) == ("np.zeros", False)
    ctx.add_import(module.body[0].body.body[1].body[0])
    assert (ctx.qualified_name(call.func), ctx.is_imported(call.func)) == ("numpy.zeros", True)
    ctx.add_import(module.body[0].body.body[1].body[0])  # the same import again changes nothing
    assert ctx._qualified and ctx.qualified_name(call.func) == "numpy.zeros"


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


def test_deep_stack_thread_is_reused_and_answers_each_call():
    from torchlint import engine

    assert engine.on_deep_stack(_depth, 20_000) == 20_000  # far past the default recursion limit
    first = engine._deep
    assert engine.on_deep_stack(_depth, 5) == 5 and engine._deep is first
    with pytest.raises(ZeroDivisionError):
        engine.on_deep_stack(lambda: 1 / 0)
    assert engine.on_deep_stack(_depth, 3) == 3  # a failure leaves the thread serving


def test_deep_stack_thread_keeps_nothing_of_a_call():
    import gc
    import weakref

    from torchlint import engine

    class Tree:
        pass

    tree = Tree()
    ref = weakref.ref(tree)
    assert engine.on_deep_stack(lambda t: type(t).__name__, tree) == "Tree"
    del tree
    gc.collect()
    assert ref() is None


def test_deep_stack_in_a_forked_child_starts_its_own_thread():
    import multiprocessing

    from torchlint import engine

    engine.on_deep_stack(_depth, 10)  # this process's thread exists before the fork
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    with multiprocessing.get_context("fork").Pool(1) as pool:
        # a stale thread of the parent's would never answer: bounded, not a hang
        assert pool.apply_async(engine.on_deep_stack, (_depth, 20_000)).get(timeout=60) == 20_000
