"""TL015 unchecked-non-strict-load: ``load_state_dict(..., strict=False)`` whose result (the
missing and unexpected keys) is discarded.

The walk notes ``<x>.load_state_dict(...)`` calls with ``strict=False`` (``0``) as written, by
keyword or as the second positional argument. A call is reported when its value is thrown
away: an expression statement, or an assignment to names that are never read afterwards
(``semantic.dataflow.Flow.reads``; ``_ = ...`` included). Left alone: any other use of the
result (an assert on ``.missing_keys``, ``print``/logging, ``return``, an argument, an
attribute store that other code may read) and a ``strict`` that is not a literal (chosen by
the caller), or a branch of a test on the function's ``strict`` parameter (``if strict: ...
else: m.load_state_dict(sd, strict=False)``).

Also left alone, because the keys cannot mismatch: a dict that is a
live module's own ``state_dict()`` (an alias filled in place, a comprehension filtering it, an EMA copy's dict loaded back into
its source, an entry ``state["ranges"]`` the file builds from a ``state_dict()``); a load into an
EMA/averaged copy (``self.ema = copy.deepcopy(model)``, ``AveragedModel(model)``); a dict
filtered against the target's ``state_dict()`` keys (``intersect_dicts(ckpt, model.state_dict())``
or a comprehension over them) whose size is then read (``len(csd)`` logged: an empty transfer
shows; unread, a prefixed checkpoint still leaves nothing to load); an attribute the class only
ever sets to a module's ``state_dict()`` (a snapshot reloaded later); a dict literal whose keys
name attributes of ``self``, the receiver; a class that ``torch.save``s a filtered part of the
receiver's own ``state_dict()`` (its saver/loader pair); a temporary file (a ``tempfile`` path)
the same class writes from the receiver's own ``state_dict()`` with the matching saver and reads
back through a path of the same name (``round_trip_through_temporary_file``). No comment exempts a call: a comment
saying why the load is partial (or that it is a problem) does not look at the keys.

Left alone too, because a mismatch does not pass unseen: the dict read by key names written in
strings after the load (``sd["head.weight"]``: weights copied by hand; other names raise
``KeyError``); a dict loaded from a file the same function saved from the receiver's own
``state_dict()``; a function that consults the
receiver's ``state_dict()`` and reads a key difference it computes (``[k for k in own if k not
in ckpt]`` logged, raised or returned); a fallback in an ``except`` handler that warns, after
the ``try`` loaded the same receiver strictly; a load guarded by a test of the dict's key names
(``if any("postdecoder" in k for k in state.keys())``); and a tensordict receiver
(``is_tensor_collection(x)``/``isinstance(x, TensorDictBase)`` around the call), whose
``load_state_dict`` returns itself, not keys.

Each of these is a question ``semantic.state_dicts`` answers (who chooses the strictness,
whose state dict is loaded, what else sees a mismatch); the rule decides which of them
exempt a discarded result.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Option, Rule
from torchlint.semantic.dataflow import Flow
from torchlint.semantic.state_dicts import (keys_match, mismatch_seen, non_strict, returns_itself,
                                            strict_chosen_by_caller)
from torchlint.statements import dotted_name
from torchlint.tree import unpack_targets


def message(receiver: str) -> str:
    return (f"`{receiver}.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it "
            f"returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; "
            f"keep the result and assert that only the keys you mean to skip are missing")


class UncheckedNonStrictLoad(Rule):
    code = "TL015"
    name = "unchecked-non-strict-load"
    severity = Severity.WARNING
    default_enabled = True
    summary = 'load_state_dict(strict=False) whose missing/unexpected keys are never looked at'
    # [tool.torchlint.unchecked-non-strict-load]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("load_state_dict",)


    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._stored: list[cst.Call] = []  # assigned: whether the names are read is asked in finish
        self._dropped: list[cst.Call] = []  # expression statements: the exemptions are asked in finish

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and non_strict(node)):
            return
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Expr):
            self._dropped.append(node)
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node and _names_only(parent):
            self._stored.append(node)

    def finish(self) -> None:
        for call in self._dropped:
            self._report(call)
        if not self._stored:
            return
        flow = Flow(self.ctx, self.ctx.semantic.model)
        for call in self._stored:
            if not flow.reads(call):
                self._report(call)

    def _report(self, call: cst.Call) -> None:
        if keys_match(self.ctx, call) \
                or strict_chosen_by_caller(self.ctx, self.ctx.semantic.model, call) \
                or mismatch_seen(self.ctx, call) or returns_itself(self.ctx, call.func.value):
            return
        receiver = dotted_name(call.func.value) or self.ctx.module.code_for_node(call.func.value)
        self.report(call, message(receiver if len(receiver) <= 40 else "..."))


def _names_only(statement: cst.Assign | cst.AnnAssign) -> bool:
    """Every target a plain name (``res = ...``, ``missing, unexpected = ...``): an attribute
    or item store may be read anywhere, so it counts as used."""
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
    return all(isinstance(leaf, cst.Name) for target in targets for leaf in unpack_targets(target))
