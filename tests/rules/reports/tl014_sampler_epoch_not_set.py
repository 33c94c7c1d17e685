"""TL014 sampler-epoch-not-set: cases adapted from public reports (see ``__init__``)."""

from tests.rules.reports import Report

BUGS = [
    # DALLE-pytorch: the distributed sampler never told the epoch.
    """
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler
    data_sampler = DistributedSampler(ds, num_replicas=distr_backend.get_world_size(),
                                      rank=distr_backend.get_rank()) if distributed else None
    dl = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=not data_sampler, drop_last=True, sampler=data_sampler)
    for epoch in range(EPOCHS):
        for i, (text, images) in enumerate(dl):
            loss = dalle(text, images, return_loss=True)
            loss.backward()
            opt.step()
            opt.zero_grad()
    # https://github.com/lucidrains/DALLE-pytorch/pull/230
    """,
    # The report's reproduction: the same order every epoch.
    """
    import torch
    from torch.utils.data import DataLoader
    torch.distributed.init_process_group(backend="nccl")
    dataset = RandomDataset()
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)
    dataloader = DataLoader(dataset, batch_size=5, pin_memory=True, drop_last=True, sampler=sampler)
    for epoch in range(3):
        for i, data in enumerate(dataloader, 0):
            names, _ = data
            print(names)
    # https://github.com/pytorch/pytorch/issues/31771
    """,
    # stylegan2: the loader made endless by a generator that re-reads it, never re-seeded.
    """
    from torch.utils import data
    def data_sampler(dataset, shuffle, distributed):
        if distributed:
            return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
        return data.RandomSampler(dataset)
    def sample_data(loader):
        while True:
            for batch in loader:
                yield batch
    loader = data.DataLoader(dataset, batch_size=args.batch,
                             sampler=data.distributed.DistributedSampler(dataset, shuffle=True), drop_last=True)
    loader = sample_data(loader)
    for idx in range(args.iter):
        real_img = next(loader)
        train_step(real_img)
    # https://github.com/rosinality/stylegan2-pytorch/issues/319
    """,
    # asv-subtools: the data bunch keeps the sampler; the epochs never set it.
    """
    import torch
    class DataBunch:
        def __init__(self, trainset, batch_size):
            self.train_sampler = torch.utils.data.distributed.DistributedSampler(trainset, shuffle=True)
            self.train_loader = torch.utils.data.DataLoader(trainset, batch_size=batch_size,
                                                            sampler=self.train_sampler)
        def run(self, epochs, step):
            for this_epoch in range(epochs):
                for batch in self.train_loader:
                    step(batch)
    # https://github.com/Snowdar/asv-subtools/issues/8
    """,
    # SimCLR: the loader handed to the file's train() from each epoch.
    """
    import torch
    def train(args, train_loader, model, criterion, optimizer):
        loss_epoch = 0
        for step, ((x_i, x_j), _) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = criterion(*model(x_i, x_j))
            loss.backward()
            optimizer.step()
            loss_epoch += loss.item()
        return loss_epoch
    train_sampler = torch.utils.data.distributed.DistributedSampler(
        train_dataset, num_replicas=args.world_size, rank=rank, shuffle=True)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
                                               shuffle=(train_sampler is None), drop_last=True, sampler=train_sampler)
    for epoch in range(args.start_epoch, args.epochs):
        loss_epoch = train(args, train_loader, model, criterion, optimizer)
    # https://github.com/Spijkervet/SimCLR/pull/26
    """,
    # The DDP tutorial's train(gpu, args): sampler, loader and epochs in one function.
    """
    import torch
    def train(gpu, args):
        train_sampler = torch.utils.data.distributed.DistributedSampler(
            train_dataset, num_replicas=args.world_size, rank=rank)
        train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=False,
                                                   num_workers=0, pin_memory=True, sampler=train_sampler)
        for epoch in range(args.epochs):
            for i, (images, labels) in enumerate(train_loader):
                loss = criterion(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    # https://github.com/yangkky/distributed_tutorial/issues/5
    """,
    # ParallelWaveGAN: the loader built in train.py, handed to a Trainer in another module that
    # keeps it and reads it every epoch without set_epoch.
    Report(files={
        "trainer.py": """
            class Trainer:
                def __init__(self, steps, epochs, data_loader, model, optimizer):
                    self.steps = steps
                    self.epochs = epochs
                    self.data_loader = data_loader
                    self.model = model
                    self.optimizer = optimizer
                def run(self):
                    while True:
                        self._train_epoch()
                        if self.epochs >= self.max_epochs:
                            break
                def _train_epoch(self):
                    for train_steps_per_epoch, batch in enumerate(self.data_loader, 1):
                        self._train_step(batch)
                    self.epochs += 1
            """,
        "train.py": """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler
            from trainer import Trainer
            sampler = DistributedSampler(dataset=train_dataset, num_replicas=args.world_size, rank=args.rank,
                                         shuffle=True)
            train_loader = DataLoader(dataset=train_dataset, shuffle=False, collate_fn=collater,
                                      batch_size=config["batch_size"], sampler=sampler)
            trainer = Trainer(steps=0, epochs=0, data_loader=train_loader, model=model, optimizer=optimizer)
            trainer.run()
            # https://github.com/kan-bayashi/ParallelWaveGAN/issues/177
            """,
    }),
    # taglets: a Trainable builds the sampler in _do_train and hands the loader to its epoch method.
    """
    import torch
    class Trainable:
        def _do_train(self, rank, train_data):
            train_sampler = torch.utils.data.distributed.DistributedSampler(train_data, num_replicas=self.n_proc,
                                                                            rank=rank)
            train_data_loader = torch.utils.data.DataLoader(train_data, batch_size=self.batch_size, shuffle=False,
                                                            sampler=train_sampler)
            for epoch in range(self.num_epochs):
                train_loss, train_acc = self._train_epoch(rank, train_data_loader)
        def _train_epoch(self, rank, train_data_loader):
            for batch in train_data_loader:
                self.optimizer.zero_grad()
                self.loss(batch).backward()
                self.optimizer.step()
            return 0.0, 0.0
    # https://github.com/BatsResearch/taglets/pull/28
    """,
    # The distributed training guide: sampler with drop_last, epochs resumed from a state.
    """
    import torch
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler
    dataloader = DataLoader(train_data, batch_size=args.batch_size, drop_last=True,
                            sampler=DistributedSampler(train_data, shuffle=True, drop_last=True))
    for state["epoch"] in range(state["epoch"], args.num_epochs):
        for i_step, batch in enumerate(dataloader):
            outputs = model(**batch)
            optimizer.zero_grad()
            outputs.loss.backward()
            optimizer.step()
    # https://github.com/LambdaLabsML/distributed-training-guide/issues/40
    """,
    # ESPnet: an iterable dataset read whole by every worker.
    """
    from torch.utils.data import DataLoader
    from torch.utils.data.dataset import IterableDataset
    class IterableESPnetDataset(IterableDataset):
        def __init__(self, path_name_type_list):
            self.path_name_type_list = path_name_type_list
        def __iter__(self):
            for key, data in read_all(self.path_name_type_list):
                yield key, data
    dataset = IterableESPnetDataset(path_name_type_list)
    loader = DataLoader(dataset=dataset, batch_size=1, num_workers=2)
    # https://github.com/espnet/espnet/pull/2081
    """,
    # The report's mock dataset: the epoch is num_workers times longer.
    """
    import random
    from torch.utils.data import DataLoader, IterableDataset
    class MockIterableDataset(IterableDataset):
        def __iter__(self):
            nums = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
            random.shuffle(nums)
            for i in nums:
                yield i
    batches = list(DataLoader(MockIterableDataset(), batch_size=2, num_workers=4))
    # https://github.com/pytorch/pytorch/issues/30599
    """,
]

LOOKALIKES = [
    # DALLE-pytorch fixed.
    """
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler
    data_sampler = DistributedSampler(ds, num_replicas=distr_backend.get_world_size(),
                                      rank=distr_backend.get_rank()) if distributed else None
    dl = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=not data_sampler, drop_last=True, sampler=data_sampler)
    for epoch in range(EPOCHS):
        if data_sampler:
            data_sampler.set_epoch(epoch)
        for i, (text, images) in enumerate(dl):
            loss = dalle(text, images, return_loss=True)
            loss.backward()
            opt.step()
            opt.zero_grad()
    # https://github.com/lucidrains/DALLE-pytorch/pull/230
    """,
    # The reproduction with set_epoch.
    """
    import torch
    from torch.utils.data import DataLoader
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)
    dataloader = DataLoader(dataset, batch_size=5, pin_memory=True, drop_last=True, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for i, data in enumerate(dataloader, 0):
            print(data)
    # https://github.com/pytorch/pytorch/issues/31771
    """,
    # SimCLR fixed: set_epoch before handing the loader to train().
    """
    import torch
    def train(args, train_loader, model, criterion, optimizer):
        for step, ((x_i, x_j), _) in enumerate(train_loader):
            optimizer.zero_grad()
            criterion(*model(x_i, x_j)).backward()
            optimizer.step()
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=True)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, sampler=train_sampler)
    for epoch in range(args.start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train(args, train_loader, model, criterion, optimizer)
    # https://github.com/Spijkervet/SimCLR/pull/26
    """,
    # The DDP tutorial with set_epoch at the top of each epoch.
    """
    import torch
    def train(gpu, args):
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=args.world_size,
                                                                        rank=rank)
        train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=False,
                                                   sampler=train_sampler)
        for epoch in range(args.epochs):
            train_sampler.set_epoch(epoch)
            for i, (images, labels) in enumerate(train_loader):
                optimizer.zero_grad()
                criterion(model(images), labels).backward()
                optimizer.step()
    # https://github.com/yangkky/distributed_tutorial/issues/5
    """,
    # ParallelWaveGAN fixed: the Trainer sets the epoch of the loader's sampler.
    Report(files={
        "trainer.py": """
            class Trainer:
                def __init__(self, steps, epochs, data_loader, sampler, model, optimizer):
                    self.epochs = epochs
                    self.data_loader = data_loader
                    self.sampler = sampler
                    self.model = model
                    self.optimizer = optimizer
                def run(self):
                    while True:
                        self._train_epoch()
                        if self.epochs >= self.max_epochs:
                            break
                def _train_epoch(self):
                    for batch in self.data_loader:
                        self._train_step(batch)
                    self.epochs += 1
                    if self.sampler is not None:
                        self.sampler.set_epoch(self.epochs)
            """,
        "train.py": """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler
            from trainer import Trainer
            sampler = DistributedSampler(dataset=train_dataset, num_replicas=args.world_size, rank=args.rank,
                                         shuffle=True)
            train_loader = DataLoader(dataset=train_dataset, shuffle=False, batch_size=8, sampler=sampler)
            Trainer(steps=0, epochs=0, data_loader=train_loader, sampler=sampler, model=model,
                    optimizer=optimizer).run()
            # https://github.com/kan-bayashi/ParallelWaveGAN/issues/177
            """,
    }),
    # taglets fixed.
    """
    import torch
    class Trainable:
        def _do_train(self, rank, train_data):
            train_sampler = torch.utils.data.distributed.DistributedSampler(train_data, num_replicas=self.n_proc,
                                                                            rank=rank)
            train_data_loader = torch.utils.data.DataLoader(train_data, batch_size=self.batch_size,
                                                            sampler=train_sampler)
            for epoch in range(self.num_epochs):
                train_sampler.set_epoch(epoch)
                self._train_epoch(rank, train_data_loader)
        def _train_epoch(self, rank, train_data_loader):
            for batch in train_data_loader:
                self.optimizer.step()
    # https://github.com/BatsResearch/taglets/pull/28
    """,
    # Accelerate re-seeds the prepared loader every epoch: no set_epoch needed.
    """
    from accelerate import Accelerator
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler
    accelerator = Accelerator()
    train_loader = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    for epoch in range(num_epochs):
        for batch in train_loader:
            accelerator.backward(model(**batch).loss)
            optimizer.step()
    # https://github.com/huggingface/accelerate/issues/654
    """,
    # A prepared shuffling loader without a DistributedSampler of its own.
    """
    from torch.utils.data import DataLoader
    data_loader_train = DataLoader(dataset_train, collate_fn=collate_fn, batch_size=cfg.data.train_batch_size,
                                   num_workers=cfg.data.num_workers, shuffle=True)
    data_loader_train = accelerator.prepare(data_loader_train)
    for epoch in range(cfg.epochs):
        for batch in data_loader_train:
            train_step(batch)
    # https://github.com/huggingface/accelerate/issues/2010
    """,
    # The mock dataset split by worker.
    """
    import torch
    from torch.utils.data import DataLoader, IterableDataset
    class MockIterableDataset(IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            nums = list(range(10))
            if info is not None:
                nums = nums[info.id::info.num_workers]
            for i in nums:
                yield i
    batches = list(DataLoader(MockIterableDataset(), batch_size=2, num_workers=4))
    # https://github.com/pytorch/pytorch/issues/30599
    """,
    # ESPnet fixed: each worker reads its own share of the keys.
    """
    import torch
    from torch.utils.data import DataLoader
    from torch.utils.data.dataset import IterableDataset
    class IterableESPnetDataset(IterableDataset):
        def __iter__(self):
            worker_info = torch.utils.data.get_worker_info()
            for count, (key, data) in enumerate(read_all(self.path_name_type_list)):
                if worker_info is not None and count % worker_info.num_workers != worker_info.id:
                    continue
                yield key, data
    loader = DataLoader(dataset=IterableESPnetDataset(), batch_size=1, num_workers=2)
    # https://github.com/espnet/espnet/pull/2081
    """,
    # The documentation's example as fixed: set_epoch before handing the loader to train().
    """
    from torch.utils.data import DataLoader, DistributedSampler
    sampler = DistributedSampler(dataset) if is_distributed else None
    loader = DataLoader(dataset, shuffle=(sampler is None), sampler=sampler)
    for epoch in range(start_epoch, n_epochs):
        if is_distributed:
            sampler.set_epoch(epoch)
        train(loader)
    # https://github.com/pytorch/pytorch/issues/40043
    """,
    # asv-subtools fixed: the sampler's epoch set through the data bunch.
    """
    import torch
    class DataBunch:
        def __init__(self, trainset, batch_size):
            self.train_sampler = torch.utils.data.distributed.DistributedSampler(trainset, shuffle=True)
            self.train_loader = torch.utils.data.DataLoader(trainset, batch_size=batch_size,
                                                            sampler=self.train_sampler)
        def run(self, epochs, step):
            for this_epoch in range(epochs):
                if self.train_sampler is not None:
                    self.train_sampler.set_epoch(this_epoch)
                for batch in self.train_loader:
                    step(batch)
    # https://github.com/Snowdar/asv-subtools/issues/8
    """,
]
