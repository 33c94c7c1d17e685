"""Models for the memory plan tests."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Stack(nn.Module):
    """Four repeated blocks and a head: activations grow with the batch."""

    def __init__(self, dim=64, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x.transpose(1, 2).mean(-1))  # a view (transpose) feeds a saved op


class FrozenBackbone(nn.Module):
    def __init__(self, frozen_head=False):
        super().__init__()
        self.backbone = nn.Linear(32, 256)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(256, 4)
        self.head.requires_grad_(not frozen_head)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))


class _NoBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("this layer has no backward")


class BrokenBackward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return _NoBackward.apply(self.fc(x))
