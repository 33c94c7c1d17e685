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

# -- issue 40: evaluation under no_grad with no eval() anywhere, switches per model, composite models --
VALID += [
    # Embedding + GRU + Linear (no dropout, GRU's dropout 0): eval() changes nothing. A helper that only
    # forward runs (_init_hidden) builds no layer (hunkim/PyTorchZeroToAll).
    """
        import torch
        import torch.nn as nn

        def create_variable(tensor):
            return tensor.cuda() if torch.cuda.is_available() else tensor

        class RNNClassifier(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super().__init__()
                self.embedding = nn.Embedding(input_size, hidden_size)
                self.gru = nn.GRU(hidden_size, hidden_size)
                self.fc = nn.Linear(hidden_size, output_size)

            def _init_hidden(self, batch_size):
                return create_variable(torch.zeros(1, batch_size, self.gru.hidden_size))

            def forward(self, x):
                hidden = self._init_hidden(x.size(0))
                output, hidden = self.gru(self.embedding(x.t()), hidden)
                return self.fc(hidden[-1])

        classifier = RNNClassifier(128, 100, 18)
        optimizer = torch.optim.Adam(classifier.parameters())
        criterion = nn.CrossEntropyLoss()

        for epoch in range(10):
            for names, countries in train_loader:
                loss = criterion(classifier(names), countries)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            correct = 0
            for names, countries in test_loader:
                correct += (classifier(names).argmax(1) == countries).sum().item()
        """,
    # `net` is a plain function (softmax regression from scratch): it has no mode at all (d2l).
    """
        import torch

        W = torch.normal(0, 0.01, (784, 10), requires_grad=True)
        b = torch.zeros(10, requires_grad=True)

        def softmax(X):
            X_exp = X.exp()
            return X_exp / X_exp.sum(dim=1, keepdim=True)

        def net(X):
            return softmax(torch.mm(X.view(-1, 784), W) + b)

        def evaluate_accuracy(data_iter, net):
            acc_sum, n = 0.0, 0
            for X, y in data_iter:
                acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
                n += y.shape[0]
            return acc_sum / n

        print(evaluate_accuracy(test_iter, net))
        """,
    # `server.net` is a Net() with no dropout or batch norm, stored on a plain object (dataflowr).
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 8, 3)
                self.fc = nn.Linear(8 * 26 * 26, 10)

            def forward(self, x):
                return self.fc(F.relu(self.conv(x)).flatten(1))

        class Server:
            def __init__(self):
                self.net = Net()

            def aggregate(self, states):
                self.net.load_state_dict(states[0])

        server = Server()
        correct = 0
        with torch.no_grad():
            for images, labels in testloader:
                correct += (server.net(images).argmax(1) == labels).sum().item()
        """,
    # The loop optimises an adversarial patch through a frozen pretrained model kept in eval mode on
    # purpose: it trains no model (uvadlc adversarial attacks).
    """
        import torch
        import torch.nn as nn
        import torchvision

        model = torchvision.models.resnet34(weights="DEFAULT")
        for p in model.parameters():
            p.requires_grad = False
        patch = nn.Parameter(torch.zeros(3, 32, 32), requires_grad=True)
        optimizer = torch.optim.SGD([patch], lr=0.1)
        criterion = nn.CrossEntropyLoss()

        for epoch in range(5):
            for x, _ in train_loader:
                model.eval()
                x[:, :, :32, :32] = patch
                loss = -criterion(model(x), target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
    # A GAN's `sample_image` every few batches amid training: sampling in training mode, not an evaluation.
    """
        import torch
        import torch.nn as nn
        from torchvision.utils import save_image

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Sequential(nn.Linear(100, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 784), nn.Tanh())

            def forward(self, z):
                return self.model(z)

        generator = Generator()
        optimizer_G = torch.optim.Adam(generator.parameters())

        def sample_image(n_row, batches_done):
            z = torch.randn(n_row ** 2, 100)
            gen_imgs = generator(z)
            save_image(gen_imgs.data, "images/%d.png" % batches_done, nrow=n_row)

        for epoch in range(200):
            for i, (imgs, _) in enumerate(dataloader):
                optimizer_G.zero_grad()
                g_loss = -discriminator(generator(torch.randn(imgs.size(0), 100))).mean()
                g_loss.backward()
                optimizer_G.step()
                if i % 400 == 0:
                    sample_image(n_row=10, batches_done=i)
        """,
    # `nn.Dropout(d)(x)` built in forward is a fresh layer eval() never reaches; the test passes d=0.0 and
    # the model has no other dropout or batch norm (dataflowr's spectral GNN).
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class GraphNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(64, 32)
                self.fc2 = nn.Linear(32, 10)

            def forward(self, x, d):
                x = F.relu(self.fc1(x))
                x = nn.Dropout(d)(x)
                return self.fc2(x)

        net = GraphNet()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
        for epoch in range(3):
            for x, y in train_loader:
                optimizer.zero_grad()
                F.cross_entropy(net(x, 0.5), y).backward()
                optimizer.step()
            with torch.no_grad():
                for x, y in test_loader:
                    acc = (net(x, 0.0).argmax(1) == y).float().mean()
        """,
    # The look-alike of the nn.Sequential case: no dropout or batch norm in the Sequential.
    """
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        optimizer = torch.optim.Adam(model.parameters())

        def compute_mae(model, data_loader):
            mae, n = 0.0, 0
            for x, y in data_loader:
                mae += (model(x) - y).abs().sum()
                n += y.size(0)
            return mae / n

        for epoch in range(10):
            for x, y in train_loader:
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            with torch.no_grad():
                print(compute_mae(model, test_loader))
        """,
    # The POS tagger with its evaluate() calling model.eval().
    """
        import torch
        import torch.nn as nn

        class POSTagger(nn.Module):
            def __init__(self, vocab, tags):
                super().__init__()
                self.embedding = nn.Embedding(vocab, 32)
                self.rnn = nn.LSTM(32, 32)
                self.fc = nn.Linear(32, tags)
                self.dropout = nn.Dropout(0.25)

            def forward(self, x):
                out, _ = self.rnn(self.dropout(self.embedding(x)))
                return self.fc(self.dropout(out))

        model = POSTagger(100, 10)
        optimizer = torch.optim.Adam(model.parameters())
        criterion = nn.CrossEntropyLoss()

        def train(model, iterator):
            model.train()
            for text, tags in iterator:
                optimizer.zero_grad()
                criterion(model(text), tags).backward()
                optimizer.step()

        def evaluate(model, iterator):
            model.eval()
            total = 0.0
            with torch.no_grad():
                for text, tags in iterator:
                    total += criterion(model(text), tags).item()
            return total

        def inference(model, sentence):
            model.eval()
            return model(sentence).argmax(-1)

        for epoch in range(10):
            train(model, train_iterator)
            print(evaluate(model, valid_iterator))

        print(inference(model, torch.tensor([[1, 2, 3]])))
        """,
    # Both models put back in training mode at the top of each epoch.
    """
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))

            def forward(self, x):
                return self.net(x)

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 8))

            def forward(self, z):
                return self.net(z)

        aD, aG = Discriminator(), Generator()
        opt_d = torch.optim.Adam(aD.parameters())
        opt_g = torch.optim.Adam(aG.parameters())

        for epoch in range(100):
            aG.train()
            aD.train()
            for x, _ in trainloader:
                opt_d.zero_grad()
                loss_d = aD(aG(torch.randn(64, 4)).detach()).mean() - aD(x).mean()
                loss_d.backward()
                opt_d.step()
                opt_g.zero_grad()
                loss_g = -aD(aG(torch.randn(64, 4))).mean()
                loss_g.backward()
                opt_g.step()
            aD.eval()
            with torch.no_grad():
                for x, y in testloader:
                    print(aD(x).mean())
        """,
    # estimate_loss with its model.eval() before the loop and model.train() after it.
    """
        import torch
        import torch.nn as nn

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(100, 32)
                self.drop = nn.Dropout(0.1)
                self.head = nn.Linear(32, 100)

            def forward(self, idx, targets):
                logits = self.head(self.drop(self.emb(idx)))
                return logits, nn.functional.cross_entropy(logits.view(-1, 100), targets.view(-1))

        model = GPT()
        optimizer = torch.optim.AdamW(model.parameters())

        @torch.no_grad()
        def estimate_loss():
            out = {}
            model.eval()
            for split in ["train", "val"]:
                losses = torch.zeros(20)
                for k in range(20):
                    X, Y = get_batch(split)
                    logits, loss = model(X, Y)
                    losses[k] = loss.item()
                out[split] = losses.mean()
            model.train()
            return out

        for it in range(5000):
            if it % 500 == 0:
                print(estimate_loss())
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
    # The composite model with train() in the training function.
    """
        import torch
        import torch.nn as nn

        class Encoder(nn.Module):
            def __init__(self, vocab, hidden, dropout):
                super().__init__()
                self.embedding = nn.Embedding(vocab, hidden)
                self.rnn = nn.GRU(hidden, hidden)
                self.dropout = nn.Dropout(dropout)

            def forward(self, src):
                return self.rnn(self.dropout(self.embedding(src)))

        class Seq2Seq(nn.Module):
            def __init__(self, encoder, decoder):
                super().__init__()
                self.encoder = encoder
                self.decoder = decoder

            def forward(self, src, trg):
                _, hidden = self.encoder(src)
                return self.decoder(trg, hidden)

        enc = Encoder(100, 32, 0.5)
        dec = Decoder(100, 32)
        model = Seq2Seq(enc, dec)
        optimizer = torch.optim.Adam(model.parameters())
        criterion = nn.CrossEntropyLoss()

        def train(model, iterator):
            model.train()
            for src, trg in iterator:
                optimizer.zero_grad()
                criterion(model(src, trg), trg).backward()
                optimizer.step()

        def evaluate(model, iterator):
            model.eval()
            with torch.no_grad():
                return sum(criterion(model(src, trg), trg).item() for src, trg in iterator)

        for epoch in range(10):
            train(model, train_iterator)
            print(evaluate(model, valid_iterator))
        """,
]

INVALID += [
    # A helper evaluating over `data_loader` (a name of any loader), called under `torch.no_grad()` from the
    # epoch loop, for an nn.Sequential holding BatchNorm1d and Dropout; nothing calls eval() (rasbt's CORAL notebooks).
    Invalid(
        """
            import torch
            import torch.nn as nn

            model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
            optimizer = torch.optim.Adam(model.parameters())

            def compute_mae(model, data_loader):
                mae, n = 0.0, 0
                for x, y in data_loader:
                    mae += (model(x) - y).abs().sum()
                    n += y.size(0)
                return mae / n

            for epoch in range(10):
                for x, y in train_loader:
                    loss = ((model(x) - y) ** 2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    print(compute_mae(model, train_loader), compute_mae(model, test_loader))
            """,
        lines=(10,), messages=('`model` is evaluated over `data_loader` in training mode: its dropout and batch norm still act as in training (random drops, batch statistics); call `model.eval()` before this loop',)),
    # The word-language-model shape: `evaluate(data_source)` under no_grad, the iterable's name no evidence by
    # itself; nothing calls model.eval().
    Invalid(
        """
            import torch
            import torch.nn as nn

            class RNNModel(nn.Module):
                def __init__(self, ntoken, nhid):
                    super().__init__()
                    self.drop = nn.Dropout(0.5)
                    self.encoder = nn.Embedding(ntoken, nhid)
                    self.rnn = nn.LSTM(nhid, nhid)
                    self.decoder = nn.Linear(nhid, ntoken)

                def forward(self, x):
                    out, _ = self.rnn(self.drop(self.encoder(x)))
                    return self.decoder(self.drop(out))

            model = RNNModel(1000, 200)
            optimizer = torch.optim.SGD(model.parameters(), lr=20)
            criterion = nn.CrossEntropyLoss()

            def evaluate(data_source):
                total = 0.0
                with torch.no_grad():
                    for data, targets in data_source:
                        total += criterion(model(data).view(-1, 1000), targets).item()
                return total

            for epoch in range(10):
                model.train()
                for data, targets in train_data:
                    optimizer.zero_grad()
                    criterion(model(data).view(-1, 1000), targets).backward()
                    optimizer.step()
                print(evaluate(val_data))
            """,
        lines=(24,), messages=('`model` is evaluated over `data_source` in training mode: its dropout and batch norm still act as in training (random drops, batch statistics); call `model.eval()` before this loop',)),
    # A decoding function (`translate`) runs the encoder with dropout on; nothing in the file calls eval().
    Invalid(
        """
            import torch
            import torch.nn as nn

            class Encoder(nn.Module):
                def __init__(self, vocab, hidden):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab, hidden)
                    self.dropout = nn.Dropout(0.1)
                    self.rnn = nn.GRU(hidden, hidden)

                def forward(self, x):
                    return self.rnn(self.dropout(self.embedding(x)))

            class Decoder(nn.Module):
                def __init__(self, vocab, hidden):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab, hidden)
                    self.rnn = nn.GRU(hidden, hidden)
                    self.out = nn.Linear(hidden, vocab)

                def forward(self, x, h):
                    o, h = self.rnn(self.embedding(x), h)
                    return self.out(o), h

            encoder = Encoder(100, 32)
            decoder = Decoder(100, 32)

            def translate(encoder, decoder, src, max_len=10):
                _, h = encoder(src)
                tok, out = torch.zeros(1, 1, dtype=torch.long), []
                for _ in range(max_len):
                    logits, h = decoder(tok, h)
                    tok = logits.argmax(-1)
                    out.append(tok.item())
                return out

            print(translate(encoder, decoder, torch.tensor([[1, 2, 3]])))
            """,
        lines=(30,), messages=('`encoder` is evaluated in `translate` in training mode, and nothing in the file calls `encoder.eval()`: its dropout and batch norm still act as in training (random drops, batch statistics); call `encoder.eval()` before evaluating',)),
    # A nested `run_validate()` inside `validate()` (the ImageNet example's shape) with no eval() anywhere before it.
    Invalid(
        """
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 2)
                    self.bn = nn.BatchNorm1d(8)

                def forward(self, x):
                    return self.fc(self.bn(x))

            def validate(val_loader, model, criterion):
                def run_validate(loader):
                    with torch.no_grad():
                        for images, target in loader:
                            output = model(images)
                            criterion(output, target)

                run_validate(val_loader)

            def main():
                model = Net()
                criterion = nn.CrossEntropyLoss()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for epoch in range(10):
                    model.train()
                    for images, target in train_loader:
                        optimizer.zero_grad()
                        criterion(model(images), target).backward()
                        optimizer.step()
                    validate(val_loader, model, criterion)

            main()
            """,
        lines=(17,), messages=('`model` is evaluated over `loader` in training mode: its dropout and batch norm still act as in training (random drops, batch statistics); call `model.eval()` before this loop',)),
    # train() switches to training mode and evaluate() lacks its eval(); an eval() in a function that runs
    # later (inference) does not choose the mode of the evaluation before it.
    Invalid(
        """
            import torch
            import torch.nn as nn

            class POSTagger(nn.Module):
                def __init__(self, vocab, tags):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab, 32)
                    self.rnn = nn.LSTM(32, 32)
                    self.fc = nn.Linear(32, tags)
                    self.dropout = nn.Dropout(0.25)

                def forward(self, x):
                    out, _ = self.rnn(self.dropout(self.embedding(x)))
                    return self.fc(self.dropout(out))

            model = POSTagger(100, 10)
            optimizer = torch.optim.Adam(model.parameters())
            criterion = nn.CrossEntropyLoss()

            def train(model, iterator):
                model.train()
                for text, tags in iterator:
                    optimizer.zero_grad()
                    criterion(model(text), tags).backward()
                    optimizer.step()

            def evaluate(model, iterator):
                total = 0.0
                with torch.no_grad():
                    for text, tags in iterator:
                        total += criterion(model(text), tags).item()
                return total

            def inference(model, sentence):
                model.eval()
                return model(sentence).argmax(-1)

            for epoch in range(10):
                train(model, train_iterator)
                print(evaluate(model, valid_iterator))

            print(inference(model, torch.tensor([[1, 2, 3]])))
            """,
        lines=(31,), messages=('`model` is evaluated over `iterator` in training mode: its dropout and batch norm still act as in training (random drops, batch statistics); call `model.eval()` before this loop',)),
    # Two models: aG.train() comes back each epoch, aD.train() never does after aD.eval(): a train() of
    # another model does not restore this one.
    Invalid(
        """
            import torch
            import torch.nn as nn

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))

                def forward(self, x):
                    return self.net(x)

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 8))

                def forward(self, z):
                    return self.net(z)

            aD, aG = Discriminator(), Generator()
            opt_d = torch.optim.Adam(aD.parameters())
            opt_g = torch.optim.Adam(aG.parameters())

            for epoch in range(100):
                aG.train()
                for x, _ in trainloader:
                    opt_d.zero_grad()
                    loss_d = aD(aG(torch.randn(64, 4)).detach()).mean() - aD(x).mean()
                    loss_d.backward()
                    opt_d.step()
                    opt_g.zero_grad()
                    loss_g = -aD(aG(torch.randn(64, 4))).mean()
                    loss_g.backward()
                    opt_g.step()
                aD.eval()
                with torch.no_grad():
                    for x, y in testloader:
                        print(aD(x).mean())
            """,
        lines=(36,), messages=('`aD.eval()` runs inside the training loop but nothing calls `aD.train()` before the next training step: from then on any dropout or batch norm it has stay in eval mode (no dropout, frozen statistics); call `aD.train()` before training resumes',),
        fixed="""
            import torch
            import torch.nn as nn

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))

                def forward(self, x):
                    return self.net(x)

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 8))

                def forward(self, z):
                    return self.net(z)

            aD, aG = Discriminator(), Generator()
            opt_d = torch.optim.Adam(aD.parameters())
            opt_g = torch.optim.Adam(aG.parameters())

            for epoch in range(100):
                aD.train()
                aG.train()
                for x, _ in trainloader:
                    opt_d.zero_grad()
                    loss_d = aD(aG(torch.randn(64, 4)).detach()).mean() - aD(x).mean()
                    loss_d.backward()
                    opt_d.step()
                    opt_g.zero_grad()
                    loss_g = -aD(aG(torch.randn(64, 4))).mean()
                    loss_g.backward()
                    opt_g.step()
                aD.eval()
                with torch.no_grad():
                    for x, y in testloader:
                        print(aD(x).mean())
            """),
    # nanoGPT's estimate_loss without its model.eval(): the model.train() after the loop restores the mode, it
    # is no Monte-Carlo dropout chosen before it.
    Invalid(
        """
            import torch
            import torch.nn as nn

            class GPT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(100, 32)
                    self.drop = nn.Dropout(0.1)
                    self.head = nn.Linear(32, 100)

                def forward(self, idx, targets):
                    logits = self.head(self.drop(self.emb(idx)))
                    return logits, nn.functional.cross_entropy(logits.view(-1, 100), targets.view(-1))

            model = GPT()
            optimizer = torch.optim.AdamW(model.parameters())

            @torch.no_grad()
            def estimate_loss():
                out = {}
                for split in ["train", "val"]:
                    losses = torch.zeros(20)
                    for k in range(20):
                        X, Y = get_batch(split)
                        logits, loss = model(X, Y)
                        losses[k] = loss.item()
                    out[split] = losses.mean()
                model.train()
                return out

            for it in range(5000):
                if it % 500 == 0:
                    print(estimate_loss())
                X, Y = get_batch("train")
                logits, loss = model(X, Y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
        lines=(24,), messages=('`model` is evaluated with autograd off in training mode, and nothing in the file calls `model.eval()`: its dropout and batch norm still act as in training (random drops, batch statistics); call `model.eval()` before evaluating',)),
    # A composite model built from models handed to it (`Seq2Seq(enc, dec)`): the encoder's dropout is its own.
    Invalid(
        """
            import torch
            import torch.nn as nn

            class Encoder(nn.Module):
                def __init__(self, vocab, hidden, dropout):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab, hidden)
                    self.rnn = nn.GRU(hidden, hidden)
                    self.dropout = nn.Dropout(dropout)

                def forward(self, src):
                    return self.rnn(self.dropout(self.embedding(src)))

            class Seq2Seq(nn.Module):
                def __init__(self, encoder, decoder):
                    super().__init__()
                    self.encoder = encoder
                    self.decoder = decoder

                def forward(self, src, trg):
                    _, hidden = self.encoder(src)
                    return self.decoder(trg, hidden)

            enc = Encoder(100, 32, 0.5)
            dec = Decoder(100, 32)
            model = Seq2Seq(enc, dec)
            optimizer = torch.optim.Adam(model.parameters())
            criterion = nn.CrossEntropyLoss()

            def train(model, iterator):
                for src, trg in iterator:
                    optimizer.zero_grad()
                    criterion(model(src, trg), trg).backward()
                    optimizer.step()

            def evaluate(model, iterator):
                model.eval()
                with torch.no_grad():
                    return sum(criterion(model(src, trg), trg).item() for src, trg in iterator)

            for epoch in range(10):
                train(model, train_iterator)
                print(evaluate(model, valid_iterator))
            """,
        lines=(38,), messages=('`model.eval()` runs inside the training loop but nothing calls `model.train()` before the next training step: from then on its dropout and batch norm stay in eval mode (no dropout, frozen statistics); call `model.train()` before training resumes',),
        fixed="""
            import torch
            import torch.nn as nn

            class Encoder(nn.Module):
                def __init__(self, vocab, hidden, dropout):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab, hidden)
                    self.rnn = nn.GRU(hidden, hidden)
                    self.dropout = nn.Dropout(dropout)

                def forward(self, src):
                    return self.rnn(self.dropout(self.embedding(src)))

            class Seq2Seq(nn.Module):
                def __init__(self, encoder, decoder):
                    super().__init__()
                    self.encoder = encoder
                    self.decoder = decoder

                def forward(self, src, trg):
                    _, hidden = self.encoder(src)
                    return self.decoder(trg, hidden)

            enc = Encoder(100, 32, 0.5)
            dec = Decoder(100, 32)
            model = Seq2Seq(enc, dec)
            optimizer = torch.optim.Adam(model.parameters())
            criterion = nn.CrossEntropyLoss()

            def train(model, iterator):
                for src, trg in iterator:
                    optimizer.zero_grad()
                    criterion(model(src, trg), trg).backward()
                    optimizer.step()

            def evaluate(model, iterator):
                model.eval()
                with torch.no_grad():
                    return sum(criterion(model(src, trg), trg).item() for src, trg in iterator)

            for epoch in range(10):
                model.train()
                train(model, train_iterator)
                print(evaluate(model, valid_iterator))
            """),
]

VALID += [
    # Nested project blocks (attention heads, LayerNorm) in an nn.Sequential built by a
    # comprehension: no dropout or batch norm anywhere; ``super(Cls, self).__init__()`` is
    # nn.Module's, no helper of the file that might build one (MehdiJmlkh's iTransformer).
    """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.q = nn.Linear(n, n)
            def forward(self, x):
                return torch.softmax(self.q(x) @ x.transpose(1, 2), -1) @ x

        class Block(nn.Module):
            def __init__(self, n):
                super(Block, self).__init__()
                self.attn = Head(n)
                self.norm = nn.LayerNorm(n)
            def forward(self, x):
                return self.norm(x + self.attn(x))

        class TransformerModel(nn.Module):
            def __init__(self, n, layers):
                super(TransformerModel, self).__init__()
                self.blocks = nn.Sequential(*[Block(n) for _ in range(layers)])
                self.head = nn.Linear(n, 1)
            def forward(self, x):
                return self.head(self.blocks(x))

        model = TransformerModel(16, 2)
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                ((model(x) - y) ** 2).mean().backward()
                optimizer.step()
            with torch.no_grad():
                for x, y in test_loader:
                    print(((model(x) - y) ** 2).mean())
        """,
]

VALID += [
    # A shape check of a model just built (untrained, no weights loaded) in a function named
    # test_*: no evaluation of a trained model (uvadlc's deep probabilistic models tutorials).
    """
        import torch
        import torch.nn as nn

        class BasicTagger(nn.Module):
            def __init__(self, vocab, tags, p_drop=0.0):
                super().__init__()
                self.emb = nn.Embedding(vocab, 32)
                self.drop = nn.Dropout(p_drop)
                self.out = nn.Linear(32, tags)
            def forward(self, x):
                return self.out(self.drop(self.emb(x)))

        def test_basic_tagger(x):
            tagger = BasicTagger(10, 3)
            out = tagger(x)
            assert out.shape[-1] == 3

        test_basic_tagger(torch.zeros(2, 4, dtype=torch.long))
        """,
]


# Review packages (benchmarks/review_verdicts.tsv): a model name the file binds nowhere, and
# batch norms of frozen layers put in eval mode one by one while the model trains.
VALID += [
    # A slide's fragment (poutyne's slides): `net` is bound nowhere in the file, so the code
    # cannot run as written and what `net` holds cannot be known (a NameError, not a model).
    """
        import torch

        correct = 0
        with torch.no_grad():
            for data in test_loader:
                images, labels = data
                outputs = net(images)
                correct += (outputs.argmax(1) == labels).sum().item()
        print(correct)
        """,
    # ultralytics' trainer: train() and then only the batch norms of frozen layers in eval
    # mode ("freeze BN stats"), picked in a loop over the model's modules; the model trains on.
    """
        import torch
        import torch.nn as nn

        class Trainer:
            def __init__(self, model, optimizer, loader, freeze):
                self.model, self.optimizer, self.loader, self.freeze = model, optimizer, loader, freeze

            def _model_train(self):
                self.model.train()
                for n, m in self.model.named_modules():
                    if any(f in n for f in self.freeze) and isinstance(m, nn.BatchNorm2d):
                        m.eval()

            def fit(self, epochs):
                for epoch in range(epochs):
                    self._model_train()
                    for x, y in self.loader:
                        self.optimizer.zero_grad()
                        nn.functional.cross_entropy(self.model(x), y).backward()
                        self.optimizer.step()
        """,
    # The same with the pick written as `if not ...: continue`.
    """
        import torch
        import torch.nn as nn

        model = torchvision.models.resnet50()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(10):
            model.train()
            for m in model.modules():
                if not isinstance(m, nn.BatchNorm2d):
                    continue
                m.eval()
            for x, y in train_loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
        """,
    # The same freeze through model.apply(fn), fn switching a module only when it is a batch norm.
    """
        import torch
        import torch.nn as nn
        import torchvision

        model = torchvision.models.resnet50()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def set_bn_eval(m):
            if isinstance(m, nn.BatchNorm2d):
                m.eval()

        for epoch in range(10):
            model.apply(set_bn_eval)
            for x, y in train_loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
        """,
]

INVALID += [
    # The textbook bug stays: a model of unknown class (an imported factory's) handed to a
    # validation loop under no_grad with no eval(): its layers may act as in training.
    Invalid(
        """
            import torch
            from zoo import build_model

            def validate(model, val_loader):
                correct = 0
                with torch.no_grad():
                    for images, labels in val_loader:
                        correct += (model(images).argmax(1) == labels).sum().item()
                return correct

            net = build_model()
            validate(net, val_loader)
            """,
        lines=(8,), messages=(evaluated_in_training_mode("model", "val_loader", _MAY),)),
    # Every submodule the loop walks switched to eval (no pick): the whole model in eval mode,
    # never switched back before the next epoch trains.
    Invalid(
        """
            import torch
            import torch.nn as nn

            model = torchvision.models.resnet50()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.train()
            for epoch in range(10):
                for x, y in train_loader:
                    optimizer.zero_grad()
                    nn.functional.cross_entropy(model(x), y).backward()
                    optimizer.step()
                for m in model.modules():
                    m.eval()
            """,
        lines=(14,), messages=(left_in_eval_mode("m.eval()", "m", _MAY),)),
    # model.apply(fn) of a fn that switches every module: the whole model in eval mode.
    Invalid(
        """
            import torch
            import torch.nn as nn
            import torchvision

            model = torchvision.models.resnet50()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            def set_eval(m):
                m.eval()

            for epoch in range(10):
                model.apply(set_eval)
                for x, y in train_loader:
                    optimizer.zero_grad()
                    nn.functional.cross_entropy(model(x), y).backward()
                    optimizer.step()
            """,
        lines=(13,), messages=(left_in_eval_mode("model.apply(set_eval)", "model"),)),
]
