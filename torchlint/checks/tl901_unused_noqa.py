"""TL901 unused-noqa: a noqa code that silences nothing on its line (ruff's RUF100).

Judged by the engine's suppression step (``torchlint.noqa.noqa_findings``) once every
finding of the run is known, never by visiting a tree: a code is used when a finding of that
rule, left by per-file-ignores and file-level noqa, is on a line the directive covers. Only
torchlint codes are judged: codes of other tools (``E501``), blanket ``# noqa`` (often there
for another linter), unknown codes (TL902's) and traced rules (whose findings need
``--trace``) are left alone. Codes of rules not enabled in the run are unused, as in ruff.
Its fix (``torchlint.noqa.unused_fix``, safe) removes the unused codes, or the directive.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.fixes import SAFE
from torchlint.rule import Rule


class UnusedNoqa(Rule):
    code = codes.UNUSED_NOQA
    name = "unused-noqa"
    severity = Severity.WARNING
    default_enabled = False
    summary = "A noqa code that silences nothing on its line"
    # Reported by the engine's suppression step (torchlint.noqa), not by visiting a tree: it has
    # no visitor, and this precheck keeps it from making the engine parse a file for nothing.
    requires_text = ("noqa", "NOQA")
    fixable = (SAFE,)

