"""Issue 41 items 7 and 8: the training step's loss (TL102), batch norm on one value per
channel (TL103), in-place ops that break backward (TL104); each bug beside its fix."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BroadcastLoss(nn.Module):  # torchlint: input-shape=(4, 8), (4,)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x, y):
        out = self.fc(x)
        return F.mse_loss(out, y)  # bug: (4, 1) against (4,)


class SqueezedLoss(nn.Module):  # torchlint: input-shape=(4, 8), (4,)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x, y):
        out = self.fc(x).squeeze(-1)
        return F.mse_loss(out, y)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x)


def ce_loss(output, target):
    return nn.CrossEntropyLoss()(output, target)


def mse_loss(output, target):
    return F.mse_loss(output, target)


class OneSample(nn.Module):  # torchlint: input-shape=(1, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.fc(x))


class Batch(nn.Module):  # torchlint: input-shape=(4, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.fc(x))


class InplaceAdd(nn.Module):  # torchlint: input-shape=(4, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h += 1
        return h


class OutOfPlaceAdd(nn.Module):  # torchlint: input-shape=(4, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h = h + 1
        return h


class InplaceRelu(nn.Module):  # torchlint: input-shape=(4, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.exp(self.fc(x))
        return self.act(h)


class InplaceAfterLinear(nn.Module):  # torchlint: input-shape=(4, 8)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        h += 1  # the linear layer saves its input, not its output: backward runs
        return h
