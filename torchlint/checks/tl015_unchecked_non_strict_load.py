"""TL015 unchecked-non-strict-load: ``load_state_dict(..., strict=False)`` whose result (the
missing and unexpected keys) is discarded.

The walk notes ``<x>.load_state_dict(...)`` calls with ``strict=False`` (``0``) as written, by
keyword or as the second positional argument. A call is reported when its value is thrown
away: an expression statement, or an assignment to names that are never read afterwards
(``semantic.dataflow.Flow.reads``; ``_ = ...`` included). Left alone: any other use of the
result (an assert on ``.missing_keys``, ``print``/logging, ``return``, an argument, an
attribute store that other code may read) and a ``strict`` that is not a literal (chosen by
the caller).
"""

from __future__ import annotations

import libcst as cst

from torchlint.context import dotted_name, unpack_targets
from torchlint.finding import Severity
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.dataflow import Flow
from torchlint.torch_api import is_false_literal, keyword_arg


def message(receiver: str) -> str:
    return (f"`{receiver}.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it "
            f"returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; "
            f"keep the result and assert that only the keys you mean to skip are missing")


def _non_strict(call: cst.Call) -> bool:
    strict = keyword_arg(call, "strict")
    if strict is None:
        positional = [a for a in call.args if a.keyword is None]
        strict = positional[1] if len(positional) > 1 and not positional[1].star else None
    return strict is not None and is_false_literal(strict.value)


class UncheckedNonStrictLoad(Rule):
    code = "TL015"
    name = "unchecked-non-strict-load"
    severity = Severity.WARNING
    default_enabled = True
    summary = 'load_state_dict(strict=False) whose missing/unexpected keys are never looked at'
    # [tool.torchlint.unchecked-non-strict-load]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("load_state_dict",)

    VALID: list[Valid | str] = [
        # Strict loading (the default) raises on any mismatch.
        """
        import torch
        model = torch.nn.Linear(4, 2)
        model.load_state_dict(torch.load("model.pt", weights_only=True))
        model.load_state_dict(torch.load("model.pt", weights_only=True), strict=True)
        """,
        # The keys are kept and checked: the fix.
        """
        import torch
        model = torch.nn.Linear(4, 2)
        missing, unexpected = model.load_state_dict(torch.load("model.pt", weights_only=True), strict=False)
        assert not unexpected, unexpected
        """,
        # Intentional partial loading, the expected missing keys asserted.
        """
        def load_backbone(model, state):
            missing, _ = model.load_state_dict(state, strict=False)
            assert set(missing) == {"head.weight", "head.bias"}, missing
        """,
        # The result logged.
        """
        import logging
        logger = logging.getLogger(__name__)
        def restore(model, state):
            result = model.load_state_dict(state, strict=False)
            logger.info("loaded checkpoint: %s", result)
        """,
        # Checked inline.
        """
        def restore(model, state):
            assert not model.load_state_dict(state, strict=False).missing_keys
        """,
        # Printed.
        """
        def restore(model, state):
            print(model.load_state_dict(state, strict=False))
        """,
        # Returned: the caller decides.
        """
        def restore(model, state):
            return model.load_state_dict(state, strict=False)
        """,
        # strict chosen by the caller: not this call's decision.
        """
        def restore(model, state, strict=True):
            model.load_state_dict(state, strict=strict)
        """,
        # Stored on an object other code may read.
        """
        class Loader:
            def restore(self, model, state):
                self.report = model.load_state_dict(state, strict=False)
        """,
        # An optimizer's load_state_dict has no strict argument.
        """
        def restore(optimizer, state):
            optimizer.load_state_dict(state["optimizer"])
        """,
        # Read in the next statement of a loop.
        """
        def restore_all(models, states):
            for model, state in zip(models, states):
                keys = model.load_state_dict(state, strict=False)
                if keys.unexpected_keys:
                    raise KeyError(keys.unexpected_keys)
        """,
    ]
    INVALID: list[Invalid] = [
        # The pytorch/examples 1029 pattern: a DataParallel checkpoint ("module." keys) loads nothing.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(4, 2)
            state = torch.load("checkpoint.pth", weights_only=True)
            model.load_state_dict(state["state_dict"], strict=False)
            """,
            lines=(5,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # Fine-tuning: the new head is meant to be missing, but so could everything else be.
        Invalid(
            """
            def build(backbone, path):
                import torch
                backbone.load_state_dict(torch.load(path, weights_only=True), strict=False)
                return backbone
            """,
            lines=(4,),
            messages=('`backbone.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                      'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                      'keep the result and assert that only the keys you mean to skip are missing',),
        ),
        # strict passed positionally.
        Invalid(
            """
            def restore(model, state):
                model.load_state_dict(state, False)
            """,
            lines=(3,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # Explicitly discarded.
        Invalid(
            """
            def restore(model, state):
                _ = model.load_state_dict(state, strict=False)
            """,
            lines=(3,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # Kept in a name that is never read.
        Invalid(
            """
            def restore(model, state):
                result = model.load_state_dict(state, strict=False)
                return model
            """,
            lines=(3,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # The name is read only after it was bound to something else.
        Invalid(
            """
            def restore(model, state):
                msg = model.load_state_dict(state, strict=False)
                msg = "restored"
                print(msg)
            """,
            lines=(3,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # A submodule through self.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def load_pretrained(self, state):
                    self.encoder.load_state_dict(state, strict=False)
            """,
            lines=(5,),
            messages=('`self.encoder.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                      'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                      'keep the result and assert that only the keys you mean to skip are missing',),
        ),
        # An override that swallows the keys.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def load_state_dict(self, state_dict, strict=True):
                    super().load_state_dict(state_dict, strict=False)
            """,
            lines=(5,),
            messages=('`super().load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                      'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                      'keep the result and assert that only the keys you mean to skip are missing',),
        ),
        # Keys filtered to the model's own: a prefix mismatch still leaves nothing to load.
        Invalid(
            """
            def load_matching(model, pretrained):
                own = model.state_dict()
                pretrained = {k: v for k, v in pretrained.items() if k in own}
                model.load_state_dict(pretrained, strict=False)
            """,
            lines=(5,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # strict=0, in a loop over several models.
        Invalid(
            """
            def restore_all(models, states):
                for model, state in zip(models, states):
                    model.load_state_dict(state, strict=0)
            """,
            lines=(4,),
            messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                      'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                      'result and assert that only the keys you mean to skip are missing',),
        ),
        # One checked load does not vouch for another.
        Invalid(
            """
            def restore(student, teacher, state):
                missing, unexpected = teacher.load_state_dict(state, strict=False)
                assert not missing and not unexpected
                student.load_state_dict(state, strict=False)
            """,
            lines=(5,),
            messages=('`student.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                      'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                      'keep the result and assert that only the keys you mean to skip are missing',),
        ),
    ]

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._stored: list[cst.Call] = []  # assigned: whether the names are read is asked in finish

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and _non_strict(node)):
            return
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Expr):
            self._report(node)
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node and _names_only(parent):
            self._stored.append(node)

    def finish(self) -> None:
        if not self._stored:
            return
        flow = Flow(self.ctx, self.ctx.semantic.model)
        for call in self._stored:
            if not flow.reads(call):
                self._report(call)

    def _report(self, call: cst.Call) -> None:
        receiver = dotted_name(call.func.value) or self.ctx.module.code_for_node(call.func.value)
        self.report(call, message(receiver if len(receiver) <= 40 else "..."))


def _names_only(statement: cst.Assign | cst.AnnAssign) -> bool:
    """Every target a plain name (``res = ...``, ``missing, unexpected = ...``): an attribute
    or item store may be read anywhere, so it counts as used."""
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
    return all(isinstance(leaf, cst.Name) for target in targets for leaf in unpack_targets(target))
