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

Left alone: 0-dim tensors (``torch.tensor(2.0)``, ``torch.zeros(())``: PyTorch lets a CPU
scalar meet a GPU tensor), tensors only used for indexing or shape arithmetic, files that set a
default device. Findings are pending until the project pass knows the class is an ``nn.Module``.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint import codes
from torchlint.finding import Finding, Severity
from torchlint.fixes import SAFE, Fix, insert_after
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.devices import Devices, factories_without_device, sets_default_device
from torchlint.semantic.modules import forward_owners, pending, settle
from torchlint.statements import dotted_name

_NEW_METHOD = {"zeros": "new_zeros", "ones": "new_ones", "empty": "new_empty", "full": "new_full",
               "tensor": "new_tensor"}


def message(written: str, cls: str, other: str, factory: str) -> str:
    new = _NEW_METHOD.get(factory)
    fix = f"pass device={other}.device" + (f" or use {other}.{new}(...)" if new else "")
    return (f"`{written}(...)` in `{cls}.forward` has no device=, so it is made on the CPU and then combined with "
            f"`{other}`: that fails with a device mismatch when the model runs on a GPU; {fix}")


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
    requires_text = ("torch",)
    fixable = (SAFE,)


    def finish(self) -> None:
        if sets_default_device(self.ctx):
            return
        sem = self.ctx.semantic
        model = sem.model
        owners = forward_owners(sem)
        if not owners:
            return
        found = []
        for site, factory in factories_without_device(model):
            call = site.node
            info = owners.get(enclosing_function(model, site.scope))
            if info is None:
                continue
            other = Devices(self.ctx, model, info).meets(call)
            if other is not None:
                written = dotted_name(call.func) or factory
                found.append(pending(self.ctx, info, call, message(written, info.name, other, factory),
                                     _device_fix(self.ctx, model, site, other)))
        if found:
            self.ctx.facts[self.code] = {"pending": found}

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        return settle(cls, project)


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
