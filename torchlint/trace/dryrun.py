"""``torchlint run SCRIPT [-- ARGS]`` (and ``check --run SCRIPT``): the parent side of the dry
run of the user's own training script.

The script runs in the trace child (:mod:`.child.script`), behind the supervisor, in a
temporary directory made here and removed after; what it observed comes back as
observations at lines.  :func:`apply_run` turns them into findings and merges them with the
static findings of the same run: a static finding of the same bug in the same loop (or
function) is marked confirmed and the observation is not repeated; the others are added.
"""

from __future__ import annotations

import ast
import dataclasses
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from torchlint.codes import (
    DEVICE_MISMATCH,
    LOSS_INPUT_MISMATCH,
    LOSS_KEPT_WITH_GRAPH,
    LOSS_TARGET_MISMATCH,
    OPTIMIZER_MISSES_PARAMETERS,
    TENSOR_WITHOUT_DEVICE,
    UNUSED_LAYER,
)
from torchlint.finding import Finding, Span
from torchlint.registry import RULES
from torchlint.trace.plan import CUDA_CONTEXT_BYTES, human_bytes
from torchlint.trace.records import Observation, TraceResult
from torchlint.trace.runner import run_jobs

# An observation confirms the static findings of these codes.
CONFIRMS = {DEVICE_MISMATCH: (DEVICE_MISMATCH, TENSOR_WITHOUT_DEVICE), LOSS_TARGET_MISMATCH: (LOSS_TARGET_MISMATCH, LOSS_INPUT_MISMATCH)}
# ... at the same line: the run names the tensor (TL101), the layer (TL005, TL021) it means.
SAME_LINE = {DEVICE_MISMATCH, UNUSED_LAYER, OPTIMIZER_MISSES_PARAMETERS}
DEVICES = ("fake-cuda", "meta", "cpu")
_RULES = {r.code: r for r in RULES}


@dataclass
class RunOptions:
    script: Path
    argv: list[str] = field(default_factory=list)
    steps: int = 3
    passes: int = 2
    eval_batches: int = 2
    synthetic_data: bool = False
    device: str = "fake-cuda"
    timeout: float = 120.0
    memory_limit: int | None = None
    gpu: tuple[str, int] | None = None  # (description, memory in bytes): --run-gpu


def run_script(options: RunOptions, cwd: Path) -> TraceResult:
    """Run the script once in the trace child; its result (``observations``, ``run``)."""
    workdir = tempfile.mkdtemp(prefix="torchlint-run-")
    try:
        job = {"id": "run", "kind": "script", "script": str(options.script.resolve()), "argv": list(options.argv),
               "workdir": workdir, "device": options.device, "steps": options.steps, "passes": options.passes,
               "eval_batches": options.eval_batches, "synthetic_data": options.synthetic_data}
        scratch = Path(workdir) / "tmp"  # the child's TMPDIR: torch's own caches go there too
        scratch.mkdir()
        results = run_jobs([job], timeout=options.timeout, memory_limit=options.memory_limit, cwd=cwd,
                           env={"TMPDIR": str(scratch)})
        return TraceResult.from_json(results["run"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def findings_of(result: TraceResult, cwd: Path) -> list[Finding]:
    """The run's observations as findings, paths relative to ``cwd``."""
    out = []
    for o in result.observations or []:
        rule = _RULES.get(o["code"])
        if rule is None:
            continue
        path = Path(o["file"])
        line = _keeping_line(path, o) if o["code"] == LOSS_KEPT_WITH_GRAPH else o["line"]
        text = _line_text(str(path), line)
        span = Span(line, len(text) - len(text.lstrip()) + 1, line, len(text.rstrip()) + 1)
        extra = {"run": True, **({"name": o["name"]} if "name" in o else {})}
        out.append(Finding.at(rule, _relative(path, cwd), span, o["message"], extra=extra))
    return out


def merge(findings: list[Finding], observed: list[Finding], cwd: Path) -> list[Finding]:
    """Static findings confirmed by an observation of the same bug in the same loop (or
    function); the observations of a bug a static finding already names there are not
    repeated (one bug, one finding); the other observations added after them."""
    used: set[int] = set()
    out = []
    for f in findings:
        matches = [i for i, o in enumerate(observed) if _same_bug(f, o, cwd)]
        if matches:
            used.update(matches)
            f = dataclasses.replace(f, confirmed=True, extra={**f.extra, "run": observed[matches[0]].message})
        out.append(f)
    out.extend(o for i, o in enumerate(observed) if i not in used)
    out.sort(key=lambda f: f.sort_key)
    return out


def _same_bug(f: Finding, o: Finding, cwd: Path) -> bool:
    """Whether observation ``o`` is the bug static finding ``f`` names: a code that confirms it,
    the same file, and the same line (TL101, TL005, TL021) or loop (or function)."""
    if f.rule not in CONFIRMS.get(o.rule, (o.rule,)) or o.path != f.path:
        return False
    if o.rule in SAME_LINE:
        return f.line == o.line
    return _region(str(cwd / f.path), f.line) == _region(str(cwd / o.path), o.line)


def apply_run(findings: list[Finding], options: RunOptions, cwd: Path,
              report: Callable[[str], None] = lambda text: print(f"torchlint: {text}", file=sys.stderr)
              ) -> list[Finding]:
    """``check --run``: run the script, say how it went, merge what it found."""
    result = run_script(options, cwd)
    for line in summary_lines(result, options, cwd):
        report(line)
    return merge(findings, findings_of(result, cwd), cwd)


def summary_lines(result: TraceResult, options: RunOptions, cwd: Path) -> list[str]:
    """What the run did, in a line or two, and why it stopped early if it did."""
    name = _relative(options.script.resolve(), cwd)
    run = result.run or {}
    if result.status == "error":
        return [f"run: {name} could not run: {result.message}"]
    if not run:  # the process ended before the run could report (os._exit, a crash, a timeout)
        failure = result.failure
        text = failure.message if failure is not None and failure.message else result.message or "no report"
        return [f"run: {name} did not finish: {text}"]
    device = {"fake-cuda": "fake CUDA (meta)", "meta": "meta"}.get(str(run.get("device")), "cpu")
    lines = [f"run: {name} ran {run.get('steps', 0)} optimizer step(s), {run.get('forwards', 0)} model call(s), "
             f"{run.get('batches', 0)} batch(es) in {run.get('passes', 0)} DataLoader pass(es) on {device} "
             f"in {run.get('seconds', result.seconds or 0):.1f} s; {_ended(run)}"]
    rates = [r[0] for r in run.get("lr") or [] if r]
    if len(set(rates)) > 1:  # a schedule: what the real scheduler gave each step
        lines.append("run: learning rate at each optimizer step: " + ", ".join(f"{r:.3g}" for r in rates[:12])
                     + (", ..." if len(rates) > 12 else ""))
    if run.get("peak_bytes"):
        lines.append(f"run: peak memory on the fake GPU {human_bytes(run['peak_bytes'])} (tensors alive at once: "
                     "weights, gradients, optimizer state, activations; the CUDA context and the allocator's "
                     "rounding come on top)")
        if options.gpu is not None:
            name, capacity = options.gpu
            total = run["peak_bytes"] + CUDA_CONTEXT_BYTES
            verdict = "fits" if total <= capacity else "does NOT fit"
            lines.append(f"run: with the CUDA context ({human_bytes(CUDA_CONTEXT_BYTES)}) that is "
                         f"{human_bytes(total)}: {verdict} on {name}")
    if result.status == "failed":
        failure = result.failure
        if failure is not None:
            where = ""
            if failure.user_frame:
                where = f" at {_relative(Path(failure.user_frame['file']), cwd)}:{failure.user_frame['line']}"
            lines.append(f"run: the script failed{where}: {failure.exc_type}: {failure.exc_message or failure.message}"[:600])
        elif result.message:
            lines.append(f"run: {result.message}")
    if run.get("written"):
        lines.append(f"run: {len(run['written'])} file(s) the script wrote went to a temporary directory, "
                     "removed after the run")
    if run.get("blocked"):
        lines.append(f"run: network access refused: {', '.join(run['blocked'][:3])}")
    return lines


def _ended(run: dict[str, Any]) -> str:
    ended = str(run.get("ended", "")) or "ended"
    if ended.startswith("bound"):
        return "stopped at the step bound (--steps, --passes)"
    if ended == "exit":
        return f"the script called exit({run.get('exit_code')})"
    return {"finished": "the script finished", "failed": "the script raised"}.get(ended, ended)


# --------------------------------------------------------------------------- source lookups

def _relative(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=64)
def _tree(path: str) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


@lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _line_text(path: str, line: int) -> str:
    lines = _lines(path)
    return lines[line - 1] if 0 < line <= len(lines) else ""


_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _region(path: str, line: int) -> tuple[int, int]:
    """The outermost loop holding ``line`` in its function, else the function, else the
    module: where one bug's static and dynamic findings meet."""
    tree = _tree(path)
    if tree is None:
        return (0, 0)
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if scope is tree or node.lineno > getattr(scope, "lineno", 0):
                scope = node
    for node in ast.walk(scope):
        if isinstance(node, _LOOPS) and node.lineno <= line <= (node.end_lineno or node.lineno):
            inner_function = any(isinstance(f, _FUNCTIONS) and f is not scope and f.lineno <= node.lineno
                                 <= (f.end_lineno or f.lineno) for f in ast.walk(scope))
            if not inner_function:
                return (node.lineno, node.end_lineno or node.lineno)
    if scope is tree:
        return (0, 0)
    return (getattr(scope, "lineno", 0), getattr(scope, "end_lineno", 0) or 0)


def _keeping_line(path: Path, o: Observation) -> int:
    """TL002: the statement in the stepping loop that keeps the graph (``total += loss``,
    ``losses.append(loss)``, ``total = total + loss``); the step's line where none is found."""
    tree = _tree(str(path))
    name = o.get("name", "")
    step_line = (o.get("region") or [0, o["line"]])[1]
    if tree is None or not name:
        return o["line"]
    owner, _, attribute = name.partition(".")
    # a local is kept in the stepping loop; an attribute (``module.outputs``) wherever it is
    # appended to, often in another method (``self.outputs.append(loss)``)
    start, end = _region(str(path), step_line) if not attribute else (0, 0)
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or not (start <= node.lineno <= (end or 10**9)):
            continue
        if _keeps(node, name if not attribute else "." + attribute):
            best = node.lineno if best is None else min(best, node.lineno)
    return best or o["line"]


def _keeps(node: ast.stmt, name: str) -> bool:
    """Whether ``node`` adds to ``name`` (``".attr"``: to any ``obj.attr``)."""
    def same(n: ast.AST) -> bool:
        spelled = _spelled(n)
        return spelled.endswith(name) and "." in spelled if name.startswith(".") else spelled == name

    if isinstance(node, ast.AugAssign):
        return same(node.target)
    if isinstance(node, ast.Assign):
        return any(same(t) for t in node.targets) and any(
            same(n) for n in ast.walk(node.value) if isinstance(n, (ast.Name, ast.Attribute)))
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert", "add") \
            and same(func.value)
    return False


def _spelled(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    if isinstance(node, ast.Subscript):
        return _spelled(node.value)
    return ""
