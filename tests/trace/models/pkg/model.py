import torch.nn as nn

from .layers import FeedForward


class Stack(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.blocks = nn.ModuleList([FeedForward(dim, 32) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def build(dim=16):
    return Stack(dim)
