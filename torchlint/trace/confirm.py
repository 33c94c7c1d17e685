"""``torchlint check --trace``: meta-trace every buildable ``nn.Module`` class in the linted
files and merge the results into the static findings.

* TL005 ``unused-layer`` findings become ``confirmed=True`` when the layer was never used
  in the traced forward passes (training and eval mode), and are dropped when it was (a
  dynamic use the static rule could not see).  Without a completed trace they are unchanged.
* A shape failure becomes a TL100 ``shape-mismatch`` finding at the layer's definition line
  (or at the forward line that failed).  Only failures that are clearly about shapes are
  reported; when the input was inferred, every common input size must fail.

All classes are traced in one child process (a crash or hang only costs the class it
happened in).  A class that cannot be built (constructor arguments without a config entry,
no ``forward``, no inferable input) is skipped silently.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any, Callable

from torchlint.finding import Finding
from torchlint.trace import locate, report, shapes
from torchlint.trace import config as trace_config_mod
from torchlint.trace.command import require_torch
from torchlint.trace.runner import run_jobs

UNUSED_LAYER = "TL005"
# Base names that mark a class as an nn.Module subclass without importing anything.
_MODULE_BASE = re.compile(r"(Module|Sequential|ModuleList|ModuleDict|Model|Net|Network|Encoder|"
                          r"Decoder|Block|Layer|Head|Backbone)$")
# Files never imported by ``check --trace``: importing them has side effects by design.
_NEVER_IMPORT = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "manage.py"}
# Skipped without a word: the class simply cannot be traced as is.
_QUIET_ERRORS = {"needs-args", "no-forward", "not-a-module", "no-input-shape", "arity",
                 "target-not-found"}


def _base_text(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - pragma: no cover
        return ""


def candidate_classes(path: Path) -> list[str]:
    """Top-level classes in ``path`` that look like ``nn.Module`` subclasses.

    A base counts when it is spelled like a torch module (``nn.Module``, ``nn.Sequential``,
    ``torch.nn.X``, ``...Module``/``...Net``/``...Block``), is a class of this file that
    counts, or comes from a relative import (a base class of the same project).  The child
    checks ``issubclass(cls, nn.Module)`` for real before building anything.
    """
    if path.name in _NEVER_IMPORT:
        return []
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    if "torch" not in source:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    relative = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            relative.update(a.asname or a.name for a in node.names)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    found: list[str] = []
    changed = True
    while changed:
        changed = False
        for node in classes:
            if node.name in found:
                continue
            for base in node.bases:
                text = _base_text(base)
                last = text.rsplit(".", 1)[-1]
                if (text.startswith(("nn.", "torch.nn.")) or _MODULE_BASE.search(last)
                        or last in found or text in relative):
                    found.append(node.name)
                    changed = True
                    break
    return [n.name for n in classes if n.name in found]


def _warn(message: str) -> None:
    print(f"torchlint: warning: {message}", file=sys.stderr)


def apply_trace(findings: list[Finding], files: list[Path], trace_config: dict[str, Any] | None,
                config_path: str | None = None, *,
                warn: Callable[[str], None] | None = None) -> list[Finding]:
    """Return ``findings`` with the trace merged in (see the module docstring)."""
    warn = warn or _warn
    cfg = trace_config_mod.load(trace_config, config_path)
    require_torch()
    cwd = Path.cwd().resolve()
    linted = {Path(f).resolve() for f in files if str(f).endswith(".py")}

    jobs: list[dict[str, Any]] = []
    meta: dict[str, tuple[Path, str]] = {}
    for path in sorted(linted):
        names = candidate_classes(path)
        configured = [key.rsplit(":", 1)[1] for key in cfg.models
                      if cfg.model_for_file(path, key.rsplit(":", 1)[1]) is not None]
        for name in dict.fromkeys(names + configured):
            entry = cfg.model_for_file(path, name)
            job_id = f"{len(jobs)}"
            jobs.append({
                "id": job_id,
                "target": {"file": str(path), "module": None, "attr": name,
                           "display": f"{locate.relative_path(path, cwd)}:{name}"},
                "args": entry.args if entry else [],
                "kwargs": entry.kwargs if entry else {},
                "inputs": [s.to_json() for s in entry.inputs] if entry and entry.inputs else None,
                "device": "meta",
                "mode": "check",
            })
            meta[job_id] = (path, name)
    if not jobs:
        return list(findings)

    results = run_jobs(jobs, timeout=cfg.timeout, memory_limit=cfg.memory_limit, cwd=cwd)

    usage: dict[tuple[Path, str], dict[str, bool]] = {}
    new: dict[tuple[str, int, int], Finding] = {}
    for job in jobs:
        path, name = meta[job["id"]]
        display = job["target"]["display"]
        result = results.get(job["id"], {})
        status = result.get("status")
        if status == "error":
            if result.get("error_kind") == "no-torch":
                require_torch()  # pragma: no cover - find_spec said yes, import said no
            if result.get("error_kind") not in _QUIET_ERRORS:
                warn(f"--trace: could not trace {display}: {result.get('message', '')}")
            continue
        if status in ("ok", "nonfinite"):
            for inst in result.get("instances") or []:
                if not inst.get("file"):
                    continue
                key = (Path(inst["file"]).resolve(), inst["class"])
                attrs = usage.setdefault(key, {})
                for attr, used in inst.get("attrs", {}).items():
                    attrs[attr] = attrs.get(attr, False) or bool(used)
            continue
        failure = result.get("failure") or {}
        if failure.get("exc_type") == "NotImplementedError":
            continue  # an abstract base class: nothing to trace
        problem = report.analyse_failure(failure, result.get("model_type", ""))
        if not problem.tl100:
            hint = f" ({failure['hint']})" if failure.get("hint") else ""
            warn(f"--trace: could not trace {display}: {problem.headline}{hint}")
            continue
        fallback = None
        found = locate.find_class(path, name)
        if found is not None:
            fallback = found[1]
        if problem.location is None or problem.location.path.resolve() not in linted:
            problem.location = fallback
        inputs = ", ".join(shapes.format_spec(s) for s in failure.get("inputs") or result.get("inputs") or [])
        context = f"traced {name} on meta with input {inputs}"
        if result.get("inputs_inferred"):
            context += " (inferred; no common input size ran)"
        finding = problem.finding(fallback, context)
        if finding is None:
            continue
        key2 = (finding.path, finding.line, finding.column)
        new.setdefault(key2, finding)

    out: list[Finding] = []
    for f in findings:
        if f.rule == UNUSED_LAYER:
            cls = (f.extra or {}).get("class")
            attr = (f.extra or {}).get("attribute")
            fpath = (cwd / f.path).resolve()
            attrs = None
            if cls and attr:
                attrs = usage.get((fpath, cls))
                if attrs is None:  # a nested class reported by its short name
                    attrs = next((v for (p, q), v in usage.items()
                                  if p == fpath and q.rsplit(".", 1)[-1] == cls), None)
            if attrs is not None and attr in attrs:
                if attrs[attr]:
                    continue  # used at run time: the static finding was wrong
                f = dataclasses.replace(f, confirmed=True)
        out.append(f)
    out.extend(new.values())
    out.sort(key=lambda f: f.sort_key)
    return out
