"""Models exercising inputs, constructor arguments and unused layers."""

import torch
import torch.nn as nn


class UnusedLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.extra = nn.Linear(16, 16)  # never used

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class DynamicUse(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.block_a = nn.Linear(8, 8)  # only reached through getattr()
        self.scale = nn.Linear(8, 8)  # only its weight is used
        self.eval_head = nn.Linear(8, 8)  # only used in eval mode

    def forward(self, x):
        x = self.fc1(x)
        x = getattr(self, "block_" + "a")(x)
        x = torch.nn.functional.linear(x, self.scale.weight)
        if not self.training:
            x = self.eval_head(x)
        return x


class MLP(nn.Module):
    def __init__(self, in_dim, hidden, out_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        return self.net(x)


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Linear(10, 8)
        self.right = nn.Linear(20, 8)

    def forward(self, a, b):
        return self.left(a) * self.right(b)


class TokenClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, 3)

    def forward(self, tokens):
        return self.out(self.embed(tokens).mean(dim=1))


def make_classifier(vocab=50):
    """A factory function target."""
    return TokenClassifier(vocab=vocab, dim=8)


class Commented(nn.Module):  # torchlint: input-shape=(3, 5, 7)
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(7, 4, batch_first=True)

    def forward(self, x):
        out, _ = self.rnn(x)
        return out


class NaNLayer(nn.Module):
    def forward(self, x):
        return torch.log(x)  # NaN for negative inputs


class MakesNaN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.log = NaNLayer()
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.log(self.fc(x)))


class NeedsValues(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if self.fc(x).sum().item() > 1e9:
            return x
        return self.fc(x)


class NotAModel:
    pass


class HeadFirst(nn.Module):
    """The classifier is registered before the backbone: inference must not trust __init__ order."""

    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(8, 10)
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.classifier(self.backbone(x))


class ChannelsLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x.permute(0, 3, 1, 2))


class AbstractBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        raise NotImplementedError("subclasses implement forward")
