"""TL101 device-mismatch: found by the trace (``torchlint trace``, ``check --trace``).

Registered like every rule so that ``torchlint rules``, ``torchlint rule TL101``, SARIF and
``--select``/``--ignore``/``# noqa`` know it; it has no static visitor.  Under ``check
--trace`` a TL010 (tensor-without-device) finding at the same line is marked confirmed instead
of reporting the line twice.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class DeviceMismatch(Rule):
    code = codes.DEVICE_MISMATCH
    name = "device-mismatch"
    severity = Severity.ERROR
    summary = ("A tensor created on the CPU in forward meets the model's tensors when the model is traced "
               "(`trace`, `check --trace`): it fails on a GPU")
    traced = True  # findings come from running the model, never from the static pass
