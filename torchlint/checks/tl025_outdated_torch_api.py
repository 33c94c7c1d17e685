"""TL025 outdated-torch-api: PyTorch API used as an older release had it.

* ``size_average=`` / ``reduce=`` passed to a torch loss (a ``torch.nn`` ``*Loss`` class or a
  ``torch.nn.functional`` loss, imports resolved): deprecated since 0.4.1 in favour of
  ``reduction=``; torch maps them (``torch.nn._reduction.legacy_get_string``): both true (or
  left out) -> ``'mean'``, ``reduce`` true and ``size_average`` false -> ``'sum'``, ``reduce``
  false -> ``'none'``. Fix (safe) when one of the two is given, as a literal ``True``/``False``,
  and no ``reduction=``: the keyword is rewritten to the ``reduction=`` torch computes from it.
  A user's own loss taking ``size_average`` (``pytorch-crf``) is not torch's and is left alone.
* ``a, b = pack_padded_sequence(...)`` (also ``pack_sequence``, and a name bound only to one):
  a ``PackedSequence`` has had four fields since 1.1 (``sorted_indices``,
  ``unsorted_indices``), so unpacking it into two names raises ``ValueError: too many values to
  unpack``. Fix (safe): unpack ``[:2]`` of it, the two fields the code was written for.

Version-aware: the findings are facts the project pass reports unless the project's torch
requirement (``torchlint.pins``, ``TorchPin.below``) allows only releases older than the change
(``torch<0.4.1``, ``torch<1.1``), where the old API is the only one. No pin: reported.
"""

from __future__ import annotations

from typing import Any, Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span, from_trailing, trailing_json
from torchlint.fixes import SAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.dataflow import values_of
from torchlint.torch_api import is_loss_function, keyword_arg

_LEGACY = ("size_average", "reduce")
_REDUCTION_RELEASE = (0, 4, 1)
_PACKED_RELEASE = (1, 1)
_PACKERS = {"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"}


def reduction_message(written: str, reduction: str | None) -> str:
    instead = f"`reduction='{reduction}'`, what torch maps it to" if reduction else \
        "`reduction=` ('mean', 'sum' or 'none')"
    return (f"`{written}` has been deprecated since PyTorch 0.4.1 (a warning each time the loss is built, and "
            f"it overrides any `reduction=`); write {instead}")


def unpack_message(function: str) -> str:
    return (f"`{function}(...)` unpacked into two names: a PackedSequence has four fields since PyTorch 1.1 "
            f"(data, batch_sizes, sorted_indices, unsorted_indices), so this raises `ValueError: too many values "
            f"to unpack`; take `.data`/`.batch_sizes`, or unpack `[:2]`")


def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """What torch computes from the deprecated pair (``legacy_get_string``; None: left out)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"


class OutdatedTorchApi(Rule):
    code = "TL025"
    name = "outdated-torch-api"
    severity = Severity.WARNING
    default_enabled = True
    summary = ("API use from an older PyTorch: size_average=/reduce= loss arguments (reduction= since 0.4.1), "
               "a PackedSequence unpacked into two names (four fields since 1.1)")
    # [tool.torchlint.outdated-torch-api]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("size_average", "reduce", "pack_")
    fixable = (SAFE,)

    def __init__(self, ctx, options: dict[str, Any]):
        super().__init__(ctx, options)
        self._legacy: list[cst.Call] = []
        self._unpacks: list[cst.Assign] = []

    def visit_Call(self, node: cst.Call) -> None:
        if any(a.keyword is not None and a.keyword.value in _LEGACY for a in node.args):
            self._legacy.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
            elements = node.targets[0].target.elements
            if len(elements) == 2 and not any(isinstance(e, cst.StarredElement) for e in elements):
                self._unpacks.append(node)

    def finish(self) -> None:
        found: dict[str, list] = {"reduction": [], "unpack": []}
        for call in self._legacy:
            if self._is_torch_loss(call):
                found["reduction"].append(self._reduction_finding(call))
        for assign in self._unpacks:
            packer = self._packer(assign.value)
            if packer is not None:
                fix = None
                if isinstance(assign.value, (cst.Call, cst.Name)):
                    sliced = cst.Subscript(value=assign.value, slice=[cst.SubscriptElement(
                        slice=cst.Slice(lower=None, upper=cst.Integer("2")))])
                    fix = Fix.safe("Unpack `[:2]`", replace_node(self.ctx, assign.value, sliced))
                found["unpack"].append([self.ctx.span(assign.targets[0].target).to_json(),
                                        unpack_message(packer), *trailing_json(fix)])
        if any(found.values()):
            self.ctx.facts[self.code] = {key: value for key, value in found.items() if value}

    def _is_torch_loss(self, call: cst.Call) -> bool:
        qualified = self.ctx.semantic.model.qualified_name(call.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.functional.") \
                and last.endswith("Loss") and last[:1].isupper():
            return True
        return is_loss_function(self.ctx, call.func)

    def _reduction_finding(self, call: cst.Call) -> list:
        given = [a for a in call.args if a.keyword is not None and a.keyword.value in _LEGACY]
        written = ", ".join(f"{a.keyword.value}={self.ctx.module.code_for_node(a.value)}" for a in given)
        values = {a.keyword.value: _bool(a.value) for a in given}
        literal = all(v is not _UNKNOWN for v in values.values())
        reduction = legacy_reduction(values.get("size_average"), values.get("reduce")) if literal else None
        fix = None
        if reduction is not None and len(given) == 1 and keyword_arg(call, "reduction") is None:
            arg = given[0]
            new = arg.with_changes(keyword=cst.Name("reduction"), value=cst.SimpleString(f"'{reduction}'"))
            fix = Fix.safe(f"Use `reduction='{reduction}'`", replace_node(self.ctx, arg, new))
        return [self.ctx.span(given[0]).to_json(), reduction_message(written, reduction), *trailing_json(fix)]

    def _packer(self, value: cst.BaseExpression) -> str | None:
        """The packing function ``value`` is a call of, directly or through a name bound only to such calls."""
        model = self.ctx.semantic.model
        values = values_of(model, value) if isinstance(value, cst.Name) else [value]
        names = {model.qualified_name(v.func) if isinstance(v, cst.Call) else None for v in values}
        if len(names) == 1 and (name := names.pop()) in _PACKERS:
            return name.rsplit(".", 1)[-1]
        return None

    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        pin = project.torch_pin
        releases = {"reduction": _REDUCTION_RELEASE, "unpack": _PACKED_RELEASE}
        for record in project.records:
            facts = record.facts.get(cls.code) or {}
            for kind, release in releases.items():
                if pin is not None and pin.below(release):
                    continue  # every torch the project allows predates the change: the old API is the API
                for span, message, *fix in facts.get(kind, ()):
                    yield Finding.at(cls, record.path, Span.from_json(span), message, fix=from_trailing(fix))


_UNKNOWN = object()


def _bool(value: cst.BaseExpression):
    """``True``/``False``/``0``/``1`` as a bool, ``None`` (torch's default: left out) as None,
    anything else ``_UNKNOWN``."""
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return None if value.value == "None" else value.value == "True"
    if isinstance(value, cst.Integer) and value.value in ("0", "1"):
        return value.value == "1"
    return _UNKNOWN
