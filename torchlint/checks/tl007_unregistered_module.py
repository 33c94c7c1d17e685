"""TL007 unregistered-module: layers and tensors an ``nn.Module`` keeps where it does not
register them.

From the semantic model (``self.<attr>`` bindings of each class's methods, read sites
``ClassInfo.self_sites``), four shapes are reported:

* ``self.x = [nn.Linear(...), ...]`` / a comprehension / a tuple / a dict of layers (``torch.nn``
  layers with parameters or a train/eval mode, or same-file ``nn.Module`` classes that hold
  such state: ``semantic.modules.holds_state``);
* ``self.x.append(nn.Linear(...))`` (``extend``/``insert``) where every binding of ``self.x``
  is a plain list (``[]``, ``list()``);
* ``self.w = torch.randn(..., requires_grad=True)`` (or ``.requires_grad_()``);
* ``self.m = torch.ones(...)`` (no ``device=``, not 0-dim) assigned once, in ``__init__``,
  and read in code ``forward`` runs other than to move it (``self.m.to(x.device)``), to refill
  it in place or to compare one element in a condition (``semantic.dataflow.stays_on_host``:
  a scratch tensor that never meets the input).

Left alone: an attribute read anywhere as a call argument or a container element (later
wrapped: ``nn.ModuleList(self.layers)``, ``nn.Sequential(*self.layers)``, handed to an
optimizer), a class calling ``add_module``/``register_module``/``register_parameter``/
``register_buffer``/``setattr`` on a list attribute's elements, a private single-element list
(``self._teacher = [teacher]``: kept out of ``.parameters()`` on purpose), lists of
non-modules or of layers without parameters, buffers or a mode (``nn.ReLU``, an unweighted
``nn.MSELoss()``), locals, classes overriding
``_apply``/``to``. Whether the class is an ``nn.Module`` is settled by the project pass.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.dataflow import stays_on_host
from torchlint.semantic.modules import (REGISTERING, built_by, forward_code, holds_state, is_module_here, pending, runs_in,
                                        self_attr_bindings, settle, stateless, torch_nn_alias)
from torchlint.torch_api import has_star_kwargs, keyword_arg, tensor_factory

_CONTAINER_FIX = {"list": "nn.ModuleList", "tuple": "nn.ModuleList", "dict": "nn.ModuleDict"}
_MOVING = {"to", "cuda", "type_as", "cpu", "device", "shape", "size", "dtype"}
_APPENDS = {"append", "extend", "insert"}


def container_message(attr: str, kind: str) -> str:
    return (f"`self.{attr}` keeps layers in a plain {kind}, which nn.Module does not register: .parameters(), "
            f"state_dict(), .to() and .train()/.eval() skip them; use {_CONTAINER_FIX[kind]}")


def append_message(attr: str) -> str:
    return (f"`self.{attr}` is a plain list, so the layer added here is not registered: .parameters(), "
            f"state_dict(), .to() and .train()/.eval() skip it; make `self.{attr}` an nn.ModuleList")


def parameter_message(attr: str) -> str:
    return (f"`self.{attr}` is a tensor with requires_grad=True, not an nn.Parameter: .parameters() and "
            f"state_dict() miss it and .to() does not move it; wrap it in nn.Parameter(...)")


def buffer_message(attr: str) -> str:
    return (f"`self.{attr}` is a plain tensor attribute used in forward: model.to(device) leaves it on the CPU "
            f"and state_dict() does not save it; use self.register_buffer(\"{attr}\", ...)")


class UnregisteredModule(Rule):
    code = "TL007"
    name = "unregistered-module"
    severity = Severity.WARNING
    default_enabled = True
    summary = "a layer or tensor kept where nn.Module does not register it (plain list/dict, requires_grad tensor, plain tensor attribute)"
    options: dict[str, Option] = {}
    requires_text = ("self.",)
    fixable = (UNSAFE,)

    VALID: list[Valid | str] = [
        # The fixes: ModuleList, ModuleDict, nn.Parameter, register_buffer.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
                self.heads = nn.ModuleDict({"a": nn.Linear(4, 2)})
                self.w = nn.Parameter(torch.randn(4, requires_grad=True))
                self.register_buffer("mask", torch.ones(4))
            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return self.heads["a"](x * self.w * self.mask)
        """,
        # The list is wrapped later: nn.Sequential(*self.layers), nn.ModuleList(self.blocks).
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = [nn.Linear(4, 4) for _ in range(n)]
                self.net = nn.Sequential(*self.layers)
                self.blocks = []
                for _ in range(n):
                    self.blocks.append(nn.Conv2d(3, 3, 1))
                self.blocks = nn.ModuleList(self.blocks)
            def forward(self, x):
                return self.net(x)
        """,
        # Registered in a loop with add_module / register_module.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = [nn.Linear(4, 4) for _ in range(n)]
                for i, layer in enumerate(self.layers):
                    self.add_module(f"layer{i}", layer)
            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        """,
        # Same-file modules that hold nothing registering changes (no parameters, buffers or
        # mode), or only a class from elsewhere whose state cannot be told (speechbrain's
        # SpeedPerturb keeps such resamplers in a list and moves its input itself).
        """
        import torch
        import torch.nn as nn
        import torchaudio
        class Swish(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        class Resample(nn.Module):
            def __init__(self, orig, new):
                super().__init__()
                self.orig = orig
                self.resampler = torchaudio.transforms.Resample(orig_freq=orig, new_freq=new)
            def forward(self, x):
                self.resampler.to(x.device)
                return self.resampler(x)
        class SpeedPerturb(nn.Module):
            def __init__(self, speeds, device="cpu"):
                super().__init__()
                self.device = device
                self.acts = [Swish() for _ in speeds]
                self.resamplers = []
                for speed in speeds:
                    self.resamplers.append(Resample(speed, 100))
            def forward(self, x):
                return self.resamplers[0](self.acts[0](x.to(self.device))).to(x.device)
        """,
        # A frozen teacher kept out of .parameters() on purpose.
        """
        import torch.nn as nn
        class Student(nn.Module):
            def __init__(self, teacher):
                super().__init__()
                self._teacher = [teacher]
                self._frozen = [nn.Linear(4, 4)]
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return self.fc(x) - self._teacher[0](x) - self._frozen[0](x)
        """,
        # Lists of non-modules, of functions, of parameter-free layers.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.sizes = [64, 128]
                self.acts = [F.relu, F.gelu]
                self.pools = [nn.ReLU(), nn.MaxPool2d(2)]
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return self.acts[0](self.fc(x))
        """,
        # Locals rather than attributes.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                layers = [nn.Linear(4, 4) for _ in range(n)]
                layers.append(nn.ReLU())
                self.net = nn.Sequential(*layers)
            def forward(self, x):
                return self.net(x)
        """,
        # Not an nn.Module: a trainer holding models in a list.
        """
        import torch
        import torch.nn as nn
        class Ensemble:
            def __init__(self):
                self.models = [nn.Linear(4, 2) for _ in range(3)]
                self.temperature = torch.ones(1, requires_grad=True)
                self.mask = torch.ones(4)
            def forward(self, x):
                return [m(x) * self.mask for m in self.models]
        """,
        # A tensor attribute moved in forward, made on the right device, 0-dim, or only in __init__.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, device):
                super().__init__()
                self.pe = torch.zeros(100, 4)
                self.eye = torch.eye(4, device=device)
                self.scale = torch.tensor(0.5)
                self.table = torch.arange(10)
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return self.fc(x) + self.pe[: x.size(0)].to(x.device) + x @ self.eye * self.scale
        """,
        # A requires_grad tensor handed to an optimizer itself.
        """
        import torch
        import torch.nn as nn
        class Calibrator(nn.Module):
            def __init__(self):
                super().__init__()
                self.t = torch.ones(1, requires_grad=True)
                self.opt = torch.optim.LBFGS([self.t])
            def forward(self, logits):
                return logits / self.t
        """,
        # A plain list attribute replaced by a registered one in another method.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = []
                self.build()
            def build(self):
                self.layers = nn.ModuleList([nn.Linear(2, 2)])
            def forward(self, x):
                return self.layers[0](x)
        """,
        # Losses without parameters or a weight buffer: registering them changes nothing
        # (review5 TL007_2).
        """
        import torch.nn as nn
        class AutoEncoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 4)
                self.criteria = {"cat": nn.CrossEntropyLoss(label_smoothing=0.1), "num": nn.SmoothL1Loss()}
                self.extra = []
                self.extra.append(nn.BCEWithLogitsLoss(reduction="sum"))
            def forward(self, x, y):
                return self.criteria["num"](self.net(x), y)
        """,
        # A scratch tensor redrawn in place every forward and only compared element by element in a
        # condition: it never meets the input (review5 TL007_3).
        """
        import torch
        import torch.nn as nn
        class LayerDrop(nn.Module):
            def __init__(self, blocks, rate):
                super().__init__()
                self.blocks = nn.ModuleList(blocks)
                self.rate = rate
                self.draws = torch.ones(len(blocks))
            def forward(self, x):
                self.draws[1:].uniform_()
                for i, block in enumerate(self.blocks):
                    if not self.training or self.draws[i] >= self.rate * i:
                        x = block(x)
                return x
        """,
    ]
    INVALID: list[Invalid] = [
        # Redrawn in place too, but added to the input: it stays on the CPU.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Noisy(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.fc = nn.Linear(n, n)
                    self.noise = torch.ones(n)
                def forward(self, x):
                    self.noise.normal_()
                    return self.fc(x) + self.noise
            """,
            lines=(8,),
            messages=(buffer_message("noise"),),
        ),
        # A loss holding a weight buffer: .to() does not move it (next to review5 TL007_2).
        Invalid(
            """
            import torch
            import torch.nn as nn
            class AutoEncoder(nn.Module):
                def __init__(self, class_weights):
                    super().__init__()
                    self.net = nn.Linear(4, 4)
                    self.criteria = {"cat": nn.CrossEntropyLoss(weight=class_weights), "num": nn.MSELoss()}
                    self.extra = []
                    self.extra.append(nn.BCEWithLogitsLoss(pos_weight=torch.ones(4)))
                def forward(self, x, y):
                    return self.criteria["cat"](self.net(x), y)
            """,
            lines=(8, 10),
            messages=(container_message("criteria", "dict"), append_message("extra")),
        ),
        Invalid(
            """
            import torch.nn as nn
            class MLP(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.layers = [nn.Linear(16, 16) for _ in range(n)]
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
            lines=(6,),
            messages=(container_message("layers", "list"),),
            fixed="""
            import torch.nn as nn
            class MLP(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(16, 16) for _ in range(n)])
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
        ),
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = {"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)}
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
            lines=(6,),
            messages=(container_message("heads", "dict"),),
            fixed="""
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)})
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
        ),
        Invalid(
            """
            from torch import nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.branches = (nn.Conv2d(3, 8, 1), nn.Conv2d(3, 8, 3, padding=1))
                def forward(self, x):
                    return sum(b(x) for b in self.branches)
            """,
            lines=(6,),
            messages=(container_message("branches", "tuple"),),
            fixed="""
            from torch import nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.branches = nn.ModuleList((nn.Conv2d(3, 8, 1), nn.Conv2d(3, 8, 3, padding=1)))
                def forward(self, x):
                    return sum(b(x) for b in self.branches)
            """,
        ),
        # append on a plain-list attribute, in a loop.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = []
                    for _ in range(n):
                        self.blocks.append(nn.Linear(4, 4))
                def forward(self, x):
                    for b in self.blocks:
                        x = b(x)
                    return x
            """,
            lines=(8,),
            messages=(append_message("blocks"),),
        ),
        # A requires_grad tensor where nn.Parameter was meant.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Scale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = torch.randn(4, requires_grad=True)
                    self.b = torch.zeros(4).requires_grad_()
                def forward(self, x):
                    return x * self.w + self.b
            """,
            lines=(7, 8),
            messages=(parameter_message("w"), parameter_message("b")),
        ),
        # A plain tensor attribute read in forward.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Masked(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.mask = torch.ones(4, 4)
                def forward(self, x):
                    return self.fc(x) * self.mask
            """,
            lines=(8,),
            messages=(buffer_message("mask"),),
        ),
        # Dropout and BatchNorm in a list: .eval() does not reach them; a same-file module class.
        Invalid(
            """
            import torch.nn as nn
            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    return self.fc(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.extras = [nn.Dropout(0.5), nn.BatchNorm1d(4)]
                    self.stages = [Block() for _ in range(3)]
                def forward(self, x):
                    for m in self.stages + self.extras:
                        x = m(x)
                    return x
            """,
            lines=(12, 13),
            messages=(container_message("extras", "list"), container_message("stages", "list")),
            fixed="""
            import torch.nn as nn
            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    return self.fc(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.extras = nn.ModuleList([nn.Dropout(0.5), nn.BatchNorm1d(4)])
                    self.stages = nn.ModuleList([Block() for _ in range(3)])
                def forward(self, x):
                    for m in self.stages + self.extras:
                        x = m(x)
                    return x
            """,
        ),
        # Same-file classes whose state registering matters for: a mode of their own
        # (``self.training``), a registered buffer, a stateful same-file base.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Noise(nn.Module):
                def forward(self, x):
                    return x + torch.randn_like(x) if self.training else x
            class Scale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("scale", torch.ones(1))
                def forward(self, x):
                    return x * self.scale
            class Dense(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
            class Head(Dense):
                def forward(self, x):
                    return self.fc(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.noises = [Noise(), Noise()]
                    self.scales = [Scale() for _ in range(2)]
                    self.heads = [Head(), Head()]
                def forward(self, x):
                    return self.heads[0](self.scales[0](self.noises[0](x)))
            """,
            lines=(23, 24, 25),
            messages=(container_message("noises", "list"), container_message("scales", "list"),
                      container_message("heads", "list")),

            fixed="""
            import torch
            import torch.nn as nn
            class Noise(nn.Module):
                def forward(self, x):
                    return x + torch.randn_like(x) if self.training else x
            class Scale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("scale", torch.ones(1))
                def forward(self, x):
                    return x * self.scale
            class Dense(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
            class Head(Dense):
                def forward(self, x):
                    return self.fc(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.noises = nn.ModuleList([Noise(), Noise()])
                    self.scales = nn.ModuleList([Scale() for _ in range(2)])
                    self.heads = nn.ModuleList([Head(), Head()])
                def forward(self, x):
                    return self.heads[0](self.scales[0](self.noises[0](x)))
            """,
        ),
        # A subclass of a same-file module; extend with layers.
        Invalid(
            """
            import torch.nn as nn
            class Base(nn.Module):
                pass
            class Net(Base):
                def __init__(self):
                    super().__init__()
                    self.layers = list()
                    self.layers.extend([nn.Linear(2, 2), nn.Linear(2, 2)])
                def forward(self, x):
                    return self.layers[1](self.layers[0](x))
            """,
            lines=(9,),
            messages=(append_message("layers"),),
        ),
        # A Lightning module; a dict comprehension of layers.
        Invalid(
            """
            import lightning.pytorch as pl
            import torch.nn as nn
            class Model(pl.LightningModule):
                def __init__(self, tasks):
                    super().__init__()
                    self.heads = {t: nn.Linear(8, 2) for t in tasks}
                def forward(self, x):
                    return [h(x) for h in self.heads.values()]
            """,
            lines=(7,),
            messages=(container_message("heads", "dict"),),
        ),
        # append of a layer bound to a local first; a private list of several layers.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.convs = []
                    conv = nn.Conv1d(4, 4, 3)
                    self.convs.append(conv)
                    self._aux = [nn.Linear(4, 4), nn.Linear(4, 4)]
                def forward(self, x):
                    return self.convs[0](x) + self._aux[0](x)
            """,
            lines=(8, 9),
            messages=(append_message("convs"), container_message("_aux", "list")),
            fixed="""
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.convs = []
                    conv = nn.Conv1d(4, 4, 3)
                    self.convs.append(conv)
                    self._aux = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
                def forward(self, x):
                    return self.convs[0](x) + self._aux[0](x)
            """,
        ),
    ]

    def finish(self) -> None:
        sem = self.ctx.semantic
        model = sem.model
        found = []
        for info in model.classes.values():
            found.extend(_ClassCheck(self.ctx, sem, info).findings())
        if found:
            self.ctx.facts[self.code] = {"pending": found}

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        return settle(cls, project)


class _ClassCheck:
    """One class's ``self.<attr>`` bindings and reads, judged."""

    def __init__(self, ctx, sem, info):
        self.ctx = ctx
        self.sem = sem
        self.model = sem.model
        self.info = info
        self.reads: dict[str, list[cst.Attribute]] = {}
        self.registers = False
        for node, scope in info.self_sites:
            self.reads.setdefault(node.attr.value, []).append(node)
            if node.attr.value in REGISTERING:
                self.registers = True
        self.registers = self.registers or any(
            isinstance(s.node.func, cst.Name) and s.node.func.value == "setattr" for m in info.methods.values()
            for s in sem.graph.sites(m))

    def findings(self) -> list[list]:
        info = self.info
        if not info.node.bases or {"_apply", "to", "cuda"} & set(info.methods):
            return []
        out = []
        for attr in sorted(info.self_assigned):
            bindings = self_attr_bindings(self.model, info, attr)
            if not bindings or self._escapes(attr):
                continue
            out.extend(self._judge(attr, bindings))
        out.sort(key=lambda f: (f[1], f[2]))
        return out

    def _judge(self, attr: str, bindings: list) -> list[list]:
        values = [b.value for b in bindings if b.kind in ("assign", "ann")]
        if len(values) != len(bindings):
            return []
        kinds = [_container(v) for v in values]
        if all(k is not None for k in kinds):
            if len(values) == 1 and not self.registers and self._holds_layers(values[0], attr):
                return [pending(self.ctx, self.info, bindings[0].node, container_message(attr, kinds[0]),
                                self._wrap_fix(values[0], kinds[0]))]
            if all(_empty_list(v) for v in values) and not self.registers:
                return [pending(self.ctx, self.info, call, append_message(attr)) for call in self._appends(attr)]
            return []
        if len(values) != 1 or not isinstance(values[0], cst.Call):
            return []
        value = values[0]
        if _requires_grad(self.model, value):
            return [pending(self.ctx, self.info, bindings[0].node, parameter_message(attr))]
        if self._plain_tensor(value, bindings[0]) and self._used_in_forward(attr):
            return [pending(self.ctx, self.info, bindings[0].node, buffer_message(attr))]
        return []

    def _wrap_fix(self, value: cst.BaseExpression, kind: str) -> Fix | None:
        """``nn.ModuleList(<the list>)`` / ``nn.ModuleDict(<the dict>)``, where every item is
        a layer construction (anything else would make the container raise), a dict's keys are
        string literals, and the file imports ``torch.nn`` (or ``torch``) at its top level.
        Unsafe: ``state_dict()`` gains the layers' keys (older checkpoints no longer load
        strictly), and code treating the attribute as a plain list or tuple may break."""
        items = _items(value)
        if isinstance(value, (cst.List, cst.Tuple, cst.Dict)) and len(items) != len(value.elements):
            return None  # a starred element or ``**mapping``
        if isinstance(value, cst.Dict) and not all(isinstance(el.key, cst.SimpleString) for el in value.elements):
            return None
        if not items or isinstance(value, (cst.DictComp, cst.Call)) or not all(self._registered_layer(i) for i in items):
            return None
        nn = torch_nn_alias(self.model)
        if nn is None:
            return None
        container = _CONTAINER_FIX[kind].removeprefix("nn.")
        wrapped = cst.Call(func=cst.parse_expression(f"{nn}.{container}"), args=[cst.Arg(value)])
        return Fix.unsafe(f"Wrap it in {nn}.{container}", replace_node(self.ctx, value, wrapped))

    def _escapes(self, attr: str) -> bool:
        """``self.<attr>`` read as a call argument or a container element (wrapped later,
        handed over), or as a starred element (``nn.Sequential(*self.layers)``)."""
        for node in self.reads.get(attr, ()):
            parent = self.ctx.parent(node)
            if isinstance(parent, (cst.Arg, cst.Element, cst.StarredElement, cst.DictElement)):
                return True
        return False

    def _holds_layers(self, value: cst.BaseExpression, attr: str) -> bool:
        items = _items(value)
        if attr.startswith("_") and isinstance(value, (cst.List, cst.Tuple)) and len(items) == 1:
            return False  # ``self._teacher = [teacher]``: kept out of .parameters() on purpose
        return bool(items) and any(self._registered_layer(item) for item in items)

    def _registered_layer(self, expr: cst.BaseExpression | None) -> bool:
        """A construction of a layer registering would change something for: a ``torch.nn``
        layer with parameters, buffers or a mode (not ``nn.ReLU``, ``nn.MSELoss()``), or a
        same-file ``nn.Module`` class known to hold such state (``holds_state``: not one that
        only wraps a class from elsewhere, whose state cannot be told)."""
        if isinstance(expr, cst.Name):
            found = self.model.reaching(expr.value, expr)
            expr = found[0].value if len(found) == 1 and found[0].kind == "assign" else None
        built = built_by(self.model, expr) if isinstance(expr, cst.Call) else None
        if built is None:
            return False
        if built.kind == "nn":
            return not stateless(self.model, built)
        return built.info is not None and is_module_here(self.model, built.info) and bool(holds_state(self.sem, built.info))

    def _appends(self, attr: str) -> list[cst.Call]:
        out = []
        for node in self.reads.get(attr, ()):
            method = self.ctx.parent(node)
            call = self.ctx.parent(method) if isinstance(method, cst.Attribute) else None
            if not isinstance(call, cst.Call) or call.func is not method or method.attr.value not in _APPENDS:
                continue
            args = [a.value for a in call.args if a.keyword is None]
            added = args[-1] if args else None
            if method.attr.value == "extend":
                items = _items(added) if added is not None and _container(added) else []
                if any(self._registered_layer(item) for item in items):
                    out.append(call)
            elif self._registered_layer(added):
                out.append(call)
        return out

    def _plain_tensor(self, value: cst.Call, binding) -> bool:
        """A tensor made in ``__init__`` on the default device, not 0-dim."""
        factory = tensor_factory(self.model.qualified_name(value.func))
        if factory is None or keyword_arg(value, "device") is not None or has_star_kwargs(value):
            return False
        if binding.scope.node is not self.info.methods.get("__init__"):
            return False
        first = value.args[0].value if value.args and value.args[0].keyword is None else None
        if factory == "tensor":
            return isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
        return first is not None and not (isinstance(first, (cst.Tuple, cst.List)) and not first.elements)

    def _used_in_forward(self, attr: str) -> bool:
        """Read in code forward runs other than to be moved or measured (``self.m.to(x.device)``),
        refilled in place or compared element by element in a condition (``stays_on_host``)."""
        code = forward_code(self.sem, self.info)
        for node in self.reads.get(attr, ()):
            if not runs_in(self.model, node, code):
                continue
            cur = node
            parent = self.ctx.parent(cur)
            while isinstance(parent, cst.Subscript) and parent.value is cur:
                cur, parent = parent, self.ctx.parent(parent)
            if isinstance(parent, cst.Attribute) and parent.value is cur and parent.attr.value in _MOVING:
                continue
            if stays_on_host(self.ctx, self.model, node):
                continue
            return True
        return False


def _container(value: cst.BaseExpression) -> str | None:
    """``list``/``tuple``/``dict`` for a plain container display or comprehension (or
    ``list()``/``dict()``), else None."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(value, cst.Tuple):
        return "tuple"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "dict") \
            and not value.args:
        return value.func.value
    return None


def _empty_list(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.List) and not value.elements or \
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list" and not value.args


def _items(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a container display or comprehension holds (a dict's values)."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return [el.value for el in value.elements if isinstance(el, cst.Element)]
    if isinstance(value, cst.Dict):
        return [el.value for el in value.elements if isinstance(el, cst.DictElement)]
    if isinstance(value, cst.ListComp):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    return []


def _requires_grad(model, value: cst.Call) -> bool:
    """``torch.randn(..., requires_grad=True)`` or ``torch.zeros(...).requires_grad_()``."""
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and isinstance(func.value, cst.Call):
        if value.args and value.args[0].value is not None and not (
                isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == "True"):
            return False
        return tensor_factory(model.qualified_name(func.value.func)) is not None
    flag = keyword_arg(value, "requires_grad")
    return flag is not None and isinstance(flag.value, cst.Name) and flag.value.value == "True" and \
        tensor_factory(model.qualified_name(func)) is not None
