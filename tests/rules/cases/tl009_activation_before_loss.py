"""TL009's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl009_activation_before_loss import act_source, message, model_source
from torchlint.rule import Invalid, Valid


VALID = [
    # The fix: logits to the loss, probabilities for the metrics.
    """
        import torch.nn.functional as F
        def step(model, x, y):
            logits = model(x)
            probs = F.softmax(logits, dim=1)
            loss = F.cross_entropy(logits, y)
            return loss, probs.argmax(1)
        """,
    # log_softmax before cross_entropy is harmless; log_softmax before NLLLoss is right.
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        criterion = nn.NLLLoss()
        def step(h, y):
            a = F.cross_entropy(F.log_softmax(h, 1), y)
            return a + criterion(torch.log_softmax(h, dim=1), y)
        """,
    # Softmax on soft targets (distillation), KL divergence.
    """
        import torch.nn.functional as F
        def distill(student, teacher, T=2.0):
            soft = F.softmax(teacher / T, dim=1)
            ce = F.cross_entropy(student, soft)
            kl = F.kl_div(F.log_softmax(student / T, 1), F.softmax(teacher / T, 1), reduction="batchmean")
            return ce + kl
        """,
    # A model returning logits and probabilities; only the logits reach the loss.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, x):
                logits = self.fc(x)
                return logits, F.softmax(logits, dim=1)
        model = Net()
        criterion = nn.CrossEntropyLoss()
        def step(x, y):
            logits, probs = model(x)
            return criterion(logits, y)
        """,
    # A model that applies softmax only in eval mode.
    """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, x):
                out = self.fc(x)
                if self.training:
                    return out
                return out.softmax(dim=1)
        model = Net()
        loss = nn.CrossEntropyLoss()(model(x), y)
        """,
    # Sigmoid into BCELoss (probabilities), softmax into MSE.
    """
        import torch
        import torch.nn as nn
        bce = nn.BCELoss()
        def step(h, y, target):
            return bce(torch.sigmoid(h), y) + nn.functional.mse_loss(h.softmax(-1), target)
        """,
    # A criterion that may be another loss; a name rebound after the softmax.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        def step(h, y, smooth):
            criterion = LabelSmoothing() if smooth else nn.CrossEntropyLoss()
            p = F.softmax(h, 1)
            p = h
            return criterion(F.softmax(h, 1), y) + F.cross_entropy(p, y)
        """,
    # Not torch's softmax; a loss function of the project named like torch's.
    """
        import torch.nn.functional as F
        from mylib import softmax, cross_entropy
        def step(h, y):
            return F.cross_entropy(softmax(h), y) + cross_entropy(F.softmax(h, 1), y)
        """,
    # A Sequential ending in Softmax used for inference only; its logits trunk is trained.
    """
        import torch.nn as nn
        trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        predictor = nn.Sequential(trunk, nn.Softmax(dim=1))
        criterion = nn.CrossEntropyLoss()
        def step(x, y):
            return criterion(trunk(x), y), predictor(x)
        """,
    # Sigmoid into cross_entropy is another matter (not this rule's); softmax into BCEWithLogits too.
    """
        import torch
        import torch.nn.functional as F
        def step(h, y):
            return F.binary_cross_entropy_with_logits(h, y) + F.binary_cross_entropy(torch.sigmoid(h), y)
        """,
    # A helper returning the model for a mode: the call's literal rules out the softmax branch.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        def get_kernel(mode):
            net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
            if mode == "inference":
                return nn.Sequential(net, nn.Softmax(dim=1))
            return net
        net = get_kernel("training").to("cuda")
        loss = F.cross_entropy(net(x), y)
        """,
    # Softmax for a metric only; the model moved and rebound through .double().
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, x):
                return self.fc(x)
        model = Net().to("cuda")
        model = model.double()
        criterion = nn.CrossEntropyLoss()
        out = model(x)
        loss = criterion(out, y)
        acc = (torch.softmax(out, dim=1).argmax(1) == y).float().mean()
        """,
    # A layer attribute named softmax holding nn.LogSoftmax, the element of a tuple into NLLLoss.
    """
        import torch.nn as nn
        class DecoderRNN(nn.Module):
            def __init__(self, hidden_size, output_size):
                super().__init__()
                self.gru = nn.GRU(hidden_size, hidden_size)
                self.out = nn.Linear(hidden_size, output_size)
                self.softmax = nn.LogSoftmax(dim=1)
            def forward(self, input, hidden):
                output, hidden = self.gru(input, hidden)
                output = self.softmax(self.out(output[0]))
                return output, hidden
        decoder = DecoderRNN(256, 1000)
        criterion = nn.NLLLoss()
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss = criterion(decoder_output, target)
        """,
    # A test's loss is a fixture: what it computes does not matter to the test (skip-tests).
    Valid(
        """
            import torch.nn.functional as F
            def step(model, x, y):
                probs = F.softmax(model(x), dim=1)
                return F.cross_entropy(probs, y)
            """,
        path="tests/test_step.py",
    ),
]


INVALID = [
    # ... unless the option says tests are linted too.
    Invalid(
        """
            import torch.nn.functional as F
            def step(model, x, y):
                probs = F.softmax(model(x), dim=1)
                return F.cross_entropy(probs, y)
            """,
        lines=(5,),
        messages=(message("Softmax output", "F.cross_entropy", "cross_entropy", "softmax"),),
        path="tests/test_step.py",
        options={"skip-tests": False},
    ),
    Invalid(
        """
            import torch.nn.functional as F
            def step(model, x, y):
                probs = F.softmax(model(x), dim=1)
                return F.cross_entropy(probs, y)
            """,
        lines=(5,),
        messages=(message("Softmax output", "F.cross_entropy", "cross_entropy", "softmax"),),
    ),
    Invalid(
        """
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            def step(h, y):
                return criterion(torch.softmax(h, dim=-1), y)
            """,
        lines=(6,),
        messages=(message("Softmax output", "criterion", "cross_entropy", "softmax"),),
        fixed="""
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            def step(h, y):
                return criterion(h, y)
            """,
    ),
    Invalid(
        """
            import torch.nn as nn
            def step(h, y):
                loss_fn = nn.NLLLoss()
                return loss_fn(h.softmax(dim=1), y)
            """,
        lines=(5,),
        messages=(message("Softmax output", "loss_fn", "nll", "softmax"),),
        fixed="""
            import torch.nn as nn
            def step(h, y):
                loss_fn = nn.NLLLoss()
                return loss_fn(h.log_softmax(dim=1), y)
            """,
    ),
    Invalid(
        """
            import torch
            import torch.nn as nn
            def step(h, y):
                return nn.BCEWithLogitsLoss()(torch.sigmoid(h), y)
            """,
        lines=(5,),
        messages=(message("Sigmoid output", "nn.BCEWithLogitsLoss", "bce_logits", "sigmoid"),),
        fixed="""
            import torch
            import torch.nn as nn
            def step(h, y):
                return nn.BCEWithLogitsLoss()(h, y)
            """,
    ),
    # A model whose forward ends in softmax, trained with CrossEntropyLoss.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(16, 4)
                def forward(self, x):
                    return F.softmax(self.fc(x), dim=1)
            model = Classifier()
            criterion = nn.CrossEntropyLoss()
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
            """,
        lines=(14,),
        messages=(message(model_source("Classifier", "softmax"), "criterion", "cross_entropy", "softmax"),),
    ),
    # An nn.Sequential ending in nn.Softmax.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
            def step(x, y):
                return F.cross_entropy(net(x), y)
            """,
        lines=(6,),
        messages=(message("The output of an nn.Sequential ending in softmax", "F.cross_entropy", "cross_entropy", "softmax"),),
    ),
    # A Lightning module: self.criterion, a softmax layer attribute.
    Invalid(
        """
            import lightning as L
            import torch.nn as nn
            class Model(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.act = nn.Softmax(dim=-1)
                    self.criterion = nn.CrossEntropyLoss()
                def training_step(self, batch, idx):
                    x, y = batch
                    return self.criterion(self.act(self.fc(x)), y)
            """,
        lines=(12,),
        messages=(message("Softmax output", "self.criterion", "cross_entropy", "softmax"),),
    ),
    # A forward returning a sigmoid, trained with BCEWithLogitsLoss through self.model.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Tagger(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 5)
                def forward(self, x):
                    out = self.fc(x)
                    return torch.sigmoid(out)
            class Trainer:
                def __init__(self):
                    self.model = Tagger()
                    self.loss = nn.BCEWithLogitsLoss()
                def step(self, x, y):
                    return self.loss(self.model(x), y)
            """,
        lines=(16,),
        messages=(message(model_source("Tagger", "sigmoid"), "self.loss", "bce_logits", "sigmoid"),),
    ),
    # nll_loss on softmax, the input given by keyword.
    Invalid(
        """
            from torch.nn import functional as F
            def step(h, y):
                return F.nll_loss(input=F.softmax(h, 1), target=y)
            """,
        lines=(4,),
        messages=(message("Softmax output", "F.nll_loss", "nll", "softmax"),),
        fixed="""
            from torch.nn import functional as F
            def step(h, y):
                return F.nll_loss(input=F.log_softmax(h, 1), target=y)
            """,
    ),
    # Through a subclass that inherits the softmax forward.
    Invalid(
        """
            import torch.nn as nn
            class Base(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 3)
                    self.softmax = nn.Softmax(dim=1)
                def forward(self, x):
                    return self.softmax(self.fc(x))
            class Wide(Base):
                pass
            model = Wide()
            loss = nn.CrossEntropyLoss()(model(inputs), labels)
            """,
        lines=(13,),
        messages=(message(model_source("Wide", "softmax"), "nn.CrossEntropyLoss", "cross_entropy", "softmax"),),
    ),
    # The model moved with .to(device) and handed to a training function as a parameter.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 3)
                def forward(self, x):
                    return F.softmax(self.fc(x), dim=1)
            model = Net().to("cuda")
            criterion = nn.CrossEntropyLoss()
            def train(net, loader):
                for x, y in loader:
                    loss = criterion(net(x), y)
                    loss.backward()
            train(model, loader)
            """,
        lines=(14,),
        messages=(message(model_source("Net", "softmax"), 'criterion', "cross_entropy", "softmax"),),
    ),
    # An nn.Sequential filled with add_module, rebound through .double(); model.forward and loss.forward.
    Invalid(
        """
            import torch.nn as nn
            model = nn.Sequential()
            model.add_module("fc", nn.Linear(784, 10))
            model.add_module("softmax", nn.Softmax(dim=1))
            model = model.double()
            loss = nn.CrossEntropyLoss()
            cost = loss.forward(model.forward(x), y)
            """,
        lines=(8,),
        messages=(message(act_source("softmax", "sequential"), "loss", "cross_entropy", "softmax"),),
    ),
    # An nn.Sequential of a list built by appending, its last item a Softmax, into NLLLoss.
    Invalid(
        """
            import torch.nn as nn
            layers = [nn.Linear(784, 128), nn.ReLU()]
            layers.append(nn.Linear(128, 10))
            layers.append(nn.Softmax(dim=1))
            model = nn.Sequential(*layers).cuda()
            criterion = nn.NLLLoss()
            loss = criterion(model(images), labels)
            """,
        lines=(8,),
        messages=(message(act_source("softmax", "sequential"), "criterion", "nll", "softmax"),),
    ),
    # The probabilities element of what a helper returns.
    Invalid(
        """
            import torch
            import torch.nn.functional as F
            def predict(model, x):
                logits = model(x)
                return logits, torch.softmax(logits, dim=1)
            def step(model, x, y):
                logits, probs = predict(model, x)
                return F.cross_entropy(probs, y) + F.cross_entropy(logits, y)
            """,
        lines=(9,),
        messages=(message(act_source("softmax", "function predict"), "F.cross_entropy", "cross_entropy", "softmax"),),
    ),
    # A Lightning module's training_step calls self(x), its forward ends in sigmoid.
    Invalid(
        """
            import pytorch_lightning as pl
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            class Classifier(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                def forward(self, x):
                    return torch.sigmoid(self.fc(x))
                def training_step(self, batch, idx):
                    x, y = batch
                    return F.binary_cross_entropy_with_logits(self(x), y)
            """,
        lines=(14,),
        messages=(message(model_source("Classifier", "sigmoid"), "F.binary_cross_entropy_with_logits", "bce_logits", "sigmoid"),),
    ),
    # The model handed to a trainer class (Trainer(model) -> self.model).
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 3)
                def forward(self, x):
                    return F.softmax(self.fc(x), dim=1)
            class Trainer:
                def __init__(self, model, loader):
                    self.model = model
                    self.loader = loader
                    self.criterion = nn.CrossEntropyLoss()
                def fit(self):
                    for x, y in self.loader:
                        self.criterion(self.model(x), y).backward()
            Trainer(Net().cuda(), loader).fit()
            """,
        lines=(17,),
        messages=(message(model_source("Net", "softmax"), 'self.criterion', "cross_entropy", "softmax"),),
    ),
    # The same holding nn.Softmax: element 0 of what the forward returns is probabilities.
    Invalid(
        """
            import torch.nn as nn
            class DecoderRNN(nn.Module):
                def __init__(self, hidden_size, output_size):
                    super().__init__()
                    self.gru = nn.GRU(hidden_size, hidden_size)
                    self.out = nn.Linear(hidden_size, output_size)
                    self.softmax = nn.Softmax(dim=1)
                def forward(self, input, hidden):
                    output, hidden = self.gru(input, hidden)
                    output = self.softmax(self.out(output[0]))
                    return output, hidden
            decoder = DecoderRNN(256, 1000)
            criterion = nn.NLLLoss()
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
            loss = criterion(decoder_output, target)
            """,
        lines=(16,),
        messages=(message(model_source("DecoderRNN", "softmax", 0), "criterion", "nll", "softmax"),),
    ),
]
