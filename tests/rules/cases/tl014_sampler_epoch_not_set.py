"""TL014's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl014_sampler_epoch_not_set import iterable_message, sampler_message
from torchlint.rule import Invalid


VALID = [
    # The fix: set_epoch at the start of each epoch.
    """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=64, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                train_step(x, y)
        """,
    # Through the loader: loader.sampler.set_epoch(epoch).
    """
        from torch.utils.data import DataLoader, DistributedSampler
        train_loader = DataLoader(ds, sampler=DistributedSampler(ds), batch_size=32)
        for epoch in range(args.epochs):
            train_loader.sampler.set_epoch(epoch)
            for batch in train_loader:
                step(batch)
        """,
    # An evaluation sampler: no shuffling to vary.
    """
        from torch.utils.data import DataLoader, DistributedSampler
        val_sampler = DistributedSampler(val_set, shuffle=False)
        val_loader = DataLoader(val_set, sampler=val_sampler)
        for epoch in range(epochs):
            for batch in val_loader:
                evaluate(batch)
        """,
    # Lightning calls set_epoch itself.
    """
        import lightning as L
        from torch.utils.data import DataLoader, DistributedSampler
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        trainer = L.Trainer(max_epochs=10, strategy="ddp")
        trainer.fit(model, loader)
        """,
    # Accelerate prepares the loader (and sets its epoch).
    """
        from accelerate import Accelerator
        from torch.utils.data import DataLoader, DistributedSampler
        accelerator = Accelerator()
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        model, opt, loader = accelerator.prepare(model, opt, loader)
        for epoch in range(epochs):
            for batch in loader:
                step(batch)
        """,
    # One pass only: no epochs to vary (a helper that iterates it once).
    """
        from torch.utils.data import DataLoader, DistributedSampler
        def consume(it):
            for batch in it:
                step(batch)
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        consume(loader)
        """,
    # ... or a loop of its own.
    """
        from torch.utils.data import DataLoader, DistributedSampler
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        for batch in loader:
            step(batch)
        """,
    # The epoch's training in another module receives the loader (it may set the epoch).
    """
        from torch.utils.data import DataLoader, DistributedSampler
        from engine import train_one_epoch
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        for epoch in range(epochs):
            train_one_epoch(model, loader, epoch)
        """,
    # An IterableDataset that shards itself by worker.
    """
        import torch
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                info = torch.utils.data.get_worker_info()
                start = 0 if info is None else info.id
                step = 1 if info is None else info.num_workers
                yield from self.items[start::step]
        loader = DataLoader(Stream(), num_workers=4)
        """,
    # ... or that is read in the main process only.
    """
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                yield from open(self.path)
        loader = DataLoader(Stream(), num_workers=0)
        """,
    # ... or configured per worker by a worker_init_fn.
    """
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                yield from range(self.start, self.end)
        loader = DataLoader(Stream(), num_workers=4, worker_init_fn=split_range)
        """,
    # ... or shards by rank (and the stream is split per node upstream).
    """
        from torch.utils.data import DataLoader, IterableDataset
        from datasets.distributed import split_dataset_by_node
        class Shards(IterableDataset):
            def __iter__(self):
                yield from split_dataset_by_node(self.data, rank=self.rank, world_size=self.world_size)
        loader = DataLoader(Shards(), num_workers=8)
        """,
    # The loader handed to a trainer that reads it once (one evaluation pass, no epochs).
    """
        from torch.utils.data import DataLoader, DistributedSampler
        class Evaluator:
            def __init__(self, model, loader):
                self.model = model
                self.loader = loader
            def run(self):
                for batch in self.loader:
                    self.model(batch)
        sampler = DistributedSampler(test_set)
        loader = DataLoader(test_set, sampler=sampler)
        Evaluator(model, loader).run()
        """,
    # torchtune's recipe layout with set_epoch: the returned loader kept on self.
    """
        from torchdata.stateful_dataloader import StatefulDataLoader
        from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler
        class Recipe:
            def setup(self, cfg):
                self._dataloader = self._setup_data(cfg.dataset, shuffle=cfg.shuffle)
            def _setup_data(self, ds, shuffle):
                sampler = StatefulDistributedSampler(ds, shuffle=shuffle)
                dataloader = StatefulDataLoader(ds, sampler=sampler, batch_size=8)
                return dataloader
            def train(self):
                for curr_epoch in range(self.epochs_run, self.total_epochs):
                    self._dataloader.sampler.set_epoch(curr_epoch)
                    for idx, batch in enumerate(self._dataloader):
                        self.step(batch)
        """,
]


INVALID = [
    # pytorch/pytorch 31771: the same order every epoch.
    Invalid(
        """
            import torch
            from torch.utils.data import DataLoader
            sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)
            dataloader = DataLoader(dataset, batch_size=5, pin_memory=True, drop_last=True, sampler=sampler)
            for epoch in range(3):
                for i, data in enumerate(dataloader, 0):
                    names, _ = data
            """,
        lines=(4,), messages=(sampler_message("sampler"),),
        fixed="""
            import torch
            from torch.utils.data import DataLoader
            sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)
            dataloader = DataLoader(dataset, batch_size=5, pin_memory=True, drop_last=True, sampler=sampler)
            for epoch in range(3):
                sampler.set_epoch(epoch)
                for i, data in enumerate(dataloader, 0):
                    names, _ = data
            """),
    # An inline sampler; the loader iterated by a same-file training function.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            def train(model, loader, opt):
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
            train_loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
            for epoch in range(args.epochs):
                train(model, train_loader, opt)
            """,
        lines=(8,), messages=(sampler_message("train_loader.sampler"),)),
    # lucidrains/DALLE-pytorch 230: a sampler built only when distributed.
    Invalid(
        """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler
            data_sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank) if distributed else None
            dl = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=not data_sampler, sampler=data_sampler)
            for epoch in range(EPOCHS):
                for i, (text, images) in enumerate(dl):
                    loss = dalle(text, images, return_loss=True)
            """,
        lines=(4,), messages=(sampler_message("data_sampler"),)),
    # A trainer class: the sampler on self, the epoch loop in a method.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            class Trainer:
                def __init__(self, ds):
                    self.sampler = DistributedSampler(ds)
                    self.loader = DataLoader(ds, sampler=self.sampler, batch_size=16)
                def fit(self, epochs):
                    for epoch in range(epochs):
                        for batch in self.loader:
                            self.step(batch)
            """,
        lines=(5,), messages=(sampler_message("self.sampler"),),
        fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            class Trainer:
                def __init__(self, ds):
                    self.sampler = DistributedSampler(ds)
                    self.loader = DataLoader(ds, sampler=self.sampler, batch_size=16)
                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.sampler.set_epoch(epoch)
                        for batch in self.loader:
                            self.step(batch)
            """),
    # stylegan2-pytorch: an endless `cycle(loader)` re-reads the loader with the same order.
    Invalid(
        """
            from torch.utils import data
            from torch.utils.data.distributed import DistributedSampler
            def cycle(iterable):
                while True:
                    for i in iterable:
                        yield i
            class Trainer:
                def set_data_src(self, dataset):
                    sampler = DistributedSampler(dataset, rank=self.rank, shuffle=True) if self.is_ddp else None
                    dataloader = data.DataLoader(dataset, batch_size=self.batch_size, sampler=sampler)
                    self.loader = cycle(dataloader)
            """,
        lines=(10,), messages=(sampler_message("sampler"),)),
    # The epoch loop over tqdm(loader).
    Invalid(
        """
            from tqdm import tqdm
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_dataset)
            train_loader = DataLoader(train_dataset, sampler=train_sampler, num_workers=4)
            for epoch in range(start_epoch, num_epochs):
                for images, targets in tqdm(train_loader):
                    train_step(images, targets)
            """,
        lines=(4,), messages=(sampler_message("train_sampler"),),
        fixed="""
            from tqdm import tqdm
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_dataset)
            train_loader = DataLoader(train_dataset, sampler=train_sampler, num_workers=4)
            for epoch in range(start_epoch, num_epochs):
                train_sampler.set_epoch(epoch)
                for images, targets in tqdm(train_loader):
                    train_step(images, targets)
            """),
    # set_epoch called on the evaluation sampler only would still be a call: here none at all,
    # the training sampler next to a shuffle=False evaluation one.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_set)
            test_sampler = DistributedSampler(test_set, shuffle=False)
            train_loader = DataLoader(train_set, sampler=train_sampler)
            test_loader = DataLoader(test_set, sampler=test_sampler)
            for epoch in range(epochs):
                for batch in train_loader:
                    step(batch)
                for batch in test_loader:
                    evaluate(batch)
            """,
        lines=(3,), messages=(sampler_message("train_sampler"),),
        fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_set)
            test_sampler = DistributedSampler(test_set, shuffle=False)
            train_loader = DataLoader(train_set, sampler=train_sampler)
            test_loader = DataLoader(test_set, sampler=test_sampler)
            for epoch in range(epochs):
                train_sampler.set_epoch(epoch)
                for batch in train_loader:
                    step(batch)
                for batch in test_loader:
                    evaluate(batch)
            """),
    # The loader handed to a same-file function from the epoch loop: the fix goes into that loop.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            def train_one_epoch(model, loader, opt):
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
            def main(args):
                sampler = DistributedSampler(train_set)
                loader = DataLoader(train_set, sampler=sampler, batch_size=args.batch_size)
                for ep in range(args.epochs):  # one pass per epoch
                    train_one_epoch(model, loader, opt)
            """,
        lines=(9,), messages=(sampler_message("sampler"),),
        fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            def train_one_epoch(model, loader, opt):
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
            def main(args):
                sampler = DistributedSampler(train_set)
                loader = DataLoader(train_set, sampler=sampler, batch_size=args.batch_size)
                for ep in range(args.epochs):  # one pass per epoch
                    sampler.set_epoch(ep)
                    train_one_epoch(model, loader, opt)
            """),
    # No loop variable to pass (`for _ in ...`): the finding stays without a fix.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, sampler=sampler)
            for _ in range(num_epochs):
                for batch in loader:
                    train_step(batch)
            """,
        lines=(3,), messages=(sampler_message("sampler"),)),
    # espnet/espnet 2081: an IterableDataset read by several workers.
    Invalid(
        """
            from torch.utils.data import DataLoader, IterableDataset
            class IterableESPnetDataset(IterableDataset):
                def __init__(self, path):
                    self.path = path
                def __iter__(self):
                    with open(self.path) as f:
                        for line in f:
                            yield line.split()
            loader = DataLoader(IterableESPnetDataset("data.scp"), batch_size=None, num_workers=2)
            """,
        lines=(10,), messages=(iterable_message("IterableESPnetDataset", 2),)),
    # The dataset bound to a name first; a same-file base defines __iter__.
    Invalid(
        """
            import torch
            class Base(torch.utils.data.IterableDataset):
                def __iter__(self):
                    for item in self.source():
                        yield self.transform(item)
            class TokenStream(Base):
                def source(self):
                    return open(self.path)
            stream = TokenStream()
            loader = torch.utils.data.DataLoader(stream, batch_size=8, num_workers=4)
            """,
        lines=(11,), messages=(iterable_message("TokenStream", 4),)),
    # dataset= keyword.
    Invalid(
        """
            from torch.utils.data import DataLoader, IterableDataset
            class Synthetic(IterableDataset):
                def __iter__(self):
                    while True:
                        yield make_sample()
            loader = DataLoader(dataset=Synthetic(), batch_size=32, num_workers=8, pin_memory=True)
            """,
        lines=(7,), messages=(iterable_message("Synthetic", 8),)),
    # A generator-based stream read by 16 workers in a training function.
    Invalid(
        """
            from torch.utils import data
            class Lines(data.IterableDataset):
                def __iter__(self):
                    return iter(self.lines)
            def make_loader(lines):
                return data.DataLoader(Lines(lines), num_workers=16)
            """,
        lines=(7,), messages=(iterable_message("Lines", 16),)),
    # torchtune's recipe layout: the loader returned by _setup_data, kept as self._dataloader and
    # read every epoch in another method (torchdata's drop-ins for the sampler and the loader).
    Invalid(
        """
            from torchdata.stateful_dataloader import StatefulDataLoader
            from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler
            class Recipe:
                def setup(self, cfg):
                    self._dataloader = self._setup_data(cfg.dataset, shuffle=cfg.shuffle)
                def _setup_data(self, ds, shuffle):
                    sampler = StatefulDistributedSampler(ds, shuffle=shuffle)
                    dataloader = StatefulDataLoader(ds, sampler=sampler, batch_size=8)
                    return dataloader
                def train(self):
                    for curr_epoch in range(self.epochs_run, self.total_epochs):
                        for idx, batch in enumerate(self._dataloader):
                            self.step(batch)
            """,
        lines=(8,), messages=(sampler_message("sampler"),)),
    # The sampler and the loader returned together, unpacked into self.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            class Recipe:
                def setup(self, cfg):
                    self._sampler, self._dataloader = self._setup_data(cfg.dataset)
                def _setup_data(self, ds):
                    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)
                    dataloader = DataLoader(dataset=ds, sampler=sampler, batch_size=4)
                    return sampler, dataloader
                def train(self):
                    for curr_epoch in range(self.total_epochs):
                        for batch in self._dataloader:
                            self.step(batch)
            """,
        lines=(7,), messages=(sampler_message("sampler"),)),
    # The trainer layout: the loader handed to Trainer(...), kept as self.train_loader and read
    # in each of fit's epochs.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            class Trainer:
                def __init__(self, model, train_loader, optimizer):
                    self.model = model
                    self.train_loader = train_loader
                    self.optimizer = optimizer
                def fit(self, epochs):
                    for epoch in range(epochs):
                        for batch in self.train_loader:
                            self.optimizer.step()
            train_sampler = DistributedSampler(train_set)
            train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
            Trainer(model, train_loader, optimizer).fit(args.epochs)
            """,
        lines=(12,), messages=(sampler_message("train_sampler"),)),
    # A loop in a function named for one epoch: its caller runs it every epoch.
    Invalid(
        """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, batch_size=32, sampler=sampler)
            def train_one_epoch(model, optimizer):
                for batch in loader:
                    optimizer.step()
            """,
        lines=(3,), messages=(sampler_message("sampler"),)),
]
