"""``json``: one array of finding objects; ``json-lines``: one object per line.

Keys (stable): rule, name, severity, path, line, column, end_line, end_column, message,
url (the rule's page), fingerprint (the stable fingerprint baselines use,
``torchlint.fingerprint``: the same finding keeps it when lines are added above it), and
``confirmed`` when the shape trace confirmed a finding, ``cell`` for a finding in a
notebook (its cell, counted among all cells from 1; ``line``/``end_line`` are then lines of
that cell), and ``fix`` when the finding has one: ``{"title", "applicability": "safe" |
"unsafe", "edits": [{"line", "column", "end_line", "end_column", "content"}]}`` (positions
as the finding's; an empty range inserts). ``rule`` is the key
``torchlint rules --format json`` uses for the code too. ``path`` is escaped as in the text
formats (``torchlint.finding.escape_path``: a backslash doubled, a byte of a name that is not
UTF-8 as ``\\xNN``, a control character as ``\\n`` or ``\\xNN``), so every path can be
written and read back; messages are exact (JSON escapes what it must).
"""

from __future__ import annotations

import json

from torchlint.fingerprint import for_run
from torchlint.finding import escape_path
from torchlint.formats import rule_url
from torchlint.notebook import place


def _objects(report) -> list[dict]:
    findings = report.result.findings
    out = []
    for f, fingerprint in zip(findings, for_run(findings, report.cwd)):
        data = f.to_dict()
        data.pop("extra", None)
        cell, data["line"], data["end_line"] = place(f)
        if cell is not None:
            data["cell"] = cell
        data["path"] = escape_path(data["path"])
        data["url"] = rule_url(f.rule, f.name)
        data["fingerprint"] = fingerprint
        if f.fix is not None:
            shift = f.line - data["line"]  # a notebook's edits: lines of the finding's cell, as its line
            data["fix"] = {"title": f.fix.title, "applicability": f.fix.applicability, "edits": [
                {"line": e.span.line - shift, "column": e.span.column, "end_line": e.span.end_line - shift,
                 "end_column": e.span.end_column, "content": e.content} for e in f.fix.edits]}
        out.append(data)
    return out


def render_json(report) -> str:
    return json.dumps(_objects(report), indent=2) + "\n"


def render_json_lines(report) -> str:
    return "".join(json.dumps(o) + "\n" for o in _objects(report))
