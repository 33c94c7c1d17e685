"""``json``: one array of finding objects; ``json-lines``: one object per line.

Keys (stable): rule, name, severity, path, line, column, end_line, end_column, message,
and ``confirmed`` when the shape trace confirmed a finding.
"""

from __future__ import annotations

import json


def _objects(report) -> list[dict]:
    out = []
    for f in report.result.findings:
        data = f.to_dict()
        data.pop("extra", None)
        out.append(data)
    return out


def render_json(report) -> str:
    return json.dumps(_objects(report), indent=2) + "\n"


def render_json_lines(report) -> str:
    return "".join(json.dumps(o) + "\n" for o in _objects(report))
