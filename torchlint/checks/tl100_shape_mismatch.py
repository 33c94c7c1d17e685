"""TL100 shape-mismatch: found by the shape trace (``torchlint trace``, ``check --trace``).

Registered like every rule so that ``torchlint rules``, ``torchlint rule TL100``, SARIF and
``--select``/``--ignore``/``# noqa`` know it; it has no static visitor.
"""

from __future__ import annotations

from torchlint import codes
from torchlint.finding import Severity
from torchlint.rule import Rule


class ShapeMismatch(Rule):
    code = codes.SHAPE_MISMATCH
    name = "shape-mismatch"
    severity = Severity.ERROR
    summary = "A layer receives a tensor of the wrong shape when the model is traced (`trace`, `check --trace`)"
    traced = True  # findings come from running the model, never from the static pass
