"""TL103 batch-norm-one-value: found by the trace (``torchlint trace``, ``check --trace``).

Registered like every rule so that ``torchlint rules``, ``torchlint rule TL103``, SARIF and
``--select``/``--ignore``/``# noqa`` know it; it has no static visitor.  Reported at the line in forward that calls the batch norm layer.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class BatchNormOneValue(Rule):
    code = codes.BATCH_NORM_ONE_VALUE
    name = "batch-norm-one-value"
    severity = Severity.ERROR
    summary = ("Batch norm in training gets one value per channel (a batch of 1) when the model is traced (`trace`, `check --trace`)")
    traced = True  # findings come from running the model, never from the static pass
