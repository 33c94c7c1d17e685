"""Output formats. Each module renders a ``RunResult`` to text; ``FORMATS`` maps the
``--format`` name to its renderer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from torchlint.config import Settings
from torchlint.run import RunResult


@dataclass
class Report:
    result: RunResult
    settings: Settings
    cwd: Path
    color: bool = False
    quiet: bool = False


Renderer = Callable[[Report], str]

INFORMATION_URI = "https://github.com/torchlint/torchlint"


def rule_url(code: str, name: str) -> str:
    """The rule's catalog page on the web (SARIF ``helpUri``, JSON ``url``)."""
    return f"{INFORMATION_URI}/blob/main/rules/{code}-{name}.md"


def _registry() -> dict[str, Renderer]:
    from torchlint.formats import github, json_format, junit, sarif, text

    return {
        "full": text.render_full,
        "concise": text.render_concise,
        "json": json_format.render_json,
        "json-lines": json_format.render_json_lines,
        "sarif": sarif.render_sarif,
        "github": github.render_github,
        "junit": junit.render_junit,
    }


FORMAT_NAMES = ("full", "concise", "json", "json-lines", "sarif", "github", "junit")


def render(name: str, report: Report) -> str:
    return _registry()[name](report)
