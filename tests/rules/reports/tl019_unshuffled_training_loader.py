"""TL019's cases from public reports: training loaders built without shuffling, and the fixes
and shapes that look like them (samplers, evaluation loaders, stated orders)."""

BUGS = [
    """
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    train_loader = DataLoader(imagenet_train_set, batch_size=196, num_workers=8)
    for epoch in range(90):
        for images, labels in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(images), labels).backward()
            optimizer.step()
    # https://github.com/Deci-AI/super-gradients/issues/416
    """,
    """
    from torch.utils.data import DataLoader
    def get_loaders(train_subset, val_subset, batch_size):
        train_dataloader = DataLoader(train_subset, batch_size=batch_size)
        val_dataloader = DataLoader(val_subset, batch_size=batch_size)
        return train_dataloader, val_dataloader

    def train(model, optimizer, train_subset, val_subset):
        train_dataloader = DataLoader(train_subset, batch_size=128)
        for step, batch in enumerate(train_dataloader):
            optimizer.zero_grad()
            model.loss(batch).backward()
            optimizer.step()
    # https://github.com/joaoamcarvalho/mpd-public/issues/6
    """,
    """
    import torch
    class SinglePathTrainer:
        def __init__(self, model, loss, optimizer, dataset_train, batch_size, workers):
            self.model, self.loss, self.optimizer = model, loss, optimizer
            self.train_loader = torch.utils.data.DataLoader(self.dataset_train, batch_size=batch_size,
                                                            num_workers=workers)

        def _train_one_epoch(self):
            for x, y in self.train_loader:
                self.optimizer.zero_grad()
                self.loss(self.model(x), y).backward()
                self.optimizer.step()
    # https://github.com/microsoft/nni/issues/4692
    """,
    """
    import torch
    import torch.nn.functional as F
    from torchvision import datasets, transforms
    train_set = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=256, shuffle=False)
    for epoch in range(50):
        for data, target in train_loader:
            optimizer.zero_grad()
            F.mse_loss(model(data), data).backward()
            optimizer.step()
    # https://github.com/xuyxu/Deep-Clustering-Network/issues/2
    """,
    """
    import torch
    import torchvision
    trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=False, num_workers=2)
    def train(epoch):
        for batch_idx, (data, target) in enumerate(trainloader):
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
    # https://github.com/jiecaoyu/XNOR-Net-PyTorch/issues/38
    """,
    """
    import torch
    from torch.utils.data import DataLoader
    def create_dataloader(dataset, batch_size, rank, workers):
        sampler = torch.utils.data.distributed.DistributedSampler(dataset) if rank != -1 else None
        return DataLoader(dataset, batch_size=batch_size, num_workers=workers, sampler=sampler)

    def train(model, optimizer, dataset):
        sampler = torch.utils.data.distributed.DistributedSampler(dataset) if RANK != -1 else None
        dataloader = DataLoader(dataset, batch_size=16, num_workers=8, sampler=sampler)
        for imgs, targets in dataloader:
            optimizer.zero_grad()
            model.compute_loss(imgs, targets).backward()
            optimizer.step()
    # https://github.com/ultralytics/yolov5/issues/2582
    """,
    """
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    from tqdm import tqdm
    train_loader = DataLoader(ds, batch_size=BATCH_SIZE, num_workers=NUM_WORKERS)
    for epoch in range(EPOCHS):
        for images in tqdm(train_loader):
            loss = learner(images)
            opt.zero_grad()
            loss.backward()
            opt.step()
    # https://github.com/lucidrains/byol-pytorch/issues/23
    """,
    """
    import torch
    from torch.utils.data import DataLoader
    def main(model, train_dataset, optimizer, epochs):
        loader = DataLoader(train_dataset, batch_size=32, collate_fn=collate)
        for epoch in range(epochs):
            for i, batch in enumerate(loader):
                optimizer.zero_grad()
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
    # https://github.com/microsoft/nni/pull/4696
    """,
    """
    import torch
    import torch.nn as nn
    from torchvision import datasets, transforms
    train_data = datasets.FashionMNIST("data", train=True, download=True, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=64)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(5):
        for images, labels in train_loader:
            optimizer.zero_grad()
            criterion(model(images), labels).backward()
            optimizer.step()
    # https://github.com/Deci-AI/super-gradients/issues/416
    """,
    """
    import torch
    def fit(model, optimizer, train_ds, epochs=10):
        dl = torch.utils.data.DataLoader(train_ds, batch_size=64, drop_last=True)
        for _ in range(epochs):
            for xb, yb in dl:
                loss = torch.nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/joaoamcarvalho/mpd-public/issues/6
    """,
]

LOOKALIKES = [
    """
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    train_loader = DataLoader(imagenet_train_set, batch_size=196, num_workers=8, shuffle=True)
    for epoch in range(90):
        for images, labels in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(images), labels).backward()
            optimizer.step()
    # https://github.com/Deci-AI/super-gradients/issues/416
    """,
    """
    import torch
    from torch.utils.data import DataLoader
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    loader_train = DataLoader(train_dataset, batch_size=4, shuffle=False, sampler=train_sampler)
    for sample in loader_train:
        optimizer.zero_grad()
        net(sample).backward()
        optimizer.step()
    # https://github.com/zzangjinsun/NLSPN_ECCV20/issues/24
    """,
    """
    import torch
    from torch.utils.data import DataLoader
    train_sampler = torch.utils.data.distributed.DistributedSampler(trainset) if num_gpus > 1 else None
    train_loader = DataLoader(trainset, num_workers=1, shuffle=False, sampler=train_sampler,
                              batch_size=batch_size, pin_memory=False, drop_last=True)
    for i, batch in enumerate(train_loader):
        model.zero_grad()
        loss = criterion(model(batch))
        loss.backward()
        optimizer.step()
    # https://github.com/NVIDIA/waveglow/issues/145
    """,
    """
    from torch.utils.data import DataLoader
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=False,
                              num_workers=4, pin_memory=False, sampler=train_sampler)
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        model(inputs, targets).backward()
        optimizer.step()
    # https://github.com/XiaohangZhan/deocclusion/issues/42
    """,
    """
    import torch
    from torchvision import datasets
    test_loader = torch.utils.data.DataLoader(datasets.MNIST("data", train=False), batch_size=1000, shuffle=False)
    with torch.no_grad():
        for data, target in test_loader:
            correct += model(data).argmax(1).eq(target).sum().item()
    # https://github.com/yaodongyu/TRADES/issues/17
    """,
    """
    import torch
    import torchvision
    trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True, num_workers=2)
    def train(epoch):
        for batch_idx, (data, target) in enumerate(trainloader):
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
    # https://github.com/jiecaoyu/XNOR-Net-PyTorch/issues/38
    """,
    """
    import torch
    from torch.utils.data import DataLoader
    train_loader = DataLoader(windows, batch_size=32, shuffle=False)  # consecutive windows of one series
    for epoch in range(20):
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    # https://github.com/2019-dl-training-program/Lab4/issues/21
    """,
    """
    from torch.utils.data import DataLoader
    train_loader = DataLoader(ds, batch_size=BATCH_SIZE, num_workers=NUM_WORKERS, shuffle=True)
    trainer.fit(model, train_loader)
    # https://github.com/lucidrains/byol-pytorch/issues/23
    """,
    """
    from torch.utils.data import DataLoader
    def train(model, loss_fn, optimizer, dataloader):
        for x, y in dataloader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()

    train(model, loss_fn, optimizer, DataLoader(train_set, batch_size=64, shuffle=True))
    # https://github.com/microsoft/nni/pull/4696
    """,
    """
    from torch.utils.data import DataLoader
    train_loader = DataLoader(dataset, **hparams["train_dataloader_opts"])
    for batch in train_loader:
        optimizer.zero_grad()
        brain.compute_objectives(batch).backward()
        optimizer.step()
    # https://github.com/speechbrain/speechbrain/issues/1335
    """,
]
