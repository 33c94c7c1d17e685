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


class SelfAttention(nn.Module):
    """Causal self-attention through ``F.scaled_dot_product_attention``; ``heads`` and
    ``kv_heads`` pick the head dimension and grouped-query attention."""

    def __init__(self, dim=64, heads=4, kv_heads=None, mask=False):
        super().__init__()
        self.heads, self.kv_heads, self.mask = heads, kv_heads or heads, mask
        self.head_dim = dim // heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * self.kv_heads * self.head_dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.mask:  # a boolean mask instead of is_causal
            keep = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               enable_gqa=self.kv_heads != self.heads)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class AttentionStack(nn.Module):
    """Repeated attention blocks (for checkpointing)."""

    def __init__(self, dim=64, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList(SelfAttention(dim) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x
