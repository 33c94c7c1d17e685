"""TL025 outdated-torch-api beyond the embedded cases: the project's torch pin
(``torchlint.pins``, read once per run) silences a finding where every torch the project allows
predates the change (``reduction=`` in 0.4.1, the four-field PackedSequence in 1.1)."""

from __future__ import annotations

import json

import pytest

from torchlint.checks.tl025_outdated_torch_api import legacy_reduction

TRAIN = """\
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

criterion = nn.CrossEntropyLoss(size_average=False)

def step(scores, lengths):
    data, sizes = pack_padded_sequence(scores, lengths, batch_first=True)
    return data
"""


def _lines(run, *args):
    code, out, err = run("check", "--format", "json", "--select", "TL025", *args)
    assert code in (0, 1), err
    return [f["line"] for f in json.loads(out)]


@pytest.mark.parametrize(("requirements", "lines"), [
    (None, [4, 7]),  # no pin: today's torch
    ("torch>=1.4\n", [4, 7]),
    ("torch>=0.4.0,<2\n", [4, 7]),  # allows 1.1 and later
    ("torch<1.1\n", [4]),  # 1.0 has reduction= but packs two fields
    ("torch==1.0.1\n", [4]),
    ("torch==0.4.0\n", []),  # reduction= does not exist yet
])
def test_the_pin_decides(project, run, requirements, lines):
    (project.root / ".git").mkdir()
    if requirements is not None:
        project.write("requirements.txt", requirements)
    project.write("train.py", TRAIN)
    assert _lines(run, ".") == lines


@pytest.mark.parametrize(("size_average", "reduce", "expected"), [
    (None, None, "mean"), (True, None, "mean"), (False, None, "sum"), (None, False, "none"),
    (False, True, "sum"), (True, False, "none"), (False, False, "none"), (True, True, "mean"),
])
def test_legacy_reduction_is_torchs_mapping(size_average, reduce, expected):
    assert legacy_reduction(size_average, reduce) == expected
