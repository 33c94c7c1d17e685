"""TL005 unused-layer: an ``nn.Module`` attribute assigned a layer that nothing ever calls.

Per-file pass (one walk): for every class, record

* its bases, as written and import-expanded (``torch.nn.Module``, ``pkg.models.Backbone``,
  or ``local:Name`` for a class of the same file);
* the attributes it assigns a module to (``self.x = nn.Linear(...)``, a container, a call of
  a class that may be a project ``nn.Module``), with the place of the first such assignment;
* every ``self.<name>`` it reads outside ``__init__`` (nested functions and lambdas of any
  method included; ``getattr(self, "name")`` too). Inside ``__init__`` a read counts only
  when the module (or one of its tensors) flows somewhere: into a container, another layer,
  a variable, an assignment. Initialisation (``nn.init.zeros_(self.fc.bias)``,
  ``self.fc.weight.data.normal_()``, ``if self.fc.bias is not None``) is not a use;
* whether it accesses its submodules dynamically (``getattr(self, name)``, ``setattr``,
  ``self.children()``, ``self._modules``, ``vars(self)``, a ``__getattr__`` of its own, ...);
* whether it defines ``forward`` (or Lightning's ``training_step``) that is not abstract.

Each file also records the attribute names it reads through another object outside
``__init__`` (``self.backbone.fc(x)``, ``model.criterion(out, y)``): a layer can be used by
the module that holds it, so such a name is never reported anywhere in the project.

Those facts go to ``ctx.facts["TL005"]``; the project pass resolves every class's bases
across the linted files and reports a layer only when the class is an ``nn.Module`` whose
whole family -- its bases, its subclasses anywhere in the linted files and their other bases
-- is known (project classes, ``torch.nn.Module``, Lightning's ``LightningModule``), none of
them reads the attribute or accesses submodules dynamically, and one of them defines
``forward``. A base from a third-party library or from a file that was not linted can read
anything, so the class is not reported. A subclass in a file that was not linted cannot be
seen: that is accepted (linting a single file reports what that file shows).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Iterable

import libcst as cst

from torchlint.context import dotted_name
from torchlint.finding import Finding, Severity
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.torch_api import PARAMETER_FREE_LAYERS, is_parameter_free_layer

# Bases that are nn.Modules and read none of a subclass's attributes.
_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_LIGHTNING_ROOTS = ("lightning", "pytorch_lightning")
# Bases that read nothing at all.
_NEUTRAL_BASES = {"object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol"}
# ``torch.nn`` names that are not module classes.
_NOT_MODULES = {"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"}
_CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}
# Methods of a module (or tensor) that return the same object.
_SELF_RETURNING = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "type", "train", "eval",
                   "requires_grad_", "share_memory", "to_empty", "xpu", "mps"}
# Submodules reached without naming them.
_DYNAMIC_METHODS = {"children", "named_children", "modules", "named_modules", "get_submodule",
                    "__getattr__", "__getattribute__", "__setattr__"}
_DYNAMIC_ATTRS = {"_modules", "__dict__"}
# Calls that only look at a module inside ``__init__``.
_INSPECTING = {"isinstance", "hasattr", "print", "type", "callable", "id", "repr", "str", "getattr"}
# Methods whose presence means the class runs its layers itself.
_RUNNERS = ("forward", "training_step")
_INIT = "__init__"
# Variables that hold a model (``model.criterion(out, y)`` reads a layer from outside).
_MODEL_NAME = re.compile(r"(model|net|network|module|encoder|decoder|backbone|student|teacher|generator|"
                         r"discriminator|classifier|wrapper)s?$|^(m|mod|g|d)$", re.IGNORECASE)
# Tensor methods named like layers: ``self.weights.softmax(-1)`` reads no layer.
_TENSOR_METHODS = {"softmax", "log_softmax", "relu", "relu_", "sigmoid", "tanh", "flatten", "unflatten",
                   "norm", "abs", "exp", "mean", "sum", "max", "min", "pow", "sqrt", "float", "half"}


def torch_nn_class(qualified: str) -> str | None:
    """``torch.nn.Linear`` / ``torch.nn.modules.conv.Conv2d`` -> the class name; None for
    ``nn.Parameter``, ``nn.init.*``, ``nn.functional.*``, ``nn.utils.*``, ..."""
    if not qualified.startswith("torch.nn."):
        return None
    parts = qualified[9:].split(".")
    last = parts[-1]
    if not last[:1].isupper() or last in _NOT_MODULES:
        return None
    if len(parts) > 1 and parts[0] != "modules":
        return None
    return last


def _is_lightning_module(qualified: str) -> bool:
    return qualified.split(".")[0] in _LIGHTNING_ROOTS and qualified.rsplit(".", 1)[-1] == "LightningModule"


class _Class:
    __slots__ = ("node", "name", "qual", "bases", "reads", "dynamic", "runs", "layers", "pf")

    def __init__(self, node: cst.ClassDef, qual: str, bases: list):
        self.node = node
        self.name = node.name.value
        self.qual = qual
        self.bases = bases
        self.reads: set[str] = set()
        self.dynamic = False
        self.runs = False
        # attr -> (assignment node, kind, parameter-free); the first module assignment wins.
        self.layers: dict[str, tuple[cst.CSTNode, list, bool]] = {}
        # Holds no parameters of its own (only parameter-free layers and plain values).
        self.pf = True


class _Frame:
    __slots__ = ("cls", "self_name", "is_init")

    def __init__(self, cls: _Class | None, self_name: str | None, is_init: bool):
        self.cls = cls
        self.self_name = self_name
        self.is_init = is_init


def _first_param(params: cst.Parameters) -> str | None:
    if params.posonly_params:
        return params.posonly_params[0].name.value
    if params.params:
        return params.params[0].name.value
    return None


def _param_names(params: cst.Parameters) -> set[str]:
    out = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.add(star.name.value)
    return out


def _abstract(node: cst.FunctionDef, decorators: set) -> bool:
    """``@abstractmethod``, or a body that only raises ``NotImplementedError`` (or is ``...``/
    ``pass`` after a docstring): subclasses, maybe unseen, provide the real method."""
    if decorators & {"abstractmethod", "abc.abstractmethod"}:
        return True
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    stmts = [small for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body]
    if len(stmts) != len(body):
        return False
    for small in stmts:
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.BaseString, cst.Ellipsis)):
            continue
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Raise) and small.exc is not None:
            exc = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
            if dotted_name(exc) == "NotImplementedError":
                continue
        return False
    return True


class UnusedLayer(Rule):
    code = "TL005"
    name = "unused-layer"
    severity = Severity.WARNING
    default_enabled = True
    summary = "nn.Module layer assigned in the model but never used outside __init__"
    options = {
        "ignore-names": Option([], list, "attribute names (or fnmatch patterns) never reported", item_kind=str),
    }
    # Every file with a class: a subclass that reads a base's layer must be seen even when it
    # mentions nothing of torch. Scripts that use a model's layer from outside
    # (``model.criterion(...)``) are read too.
    requires_text = ("class", "model", "net.", "Net.", "module.", "encoder.", "decoder.", "backbone.",
                     "student.", "teacher.", "generator.", "discriminator.", "classifier.", "wrapper.")

    VALID = [
        # Every layer used in forward; nn.init in __init__ on a used layer.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.drop = nn.Dropout(0.1)
                nn.init.zeros_(self.fc.bias)
            def forward(self, x):
                return self.drop(self.fc(x))
        """,
        # Used on only one branch, and in a method other than forward.
        """
        from torch import nn
        class Net(nn.Module):
            def __init__(self, aux):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.aux_head = nn.Linear(4, 2)
                self.proj = nn.Linear(4, 8)
            def forward(self, x):
                h = self.body(x)
                if self.training:
                    return self.aux_head(h)
                return h
            def embed(self, x):
                return self.proj(x)
        """,
        # Dynamic access: getattr with a computed name, children().
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block_0 = nn.Linear(4, 4)
                self.block_1 = nn.Linear(4, 4)
            def forward(self, x):
                for i in range(2):
                    x = getattr(self, f"block_{i}")(x)
                return x
        class Seq(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.ReLU()
                self.b = nn.Linear(2, 2)
            def forward(self, x):
                for m in self.children():
                    x = m(x)
                return x
        """,
        # Used by a subclass in the same file; a base's layer used by the base.
        """
        import torch.nn as nn
        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(8, 2)
                self.stem = nn.Conv2d(3, 8, 3)
            def features(self, x):
                return self.stem(x).mean((2, 3))
        class Child(Base):
            def __init__(self):
                super().__init__()
                self.stem = nn.Conv2d(3, 8, 5)
            def forward(self, x):
                return self.head(self.features(x))
        """,
        # Only part of a used container: listed in nn.Sequential / nn.ModuleList in __init__.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = nn.BatchNorm2d(8)
                self.block = nn.Sequential(self.conv, self.bn)
                self.a = nn.Linear(2, 2)
                self.b = nn.Linear(2, 2)
                self.layers = nn.ModuleList([self.a, self.b])
            def forward(self, x):
                x = self.block(x)
                for layer in self.layers:
                    x = layer(x)
                return x
        """,
        # Base class from a third-party library: it may read the attribute itself.
        """
        from transformers import PreTrainedModel
        import torch.nn as nn
        class LM(PreTrainedModel):
            def __init__(self, config):
                super().__init__(config)
                self.lm_head = nn.Linear(8, 100)
            def forward(self, x):
                return x
        """,
        # Ignored by the config; a Lightning module using its layer in training_step.
        Valid(
            """
            import torch.nn as nn
            import lightning as L
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.spare = nn.Linear(4, 4)
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    return self.fc(x)
            class Lit(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.model = nn.Linear(4, 4)
                def training_step(self, batch, idx):
                    return self.model(batch).sum()
            """,
            options={"ignore-names": ["spare*"]},
        ),
        # Not an nn.Module; a module without forward (a namespace of layers used from outside).
        """
        import torch.nn as nn
        class Holder:
            def __init__(self):
                self.fc = nn.Linear(4, 4)
        class Heads(nn.Module):
            def __init__(self):
                super().__init__()
                self.cls = nn.Linear(4, 2)
                self.box = nn.Linear(4, 4)
        """,
        # nn.Sequential subclass: its forward runs every registered child.
        """
        import torch.nn as nn
        class Block(nn.Sequential):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 1)
                self.act = nn.ReLU()
        """,
        # Read in a lambda built in __init__ (runs later); getattr with a literal name.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.out = nn.Linear(4, 4)
                self.run = lambda x: self.fc(x)
            def forward(self, x):
                return getattr(self, "out")(self.run(x))
        """,
        # Weight tying: the decoder shares the embedding's weight.
        """
        import torch.nn as nn
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(100, 16)
                self.decoder = nn.Linear(16, 100, bias=False)
                self.decoder.weight = self.embed.weight
            def forward(self, h):
                return self.decoder(h)
        """,
        # A project class that is not known to be an nn.Module; a factory function.
        """
        import torch.nn as nn
        from timm.layers import Mlp
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = Mlp(4)
                self.layer = make_layer(4)
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return self.fc(x)
        """,
        # Base imported from a project file that is not linted: unknown reads.
        """
        import torch.nn as nn
        from .base import Backbone
        class Net(Backbone):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(4, 4)
            def forward(self, x):
                return x
        """,
        # Dynamic access in the base class covers the subclass.
        """
        import torch.nn as nn
        class Base(nn.Module):
            def forward(self, x):
                for name, m in self.named_children():
                    x = m(x)
                return x
        class Net(Base):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
        """,
        # Used from outside the class: a wrapper calls self.backbone.fc, a script model.criterion.
        """
        import torch.nn as nn
        class Backbone(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.fc = nn.Linear(4, 2)
                self.criterion = nn.CrossEntropyLoss()
            def forward(self, x):
                return self.body(x)
        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = Backbone()
            def forward(self, x):
                return self.backbone.fc(self.backbone(x))
        def train_step(model, x, y):
            return model.criterion(model(x), y)
        """,
        # In __init__ the layers flow into a local list, then into a used container.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(2, 2)
                self.b = nn.Linear(2, 2)
                blocks = [self.a, self.b]
                self.seq = nn.Sequential(*blocks)
            def forward(self, x):
                return self.seq(x)
        """,
        # Dynamic access: self.modules() outside __init__, setattr, vars(self).
        """
        import torch.nn as nn
        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(4)
            def forward(self, x):
                return x
            def freeze_bn(self):
                for m in self.modules():
                    m.eval()
        class B(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                for i in range(n):
                    setattr(self, f"layer{i}", nn.Linear(4, 4))
            def forward(self, x):
                return vars(self)["_modules"]["fc"](x)
        """,
        # An abstract forward: subclasses (maybe in other projects) use the layers.
        """
        import abc
        import torch.nn as nn
        class Base(nn.Module, abc.ABC):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
            def forward(self, x):
                \"\"\"Subclasses implement this.\"\"\"
                raise NotImplementedError
        class Other(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
            @abc.abstractmethod
            def forward(self, x): ...
        """,
        # Read in a function nested in forward; a method whose self is spelled differently.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(this):
                super().__init__()
                this.fc = nn.Linear(2, 2)
                this.out = nn.Linear(2, 2)
            def forward(this, x):
                def step(y):
                    return this.fc(y)
                return this.out(step(x))
        """,
        # A subclass also derives from a third-party class, which may read the layer.
        """
        import torch.nn as nn
        from huggingface_hub import PyTorchModelHubMixin
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(2, 2)
            def forward(self, x):
                return x
        class HubNet(Net, PyTorchModelHubMixin):
            pass
        """,
        # forward written as a free function and attached to the class.
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
            def forward(self, x):
                return x
        def _forward(self, x):
            return self.fc(x)
        Net.forward = _forward
        """,
        # A method defined under an ``if`` in the class body.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
            if hasattr(torch, "compile"):
                def forward(self, x):
                    return self.fc(x)
            else:
                def forward(self, x):
                    return self.fc(x) * 1
        """,
    ]
    INVALID = [
        # The fixture's shape: a Dropout defined but never applied.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class ConvNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.dropout = nn.Dropout(0.5)
                    self.fc = nn.Linear(8, 10)
                    nn.init.zeros_(self.fc.bias)
                def forward(self, x):
                    return self.fc(F.relu(self.conv(x)).mean((2, 3)))
            """,
            lines=(8,),
            messages=(
                "`ConvNet.dropout` is built but never applied: nothing outside __init__ in ConvNet, its "
                "bases or subclasses uses `self.dropout`, so the dropout/activation/pooling it was meant to "
                "add silently never happens; apply it in forward or delete it",
            ),
        ),
        # A parameterised layer: the DDP consequence is named.
        Invalid(
            """
            from torch import nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(8, 16)
                    self.extra = nn.Linear(16, 16)
                    self.fc2 = nn.Linear(16, 4)
                def forward(self, x):
                    return self.fc2(self.fc1(x))
            """,
            lines=(7,),
            messages=(
                "`Net.extra` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.extra`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # Read only in __init__ for weight initialisation.
        Invalid(
            """
            import torch
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(4, 4)
                    self.head = torch.nn.Linear(4, 2)
                    torch.nn.init.xavier_uniform_(self.proj.weight)
                    if self.proj.bias is not None:
                        self.proj.bias.data.zero_()
                def forward(self, x):
                    return self.head(x)
            """,
            lines=(6,),
            messages=(
                "`Net.proj` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.proj`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # Conditional construction, annotated assignment, a container, assigned in another method.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self, norm):
                    super().__init__()
                    self.norm = nn.LayerNorm(4) if norm else nn.Identity()
                    self.act: nn.Module = nn.GELU()
                    self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
                    self.build()
                def build(self):
                    self.head = nn.Linear(4, 2).to("cpu")
                def forward(self, x):
                    return x
            """,
            lines=(6, 7, 8, 11),
            messages=(
                "`Net.norm` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.norm`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
                "`Net.act` is built but never applied: nothing outside __init__ in Net, its bases or "
                "subclasses uses `self.act`, so the dropout/activation/pooling it was meant to add silently "
                "never happens; apply it in forward or delete it",
                "`Net.blocks` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.blocks`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
                "`Net.head` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.head`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # A same-file project class that is an nn.Module, through an nn.Module subclass.
        Invalid(
            """
            import torch.nn as nn
            class Base(nn.Module):
                pass
            class Block(Base):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)
                def forward(self, x):
                    return self.lin(x)
            class Net(Base):
                def __init__(self):
                    super().__init__()
                    self.block = Block()
                    self.out = nn.Linear(4, 4)
                def forward(self, x):
                    return self.out(x)
            """,
            lines=(14,),
            messages=(
                "`Net.block` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.block`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # A Lightning module whose layer no step uses.
        Invalid(
            """
            import pytorch_lightning as pl
            import torch.nn as nn
            class Lit(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.encoder = nn.Linear(4, 4)
                    self.decoder = nn.Linear(4, 4)
                def forward(self, x):
                    return self.encoder(x)
                def training_step(self, batch, batch_idx):
                    return self(batch).sum()
            """,
            lines=(8,),
            messages=(
                "`Lit.decoder` is built but never used: nothing outside __init__ in Lit, its bases or "
                "subclasses reads `self.decoder`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # A parameter-free layer: the message says it is not applied, without the DDP claim.
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.relu = nn.ReLU()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    return self.fc(x)
            """,
            lines=(6,),
            messages=(
                "`Net.relu` is built but never applied: nothing outside __init__ in Net, its bases or "
                "subclasses uses `self.relu`, so the dropout/activation/pooling it was meant to add silently "
                "never happens; apply it in forward or delete it",
            ),
        ),
        # Read only by a sibling class (not a base or subclass); self.modules() in __init__
        # only initialises.
        Invalid(
            """
            import torch.nn as nn
            class Base(nn.Module):
                def forward(self, x):
                    return x
            class A(Base):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(4, 4)
                    for m in self.modules():
                        if isinstance(m, nn.Linear):
                            nn.init.zeros_(m.bias)
            class B(Base):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(4, 4)
                def forward(self, x):
                    return self.head(x)
            """,
            lines=(9,),
            messages=(
                "`A.head` is built but never used: nothing outside __init__ in A, its bases or subclasses "
                "reads `self.head`, so its parameters get no gradient, waste memory and checkpoint space, "
                "and DistributedDataParallel fails with 'Expected to have finished reduction in the prior "
                "iteration' unless find_unused_parameters=True; use it in forward or delete it",
            ),
        ),
        # A layer only called in __init__ (to compute a size), never in training.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.features = nn.Conv2d(3, 8, 3)
                    self.probe = nn.Conv2d(3, 8, 3)
                    n = self.probe(torch.zeros(1, 3, 8, 8)).numel()
                    self.fc = nn.Linear(n, 2)
                def forward(self, x):
                    return self.fc(self.features(x).flatten(1))
            """,
            lines=(8,),
            messages=(
                "`Net.probe` is built but never used: nothing outside __init__ in Net, its bases or "
                "subclasses reads `self.probe`, so its parameters get no gradient, waste memory and "
                "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
                "delete it",
            ),
        ),
        # nn.Module imported from torch.nn.modules; the module used through a tensor method of
        # another attribute with the same name does not count.
        Invalid(
            """
            from torch.nn.modules import Module
            from torch.nn import Linear, Softmax
            class Head(Module):
                def __init__(self):
                    super().__init__()
                    self.fc = Linear(4, 4)
                    self.softmax = Softmax(dim=-1)
                    self.weights = Linear(4, 4).weight
                def forward(self, x):
                    return self.fc(x) * self.weights.softmax(-1)
            """,
            lines=(8,),
            messages=(
                "`Head.softmax` is built but never applied: nothing outside __init__ in Head, its bases or "
                "subclasses uses `self.softmax`, so the dropout/activation/pooling it was meant to add "
                "silently never happens; apply it in forward or delete it",
            ),
        ),
    ]

    # -- per-file pass -----------------------------------------------------------------
    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self.classes: list[_Class] = []
        self.class_stack: list[_Class] = []
        self.frames: list[_Frame | None] = []  # None: a scope without a bound ``self``
        self.scope_names: list[str] = []
        self.outside: set[str] = set()  # attributes read through another object

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = []
        for arg in node.bases:
            if arg.keyword is not None:
                continue
            if arg.star:
                bases.append(["?"])
                continue
            bases.append(self._base_ref(arg.value))
        qual = ".".join([*self.scope_names, node.name.value])
        info = _Class(node, qual, bases)
        self.classes.append(info)
        self.class_stack.append(info)
        self.frames.append(None)
        self.scope_names.append(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.pop()
        self.frames.pop()
        self.scope_names.pop()

    def _base_ref(self, expr: cst.BaseExpression) -> list:
        if isinstance(expr, cst.Subscript):  # Generic[T], Base[Config]
            expr = expr.value
        dotted = dotted_name(expr)
        if dotted is None:
            return ["?"]
        if self.ctx.is_imported(expr):
            return ["q", self.ctx.qualified_name(expr)]
        if dotted in ("object",):
            return ["q", "object"]
        # A class of this file (settled in finish), or something star-imported.
        return ["name", dotted]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # The nearest scope around the def (a method may sit under an ``if``/``try`` in the
        # class body).
        scope = next((a for a in self.ctx.ancestors(node) if isinstance(a, (cst.ClassDef, cst.FunctionDef, cst.Lambda))), None)
        cls = self.class_stack[-1] if self.class_stack else None
        frame: _Frame | None
        if cls is not None and scope is cls.node:
            # A method: ``self`` is its first parameter unless static/class method.
            decorators = {dotted_name(d.decorator) for d in node.decorators}
            name = node.name.value
            if name in _RUNNERS and not _abstract(node, decorators):
                cls.runs = True
            if name in ("__getattr__", "__getattribute__"):
                cls.dynamic = True
            if decorators & {"staticmethod", "classmethod"}:
                frame = None
            else:
                frame = _Frame(cls, _first_param(node.params), name == _INIT)
        else:
            frame = self._nested_frame(node.params)
        self.frames.append(frame)
        self.scope_names.append(node.name.value)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.pop()
        self.scope_names.pop()

    def _nested_frame(self, params: cst.Parameters) -> _Frame | None:
        """A function or lambda inside a method sees the method's ``self`` (and runs later,
        so it is never ``__init__`` itself)."""
        outer = self.frames[-1] if self.frames else None
        if outer is None or outer.self_name is None or outer.self_name in _param_names(params):
            return None
        return _Frame(outer.cls, outer.self_name, False)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.frames.append(self._nested_frame(node.params))

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.frames.pop()

    def _frame(self) -> _Frame | None:
        return self.frames[-1] if self.frames else None

    def _is_self(self, expr: cst.BaseExpression, frame: _Frame) -> bool:
        return isinstance(expr, cst.Name) and expr.value == frame.self_name

    # -- reads ---------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        frame = self._frame()
        value = node.value
        if frame is None or frame.self_name is None or not self._is_self(value, frame):
            self._outside_read(node, frame)
            return
        attr = node.attr.value
        cls = frame.cls
        if attr in _DYNAMIC_ATTRS:
            cls.dynamic = True
            return
        if self._is_store(node):
            return
        if not frame.is_init or self._flows(node):
            cls.reads.add(attr)

    def _outside_read(self, node: cst.Attribute, frame: _Frame | None) -> None:
        """``self.backbone.fc(x)`` or ``model.criterion(out, y)``: a layer of another module
        used from outside its class (outside ``__init__``)."""
        if frame is not None and frame.is_init:
            return
        root = node.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return
        if root is node.value:  # model.fc
            if frame is None and root.value == "self" and self.frames:
                pass  # a free function written as a method (``Net.forward = forward``)
            elif not _MODEL_NAME.search(root.value) or root.value in self.ctx.imports:
                return
        elif frame is None or frame.self_name != root.value:  # self.backbone.fc
            return
        attr = node.attr.value
        if attr in _TENSOR_METHODS:
            call = self.ctx.parent(node)
            if isinstance(call, cst.Call) and call.func is node:
                return  # self.weights.softmax(-1): a tensor method
        if not self._is_store(node):
            self.outside.add(attr)

    def _is_store(self, node: cst.CSTNode) -> bool:
        parent = self.ctx.parent(node)
        while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
            node, parent = parent, self.ctx.parent(parent)
        if isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Del)):
            return True
        if isinstance(parent, (cst.AnnAssign, cst.For, cst.CompFor)):
            return parent.target is node
        return False

    def _flows(self, node: cst.Attribute) -> bool:
        """In ``__init__``: does ``self.x`` (or a tensor of it) go anywhere, rather than only
        being initialised, inspected or called?"""
        ctx = self.ctx
        cur: cst.CSTNode = node
        while True:
            parent = ctx.parent(cur)
            if isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is cur:
                if isinstance(parent, cst.Attribute) and parent.attr.value in _SELF_RETURNING:
                    call = ctx.parent(parent)
                    if isinstance(call, cst.Call) and call.func is parent:
                        cur = call  # ``self.x.to(device)`` is ``self.x`` again
                        continue
                cur = parent
                continue
            if isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
                cur = parent
                continue
            break
        if isinstance(parent, cst.Call) and parent.func is cur:
            return False  # a method of the layer (or the layer itself) called here
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if isinstance(call, cst.Call):
                return not self._inspecting(call)
            return True
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            return False
        if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is cur:
            return False
        if isinstance(parent, cst.Expr):
            return False
        return not self._is_store(cur) and not isinstance(parent, cst.AugAssign)

    def _inspecting(self, call: cst.Call) -> bool:
        name = self.ctx.qualified_name(call.func)
        if name is None:
            return False
        if name.startswith("torch.nn.init."):
            return True
        last = name.rsplit(".", 1)[-1]
        if "." not in name and last in _INSPECTING:
            return True
        return "init" in last.lower() or (last.endswith("_") and not last.endswith("__"))

    def visit_Call(self, node: cst.Call) -> None:
        frame = self._frame()
        if frame is None or frame.self_name is None:
            return
        func = node.func
        cls = frame.cls
        if isinstance(func, cst.Name) and func.value in ("getattr", "setattr", "vars", "delattr"):
            if not node.args or not self._is_self(node.args[0].value, frame):
                return
            if func.value == "getattr" and len(node.args) >= 2:
                name = node.args[1].value
                if isinstance(name, cst.SimpleString):
                    if not frame.is_init:
                        cls.reads.add(str(name.evaluated_value))
                    return
            if func.value == "delattr":
                return
            cls.dynamic = True
            return
        if isinstance(func, cst.Attribute) and self._is_self(func.value, frame):
            method = func.attr.value
            if method in _DYNAMIC_METHODS:
                if frame.is_init and method in ("modules", "named_modules") and self._iterated(node):
                    return  # ``for m in self.modules(): init(m)``
                cls.dynamic = True
            elif method in ("register_parameter", "register_module", "add_module"):
                cls.pf = False
        elif cls.pf and self.ctx.qualified_name(func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            cls.pf = False

    def _iterated(self, call: cst.Call) -> bool:
        parent = self.ctx.parent(call)
        return isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is call

    # -- layer assignments ---------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        frame = self._frame()
        if frame is None or frame.self_name is None:
            return
        for target in node.targets:
            self._assigned(frame, node, target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        frame = self._frame()
        if frame is None or frame.self_name is None or node.value is None:
            return
        self._assigned(frame, node, node.target, node.value)

    def _assigned(self, frame: _Frame, stmt: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if not (isinstance(target, cst.Attribute) and self._is_self(target.value, frame)):
            return
        cls = frame.cls
        kinds: list = []
        self._construction(value, kinds)
        if not kinds:
            if not isinstance(value, (cst.BaseNumber, cst.BaseString, cst.BinaryOperation)) and not (
                isinstance(value, cst.Name) and value.value in ("None", "True", "False")
            ):
                cls.pf = False  # may hold parameters (an argument, a factory's result)
            return
        if not all(k[0] == "nn" and k[1] for k in kinds):
            cls.pf = False
        attr = target.attr.value
        if attr not in cls.layers:
            cls.layers[attr] = (stmt, kinds)

    def _construction(self, value: cst.BaseExpression, kinds: list) -> None:
        """Collect into ``kinds`` the module construction(s) ``value`` may be:
        ``["nn", parameter_free]`` for a torch.nn class, ``["q", qualified]`` for an imported
        class, ``["name", Name]`` for one of this file (settled in ``finish``)."""
        if isinstance(value, cst.IfExp):
            self._construction(value.body, kinds)
            self._construction(value.orelse, kinds)
            return
        if not isinstance(value, cst.Call):
            return
        func = value.func
        while isinstance(func, cst.Attribute) and func.attr.value in _SELF_RETURNING and isinstance(func.value, cst.Call):
            value = func.value  # nn.Linear(...).to(device)
            func = value.func
        qualified = self.ctx.qualified_name(func)
        if qualified is None:
            return
        if self.ctx.is_imported(func):
            name = torch_nn_class(qualified)
            if name is not None:
                kinds.append(["nn", self._torch_pf(value, name)])
            elif qualified.split(".")[0] not in ("torch", "builtins", "typing", "copy"):
                kinds.append(["q", qualified])
        elif isinstance(func, cst.Name):
            kinds.append(["name", func.value])

    def _torch_pf(self, call: cst.Call, name: str) -> bool:
        if name == "Module":
            return True
        if name not in _CONTAINERS:
            return name in PARAMETER_FREE_LAYERS or is_parameter_free_layer(self.ctx, call.func)
        items: list[cst.BaseExpression] = []
        for arg in call.args:
            if arg.keyword is not None or arg.star:
                return False
            value = arg.value
            if name == "Sequential":
                items.append(value)
            elif isinstance(value, (cst.List, cst.Tuple)):
                for el in value.elements:
                    if isinstance(el, cst.StarredElement):
                        return False
                    items.append(el.value)
            elif isinstance(value, cst.Dict):
                for el in value.elements:
                    if not isinstance(el, cst.DictElement):
                        return False
                    items.append(el.value)
            else:
                return False
        if not items:
            return False
        for item in items:
            kinds: list = []
            self._construction(item, kinds)
            if kinds != [["nn", True]]:
                return False
        return True

    # -- facts ---------------------------------------------------------------------------
    def finish(self) -> None:
        if not self.classes and not self.outside:
            return
        names = {c.name for c in self.classes}
        star = list(self.ctx.star_imports)
        out = []
        for cls in self.classes:
            bases = [self._settle(b, names, star) for b in cls.bases]
            layers = []
            if not cls.dynamic and bases:
                for attr in sorted(cls.layers):
                    if attr in cls.reads:
                        continue
                    stmt, kinds = cls.layers[attr]
                    settled = [self._settle(k, names, star) for k in kinds]
                    settled = [k for k in settled if k[0] != "?"]
                    if not settled:
                        continue
                    rng = self.ctx.position(stmt)
                    layers.append([attr, settled, rng.start.line, rng.start.column + 1,
                                   rng.end.line, rng.end.column + 1])
            entry: dict[str, Any] = {"name": cls.name, "qual": cls.qual, "bases": bases, "reads": sorted(cls.reads)}
            if cls.dynamic:
                entry["dynamic"] = True
            if cls.runs:
                entry["runs"] = True
            if cls.pf:
                entry["pf"] = True
            if layers:
                entry["layers"] = layers
            out.append(entry)
        facts: dict[str, Any] = {"classes": out}
        if self.outside:
            facts["outside"] = sorted(self.outside)
        self.ctx.facts[self.code] = facts

    @staticmethod
    def _settle(ref: list, names: set[str], star: list[str]) -> list:
        if ref[0] != "name":
            return ref
        name = ref[1]
        if name.split(".")[0] in names:
            return ["local", name]
        if star and "." not in name:
            return ["star", name]
        return ["?"]

    # -- project pass --------------------------------------------------------------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        return _ProjectPass(project, options, cls).run()


# Resolved base kinds.
_MODULE, _NEUTRAL, _OPAQUE = "module", "neutral", "opaque"


class _ProjectPass:
    def __init__(self, project, options: dict[str, Any], rule: type[UnusedLayer]):
        self.project = project
        self.rule = rule
        self.ignore = [str(p) for p in options.get("ignore-names") or []]
        self.classes: list[tuple[Any, dict]] = []  # (record, class facts)
        self.outside: set[str] = set()
        self.by_record: dict[str, dict[str, list[int]]] = {}
        for record in project.records:
            facts = record.facts.get(rule.code)
            if not facts:
                continue
            self.outside.update(facts.get("outside", ()))
            index = self.by_record.setdefault(record.path, {})
            for entry in facts["classes"]:
                i = len(self.classes)
                self.classes.append((record, entry))
                index.setdefault(entry["qual"], []).append(i)
        self._bases: dict[int, list] = {}
        self._ancestors: dict[int, tuple[set[int], set[str]]] = {}

    # ``bases(i)``: each base as (_MODULE|_NEUTRAL|_OPAQUE, None) or ("class", [indices]).
    def bases(self, i: int) -> list:
        found = self._bases.get(i)
        if found is None:
            record, entry = self.classes[i]
            found = self._bases[i] = [self._resolve(ref, record) for ref in entry["bases"]]
        return found

    def _resolve(self, ref: list, record) -> tuple:
        kind = ref[0]
        if kind == "local":
            hits = self._local(record, ref[1])
            return ("class", hits) if hits else (_OPAQUE, None)
        if kind == "q":
            return self._qualified(ref[1], record)
        if kind == "star":
            for module in record.star_imports:
                got = self._qualified(f"{module}.{ref[1]}", record)
                if got[0] == "class":
                    return got
            return (_OPAQUE, None)
        return (_OPAQUE, None)

    def _local(self, record, name: str) -> list[int]:
        index = self.by_record.get(record.path, {})
        hits = index.get(name)
        if hits:
            return list(hits)
        # A class nested in a function, named by its short name.
        short = name.rsplit(".", 1)[-1]
        return [i for q, ids in index.items() if q.rsplit(".", 1)[-1] == short for i in ids] if "." not in name else []

    def _qualified(self, qualified: str, record) -> tuple:
        if qualified in _MODULE_BASES or _is_lightning_module(qualified) or torch_nn_class(qualified) == "Module":
            return (_MODULE, None)
        if qualified in _NEUTRAL_BASES:
            return (_NEUTRAL, None)
        if torch_nn_class(qualified) is not None:
            return (_OPAQUE, "torch.nn")  # an nn.Module whose own forward may read anything
        found = self.project.resolve_symbol(qualified, record)
        if found is None:
            return (_OPAQUE, None)
        target, name = found
        if not target.parsed:
            return (_OPAQUE, None)
        hits = self.by_record.get(target.path, {}).get(name)
        return ("class", list(hits)) if hits else (_OPAQUE, None)

    def ancestors(self, i: int) -> tuple[set[int], set[str]]:
        """Every project class above ``i`` (``i`` included) and the kinds of the external
        bases met (_MODULE, _NEUTRAL, _OPAQUE, "torch.nn")."""
        cached = self._ancestors.get(i)
        if cached is not None:
            return cached
        seen: set[int] = set()
        external: set[str] = set()
        stack = [i]
        while stack:
            j = stack.pop()
            if j in seen:
                continue
            seen.add(j)
            for kind, data in self.bases(j):
                if kind == "class":
                    stack.extend(data)
                elif kind == _OPAQUE and data == "torch.nn":
                    external.add("torch.nn")
                else:
                    external.add(kind)
        self._ancestors[i] = (seen, external)
        return seen, external

    def is_module(self, i: int) -> bool:
        _, external = self.ancestors(i)
        return _MODULE in external or "torch.nn" in external

    def children(self) -> dict[int, set[int]]:
        """Direct subclasses of each class; a base that could not be resolved but carries a
        project class's name counts as one (it may be that class)."""
        out: dict[int, set[int]] = {}
        by_short: dict[str, list[int]] = {}
        for i, (_, entry) in enumerate(self.classes):
            by_short.setdefault(entry["name"], []).append(i)
        for i, (record, entry) in enumerate(self.classes):
            for ref, (kind, data) in zip(entry["bases"], self.bases(i)):
                if kind == "class":
                    for j in data:
                        out.setdefault(j, set()).add(i)
                elif kind == _OPAQUE and data is None and len(ref) > 1:
                    for j in by_short.get(str(ref[1]).rsplit(".", 1)[-1], ()):
                        out.setdefault(j, set()).add(i)
        return out

    def run(self) -> list[Finding]:
        candidates = [i for i, (_, entry) in enumerate(self.classes) if entry.get("layers")]
        if not candidates:
            return []
        children = self.children()
        findings = []
        for i in candidates:
            family = self.family(i, children)
            if family is None:
                continue
            reads: set[str] = set()
            for j in family:
                reads.update(self.classes[j][1]["reads"])
            record, entry = self.classes[i]
            for attr, kinds, line, col, end_line, end_col in entry["layers"]:
                if attr in reads or attr in self.outside or any(fnmatch.fnmatchcase(attr, p) for p in self.ignore):
                    continue
                layer = self.layer(kinds, record)
                if layer is None:
                    continue
                findings.append(Finding(
                    rule=self.rule.code, name=self.rule.name, severity=self.rule.severity, path=record.path,
                    line=line, column=col, end_line=end_line, end_column=end_col,
                    message=message(entry["name"], attr, layer),
                    extra={"class": entry["name"], "attribute": attr},
                ))
        return findings

    def family(self, i: int, children: dict[int, set[int]]) -> set[int] | None:
        """The classes whose methods see ``self`` as an instance of class ``i``, or None when
        it must not be reported (not a module, an unknown base, dynamic access, no forward)."""
        members, external = self.ancestors(i)
        if _OPAQUE in external or "torch.nn" in external or _MODULE not in external:
            return None
        family = set(members)
        stack = list(children.get(i, ()))
        while stack:
            j = stack.pop()
            if j in family:
                continue
            up, ext = self.ancestors(j)
            if _OPAQUE in ext or "torch.nn" in ext:
                return None
            family |= up
            family.add(j)
            stack.extend(children.get(j, ()))
        if any(self.classes[j][1].get("dynamic") for j in family):
            return None
        if not any(self.classes[j][1].get("runs") for j in family):
            return None
        return family

    def layer(self, kinds: list, record) -> tuple[bool] | None:
        """(parameter-free,) when some construction is a module, else None."""
        module = False
        pf = True
        for kind in kinds:
            if kind[0] == "nn":
                module = True
                pf = pf and kind[1]
                continue
            resolved = self._resolve(kind, record)
            if resolved[0] != "class":
                continue
            hits = resolved[1]
            if all(self.is_module(j) for j in hits):
                module = True
                pf = pf and all(self.class_pf(j) for j in hits)
        return (pf,) if module else None

    def class_pf(self, i: int) -> bool:
        members, external = self.ancestors(i)
        return external <= {_MODULE, _NEUTRAL} and all(self.classes[j][1].get("pf") for j in members)


def message(cls: str, attr: str, layer: tuple[bool]) -> str:
    (pf,) = layer
    if pf:
        return (
            f"`{cls}.{attr}` is built but never applied: nothing outside __init__ in {cls}, its bases or "
            f"subclasses uses `self.{attr}`, so the dropout/activation/pooling it was meant to add silently "
            f"never happens; apply it in forward or delete it"
        )
    return (
        f"`{cls}.{attr}` is built but never used: nothing outside __init__ in {cls}, its bases or subclasses "
        f"reads `self.{attr}`, so its parameters get no gradient, waste memory and checkpoint space, and "
        f"DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
        f"unless find_unused_parameters=True; use it in forward or delete it"
    )
