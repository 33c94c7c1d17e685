"""TL021's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl021_optimizer_misses_parameters import rebuilt_message, replaced_message
from torchlint.rule import Invalid, Valid

_TRAIN = """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """

VALID: list[Valid | str] = [
    # The fix: the head replaced before the optimizer is built.
    """
        import torch
        import torch.nn as nn
        from torchvision import models
        model = models.resnet18(weights="DEFAULT")
        model.fc = nn.Linear(model.fc.in_features, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
        """ + _TRAIN,
    # The optimizer built again after the change.
    """
        import torch
        import torch.nn as nn
        from torchvision import models
        model = models.vgg16(weights="DEFAULT")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        model.classifier[6] = nn.Linear(4096, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        """ + _TRAIN,
    # The new layer given to the optimizer with add_param_group.
    """
        import torch
        import torch.nn as nn
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.head = nn.Linear(512, 10)
        optimizer.add_param_group({"params": model.head.parameters()})
        """ + _TRAIN,
    # A parameter-free layer: nothing new to train.
    """
        import torch
        import torch.nn as nn
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.fc = nn.Identity()
        """ + _TRAIN,
    # The model wrapped or moved after the optimizer: the same parameters.
    """
        import torch
        import torch.nn as nn
        model = Net()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model = nn.DataParallel(model)
        model = model.to("cuda")
        """ + _TRAIN,
    # The model rebuilt for testing after training: never stepped again.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
        model = Net()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        """ + _TRAIN + """
        model = Net()
        model.load_state_dict(torch.load("best.pt"))
        print(model(x_test))
        """,
    # A new model and a new optimizer each fold.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
        for fold in range(5):
            model = Net()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            model.fc = nn.Linear(4, 3)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        """ + _TRAIN,
    # The optimizer covers only the backbone; the head replaced afterwards was never in it.
    """
        import torch
        import torch.nn as nn
        optimizer = torch.optim.SGD(model.backbone.parameters(), lr=0.01)
        model.head = nn.Linear(512, 10)
        """ + _TRAIN,
    # A module's own __init__ sets its layers after building an optimizer of another object.
    """
        import torch
        import torch.nn as nn
        class Agent(nn.Module):
            def __init__(self, policy):
                super().__init__()
                self.optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
                self.value = nn.Linear(8, 1)
        """,
    # Another object changed after the optimizer: not the optimized model.
    """
        import torch
        import torch.nn as nn
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        teacher.fc = nn.Linear(512, 10)
        """ + _TRAIN,
]

INVALID: list[Invalid] = [
    # The page's example: transfer learning, the head replaced after the optimizer.
    Invalid("""
        import torch
        import torch.nn as nn
        from torchvision import models

        model = models.resnet18(weights="DEFAULT")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
        model.fc = nn.Linear(model.fc.in_features, 2)
        """ + _TRAIN, lines=(8,), messages=(replaced_message("model.fc", "optimizer", "model"),)),
    # A classifier slot of a Sequential, and the optimizer over a filter of the parameters.
    Invalid("""
        import torch
        import torch.nn as nn
        from torchvision import models
        model = models.vgg16(weights="DEFAULT")
        optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-4)
        model.classifier[6] = nn.Linear(4096, 10)
        """ + _TRAIN, lines=(7,), messages=(replaced_message("model.classifier[6]", "optimizer", "model"),)),
    # add_module after the optimizer.
    Invalid("""
        import torch
        import torch.nn as nn
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.add_module("head", nn.Linear(512, 10))
        """ + _TRAIN, lines=(5,), messages=(replaced_message("model.<added>", "optimizer", "model"),)),
    # A new nn.Parameter put on the model after the optimizer.
    Invalid("""
        import torch
        import torch.nn as nn
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.temperature = nn.Parameter(torch.ones(1))
        """ + _TRAIN, lines=(5,), messages=(replaced_message("model.temperature", "optimizer", "model"),)),
    # Parameter groups: the changed layer inside the covered part.
    Invalid("""
        import torch
        import torch.nn as nn
        optimizer = torch.optim.SGD([
            {"params": model.backbone.parameters(), "lr": 1e-4},
            {"params": model.head.parameters(), "lr": 1e-2},
        ], momentum=0.9)
        model.head.fc = nn.Linear(256, 10)
        """ + _TRAIN, lines=(8,), messages=(replaced_message("model.head.fc", "optimizer", "model.head"),)),
    # The model built again after the optimizer (a tutorial's model instantiated twice).
    Invalid("""
        import torch
        import torch.nn as nn
        class RNN(nn.Module):
            def __init__(self, n_in, n_out):
                super().__init__()
                self.i2o = nn.Linear(n_in, n_out)
        rnn = RNN(57, 18)
        optimizer = torch.optim.SGD(rnn.parameters(), lr=0.005)
        def train(x, y):
            optimizer.zero_grad()
            loss = criterion(rnn(x), y)
            loss.backward()
            optimizer.step()
        rnn = RNN(57, 18)
        for x, y in data:
            train(x, y)
        """, lines=(15,), messages=(rebuilt_message("rnn", "optimizer"),)),
    # Inside a function, the optimizer handed to the training function after the change.
    Invalid("""
        import torch
        import torch.nn as nn
        from torchvision import models
        def main():
            net = models.densenet121(weights="DEFAULT")
            opt = torch.optim.Adam(net.parameters(), lr=1e-4)
            net.classifier = nn.Linear(1024, 14)
            fit(net, opt, loader)
        """, lines=(8,), messages=(replaced_message("net.classifier", "opt", "net"),)),
    # The optimizer built by a factory of the file.
    Invalid("""
        import torch
        import torch.nn as nn
        def build_optimizer(net, lr):
            return torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
        optimizer = build_optimizer(model, 0.01)
        model.fc = nn.Linear(2048, 10)
        """ + _TRAIN, lines=(7,), messages=(replaced_message("model.fc", "optimizer", "model"),)),
    # setattr with a layer built on the line before.
    Invalid("""
        import torch
        import torch.nn as nn
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        head = nn.Linear(512, 10)
        setattr(model, "fc", head)
        """ + _TRAIN, lines=(6,), messages=(replaced_message("model.<added>", "optimizer", "model"),)),
]
