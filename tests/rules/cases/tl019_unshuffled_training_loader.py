"""TL019's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl019_unshuffled_training_loader import message
from torchlint.rule import Invalid, Valid

_LOOP = """
        for epoch in range(10):
            for x, y in {it}:
                optimizer.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
        """

VALID: list[Valid | str] = [
    # The fix.
    """
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
        """ + _LOOP.format(it="train_loader"),
    # shuffle=False stated: the code's own choice (a time series in order).
    """
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        train_loader = DataLoader(windows, batch_size=64, shuffle=False)
        """ + _LOOP.format(it="train_loader"),
    # A sampler decides the order.
    """
        import torch.nn.functional as F
        from torch.utils.data import DataLoader, DistributedSampler
        train_loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
        """ + _LOOP.format(it="train_loader"),
    # Positional shuffle, and **kwargs that may hold it.
    """
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        a = DataLoader(train_set, 64, True)
        b = DataLoader(train_set, **loader_kwargs)
        """ + _LOOP.format(it="a") + _LOOP.format(it="b"),
    # An evaluation loader in an evaluation loop: order does not matter there.
    """
        import torch
        from torch.utils.data import DataLoader
        val_loader = DataLoader(val_set, batch_size=256)
        with torch.no_grad():
            for x, y in val_loader:
                print(model(x).argmax(1).eq(y).sum())
        """,
    # An IterableDataset of the file: a loader cannot shuffle it.
    """
        import torch.nn.functional as F
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                yield from read_shards()
        train_loader = DataLoader(Stream(), batch_size=64)
        """ + _LOOP.format(it="train_loader"),
    # A loader that no training loop iterates (only printed, or passed on).
    """
        from torch.utils.data import DataLoader
        loader = DataLoader(train_set, batch_size=64)
        print(len(loader))
        trainer.fit(model, loader)
        """,
    # A loader passed as a parameter: where it was built is not known here.
    """
        import torch.nn.functional as F
        def train(model, optimizer, loader):
            for x, y in loader:
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
        """,
]

INVALID: list[Invalid] = [
    # The page's example.
    Invalid("""
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64)

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
        """, lines=(5,), messages=(message("train_loader"),),
        fixed="""
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64, shuffle=True)

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
        """),
    # Through enumerate and tqdm, inside a function, torch.utils.data spelled in full.
    Invalid("""
        import torch
        import torch.nn.functional as F
        from tqdm import tqdm
        def main(model, optimizer, dataset):
            loader = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=4)
            for epoch in range(3):
                for i, (x, y) in enumerate(tqdm(loader)):
                    optimizer.zero_grad()
                    F.nll_loss(model(x), y).backward()
                    optimizer.step()
        """, lines=(6,), messages=(message("loader"),),
        fixed="""
        import torch
        import torch.nn.functional as F
        from tqdm import tqdm
        def main(model, optimizer, dataset):
            loader = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=4, shuffle=True)
            for epoch in range(3):
                for i, (x, y) in enumerate(tqdm(loader)):
                    optimizer.zero_grad()
                    F.nll_loss(model(x), y).backward()
                    optimizer.step()
        """),
    # Built in the loop header itself.
    Invalid("""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        for x, y in DataLoader(train_set, batch_size=16):
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
        """, lines=(4,), messages=(message("DataLoader(...)"),),
        fixed="""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        for x, y in DataLoader(train_set, batch_size=16, shuffle=True):
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
        """),
]

INVALID += [
    # Kept on self in __init__, iterated in a method.
    Invalid("""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        class Trainer:
            def __init__(self, model, optimizer, train_set):
                self.model, self.optimizer = model, optimizer
                self.loader = DataLoader(train_set, batch_size=32)
            def epoch(self):
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    F.cross_entropy(self.model(x), y).backward()
                    self.optimizer.step()
        """, lines=(7,), messages=(message("self.loader"),),
        fixed="""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        class Trainer:
            def __init__(self, model, optimizer, train_set):
                self.model, self.optimizer = model, optimizer
                self.loader = DataLoader(train_set, batch_size=32, shuffle=True)
            def epoch(self):
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    F.cross_entropy(self.model(x), y).backward()
                    self.optimizer.step()
        """),
    # shuffle=False over a torchvision training set (stored in class order).
    Invalid("""
        import torch
        from torchvision import datasets
        train_set = datasets.CIFAR10("data", train=True, download=True)
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=128, shuffle=False)
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        """, lines=(5,), messages=(message("train_loader"),),
        fixed="""
        import torch
        from torchvision import datasets
        train_set = datasets.CIFAR10("data", train=True, download=True)
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=128, shuffle=True)
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        """),
    # A sampler that is None outside distributed runs.
    Invalid("""
        import torch
        from torch.utils.data import DataLoader
        sampler = torch.utils.data.distributed.DistributedSampler(ds) if distributed else None
        loader = DataLoader(ds, batch_size=16, sampler=sampler)
        for imgs, targets in loader:
            optimizer.zero_grad()
            model.loss(imgs, targets).backward()
            optimizer.step()
        """, lines=(5,), messages=(message("loader"),),
        fixed="""
        import torch
        from torch.utils.data import DataLoader
        sampler = torch.utils.data.distributed.DistributedSampler(ds) if distributed else None
        loader = DataLoader(ds, batch_size=16, sampler=sampler, shuffle=True)
        for imgs, targets in loader:
            optimizer.zero_grad()
            model.loss(imgs, targets).backward()
            optimizer.step()
        """),
    # Through iter() and tqdm.
    Invalid("""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from tqdm import tqdm
        dl = DataLoader(train_ds, batch_size=8, num_workers=2)
        for epoch in range(2):
            for xb, yb in tqdm(iter(dl)):
                loss = F.mse_loss(model(xb), yb)
                loss.backward()
                opt.step()
                opt.zero_grad()
        """, lines=(5,), messages=(message("dl"),),
        fixed="""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from tqdm import tqdm
        dl = DataLoader(train_ds, batch_size=8, num_workers=2, shuffle=True)
        for epoch in range(2):
            for xb, yb in tqdm(iter(dl)):
                loss = F.mse_loss(model(xb), yb)
                loss.backward()
                opt.step()
                opt.zero_grad()
        """),
    # The dataset first and only positional; batch size by keyword.
    Invalid("""
        import torch
        from torch.utils.data import DataLoader
        def run(model, opt, dataset):
            loader = DataLoader(dataset, batch_size=64, drop_last=True, pin_memory=True)
            for batch in loader:
                opt.zero_grad()
                model(**batch).loss.backward()
                opt.step()
        """, lines=(5,), messages=(message("loader"),),
        fixed="""
        import torch
        from torch.utils.data import DataLoader
        def run(model, opt, dataset):
            loader = DataLoader(dataset, batch_size=64, drop_last=True, pin_memory=True, shuffle=True)
            for batch in loader:
                opt.zero_grad()
                model(**batch).loss.backward()
                opt.step()
        """),
]

VALID += [
    # Synthetic data freshly drawn at random (a slide's listing): i.i.d. samples have no order
    # for shuffling to undo.
    """
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        x_train = torch.rand(80000, 100)
        y_train = torch.randint(10, (80000,), dtype=torch.long)
        train_dataset = TensorDataset(x_train, y_train)
        train_loader = DataLoader(train_dataset, batch_size=32)
        """ + _LOOP.format(it="train_loader"),
    # A synthetic regression: targets a fixed function of each row of random inputs, plus noise.
    """
        import numpy as np
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        true_w = torch.tensor([2.0, -3.4])
        X = torch.from_numpy(np.random.normal(0, 1, (1000, 2))).float()
        y = (X @ true_w + 4.2 + 0.01 * torch.randn(1000)).reshape(-1, 1)
        loader = DataLoader(TensorDataset(X, y), batch_size=10)
        """ + _LOOP.format(it="loader"),
]

INVALID += [
    # Random inputs, but labels in blocks by position: the order is the labels' order.
    Invalid("""
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        x = torch.randn(1000, 8)
        y = torch.arange(1000) // 100
        loader = DataLoader(TensorDataset(x, y), batch_size=10)
        for epoch in range(10):
            for xb, yb in loader:
                optimizer.zero_grad()
                F.cross_entropy(model(xb), yb).backward()
                optimizer.step()
        """, lines=(7,), messages=(message("loader"),),
        fixed="""
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        x = torch.randn(1000, 8)
        y = torch.arange(1000) // 100
        loader = DataLoader(TensorDataset(x, y), batch_size=10, shuffle=True)
        for epoch in range(10):
            for xb, yb in loader:
                optimizer.zero_grad()
                F.cross_entropy(model(xb), yb).backward()
                optimizer.step()
        """),
    # Random draws, then sorted in place: the rows come in order.
    Invalid("""
        import numpy as np
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        xs = np.random.rand(500)
        xs.sort()
        ds = TensorDataset(torch.from_numpy(xs), torch.from_numpy(np.sin(xs)))
        loader = DataLoader(ds, batch_size=25)
        for epoch in range(10):
            for xb, yb in loader:
                optimizer.zero_grad()
                F.mse_loss(model(xb), yb).backward()
                optimizer.step()
        """, lines=(9,), messages=(message("loader"),),
        fixed="""
        import numpy as np
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        xs = np.random.rand(500)
        xs.sort()
        ds = TensorDataset(torch.from_numpy(xs), torch.from_numpy(np.sin(xs)))
        loader = DataLoader(ds, batch_size=25, shuffle=True)
        for epoch in range(10):
            for xb, yb in loader:
                optimizer.zero_grad()
                F.mse_loss(model(xb), yb).backward()
                optimizer.step()
        """),
    # Tensors loaded from disk: real data, stored in whatever order it was saved.
    Invalid("""
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        x, y = torch.load("features.pt"), torch.load("labels.pt")
        loader = DataLoader(dataset=TensorDataset(x, y), batch_size=64)
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
        """, lines=(6,), messages=(message("loader"),),
        fixed="""
        import torch
        import torch.nn.functional as F
        from torch.utils.data import TensorDataset, DataLoader
        x, y = torch.load("features.pt"), torch.load("labels.pt")
        loader = DataLoader(dataset=TensorDataset(x, y), batch_size=64, shuffle=True)
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
        """),
]
