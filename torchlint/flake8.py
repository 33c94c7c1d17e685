"""A flake8 plugin: torchlint's findings reported through flake8, as ``TL001 message``.

Registered as the ``flake8.extension`` entry point ``TL``, so ``flake8 --select TL`` (or a
``select``/``extend-select`` with ``TL``) runs it. Each file flake8 checks is linted as
``torchlint check FILE`` lints it (``torchlint.run.lint_text``: the configuration found
from its directory selects and configures the rules), alone: rules that read the rest of
the project see only this file. flake8 applies its own ``# noqa`` comments on top.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

from torchlint import __version__


class Plugin:
    """flake8's tree-plugin interface: ``run`` yields ``(line, 0-based column, "CODE
    message", type)``. The tree is not used (torchlint parses the lines itself)."""

    name = "torchlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]):
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from torchlint.run import lint_text

        data = "".join(self.lines).encode("utf-8", "surrogatepass")
        for finding in lint_text(Path(self.filename).resolve(), data).findings:
            yield finding.line, finding.column - 1, f"{finding.rule} {finding.message}", type(self)
