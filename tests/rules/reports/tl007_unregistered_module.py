"""TL007's cases adapted from public reports: layers or tensors an ``nn.Module`` keeps where it
does not register them (``BUGS``), and the fixed or similar code that registers them
(``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

BUGS = [
    # three Conv1d kept in a plain list: .cuda() leaves them on the CPU
    """
    import torch as th

    class Net(th.nn.Module):
        def __init__(self, vec_size):
            super(Net, self).__init__()
            self.conv1d = [th.nn.Conv1d(vec_size, 1, 3), th.nn.Conv1d(vec_size, 1, 4), th.nn.Conv1d(vec_size, 1, 5)]

        def forward(self, x):
            return [conv(x) for conv in self.conv1d]
    # https://github.com/pytorch/pytorch/issues/1053
    """,
    # convolutions appended to a plain list in a loop
    """
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, layer_size):
            super(Model, self).__init__()
            self.conv = []
            for idx in range(layer_size):
                self.conv.append(nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3)))
                in_channels = out_channels
                out_channels *= 2

        def forward(self, x):
            for conv in self.conv:
                x = conv(x)
            return x
    # https://github.com/pytorch/pytorch/issues/8017
    """,
    # a list of nn.Sequential blocks
    """
    import torch.nn as nn

    class Network(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.convs = [
                nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.Conv2d(channels, channels, 3, padding=1)),
                nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.Conv2d(channels, channels, 3, padding=1)),
            ]

        def forward(self, x):
            return self.convs[1](self.convs[0](x))
    # https://github.com/pytorch/pytorch/issues/4412
    """,
    # one output head per task, appended to a plain list
    """
    import torch.nn as nn

    class MultiTask(nn.Module):
        def __init__(self, input_features, num_classes):
            super(MultiTask, self).__init__()
            self.softmaxes = []
            for n in num_classes:
                self.softmaxes.append(nn.Linear(input_features, n))

        def forward(self, batch_in):
            return [head(batch_in) for head in self.softmaxes]
    # https://github.com/pytorch/pytorch/issues/15005
    """,
    # a list comprehension of layers: print(net) shows only the first layer
    """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self, num_layers):
            super(Net, self).__init__()
            self.layer = nn.Linear(1, 1)
            self.list_of_layers = [nn.Linear(1, 1) for i in range(num_layers)]

        def forward(self, x):
            x = self.layer(x)
            for layer in self.list_of_layers:
                x = layer(x)
            return x
    # https://github.com/pytorch/pytorch/issues/666
    """,
    # GRU gates built in a loop into plain lists
    """
    import torch.nn as nn

    class StackedGRU(nn.Module):
        def __init__(self, input_size, hidden_size, layers):
            super().__init__()
            self.x2h = []
            self.h2h = []
            for _ in range(layers):
                self.x2h.append(nn.Linear(input_size, 3 * hidden_size))
                self.h2h.append(nn.Linear(hidden_size, 3 * hidden_size))
                input_size = hidden_size

        def forward(self, x, h):
            for x2h, h2h in zip(self.x2h, self.h2h):
                h = (x2h(x) + h2h(h)).tanh()
                x = h
            return h
    # https://github.com/pytorch/pytorch/issues/21905
    """,
    # weighted losses (their weight is a buffer) kept in a plain list
    """
    import torch
    import pytorch_lightning as pl

    class Transformer(pl.LightningModule):
        def __init__(self, weights_per_position):
            super().__init__()
            self.criterions = []
            for weight in weights_per_position:
                self.criterions.append(torch.nn.CrossEntropyLoss(weight=weight))

        def training_step(self, batch, batch_idx):
            out, y = batch
            return sum(c(out[:, i], y[:, i]) for i, c in enumerate(self.criterions))
    # https://github.com/Lightning-AI/pytorch-lightning/issues/2984
    """,
    # a constant table made in __init__ as a plain attribute: .cuda() leaves it on the CPU
    """
    import math
    import torch
    import torch.nn as nn

    class TimeStretch(nn.Module):
        def __init__(self, hop_length=None, n_freq=201):
            super(TimeStretch, self).__init__()
            n_fft = (n_freq - 1) * 2
            hop_length = hop_length if hop_length is not None else n_fft // 2
            self.phase_advance = torch.linspace(0, math.pi * hop_length, n_freq)[..., None]

        def forward(self, complex_specgrams, rate):
            return complex_specgrams * self.phase_advance * rate
    # https://github.com/pytorch/audio/pull/457
    """,
    # a tensor switched to requires_grad after it is stored: not in .parameters()
    """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.w = torch.rand(2, 2)
            self.w.requires_grad = True

        def forward(self, x):
            return x @ self.w
    # https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/17
    """,
    # a positional table built in a local, filled in place and stored as a plain attribute
    """
    import math
    import torch
    import torch.nn as nn

    class PositionalEncoder(nn.Module):
        def __init__(self, d_model, max_seq_len=80):
            super().__init__()
            self.d_model = d_model
            pe = torch.zeros(max_seq_len, d_model)
            for pos in range(max_seq_len):
                for i in range(0, d_model, 2):
                    pe[pos, i] = math.sin(pos / (10000 ** (i / d_model)))
                    pe[pos, i + 1] = math.cos(pos / (10000 ** (i / d_model)))
            pe = pe.unsqueeze(0)
            self.pe = pe

        def forward(self, x):
            x = x * math.sqrt(self.d_model)
            return x + self.pe[:, :x.size(1)]
    # https://github.com/intro-llm/intro-llm.github.io/issues/34
    """,
    # hidden layers of each block kept in a list built by a comprehension into a local
    """
    import torch.nn as nn

    class SNLINet(nn.Module):
        def __init__(self, options):
            super(SNLINet, self).__init__()
            hids = [nn.Linear(options["n_hid"], options["n_hid"]) for _ in range(options["n_layers"])]
            self.hids = hids
            self.classifier = nn.Linear(options["n_hid"], 3)

        def forward(self, x):
            for hid in self.hids:
                x = hid(x).relu()
            return self.classifier(x)
    # https://github.com/pytorch/pytorch/issues/715
    """,
]

LOOKALIKES = [
    # the fix: nn.ModuleList
    """
    import torch as th

    class Net(th.nn.Module):
        def __init__(self, vec_size):
            super(Net, self).__init__()
            self.conv1d = th.nn.ModuleList([th.nn.Conv1d(vec_size, 1, k) for k in (3, 4, 5)])

        def forward(self, x):
            return [conv(x) for conv in self.conv1d]
    # https://github.com/pytorch/pytorch/issues/1053
    """,
    # the fix: layers gathered in a local list and wrapped in nn.Sequential
    """
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, layer_size):
            super(Model, self).__init__()
            conv = []
            for idx in range(layer_size):
                conv.append(nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3)))
                in_channels = out_channels
                out_channels *= 2
            self.conv = nn.Sequential(*conv)

        def forward(self, x):
            return self.conv(x)
    # https://github.com/pytorch/pytorch/issues/8017
    """,
    # the asker's own fix: add_module for each block of the list
    """
    import torch.nn as nn

    class Network(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.convs = [nn.Conv2d(channels, channels, 3, padding=1), nn.Conv2d(channels, channels, 3, padding=1)]
            for i, conv in enumerate(self.convs):
                self.add_module("conv_%d" % i, conv)

        def forward(self, x):
            return self.convs[1](self.convs[0](x))
    # https://github.com/pytorch/pytorch/issues/4412
    """,
    # a backbone keeps the names of its stages in a list; the stages are added with add_module
    """
    import torch.nn as nn

    def make_res_layer(inplanes, planes, blocks):
        return nn.Sequential(*[nn.Conv2d(inplanes if i == 0 else planes, planes, 3, padding=1) for i in range(blocks)])

    class ResNet(nn.Module):
        def __init__(self, stage_blocks):
            super(ResNet, self).__init__()
            self.res_layers = []
            inplanes = 64
            for i, num_blocks in enumerate(stage_blocks):
                planes = 64 * 2 ** i
                res_layer = make_res_layer(inplanes, planes, num_blocks)
                inplanes = planes
                layer_name = "layer{}".format(i + 1)
                self.add_module(layer_name, res_layer)
                self.res_layers.append(layer_name)

        def forward(self, x):
            for layer_name in self.res_layers:
                x = getattr(self, layer_name)(x)
            return x
    # https://github.com/open-mmlab/mmdetection/issues/472
    """,
    # the fix: the losses in an nn.ModuleList
    """
    import torch
    import pytorch_lightning as pl

    class Transformer(pl.LightningModule):
        def __init__(self, weights_per_position):
            super().__init__()
            self.criterions = torch.nn.ModuleList()
            for weight in weights_per_position:
                self.criterions.append(torch.nn.CrossEntropyLoss(weight=weight))

        def training_step(self, batch, batch_idx):
            out, y = batch
            return sum(c(out[:, i], y[:, i]) for i, c in enumerate(self.criterions))
    # https://github.com/Lightning-AI/pytorch-lightning/issues/2984
    """,
    # the answer: a tensor made in __init__ registered as a buffer
    """
    import torch
    import pytorch_lightning as pl

    class LitModel(pl.LightningModule):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("anchors", torch.linspace(0, 1, n))
            self.layer = torch.nn.Linear(n, 1)

        def forward(self, x):
            return self.layer(x - self.anchors)
    # https://github.com/Lightning-AI/pytorch-lightning/issues/1978
    """,
    # the fix: the constant table registered as a buffer
    """
    import math
    import torch
    import torch.nn as nn

    class TimeStretch(nn.Module):
        def __init__(self, hop_length=None, n_freq=201):
            super(TimeStretch, self).__init__()
            n_fft = (n_freq - 1) * 2
            hop_length = hop_length if hop_length is not None else n_fft // 2
            self.register_buffer("phase_advance", torch.linspace(0, math.pi * hop_length, n_freq)[..., None])

        def forward(self, complex_specgrams, rate):
            return complex_specgrams * self.phase_advance * rate
    # https://github.com/pytorch/audio/pull/457
    """,
    # the fix: nn.Parameter for the peephole weights
    """
    import torch
    from torch import nn

    class ConvLSTMCell(nn.Module):
        def __init__(self, hidden, height, width):
            super(ConvLSTMCell, self).__init__()
            self.Wci = nn.Parameter(torch.zeros(1, hidden, height, width))
            self.Wcf = nn.Parameter(torch.zeros(1, hidden, height, width))

        def forward(self, x, c):
            return torch.sigmoid(x + c * self.Wci), torch.sigmoid(x + c * self.Wcf)
    # https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/17
    """,
    # the table registered as a buffer; forward adds a slice of it
    """
    import math
    import torch
    import torch.nn as nn

    class PositionalEncoder(nn.Module):
        def __init__(self, d_model, max_seq_len=80):
            super().__init__()
            self.d_model = d_model
            pe = torch.zeros(max_seq_len, d_model)
            for pos in range(max_seq_len):
                for i in range(0, d_model, 2):
                    pe[pos, i] = math.sin(pos / (10000 ** (i / d_model)))
                    pe[pos, i + 1] = math.cos(pos / (10000 ** (i / d_model)))
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x * math.sqrt(self.d_model)
            return x + self.pe[:, :x.size(1)]
    # https://github.com/intro-llm/intro-llm.github.io/issues/34
    """,
    # a frozen parameter: requires_grad switched off after nn.Parameter
    """
    import torch
    import torch.nn as nn

    class LBConv(nn.Conv2d):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__(in_channels, out_channels, kernel_size, bias=False)
            weights = torch.bernoulli(torch.full(self.weight.shape, 0.5)) * 2 - 1
            self.weight = nn.Parameter(weights)
            self.weight.requires_grad = False
    # https://github.com/eeric/pytorch-LBCNN/issues/1
    """,
    # parameters with requires_grad=False are still registered
    """
    import torch
    from torch.nn import Module
    from torch.nn.parameter import Parameter

    class Blah(Module):
        def __init__(self, dim):
            super(Blah, self).__init__()
            self.s = Parameter(torch.rand(1, dim), requires_grad=False)
            self.t = Parameter(torch.rand(1, dim))

        def forward(self, x):
            return x * self.s + self.t
    # https://github.com/pytorch/pytorch/issues/719
    """,
    # the fix: the GRU gates in nn.ModuleList
    """
    import torch.nn as nn

    class StackedGRU(nn.Module):
        def __init__(self, input_size, hidden_size, layers):
            super().__init__()
            self.x2h = nn.ModuleList()
            self.h2h = nn.ModuleList()
            for _ in range(layers):
                self.x2h.append(nn.Linear(input_size, 3 * hidden_size))
                self.h2h.append(nn.Linear(hidden_size, 3 * hidden_size))
                input_size = hidden_size

        def forward(self, x, h):
            for x2h, h2h in zip(self.x2h, self.h2h):
                h = (x2h(x) + h2h(h)).tanh()
                x = h
            return h
    # https://github.com/pytorch/pytorch/issues/21905
    """,
    # a textbook cell showing that a plain list is not registered: nothing reads the list
    """
    import torch.nn as nn

    class ListHolder(nn.Module):
        def __init__(self):
            super().__init__()
            self.linears = [nn.Linear(10, 10)]

    net = ListHolder()
    print(list(net.parameters()))  # empty: the point of the demonstration
    # https://github.com/ShusenTang/Dive-into-DL-PyTorch/blob/master/code/chapter04_DL_computation/4.1_model-construction.ipynb
    """,
]
