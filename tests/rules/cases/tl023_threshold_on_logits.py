"""TL023's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl023_threshold_on_logits import message, model_why, trained_why
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # Sigmoid first, or the logits compared with 0.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 1)
            def forward(self, x):
                return self.fc(x)
        model = Net()
        def predict(x):
            out = model(x)
            return (torch.sigmoid(out) > 0.5), out > 0, torch.round(torch.sigmoid(out)), out.sigmoid().round()
        """,
    # A model whose forward ends in sigmoid, trained with BCELoss: probabilities.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 1)
            def forward(self, x):
                return torch.sigmoid(self.fc(x))
        model = Net()
        criterion = nn.BCELoss()
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            acc = ((out > 0.5).float() == y).float().mean()
        """,
    # A regression head trained with MSE on 0/1 targets: its 0.5 threshold is right.
    """
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        criterion = nn.MSELoss()
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            correct = ((out > 0.5).float() == y).sum()
        """,
    # An unknown model (a library backbone), no loss in sight.
    """
        import torch
        import torchvision
        model = torchvision.models.resnet18(num_classes=1)
        def predict(x):
            return torch.round(model(x)), model(x) > 0.5
        """,
    # Rounding that is no decision on a model's output: a metric, a learning-rate value.
    """
        import torch
        def report(correct, total, lr):
            return torch.round(torch.tensor(correct / total) * 100), round(lr, 4), (correct / total) > 0.5
        """,
    # A dropout probability, a mixup coefficient: thresholds on numbers, not on outputs.
    """
        import random
        import torch.nn as nn
        fc = nn.Linear(4, 1)
        def step(x):
            if random.random() > 0.5:
                x = x.flip(0)
            return fc(x)
        """,
    # Trained with BCEWithLogitsLoss, predictions through sigmoid (a Lightning module).
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Lit(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(16, 1)
            def forward(self, x):
                return self.head(x)
            def training_step(self, batch, i):
                x, y = batch
                return F.binary_cross_entropy_with_logits(self(x), y)
            def validation_step(self, batch, i):
                x, y = batch
                probs = torch.sigmoid(self(x))
                return ((probs >= 0.5) == y).float().mean()
        """,
    # Softmax probabilities of a CrossEntropy-trained model compared with 0.5.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        net = nn.Linear(8, 3)
        criterion = nn.CrossEntropyLoss()
        for x, y in loader:
            logits = net(x)
            loss = criterion(logits, y)
            confident = F.softmax(logits, dim=1).max(1)[0] > 0.5
        """,
    # A model returning (logits, probabilities): the logits to the loss, the probabilities thresholded.
    """
        import torch.nn as nn
        from detectors import TwoHeads
        model = TwoHeads()
        criterion = nn.BCEWithLogitsLoss()
        for x, y in loader:
            logits, probs = model(x)
            loss = criterion(logits, y)
            preds = probs > 0.5
            out = model(x)
            also = criterion(out[0], y) + (out[1] > 0.5).sum()
        """,
    # Another model object than the one trained with logits.
    """
        import torch.nn as nn
        import torchvision
        clf = torchvision.models.resnet18(num_classes=1)
        scorer = torchvision.models.resnet18(num_classes=1)
        criterion = nn.BCEWithLogitsLoss()
        for x, y in loader:
            loss = criterion(clf(x), y)
        keep = scorer(x) > 0.5
        """,
    # A test's decision on a model's output is a fixture (skip-tests).
    Valid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)
                def forward(self, x):
                    return self.fc(x)
            model = Net()
            criterion = nn.BCEWithLogitsLoss()
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
                acc = ((out > 0.5).float() == y).float().mean()
            """,
        path="tests/test_accuracy.py",
    ),
]

INVALID: list[Invalid] = [
    # The textbook case: a Linear-ending model trained with BCEWithLogitsLoss, accuracy at 0.5.
    Invalid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)
                def forward(self, x):
                    return self.fc(x)
            model = Net()
            criterion = nn.BCEWithLogitsLoss()
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
                acc = ((out > 0.5).float() == y).float().mean()
            """,
        lines=(14,),
        messages=(message("> 0.5", model_why("Net")),),
        fixed="""
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)
                def forward(self, x):
                    return self.fc(x)
            model = Net()
            criterion = nn.BCEWithLogitsLoss()
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
                acc = ((out > 0.0).float() == y).float().mean()
            """,
    ),
    # An unknown model trained with BCEWithLogitsLoss; torch.round on its output in a helper.
    Invalid(
        """
            import torch
            import torchvision
            model = torchvision.models.resnet18(num_classes=1)
            criterion = torch.nn.BCEWithLogitsLoss()
            def binary_acc(y_pred, y):
                tag = torch.round(y_pred)
                return (tag == y).sum() / len(y)
            def train(loader):
                for x, y in loader:
                    y_pred = model(x)
                    loss = criterion(y_pred, y.unsqueeze(1))
                    acc = binary_acc(y_pred, y.unsqueeze(1))
            """,
        lines=(7,),
        messages=(message("torch.round", trained_why("criterion")),),
        fixed="""
            import torch
            import torchvision
            model = torchvision.models.resnet18(num_classes=1)
            criterion = torch.nn.BCEWithLogitsLoss()
            def binary_acc(y_pred, y):
                tag = torch.round(torch.sigmoid(y_pred))
                return (tag == y).sum() / len(y)
            def train(loader):
                for x, y in loader:
                    y_pred = model(x)
                    loss = criterion(y_pred, y.unsqueeze(1))
                    acc = binary_acc(y_pred, y.unsqueeze(1))
            """,
    ),
    # The same model evaluated elsewhere, as numpy, with >=.
    Invalid(
        """
            import torch.nn as nn
            import torchvision
            model = torchvision.models.resnet18(num_classes=1)
            criterion = nn.BCEWithLogitsLoss()
            for x, y in loader:
                loss = criterion(model(x), y)
            def evaluate(x):
                return model(x).detach().cpu().numpy() >= 0.5
            """,
        lines=(9,),
        messages=(message(">= 0.5", trained_why("criterion")),),
        fixed="""
            import torch.nn as nn
            import torchvision
            model = torchvision.models.resnet18(num_classes=1)
            criterion = nn.BCEWithLogitsLoss()
            for x, y in loader:
                loss = criterion(model(x), y)
            def evaluate(x):
                return model(x).detach().cpu().numpy() >= 0.0
            """,
    ),
    # A discriminator kept as self.<attr>, trained with BCEWithLogitsLoss, judged at 0.5.
    Invalid(
        """
            import numpy as np
            import torch.nn as nn
            class Trainer:
                def __init__(self, disc):
                    self.disc = disc
                    self.bce = nn.BCEWithLogitsLoss()
                def step(self, x, labels):
                    return self.bce(self.disc(x), labels)
                def rates(self, x):
                    scores = self.disc(x).detach().cpu().numpy()
                    return np.where(scores > 0.5, 1, 0).sum()
            """,
        lines=(12,),
        messages=(message("> 0.5", trained_why("self.bce")),),
        fixed="""
            import numpy as np
            import torch.nn as nn
            class Trainer:
                def __init__(self, disc):
                    self.disc = disc
                    self.bce = nn.BCEWithLogitsLoss()
                def step(self, x, labels):
                    return self.bce(self.disc(x), labels)
                def rates(self, x):
                    scores = self.disc(x).detach().cpu().numpy()
                    return np.where(scores > 0.0, 1, 0).sum()
            """,
    ),
    # A Sequential ending in Linear, no loss in the file, `.round()` (no fix: it may be numpy).
    Invalid(
        """
            import torch.nn as nn
            net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
            def predict(x):
                return net(x).round()
            """,
        lines=(5,),
        messages=(message(".round()", "the output of an nn.Sequential ending in a Linear/conv layer"),),
    ),
    # A Lightning-style module: self(x) trained with binary_cross_entropy_with_logits.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Lit(nn.Module):
                def __init__(self, backbone):
                    super().__init__()
                    self.backbone = backbone
                def forward(self, x):
                    return self.backbone(x)
                def training_step(self, batch, i):
                    x, y = batch
                    return F.binary_cross_entropy_with_logits(self(x), y)
                def validation_step(self, batch, i):
                    x, y = batch
                    preds = self(x) > 0.5
                    return (preds == y).float().mean()
            """,
        lines=(15,),
        messages=(message("> 0.5", trained_why("F.binary_cross_entropy_with_logits")),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Lit(nn.Module):
                def __init__(self, backbone):
                    super().__init__()
                    self.backbone = backbone
                def forward(self, x):
                    return self.backbone(x)
                def training_step(self, batch, i):
                    x, y = batch
                    return F.binary_cross_entropy_with_logits(self(x), y)
                def validation_step(self, batch, i):
                    x, y = batch
                    preds = self(x) > 0.0
                    return (preds == y).float().mean()
            """,
    ),
    # A threshold other than 0.5, written the other way round: reported, no fix.
    Invalid(
        """
            import torch.nn as nn
            head = nn.Linear(16, 3)
            criterion = nn.BCEWithLogitsLoss()
            def step(h, y):
                logits = head(h)
                loss = criterion(logits, y)
                labels = 0.3 < logits
                return loss, labels
            """,
        lines=(8,),
        messages=(message("0.3 <", "the raw output of an nn.Linear layer"),),
    ),
    # The model handed to an evaluation function.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 1, 1)
                def forward(self, x):
                    return self.conv(x)
            def evaluate(model, loader):
                for x, mask in loader:
                    pred = torch.round(model(x))
            evaluate(Net(), loader)
            """,
        lines=(12,),
        messages=(message("torch.round", model_why("Net")),),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 1, 1)
                def forward(self, x):
                    return self.conv(x)
            def evaluate(model, loader):
                for x, mask in loader:
                    pred = torch.round(torch.sigmoid(model(x)))
            evaluate(Net(), loader)
            """,
    ),
]
