"""TL010 tensor-without-device: a tensor created in code ``forward`` runs, without ``device=``,
then combined with the input or a parameter.

For every class with a ``forward``, the functions it runs (``semantic.modules.forward_code``)
are searched for ``torch.zeros/ones/empty/full/arange/randn/rand/randint/eye/tensor/linspace/...``
calls (``torch_api.tensor_factory``) with no ``device=`` (and no ``**kwargs``); where they go is
``semantic.devices`` (``factories_without_device``, ``Devices.meets``). The created
tensor is followed through method calls that keep its device (``.float()``, ``.unsqueeze(0)``,
``.triu(1)``: anything but ``.to(<not a dtype>)``, ``.type(<not a dtype>)`` such as
``.type(x.type())``, ``.cuda()``, ``.type_as()``, host methods like ``.tolist()``) and, once,
through a local name it is assigned to (the reads whose only reaching binding is that
assignment). It is reported where it meets, in arithmetic
(``+ - * / @ ...``), ``torch.cat``/``stack``/``matmul``/``where``/... or ``x.masked_fill(...)``,
an expression that *carries the device*: a parameter of the function without a literal
default (and not a host value: annotated ``int``/``Tuple[int, int]``/..., named for a size or
shape, used as a factory's size or bound, or given numbers, shapes or host-built tensors at
every same-file call, also through a local assigned one), a local computed from one (not through ``.size()``, ``.shape``, ``len()``,
``.item()``, ``.cpu()``...), a layer call ``self.fc(h)`` or an ``nn.Parameter`` attribute.

Also followed (``Devices.reach``): tensors handed to a submodule or the model itself
(``self.lstm(x, (h0, c0))``, ``self.wpe(pos)``, ``self(x, h)``), through ``torch.triu(...)``-like
functions and ``Variable``, into helpers and back out of the helpers returning them; factories
in Lightning steps; and the state a method no code of the file calls returns for a recurrent
layer (``init_hidden``). In training code, the tensors handed to a model that runs on a known
device (``Devices.moved_model``: moved there, a ``self`` attribute moved in ``__init__``, or a
model-like name fed moved inputs), met with its output in a loss or filled from it by indexed
assignment. In a plain function, a tensor combined with a parameter some same-file call passes
a tensor on a device (``Devices.caller_device``: d2l's ``one_hot``). A model the project builds
only in files that never move anything to an
accelerator (``moves_to_accelerator``) is left alone: a CPU-only script.

Left alone: a factory in a branch of a private helper that none of its same-file calls takes
(``semantic.branches.dead_at_every_call``: ``if is_causal:`` where the only call leaves
``is_causal=False``), 0-dim tensors (``torch.tensor(2.0)``, ``torch.zeros(())``: PyTorch lets a CPU
scalar meet a GPU tensor), tensors only used for indexing or shape arithmetic, files that set a
default device. Findings are pending until the project pass knows the class is an ``nn.Module``.
"""

from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from torchlint import codes
from torchlint.finding import Finding, Severity
from torchlint.fixes import SAFE, Fix, insert_after
from torchlint.rule import Option, Rule
from torchlint.semantic.branches import dead_at_every_call
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.devices import (Devices, factories_without_device, moves_to_accelerator,
                                        sets_default_device)
from torchlint.semantic.modules import forward_owners, pending, settle
from torchlint.statements import dotted_name
from torchlint.textscan import contains

STEPS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
_NEW_METHOD = {"zeros": "new_zeros", "ones": "new_ones", "empty": "new_empty", "full": "new_full",
               "tensor": "new_tensor"}


def message(written: str, cls: str, other: str, factory: str, module: str | None = None,
            where: str = "forward", returned: bool = False, hint: str | None = None) -> str:
    new = _NEW_METHOD.get(factory)
    if returned:
        return (f"`{written}(...)` in `{cls}.{where}` has no device=, so the initial state it returns for `{module}` is "
                f"made on the CPU: that fails with a device mismatch when the model runs on a GPU; pass "
                f"device=next(self.parameters()).device")
    if module is not None and module == other:
        # handed to a layer with nothing else naming the device: the function's input may
        fix = f"pass device={hint}.device" + (f" or use {hint}.{new}(...)" if new else "") if hint else \
            "pass device=next(self.parameters()).device or register it as a buffer"
        return (f"`{written}(...)` in `{cls}.{where}` has no device=, so it is made on the CPU and then passed to "
                f"`{module}`: that fails with a device mismatch when the model runs on a GPU; {fix}")
    fix = f"pass device={other}.device" + (f" or use {other}.{new}(...)" if new else "")
    met = f"passed to `{module}` with `{other}`" if module is not None else f"combined with `{other}`"
    return (f"`{written}(...)` in `{cls}.{where}` has no device=, so it is made on the CPU and then {met}: that "
            f"fails with a device mismatch when the model runs on a GPU; {fix}")


def moved_message(written: str, where: str | None, model: str, device: str) -> str:
    place = f"in `{where}` " if where else ""
    return (f"`{written}(...)` {place}has no device=, so it is made on the CPU and then meets `{model}` (a call of "
            f"it or its output), which runs on `{device}` (moved there, or given inputs moved there): that fails "
            f"with a device mismatch; pass "
            f"device={device}")


def caller_message(written: str, where: str, other: str, factory: str, device: str, how: str) -> str:
    new = _NEW_METHOD.get(factory)
    how = how if len(how) <= 60 and "\n" not in how else how[:57] + "..."
    return (f"`{written}(...)` in `{where}` has no device=, so it is made on the CPU and then combined with `{other}`, "
            f"which a call gives on `{device}` (`{how}`): that fails with a device mismatch; pass "
            f"device={other}.device" + (f" or use {other}.{new}(...)" if new else ""))


_BUILDS = re.compile(r"\b[A-Z]\w*\s*\(")


class TensorWithoutDevice(Rule):
    code = codes.TENSOR_WITHOUT_DEVICE
    name = "tensor-without-device"
    severity = Severity.WARNING
    default_enabled = True
    summary = "tensor created in forward without device= and combined with the input: fails on the GPU"
    options: dict[str, Option] = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py): a test's model usually runs on the CPU only"),
    }
    skips_test_files = True
    fixable = (SAFE,)

    @classmethod
    def might_apply(cls, text: str, options: dict | None = None) -> bool:
        """Every file that may build a model (``model = Net()``: a call of a capitalised name),
        to record whether it moves it, and every file that mentions torch; not a file with
        neither (the facts it would record are empty)."""
        return contains(text, "torch") or _BUILDS.search(text) is not None


    def finish(self) -> None:
        if sets_default_device(self.ctx):
            return
        sem = self.ctx.semantic
        model = sem.model
        self.ctx.facts[self.code] = facts = {"moves": moves_to_accelerator(model),
                                             "builds": sorted({s.node.func.value for s in model.calls
                                                               if isinstance(s.node.func, cst.Name)
                                                               and s.node.func.value[:1].isupper()})}
        if not contains(self.ctx.text, "torch"):
            return
        owners = forward_owners(sem)
        forwards = set(owners)
        # Lightning's steps run on the model's device too; any other method only for the state it
        # returns to the code that runs the model (``init_hidden``)
        steps = set()
        for info in model.classes.values():
            for name, method in info.methods.items():
                if name in STEPS and method not in owners:
                    steps.add(method)
                if name not in ("__init__", "__post_init__"):
                    owners.setdefault(method, info)
        found = []
        for site, factory in factories_without_device(model):
            call = site.node
            function = enclosing_function(model, site.scope)
            if dead_at_every_call(sem, call, function):
                continue  # ``if is_causal:`` in a private helper every call leaves at is_causal=False
            info = owners.get(function)
            met = Devices(self.ctx, model, info).reach(call)
            if met is not None and met.device is not None:
                # training code: the state handed to a model it moved (``model = Net().to(device)``)
                where = function.name.value if isinstance(function, cst.FunctionDef) else None
                self.report(call, moved_message(dotted_name(call.func) or factory, where, met.other, met.device))
                continue
            if info is None:
                passed = self._passed_on_device(function, met)
                if passed is not None:  # a helper some call gives a tensor on a device (d2l's one_hot)
                    written = dotted_name(call.func) or factory
                    self.report(call, caller_message(written, function.name.value, met.other, factory, *passed))
                continue
            if met is not None and (function in forwards or function in steps or met.returned):
                written = dotted_name(call.func) or factory
                where = function.name.value if function not in forwards else "forward"
                devices = Devices(self.ctx, model, info)
                hint = devices.input_carrier(function) if met.module == met.other else None
                found.append(pending(self.ctx, info, call, message(written, info.name, met.other, factory,
                                                                   met.module, where, met.returned, hint),
                                     _device_fix(self.ctx, model, site, met.other) if met.module != met.other
                                     else None))
        if found:
            facts["pending"] = found

    def _passed_on_device(self, function, met) -> tuple[str, str] | None:
        """For a plain function (no model class): ``(device, call)`` when the tensor meets one of
        its parameters and some same-file call passes that parameter a tensor on a device."""
        if met is None or met.device is not None or met.module is not None or not isinstance(function, cst.FunctionDef):
            return None
        params = {p.name.value for p in [*function.params.posonly_params, *function.params.params,
                                         *function.params.kwonly_params]}
        if met.other not in params:
            return None
        sem = self.ctx.semantic
        return Devices(self.ctx, sem.model, None).caller_device(function, met.other)

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        # a model built only in files that never move anything to an accelerator runs on the CPU:
        # the file that defines and builds it (a script, a notebook), else every file building it
        facts = {r.path: r.facts.get(cls.code) or {} for r in project.records}
        builders: dict[str, list[bool]] = {}
        for f in facts.values():
            for name in f.get("builds", ()):
                builders.setdefault(name, []).append(bool(f.get("moves")))
        for finding in settle(cls, project):
            name = (finding.extra or {}).get("class", "").rsplit(".", 1)[-1]
            own = facts.get(finding.path, {})
            moves = [bool(own.get("moves"))] if name in own.get("builds", ()) else builders.get(name)
            if moves is None or any(moves):
                yield finding


def _device_fix(ctx, model, site, other: str) -> Fix | None:
    """``device=<other>.device`` appended to the factory's arguments, where ``other`` (what
    the tensor meets) is a parameter of the function making the tensor that is never rebound
    there: bound, and on the same device, wherever the factory runs."""
    call = site.node
    scope = site.scope.function()
    function = scope.node if scope is not None else None
    bindings = scope.bindings.get(other, []) if scope is not None else []
    if not isinstance(function, cst.FunctionDef) or len(bindings) != 1 or bindings[0].kind != "param" \
            or bindings[0].node in (function.params.star_arg, function.params.star_kwarg) or not call.args:
        return None
    return Fix.safe(f"Create it on {other}.device", insert_after(ctx, call.args[-1].value, f", device={other}.device"))
