"""TL022's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl022_loss_input_mismatch import message
from torchlint.rule import Invalid, Valid
from torchlint.semantic.activations import INDICES, INDICES_FLOAT, LOGITS, ONE_HOT, ONE_HOT_FLOAT, Source

_LAYER = Source("act", LOGITS, origin="layer Linear")
_CONV = Source("act", LOGITS, origin="layer Conv2d")
_SEQ = Source("act", LOGITS, origin="sequential")


def _net(name: str) -> Source:
    return Source("cls", f"example.{name}")


VALID: list[Valid | str] = [
    # log_softmax before NLLLoss (in the forward or at the call), cross_entropy on logits.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)
            def forward(self, x):
                return F.log_softmax(self.fc(x), dim=1)
        model = Net()
        criterion = nn.NLLLoss()
        def step(x, y):
            logits = model.fc(x)
            return criterion(model(x), y) + F.nll_loss(F.log_softmax(logits, 1), y) + F.cross_entropy(logits, y)
        """,
    # Sigmoid before BCELoss; logits to BCEWithLogitsLoss; a Sequential ending in nn.Sigmoid.
    """
        import torch
        import torch.nn as nn
        head = nn.Linear(16, 1)
        probs = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())
        bce, bce_logits = nn.BCELoss(), nn.BCEWithLogitsLoss()
        def step(h, y):
            return bce(torch.sigmoid(head(h)), y) + bce_logits(head(h), y) + bce(probs(h), y)
        """,
    # A float one-hot target is a valid probability target for CrossEntropyLoss (torch >= 1.10),
    # and its argmax gives the class indices.
    """
        import torch.nn.functional as F
        def step(logits, labels):
            onehot = F.one_hot(labels, 10)
            return F.cross_entropy(logits, onehot.float()) + F.cross_entropy(logits, onehot.argmax(1))
        """,
    # One-hot targets for MSE (a regression on the one-hot code) and BCEWithLogits (multi-label).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        def step(scores, labels):
            target = F.one_hot(labels, 5).float()
            return nn.MSELoss()(scores.softmax(1), target) + F.binary_cross_entropy_with_logits(scores, target)
        """,
    # Class indices as a CrossEntropyLoss target (pseudo-labels) are what it takes.
    """
        import torch
        import torch.nn.functional as F
        def pseudo_label_loss(student_logits, teacher_logits):
            _, pseudo = torch.max(teacher_logits, dim=1)
            hard = teacher_logits.argmax(1)
            return F.cross_entropy(student_logits, pseudo) + F.nll_loss(student_logits.log_softmax(1), hard)
        """,
    # argmax for a metric beside the loss; float labels to BCELoss.
    """
        import torch
        import torch.nn as nn
        criterion = nn.BCELoss()
        def step(model, x, y):
            probs = torch.sigmoid(model(x))
            loss = criterion(probs, y.float())
            acc = (probs.argmax(1) == y).float().mean()
            return loss, acc
        """,
    # A class index cast to float as a BCE target: a 0/1 label.
    """
        import torch
        import torch.nn.functional as F
        def step(logits, onehot):
            return F.binary_cross_entropy_with_logits(logits[:, 1], onehot.argmax(1).float())
        """,
    # An unknown model, a model whose forward ends in an activation the loss accepts, and a
    # forward ending in arithmetic: nothing known to be logits.
    """
        import torch
        import torch.nn as nn
        import torchvision
        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)
            def forward(self, x):
                return self.fc(x) / 2.0
        backbone = torchvision.models.resnet18()
        scaled = Scaled()
        criterion = nn.NLLLoss()
        def step(x, y):
            return criterion(backbone(x), y) + criterion(scaled(x), y)
        """,
    # Logits to MSE (a regression head) and to L1.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        reg = nn.Linear(16, 1)
        def step(h, y):
            return F.mse_loss(reg(h), y) + nn.L1Loss()(reg(h), y)
        """,
    # A name bound to logits on one path and to log-probabilities on another: not known.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        fc = nn.Linear(8, 3)
        def step(x, y, log_probs):
            out = fc(x)
            if log_probs:
                out = F.log_softmax(out, 1)
            return F.nll_loss(out, y)
        """,
]

INVALID: list[Invalid] = [
    # The textbook case: a classifier ending in Linear trained with NLLLoss.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(784, 128)
                    self.fc2 = nn.Linear(128, 10)
                def forward(self, x):
                    x = F.relu(self.fc1(x))
                    return self.fc2(x)
            model = Net()
            criterion = nn.NLLLoss()
            def train_step(x, y):
                return criterion(model(x), y)
            """,
        lines=(15,),
        messages=(message(_net("Net"), LOGITS, "input", "criterion", "nll"),),
    ),
    # F.nll_loss on a conv layer's output (segmentation), through a name.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            conv = nn.Conv2d(16, 4, 3)
            def step(x, target):
                out = conv(x)
                return F.nll_loss(out, target)
            """,
        lines=(7,),
        messages=(message(_CONV, LOGITS, "input", "F.nll_loss", "nll"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            conv = nn.Conv2d(16, 4, 3)
            def step(x, target):
                out = conv(x)
                return F.cross_entropy(out, target)
            """,
    ),
    # BCELoss on an nn.Sequential ending in Linear.
    Invalid(
        """
            import torch.nn as nn
            net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
            criterion = nn.BCELoss()
            for x, y in loader:
                loss = criterion(net(x).squeeze(1), y)
            """,
        lines=(6,),
        messages=(message(_SEQ, LOGITS, "input", "criterion", "bce"),),
    ),
    # F.binary_cross_entropy on a head kept as self.<attr>, in a Lightning-style step.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(32, 1)
                def training_step(self, batch):
                    h, y = batch
                    return F.binary_cross_entropy(self.head(h), y)
            """,
        lines=(10,),
        messages=(message(_LAYER, LOGITS, "input", "F.binary_cross_entropy", "bce"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(32, 1)
                def training_step(self, batch):
                    h, y = batch
                    return F.binary_cross_entropy_with_logits(self.head(h), y)
            """,
    ),
    # An integer one-hot target to CrossEntropyLoss, a one-hot target (any dtype) to NLLLoss.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            criterion = nn.CrossEntropyLoss()
            def step(logits, labels):
                target = F.one_hot(labels, num_classes=10)
                a = criterion(logits, target)
                b = F.nll_loss(logits.log_softmax(1), target.float())
                return a + b
            """,
        lines=(7, 8),
        messages=(message(Source("act", ONE_HOT), ONE_HOT, "target", "criterion", "cross_entropy"),
                  message(Source("act", ONE_HOT_FLOAT), ONE_HOT_FLOAT, "target", "F.nll_loss", "nll")),
    ),
    # argmax as the input of a regression loss: no gradient.
    Invalid(
        """
            import torch
            import torch.nn as nn
            criterion = nn.MSELoss()
            def step(model, x, y):
                pred = torch.argmax(model(x), dim=1)
                return criterion(pred.float(), y.float())
            """,
        lines=(7,),
        messages=(message(Source("act", INDICES_FLOAT), INDICES_FLOAT, "input", "criterion", "regression"),),
    ),
    # The indices torch.max returns, into BCEWithLogitsLoss.
    Invalid(
        """
            import torch
            import torch.nn.functional as F
            def step(start_logits, labels):
                _, start = torch.max(start_logits, 1)
                return F.binary_cross_entropy_with_logits(start.float(), labels)
            """,
        lines=(6,),
        messages=(message(Source("act", INDICES_FLOAT), INDICES_FLOAT, "input", "F.binary_cross_entropy_with_logits",
                          "bce_logits"),),
    ),
    # Integer labels as the target of BCELoss / BCEWithLogitsLoss.
    Invalid(
        """
            import torch
            import torch.nn as nn
            bce = nn.BCEWithLogitsLoss()
            def step(logits, y):
                return bce(logits.squeeze(1), y.long())
            """,
        lines=(6,),
        messages=(message(Source("act", INDICES), INDICES, "target", "bce", "bce_logits"),),
    ),
    # The model handed to a training function; the criterion a parameter too.
    Invalid(
        """
            import torch.nn as nn
            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.out = nn.Linear(64, 5)
                def forward(self, x):
                    return self.out(x).view(-1, 5)
            def train(model, loader, criterion):
                for x, y in loader:
                    loss = criterion(model(x), y)
            train(Classifier(), loader, nn.NLLLoss())
            """,
        lines=(11,),
        messages=(message(_net("Classifier"), LOGITS, "input", "criterion", "nll"),),
    ),
]
