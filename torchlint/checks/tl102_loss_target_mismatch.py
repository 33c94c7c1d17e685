"""TL102 loss-target-mismatch: found by the trace (``torchlint trace``, ``check --trace``).

Registered like every rule so that ``torchlint rules``, ``torchlint rule TL102``, SARIF and
``--select``/``--ignore``/``# noqa`` know it; it has no static visitor.  Reported at the line that calls the loss, with the shape and dtype of each side.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class LossTargetMismatch(Rule):
    code = codes.LOSS_TARGET_MISMATCH
    name = "loss-target-mismatch"
    severity = Severity.ERROR
    summary = ("A loss whose output and target disagree in shape or dtype, or silently broadcast, when the model is traced (`trace --train`, `check --trace`)")
    traced = True  # findings come from running the model, never from the static pass
