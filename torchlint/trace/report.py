"""Turn a child result (a :class:`~torchlint.trace.records.TraceResult`) into locations,
TL100 findings and table/JSON output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint.codes import (BATCH_NORM_ONE_VALUE, DEVICE_MISMATCH, INPLACE_BREAKS_BACKWARD, LOSS_TARGET_MISMATCH,
                             SHAPE_MISMATCH)
from torchlint.finding import Finding
from torchlint.rule import rule_info
from torchlint.ruleinfo import RuleInfo
from torchlint.shapes import format_spec
from torchlint.trace import locate
from torchlint.trace.plan import human_bytes, render_text
from torchlint.trace.records import (Cause, Failure, Frame, Gradients, InplaceInfo, LossMismatch, ParamGroup,
                                     TraceResult)


@dataclass
class Problem:
    """A failed trace, located in the user's source."""

    headline: str  # one line, without the location
    tl100: bool  # a shape mismatch (TL100) rather than some other failure
    location: locate.Location | None
    details: list[tuple[str, str]] = field(default_factory=list)  # (label, text)
    failure: dict[str, Any] = field(default_factory=dict)  # the record as JSON
    record: Failure = field(default_factory=lambda: Failure("trace"))
    tl101: bool = False  # a CPU tensor made in forward met the model's tensors (TL101)
    code: str | None = None  # another traced rule's finding (TL102, TL103)

    @property
    def rule(self) -> RuleInfo | None:
        """The traced rule this failure is a finding of, if any."""
        if self.code is not None:
            return rule_info(self.code)
        return rule_info(SHAPE_MISMATCH) if self.tl100 else rule_info(DEVICE_MISMATCH) if self.tl101 else None

    def finding(self, fallback: locate.Location | None = None, context: str = "") -> Finding | None:
        loc = self.location or fallback
        if loc is None or self.rule is None:
            return None
        fix = self.record.fix
        message = self.headline + (f"; {fix}" if fix else "") + (f" ({context})" if context else "")
        extra = {k: self.failure[k] for k in ("expected", "fix", "received", "module", "inputs", "device_mismatch")
                 if k in self.failure}
        return Finding.at(self.rule, locate.relative_path(loc.path), loc.span, message, extra=extra, confirmed=True)


def _frame_location(frame: Frame | None) -> locate.Location | None:
    if not frame or not frame.get("file") or not frame.get("line"):
        return None
    return locate.line_location(Path(frame["file"]), frame["line"], frame.get("colno"),
                                frame.get("end_colno"), frame.get("end_lineno"))


def definition_location(failure: Failure) -> locate.Location | None:
    owner = failure.owner
    if not owner or not owner.get("file"):
        return None
    path = Path(owner["file"])
    loc = locate.find_definition(path, owner["qualname"], owner.get("path") or [],
                                 owner.get("class_line"))
    if loc is None:
        found = locate.find_class(path, owner["qualname"], owner.get("class_line"))
        loc = found[1] if found else None
    return loc


def describe_value(d: Any) -> str:
    if isinstance(d, list):
        inner = ", ".join(describe_value(x) for x in d)
        return f"({inner})" if len(d) != 1 else f"({inner},)"
    if not isinstance(d, dict):
        return str(d)
    if "shape" in d:
        return format_spec(d)
    if "name" in d and "value" in d and isinstance(d["value"], (dict, list)):
        return f"{d['name']}={describe_value(d['value'])}"
    if "dict" in d:
        return "{" + ", ".join(f"{k}: {describe_value(v)}" for k, v in d["dict"].items()) + "}"
    if "value" in d:
        return repr(d["value"])
    return d.get("type", "?")


def describe_args(items: Any) -> str:
    if not isinstance(items, list):
        return describe_value(items)
    return ", ".join(describe_value(x) for x in items) or "-"


def analyse_failure(failure: Failure | dict[str, Any], model_type: str = "") -> Problem:
    """Locate a failure and say it in a headline and labelled details."""
    rec = failure if isinstance(failure, Failure) else Failure.from_json(failure)
    kind = rec.kind
    module = rec.module or {}
    name = module.get("name", "")
    label = f"`{name}` ({module.get('type')})" if name else f"`{module.get('type', model_type)}` (the model)"
    user = _frame_location(rec.user_frame)
    details: list[tuple[str, str]] = []
    # A model input that does not fit its first layer is the input's fault: no finding.
    tl100 = bool(rec.shape_related) and rec.phase == "forward" and not rec.input_fault
    if kind == "device" and rec.device_mismatch:
        return _device_problem(rec, user)
    if rec.exc_type == "ValueError" and BATCH_NORM_ERROR in (rec.exc_message or ""):
        return _batch_norm_problem(rec, user, label)
    if kind == "layer":
        loc = definition_location(rec)
        if rec.problem:
            headline = f"{label}: {rec.problem}"
        else:
            headline = f"{label} failed: {rec.message}"
        if loc is not None and loc.code:
            details.append(("defined", f"{loc.display_path()}:{loc.line}  {loc.code}"))
        if user is not None:
            details.append(("called", f"{user.display_path()}:{user.line}  {user.code}"))
            if loc is None:
                loc = user
        details.append(("received", describe_args(rec.received if rec.received is not None else [])))
    elif kind == "forward":
        loc = user
        where = f"{module.get('type', model_type)}.forward" if module else "forward"
        headline = f"in {where} ({'`' + name + '`' if name else 'the model'}): " \
                   f"{rec.problem or rec.message}"
        if rec.problem:
            details.append(("error", rec.message))
        if user is not None and user.code:
            details.append(("code", user.code))
        if rec.received:
            details.append(("module input", describe_args(rec.received)))
    else:
        loc = user
        phase = {"import": "importing the model's module failed: ",
                 "build": "building the model failed: ", "forward": "the forward pass failed: ",
                 "trace": "the trace failed: ",
                 "step": "the training step (loss, backward, memory plan) failed: "}.get(rec.phase or "", "")
        headline = f"{phase}{rec.message}"
        if user is not None and user.code:
            details.append(("code", user.code))
        if rec.phase == "timeout" and rec.traceback:  # where it hung, innermost first
            details.append(("stack", " <- ".join(
                f"{f['function']} ({locate.relative_path(Path(f['file']))}:{f['line']})"
                for f in reversed(rec.traceback))))
    details += _notes(rec, kind)
    return Problem(headline, tl100, loc, details, rec.to_json(), rec)


BATCH_NORM_ERROR = "Expected more than 1 value per channel when training"


def _batch_norm_problem(rec: Failure, user: locate.Location | None, label: str) -> Problem:
    """TL103: batch norm in training got one value per channel (a batch of 1), at the line in
    forward that called it."""
    received = describe_args(rec.received) if rec.received else ""
    headline = (f"{label} gets one value per channel in training{f' ({received})' if received else ''}: "
                "batch norm cannot take batch statistics of a single value and raises "
                f"'{BATCH_NORM_ERROR}'; a batch of 1 is what the last batch of a DataLoader with "
                "drop_last=False is when len(dataset) % batch_size == 1")
    rec.fix = ("pass drop_last=True to the training DataLoader, or keep every batch larger than 1 "
               "(or use GroupNorm/LayerNorm, which do not depend on the batch)")
    details: list[tuple[str, str]] = []
    if user is not None:
        details.append(("called", f"{user.display_path()}:{user.line}  {user.code}"))
    loc = user or definition_location(rec)
    details.append(("fix", rec.fix))
    return Problem(headline, False, loc, details, rec.to_json(), rec, code=BATCH_NORM_ONE_VALUE)


# --------------------------------------------------------------------------- TL102, TL104

def _side(side: dict[str, Any]) -> str:
    return f"{list(side['shape'])} ({side['dtype']})"


def _squeezed(shape: list[int], other: list[int]) -> bool:
    return len(shape) == len(other) + 1 and shape[-1] == 1 and shape[:-1] == other


def loss_text(m: LossMismatch) -> str:
    """TL102's message: what each side of the loss was, what goes wrong, what to write."""
    loss, a, b, problem = m["loss"], m["input"], m["target"], m["problem"]
    head = f"`{loss}` gets an input of {_side(a)} and a target of {_side(b)}"
    if problem == "broadcast":
        if _squeezed(a["shape"], b["shape"]):
            fix = "squeeze the input's last dimension (`input.squeeze(-1)`)"
        elif _squeezed(b["shape"], a["shape"]):
            fix = "squeeze the target's last dimension (`target.squeeze(-1)`)"
        else:
            fix = "give both the same shape"
        wide = list(m.get("broadcast") or [])
        if wide == list(a["shape"]):
            return (f"{head}: the target is broadcast to the input's shape {wide}, so every input is "
                    f"compared with the same targets, silently (PyTorch only warns); {fix}")
        return (f"{head}: they broadcast to {wide}, so the loss silently "
                f"compares every input with every target and trains on a wrong value; {fix}")
    if loss in ("cross_entropy", "nll_loss", "multi_margin_loss"):
        expected = m.get("expected") or {"shape": [], "dtype": "int64"}
        takes = f"class indices of {_side(expected)}"
        if m.get("probabilities"):
            takes += f" or class probabilities of {list(m['probabilities'])} (float)"
        if problem == "dtype" and b["dtype"].startswith(("int", "uint")):
            fix = "pass `target.long()`"
        elif problem == "dtype":
            fix = "pass class indices as `target.long()`"
        elif len(b["shape"]) == len(expected["shape"]) + 1 and b["shape"][-1] == 1 \
                and b["shape"][:-1] == expected["shape"]:
            fix = "pass `target.squeeze(-1)`"
        elif b["dtype"].startswith(("float", "bfloat")) and len(b["shape"]) == len(a["shape"]):
            fix = "pass `target.argmax(1)` for one-hot targets, or one column per class"
        else:
            fix = "shape the target like the labels of a batch"
        return f"{head}: it takes {takes}, so the loss fails; {fix}"
    if problem == "dtype":
        return f"{head}: it takes a floating-point target, so the loss fails; pass `target.float()`"
    return f"{head}: the shapes do not broadcast, so the loss fails; give both the same shape"


_AUGMENTED = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/=", "pow_": "**=", "floor_divide_": "//="}


def inplace_text(info: InplaceInfo, at: locate.Location | None) -> str:
    """TL104's message: the in-place op, the op that saved the tensor and where."""
    op = info.get("op") or "an in-place op"
    code = (info.get("frame") or {}).get("code", "")
    augmented = _AUGMENTED.get(op)
    if augmented and augmented in code:
        op = augmented  # `h += 1` runs as `add_`
    shape = f" of {list(info['shape'])}" if info.get("shape") else ""
    saved = info.get("saved_by") or "an earlier op"
    frame = info.get("saved_frame")
    where = ""
    if frame:
        loc = locate.line_location(Path(frame["file"]), frame["line"])
        where = (f" at line {loc.line}" if at is not None and loc.path == at.path
                 else f" at {loc.display_path()}:{loc.line}")
    return (f"`{op}` modifies in place a tensor{shape} that `{saved}`{where} saved for backward, so "
            "backward fails ('one of the variables needed for gradient computation has been modified by "
            "an inplace operation'); compute out of place (`x = x + y`, `inplace=False`) or on a `.clone()`")


def traced_findings(result: TraceResult, context: str = "") -> list[Finding]:
    """TL102 findings (losses whose two sides disagree, at the line calling the loss) and a
    TL104 finding (an in-place op that broke backward, at its line) of a trace."""
    out: list[Finding] = []
    suffix = f" ({context})" if context else ""
    for m in result.losses or []:
        frame = m.get("frame")
        loc = _frame_location(frame)
        if loc is not None:
            out.append(Finding.at(rule_info(LOSS_TARGET_MISMATCH), locate.relative_path(loc.path), loc.span,
                                  loss_text(m) + suffix, extra={"loss": dict(m)}, confirmed=True))
    info = result.gradients.inplace if result.gradients is not None else None
    if info:
        loc = _frame_location(info.get("frame")) or _frame_location(info.get("saved_frame"))
        if loc is not None:
            out.append(Finding.at(rule_info(INPLACE_BREAKS_BACKWARD), locate.relative_path(loc.path), loc.span,
                                  inplace_text(info, loc) + suffix, extra={"inplace": dict(info)}, confirmed=True))
    return out


def loss_lines(result: TraceResult) -> list[str]:
    """The table's lines for TL102 and TL104 (with or without a line to point at)."""
    out: list[str] = []
    for m in result.losses or []:
        loc = _frame_location(m.get("frame"))
        where = f"{loc.display_path()}:{loc.line}: " if loc is not None else "the --loss: "
        out.append(f"{where}{LOSS_TARGET_MISMATCH} {loss_text(m)}")
    info = result.gradients.inplace if result.gradients is not None else None
    if info:
        loc = _frame_location(info.get("frame")) or _frame_location(info.get("saved_frame"))
        where = f"{loc.display_path()}:{loc.line}: " if loc is not None else ""
        out.append(f"{where}{INPLACE_BREAKS_BACKWARD} {inplace_text(info, loc)}")
    return out


_NEW_METHOD = {"zeros": "new_zeros", "ones": "new_ones", "empty": "new_empty", "full": "new_full",
               "tensor": "new_tensor"}


def device_fix(created_by: str | None) -> str:
    """How to make a tensor on the model's device, for the op that made it on the CPU."""
    new = _NEW_METHOD.get(created_by or "")
    made = f"torch.{created_by}(..., device=x.device)" if created_by else "device=x.device"
    return f"create it with {made}" + (f" or x.{new}(...)" if new else "") + \
        ", or register it as a buffer (self.register_buffer) so that .to(device) moves it"


def _device_problem(rec: Failure, user: locate.Location | None) -> Problem:
    """TL101: where the CPU tensor was created (the finding's line), where it met the model's
    tensors, and the fix."""
    info = rec.device_mismatch or {}
    created = _frame_location(info.get("created"))
    by = info.get("created_by")
    what = f"`{by}(...)`" if by else "a tensor"
    shape = "x".join(map(str, info.get("shape") or [])) or "?"
    at = f" at line {user.line}" if user is not None and created is not None and user.path == created.path \
        else (f" at {user.display_path()}:{user.line}" if user is not None else "")
    headline = (f"{what} makes a CPU tensor ({shape}) in forward that meets the model's tensors in "
                f"`{info.get('op')}`{at}: this fails with a device mismatch on a GPU")
    rec.fix = device_fix(by)
    details: list[tuple[str, str]] = []
    if created is not None:
        details.append(("created", f"{created.display_path()}:{created.line}  {created.code}"))
    if user is not None:
        details.append(("failed", f"{user.display_path()}:{user.line}  {user.code}"))
    details.append(("fix", rec.fix))
    return Problem(headline, False, created or user, details, rec.to_json(), rec, tl101=True)


def _notes(rec: Failure, kind: str | None) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    if rec.expected:
        notes.append(("expects", rec.expected))
    if rec.fix:
        notes.append(("fix", rec.fix))
    if rec.fits:
        shown = ", ".join(format_spec(s) for s in rec.fits)
        arg = " ".join("--input-shape " + ",".join(map(str, s["shape"])) for s in rec.fits)
        notes.append(("note", f"the input shape was inferred; the model runs with {shown}: if "
                              f"that is the intended input, pass {arg}"))
    if rec.hint:
        notes.append(("hint", rec.hint))
    if rec.output and kind not in ("layer", "forward"):
        notes.append(("output", rec.output))
    return notes


def render_problem(problem: Problem) -> str:
    prefix = f"{problem.location}: " if problem.location else ""
    rule = problem.rule
    code = f"{rule.code} {rule.name} " if rule is not None else ""
    lines = [f"{prefix}{code}{problem.headline}"]
    width = max((len(label) for label, _ in problem.details), default=0) + 1
    for label, text in problem.details:
        text_lines = str(text).splitlines() or [""]
        lines.append(f"    {label + ':':<{width}} {text_lines[0]}")
        for more in text_lines[1:]:
            lines.append(f"    {'':<{width}} {more}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- sizes

def human_count(n: int) -> str:
    if n >= 10**9:
        return f"{n:,} = {n / 1e9:.2f} B"
    if n >= 10**6:
        return f"{n:,} = {n / 1e6:.2f} M"
    return f"{n:,}"


# --------------------------------------------------------------------------- table

def _cell(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def input_summary(result: TraceResult) -> str:
    inputs = ", ".join(format_spec(s) for s in result.inputs or [])
    if result.inputs_inferred and result.inferred_from:
        inf = result.inferred_from
        return f"{inputs} (inferred from `{inf['layer']}`: {inf['reason']})"
    if result.inputs_from_comment:
        c = result.inputs_from_comment
        return f"{inputs} (from the input-shape comment at {locate.relative_path(Path(c['file']))}:{c['line']})"
    return inputs


def render_table(result: TraceResult, target: str, device: str,
                 problem: Problem | None, depth: int | None = None, *,
                 memory_plan: dict[str, Any] | None = None) -> str:
    """The trace report: input, the table of calls, totals, modules never called, NaN/Inf
    outputs, the problem (if any) and a one-line verdict."""
    out: list[str] = [f"Trace of {target} on {device}"]
    if result.params is None:
        # The model was never built (import failed, crash, timeout): only the problem.
        if problem is not None:
            out += ["", render_problem(problem), "", "Trace failed."]
        return "\n".join(out)
    out += [f"Input: {input_summary(result) or '(none: the trace stopped before the forward pass)'}", ""]
    out += _calls_table(result, depth)
    out += _totals(result, problem, planned=memory_plan is not None)
    out += _never_called(result, problem)
    nonfinite = result.nonfinite or []
    out += _nonfinite(nonfinite)
    if result.gradients is not None:
        out += ["", *gradient_lines(result.gradients)]
    if memory_plan is not None:

        out += [""] + render_text(memory_plan)
    found = loss_lines(result)
    if found:
        out += ["", *found]
    if problem is not None:
        out += ["", render_problem(problem)]
    out += ["", _verdict(problem, nonfinite, result.gradients, len(found))]
    return "\n".join(out)


# --------------------------------------------------------------------------- gradients

def group_location(group: ParamGroup) -> locate.Location | None:
    """Where a group of parameters is defined (``self.encoder = nn.Linear(...)``)."""
    owner = group.get("owner")
    if not owner or not owner.get("file"):
        return None
    return locate.find_definition(Path(owner["file"]), owner["qualname"], owner.get("path") or [],
                                  owner.get("class_line"))


def _group_label(group: ParamGroup) -> str:
    name = group["name"] or "(all parameters)"
    return f"{name} ({group['type']}, {group['params']:,} params)"


def cause_text(cause: Cause | None) -> str:
    """Why a group got no gradient, in words, with the line that cut it off."""
    kind = (cause or {}).get("kind")
    if kind == "unused":
        return "never used by forward (an unused layer: TL005)"
    if kind != "cut" or cause is None:
        return "used by forward, but not on the path to the loss"
    op = cause.get("op", "")
    what = {"detach": "cut off by `.detach()`", "data": "cut off by `.data`",
            "no_grad": "computed with gradients disabled (`torch.no_grad()`)"}.get(
        op, f"cut off by `{op}`, which has no gradient")
    frame = cause.get("frame")
    if frame:
        loc = locate.line_location(Path(frame["file"]), frame["line"])
        what += f" at {loc.display_path()}:{loc.line}  {loc.code}"
    return what


def gradient_lines(grads: Gradients) -> list[str]:
    """The training step: what backward left in ``.grad``."""
    out = [f"Gradients (one training step; loss: {grads.loss})",
           f"  trainable:    {human_count(grads.trainable)} parameters; frozen: {human_count(grads.frozen_params)}"]
    if grads.error:
        out.append(f"  backward:     did not run: {grads.error}")
    elif not grads.backward:
        out.append("  backward:     did not run: the loss does not require grad (nothing in forward is "
                   "differentiable)")
    if grads.no_grad:
        out.append("  no gradient:")
        for group in grads.no_grad:
            loc = group_location(group)
            where = f"  {loc.display_path()}:{loc.line}  {loc.code}" if loc is not None else ""
            out.append(f"    {_group_label(group)}{where}")
            out.append(f"      {cause_text(group.get('cause'))}")
    elif not grads.error:
        out.append("  no gradient:  none (every trainable parameter got one)")
    norms = [(name, info["norm"]) for name, info in grads.modules.items() if info.get("norm") is not None]
    if norms:
        out.append("  gradient norm per top-level module: " + ", ".join(
            f"{name} {norm:.3g}" if isinstance(norm, float) else f"{name} {norm}" for name, norm in norms))
    if grads.frozen:
        out.append("  frozen (requires_grad=False, intended: not a problem):")
        out += [f"    {_group_label(group)}" for group in grads.frozen]
    if grads.nonfinite:
        shown = ", ".join(f"{n['name']} ({' and '.join(w for w, f in (('NaN', n['nan']), ('Inf', n['inf'])) if f)})"
                          for n in grads.nonfinite[:8])
        more = f" and {len(grads.nonfinite) - 8} more" if len(grads.nonfinite) > 8 else ""
        out.append(f"  NaN/Inf gradients: {shown}{more}")
        if grads.nonfinite_origin is not None:
            out.append(f"    first non-finite in backward: the gradient of `{grads.nonfinite_origin or '(root)'}`'s "
                       "output (the NaN/Inf is made by the code after it in forward)")
    return out


def _gradient_cell(grads: Gradients | None, row: dict[str, Any], seen: set[str]) -> str:
    """The Grad column: a top-level module's gradient norm (cpu/cuda), else its status."""
    if grads is None or row.get("depth") != 1 or row["name"] in seen:
        return ""
    info = grads.modules.get(row["name"])
    if info is None:
        return ""
    seen.add(row["name"])
    norm = info.get("norm")
    if isinstance(norm, float):
        return f"{norm:.3g}"
    if isinstance(norm, str):
        return {"nan": "NaN", "inf": "Inf"}.get(norm, norm)
    return {"ok": "yes", "none": "NONE"}.get(info["status"], info["status"])


_HEADER = ("#", "Module", "Type", "Input shapes", "Output shapes", "Params")


def _call_row(i: int, row: dict[str, Any], params: str) -> tuple[str, ...]:
    name = row["name"] or "(root)"
    indent = "  " * row.get("depth", 0)
    if row.get("failed"):
        output = "FAILED"
    elif "outputs" in row:
        output = describe_value(row["outputs"])
    else:
        output = "-"
    return (str(i), _cell(indent + name, 40), row["type"], _cell(describe_args(row.get("inputs", []))),
            _cell(output), params)


_NUMBERED = re.compile(r"^((?:.*\.)?)(\d+)$")
FOLD_AT = 3  # a run of at least this many numbered blocks is folded into one row


def _subtree_end(rows: list[dict[str, Any]], i: int) -> int:
    """The index just past row ``i``'s call and the calls made inside it."""
    j = i + 1
    while j < len(rows) and rows[j].get("depth", 0) > rows[i].get("depth", 0):
        j += 1
    return j


def _blocks_from(rows: list[dict[str, Any]], i: int) -> list[tuple[int, int]]:
    """The run of calls ``<prefix>k``, ``<prefix>k+1``, ... of one type and depth starting at
    row ``i`` (siblings in a ``ModuleList``/``Sequential``), each as (start, end) rows; a block
    holding a failed call ends the run, so that it stays in view."""
    head = rows[i]
    m = _NUMBERED.match(head["name"])
    if not m:
        return []
    prefix, first = m.group(1), int(m.group(2))
    blocks: list[tuple[int, int]] = []
    j = i
    while j < len(rows):
        row = rows[j]
        if row["name"] != f"{prefix}{first + len(blocks)}" or row["type"] != head["type"] \
                or row.get("depth", 0) != head.get("depth", 0):
            break
        end = _subtree_end(rows, j)
        if any(rows[x].get("failed") for x in range(j, end)):
            break
        blocks.append((j, end))
        j = end
    return blocks


def fold_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of repeated blocks (``layers.0`` ... ``layers.31``, one type) as one row each:
    ``layers.0-31``, ``32 × TransformerBlock``, the first block's input, the last one's output,
    their parameters added up; the calls inside them are not shown."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(rows):
        blocks = _blocks_from(rows, i)
        if len(blocks) < FOLD_AT:
            out.append(rows[i])
            i += 1
            continue
        first, last = rows[blocks[0][0]], rows[blocks[-1][0]]
        number = _NUMBERED.match(last["name"])
        assert number is not None
        folded = {"name": f"{first['name']}-{number.group(2)}", "type": f"{len(blocks)} × {first['type']}",
                  "depth": first.get("depth", 0), "inputs": first.get("inputs", []),
                  "params": sum(rows[start].get("params", 0) for start, _ in blocks)}
        if "outputs" in last:
            folded["outputs"] = last["outputs"]
        out.append(folded)
        i = blocks[-1][1]
    return out


def shown_rows(rows: list[dict[str, Any]], depth: int | None) -> list[dict[str, Any]]:
    """The table's rows: every call down to ``depth`` (``--depth N``), else repeated blocks
    folded."""
    if depth is not None:
        return [r for r in rows if r.get("depth", 0) <= depth]
    return fold_rows(rows)


def _calls_table(result: TraceResult, depth: int | None = None) -> list[str]:
    """One aligned row per module call (numbers and parameter counts right-aligned), then a
    blank line; nothing when no call was recorded.  A module called again shows ``=#N`` (row
    N holds its parameters) and a legend says so."""
    rows = shown_rows(result.calls or [], depth)
    if not rows:
        return []
    grads = result.gradients
    seen: set[str] = set()
    first_call: dict[str, int] = {}  # module -> the row counting its parameters
    header = _HEADER + (("Grad",) if grads is not None else ())
    table = [header]
    for i, row in enumerate(rows, 1):
        if row.get("params"):
            first_call.setdefault(row["name"], i)
        params = f"{row['params']:,}" if "params" in row else (
            f"=#{first_call[row['name']]}" if row["name"] in first_call else "")
        cells = _call_row(i, row, params)
        table.append(cells + ((_gradient_cell(grads, row, seen),) if grads is not None else ()))
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    out = []
    for j, r in enumerate(table):
        cells = [r[0].rjust(widths[0])] + [r[c].ljust(widths[c]) for c in range(1, 5)] + \
            [r[c].rjust(widths[c]) for c in range(5, len(header))]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    if any(r[5].startswith("=#") for r in table[1:]):
        out.append("Params =#N: the module of row N, called again (its parameters are counted once, there)")
    if result.calls_truncated:
        out.append(f"... (only the first {len(result.calls or []):,} calls are shown)")
    return out + [""]


def _totals(result: TraceResult, problem: Problem | None, planned: bool = False) -> list[str]:
    """The model's totals. With a memory plan, its measured activations are the one figure
    shown (the plan's ``activations`` row): the leaf-output estimate is left out."""
    totals = totals_of(result)
    frozen = totals["params"] - totals["trainable_params"]
    split = f"; trainable {human_count(totals['trainable_params'])}, frozen {human_count(frozen)}" if frozen else ""
    out = ["Totals", f"  parameters:   {human_count(totals['params'])} ({human_bytes(totals['param_bytes'])}){split}"]
    if totals["buffer_bytes"]:
        out.append(f"  buffers:      {human_bytes(totals['buffer_bytes'])}")
    batch = totals.get("batch")
    if (result.calls or problem is None) and not planned:
        out.append(f"  activations:  ~{human_bytes(totals['activation_bytes'])} for one training "
                   f"step{f' at batch size {batch}' if batch is not None else ''} (estimate: "
                   f"leaf-module outputs{', up to the failure' if problem else ''})")
    if result.cuda_peak_bytes is not None:
        out.append(f"  CUDA peak:    {human_bytes(result.cuda_peak_bytes)} allocated on "
                   f"{result.cuda_device if result.cuda_device is not None else 'the GPU'}")
    if result.seconds is not None:
        out.append(f"  trace:        {result.seconds:.2f} s{_startup(result)}, peak RSS of the trace process "
                   f"{human_bytes((result.peak_rss_kb if result.peak_rss_kb is not None else 0) * 1024)}")
    return out + [""]


def _startup(result: TraceResult) -> str:
    """How long the trace process took to start, and how much of it was importing torch."""
    if result.startup_seconds is None:
        return ""
    torch = f", {result.torch_import_seconds:.2f} s of it importing torch" \
        if result.torch_import_seconds is not None else ""
    return f" after {result.startup_seconds:.2f} s starting the trace process{torch}"


def _never_called(result: TraceResult, problem: Problem | None) -> list[str]:
    """Modules the forward pass never called; nothing when it never started."""
    if problem is not None:
        if problem.record.phase != "forward":
            return []
        return ["Modules never called: not known (the forward pass did not finish)"]
    unused = result.unused or []
    if not unused:
        return ["Modules never called: none"]
    return ["Modules never called:"] + [
        f"  {u['name']} ({u['type']}{', ' + format(u['params'], ',') + ' params' if u['params'] else ''})"
        for u in unused]


def _nonfinite(nonfinite: list[dict[str, Any]]) -> list[str]:
    """Layers whose outputs held NaN/Inf, marking the first whose inputs were finite."""
    if not nonfinite:
        return []
    out = ["", "NaN/Inf in layer outputs:"]
    origin = next((n for n in nonfinite if n.get("inputs_finite")), None)
    for n in nonfinite:
        what = " and ".join(w for w, flag in (("NaN", n.get("nan")), ("Inf", n.get("inf"))) if flag)
        mark = "  <- first appears here (its inputs were finite)" if n is origin else ""
        out.append(f"  {n['name'] or '(root)'} ({n['type']}): {what}{mark}")
    return out


def _verdict(problem: Problem | None, nonfinite: list[dict[str, Any]], grads: Gradients | None,
             found: int = 0) -> str:
    if problem is not None:
        return "Trace failed."
    if found:
        return f"Trace ran, but {found} problem(s) in the training step (above)."
    if grads is not None and grads.nonfinite:
        return f"Trace ran, but {len(grads.nonfinite)} parameter(s) got a NaN/Inf gradient."
    if nonfinite:
        return f"Trace ran, but {len(nonfinite)} layer output(s) contain NaN/Inf."
    if grads is not None and grads.no_grad:
        return f"Trace ran, but {len(grads.no_grad)} group(s) of trainable parameters get no gradient."
    return "Trace ran clean."


def gradient_problem(result: TraceResult) -> bool:
    """A training step left trainable parameters without a gradient, or with NaN/Inf."""
    grads = result.gradients
    return bool(result.losses) or grads is not None and bool(grads.no_grad or grads.nonfinite or grads.inplace)


def gradients_json(grads: Gradients | None) -> dict[str, Any] | None:
    """The record, each group of parameters with where it is defined."""
    if grads is None:
        return None
    doc = grads.to_json()
    for key in ("no_grad", "frozen"):
        groups = []
        for group in doc.get(key, []):
            loc = group_location(group)
            group = {k: v for k, v in group.items() if k != "owner"}
            group["definition"] = None if loc is None else {
                "path": loc.display_path(), "line": loc.line, "code": loc.code}
            if key == "no_grad":
                group["explanation"] = cause_text(group.get("cause"))
            groups.append(group)
        doc[key] = groups
    return doc


def totals_of(result: TraceResult) -> dict[str, Any]:
    inputs = result.inputs or []
    batch = inputs[0]["shape"][0] if inputs and inputs[0].get("shape") else None

    def count(value: int | None) -> int:
        return 0 if value is None else value

    return {"params": count(result.params), "trainable_params": count(result.trainable_params),
            "param_bytes": count(result.param_bytes), "buffer_bytes": count(result.buffer_bytes),
            "activation_bytes": count(result.activation_bytes), "batch": batch}


def render_json(result: TraceResult, target: str, device: str, problem: Problem | None,
                findings: list[Finding], memory_plan: dict[str, Any] | None = None) -> str:
    status = "failed" if problem is not None else ("nonfinite" if result.status == "nonfinite" else "ok")
    failure = None
    if problem is not None:
        loc = problem.location
        failure = {
            "message": problem.headline,
            "rule": problem.rule.code if problem.rule is not None else None,
            "location": None if loc is None else {"path": loc.display_path(), "line": loc.line,
                                                  "column": loc.column, "code": loc.code},
            "details": {label: text for label, text in problem.details},
            **{k: v for k, v in problem.failure.items()
               if k in ("phase", "kind", "module", "received", "expected", "fix", "exc_type",
                        "exc_message", "traceback", "hint", "fits", "output", "device_mismatch")},
        }
    doc = {
        "target": target,
        "device": device,
        "status": status,
        "inputs": result.inputs or [],
        "inputs_inferred": bool(result.inputs_inferred),
        "inferred_from": result.inferred_from,
        "model_type": result.model_type,
        "calls": [
            {"name": r["name"], "type": r["type"], "depth": r.get("depth", 0),
             "inputs": r.get("inputs", []), "outputs": r.get("outputs"),
             "params": r.get("params"), "failed": bool(r.get("failed"))}
            for r in result.calls or []
        ],
        "calls_truncated": bool(result.calls_truncated),
        "totals": totals_of(result),
        "unused": None if problem is not None else (result.unused or []),
        "nonfinite": result.nonfinite or [],
        "gradients": gradients_json(result.gradients),
        "target": result.target,  # --target-shape: the target of the step's loss
        "losses": result.losses or [],  # TL102: losses whose input and target disagree
        "failure": failure,
        "findings": [f.to_dict() for f in findings],
        "seconds": result.seconds,
        "startup_seconds": result.startup_seconds,
        "torch_import_seconds": result.torch_import_seconds,
        "peak_rss_bytes": (result.peak_rss_kb or 0) * 1024,
    }
    if result.cuda_peak_bytes is not None:
        doc["cuda_peak_bytes"] = result.cuda_peak_bytes
    if memory_plan is not None:
        doc["memory_plan"] = memory_plan
    return json.dumps(doc, indent=2)
