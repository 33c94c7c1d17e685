"""TL018's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl018_legacy_autograd_api import index_message, volatile_message
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # The fix: .item().
    """
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        def step(model, x, y):
            loss = criterion(model(x), y)
            loss.backward()
            return loss.item()
        """,
    # A model's output is not 0-dim: a critic's value of shape [1] indexes fine.
    """
        def act(policy, critic, state):
            value = critic(state)
            return value.data[0], policy(state)
        """,
    # A dataset's .data is a tensor of samples.
    """
        from torchvision import datasets
        train = datasets.MNIST("data", download=True)
        first = train.data[0]
        """,
    # A per-sample loss (reduction="none") has a batch dimension.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        criterion = nn.CrossEntropyLoss(reduction="none")
        def worst(model, x, y):
            losses = criterion(model(x), y)
            other = F.mse_loss(model(x), y, reduction="none")
            return losses[0], other.data[0]
        """,
    # A reduction over a dimension keeps the others.
    """
        def first_row(x):
            return x.sum(dim=1)[0], x.mean(0)[0]
        """,
    # A name rebound to something else before the index.
    """
        import torch.nn.functional as F
        def step(model, x, y):
            loss = F.cross_entropy(model(x), y)
            loss = [loss]
            return loss[0]
        """,
    # volatile=False, and volatile on something that is not torch's Variable.
    """
        from torch.autograd import Variable
        from mylib import Buffer
        x = Variable(data, volatile=False)
        b = Buffer(size=4, volatile=True)
        """,
    # A list's sum, NumPy's mean.
    """
        import numpy as np
        totals = [1.0, 2.0]
        best = np.mean(totals)
        s = sum(totals)
        print(best, s, [3, 4][0])
        """,
    # Assigning into element 0 is not reading it.
    """
        import torch.nn.functional as F
        def step(x, y, history):
            loss = F.mse_loss(x, y)
            history[0] = loss.item()
        """,
]

INVALID: list[Invalid] = [
    # The page's example: a criterion's loss, .data[0].
    Invalid("""
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss()

        def train_step(model, optimizer, x, y):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.data[0]
        """, lines=(11,), messages=(index_message("loss.data[0]", "loss"),),
        fixed="""
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss()

        def train_step(model, optimizer, x, y):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.item()
        """),
    # A criterion passed as a parameter, named as one; logged with %.
    Invalid("""
        def train(model, loader, criterion, optimizer):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                print("loss %.4f" % loss.data[0])
        """, lines=(6,), messages=(index_message("loss.data[0]", "loss"),),
        fixed="""
        def train(model, loader, criterion, optimizer):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                print("loss %.4f" % loss.item())
        """),
    # A functional loss indexed without .data; a criterion on self.
    Invalid("""
        import torch.nn as nn
        import torch.nn.functional as F

        class Trainer:
            def __init__(self):
                self.criterion = nn.NLLLoss()

            def step(self, out, y, history):
                nll = self.criterion(out, y)
                mse = F.mse_loss(out, y)
                history.append(mse[0])
                return nll.data[0]
        """, lines=(12, 13), messages=(index_message("mse[0]", "mse"), index_message("nll.data[0]", "nll")),
        fixed="""
        import torch.nn as nn
        import torch.nn.functional as F

        class Trainer:
            def __init__(self):
                self.criterion = nn.NLLLoss()

            def step(self, out, y, history):
                nll = self.criterion(out, y)
                mse = F.mse_loss(out, y)
                history.append(mse.item())
                return nll.item()
        """),
    # A full reduction, and a loss accumulated with +=.
    Invalid("""
        import torch.nn.functional as F
        def epoch(model, batches):
            total = 0
            for x, y in batches:
                loss = F.cross_entropy(model(x), y)
                loss += 0.01 * model.weight.norm()
                total += loss.data[0]
                penalty = (model(x) ** 2).sum()
                print(penalty.data[0])
            return total
        """, lines=(8, 10), messages=(index_message("loss.data[0]", "loss"), index_message("penalty.data[0]", "penalty")),
        fixed="""
        import torch.nn.functional as F
        def epoch(model, batches):
            total = 0
            for x, y in batches:
                loss = F.cross_entropy(model(x), y)
                loss += 0.01 * model.weight.norm()
                total += loss.item()
                penalty = (model(x) ** 2).sum()
                print(penalty.item())
            return total
        """),
    # Variable(..., volatile=True) in an evaluation loop.
    Invalid("""
        from torch.autograd import Variable
        def evaluate(model, loader):
            for images, labels in loader:
                images = Variable(images, volatile=True)
                outputs = model(images)
        """, lines=(5,), messages=(volatile_message(),)),
    # torch.autograd.Variable spelled in full, volatile from a flag.
    Invalid("""
        import torch
        def encode(model, batch, evaluating):
            x = torch.autograd.Variable(batch, volatile=evaluating)
            return model(x)
        """, lines=(4,), messages=(volatile_message(),)),
    # A loss read through .detach(), then .data.
    Invalid("""
        import torch.nn as nn
        loss_fn = nn.MSELoss()
        def report(pred, target):
            loss = loss_fn(pred, target).detach()
            return {"loss": loss.data[0]}
        """, lines=(6,), messages=(index_message("loss.data[0]", "loss"),),
        fixed="""
        import torch.nn as nn
        loss_fn = nn.MSELoss()
        def report(pred, target):
            loss = loss_fn(pred, target).detach()
            return {"loss": loss.item()}
        """),
    # torch.sum of one tensor.
    Invalid("""
        import torch
        def total(errors):
            s = torch.sum(errors)
            return s[0]
        """, lines=(5,), messages=(index_message("s[0]", "s"),),
        fixed="""
        import torch
        def total(errors):
            s = torch.sum(errors)
            return s.item()
        """),
]
