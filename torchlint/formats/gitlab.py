"""``gitlab``: a GitLab Code Quality report (the Code Climate subset GitLab reads), for the
``artifacts:reports:codequality`` of a CI job::

    [{"description": "TL001 [missing-zero-grad] optimizer.step() in this loop ...",
      "check_name": "TL001", "fingerprint": "<32 hex digits>", "severity": "major",
      "location": {"path": "train.py", "lines": {"begin": 37, "end": 37}}}]

``severity`` is ``major`` for error-severity rules and ``minor`` for warnings;
``fingerprint`` is unique in the report and stable as the finding's own fingerprint
(``torchlint.fingerprint``: lines added above it do not change it), so GitLab's merge-request
widget tells new findings from old ones. ``location.path`` is relative to the working
directory (run torchlint from the repository root). A notebook's finding points at the line
of the ``.ipynb`` file where its cell's source line is, as the ``github`` format does.
"""

from __future__ import annotations

import hashlib
import json

from torchlint.fingerprint import for_run
from torchlint.finding import Finding, Severity, escape_path, escape_text
from torchlint.notebook import place

SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor"}


def shown_path(path: str) -> str:
    """The path as written when it is printable, else escaped as in the text formats."""
    return path if escape_text(path) == path else escape_path(path)


def issue(f: Finding, fingerprint: str, raw: tuple[int, int, int, int] | None = None) -> dict:
    cell, line, end_line = place(f)
    if raw is not None:
        line, _, end_line, _ = raw
    where = f" (cell {cell})" if cell is not None else ""
    return {
        "description": f"{f.rule} [{f.name}] {f.message}{where}",
        "check_name": f.rule,
        "fingerprint": hashlib.md5("\0".join((f.rule, f.path, fingerprint)).encode("utf-8", "surrogatepass"),
                                   usedforsecurity=False).hexdigest(),
        "severity": SEVERITY[f.severity],
        "location": {"path": shown_path(f.path), "lines": {"begin": line, "end": max(end_line, line)}},
    }


def render_gitlab(report) -> str:
    from torchlint.formats.linehash import notebook_places_for

    findings = report.result.findings
    places = notebook_places_for(report.cwd)
    return json.dumps([issue(f, fp, places(f)) for f, fp in zip(findings, for_run(findings, report.cwd))],
                      indent=2) + "\n"
