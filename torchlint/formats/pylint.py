"""``pylint``: pylint's ``parseable`` lines, which editors and CI tools that read pylint read::

    train.py:37: [TL001(missing-zero-grad), ] optimizer.step() in this loop applies ...

(``path:line: [CODE(name), OBJECT] message``; torchlint names no object.) A notebook's finding
gives the line of the ``.ipynb`` file where its cell's source line is, and ends with
``(cell N, line M)``. Paths and messages are escaped as in the text formats. Nothing else is
printed, so a clean run prints nothing.
"""

from __future__ import annotations

from torchlint.finding import Finding, escape_path, escape_text
from torchlint.notebook import place


def line_of(f: Finding, raw: tuple[int, int, int, int] | None = None) -> str:
    cell, line, _ = place(f)
    where = ""
    if cell is not None:
        where = f" (cell {cell}, line {line})"
        line = raw[0] if raw is not None else line
    return f"{escape_path(f.path)}:{line}: [{f.rule}({f.name}), ] {escape_text(f.message)}{where}"


def render_pylint(report) -> str:
    from torchlint.formats.linehash import notebook_places_for

    places = notebook_places_for(report.cwd)
    return "".join(line_of(f, places(f)) + "\n" for f in report.result.findings)
