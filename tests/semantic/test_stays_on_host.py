"""``semantic.dataflow.stays_on_host``: the reads of a tensor that never meet another tensor
(refilled in place, one element compared in a condition, iterated for flags only tested), as
TL007 asks it of a plain tensor attribute read in ``forward``."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.dataflow import stays_on_host
from torchlint.tree import iter_nodes

SOURCE = """
import torch

def f(self, x, ys):
    self.t.uniform_()
    if self.t[0] >= 0.5:
        pass
    for i, flag in enumerate(self.t):
        if flag:
            x = x + 1
    for flag in self.t:
        if not flag or x.sum() > 0:
            pass
    for y, flag in zip(ys, self.t):
        assert flag == 1
    for i, row in enumerate(self.t):
        x = x + row
    for i, flag in enumerate(self.t, start=1):
        if flag:
            pass
    for row in self.t:
        if row:
            x = row
    for pair in enumerate(self.t):
        if pair:
            pass
    y = self.t + x
    z = self.t[1:]
    if self.t[0]:
        pass
"""


def test_stays_on_host_reads():
    src = textwrap.dedent(SOURCE)
    module = cst.parse_module(src)
    ctx = FileContext("pkg/m.py", module, src, ImportTable("pkg.m", False))
    Dispatcher(ctx, []).run()
    reads = [n for n in iter_nodes(module) if isinstance(n, cst.Attribute) and n.attr.value == "t"]
    got = [stays_on_host(ctx, ctx.semantic.model, n) for n in reads]
    # refilled, compared, enumerate/plain/zip flags only tested; rows meeting x, enumerate with
    # start= (not followed), an element also assigned, an (index, element) pair, arithmetic, a
    # slice, an element tested bare (not a comparison: left as before)
    assert got == [True, True, True, True, True, False, False, False, False, False, False, False]
