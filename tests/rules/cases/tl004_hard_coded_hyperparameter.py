"""TL004's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl004_hard_coded_hyperparameter import _WHY
from torchlint.rule import Invalid, Valid


VALID = [
    # A validation loader that happens to shuffle is still for evaluation (escapydl's Optuna
    # objective); a module of unittest cases named tests.py is a test file; the optimizer's
    # settings come from the checkpoint loaded right after it is built (cgn-pytorch).
    """
        import torch
        from torch.utils.data import DataLoader
        def objective(trial, model, trainset, valset):
            trainloader = DataLoader(trainset, batch_size=trial.suggest_int("batch", 16, 256), shuffle=True)
            valloader = DataLoader(valset, batch_size=1024, shuffle=True)
            opt = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-1))
            for x, y in trainloader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            return evaluate(model, valloader)
        """,
    Valid(
        """
            import torch
            def test_fit(model, x, y):
                opt = torch.optim.SGD(model.parameters(), lr=0.5)
                for _ in range(100):
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    opt.step()
            """,
        path="monotonicnetworks/tests.py",
    ),
    """
        import torch
        def resume(model, path, loader):
            checkpoint = torch.load(path, weights_only=True)
            model.load_state_dict(checkpoint["model"])
            optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
            optimizer.load_state_dict(checkpoint["optimizer"])
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
        """,
    # Everything read from argparse (its defaults included) or a config object.
    """
        import argparse
        import torch
        from torch.utils.data import DataLoader
        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--lr", type=float, default=3e-4)
            parser.add_argument("--epochs", type=int, default=30)
            args = parser.parse_args()
            opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=cfg.weight_decay)
            loader = DataLoader(ds, batch_size=cfg.batch_size, num_workers=4)
            for epoch in range(args.epochs):
                for x in loader:
                    model(x).backward()
                    opt.step()
        """,
    # Function parameter defaults are the configurable interface.
    """
        import torch
        def make_optimizer(params, lr=0.01, momentum=0.9):
            return torch.optim.SGD(params, lr=lr, momentum=momentum)
        """,
    # Module-level UPPER_CASE constants.
    """
        import torch
        LR = 1e-3
        EPOCHS = 10
        def train(model, loader):
            opt = torch.optim.Adam(model.parameters(), lr=LR)
            for epoch in range(EPOCHS):
                for x in loader:
                    model(x).backward()
                    opt.step()
        """,
    # Dataclass / config-class fields: class bodies are where values are declared.
    """
        from dataclasses import dataclass
        from transformers import TrainingArguments
        @dataclass
        class Config:
            lr: float = 3e-4
            batch_size: int = 64
            epochs: int = 30
        class Defaults:
            args = TrainingArguments("out", learning_rate=2e-5)
        """,
    # Architecture sizes, num_workers, betas and eps are not training hyperparameters.
    """
        import torch
        from torch import nn
        from torch.utils.data import DataLoader
        def build(cfg, ds):
            model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 10))
            opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
            loader = DataLoader(ds, batch_size=cfg.batch_size, num_workers=8, shuffle=True)
            return model, opt, loader
        """,
    # Loops over range that are not epoch loops: retries, layers, warm-up iterations.
    """
        import torch
        from torch import nn
        def setup(model, x, opt):
            layers = [nn.Linear(8, 8) for _ in range(3)]
            for i in range(3):
                layers.append(nn.Linear(8, 8))
            for attempt in range(5):
                if connect():
                    break
            for _ in range(10):
                model(x).sum().backward()
                opt.step()
        """,
    # Test files are skipped.
    Valid(
        """
            import torch
            def test_sgd(model):
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
        path="tests/test_optim.py",
    ),
    # A timing benchmark holds its hyperparameters fixed on purpose, so that only what it
    # measures varies (ignite's cifar100_amp_benchmark/benchmark_fp32.py: one SGD(lr=0.01)
    # for the fp32, apex and torch.amp variants; fire takes the data path and batch size).
    Valid(
        """
            import fire
            import torch
            from ignite.handlers import Timer
            def main(dataset_path, batch_size=256, max_epochs=10):
                model = build().cuda()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
                timer = Timer(average=True)
                train(model, optimizer, dataset_path, batch_size, max_epochs)
            if __name__ == "__main__":
                fire.Fire(main)
            """,
        path="examples/cifar100_amp_benchmark/benchmark_fp32.py",
    ),
    Valid(
        """
            import argparse
            import time
            import torch
            def run(args):
                optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
                start = time.perf_counter()
                for step in range(args.steps):
                    train_step(model, optimizer)
                print(time.perf_counter() - start)
            run(argparse.ArgumentParser().parse_args())
            """,
        path="bench/step_time.py",
    ),
    # A script whose command line holds run settings alone (which GPU, which data set) keeps
    # its hyperparameters in view in its code, as a script with no options does (avalanche's
    # examples: main(args) with only --cuda and --mnist_type).
    """
        import argparse
        import torch
        def main(args):
            device = torch.device(f"cuda:{args.cuda}" if args.cuda >= 0 else "cpu")
            model = build(args.mnist_type).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
            fit(model, optimizer, train_epochs=2)
        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--mnist_type", type=str, default="split")
            parser.add_argument("--cuda", type=int, default=0)
            main(parser.parse_args())
        """,
    # Switches and strings pick what to run, not a number to tune (avalanche's endless_cl_sim:
    # --scenario, --semseg beside --cuda and --dataset_root).
    """
        import argparse
        import torch
        def main(args):
            model = build(args.scenario, segmentation=args.semseg)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
            fit(model, optimizer, root=args.dataset_root)
        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--cuda", type=int, default=0)
            parser.add_argument("--scenario", type=str, default="Classes", choices=["Classes", "Weather"])
            parser.add_argument("--semseg", action="store_true", default=False)
            parser.add_argument("--dataset_root", default=None)
            main(parser.parse_args())
        """,
    # A function of a script of its own (a __main__ guard, no configuration, imported by no other
    # file) that takes the epochs: its only caller is the script, whose values are all in view
    # (avalanche's updatable_objects.py: train_experience(agent, exp, epochs=10) beside a loader's
    # batch_size=32, called as train_experience(agent, exp, epochs=2)).
    """
        import torch
        from torch.utils.data import DataLoader
        def train_experience(model, opt, data, epochs=10):
            for ep in range(epochs):
                for x, y in DataLoader(data, batch_size=32, shuffle=True):
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
        if __name__ == "__main__":
            model = build()
            opt = torch.optim.SGD(model.parameters(), lr=0.001)
            for exp in stream():
                train_experience(model, opt, exp, epochs=2)
        """,
    # The same in a class of the script: its __init__ takes the learning rate from the script.
    """
        import torch
        class Learner:
            def __init__(self, model, lr=0.01):
                self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
            def fit(self, loader):
                for x, y in loader:
                    self.opt.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.opt.step()
        if __name__ == "__main__":
            Learner(build(), lr=0.1).fit(load())
        """,
    # A LinearLR warm-up from near zero through a local of arithmetic (torchvision's detection
    # reference engine: warmup_factor = 1.0 / 1000).
    """
        import argparse
        import torch
        def train_one_epoch(model, optimizer, data_loader, epoch, args):
            if epoch == 0:
                warmup_factor = 1.0 / 1000
                scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=warmup_factor,
                                                              total_iters=len(data_loader) - 1)
        args = argparse.ArgumentParser().parse_args()
        """,
    # Config files are skipped: that is where hyperparameters belong.
    Valid(
        """
            from transformers import TrainingArguments
            def training_args():
                return TrainingArguments("out", learning_rate=2e-5, num_train_epochs=3)
            """,
        path="configs/finetune.py",
    ),
    # A local assigned from a parameter or a config somewhere is not literal-only.
    """
        import torch
        def train(model, args):
            lr = 0.1
            if args.lr is not None:
                lr = args.lr
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            n_epochs = args.epochs
            for epoch in range(n_epochs):
                train_one_epoch(model, opt)
        """,
    # Zero / negative mean "off" / "unlimited"; a parameter-group dict is not watched.
    """
        import torch
        import lightning as L
        def setup(model, cfg):
            opt = torch.optim.AdamW(
                [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                lr=cfg.lr, weight_decay=0.0,
            )
            trainer = L.Trainer(max_epochs=-1, max_steps=cfg.steps)
            return opt, trainer
        """,
    # An LR-schedule plot: the epoch loop does not train.
    """
        import torch
        def plot(opt):
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.95 ** e)
            lrs = []
            for epoch in range(100):
                sched.step()
                lrs.append(sched.get_last_lr())
        """,
    # A sweep loop over literal values is not one hard-coded value; a local rebound by a loop.
    """
        import torch
        def sweep(model):
            for lr in (0.1, 0.01):
                torch.optim.SGD(model.parameters(), lr=lr)
        """,
    # Option: a name in ignore-names is never reported.
    Valid(
        """
            from torch.utils.data import DataLoader
            def loaders(ds):
                return DataLoader(ds, batch_size=32)
            """,
        options={"ignore-names": ["batch_size"]},
    ),
    # Option: test files can be checked, but this one reads its values from arguments.
    Valid(
        """
            import torch
            def test_fit(model, lr):
                torch.optim.SGD(model.parameters(), lr)
            """,
        path="tests/test_fit.py",
        options={"skip-tests": False},
    ),
    # A DataLoader that does not feed training (parallel metadata reading, evaluation in a
    # file that never trains): its batch size is not a training hyperparameter.
    """
        import torch.utils.data
        class VideoClips:
            def _read_timestamps(self, paths):
                loader = torch.utils.data.DataLoader(Timestamps(paths), batch_size=16, num_workers=self.workers)
                return [t for batch in loader for t in batch]
        def evaluate(model, ds):
            return [model(x) for x in torch.utils.data.DataLoader(ds, batch_size=256)]
        """,
    # In a file that trains, a non-training loader of one sample at a time.
    """
        import torch
        from torch.utils.data import DataLoader
        def predict(model, ds):
            return [model(x) for x in DataLoader(ds, batch_size=1)]
        def fit(model, opt, loader):
            for x in loader:
                model(x).backward()
                opt.step()
        """,
    # Test-support packages count as tests.
    Valid(
        """
            from torch.utils.data import DataLoader
            def mocked_dataloaders(ds):
                return DataLoader(ds, shuffle=True, batch_size=2)
            """,
        path="src/pkg/test_utils/training.py",
    ),
    # A lower-case module-level variable read inside a function is not a local of it.
    """
        import torch
        lr = 0.1
        def train(model):
            return torch.optim.SGD(model.parameters(), lr=lr)
        """,
    # Evaluation loaders: named for evaluation, over a held-out split (train=False, mode="val",
    # split="test").
    """
        import torch
        from torch.utils.data import DataLoader
        from torchvision import datasets
        def main(model, train_ds, root, fit):
            opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            val_loader = DataLoader(train_ds, batch_size=256)
            testloader = DataLoader(datasets.MNIST(root, train=False), batch_size=1000)
            holdout = ImageFolderSplit(root, mode="val")
            probe = DataLoader(holdout, batch_size=512)
            scored = DataLoader(load_dataset("imdb", split="test"), batch_size=128)
            fit(model, opt, train_ds)
        """,
    # Loaders used only by an evaluation function (under no_grad) or a sampling one.
    """
        import torch
        from torch.utils.data import DataLoader
        @torch.no_grad()
        def score(model, loader):
            return sum(model(x).sum() for x in loader)
        def main(model, ds, fit):
            extra = DataLoader(ds, batch_size=64)
            images = DataLoader(ds, batch_size=16)
            fit(model, torch.optim.SGD(model.parameters(), lr=model.lr))
            print(score(model, extra), len(images))
            draw_samples(model, images)
        """,
    # A loader named for training in a file that never trains.
    """
        from torch.utils.data import DataLoader
        def make_loaders(ds):
            train_loader = DataLoader(ds, batch_size=64)
            return train_loader
        """,
    # The configurator idiom: exec(...) overrides the top-level assignments before it.
    """
        import torch
        from torch.utils.data import DataLoader
        model = build_model()
        batch_size = 12
        learning_rate = 6e-4
        exec(open("configurator.py").read())
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        for x in loader:
            optimizer.zero_grad()
            model(x).backward()
            optimizer.step()
        """,
    # What fills in a parameter's default (`x if p is None else p`, `if p is None: p = ...`).
    """
        import torch
        def fit(model, loader, opt=None, sched=None):
            opt = torch.optim.Adam(model.parameters(), lr=0.01) if opt is None else opt
            if sched is None:
                sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
            for x in loader:
                opt.zero_grad()
                model(x).backward()
                opt.step()
                sched.step()
        """,
    # The fallback built inside `try:` under `if p is None:` (a failed fallback handled there).
    """
        import warnings
        import torch
        class Fitter:
            def __init__(self, net, opt=None):
                if opt is None:
                    try:
                        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
                    except ValueError:
                        warnings.warn("no parameters: no optimizer")
                self.net, self.opt = net, opt
            def fit(self, batches):
                for x in batches:
                    self.opt.zero_grad()
                    self.net(x).sum().backward()
                    self.opt.step()
        """,
    # A literal that restates the torch class's own default changes nothing (LinearLR's
    # end_factor=1.0, StepLR's gamma=0.1, AdamW's weight_decay=0.01); a warm-up "from zero"
    # needs a tiny start_factor (LinearLR refuses 0).
    """
        import torch
        def train(model, loader, cfg):
            opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
            warm = torch.optim.lr_scheduler.LinearLR(opt, 1e-3, 1.0, total_iters=cfg.warmup)
            decay = torch.optim.lr_scheduler.StepLR(opt, cfg.every, gamma=0.1)
            for epoch in range(cfg.epochs):
                for x in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                    warm.step()
                decay.step()
        """,
    # A method solving for a value by gradient descent on a copy of it (a distribution's
    # mode) and returning it: a numerical procedure, not a training run.
    """
        import torch
        class Density:
            def mode(self, guess):
                z = torch.nn.Parameter(guess.detach().clone())
                opt = torch.optim.Adam([z], lr=0.05)
                for _ in range(50):
                    opt.zero_grad()
                    (-self.log_prob(z)).backward()
                    opt.step()
                return z.detach()
        """,
    # One optimizer step with no loop (a smoke test / API demo) is not a training run.
    """
        import torch
        if __name__ == "__main__":
            model = torch.nn.Linear(4, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            opt.zero_grad()
            model(torch.randn(3, 4)).sum().backward()
            opt.step()
        """,
    # One step on made-up tensors in a function no code of the file calls: a pretraining demo
    # (pi-zero-pytorch's recap_pretrain).
    """
        import torch
        def pretrain(state):
            model = Tiny(**state.config).to(state.device)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
            images = torch.randn(1, 3, 32, 32).to(state.device)
            labels = torch.zeros(1, dtype=torch.long)
            loss = model(images, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.save(model.state_dict(), state.path)
        """,
    # A leading block of named module-level constants, whatever their letter case.
    """
        import torch
        from torch.utils.data import DataLoader
        lr = 3e-4
        batch_size = 64
        num_epochs = 10
        model = Net()
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for epoch in range(num_epochs):
            for x in loader:
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
        """,
    # Optimising an input tensor (feature visualisation, style transfer) with a frozen, pretrained
    # model is not a training run.
    """
        import torch
        from torchvision import models
        model = models.resnet18(weights="IMAGENET1K_V1").eval()
        model.requires_grad_(False)
        img = torch.randn(1, 3, 224, 224, requires_grad=True)
        opt = torch.optim.Adam([img], lr=0.05)
        for epoch in range(200):
            opt.zero_grad()
            (-model(img)[0, 3]).backward()
            opt.step()
        """,
    # batch_size=1 is one sample at a time by design, also for a loader named train_loader.
    """
        import torch
        from torch.utils.data import DataLoader
        def loaders(ds, model):
            train_loader = DataLoader(ds, batch_size=1)
            opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            for x in train_loader:
                opt.zero_grad()
                model(x).backward()
                opt.step()
        """,
    # batch_size=1 restates DataLoader's default, also in a shuffled loader (pyrnn's example
    # that draws one batch to plot).
    """
        import torch
        def make_batch(seq_len):
            loader = torch.utils.data.DataLoader(Bits(seq_len), batch_size=1, shuffle=True)
            return [b for b in loader][0]
        """,

    # A clipping literal where the optimizer takes its lr (and the rest) from a config is a fixed
    # safety guard, not a forgotten knob (ultralytics trainer.py, yolov5 train.py).
    """
        import torch
        class Trainer:
            def __init__(self, model, args):
                self.model, self.args = model, args
                self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr0, momentum=args.momentum)
            def optimizer_step(self):
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
                self.optimizer.step()
        """,
    """
        import torch
        from utils import smart_optimizer
        def train(model, loader, opt, hyp):
            optimizer = smart_optimizer(model, opt.optimizer, hyp["lr0"], hyp["momentum"])
            for x in loader:
                model(x).backward()
                torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=5.0)
                optimizer.step()
        """,
    # The fallback built when the caller gave no scheduler (neuralforecast): the branch of
    # ``if self.lr_scheduler:`` that runs without one, the attribute set from a parameter.
    """
        import torch


        class Model:
            def __init__(self, lr_scheduler=None, decay_steps=100):
                self.lr_scheduler = lr_scheduler
                self.decay_steps = decay_steps

            def configure_optimizers(self, lr):
                optimizer = torch.optim.Adam(self.parameters(), lr=lr)
                if self.lr_scheduler:
                    scheduler = self.lr_scheduler(optimizer=optimizer)
                else:
                    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.decay_steps, gamma=0.5)
                return {"optimizer": optimizer, "lr_scheduler": scheduler}
        """,
    # The settings block after a preamble that only sets the import path (pyrnn's examples).
    """
        import sys

        sys.path.append("./")

        import torch
        from data import Digits

        batch_size = 64
        epochs = 10

        loader = torch.utils.data.DataLoader(Digits(), batch_size=batch_size, shuffle=True)
        model = torch.nn.Linear(64, 10)
        opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[1]))
        for epoch in range(int(sys.argv[2])):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
        """,
    # A base lr of 1 under a LambdaLR: the lambda gives the learning rate (phasenet).
    """
        import torch


        def train(model, loader, args):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1.0, weight_decay=args.weight_decay)
            schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda it: args.lr * min(1.0, it / 100))
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
                schedule.step()
        """,
    # L-BFGS's lr=1 is its default and the full quasi-Newton step (deepxde).
    """
        import torch
        def fit(model, x, y, steps):
            opt = torch.optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
            for _ in range(steps):
                def closure():
                    opt.zero_grad()
                    loss = ((model(x) - y) ** 2).mean()
                    loss.backward()
                    return loss
                opt.step(closure)
        """,
    # A script's module-level names are its settings in plain sight, wherever they stand and
    # whatever else reads the command line.
    """
            import sys

            print("starting")

            import torch
            from data import Digits

            batch_size = 64
            epochs = 10

            loader = torch.utils.data.DataLoader(Digits(), batch_size=batch_size, shuffle=True)
            model = torch.nn.Linear(64, 10)
            opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[1]))
            for epoch in range(int(sys.argv[2])):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
            """,
    # A script that takes nothing from outside its code, outside any package: every value is
    # in view where it is used.
    """
        import torch
        def train(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            for epoch in range(30):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
        """,
    # A configured script's module-level constant used by the loader.
    """
        import argparse
        import torch
        BATCH_SIZE = 64
        args = argparse.ArgumentParser().parse_args()
        loader = torch.utils.data.DataLoader(args.dataset, batch_size=BATCH_SIZE, shuffle=True)
        """,
    # An --lr option the code reads, through the parsed object handed on whole.
    """
        import argparse
        import torch
        def main(args):
            opt = torch.optim.SGD(args.model.parameters(), lr=args.lr)
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.1)
        main(parser.parse_args())
        """,
    # A script that never trains, beside a block of names: its loaders, shuffling ones too, are
    # iterated to show what they give (patrickloeber's 09_dataloader.py).
    """
        import torch
        num_epochs = 2
        loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
        for epoch in range(num_epochs):
            for i, (inputs, labels) in enumerate(loader):
                print(epoch, i, inputs.shape)
        """,
    # The option's dest= is what the code reads: `lr = args.learning_rate` uses `--lr`.
    Valid(
        """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("-l", "--lr", dest="learning_rate", type=float, default=1e-4)
            args = parser.parse_args()
            lr = args.learning_rate
            b1 = 0.5
            optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(b1, 0.9))
            for epoch in range(args.n_epochs):
                for x in loader:
                    optimizer.zero_grad()
                    model.loss(x).backward()
                    optimizer.step()
            """,
    ),
]


INVALID = [
    # A command line that sets one hyperparameter (--epochs) beside the GPU: the literal
    # learning rate bypasses it.
    Invalid(
        """
            import argparse
            import torch
            def main(args):
                model = build().to(f"cuda:{args.cuda}")
                optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
                fit(model, optimizer, epochs=args.epochs)
            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--cuda", type=int, default=0)
                parser.add_argument("--epochs", type=int, default=10)
                main(parser.parse_args())
            """,
        lines=(6,),
        messages=("learning rate 0.001 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
    ),
    # A library's example whose command line shows off one tuning option (--patience of an
    # early-stopping plugin) beside run settings: the optimizer's literals are reported, as in
    # any script that configures some values and writes others (avalanche's
    # all_mnist_early_stopping.py; no fact in the code tells it from the buggy fixture's train.py).
    Invalid(
        """
            import argparse
            import torch
            def main(args):
                model = build(args.mnist_type).to(f"cuda:{args.cuda}")
                optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
                strategy = Naive(model, optimizer, plugins=[EarlyStopping(args.patience)])
                strategy.train(stream())
            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--mnist_type", type=str, default="split")
                parser.add_argument("--cuda", type=int, default=0)
                parser.add_argument("--patience", type=int, default=3)
                main(parser.parse_args())
            """,
        lines=(6, 6),
        messages=("learning rate 0.001 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",
                  "momentum 0.9 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument"),
    ),
    # A function of a script of its own that takes the epochs and names its other settings in a
    # block of its own: a literal left out of that block is reported as before.
    Invalid(
        """
            import torch
            def train(model, data, epochs=10):
                batch_size = 64
                loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True)
                opt = torch.optim.SGD(model.parameters(), lr=0.01)
                for epoch in range(epochs):
                    for x, y in loader:
                        opt.zero_grad()
                        torch.nn.functional.cross_entropy(model(x), y).backward()
                        opt.step()
            if __name__ == "__main__":
                train(build(), load(), epochs=2)
            """,
        lines=(6,),
        messages=("learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
    ),
    # A script whose only config dicts name no hyperparameter (ignite's assets/tldr/teaser.py):
    # it reads its settings from a config object (``config["model"]``), and its function reads
    # lr and momentum from it with defaults (``config.get("learning_rate", 0.1)``): those reads
    # are where the function takes its settings, whatever a caller's dict sets, and gamma is
    # left out of them, as the literal left out of a function's block above is. That today's
    # dicts set no hyperparameter puts gamma no closer to them (issue 39, reviewed: reported).
    Invalid(
        """
            import torch
            from torch.optim.lr_scheduler import StepLR
            def initialize(config):
                model = build(config["model"])
                optimizer = torch.optim.SGD(model.parameters(), lr=config.get("learning_rate", 0.1),
                                            momentum=config.get("momentum", 0.9))
                scheduler = StepLR(optimizer, step_size=config["iters_per_epoch"], gamma=0.9)
                return model, optimizer, scheduler
            def training(local_rank, config):
                model, optimizer, scheduler = initialize(config)
                fit(model, optimizer, scheduler, max_epochs=config.get("max_epochs", 3))
            if __name__ == "__main__":
                config = {"model": "resnet18", "dataset": "cifar10"}
                launch(training, config)
            """,
        lines=(8,),
        messages=("`gamma` 0.9 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be swept, "
                  "logged or reproduced; read it from a config or a command-line argument",),
    ),
    # A script's function whose interface takes the epochs, in a file with a command line of one
    # hyperparameter: the literal bypasses the configuration.
    Invalid(
        """
            import argparse
            import torch
            def train(model, loader, epochs=10):
                opt = torch.optim.Adam(model.parameters(), lr=3e-4)
                for epoch in range(epochs):
                    for x, y in loader:
                        opt.zero_grad()
                        model.loss(x, y).backward()
                        opt.step()
            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--epochs", type=int, default=10)
                train(build(), load(), parser.parse_args().epochs)
            """,
        lines=(5,),
        messages=("learning rate 3e-4 is hard-coded in `torch.optim.Adam(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
    ),
    # Named for a benchmark but timing nothing: a research script training on a benchmark
    # data set takes its settings from the command line like any other.
    Invalid(
        """
            import argparse
            import torch
            def main(args):
                model = build(args.arch)
                optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
                train(model, optimizer, args.epochs)
            main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6,),
        messages=("momentum 0.9 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
        path="benchmarks/train_imagenet_benchmark.py",
    ),
    # One step in a function no code of the file calls, on data it is given: another file may
    # call it once per batch.
    Invalid(
        """
            import argparse
            import torch
            def train_step(state, batch):
                model = Tiny(**state.config).to(state.device)
                optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
                images = torch.randn(1, 3, 32, 32).to(state.device)
                loss = model(images, batch.to(state.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6,),
        messages=("learning rate 1e-4 is hard-coded in `torch.optim.Adam(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
    ),
    Invalid(
        """
            import torch


            def train(model, loader, args):
                optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=args.weight_decay)
                schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda it: args.lr * min(1.0, it / 100))
                for x in loader:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    optimizer.step()
                    schedule.step()
            """,
        lines=(6,),
        messages=(f"learning rate 0.1 is hard-coded in `torch.optim.AdamW(...)`, {_WHY}",),
    ),
    # ``if not warm_start:`` tests a flag, not an object the caller may give (ESRNN).
    Invalid(
        """
            import torch


            class Forecaster:
                def __init__(self, lr, step_size):
                    self.lr, self.step_size = lr, step_size

                def fit(self, model, loader, warm_start=False):
                    if not warm_start:
                        self.opt = torch.optim.Adam(model.parameters(), lr=self.lr)
                        self.scheduler = torch.optim.lr_scheduler.StepLR(self.opt, step_size=self.step_size, gamma=0.9)
                    for x in loader:
                        self.opt.zero_grad()
                        model(x).sum().backward()
                        self.opt.step()
                    self.scheduler.step()
            """,
        lines=(12,),
        messages=(f"`gamma` 0.9 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, {_WHY}",),
    ),
    # The same branch, but the attribute is not the caller's: the class builds it itself.
    Invalid(
        """
            import argparse
            import torch


            class Model:
                def __init__(self, lr_scheduler=None, decay_steps=100):
                    self.lr_scheduler = make_scheduler()
                    self.decay_steps = decay_steps

                def configure_optimizers(self, lr):
                    optimizer = torch.optim.Adam(self.parameters(), lr=lr)
                    if self.lr_scheduler:
                        scheduler = self.lr_scheduler(optimizer=optimizer)
                    else:
                        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.decay_steps, gamma=0.5)
                    return {"optimizer": optimizer, "lr_scheduler": scheduler}
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(16,),
        messages=(f"`gamma` 0.5 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, {_WHY}",),
    ),
    # Any other L-BFGS step size is a choice.
    Invalid(
        """
            import argparse
            import torch
            def fit(model, x, y, steps):
                opt = torch.optim.LBFGS(model.parameters(), lr=0.5, line_search_fn="strong_wolfe")
                for _ in range(steps):
                    def closure():
                        opt.zero_grad()
                        loss = ((model(x) - y) ** 2).mean()
                        loss.backward()
                        return loss
                    opt.step(closure)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(f"learning rate 0.5 is hard-coded in `torch.optim.LBFGS(...)`, {_WHY}",),
    ),
    # Restored only when resuming: a fresh run trains with the literal.
    Invalid(
        """
            import argparse
            import torch
            def fit(model, loader, resume=None):
                optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
                if resume:
                    optimizer.load_state_dict(torch.load(resume, weights_only=True)["optimizer"])
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=("learning rate 0.001 is hard-coded in `torch.optim.Adam(...)`, so it cannot be swept, logged or "
                  "reproduced; read it from a config or a command-line argument",),
    ),
    # Built inside `try:` but not under an `if opt is None:` test: the run's own setting.
    Invalid(
        """
            import argparse
            import torch
            def fit(net, batches, opt=None):
                try:
                    opt = torch.optim.SGD(net.parameters(), lr=0.05)
                except ValueError:
                    return
                for x in batches:
                    opt.zero_grad()
                    net(x).sum().backward()
                    opt.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6,),
        messages=(f"learning rate 0.05 is hard-coded in `torch.optim.SGD(...)`, {_WHY}",),
    ),
    # Values other than the torch defaults, and a learning rate even when it is the default.
    Invalid(
        """
            import torch
            def train(model, loader, cfg):
                opt = torch.optim.Adam(model.parameters(), lr=1e-3)
                warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=0.5, total_iters=cfg.n)
                for epoch in range(cfg.epochs):
                    for x in loader:
                        opt.zero_grad()
                        model(x).sum().backward()
                        opt.step()
                        warm.step()
            """,
        lines=(4, 5, 5),
        messages=(
            f"learning rate 1e-3 is hard-coded in `torch.optim.Adam(...)`, {_WHY}",
            f"`start_factor` 0.1 is hard-coded in `torch.optim.lr_scheduler.LinearLR(...)`, {_WHY}",
            f"`end_factor` 0.5 is hard-coded in `torch.optim.lr_scheduler.LinearLR(...)`, {_WHY}",
        ),
    ),
    # Weights fitted from a fresh start (not a copy of a value) are a model being trained.
    Invalid(
        """
            import argparse
            import torch
            def fit_line(xs, ys):
                w = torch.nn.Parameter(torch.zeros(2))
                opt = torch.optim.SGD([w], lr=0.1)
                for _ in range(100):
                    opt.zero_grad()
                    ((xs * w[0] + w[1] - ys) ** 2).mean().backward()
                    opt.step()
                return w.detach()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6,),
        messages=(f"learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, {_WHY}",),
    ),
    # ... but not beside a literal learning rate, nor an optimizer left at its default lr.
    Invalid(
        """
            import torch
            def train(model, loader, args):
                opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=args.momentum)
                for x in loader:
                    model(x).backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
                    opt.step()
            """,
        lines=(4, 7),
        messages=(
            "learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
            "gradient-clipping max_norm 10.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Keyword learning rate and momentum of a torch.optim optimizer.
    Invalid(
        """
            import argparse
            import torch
            def train(model):
                opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5, 5),
        messages=(
            "learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged "
            "or reproduced; read it from a config or a command-line argument",
            "momentum 0.9 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Positional learning rate; an aliased import.
    Invalid(
        """
            import argparse
            from torch import optim as o
            def train(model):
                return o.SGD(model.parameters(), 0.1)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(
            "learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
        ),
    ),
    # A lower-case local assigned only a literal: reported at the literal.
    Invalid(
        """
            import argparse
            import torch
            def train(model):
                lr = 1e-3
                opt = torch.optim.Adam(model.parameters(), lr=lr)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(
            "learning rate 1e-3 is hard-coded: `lr` is assigned only this literal and passed to "
            "`torch.optim.Adam(...)`, so it cannot be swept, logged or reproduced; read it from a config "
            "or a command-line argument",
        ),
    ),
    # Epoch loop bound, directly and through a local; range(1, N + 1).
    Invalid(
        """
            import argparse
            def train(model, loader, opt):
                for epoch in range(30):
                    train_one_epoch(model, loader, opt)
                num_epochs = 5
                for ep in range(1, num_epochs + 1):
                    train_one_epoch(model, loader, opt)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(4, 6),
        messages=(
            "epoch count 30 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
            "epoch count 5 is hard-coded: `num_epochs` is assigned only this literal and bounds the "
            "epoch loop, so it cannot be swept, logged or reproduced; read it from a config or a "
            "command-line argument",
        ),
    ),
    # A loop variable not named like an epoch, whose body runs a training data loop.
    Invalid(
        """
            import argparse
            def train(model, loader, optimizer):
                for i in range(10):
                    for x, y in loader:
                        optimizer.zero_grad()
                        model(x, y).backward()
                        optimizer.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(4,),
        messages=(
            "epoch count 10 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Scheduler arguments, keyword and positional; milestones as a list.
    Invalid(
        """
            from torch.optim import lr_scheduler
            def schedules(opt, cfg):
                a = lr_scheduler.StepLR(opt, 30, gamma=0.5)
                b = lr_scheduler.MultiStepLR(opt, milestones=[30, 80], gamma=cfg.gamma)
                c = lr_scheduler.OneCycleLR(opt, 0.1, total_steps=cfg.steps)
            """,
        lines=(4, 4, 5, 6),
        messages=(
            "`step_size` 30 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be "
            "swept, logged or reproduced; read it from a config or a command-line argument",
            "`gamma` 0.5 is hard-coded in `torch.optim.lr_scheduler.StepLR(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
            "`milestones` [30, 80] is hard-coded in `torch.optim.lr_scheduler.MultiStepLR(...)`, so it "
            "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            "maximum learning rate 0.1 is hard-coded in `torch.optim.lr_scheduler.OneCycleLR(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # DataLoader batch size and gradient clipping in script top-level code.
    Invalid(
        """
            import argparse
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=64, num_workers=4)
            for x in loader:
                model(x).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5, 8),
        messages=(
            "batch size 64 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
            "gradient-clipping max_norm 1.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    Invalid(
        """
            import argparse
            import torch
            def train(model, loader):
                opt = torch.optim.Adam(model.parameters())
                for x in loader:
                    model(x).backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                    opt.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(8,),
        messages=(
            "gradient-clipping max_norm 0.5 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # A trainer taking its knobs as arguments (``lr=train_lr``) should take the norm too
    # (denoising_diffusion guided_diffusion.py:932; its sibling trainers take max_grad_norm).
    Invalid(
        """
            import torch
            class Trainer:
                def __init__(self, model, train_lr=1e-4):
                    self.model = model
                    self.opt = torch.optim.Adam(model.parameters(), lr=train_lr)
                def train(self, accelerator, loader):
                    for x in loader:
                        accelerator.backward(self.model(x))
                        accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                        self.opt.step()
            """,
        lines=(10,),
        messages=(
            "gradient-clipping max_norm 1.0 is hard-coded in `accelerator.clip_grad_norm_(...)`, so it "
            "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # The same value in both branches of one ``if`` is one finding; no optimizer is built in
    # the file, so nothing says the clipping is a fixed guard beside configured values.
    Invalid(
        """
            import argparse
            import torch
            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                def optimizer_step(self):
                    self.scaler.unscale_(self.optimizer)
                    if self.device.type == "npu":
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0, foreach=False)
                    else:
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
                    self.scaler.step(self.optimizer)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(10,),
        messages=(
            "gradient-clipping max_norm 10.0 is hard-coded in `torch.nn.utils.clip_grad_norm_(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Hugging Face TrainingArguments and schedule factories; Lightning Trainer.
    Invalid(
        """
            import argparse
            from transformers import TrainingArguments, get_linear_schedule_with_warmup
            import pytorch_lightning as pl
            def main(opt, n):
                args = TrainingArguments("out", learning_rate=2e-5, per_device_train_batch_size=16, num_train_epochs=3)
                sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=500, num_training_steps=n)
                trainer = pl.Trainer(max_epochs=10, accelerator="gpu")
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6, 6, 6, 7, 8),
        messages=(
            "learning rate 2e-5 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
            "swept, logged or reproduced; read it from a config or a command-line argument",
            "batch size 16 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
            "swept, logged or reproduced; read it from a config or a command-line argument",
            "epoch count 3 is hard-coded in `transformers.TrainingArguments(...)`, so it cannot be "
            "swept, logged or reproduced; read it from a config or a command-line argument",
            "warmup length 500 is hard-coded in `transformers.get_linear_schedule_with_warmup(...)`, so "
            "it cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            "epoch count 10 is hard-coded in `pytorch_lightning.Trainer(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # A same-file optimizer subclass: keyword and positional learning rate.
    Invalid(
        """
            import argparse
            import torch
            class MyAdam(torch.optim.Adam):
                def __init__(self, params, lr=1e-3, weight_decay=0.0):
                    super().__init__(params, lr=lr, weight_decay=weight_decay)
            class WarmAdam(MyAdam):
                pass
            def build(model):
                a = MyAdam(model.parameters(), lr=3e-4)
                b = WarmAdam(model.parameters(), 3e-4, 0.01)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(10, 11, 11),
        messages=(
            "learning rate 3e-4 is hard-coded in `MyAdam(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
            "learning rate 3e-4 is hard-coded in `WarmAdam(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
            "weight decay 0.01 is hard-coded in `WarmAdam(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Accelerate / Fabric clipping and a LightningModule's configure_optimizers.
    Invalid(
        """
            import argparse
            import torch
            import lightning as L
            class Model(L.LightningModule):
                def configure_optimizers(self):
                    return torch.optim.AdamW(self.parameters(), lr=1e-3, weight_decay=0.05)
            def loop(accelerator, fabric, model, opt):
                accelerator.clip_grad_norm_(model.parameters(), 0.5)
                fabric.clip_gradients(model, opt, max_norm=2.0)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(7, 7, 9, 10),
        messages=(
            "learning rate 1e-3 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
            "or reproduced; read it from a config or a command-line argument",
            "weight decay 0.05 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
            "or reproduced; read it from a config or a command-line argument",
            "gradient-clipping max_norm 0.5 is hard-coded in `accelerator.clip_grad_norm_(...)`, so it "
            "cannot be swept, logged or reproduced; read it from a config or a command-line argument",
            "gradient-clipping max_norm 2.0 is hard-coded in `fabric.clip_gradients(...)`, so it cannot "
            "be swept, logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # Option: extra names to watch, in any call; test files checked when asked.
    Invalid(
        """
            def build(cfg):
                return make_schedule(cfg.opt, warmup_epochs=5)
            """,
        lines=(3,),
        messages=(
            "`warmup_epochs` 5 is hard-coded in `make_schedule(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
        ),
        options={"extend-names": ["warmup_epochs"]},
    ),
    Invalid(
        """
            import argparse
            import torch
            def test_fit(model):
                torch.optim.SGD(model.parameters(), lr=0.5)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(
            "learning rate 0.5 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
            "reproduced; read it from a config or a command-line argument",
        ),
        path="tests/test_fit.py",
        options={"skip-tests": False},
    ),
    # DataLoaders: one that shuffles or that a train_dataloader hook builds, anywhere; any
    # other one that is not for evaluation in a file that trains.
    Invalid(
        """
            import argparse
            import torch
            from torch.utils.data import DataLoader
            def loaders(train_ds, extra_ds):
                train_loader = DataLoader(train_ds, batch_size=128)
                extra_loader = DataLoader(extra_ds, batch_size=256)
                return train_loader, extra_loader
            def train_dataloader(ds):
                return DataLoader(ds, 32)
            def fit(model, loader):
                opt = torch.optim.SGD(model.parameters(), lr=model.lr)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(6, 7, 10),
        messages=(
            "batch size 128 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
            "batch size 256 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
            "batch size 32 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # tqdm around the range, and the fixture's shape.
    Invalid(
        """
            import argparse
            from tqdm import tqdm
            def fit(model, loader, opt):
                for epoch in tqdm(range(20)):
                    model.train()
                    for x in loader:
                        model(x).backward()
                        opt.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(
            "epoch count 20 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # An epoch count written as an offset from the start epoch.
    Invalid(
        """
            import argparse
            def train(model, loader, opt, start_epoch):
                for epoch in range(start_epoch, start_epoch + 200):
                    train_one_epoch(model, loader, opt)
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(4,),
        messages=(
            "epoch count 200 is hard-coded in the epoch loop's `range(...)`, so it cannot be swept, "
            "logged or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # The stepping loop writes every param group's lr, so the constructor's lr never takes effect;
    # its weight decay does.
    Invalid(
        """
            import argparse
            import torch
            def make_optimizer(model):
                return torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
            def train(model, loader, schedule):
                opt = make_optimizer(model)
                for step, (x, y) in enumerate(loader):
                    opt.zero_grad()
                    model(x, y).backward()
                    for group in opt.param_groups:
                        group["lr"] = schedule(step)
                    opt.step()
            if __name__ == "__main__":
                main(argparse.ArgumentParser().parse_args())
            """,
        lines=(5,),
        messages=(
            "weight decay 0.1 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged "
            "or reproduced; read it from a config or a command-line argument",
        ),
    ),
    # A value the script sets and only prints, bypassed by a literal: changing it changes nothing.
    Invalid(
        """
            import torch
            learning_rate = 0.01
            print(f"training with lr={learning_rate}")
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
        lines=(6,),
        messages=("learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, although `learning_rate` (line 3) sets "
                  "it: changing `learning_rate` changes nothing; use `learning_rate` here",),
    ),
    # A command-line option nothing reads.
    Invalid(
        """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--lr", type=float, default=0.01)
            parser.add_argument("--epochs", type=int, default=10)
            args = parser.parse_args()
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
            for epoch in range(args.epochs):
                optimizer.step()
            """,
        lines=(9,),
        messages=("learning rate 0.001 is hard-coded in `torch.optim.Adam(...)`, although `--lr` (line 5) sets it: "
                  "changing `--lr` changes nothing; use the parsed `--lr` here",),
    ),
    # A setting read only to be logged; an epoch count set and never read, in a notebook's shape.
    Invalid(
        """
            import torch
            num_epochs = 10
            def fit(model, loader, cfg):
                print("lr", cfg.lr)
                opt = torch.optim.Adam(model.parameters(), lr=3e-4)
                for epoch in range(20):
                    for x, y in loader:
                        opt.zero_grad()
                        torch.nn.functional.mse_loss(model(x), y).backward()
                        opt.step()
            """,
        lines=(6, 7),
        messages=(
            "learning rate 3e-4 is hard-coded in `torch.optim.Adam(...)`, although `cfg.lr` (line 5) sets it: "
            "changing `cfg.lr` changes nothing; use `cfg.lr` here",
            "epoch count 20 is hard-coded in the epoch loop's `range(...)`, although `num_epochs` (line 3) sets it: "
            "changing `num_epochs` changes nothing; use `num_epochs` here",
        ),
    ),
    # The same block of names in a function (a notebook exported to a script, a homework's
    # train_test()): an epoch count written into the loop is left out of it.
    Invalid(
        """
            import torch
            def train_test(model, trainset):
                batch_size = 128
                LR = 1e-4
                loader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True)
                optimizer = torch.optim.Adam(model.parameters(), lr=LR)
                for epoch in range(100):
                    for x, y in loader:
                        optimizer.zero_grad()
                        torch.nn.functional.cross_entropy(model(x), y).backward()
                        optimizer.step()
            """,
        lines=(8,),
        messages=("epoch count 100 is hard-coded in the epoch loop's `range(...)`, while `train_test` names its "
                  "other settings (`batch_size`, line 4): name this one with them",),
    ),
    # A literal that bypasses a setting nothing reads is reported whatever its value: DataLoader's
    # default batch_size=1 beside an unread --batch_size, a zero weight decay beside `weight_decay`.
    Invalid(
        """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--batch_size", type=int, default=20)
            args = parser.parse_args()
            def train(model, dataset, optimizer):
                for docs in torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=True):
                    optimizer.zero_grad()
                    model.loss(docs).backward()
                    optimizer.step()
            """,
        lines=(8,),
        messages=("batch size 1 is hard-coded in `torch.utils.data.DataLoader(...)`, although `--batch_size` "
                  "(line 5) sets it: changing `--batch_size` changes nothing; use the parsed `--batch_size` here",),
    ),
    Invalid(
        """
            import torch
            lr = 1e-4
            weight_decay = 0.01
            epochs = 3
            optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
            for epoch in range(epochs):
                for batch in loader:
                    model(**batch).loss.backward()
                    optimizer.step()
            """,
        lines=(6,),
        messages=("weight decay 0.0 is hard-coded in `torch.optim.AdamW(...)`, although `weight_decay` (line 4) "
                  "sets it: changing `weight_decay` changes nothing; use `weight_decay` here",),
    ),
    # A module-level name is the script's configuration, unless the option for the same value
    # is never read: `lr = 0.01` under an unread `--lr` (dest= honoured) bypasses it.
    Invalid(
        """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("-l", "--lr", dest="learning_rate", type=float, default=1e-4)
            args = parser.parse_args()
            n_epochs = args.n_epochs
            lr = 0.01
            optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.5, 0.9))
            for epoch in range(n_epochs):
                for x in loader:
                    optimizer.zero_grad()
                    model.loss(x).backward()
                    optimizer.step()
            """,
        lines=(8,),
        messages=("learning rate 0.01 is hard-coded: `lr` is assigned only this literal and passed to "
                  "`torch.optim.Adam(...)`, although `--lr` (line 5) sets it: changing `--lr` changes nothing; "
                  "use the parsed `--lr` here",),
    ),
]

VALID += [
    # A flat script that keeps some settings in named values (hunkim's "Training settings"
    # block) and writes others inline at the top level: every value is in plain view, where
    # the user edits it, as a notebook's are (issue 39: single-file scripts whose values are
    # all visible get no TL004; this was reported before as "while the script names its
    # other settings": on the learners' corpus a style nudge, no run goes wrong for it).
    """
            import torch
            batch_size = 64
            epochs = 10
            model = torch.nn.Linear(784, 10)
            loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=True)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
            for epoch in range(epochs):
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    optimizer.step()
            """,
]
