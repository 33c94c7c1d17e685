"""Models for the training step: gradient cuts, frozen parameters, NaN gradients, and CPU
tensors made in forward (device mismatch)."""

import torch
import torch.nn as nn


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.encoder(x)).detach()
        return self.head(h)


class NoGradEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        with torch.no_grad():
            h = self.encoder(x)
        return self.head(h)


class ArgmaxRouting(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 3)
        self.experts = nn.Linear(8, 4)
        self.spare = nn.Linear(8, 4)

    def forward(self, x):
        choice = self.router(x).argmax(dim=-1, keepdim=True)
        return self.experts(x) * choice


class FrozenBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        for p in self.backbone.parameters():
            p.requires_grad_(False)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


class LogOfZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        h = self.fc(x)
        h = h * (h > 0)
        h = torch.where(h > 0, torch.log(h), torch.zeros_like(h))  # log(0) in the branch not taken
        return self.out(h)


class CpuMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        mask = torch.ones(h.shape[-1]).unsqueeze(0)
        return h * mask


class CpuInputToLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        bias = torch.zeros(x.shape[0], 8)
        return self.fc(x + 0) + self.fc(bias)


class DeviceAware(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("scale", torch.ones(8))

    def forward(self, x):
        h = self.fc(x)
        mask = torch.ones(h.shape[-1], device=h.device)
        idx = torch.arange(4)
        return (h * mask * self.scale * torch.tensor(2.0))[idx]


def first_output_loss(output):
    return output.pow(2).mean()


def not_a_scalar(output):
    return output * 2


class PackedRNN(nn.Module):
    """Lengths on the CPU, as pack_padded_sequence wants them: no device mismatch."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 4, batch_first=True)

    def forward(self, x):
        lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.rnn(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return padded


class DataCut(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(8))
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x * self.scale.data)
