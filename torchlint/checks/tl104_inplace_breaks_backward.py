"""TL104 inplace-breaks-backward: found by the trace (``torchlint trace``, ``check --trace``).

Registered like every rule so that ``torchlint rules``, ``torchlint rule TL104``, SARIF and
``--select``/``--ignore``/``# noqa`` know it; it has no static visitor.  Reported at the in-place line; the message names the op that saved the tensor and its line.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class InplaceBreaksBackward(Rule):
    code = codes.INPLACE_BREAKS_BACKWARD
    name = "inplace-breaks-backward"
    severity = Severity.ERROR
    summary = ("An in-place op modifies a tensor an earlier op saved for backward, so backward fails, when the model is traced (`trace --train`, `check --trace`)")
    traced = True  # findings come from running the model, never from the static pass
