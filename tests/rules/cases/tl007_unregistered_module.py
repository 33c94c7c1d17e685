"""TL007's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl007_unregistered_module import append_message, buffer_message, container_message, parameter_message
from torchlint.rule import Invalid


VALID = [
    # A list of layers no code reads, in a file nothing imports: it computes nothing (a
    # textbook cell showing that net2.parameters() is empty: Dive-into-DL 4.1); another class's
    # own self.linears, read in its forward, is not this one's.
    """
        import torch.nn as nn
        class MyModule(nn.Module):
            def __init__(self):
                super(MyModule, self).__init__()
                self.linears = nn.ModuleList([nn.Linear(10, 10) for i in range(10)])
            def forward(self, x):
                for i, l in enumerate(self.linears):
                    x = self.linears[i // 2](x) + l(x)
                return x
        class Module_ModuleList(nn.Module):
            def __init__(self):
                super(Module_ModuleList, self).__init__()
                self.linears = nn.ModuleList([nn.Linear(10, 10)])
        class Module_List(nn.Module):
            def __init__(self):
                super(Module_List, self).__init__()
                self.linears = [nn.Linear(10, 10)]
        net1 = Module_ModuleList()
        net2 = Module_List()
        for p in net2.parameters():
            print(p)
    """,
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
    # A boolean tensor forward only iterates for flags it tests (``if is_cont:``, also through
    # zip and a plain loop): each element becomes a Python bool, so it never meets the input
    # (review packages: pytorch_tabnet's EmbeddingGenerator.continuous_idx).
    """
        import torch
        import torch.nn as nn
        class EmbeddingGenerator(nn.Module):
            def __init__(self, input_dim, cat_idxs, cat_dims):
                super().__init__()
                self.embeddings = nn.ModuleList([nn.Embedding(d, 4) for d in cat_dims])
                self.continuous_idx = torch.ones(input_dim, dtype=torch.bool)
                self.continuous_idx[cat_idxs] = 0
                self.skip = torch.zeros(input_dim, dtype=torch.bool)
            def forward(self, x):
                cols, k = [], 0
                for i, is_cont in enumerate(self.continuous_idx):
                    if is_cont:
                        cols.append(x[:, i].float().view(-1, 1))
                    else:
                        cols.append(self.embeddings[k](x[:, i].long()))
                        k += 1
                for col, skipped in zip(cols, self.skip):
                    if not skipped and col.numel() == 0:
                        raise ValueError("empty column")
                for flag in self.skip:
                    assert flag == 0
                return torch.cat(cols, dim=1)
        """,
    # The attribute flows into a local that forward moves (learners' phlippe neural ODE), and a
    # local list that is also registered through nn.Sequential(*layers).
    """
        import torch
        import torch.nn as nn
        class ODEBlock(nn.Module):
            def __init__(self, f, n):
                super().__init__()
                self.f = f
                self.integration_time = torch.tensor([0, 1], dtype=torch.float32)
                layers = [nn.Linear(4, 4) for _ in range(n)]
                self.net = nn.Sequential(*layers)
                self.layers = layers
            def forward(self, x, integration_time=None):
                integration_time = self.integration_time if integration_time is None else integration_time
                integration_time = integration_time.to(x.device)
                return self.f(x, integration_time) + self.layers[0](x)
        """,
    # A tensor built through a local, then moved before it is stored, or registered.
    """
        import torch
        import torch.nn as nn
        class PositionalEncoding(nn.Module):
            def __init__(self, d, device):
                super().__init__()
                pe = torch.zeros(100, d)
                pe[:, 0::2] = torch.sin(torch.arange(0, 100).unsqueeze(1).float())
                self.pe = pe.unsqueeze(0).to(device)
                mask = torch.tril(torch.ones(8, 8))
                self.register_buffer("mask", mask)
            def forward(self, x):
                return (x + self.pe[:, :x.size(1)]).masked_fill(self.mask[:4, :4] == 0, 0)
        """,
]



INVALID = [
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
    # Iterated too, but its rows meet the input: they stay on the CPU.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class RowSum(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.rows = torch.ones(3, n)
                def forward(self, x):
                    for i, row in enumerate(self.rows):
                        if row.sum() > 0:
                            x = x + row
                    return x
            """,
        lines=(7,),
        messages=(buffer_message("rows"),),
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
    # Layers built by a comprehension into a local, or by dict(<generator>), then stored on self.
    Invalid(
        """
            import torch.nn as nn
            class Heads(nn.Module):
                def __init__(self, names, n):
                    super().__init__()
                    layers = [nn.Linear(4, 4) for _ in range(n)]
                    self.layers = layers
                    self.heads = dict((k, nn.Linear(4, 2)) for k in names)
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return {k: h(x) for k, h in self.heads.items()}
            """,
        lines=(7, 8),
        messages=(container_message("layers", "list"), container_message("heads", "dict")),
        fixed="""
            import torch.nn as nn
            class Heads(nn.Module):
                def __init__(self, names, n):
                    super().__init__()
                    layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
                    self.layers = layers
                    self.heads = dict((k, nn.Linear(4, 2)) for k in names)
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return {k: h(x) for k, h in self.heads.items()}
            """,
    ),
    # A tensor that requires grad, made through a local, a Variable, or moved before requires_grad_().
    Invalid(
        """
            import torch
            import torch.nn as nn
            from torch.autograd import Variable
            class Affine(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    w = torch.randn(d, d, requires_grad=True)
                    self.w = w
                    self.b = Variable(torch.zeros(d), requires_grad=True)
                    self.s = torch.ones(d).cuda().requires_grad_()
                def forward(self, x):
                    return (x @ self.w + self.b) * self.s
            """,
        lines=(9, 10, 11),
        messages=(parameter_message("w"), parameter_message("b"), parameter_message("s")),
    ),
    # A plain tensor made into a local, filled in place and reshaped, then stored on self
    # (the classic PositionalEncoding), and a causal mask made by torch.tril.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class PositionalEncoding(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    pe = torch.zeros(100, d)
                    pe[:, 0::2] = torch.sin(torch.arange(0, 100).unsqueeze(1).float())
                    pe = pe.unsqueeze(0)
                    self.pe = pe
                    mask = torch.tril(torch.ones(8, 8))
                    self.mask = mask
                def forward(self, x):
                    return (x + self.pe[:, :x.size(1)]).masked_fill(self.mask[:4, :4] == 0, 0)
            """,
        lines=(10, 12),
        messages=(buffer_message("pe"), buffer_message("mask")),
    ),
    # Layers read only through zip()/enumerate() in forward (not handed on); a tensor made to
    # require grad after it is stored; an indexed factory's tensor.
    Invalid(
        """
            import math
            import torch
            import torch.nn as nn
            class StackedGRU(nn.Module):
                def __init__(self, n, layers):
                    super().__init__()
                    self.x2h = [nn.Linear(n, n) for _ in range(layers)]
                    self.h2h = [nn.Linear(n, n) for _ in range(layers)]
                    self.w = torch.rand(n, n)
                    self.w.requires_grad = True
                    self.phase = torch.linspace(0, math.pi, n)[..., None]
                def forward(self, x, h):
                    for i, (a, b) in enumerate(zip(self.x2h, self.h2h)):
                        h = (a(x) + b(h)).tanh() @ self.w
                    return h * self.phase
            """,
        lines=(8, 9, 10, 12),
        messages=(container_message("x2h", "list"), container_message("h2h", "list"), parameter_message("w"),
                  buffer_message("phase")),
        fixed="""
            import math
            import torch
            import torch.nn as nn
            class StackedGRU(nn.Module):
                def __init__(self, n, layers):
                    super().__init__()
                    self.x2h = nn.ModuleList([nn.Linear(n, n) for _ in range(layers)])
                    self.h2h = nn.ModuleList([nn.Linear(n, n) for _ in range(layers)])
                    self.w = torch.rand(n, n)
                    self.w.requires_grad = True
                    self.phase = torch.linspace(0, math.pi, n)[..., None]
                def forward(self, x, h):
                    for i, (a, b) in enumerate(zip(self.x2h, self.h2h)):
                        h = (a(x) + b(h)).tanh() @ self.w
                    return h * self.phase
            """,
    ),
]
