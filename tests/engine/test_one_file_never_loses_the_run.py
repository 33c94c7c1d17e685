"""A file LibCST rejects, a file nested
deeper than Python's default stack, a huge file, or a killed run never loses the other
files' report, never prints a traceback and never leaves processes behind."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import libcst as cst
import pytest

from torchlint import checks, engine, pool, speedups
from torchlint import run as run_layer
from torchlint.config import DEFAULT_MAX_FILE_SIZE, build_settings, parse_size
from torchlint.context import Dispatcher, FileContext
from torchlint.errors import ConfigError
from torchlint.files import discover
from torchlint.finding import Severity
from torchlint.imports import ImportTable
from torchlint.rule import Rule
from torchlint.source import parse_cst
from torchlint.speedups import nodes
from torchlint.testing import add_rules

REPO = Path(__file__).resolve().parents[2]
ALL = frozenset(r.code for r in checks.discover())
# Text that makes every rule's pre-check pass, so the rules really run on the file.
KEYWORDS = (
    "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
    "model = M()\nmodel.eval()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for b in loader:\n    loss = model(b)\n    loss.backward()\n    optimizer.step()\n"
)


def _check(run, *args: str) -> tuple[int, dict[str, list[dict]], str]:
    code, out, err = run("check", "--isolated", "--no-cache", "--format", "json", *args)
    by_path: dict[str, list[dict]] = {}
    for row in json.loads(out):
        by_path.setdefault(row["path"], []).append(row)
    return code, by_path, err


# -- item 1: valid Python that LibCST rejects -------------------------------------------

LIBCST_REJECTS = {
    "else_dot.py": "fast = True\nlr = 1e-3 if fast else.5\n",
    "for_in_star.py": "for x in*loader:\n    pass\n",
    "async_for_in_star.py": "async def f():\n    async for x in*y:\n        pass\n",
    "return_star.py": "def h():\n    return*x\n",
}


@pytest.mark.parametrize("source", [*LIBCST_REJECTS.values(), "def g():\n    yield*b,\n"])
def test_parse_cst_never_raises_on_valid_python(source):
    ast.parse(source)  # CPython's parser accepts it
    module, failure = parse_cst(KEYWORDS + source)
    assert (module is None) != (failure is None)


def test_valid_python_libcst_node_checks_reject_is_analysed_like_any_other(project, run):
    # LibCST's node classes reject these (CSTValidationError) though CPython and LibCST's
    # parser accept them: with the speed-ups the engine builds the tree without those checks,
    # so they are linted; without them (TORCHLINT_NO_SPEEDUPS) each is one TL000 saying so.
    for name, source in LIBCST_REJECTS.items():
        project.write(name, KEYWORDS + source)
    project.write("yield_star.py", KEYWORDS + "def g():\n    yield*b,\n")
    project.write("good.py", KEYWORDS)
    code, by_path, err = _check(run, "--select", "ALL", ".")
    assert code == 1 and "error" not in err, err
    good = {r["rule"] for r in by_path["good.py"]}
    assert good and "TL000" not in good
    for name in [*LIBCST_REJECTS, "yield_star.py"]:
        if speedups.enabled() or name == "yield_star.py":
            assert {r["rule"] for r in by_path[name]} == good, name
        else:
            (row,) = by_path[name]
            assert row["rule"] == "TL000" and row["message"].startswith("LibCST cannot parse this valid Python"), row


def test_a_libcst_validation_error_is_tl000(monkeypatch):
    def rejects(text):
        raise cst.CSTValidationError("Must have at least one space after 'else'.")

    monkeypatch.setattr(cst, "parse_module", rejects)
    monkeypatch.setattr(nodes, "parse_module", rejects)  # the engine's own way into the parser
    result = engine.analyze_source("p.py", KEYWORDS.encode(), ALL)
    (finding,) = result.findings
    assert finding.rule == "TL000"
    assert finding.message == ("LibCST cannot parse this valid Python: CSTValidationError: Must have at least "
                               "one space after 'else'.; nothing in this file was checked")


def test_node_checks_are_restored_after_a_parse():
    module, failure = parse_cst("x = 1\n")
    assert failure is None and module is not None
    with pytest.raises(cst.CSTValidationError):
        cst.IfExp(test=cst.Name("a"), body=cst.Name("b"), orelse=cst.Float(".5"),
                  whitespace_after_else=cst.SimpleWhitespace(""))


def test_each_node_class_children_function_gives_what_the_values_types_say():
    # context.children writes one function per node class from the declared field types;
    # context.children_checked looks at each value's type. They must agree on every node.
    from torchlint.tree import children, children_checked

    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures").rglob("*.py"))]
    texts += [KEYWORDS, "async def f(*a, b=1, **k) -> int:\n    async with x as (y, z): yield [i async for i in g if i]\n"
              "match p:\n    case [1, *rest] | {'k': v, **kw} if v: pass\n    case C(a=1): pass\n"
              "x: int = 1\nlambda *, q=2: q\nglobal g\ndel a[1:2, ::3]\nprint(f'{x!r:>{w}}')\n"
              "try:\n    pass\nexcept* E as e:\n    raise\n"]
    kinds = set()
    for text in texts:
        module, failure = parse_cst(text)
        assert failure is None, failure
        stack = [module]
        while stack:
            node = stack.pop()
            kinds.add(type(node))
            expected = children_checked(node)
            assert [id(n) for n in children(node)] == [id(n) for n in expected], type(node).__name__
            stack.extend(expected)
    assert len(kinds) > 60


def engine_walk(module):
    from torchlint.tree import iter_nodes

    return iter_nodes(module)


def test_a_libcst_panic_is_tl000(monkeypatch):
    class PanicException(BaseException):  # what pyo3 raises for a panic in the native parser
        pass

    def panics(text):
        raise PanicException("index out of bounds")

    monkeypatch.setattr(cst, "parse_module", panics)
    monkeypatch.setattr(nodes, "parse_module", panics)  # the engine's own way into the parser
    result = engine.analyze_source("p.py", KEYWORDS.encode(), ALL)
    (finding,) = result.findings
    assert finding.rule == "TL000" and "the parser panicked: index out of bounds" in finding.message


# -- item 2: nesting deeper than Python's default 1,000 frames ---------------------------

DEEP = {
    "plus_500": "y = " + " + ".join(["a"] * 500) + "\n",
    "subscript_500": "y = x" + "[0]" * 500 + "\n",
    "elif_1000": "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1000)),
    "and_1000": "y = " + " and ".join(["a"] * 1000) + "\n",
    "not_1000": "y = " + "not " * 1000 + "a\n",
    "unary_1000": "y = " + "-" * 1000 + "a\n",
    "lambda_1000": "y = " + "lambda: " * 1000 + "a\n",
    "ternary_1000": "y = " + "a if b else " * 1000 + "c\n",
    "call_1000": "y = f" + "()" * 1000 + "\n",
    "attribute_1000": "y = a" + ".b" * 1000 + "\n",
    "and_20000": "y = " + " and ".join(["a"] * 20000) + "\n",  # crashed LibCST's parser on an 8 MB stack
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_analysed_with_every_rule(project, run, name):
    project.write("deep.py", KEYWORDS + DEEP[name])
    project.write("good.py", KEYWORDS)
    code, by_path, err = _check(run, "--select", "ALL", "--exit-zero", ".")
    assert code == 0 and "error" not in err, err[-2000:]
    deep = {r["rule"] for r in by_path["deep.py"]}
    assert "TL000" not in deep and deep == {r["rule"] for r in by_path["good.py"]}


def test_deep_nesting_in_a_pool_worker(project, run):
    project.write("deep.py", KEYWORDS + DEEP["elif_1000"])
    for i in range(pool.MIN_FILES_FOR_POOL):
        project.write(f"m{i:02}.py", KEYWORDS)
    code, by_path, err = _check(run, "--select", "ALL", "-j", "2", ".")
    assert code == 1 and "error" not in err, err[-2000:]
    assert {r["rule"] for r in by_path["deep.py"]} == {r["rule"] for r in by_path["m00.py"]}


def test_too_deep_even_for_the_deep_stack_is_tl000_nested_too_deeply(project, run, monkeypatch):
    monkeypatch.setattr(engine, "DEEP_RECURSION_LIMIT", 1000)  # Python's default: what it was
    # A finding inside the deep statement: its position needs that statement's code generated.
    # (TL004's, in a script that reads its settings from the command line)
    inside = "else:\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)\nargs = argparse.ArgumentParser().parse_args()\n"
    project.write("deep.py", KEYWORDS + DEEP["elif_1000"] + inside)
    project.write("good.py", KEYWORDS)
    code, by_path, err = _check(run, "--select", "ALL", ".")
    assert code == 1 and "error" not in err, err[-2000:]
    (row,) = by_path["deep.py"]
    assert row["rule"] == "TL000" and "nested too deeply" in row["message"]
    assert by_path["good.py"]


class _Recursive(Rule):
    """Recurses once per level of nesting, as a rule may."""

    code = "TL991"
    name = "recursive"
    severity = Severity.WARNING
    summary = "test rule that recurses over the tree"

    def visit_Module(self, node: cst.Module) -> None:
        def depth(n: cst.CSTNode) -> int:
            return 1 + max((depth(c) for c in n.children), default=0)

        self.report(node, f"depth {depth(node)}")


class _ForeverRecursive(_Recursive):
    code = "TL992"
    name = "forever-recursive"

    def visit_Module(self, node: cst.Module) -> None:
        def forever(n: int) -> int:
            return forever(n + 1)

        forever(0)


class _KeyErrorOnNode(_Recursive):
    code = "TL993"
    name = "key-error-on-node"

    def visit_Module(self, node: cst.Module) -> None:
        raise KeyError(node)  # str() of this is the whole deep tree's repr


@pytest.fixture
def test_rules(monkeypatch):
    add_rules(monkeypatch, _Recursive, _ForeverRecursive, _KeyErrorOnNode)


def test_a_rule_recursing_per_level_works_on_deep_files(test_rules):
    result = engine.analyze_source("deep.py", (KEYWORDS + DEEP["lambda_1000"]).encode(), frozenset({"TL991"}))
    assert result.errors == []
    (finding,) = result.findings
    assert int(finding.message.split()[1]) > 1000


def test_a_rule_that_runs_out_of_stack_on_a_deeply_nested_file_makes_the_file_tl000(test_rules):
    result = engine.analyze_source("x.py", (KEYWORDS + DEEP["and_20000"]).encode(), frozenset({"TL000", "TL991", "TL992"}))
    (finding,) = result.findings
    assert finding.rule == "TL000" and "nested too deeply" in finding.message


def test_a_rule_recursing_without_end_on_a_shallow_file_is_that_rule_failing(test_rules):
    """Not the file's depth (a 19-line file): the rule is reported as failed and dropped, and
    the other rules' findings on the file stand (once: the whole file was TL000 "nested too
    deeply", and nothing in it was checked; gigagan-pytorch, through TL002)."""
    result = engine.analyze_source("x.py", KEYWORDS.encode(), frozenset({"TL000", "TL001", "TL991", "TL992"}))
    assert {f.rule for f in result.findings} == {"TL001", "TL991"}
    (error,) = result.errors
    assert error.rule == "TL992" and error.error.startswith("RecursionError")
    assert result.record.parsed and result.record.unanalysed == ""


def test_a_rule_recursing_without_end_is_reported_on_the_command_line(project, run, test_rules):
    project.write("a.py", KEYWORDS)
    code, out, err = run("check", "--isolated", "--no-cache", "--select", "TL992,TL001", "--format", "concise", ".")
    assert code == 2
    assert "rule TL992 failed on a.py: RecursionError" in err
    assert "a.py:16:5: TL001" in out and "TL000" not in out


def test_a_rule_error_holding_a_deep_node_is_reported_briefly(project, run, test_rules):
    project.write("deep.py", KEYWORDS + DEEP["elif_1000"])
    project.write("good.py", KEYWORDS)
    code, out, err = run("check", "--isolated", "--no-cache", "--select", "TL993,TL001", "--exit-zero", "-v", ".")
    assert code == 2
    assert "rule TL993 failed on deep.py: KeyError: <Module node>" in err
    assert len(err) < 20_000 and "good.py" in out


def test_dispatcher_error_message_and_traceback_are_bounded():
    module = cst.parse_module(DEEP["elif_1000"])
    ctx = FileContext("deep.py", module, DEEP["elif_1000"], ImportTable("deep", False))
    rule = _KeyErrorOnNode(ctx, {})
    Dispatcher(ctx, [rule]).run()
    (error,) = ctx.errors
    assert error.error == "KeyError: <Module node>"
    assert len(error.traceback) < 5_000


# -- item 4: huge files ----------------------------------------------------------------

@pytest.mark.parametrize(
    "value, size",
    [(1, 1), (5_000_000, 5_000_000), ("4MB", 4_000_000), ("10MiB", 10 * 2**20), ("1.5 kb", 1500), ("512KiB", 2**19)],
)
def test_max_file_size_values(value, size):
    assert parse_size(value, "pyproject.toml", "max-file-size") == size


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "lots", "inf", "nan", "-3MB", "", [1]])
def test_bad_max_file_size_is_a_config_error(value):
    with pytest.raises(ConfigError, match="max-file-size"):
        parse_size(value, "pyproject.toml", "max-file-size")


def test_file_above_the_limit_is_tl000_without_parsing_and_others_are_linted(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nmax-file-size = \"1KB\"\n")
    project.write("big.py", KEYWORDS + "x = 1\n" * 200)
    project.write("good.py", KEYWORDS)
    code, out, err = run("check", "--no-cache", "--format", "json", ".")
    rows = json.loads(out)
    big = [r for r in rows if r["path"] == "big.py"]
    assert code == 1 and "error" not in err
    assert [r["rule"] for r in big] == ["TL000"]
    assert "too large to analyse (" in big[0]["message"] and "limit 0.001 MB; raise max-file-size" in big[0]["message"]
    assert {r["rule"] for r in rows if r["path"] == "good.py"} - {"TL000"}


def test_default_limit_applies(project, run, monkeypatch):
    project.write("huge.py", b"x = 1\n" * (DEFAULT_MAX_FILE_SIZE // 6 + 1))
    never = lambda *a, **k: pytest.fail("a file above the limit was analysed")  # noqa: E731
    monkeypatch.setattr(pool, "analyze_source", never)
    monkeypatch.setattr(pool, "_isolated", never)
    code, by_path, _ = _check(run, ".")
    assert code == 1 and "too large to analyse" in by_path["huge.py"][0]["message"]


def _lint(root: Path, jobs: int) -> list[dict]:
    settings = build_settings(None, {"select": ["ALL"]}, root=root)
    result = run_layer.lint_files(discover(["."], settings, root).files, settings, root, jobs=jobs)
    assert result.errors == []
    return [f.to_dict() for f in result.findings]


@pytest.mark.parametrize("jobs, files", [(1, 2), (4, 2), (2, pool.MIN_FILES_FOR_POOL + 2)], ids=["j1", "few-files", "pool"])
def test_large_file_is_analysed_in_a_child_process(project, monkeypatch, jobs, files):
    project.write("big.py", KEYWORDS + "x = 1\n" * 50)
    for i in range(files):
        project.write(f"m{i:02}.py", KEYWORDS)
    expected = _lint(project.root, jobs)
    parent = os.getpid()
    real = pool.analyze_source

    def dies_in_a_child(path, data, enabled, options):
        if path == "big.py":
            assert os.getpid() != parent, "a large file was analysed in the main process"
            os._exit(139)  # what a crash or the kernel's OOM killer looks like
        return real(path, data, enabled, options)

    monkeypatch.setattr(pool, "ISOLATE_BYTES", len(KEYWORDS) + 100)
    monkeypatch.setattr(pool, "analyze_source", dies_in_a_child)
    findings = _lint(project.root, jobs)
    (crashed,) = [f for f in findings if f["path"] == "big.py"]
    assert crashed["rule"] == "TL000" and "its process died" in crashed["message"]
    assert [f for f in findings if f["path"] != "big.py"] == [f for f in expected if f["path"] != "big.py"]

    monkeypatch.setattr(pool, "analyze_source", real)
    assert _lint(project.root, jobs) == expected  # isolated, the same findings


# -- item 18 (pool): workers end with the parent; SIGTERM/SIGINT end the run cleanly ------

def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found.update(int(c) for c in f.read().split())
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while (alive := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


@pytest.fixture
def busy_tree(tmp_path):
    """Enough files, slow enough to analyse, that ``check -j2`` is busy in its pool."""
    body = "import torch\nimport torch.nn as nn\n" + "".join(
        f"\nclass M{i}(nn.Module):\n    def forward(self, x):\n        return x + {i}\n\n"
        f"def train{i}(model, loader, optimizer):\n    model.eval()\n    for b in loader:\n"
        f"        loss = model(b)\n        loss.backward()\n        optimizer.step()\n" for i in range(200)
    )
    for i in range(pool.MIN_FILES_FOR_POOL + 16):
        (tmp_path / f"f{i:02}.py").write_text(body)
    return tmp_path


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("sig, code, message", [
    (signal.SIGKILL, -9, None), (signal.SIGTERM, 143, "torchlint: terminated"), (signal.SIGINT, 130, "torchlint: interrupted"),
], ids=["SIGKILL", "SIGTERM", "SIGINT"])
def test_pool_workers_end_with_the_run(busy_tree, sig, code, message):
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "-j2", "."], cwd=busy_tree,
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        # Ctrl-C as a terminal delivers it: a suite started in the background (``cmd &``) runs
        # with SIGINT ignored, and Python keeps an ignored SIGINT ignored in its children.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            time.sleep(0.02)
        assert len(workers) >= 2, "the pool never started"
        time.sleep(0.3)  # the workers are analysing
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == code
        if message:
            assert err.decode().strip() == message
        assert _wait_gone(workers, 5) == set()
    finally:
        proc.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_worker_without_the_death_signal_watches_its_parent(tmp_path):
    """Where PR_SET_PDEATHSIG is unavailable, a thread in the worker polls its parent."""
    script = (
        "import os, time\n"
        "from torchlint import pool\n"
        "pool._die_with_parent = lambda: False\n"
        "pool.PARENT_POLL_SECONDS = 0.05\n"
        "r, w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    parent = os.getpid()\n"
        "    worker = os.fork()\n"
        "    if worker == 0:\n"
        "        pool._worker_start(parent)\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    os.write(w, str(worker).encode())\n"
        "    os._exit(0)\n"
        "print(os.read(r, 64).decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=60).stdout
    worker = int(out)
    try:
        assert _wait_gone({worker}, 5) == set()
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


def _every_node(node):
    """``node`` and everything below it, trivia included (LibCST's own ``children``)."""
    yield node
    for child in node.children:
        yield from _every_node(child)


# -- a file that cannot be analysed is named, also where TL000 is not selected ---------------

def test_a_file_not_analysed_is_a_warning_where_tl000_is_not_selected(project, run, tmp_path):
    """No finding says so (TL000 is not selected): a warning names it, cold and from the cache,
    and the exit code stays the findings' (warnings never change it)."""
    project.write("bad.py", "def f(:\n    pass\n")
    project.write("good.py", KEYWORDS)
    for args in (("--no-cache",), ("--cache-dir", str(tmp_path / "c")), ("--cache-dir", str(tmp_path / "c"))):
        code, out, err = run("check", "--isolated", "--select", "TL001", "--format", "concise", *args, ".")
        assert code == 1 and "good.py:16:5: TL001" in out and "bad.py" not in out
        assert err.splitlines() == ["torchlint: warning: bad.py: not analysed: syntax error: invalid syntax "
                                    "(line 1, column 7) (TL000, which reports such files and cells, is not selected)"]


def test_a_notebook_cell_not_checked_is_a_warning_where_tl000_is_not_selected(project, run, tmp_path):
    """The notebook's other cells are linted; the cell left out is named on standard error,
    cold and from the cache (nothing is lost silently); with TL000 selected it is a finding."""
    cells = [["import torch\n", "x = torch.zeros(3)\n"], ["def broken(:\n", "  pass\n"], ["print(x)\n"]]
    project.write("a.ipynb", json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                                    "execution_count": None, "source": c} for c in cells],
                                         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    for args in (("--no-cache",), ("--cache-dir", str(tmp_path / "c")), ("--cache-dir", str(tmp_path / "c"))):
        code, out, err = run("check", "--isolated", "--ignore", "TL000", "--format", "concise", *args, ".")
        assert code == 0 and "a.ipynb" not in out
        assert err.splitlines() == ["torchlint: warning: a.ipynb: not checked: cell 2 (syntax error: invalid syntax, "
                                    "line 1, column 12) (TL000, which reports such files and cells, is not selected)"]
    code, out, err = run("check", "--isolated", "--no-cache", "--format", "concise", ".")
    assert code == 1 and "a.ipynb:cell 2:line 1:12: TL000" in out and "warning" not in err


def test_a_file_not_analysed_is_a_finding_where_tl000_is_selected(project, run):
    project.write("bad.py", "def f(:\n    pass\n")
    code, out, err = run("check", "--isolated", "--no-cache", "--format", "concise", ".")
    assert code == 1 and "bad.py:1:7: TL000" in out and "warning" not in err


def test_a_file_too_large_is_named_where_tl000_is_ignored(project, run):
    project.write("pyproject.toml", "[tool.torchlint]\nmax-file-size = 100\n")
    project.write("big.py", "x = 1\n" * 50)
    code, out, err = run("check", "--no-cache", "--ignore", "TL000", ".")
    assert code == 0
    assert "torchlint: warning: big.py: not analysed: " in err and "too large" in err


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs signal masks")
def test_ctrl_c_and_sigterm_are_held_while_a_submit_may_fork_the_workers():
    """Their handlers raise; raised inside ``os.fork``'s hooks the exception is swallowed and
    the signal lost (seen: a SIGTERM run that went on and then hung on logging's lock)."""
    class Recording:
        def submit(self, fn, chunk):
            self.held = signal.pthread_sigmask(signal.SIG_BLOCK, [])
            return "future"

    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    recording = Recording()
    assert pool._submit(recording, []) == "future"
    assert {signal.SIGINT, signal.SIGTERM} <= recording.held
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs signal masks")
def test_a_worker_forked_with_the_signals_held_takes_them_again():
    script = (
        "import signal\n"
        "from torchlint import pool\n"
        "signal.signal(signal.SIGTERM, lambda *a: None)\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})\n"
        "pool._worker_start(__import__('os').getppid())\n"
        "print(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),\n"
        "      signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.split() == ["[]", "True"], done.stderr
