"""``github``: GitHub Actions workflow commands, one annotation per finding::

    ::error file=train.py,line=37,col=13,endLine=37,endColumn=40,title=torchlint (TL001)::message

``::error`` for error-severity rules, ``::warning`` for the others. Paths and messages are
first made printable as in the text formats (control characters other than CR and LF, and
undecodable bytes, as visible escapes: ``torchlint.finding.escape_text``), then property
values escape ``%``, CR, LF, ``:`` and ``,`` and the message escapes ``%``, CR and LF
(GitHub's rules for workflow commands): nothing in a finding can start another command. Nothing else is
printed, so a clean run prints nothing.
"""

from __future__ import annotations

from torchlint.finding import Finding, Severity, escape_path, escape_text
from torchlint.notebook import place


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding, raw: tuple[int, int, int, int] | None = None) -> str:
    """One workflow command; a notebook's finding at ``raw``, where its lines are in the
    notebook's JSON (GitHub annotates the file itself), else at its cell's lines."""
    command = "error" if f.severity is Severity.ERROR else "warning"
    cell, line, end_line = place(f)
    column, end_column = f.column, f.end_column
    if raw is not None:
        line, column, end_line, end_column = raw
    props = {
        "file": escape_path(f.path, keep_line_breaks=True),
        "line": str(line),
        "col": str(column),
        "endLine": str(max(end_line, line)),
        "endColumn": str(end_column),
        "title": f"torchlint ({f.rule})" if cell is None else f"torchlint ({f.rule}) in cell {cell}",
    }
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props.items())
    return f"::{command} {joined}::{escape_data(escape_text(f.message, keep_line_breaks=True))}"


def render_github(report) -> str:
    from torchlint.formats.linehash import notebook_places_for

    places = notebook_places_for(report.cwd)
    return "".join(annotation(f, places(f)) + "\n" for f in report.result.findings)
