"""Output formats. Each module renders a ``RunResult`` to text; ``FORMATS`` maps the
``--format`` name to its renderer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from torchlint.config import Settings
from torchlint.engine import RunResult


@dataclass
class Report:
    result: RunResult
    settings: Settings
    cwd: Path
    color: bool = False
    quiet: bool = False


Renderer = Callable[[Report], str]


def _registry() -> dict[str, Renderer]:
    from torchlint.formats import json_format, text

    return {
        "full": text.render_full,
        "concise": text.render_concise,
        "json": json_format.render_json,
        "json-lines": json_format.render_json_lines,
    }


FORMAT_NAMES = ("full", "concise", "json", "json-lines")


def render(name: str, report: Report) -> str:
    return _registry()[name](report)
