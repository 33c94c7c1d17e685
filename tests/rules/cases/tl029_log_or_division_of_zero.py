"""TL029's cases: code it must not report (``VALID``) and code it must report, with the exact
line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl029_log_or_division_of_zero import division_message, log_message
from torchlint.rule import Invalid, Valid
from torchlint.semantic.zeros import COMPLEMENT, COUNT, RELU, SOFTMAX, WHEN, WORDS

_COUNT = division_message(WORDS[COUNT], WHEN[COUNT])
_DIV = {"divisions": True}
_RELU_SUM = division_message("a sum or norm of " + WORDS[RELU], WHEN[RELU])

VALID: list[Valid | str] = [
    # An epsilon or a clamp on the way keeps the log finite.
    """
        import torch
        def bce(p_logits, y, eps=1e-7):
            p = torch.sigmoid(p_logits)
            return -(y * torch.log(p + eps) + (1 - y) * torch.log(1 - p + eps)).mean()
        """,
    """
        import torch
        def bce(p_logits, y):
            p = torch.sigmoid(p_logits).clamp(1e-6, 1 - 1e-6)
            return -(y * p.log() + (1 - y) * (1 - p).log()).mean()
        """,
    # The stable forms: logsigmoid of the negated logits, log1p.
    """
        import torch
        import torch.nn.functional as F
        def bce(x, y):
            return -(y * F.logsigmoid(x) + (1 - y) * F.logsigmoid(-x)).mean() + torch.log1p(x.exp()).mean()
        """,
    # A count guarded by a test, clamped, or kept off 0 with max().
    """
        def masked_mean(loss, labels):
            mask = labels != -100
            n = mask.sum()
            if n == 0:
                return loss.sum() * 0
            return (loss * mask).sum() / n
        """,
    """
        def masked_mean(loss, labels):
            mask = labels != -100
            return (loss * mask).sum() / mask.sum().clamp(min=1)
        """,
    """
        def accuracy(pred, y, total):
            correct = (pred == y).sum()
            return correct / total
        """,
    # A sum or norm of something not shown to be zero: features, parameters.
    """
        def normalise(features, w):
            features = features / features.norm(dim=-1, keepdim=True)
            return w / w.sum(1, keepdim=True)
        """,
    # F.normalize has its own epsilon; a ReLU output normalised with one.
    """
        import torch.nn.functional as F
        def f(h):
            r = F.relu(h)
            return F.normalize(r, dim=1), r / (r.sum(1, keepdim=True) + 1e-8)
        """,
    # TL026's own: the log of a softmax (reported there, not twice).
    """
        import torch
        import torch.nn.functional as F
        def nll(logits, y):
            return F.nll_loss(torch.log(F.softmax(logits, dim=1)), y)
        """,
    # NumPy and math are not torch.
    """
        import math
        import numpy as np
        def f(counts, p):
            return np.log(1 - p), math.log(counts.sum()), counts / counts.sum(1, keepdims=True)
        """,
    # A softmax by hand, its log computed stably by logsumexp.
    """
        import torch
        def log_softmax(x):
            return x - torch.logsumexp(x, dim=1, keepdim=True)
        """,
]

# Divisions are reported only with the `divisions` option.
VALID.append("""
        def masked_mean(loss, labels):
            mask = labels != -100
            return (loss * mask).sum() / mask.sum()
        """)

INVALID: list[Invalid] = [
    # A count of a mask as the divisor (a batch with every label ignored).
    Invalid("""
        def masked_mean(loss, labels):
            mask = labels != -100
            return (loss * mask).sum() / mask.sum()
        """, lines=(4,), messages=(_COUNT,), options=_DIV),
    # Through a name and .item().
    Invalid("""
        def ssd_loss(loc_loss, cls_loss, cls_targets):
            num_pos = (cls_targets > 0).sum().item()
            return (loc_loss + cls_loss) / num_pos
        """, lines=(4,), messages=(_COUNT,), options=_DIV),
    # /= by a count.
    Invalid("""
        import torch
        def loss_fn(x, y):
            loss = torch.sum((x - y) ** 2 * (y > 0))
            loss /= torch.sum(y > 0)
            return loss
        """, lines=(5,), messages=(_COUNT,), options=_DIV),
    # One minus a sigmoid: 0 once the sigmoid rounds to 1.
    Invalid("""
        import torch
        def g_loss(D, fake):
            return torch.mean(torch.log(1. - torch.sigmoid(D(fake))))
        """, lines=(4,), messages=(log_message("torch.log", WORDS[COMPLEMENT], WHEN[COMPLEMENT]),)),
    # Through a name bound to a sigmoid, written as a method.
    Invalid("""
        def bce(x, y):
            p = x.sigmoid()
            return -(y * (1 - p).log()).mean()
        """, lines=(4,), messages=(log_message(".log()", WORDS[COMPLEMENT], WHEN[COMPLEMENT]),)),
    # A discriminator ending in nn.Sigmoid in this file.
    Invalid("""
        import torch
        import torch.nn as nn
        D = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())
        def d_loss(real, fake):
            return -torch.mean(torch.log(1 - D(fake)))
        """, lines=(6,), messages=(log_message("torch.log", WORDS[COMPLEMENT], WHEN[COMPLEMENT]),)),
    # One minus a softmax.
    Invalid("""
        import torch
        def cdw_ce(logits, w):
            probas = torch.softmax(logits, dim=1)
            return (-torch.log(1 - probas) * w).sum(dim=1)
        """, lines=(5,), messages=(log_message("torch.log", WORDS[COMPLEMENT], WHEN[COMPLEMENT]),)),
    # A softmax written by hand, then its log.
    Invalid("""
        import torch
        def softmax(x):
            e = torch.exp(x)
            return e / e.sum(1, keepdim=True)
        def cross_entropy(x, y):
            p = torch.exp(x) / torch.exp(x).sum(1, keepdim=True)
            return -torch.log(p.gather(1, y.view(-1, 1))).mean()
        """, lines=(8,), messages=(log_message("torch.log", WORDS[SOFTMAX], WHEN[SOFTMAX]),)),
    # A ReLU output: its log, and its normalisation by its own sum.
    Invalid("""
        import torch
        import torch.nn.functional as F
        def f(h):
            r = F.relu(h)
            return torch.log(r), r / r.sum(1, keepdim=True)
        """, lines=(6, 6), messages=(log_message("torch.log", WORDS[RELU], WHEN[RELU]), _RELU_SUM), options=_DIV),
    # The log of a count.
    Invalid("""
        import torch
        def log_count(pred, y):
            correct = (pred == y).float().sum()
            return torch.log(correct)
        """, lines=(5,), messages=(log_message("torch.log", WORDS[COUNT], WHEN[COUNT]),)),
]
