"""Cases adapted from public bug reports, one module per rule, named as the rule's module
(``tests/rules/reports/tl009_activation_before_loss.py``): ``BUGS``, the rule's bug as real
projects wrote it, which the rule must report, and ``LOOKALIKES``, code that resembles it and is
right, which it must not. Each is a ``Report``: its code (one file, or a small project
``{path: source}``) whose last line is a comment naming the public report, fixing commit or
question it was adapted from (``# https://github.com/owner/repo/issues/123``).

``tests/rules/test_report_cases.py`` holds every rule with a module to recall >= 0.9 on its
bugs and <= 0.05 findings on its look-alikes; ``benchmarks/recall.py`` prints the table and
the misses. Unlike ``tests/rules/cases`` (exact lines and messages, every one must pass), these
measure the rule against what people write."""

from __future__ import annotations

import importlib
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.finding import Finding
from torchlint.rule import Rule
from torchlint.testing import lint_tree

HERE = Path(__file__).resolve().parent
SOURCE = re.compile(r"^#\s*(https?://\S+)\s*$")  # the last line of a report's code


@dataclass(frozen=True)
class Report:
    """One case: ``code`` (a file's source, dedented) or ``files`` (a project, {path: source});
    ``path``: where ``code`` is written; ``options``: the rule's options."""
    code: str = ""
    path: str = "train.py"
    files: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    def project(self) -> dict[str, str]:
        files = self.files or {self.path: self.code}
        return {path: textwrap.dedent(source).lstrip("\n") for path, source in files.items()}

    def source(self) -> str | None:
        """The report the case was adapted from: the URL on its last line (of its last file)."""
        last = list(self.project().values())[-1].rstrip().splitlines()
        match = SOURCE.match(last[-1].strip()) if last else None
        return match.group(1) if match else None


def reports_of(rule: type[Rule]) -> tuple[list[Report], list[Report]] | None:
    """The rule's (bugs, look-alikes), or None for a rule without a module."""
    name = rule.__module__.rsplit(".", 1)[-1]
    if not (HERE / f"{name}.py").exists():
        return None
    module = importlib.import_module(f"tests.rules.reports.{name}")
    wrap = (lambda r: r if isinstance(r, Report) else Report(r))
    return [wrap(r) for r in module.BUGS], [wrap(r) for r in module.LOOKALIKES]


def findings(rule: type[Rule], report: Report) -> list[Finding]:
    """The rule's findings on the case (linted as a project, and each file alone)."""
    options = {rule.code: report.options} if report.options else None
    return lint_tree(report.project(), select=[rule.code], options=options, dedent=False)
