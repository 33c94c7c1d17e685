"""TL026's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl026_log_of_softmax import log_message
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # The fix: log_softmax, logsigmoid.
    """
        import torch.nn.functional as F
        def loss(logits, y, margin):
            return F.nll_loss(F.log_softmax(logits, dim=1), y) - F.logsigmoid(margin).mean()
        """,
    # An epsilon added before the log keeps it finite.
    """
        import torch
        import torch.nn.functional as F
        def loss(logits, y):
            return -(y * torch.log(F.softmax(logits, dim=1) + 1e-8)).sum()
        """,
    # Clamped away from 0.
    """
        import torch
        def entropy(logits):
            p = logits.softmax(dim=-1)
            return -(p * torch.log(p.clamp(min=1e-12))).sum(-1)
        """,
    # The log of something else: a model's output, a parameter, exp, a ratio.
    """
        import torch
        def f(model, x, probs, ratio):
            return torch.log(model(x)) + torch.log(probs) + torch.log(ratio / 2)
        """,
    # log_softmax then exp: probabilities from log-probabilities.
    """
        import torch
        def entropy(logits):
            logp = logits.log_softmax(-1)
            return -(logp.exp() * logp).sum(-1)
        """,
    # NumPy's and math's log are not torch.log.
    """
        import math
        import numpy as np
        import torch
        def f(x, p):
            probs = torch.softmax(x, dim=1).numpy()
            return np.log(probs), math.log(p)
        """,
    # A name bound to a softmax on one path and to something else on another.
    """
        import torch
        import torch.nn.functional as F
        def f(x, smooth):
            if smooth:
                p = F.softmax(x, dim=1)
            else:
                p = x.clamp(min=1e-6)
            return torch.log(p)
        """,
    # A softmax summed (a mixture of distributions): not one softmax's output.
    """
        import torch
        import torch.nn.functional as F
        def pointer(p_gen, x1, x2):
            return -torch.log(p_gen * F.softmax(x1, dim=1) + (1 - p_gen) * F.softmax(x2, dim=1))
        """,
    # Clamped in place before the log (C51's projection loss).
    """
        def c51_loss(current_model, state, action, proj_dist):
            dist = current_model.dist(state).softmax(-1)
            dist = dist.gather(1, action).squeeze(1)
            dist.data.clamp_(0.01, 0.99)
            return -(proj_dist * dist.log()).sum(1).mean()
        """,
    # A model whose last layer is not in this file.
    """
        import torch
        from nets import Discriminator
        D = Discriminator()
        def d_loss(real):
            return -torch.mean(torch.log(D(real)))
        """,
    # A method named log on something else (a logger).
    """
        import torch.nn.functional as F
        def step(logger, x):
            p = F.softmax(x, dim=1)
            logger.log("p", p)
        """,
]

INVALID: list[Invalid] = [
    # The page's example: NLL of the log of a softmax.
    Invalid("""
        import torch
        import torch.nn.functional as F

        def loss_fn(logits, target):
            return F.nll_loss(torch.log(F.softmax(logits, dim=1)), target)
        """, lines=(6,), messages=(log_message("torch.log", "softmax", "F.log_softmax(logits, dim=1)"),),
            fixed="""
        import torch
        import torch.nn.functional as F

        def loss_fn(logits, target):
            return F.nll_loss(F.log_softmax(logits, dim=1), target)
        """),
    # The tensor methods: .softmax(dim).log().
    Invalid("""
        def log_probs(logits):
            return logits.softmax(-1).log()
        """, lines=(3,), messages=(log_message(".log()", "softmax", "logits.log_softmax(-1)"),), fixed="""
        def log_probs(logits):
            return logits.log_softmax(-1)
        """),
    # torch.softmax, with dtype: log_softmax takes the same arguments.
    Invalid("""
        import torch
        def log_probs(logits):
            return torch.log(torch.softmax(logits, dim=-1, dtype=torch.float32))
        """, lines=(4,), messages=(log_message("torch.log", "softmax", "torch.log_softmax(logits, dim=-1, dtype=torch.float32)"),),
            fixed="""
        import torch
        def log_probs(logits):
            return torch.log_softmax(logits, dim=-1, dtype=torch.float32)
        """),
    # The log of a sigmoid: a reward model's pairwise loss.
    Invalid("""
        import torch
        def pairwise(chosen, rejected):
            return -torch.log(torch.sigmoid(chosen - rejected)).mean()
        """, lines=(4,), messages=(log_message("torch.log", "sigmoid", "torch.nn.functional.logsigmoid(chosen - rejected)"),),
            fixed="""
        import torch
        def pairwise(chosen, rejected):
            return -torch.nn.functional.logsigmoid(chosen - rejected).mean()
        """),
    # F.sigmoid -> F.logsigmoid.
    Invalid("""
        import torch
        import torch.nn.functional as F
        def bpr(pos, neg):
            return -torch.log(F.sigmoid(pos - neg)).sum()
        """, lines=(5,), messages=(log_message("torch.log", "sigmoid", "F.logsigmoid(pos - neg)"),), fixed="""
        import torch
        import torch.nn.functional as F
        def bpr(pos, neg):
            return -F.logsigmoid(pos - neg).sum()
        """),
    # Through a name (the probabilities may be used elsewhere): reported, no fix.
    Invalid("""
        import torch
        import torch.nn.functional as F
        def entropy(logits):
            p = F.softmax(logits, dim=-1)
            return -(p * torch.log(p)).sum(-1)
        """, lines=(6,), messages=(log_message("torch.log", "softmax"),)),
    # A Softmax layer the module holds, and one built on the spot.
    Invalid("""
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)
                self.softmax = nn.Softmax(dim=1)

            def forward(self, x):
                return torch.log(self.softmax(self.fc(x)))

        def other(h):
            return torch.log(nn.Softmax(dim=1)(h))
        """, lines=(11, 14), messages=(log_message("torch.log", "softmax"), log_message("torch.log", "softmax"))),
    # Through shape-only methods: still the softmax's values.
    Invalid("""
        import torch
        import torch.nn.functional as F
        def f(x):
            return torch.log(F.softmax(x, dim=1).view(-1, 1))
        """, lines=(5,), messages=(log_message("torch.log", "softmax"),)),
    # A discriminator whose nn.Sequential ends in a Sigmoid (a GAN's log D(x)).
    Invalid("""
        import torch
        import torch.nn as nn
        D = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
        def d_loss(real):
            prob_real = D(real)
            return -torch.mean(torch.log(prob_real))
        """, lines=(7,), messages=(log_message("torch.log", "sigmoid"),)),
    # A policy's helper returning a softmax, one action's probability picked with gather.
    Invalid("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class ActorCritic(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc_pi = nn.Linear(4, 2)

            def pi(self, x, softmax_dim=0):
                return F.softmax(self.fc_pi(x), dim=softmax_dim)

            def loss(self, s, a, advantage):
                pi_a = self.pi(s, softmax_dim=1).gather(1, a)
                return -(torch.log(pi_a) * advantage).mean()
        """, lines=(15,), messages=(log_message("torch.log", "softmax"),)),
    # A sigmoid method and .log(): no tensor method logsigmoid to write.
    Invalid("""
        def f(x):
            return x.sigmoid().log()
        """, lines=(3,), messages=(log_message(".log()", "sigmoid"),)),
]
