import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden * 2, dim)  # bug: should be hidden

    def forward(self, x):
        return self.down(self.up(x).relu())
