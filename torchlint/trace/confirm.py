"""``torchlint check --trace``: meta-trace every buildable ``nn.Module`` class in the linted
files and merge the results into the static findings.

* TL005 ``unused-layer`` findings become ``confirmed=True`` when the layer was never used
  in the traced forward passes (training and eval mode), and are dropped when it was (a
  dynamic use the static rule could not see).  Without a completed trace they are unchanged.
* A shape failure becomes a TL100 ``shape-mismatch`` finding at the layer's definition line
  (or at the forward line that failed).  Only failures that are clearly about shapes are
  reported; when the input was inferred, every common input size must fail.
* Each class takes one training step (the sum of its outputs, or the config entry's ``loss``
  against its ``target-shape``): a loss whose two sides disagree is TL102 at the line calling
  it, batch norm on one value per channel TL103 at the line calling it, an in-place op that
  breaks backward TL104 at its line (a failure at a line that already has one of these is not
  reported again as TL100).

Which classes: those the project index (:mod:`torchlint.semantic.index`, through
:class:`torchlint.project.Project`) knows to be ``nn.Module`` subclasses, through any chain of
project classes in any of the linted files; and those whose ancestry leaves the project into
a torch library other than torch itself (``timm``, ``transformers``, ...) or into a name
nobody can resolve, in a file that imports torch or such a library: the child checks
``issubclass(cls, nn.Module)`` for real before building anything.  ``check --trace`` hands
over the run's file records, so no file is parsed again.

All classes are traced in one child process (a crash or hang only costs the class it
happened in).  A class that cannot be built (constructor arguments without a config entry,
no ``forward``, no inferable input) is skipped silently.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from torchlint import bounded, libraries, shapes
from torchlint import trace_settings as trace_config_mod
from torchlint.errors import TorchlintError
from torchlint.codes import DEVICE_MISMATCH, TENSOR_WITHOUT_DEVICE, UNUSED_LAYER
from torchlint.finding import Finding
from torchlint.imports import ImportTable
from torchlint.project import FileRecord, Project, module_name_for
from torchlint.semantic.index import class_facts
from torchlint.trace import locate, report
from torchlint.trace.command import require_torch
from torchlint.trace.records import TraceResult
from torchlint.trace.runner import Prestarted, prestart, run_jobs

# Files never imported by ``check --trace``: importing them has side effects by design.
_NEVER_IMPORT = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "manage.py"}
# Skipped without a word: the class simply cannot be traced as is.
_QUIET_ERRORS = {"needs-args", "no-forward", "not-a-module", "no-input-shape", "arity",
                 "target-not-found"}
_BUILTINS = frozenset(dir(builtins))

# (path, class) -> attribute -> used in some traced forward pass
Usage = dict[tuple[Path, str], dict[str, bool]]


# --------------------------------------------------------------------------- which classes

def file_record(path: Path, display: str | None = None) -> FileRecord | None:
    """The index part of a file's record, for a file the run did not hand over."""
    try:
        tree = ast.parse(bounded.read_text(path, bounded.NOTEBOOK_LIMIT))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    display = display or path.as_posix()
    is_package = path.name == "__init__.py"
    imports = ImportTable(module_name_for(display), is_package)
    imports.scan(tree)
    return FileRecord(path=display, module_name=imports.module_name, is_package=is_package,
                      imports=imports.names, star_imports=imports.star,
                      index={"classes": class_facts(tree, imports)})


def traceable_classes(project: Project, record: FileRecord) -> list[str]:
    """Top-level classes of ``record`` worth a trace (see the module docstring)."""
    if Path(record.path).name in _NEVER_IMPORT:
        return []
    known = None
    found = []
    for fact in record.index.get("classes", ()):
        name = fact["name"]
        if "." in name:
            continue  # nested: not importable as a top-level name
        qualified = record.qualified(name)
        if project.is_nn_module(qualified):
            found.append(name)
            continue
        if known is None:
            known = _imports_torch(record)
        if known and any(_may_be_module(project, base) for base in project.ancestors(qualified)):
            found.append(name)
    return found


def _imports_torch(record: FileRecord) -> bool:
    names = [*record.imports.values(), *record.star_imports]
    return any(libraries.root(n) in libraries.TORCH_LIBRARIES for n in names)


def _may_be_module(project: Project, base: str) -> bool:
    """Whether an ancestor outside the project could be an ``nn.Module``: a class of a torch
    library other than torch itself, or a name the project cannot resolve (not a builtin, not
    another library)."""
    if project.has_class(base):
        return False  # a project class: its own bases decide
    root = libraries.root(base)
    if root == "torch":
        return False  # torch.nn.* is decided by is_nn_module; the rest of torch is not a module
    if root in libraries.TORCH_LIBRARIES:
        return True
    return not libraries.is_library(base) and base not in _BUILTINS


def candidate_classes(path: Path) -> list[str]:
    """Top-level classes in ``path`` that may be ``nn.Module`` subclasses, judged from the
    file alone (``check --trace`` judges with every linted file)."""
    if path.name in _NEVER_IMPORT:
        return []
    record = file_record(path)
    return traceable_classes(Project([record]), record) if record is not None else []


# --------------------------------------------------------------------------- the run

def _warn(message: str) -> None:
    print(f"torchlint: warning: {message}", file=sys.stderr)


def prestart_trace(trace_config: dict[str, Any] | None, config_path: str | None = None) -> Prestarted | None:
    """For ``check --trace``: the trace child, started now so that it imports torch while the
    files are analysed (``runner.prestart``; ``apply_trace`` hands it its jobs or closes it).
    None where torch is not installed or the configuration is broken: ``apply_trace`` says so."""
    try:
        cfg = trace_config_mod.load(trace_config, config_path)
        require_torch()
    except TorchlintError:
        return None
    return prestart(memory_limit=cfg.memory_limit, cwd=Path.cwd().resolve(), warm_meta=True)


def apply_trace(findings: list[Finding], files: list[Path], trace_config: dict[str, Any] | None,
                config_path: str | None = None, *,
                warn: Callable[[str], None] | None = None,
                records: Iterable[FileRecord] | None = None,
                note: Callable[[str], None] | None = None,
                prestarted: Prestarted | None = None) -> list[Finding]:
    """Return ``findings`` with the trace merged in (see the module docstring).  ``records``:
    the run's file records (``check --trace``); without them the files are read here.
    ``note`` (``check --trace -v``) hears which models were traced with which inputs.
    ``prestarted`` (``prestart_trace``): the child that runs the jobs, closed where none."""
    try:
        warn = warn or _warn
        cfg = trace_config_mod.load(trace_config, config_path)
        require_torch()
        cwd = Path.cwd().resolve()
        linted = {Path(f).resolve() for f in files if str(f).endswith(".py")}
        jobs, meta = plan_jobs(linted, _records_by_path(linted, records, cwd), cfg, cwd)
        if not jobs:
            return list(findings)
        results = run_jobs(jobs, timeout=cfg.timeout, memory_limit=cfg.memory_limit, cwd=cwd, prestarted=prestarted)
    finally:
        if prestarted is not None:
            prestarted.close()  # (run_jobs took it, or nothing will)
    usage: Usage = {}
    new: dict[tuple[str, int, int], Finding] = {}
    for job in jobs:
        path, name = meta[job["id"]]
        result = TraceResult.from_json(results.get(job["id"]) or {"status": "error"})
        if note is not None and result.status in ("ok", "nonfinite"):
            for line in traced_notes(result, job["target"]["display"]):
                note(line)
        display = job["target"]["display"]
        for m in result.losses or []:
            if not m.get("frame"):  # a built-in loss of the config entry: no line to report at
                warn(f"--trace: {display}: the configured loss: TL102 {report.loss_text(m)}")
        found = [f for f in report.traced_findings(result, f"traced {name} on meta with input "
                                                           f"{report.input_summary(result)}")
                 if (cwd / f.path).resolve() in linted]
        finding = read_result(result, path, name, display, linted, usage, warn)
        if finding is not None and all((g.path, g.line) != (finding.path, finding.line) for g in found):
            found.append(finding)
        for finding in found:
            new.setdefault((finding.path, finding.line, finding.column), finding)
    return merge(findings, usage, new, cwd)


def _records_by_path(linted: set[Path], records: Iterable[FileRecord] | None,
                     cwd: Path) -> dict[Path, FileRecord]:
    """Every linted file's record: the run's, else made from the file."""
    by_path: dict[Path, FileRecord] = {}
    for record in records or ():
        path = (cwd / record.path).resolve()
        if path in linted and record.parsed:
            by_path[path] = record
    for path in linted - set(by_path):
        made = file_record(path, locate.relative_path(path, cwd))
        if made is not None:
            by_path[path] = made
    return by_path


def plan_jobs(linted: set[Path], records: dict[Path, FileRecord], cfg: Any,
              cwd: Path) -> tuple[list[dict[str, Any]], dict[str, tuple[Path, str]]]:
    """One ``check`` job per traceable or configured class, and job id -> (file, class)."""
    project = Project(list(records.values()))
    jobs: list[dict[str, Any]] = []
    meta: dict[str, tuple[Path, str]] = {}
    for path in sorted(linted):
        record = records.get(path)
        names = traceable_classes(project, record) if record is not None else []
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
                "train": True,  # one backward: TL005's layers get no gradient (see gradients)
                **_entry_loss(entry, warn_key=f"{locate.relative_path(path, cwd)}:{name}"),
            })
            meta[job_id] = (path, name)
    return jobs, meta


def _entry_loss(entry: Any, warn_key: str) -> dict[str, Any]:
    """The step's loss from a model's config entry (``loss``, ``target-shape``): the loss it
    names, against the target where one is set; else the sum of the outputs."""
    if entry is None or (entry.loss is None and entry.target is None):
        return {}
    from argparse import Namespace

    from torchlint.trace.command import loss_arguments

    try:
        return loss_arguments(Namespace(train=True, loss=None, target_shape=None, target_dtype=None), entry)
    except TorchlintError as exc:
        _warn(f"--trace: {warn_key}: {exc}")
        return {}


def traced_notes(result: TraceResult, display: str) -> list[str]:
    """Lines for ``check --trace -v``: the model, its input and where the input came from (an
    inferred input can hide a shape bug, so say how to pin it); trainable parameters the
    training step left without a gradient, and why."""
    text = f"--trace: traced {display} on meta with input {report.input_summary(result)}"
    if result.inputs_inferred:
        shape = ", ".join(str(list(s["shape"])) for s in result.inputs or [])
        text += (f"; an inferred input can hide a shape bug: pin the real one in "
                 f"[tool.torchlint.trace.models.\"{display}\"] input-shape = {shape}")
    lines = [text]
    for group in result.gradients.no_grad if result.gradients is not None else []:
        lines.append(f"--trace: {display}: `{group['name'] or '(all parameters)'}` ({group['type']}) gets no "
                     f"gradient: {report.cause_text(group.get('cause'))}")
    return lines


def read_result(result: TraceResult, path: Path, name: str, display: str, linted: set[Path],
                usage: Usage, warn: Callable[[str], None]) -> Finding | None:
    """Record which attributes a completed trace used (into ``usage``); a TL100 finding for a
    shape failure; a warning for a trace that could not run for another reason."""
    if result.status == "error":
        if result.error_kind == "no-torch":
            require_torch()  # pragma: no cover - find_spec said yes, import said no
        if result.error_kind not in _QUIET_ERRORS:
            warn(f"--trace: could not trace {display}: {result.message or ''}")
        return None
    if result.status in ("ok", "nonfinite"):
        record_usage(result, usage)
        return None
    return traced_finding(result, path, name, display, linted, warn)


def record_usage(result: TraceResult, usage: Usage) -> None:
    for inst in result.instances or []:
        if not inst.get("file"):
            continue
        attrs = usage.setdefault((Path(inst["file"]).resolve(), inst["class"]), {})
        for attr, used in inst.get("attrs", {}).items():
            attrs[attr] = attrs.get(attr, False) or bool(used)


def traced_finding(result: TraceResult, path: Path, name: str, display: str, linted: set[Path],
                   warn: Callable[[str], None]) -> Finding | None:
    """A TL100 (shape) or TL101 (device) finding for a failed trace; a warning for another
    failure."""
    failure = result.failure
    if failure is None:
        return None
    if failure.exc_type == "NotImplementedError":
        return None  # an abstract base class: nothing to trace
    problem = report.analyse_failure(failure, result.model_type or "")
    if problem.rule is None:
        hint = f" ({failure.hint})" if failure.hint else ""
        warn(f"--trace: could not trace {display}: {problem.headline}{hint}")
        return None
    found = locate.find_class(path, name)
    fallback = found[1] if found is not None else None
    if problem.location is None or problem.location.path.resolve() not in linted:
        problem.location = fallback
    inputs = ", ".join(shapes.format_spec(s) for s in failure.inputs or result.inputs or [])
    context = f"traced {name} on meta with input {inputs}"
    if result.inputs_inferred:
        context += " (inferred; no common input size ran)"
    return problem.finding(fallback, context)


def merge(findings: list[Finding], usage: Usage, new: dict[tuple[str, int, int], Finding],
          cwd: Path) -> list[Finding]:
    """TL005 findings confirmed or dropped by ``usage``; TL010 findings at the line a TL101
    device mismatch was created confirmed (the TL101 finding is then not added: one line,
    one finding); the other new TL100/TL101 findings added."""
    devices = {(f.path, f.line): key for key, f in new.items() if f.rule == DEVICE_MISMATCH}
    out: list[Finding] = []
    for f in findings:
        if f.rule == TENSOR_WITHOUT_DEVICE and (f.path, f.line) in devices:
            new.pop(devices[(f.path, f.line)], None)
            f = dataclasses.replace(f, confirmed=True)
        if f.rule == UNUSED_LAYER:
            attrs = _attrs_of(f, usage, cwd)
            attr = (f.extra or {}).get("attribute")
            if attrs is not None and attr in attrs:
                if attrs[attr]:
                    continue  # used at run time: the static finding was wrong
                f = dataclasses.replace(f, confirmed=True)
        out.append(f)
    out.extend(new.values())
    out.sort(key=lambda f: f.sort_key)
    return out


def _attrs_of(f: Finding, usage: Usage, cwd: Path) -> dict[str, bool] | None:
    cls = (f.extra or {}).get("class")
    attr = (f.extra or {}).get("attribute")
    if not (cls and attr):
        return None
    fpath = (cwd / f.path).resolve()
    attrs = usage.get((fpath, cls))
    if attrs is None:  # a nested class reported by its short name
        attrs = next((v for (p, q), v in usage.items()
                      if p == fpath and q.rsplit(".", 1)[-1] == cls), None)
    return attrs
