"""TL011's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl011_model_mode import _MAY, evaluated_in_training_mode, left_in_eval_mode
from torchlint.rule import Invalid, Valid


VALID = [
    # The fix: eval() before evaluating, train() at the start of each epoch.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def validate(model, val_loader):
            model.eval()
            with torch.no_grad():
                return sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)

        for epoch in range(10):
            model.train()
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
        """,
    # train() called inside the training helper, eval() inside the evaluation one.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def train_one_epoch(model, loader):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()

        def evaluate(model, val_loader):
            model.eval()
            with torch.no_grad():
                for x, y in val_loader:
                    model(x)

        for epoch in range(10):
            train_one_epoch(model, train_loader)
            evaluate(model, val_loader)
        """,
    # Evaluation on a freshly built copy: the trained model keeps its mode.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        import copy
        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            eval_model = copy.deepcopy(model)
            eval_model.eval()
            with torch.no_grad():
                for x, y in val_loader:
                    eval_model(x)
        """,
    # Monte-Carlo dropout on purpose: training mode chosen for sampling.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def mc_predict(model, test_loader, samples=20):
            model.train()
            with torch.no_grad():
                return [torch.stack([model(x) for _ in range(samples)]) for x, _ in test_loader]

        mc_predict(model, test_loader)
        """,
    # Monte-Carlo dropout through a helper named for it.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def enable_dropout(m):
            for layer in m.modules():
                if isinstance(layer, nn.Dropout):
                    layer.train()

        def predict(model, test_loader):
            enable_dropout(model)
            with torch.no_grad():
                for x, _ in test_loader:
                    model(x)

        predict(model, test_loader)
        """,
    # Lightning sets the modes around its hooks.
    """
        import lightning.pytorch as pl
        import torch.nn as nn

        class Lit(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1))
            def on_validation_epoch_end(self):
                with torch.no_grad():
                    for x, y in self.val_loader:
                        self.model(x)
        """,
    # The Hugging Face Trainer and ignite's evaluators set the modes; no loop of the user's.
    """
        from transformers import Trainer
        from ignite.engine import create_supervised_evaluator
        trainer = Trainer(model=model, train_dataset=train_set, eval_dataset=val_set)
        trainer.train()
        trainer.evaluate()
        evaluator = create_supervised_evaluator(model, metrics=metrics)
        evaluator.run(val_loader)
        """,
    # A model with neither dropout nor batch norm: the mode changes nothing.
    """
        import torch
        import torch.nn as nn

        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
            def forward(self, x):
                return self.fc(torch.relu(x))

        model = Plain()
        with torch.no_grad():
            for x, y in test_loader:
                model(x)
        """,
    # The caller switches to eval mode before calling the evaluation function.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def evaluate(model, test_loader):
            with torch.no_grad():
                return [model(x) for x, _ in test_loader]

        def main():
            model.eval()
            evaluate(model, test_loader)
        """,
    # An evaluation function nobody in the file calls, its model a parameter: the caller elsewhere chooses.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        def evaluate(model, test_loader):
            with torch.no_grad():
                for x, _ in test_loader:
                    model(x)
        """,
    # train(False) and a helper named for the mode count as eval().
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def set_bn_eval(m):
            if isinstance(m, nn.BatchNorm2d):
                m.eval()

        def evaluate(model, val_loader):
            model.train(False)
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)

        def features(model, val_loader):
            model.apply(set_bn_eval)
            for x, _ in val_loader:
                model(x)

        evaluate(model, val_loader)
        features(model, val_loader)
        """,
    # The validation helper switches back to training mode when done.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def validate(model, val_loader):
            model.eval()
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)
            model.train()

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
        """,
    # An EMA copy evaluated in eval mode: not the model the epoch trains.
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        ema_model = Net()

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            ema_model.eval()
        """,
    # A step loop (no epochs) that evaluates every N steps and switches back before training (nanoGPT style).
    """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        for step in range(max_steps):
            if step % 100 == 0:
                model.eval()
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)
            model.train()
            x, y = next(train_iter)
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        """,
    # Test files are skipped.
    Valid("""
        model = torch.load("m.pt", weights_only=False)
        for x, y in test_loader:
            model(x)
        """, path="tests/test_model.py"),
    # A mode helper used as a `with` item (imported: a context manager restores the mode on exit).
    """
        import torch
        from utils.modes import eval_mode

        class Trainer:
            def __init__(self, model, optimizer, train_loader, val_loader):
                self.model, self.optimizer = model, optimizer
                self.train_loader, self.val_loader = train_loader, val_loader

            def validate(self):
                with torch.no_grad(), eval_mode(self.model):
                    for x, y in self.val_loader:
                        self.model(x)

            def fit(self, epochs):
                self.model.train()
                for _ in range(epochs):
                    for x, y in self.train_loader:
                        self.optimizer.zero_grad()
                        torch.nn.functional.mse_loss(self.model(x), y).backward()
                        self.optimizer.step()
                    self.validate()
        """,
    # Block-by-block training (brevitas' learned rounding): each iteration trains one block
    # and switches that block to eval, directly or in a helper given the loop's target;
    # the next iteration trains another block.
    """
        import torch

        def fill_cache(block, loader):
            block.eval()
            with torch.no_grad():
                return [block(x) for x in loader]

        def calibrate(blocks, loader):
            for block in blocks:
                opt = torch.optim.Adam(block.parameters(), lr=1e-3)
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(block(x), y).backward()
                    opt.step()
                loader = fill_cache(block, loader)

        def calibrate_inline(blocks, loader):
            for block in blocks:
                opt = torch.optim.SGD(block.parameters(), lr=0.1)
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(block(x), y).backward()
                    opt.step()
                block.eval()
        """,
    # A model built anew each iteration (`Cls(...).to(device)`), fitted in closed form and used
    # frozen; the optimizer trains another model.
    """
        import torch
        from dynamics import Ensemble, Planner

        def run(cfg, buffer):
            planner = Planner(cfg.horizon)
            opt = torch.optim.Adam(planner.parameters(), lr=1e-3)
            for it in range(cfg.iterations):
                dynamics = Ensemble(cfg.members).to(cfg.device)
                dynamics.fit_closed_form(buffer)
                dynamics.eval()
                for step in range(cfg.steps):
                    opt.zero_grad()
                    dynamics(planner(buffer.sample())).mean().backward()
                    opt.step()
        """,
]


INVALID = [
    # The same helper called as a plain statement: nothing restores the mode.
    Invalid(
        """
            import torch
            from utils.modes import eval_mode

            class Trainer:
                def __init__(self, model, optimizer, train_loader, val_loader):
                    self.model, self.optimizer = model, optimizer
                    self.train_loader, self.val_loader = train_loader, val_loader

                def validate(self):
                    eval_mode(self.model)
                    with torch.no_grad():
                        for x, y in self.val_loader:
                            self.model(x)

                def fit(self, epochs):
                    self.model.train()
                    for _ in range(epochs):
                        for x, y in self.train_loader:
                            self.optimizer.zero_grad()
                            torch.nn.functional.mse_loss(self.model(x), y).backward()
                            self.optimizer.step()
                        self.validate()
            """,
        fixed="""
            import torch
            from utils.modes import eval_mode

            class Trainer:
                def __init__(self, model, optimizer, train_loader, val_loader):
                    self.model, self.optimizer = model, optimizer
                    self.train_loader, self.val_loader = train_loader, val_loader

                def validate(self):
                    eval_mode(self.model)
                    with torch.no_grad():
                        for x, y in self.val_loader:
                            self.model(x)

                def fit(self, epochs):
                    self.model.train()
                    for _ in range(epochs):
                        self.model.train()
                        for x, y in self.train_loader:
                            self.optimizer.zero_grad()
                            torch.nn.functional.mse_loss(self.model(x), y).backward()
                            self.optimizer.step()
                        self.validate()
            """,
        lines=(11,),
        messages=('`eval_mode(self.model)` runs inside the training loop but nothing calls `self.model.train()` '
                  'before the next training step: from then on any dropout or batch norm it has stay in eval mode '
                  '(no dropout, frozen statistics); call `self.model.train()` before training resumes',),
    ),
    # The model kept across iterations (only moved): the one the loop trains next time.
    Invalid(
        """
            import torch
            from dynamics import Ensemble, Planner

            def run(cfg, buffer):
                planner = Planner(cfg.horizon)
                opt = torch.optim.Adam(planner.parameters(), lr=1e-3)
                dynamics = Ensemble(cfg.members)
                for it in range(cfg.iterations):
                    dynamics = dynamics.to(cfg.device)
                    dynamics.fit_closed_form(buffer)
                    dynamics.eval()
                    for step in range(cfg.steps):
                        opt.zero_grad()
                        dynamics(planner(buffer.sample())).mean().backward()
                        opt.step()
            """,
        lines=(12,),
        messages=('`dynamics.eval()` runs inside the training loop but nothing calls `dynamics.train()` before the '
                  'next training step: from then on any dropout or batch norm it has stay in eval mode (no '
                  'dropout, frozen statistics); call `dynamics.train()` before training resumes',),
    ),
    # Evaluation without eval(): the dropout keeps dropping.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def validate(model, val_loader):
            correct = 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum().item()
            return correct

        model.train()

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
        """,
        lines=(20,),
        messages=(evaluated_in_training_mode("model", "val_loader"),),
    ),
    # A test script: a freshly built model is in training mode.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        model.load_state_dict(torch.load("best.pt"))
        with torch.no_grad():
            for x, y in test_loader:
                print(model(x).argmax(1))
        """,
        lines=(16,),
        messages=(evaluated_in_training_mode("model", "test_loader"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            model = Net()
            model.load_state_dict(torch.load("best.pt"))
            with torch.no_grad():
                model.eval()
                for x, y in test_loader:
                    print(model(x).argmax(1))
            """,
    ),
    # The class is unknown (a whole pickled model): it may have dropout or batch norm.
    Invalid(
        """
        import torch
        model = torch.load("model.pt", weights_only=False)
        with torch.no_grad():
            for x, y in test_loader:
                print(model(x))
        """,
        lines=(5,),
        messages=(evaluated_in_training_mode("model", "test_loader", _MAY),),
        fixed="""
            import torch
            model = torch.load("model.pt", weights_only=False)
            with torch.no_grad():
                model.eval()
                for x, y in test_loader:
                    print(model(x))
            """,
    ),
    # A torchvision model holds batch norm.
    Invalid(
        """
        import torch
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
        model.load_state_dict(torch.load("resnet.pt"))
        with torch.no_grad():
            for images, labels in val_loader:
                model(images)
        """,
        lines=(7,),
        messages=(evaluated_in_training_mode("model", "val_loader"),),
        fixed="""
            import torch
            import torchvision
            model = torchvision.models.resnet18(num_classes=10)
            model.load_state_dict(torch.load("resnet.pt"))
            with torch.no_grad():
                model.eval()
                for images, labels in val_loader:
                    model(images)
            """,
    ),
    # A generic loader in a function named for evaluation, called by a caller that never sets the mode.
    # No fix: the model is a parameter (a caller elsewhere may go on training it).
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def evaluate(net, loader):
            with torch.no_grad():
                for x, y in loader:
                    net(x)

        def main():
            evaluate(model, holdout_loader)

        if __name__ == "__main__":
            main()
        """,
        lines=(19,),
        messages=(evaluated_in_training_mode("net", "loader"),),
    ),
    # eval() in the validation helper, never train() again: epochs 2+ train without dropout.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def validate(model, val_loader):
            model.eval()
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
        """,
        lines=(18,),
        messages=(left_in_eval_mode("model.eval()", "model"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = nn.CrossEntropyLoss()

            def validate(model, val_loader):
                model.eval()
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)

            for epoch in range(10):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                validate(model, val_loader)
            """,
    ),
    # eval() in the epoch loop's body.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)
        """,
        lines=(22,),
        messages=(left_in_eval_mode("model.eval()", "model"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = nn.CrossEntropyLoss()

            for epoch in range(10):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                model.eval()
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)
            """,
    ),
    # train() once before the epoch loop is not enough.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        model.train()

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            model.train(False)
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)
        """,
        lines=(24,),
        messages=(left_in_eval_mode("model.train(False)", "model"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = nn.CrossEntropyLoss()

            model.train()

            for epoch in range(10):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                model.train(False)
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)
            """,
    ),
    # Batch norm in a project base class.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.BatchNorm1d(8)

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)

        model = Net()
        with torch.no_grad():
            for x, y in test_loader:
                model(x)
        """,
        lines=(17,),
        messages=(evaluated_in_training_mode("model", "test_loader"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Base(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = nn.BatchNorm1d(8)

            class Net(Base):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)

            model = Net()
            with torch.no_grad():
                model.eval()
                for x, y in test_loader:
                    model(x)
            """,
    ),
    # Dropout in a submodule, the model wrapped and moved.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.1)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

        model = nn.DataParallel(Net()).to("cuda")
        with torch.no_grad():
            for x, y in test_loader:
                model(x)
        """,
        lines=(17,),
        messages=(evaluated_in_training_mode("model", "test_loader"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.1)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = Block()

            model = nn.DataParallel(Net()).to("cuda")
            with torch.no_grad():
                model.eval()
                for x, y in test_loader:
                    model(x)
            """,
    ),
    # An LSTM with dropout between its layers.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(8, 8, num_layers=2, dropout=0.3)

        model = Tagger()
        with torch.no_grad():
            for x, y in dev_loader:
                model(x)
        """,
        lines=(12,),
        messages=(evaluated_in_training_mode("model", "dev_loader"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Tagger(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.LSTM(8, 8, num_layers=2, dropout=0.3)

            model = Tagger()
            with torch.no_grad():
                model.eval()
                for x, y in dev_loader:
                    model(x)
            """,
    ),
    # A trainer class whose epoch loop delegates to fit_epoch (d2l's Trainer without its train()).
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        class Trainer:
            def __init__(self, model, optim, max_epochs):
                self.model, self.optim, self.max_epochs = model, optim, max_epochs

            def fit(self, train_dataloader, val_dataloader):
                for self.epoch in range(self.max_epochs):
                    self.fit_epoch(train_dataloader, val_dataloader)

            def fit_epoch(self, train_dataloader, val_dataloader):
                for x, y in train_dataloader:
                    self.optim.zero_grad()
                    self.model(x).sum().backward()
                    self.optim.step()
                self.model.eval()
                with torch.no_grad():
                    for x, y in val_dataloader:
                        self.model(x)
        """,
        lines=(26,),
        messages=(left_in_eval_mode("self.model.eval()", "self.model", _MAY),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            class Trainer:
                def __init__(self, model, optim, max_epochs):
                    self.model, self.optim, self.max_epochs = model, optim, max_epochs

                def fit(self, train_dataloader, val_dataloader):
                    for self.epoch in range(self.max_epochs):
                        self.model.train()
                        self.fit_epoch(train_dataloader, val_dataloader)

                def fit_epoch(self, train_dataloader, val_dataloader):
                    for x, y in train_dataloader:
                        self.optim.zero_grad()
                        self.model(x).sum().backward()
                        self.optim.step()
                    self.model.eval()
                    with torch.no_grad():
                        for x, y in val_dataloader:
                            self.model(x)
            """,
    ),
    # pytorch-fcn: validation every N iterations inside the batch loop; train() only at the epoch start.
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        def validate(model, val_loader):
            model.eval()
            with torch.no_grad():
                for x, _ in val_loader:
                    model(x)

        for epoch in range(10):
            model.train()
            for i, (x, y) in enumerate(train_loader):
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
                if i % 500 == 0:
                    validate(model, val_loader)
        """,
        lines=(18,),
        messages=(left_in_eval_mode("model.eval()", "model"),),
        fixed="""
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.drop = nn.Dropout(0.5)
                def forward(self, x):
                    return self.fc(self.drop(x))

            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = nn.CrossEntropyLoss()

            def validate(model, val_loader):
                model.eval()
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)

            for epoch in range(10):
                model.train()
                for i, (x, y) in enumerate(train_loader):
                    model.train()
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
                    if i % 500 == 0:
                        validate(model, val_loader)
            """,
    ),
    # Several eval() calls in one training loop: one finding, at the first (one train() fixes them all).
    Invalid(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.fc(self.drop(x))

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = nn.CrossEntropyLoss()

        for step in range(max_steps):
            if step % 100 == 0:
                model.eval()
                with torch.no_grad():
                    for x, _ in val_loader:
                        model(x)
            if step % 1000 == 0:
                model.eval()
                sample(model)
            x, y = next(train_iter)
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        """,
        lines=(19,),
        messages=(left_in_eval_mode("model.eval()", "model"),),
    ),
    # The validation function names the model otherwise: the fix uses the caller's name.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.5)
            net = Net()
            opt = torch.optim.Adam(net.parameters())
            def validate(model, loader):
                model.eval()
                with torch.no_grad():
                    return sum(model(x).sum().item() for x, _ in loader)
            for epoch in range(5):
                for x, y in train_loader:
                    opt.zero_grad()
                    nn.functional.cross_entropy(net(x), y).backward()
                    opt.step()
                print(validate(net, val_loader))
            """,
        lines=(11,), messages=(left_in_eval_mode("model.eval()", "model"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.5)
            net = Net()
            opt = torch.optim.Adam(net.parameters())
            def validate(model, loader):
                model.eval()
                with torch.no_grad():
                    return sum(model(x).sum().item() for x, _ in loader)
            for epoch in range(5):
                net.train()
                for x, y in train_loader:
                    opt.zero_grad()
                    nn.functional.cross_entropy(net(x), y).backward()
                    opt.step()
                print(validate(net, val_loader))
            """),
    # An evaluation script that loads one model per checkpoint inside the loop: a switch
    # above the loop would reach none of them; no fix. The class is read where the model is
    # called (``Net()`` with its dropout), not above the loop.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.5)
            for x, y in test_loader:
                model = Net()
                model.load_state_dict(torch.load(ckpt, weights_only=True))
                print(model(x))
            """,
        lines=(8,), messages=(evaluated_in_training_mode("model", "test_loader"),)),
]
