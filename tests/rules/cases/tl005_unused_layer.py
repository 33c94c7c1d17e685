"""TL005's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid


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
    # Parameter-free layers that change nothing: a leftover ReLU (fc already ends in one), a
    # Softmax whose functional form forward applies (F.softmax, x.softmax).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Head(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
                self.relu = nn.ReLU()
                self.softmax = nn.Softmax(dim=dim)
                self.log_softmax = nn.LogSoftmax(dim)
            def forward(self, x):
                return F.softmax(self.fc(x), dim=-1), self.fc(x).log_softmax(-1)
        """,
    # A Dropout whose rate forward hands to the attention kernel instead (braindecode's
    # patched transformer): the dropout runs, functionally.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class MHSA(nn.Module):
            def __init__(self, dim, drop_prob):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.drop_prob = drop_prob
                self.attn_drop = nn.Dropout(drop_prob)
            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                return F.scaled_dot_product_attention(q, k, v, dropout_p=self.drop_prob if self.training else 0.0)
        """,
    # A bare parameter read through self.parameters() (a regulariser over every weight).
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.temperature = nn.Parameter(torch.ones(1))
            def forward(self, x):
                return self.fc(x)
            def penalty(self):
                return sum(p.pow(2).sum() for p in self.parameters())
        """,
    # One module under two names (``self.a = self.b = X()``), used through either one
    # (review4 TL005_1, TL005_4).
    """
        import torch.nn as nn
        class Pool(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.shape = (k, k)
                self.pad = nn.ConstantPad2d(k, 0)
            def forward(self, x):
                return self.pad(x)
        class S3D(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 1)
                self.maxpool_5a = self.maxPool2d_5a = Pool(2)
                self.proj = self.head = nn.Linear(8, 2)
            def forward(self, x):
                return self.head(self.maxpool_5a(self.conv(x)))
        """,
    # An empty container nothing ever fills holds no parameters (review4 TL005_3).
    """
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self, n=3):
                super().__init__()
                self.convs = nn.ModuleList()
                self.attproj = nn.ModuleList()
                self.extra = nn.ModuleDict()
                for _ in range(n):
                    self.convs.append(nn.Conv1d(8, 8, 3, padding=1))
            def forward(self, x):
                for conv in self.convs:
                    x = conv(x)
                return x
        """,
    # A subclass deletes the layer in its ``__init__`` (review4 TL005_8).
    """
        import torch.nn as nn
        class Xception(nn.Module):
            def __init__(self, num_classes=1000):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.fc = nn.Linear(8, num_classes)
                self.head = nn.Linear(8, 2)
            def forward(self, x):
                return self.conv(x)
        class XceptionEncoder(Xception):
            def __init__(self):
                super().__init__()
                del self.fc
                delattr(self, "head")
            def forward(self, x):
                return [x, self.conv(x)]
        """,
    # A frozen parameter nothing reads (no gradient, no optimizer state, DDP does not wait for
    # it); unused losses (no parameters); containers registering the modules the class uses
    # through a plain dict attribute (review5 TL005_1, TL005_2, TL005_3).
    """
        import torch
        import torch.nn as nn
        class Experts(nn.Module):
            def __init__(self, dim, experts):
                super().__init__()
                self.shift = nn.Parameter(torch.zeros(dim), requires_grad=False)
                self.spread = nn.Parameter(torch.ones(dim), False)
                self.recon_loss = nn.SmoothL1Loss(beta=0.5)
                self.ce = torch.nn.CrossEntropyLoss()
                self.experts = experts
                self._registered = nn.ModuleList(experts.values())
                self.gates = {"a": nn.Linear(dim, 1)}
                self._gates = nn.ModuleDict(self.gates)
            def forward(self, x):
                out = {k: e(x - self.shift) for k, e in self.experts.items()}
                return out, self.gates["a"](x)
        """,
    # A container of the elements of a collection another attribute keeps through one call
    # (bartorch's POCSBlock registers the projections that are modules).
    """
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, projections):
                super().__init__()
                self.projections = _checked(projections)
                modules = [p for p in projections if isinstance(p, nn.Module)]
                if modules:
                    self.held = nn.ModuleList(modules)
            def forward(self, x):
                for project in self.projections:
                    x = project(x)
                return x
        """,
    # A stand-in named so (torchani registers a class for TorchScript): the name, not the
    # comment, leaves it alone.
    """
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self, symbols):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self._dummy = Potential(symbols)  # Register class for jit
            def forward(self, x):
                return self.fc(x)
        """,
    # A stand-in whose one parameter is there so that the optimizer a trainer builds for
    # every network gets a parameter, and ``next(net.parameters()).device`` works
    # (imagen-pytorch's NullUnet).
    """
        import torch
        import torch.nn as nn
        class NullUnet(nn.Module):
            def __init__(self, *args, **kwargs):
                super().__init__()
                self.lowres_cond = False
                self.dummy_parameter = nn.Parameter(torch.tensor([0.]))
            def forward(self, x, *args, **kwargs):
                return x
        """,
]


INVALID = [
    # A placeholder's name excuses that attribute only: the layer beside it is reported.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.dummy = nn.Parameter(torch.empty(0))
                    self.proj = nn.Linear(8, 8)
                def forward(self, x):
                    return x.to(self.dummy.device) * 2
            """,
        lines=(8,),
        messages=("`Head.proj` is built but never used: nothing outside __init__ in Head, its bases or "
                  "subclasses reads `self.proj`, so its parameters get no gradient, waste memory and "
                  "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                  "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
                  "or delete it",),
    ),
    # Next to those: a trainable parameter, a container of layers built here that nothing
    # else holds.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Experts(nn.Module):
                def __init__(self, n, experts):
                    super().__init__()
                    self.experts = experts
                    blocks = [nn.Linear(4, 4) for _ in range(n)]
                    self.blocks = nn.ModuleList(blocks)
                    self.temperature = nn.Parameter(torch.ones(1), requires_grad=True)
                    self.loss = nn.MSELoss()
                def forward(self, x):
                    return {k: e(x) for k, e in self.experts.items()}
            """,
        lines=(9, 10),
        messages=(
            "`Experts.blocks` is built but never used: nothing outside __init__ in Experts, its bases or "
            "subclasses reads `self.blocks`, so its parameters get no gradient, waste memory and checkpoint "
            "space, and DistributedDataParallel fails with 'Expected to have finished reduction in the prior "
            "iteration' unless find_unused_parameters=True; use it in forward or delete it",
            "`Experts.temperature` is a parameter that is never read: nothing outside __init__ in Experts, its "
            "bases or subclasses reads `self.temperature`, so it gets no gradient, wastes optimizer state and "
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished reduction "
            "in the prior iteration' unless find_unused_parameters=True; use it in forward or delete it",
        ),
    ),
    # A container whose layers are built from a name another attribute is built from holds new
    # modules, not that attribute's; a comment that gives no reason to keep a layer changes nothing;
    # nor does a reason in the comment heading __init__.
    Invalid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self, cfg, dims):
                    # keep the layer order of the paper
                    super().__init__()
                    self.encoder = Encoder(cfg)
                    self.heads = nn.ModuleList(make_heads(cfg))
                    self.trunk = Trunk(dims)
                    self.blocks = nn.ModuleList([Block(d) for d in dims])
                    self.extra = nn.Linear(4, 4)  # the second head
                def forward(self, x):
                    return self.trunk(self.encoder(x))
            """,
        lines=(8, 10, 11),
        messages=(
            "`Net.heads` is built but never used: nothing outside __init__ in Net, its bases or subclasses "
            "reads `self.heads`, so its parameters get no gradient, waste memory and checkpoint space, and "
            "DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
            "unless find_unused_parameters=True; use it in forward or delete it",
            "`Net.blocks` is built but never used: nothing outside __init__ in Net, its bases or subclasses "
            "reads `self.blocks`, so its parameters get no gradient, waste memory and checkpoint space, and "
            "DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
            "unless find_unused_parameters=True; use it in forward or delete it",
            "`Net.extra` is built but never used: nothing outside __init__ in Net, its bases or subclasses "
            "reads `self.extra`, so its parameters get no gradient, waste memory and checkpoint space, and "
            "DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
            "unless find_unused_parameters=True; use it in forward or delete it",
        ),
    ),
    # A container that is filled but never used is still reported.
    Invalid(
        """
            import torch.nn as nn
            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)
                    self.attproj = nn.ModuleList()
                    self.attproj.append(nn.Linear(8, 8))
                def forward(self, x):
                    return self.fc(x)
            """,
        lines=(7,),
        messages=(
            "`Encoder.attproj` is built but never used: nothing outside __init__ in Encoder, its bases or "
            "subclasses reads `self.attproj`, so its parameters get no gradient, waste memory and checkpoint "
            "space, and DistributedDataParallel fails with 'Expected to have finished reduction in the prior "
            "iteration' unless find_unused_parameters=True; use it in forward or delete it",
        ),
    ),
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
            "bases or subclasses uses `self.dropout`, so the Dropout it was built for never runs; apply it "
            "in forward or delete it",
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
                def __init__(self, norm, approximate):
                    super().__init__()
                    self.norm = nn.LayerNorm(4) if norm else nn.Identity()
                    self.act: nn.Module = nn.GELU(approximate)
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
            "subclasses reads `self.norm`, so whenever it is built with parameters, they get no gradient, "
            "waste memory and checkpoint space, and DistributedDataParallel fails with 'Expected to have "
            "finished reduction in the prior iteration' unless find_unused_parameters=True; use it in "
            "forward or delete it",
            "`Net.act` is built but never applied: nothing outside __init__ in Net, its bases or "
            "subclasses uses `self.act`, so the GELU it was built for never runs; apply it in forward or "
            "delete it",
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
    # A parameter-free layer an __init__ flag asks for: not applied, without the DDP claim.
    Invalid(
        """
            import torch.nn as nn
            class UpSample(nn.Module):
                def __init__(self, activation=True):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    if activation:
                        self.act = nn.ReLU(True)
                def forward(self, x):
                    return self.fc(x)
            """,
        lines=(8,),
        messages=(
            "`UpSample.act` is built but never applied: nothing outside __init__ in UpSample, its bases or "
            "subclasses uses `self.act`, so the ReLU it was built for never runs; apply it in forward or "
            "delete it",
        ),
    ),
    # A bare parameter nothing reads; a head kept while the file loads pretrained weights.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Backbone(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.scale = nn.Parameter(torch.ones(1))
                    self.fc = nn.Linear(8, 10)
                def forward(self, x):
                    return self.conv(x).mean((2, 3))
            def backbone(path):
                model = Backbone()
                model.load_state_dict(torch.load(path))
                return model
            """,
        lines=(8, 9),
        messages=(
            "`Backbone.scale` is a parameter that is never read: nothing outside __init__ in Backbone, its "
            "bases or subclasses reads `self.scale`, so it gets no gradient, wastes optimizer state and "
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished reduction "
            "in the prior iteration' unless find_unused_parameters=True; use it in forward or delete it",
            "`Backbone.fc` is built but never used: nothing outside __init__ in Backbone, its bases or "
            "subclasses reads `self.fc`, so its parameters get no gradient, waste memory and checkpoint "
            "space, and DistributedDataParallel fails with 'Expected to have finished reduction in the prior "
            "iteration' unless find_unused_parameters=True; use it in forward, or, if it is kept so that "
            "pretrained weights load, replace it with nn.Identity() after loading",
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
    # nn.Module imported from torch.nn.modules; a layer used through a tensor method of
    # another attribute with the same name does not count.
    Invalid(
        """
            from torch.nn.modules import Module
            from torch.nn import Linear
            class Head(Module):
                def __init__(self):
                    super().__init__()
                    self.fc = Linear(4, 4)
                    self.relu = Linear(4, 4)
                    self.weights = Linear(4, 4).weight
                def forward(self, x):
                    return self.fc(x) * self.weights.relu()
            """,
        lines=(8,),
        messages=(
            "`Head.relu` is built but never used: nothing outside __init__ in Head, its bases or "
            "subclasses reads `self.relu`, so its parameters get no gradient, waste memory and "
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward or "
            "delete it",
        ),
    ),
    # No comment or docstring switches a finding off (issue 39): a reason to keep a layer, a
    # TODO/FIXME/BUG naming it as a problem, "intentionally"/"deliberately" (a comment may mention
    # the problem precisely because it is one).
    Invalid(
        """
            import torch.nn as nn
            class Model(nn.Module):
                \"\"\"The auxiliary head is deliberately left unused for now.\"\"\"
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    # keep: old checkpoints have these weights
                    self.legacy = nn.Linear(4, 4)
                    self.aux = nn.Linear(4, 2)  # TODO: use the aux head in forward
                    # FIXME: this dropout is never applied
                    self.drop = nn.Dropout(0.1)
                    self.proj = nn.Linear(4, 8)  # BUG: proj is not called
                    self.head = nn.Linear(4, 8)  # intentionally unused (register class for jit)
                def forward(self, x):
                    return self.fc(x)
            """,
        lines=(9, 10, 12, 13, 14),
        messages=(
            '`Model.legacy` is built but never used: nothing outside __init__ in Model, its bases or '
            'subclasses reads `self.legacy`, so its parameters get no gradient, waste memory and '
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
            'or delete it',
            '`Model.aux` is built but never used: nothing outside __init__ in Model, its bases or '
            'subclasses reads `self.aux`, so its parameters get no gradient, waste memory and '
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
            'or delete it',
            '`Model.drop` is built but never applied: nothing outside __init__ in Model, its bases or '
            'subclasses uses `self.drop`, so the Dropout it was built for never runs; apply it in '
            'forward or delete it',
            '`Model.proj` is built but never used: nothing outside __init__ in Model, its bases or '
            'subclasses reads `self.proj`, so its parameters get no gradient, waste memory and '
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
            'or delete it',
            '`Model.head` is built but never used: nothing outside __init__ in Model, its bases or '
            'subclasses reads `self.head`, so its parameters get no gradient, waste memory and '
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
            'or delete it',
        ),
    ),
    # A forward that runs (its names bound: a global, a parameter) is no template.
    Invalid(
        """
            import torch.nn as nn
            SCALE = 2.0
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.head = nn.Linear(4, 2)
                def forward(self, x):
                    y = x * SCALE
                    return self.fc(y)
            """,
        lines=(8,),
        messages=(
            '`Model.head` is built but never used: nothing outside __init__ in Model, its bases or '
            'subclasses reads `self.head`, so its parameters get no gradient, waste memory and '
            "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
            "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
            'or delete it',
        ),
    ),
]

VALID += [
    # A notebook exercise's decoder: the forward is "# your code here" and returns names that
    # only a later cell binds (from the decoder's own result); it reads nothing of self, so the
    # layers are there for the code still to be written (semantic.modules.unfinished).
    """
        import torch.nn as nn
        class AttnDecoderRNN(nn.Module):
            def __init__(self, hidden_size, output_size):
                super().__init__()
                self.embedding = nn.Embedding(output_size, hidden_size)
                self.gru = nn.GRU(hidden_size * 2, hidden_size)
                self.out = nn.Linear(hidden_size * 2, output_size)
            def forward(self, input, hidden, encoder_outputs):
                seq_len, _, _ = encoder_outputs.shape
                # your code here
                return output, hidden, attn_weights
        decoder = AttnDecoderRNN(256, 1000)
        output, hidden, attn_weights = decoder(x, h, enc)
        """,
]

INVALID += [
    # A forward written on one line runs its layers as any other does (``modules.is_abstract``
    # once read every one-line method as an abstract stub, so the class's layers went unchecked).
    Invalid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.extra = nn.Linear(4, 4)
                def forward(self, x): return self.fc(x)
            """,
        lines=(7,),
        messages=("`Net.extra` is built but never used: nothing outside __init__ in Net, its bases or "
                  "subclasses reads `self.extra`, so its parameters get no gradient, waste memory and "
                  "checkpoint space, and DistributedDataParallel fails with 'Expected to have finished "
                  "reduction in the prior iteration' unless find_unused_parameters=True; use it in forward "
                  "or delete it",),
    ),
]
