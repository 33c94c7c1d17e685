"""Which statements cannot run in the same pass: the two branches of one ``if``
(``exclusive``); and the control statements a statement runs under in its function
(``blocks_around``)."""

from __future__ import annotations

import libcst as cst

_CONTROL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Match)


def _if_branches(ctx, node: cst.CSTNode) -> dict[cst.If, cst.CSTNode]:
    """For each enclosing ``if``, the part of it holding ``node`` (its test, body or orelse)."""
    out: dict[cst.If, cst.CSTNode] = {}
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.If):
            out[anc] = child
        child = anc
    return out


def exclusive(ctx, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` sit in different branches (body / ``else``/``elif``) of one ``if``:
    ``if amp: scaler.scale(loss).backward() else: loss.backward(); opt.step()``."""
    branches_a = _if_branches(ctx, a)
    if not branches_a:
        return False
    for node, part in _if_branches(ctx, b).items():
        other = branches_a.get(node)
        if other is not None and other is not part and node.test not in (other, part):
            return True
    return False


def blocks_around(ctx, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The ``if``/loop/``try``/``match`` statements around ``node`` inside its function (innermost
    first): what decides whether, and how often, ``node`` runs there."""
    blocks = []
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(anc, _CONTROL):
            blocks.append(anc)
    return blocks
