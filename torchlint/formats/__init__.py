"""Output formats. Each module renders a ``RunResult`` to text; ``FORMATS`` maps the
``--format`` name to its renderer."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
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
    # What made the run fail besides rule errors and missing paths (E902 findings): a fix that
    # could not be applied or written, ``PATH: reason`` each (SARIF's notifications).
    failures: list[str] = field(default_factory=list)


Renderer = Callable[[Report], str]

INFORMATION_URI = "https://github.com/torchlint/torchlint"


def rule_url(code: str, name: str) -> str | None:
    """The rule's catalog page on the web (SARIF ``helpUri``, JSON ``url``); None for a code
    no rule has (``E902``, a path that does not exist)."""
    if not code.startswith("TL"):
        return None
    return f"{INFORMATION_URI}/blob/main/rules/{code}-{name}.md"


# ``--format`` name -> (the module under ``torchlint.formats``, its renderer): a run imports
# only the one it prints (``junit`` alone brings in ``xml.etree``).
_RENDERERS = {
    "full": ("text", "render_full"),
    "concise": ("text", "render_concise"),
    "json": ("json_format", "render_json"),
    "json-lines": ("json_format", "render_json_lines"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
    "gitlab": ("gitlab", "render_gitlab"),
    "junit": ("junit", "render_junit"),
    "pylint": ("pylint", "render_pylint"),
}


FORMAT_NAMES = tuple(_RENDERERS)


def render(name: str, report: Report) -> str:
    module, function = _RENDERERS[name]
    renderer: Renderer = getattr(importlib.import_module(f"torchlint.formats.{module}"), function)
    return renderer(report)
