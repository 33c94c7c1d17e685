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
    # A forward returning features under a flag (off by default) and a tuple otherwise; the
    # class head's log-probabilities reach NLLLoss.
    """
    import torch.nn as nn
    import torch.nn.functional as F
    class Disc(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 196, 3)
            self.fc1 = nn.Linear(196, 1)
            self.fc10 = nn.Linear(196, 10)
        def forward(self, x, extract_features=0):
            x = F.leaky_relu(self.conv(x))
            if extract_features == 4:
                return F.max_pool2d(x, 8, 8).view(-1, 196)
            x = x.view(-1, 196)
            return self.fc1(x), F.log_softmax(self.fc10(x), dim=1)
    aD = Disc()
    criterion = nn.NLLLoss()
    def step(x, y):
        source, cls = aD(x)
        return criterion(cls, y) - source.mean()
    """,
    # ... and the flag's path chosen by default: the call leaving it gets log-probabilities.
    """
    import torch.nn as nn
    import torch.nn.functional as F
    class Disc(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(196, 1)
            self.fc10 = nn.Linear(196, 10)
        def forward(self, x, return_logits=False):
            if return_logits:
                return self.fc1(x), self.fc10(x)
            return self.fc1(x), F.log_softmax(self.fc10(x), dim=1)
    aD = Disc()
    criterion = nn.NLLLoss()
    def step(x, y):
        source, cls = aD(x)
        return criterion(cls, y)
    """,
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
    # An unknown model (an imported backbone, a timm model), and a forward ending in arithmetic
    # that makes log-probabilities of its logits: nothing known to be logits.
    """
        import torch
        import torch.nn as nn
        import timm
        from backbones import resnet18
        class Normalised(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)
            def forward(self, x):
                z = self.fc(x)
                return z - z.logsumexp(1, keepdim=True)
        backbone = resnet18()
        other = timm.create_model("resnet18", num_classes=3)
        normalised = Normalised()
        criterion = nn.NLLLoss()
        def step(x, y):
            return criterion(backbone(x), y) + criterion(other(x), y) + criterion(normalised(x), y)
        """,
    # A torchvision model whose head the code replaced with log-probabilities (the transfer
    # learning tutorials' NLLLoss), one whose head gives features, and one whose head is
    # replaced in a way not known here.
    """
        import torch.nn as nn
        from collections import OrderedDict
        from torchvision import models
        model = models.densenet121(pretrained=True)
        model.classifier = nn.Sequential(OrderedDict([("fc1", nn.Linear(1024, 500)), ("relu", nn.ReLU()),
                                                      ("fc2", nn.Linear(500, 102)), ("output", nn.LogSoftmax(dim=1))]))
        vgg = models.vgg16(pretrained=True)
        vgg.classifier[6] = nn.Sequential(nn.Linear(4096, 10), nn.LogSoftmax(dim=1))
        features = models.resnet50()
        features.fc = nn.Identity()
        custom = models.resnet18()
        custom.fc = make_head(512)
        extended = models.vgg16(pretrained=True)
        extended.classifier._modules["6"] = nn.Linear(4096, 2)
        extended.classifier._modules["7"] = nn.LogSoftmax(dim=1)
        criterion = nn.NLLLoss()
        for x, y in loader:
            loss = criterion(model(x), y) + criterion(vgg(x), y) + criterion(features(x), y) + criterion(custom(x), y)
            loss = loss + criterion(extended(x), y)
        """,
    # A decoder filling a buffer with log-probabilities; one filled with values that disagree.
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.out = nn.Linear(16, 100)
            def forward(self, x, steps):
                outputs = torch.zeros(steps, x.size(0), 100)
                mixed = torch.zeros(steps, x.size(0), 100)
                for t in range(steps):
                    outputs[t] = F.log_softmax(self.out(x), dim=1)
                    mixed[t] = self.out(x) if t else F.log_softmax(self.out(x), dim=1)
                return outputs, mixed
        decoder = Decoder()
        criterion = nn.NLLLoss()
        def step(x, y):
            log_probs, mixed = decoder(x, 5)
            return criterion(log_probs.view(-1, 100), y) + criterion(mixed.view(-1, 100), y)
        """,
    # One training function called with a log-softmax model and NLLLoss, and with a logits
    # model and CrossEntropyLoss: each caller's loss meets its own model.
    """
        import torch.nn as nn
        def train(model, criterion, loader):
            for x, y in loader:
                loss = criterion(model(x), y)
        train(nn.Sequential(nn.Linear(8, 3), nn.LogSoftmax(1)), nn.NLLLoss(), loader)
        train(nn.Sequential(nn.Linear(8, 3)), nn.CrossEntropyLoss(), loader)
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
    # A test's loss is a fixture: what it computes does not matter to the test (skip-tests;
    # skorch's test_doctor.py feeds a Linear's output to nll_loss).
    Valid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            conv = nn.Conv2d(16, 4, 3)
            def step(x, target):
                out = conv(x)
                return F.nll_loss(out, target)
            """,
        path="skorch/tests/test_doctor.py",
    ),
]

INVALID: list[Invalid] = [
    # NLLLoss on the class head of a forward that returns features early under a flag left at
    # its default (``extract_features=0``): the ordinary call returns the tuple of two Linears.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Disc(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 196, 3)
                    self.fc1 = nn.Linear(196, 1)
                    self.fc10 = nn.Linear(196, 10)
                def forward(self, x, extract_features=0):
                    x = F.leaky_relu(self.conv(x))
                    if extract_features == 4:
                        return F.max_pool2d(x, 8, 8).view(-1, 196)
                    x = x.view(-1, 196)
                    return self.fc1(x), self.fc10(x)
            aD = Disc()
            criterion = nn.NLLLoss()
            def step(x, y):
                source, cls = aD(x)
                return criterion(cls, y) - source.mean()
            """,
        lines=(20,),
        messages=(message(Source("cls", "example.Disc", element=1), LOGITS, "input", "criterion", "nll"),),
    ),
    # ... unless the option says tests are linted too.
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
        path="tests/test_segmentation.py",
        options={"skip-tests": False},
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
    # A torchvision model whose final layer the code replaced (transfer learning), handed to a
    # training function with NLLLoss; another call of it with CrossEntropyLoss.
    Invalid(
        """
            import torch.nn as nn
            from torchvision import models
            def train_model(model, criterion, loader):
                for x, y in loader:
                    loss = criterion(model(x), y)
            model = models.resnet18(pretrained=True)
            model.fc = nn.Linear(model.fc.in_features, 2)
            model = model.to("cuda")
            train_model(model, nn.NLLLoss(), loader)
            conv = models.resnet18(pretrained=True)
            conv.fc = nn.Linear(conv.fc.in_features, 2)
            train_model(conv, nn.CrossEntropyLoss(), loader)
            """,
        lines=(6,),
        messages=(message(Source("act", LOGITS, origin="head resnet18 fc"), LOGITS, "input", "criterion", "nll"),),
    ),
    # A torchvision classifier as it comes (its own Linear head), and its final layer called
    # directly after replacing it (a partly frozen forward written out).
    Invalid(
        """
            import torch
            import torch.nn as nn
            import torchvision
            net = torchvision.models.mobilenet_v2(num_classes=10)
            model = torchvision.models.resnet50()
            model.fc = nn.Linear(2048, 101)
            criterion = nn.NLLLoss()
            for x, y in loader:
                with torch.no_grad():
                    h = torch.flatten(model.avgpool(model.layer4(x)), 1)
                loss = criterion(net(x), y) + criterion(model.fc(h), y)
            """,
        lines=(12, 12),
        messages=(message(Source("act", LOGITS, origin="model mobilenet_v2"), LOGITS, "input", "criterion", "nll"),
                  message(Source("act", LOGITS, origin="layer Linear"), LOGITS, "input", "criterion", "nll")),
    ),
    # A seq2seq decoder filling a buffer with its logits step by step, packed before the loss.
    Invalid(
        """
            import torch
            import torch.nn as nn
            from torch.nn.utils.rnn import pack_padded_sequence
            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(512, 1000)
                def forward(self, h, lengths):
                    predictions = torch.zeros(h.size(0), max(lengths), 1000).to(h.device)
                    for t in range(max(lengths)):
                        predictions[:, t, :] = self.fc(h)
                    return predictions, lengths
            decoder = Decoder()
            criterion = nn.NLLLoss()
            for h, caps, lengths in loader:
                scores, lengths = decoder(h, lengths)
                scores, _ = pack_padded_sequence(scores, lengths, batch_first=True)
                targets, _ = pack_padded_sequence(caps, lengths, batch_first=True)
                loss = criterion(scores, targets)
            """,
        lines=(20,),
        messages=(message(Source("cls", "example.Decoder", 0), LOGITS, "input", "criterion", "nll"),),
    ),
    # A masked-LM head: the decoder's logits plus a bias parameter, and logits scaled by a temperature.
    Invalid(
        """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            class MLMHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.decoder = nn.Linear(64, 30000, bias=False)
                    self.bias = nn.Parameter(torch.zeros(30000))
                def forward(self, h):
                    return self.decoder(h) + self.bias
            head = MLMHead()
            fc = nn.Linear(64, 10)
            def step(h, y):
                return F.nll_loss(head(h).transpose(1, 2), y) + F.nll_loss(fc(h) / 0.5, y)
            """,
        lines=(15, 15),
        messages=(message(_net("MLMHead"), LOGITS, "input", "F.nll_loss", "nll"),
                  message(Source("act", LOGITS, origin="layer Linear"), LOGITS, "input", "F.nll_loss", "nll")),
        fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            class MLMHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.decoder = nn.Linear(64, 30000, bias=False)
                    self.bias = nn.Parameter(torch.zeros(30000))
                def forward(self, h):
                    return self.decoder(h) + self.bias
            head = MLMHead()
            fc = nn.Linear(64, 10)
            def step(h, y):
                return F.cross_entropy(head(h).transpose(1, 2), y) + F.cross_entropy(fc(h) / 0.5, y)
            """,
    ),
]
