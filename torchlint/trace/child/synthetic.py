"""``torchlint run --synthetic-data``: batches without the data.

* :func:`first_sample_batches`: a DataLoader's batches are its first sample, repeated to the
  batch size and collated by the loader's own ``collate_fn``: the shapes and dtypes of the
  real batches, with one read of the dataset.
* :func:`install`: torchvision's downloadable datasets (MNIST, CIFAR-10, ...) become
  stand-ins that download nothing and read no file: each sample is an image of the dataset's
  size and mode (a PIL image where Pillow is installed), passed through the script's own
  ``transform``, and a class index.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Iterator

# name: (mode, height, width, classes, train size, test size)
IMAGE_DATASETS = {
    "MNIST": ("L", 28, 28, 10, 60000, 10000), "FashionMNIST": ("L", 28, 28, 10, 60000, 10000),
    "KMNIST": ("L", 28, 28, 10, 60000, 10000), "QMNIST": ("L", 28, 28, 10, 60000, 10000),
    "EMNIST": ("L", 28, 28, 47, 112800, 18800), "CIFAR10": ("RGB", 32, 32, 10, 50000, 10000),
    "CIFAR100": ("RGB", 32, 32, 100, 50000, 10000), "SVHN": ("RGB", 32, 32, 10, 73257, 26032),
    "STL10": ("RGB", 96, 96, 10, 5000, 8000), "ImageFolder": ("RGB", 256, 256, 2, 64, 64),
    "CelebA": ("RGB", 218, 178, 2, 162770, 19962), "LSUN": ("RGB", 256, 256, 2, 64, 64),
}


def first_sample_batches(loader: Any) -> Iterator[Any]:
    """Batches made of the loader's first sample (``--synthetic-data``)."""
    dataset = loader.dataset
    size = loader.batch_size or 1
    try:
        sample = dataset[0]
    except (TypeError, NotImplementedError):  # an IterableDataset
        sample = next(iter(dataset))
    while True:
        yield loader.collate_fn([sample] * size) if loader.batch_size is not None else sample


def on_meta(torch: Any, batch: Any, depth: int = 0) -> Any:
    """A batch with its tensors on meta (``--run-device meta``)."""
    if isinstance(batch, torch.Tensor):
        return batch.to("meta")
    if depth > 3:
        return batch
    if isinstance(batch, (list, tuple)) and not hasattr(batch, "_fields"):
        return type(batch)(on_meta(torch, b, depth + 1) for b in batch)
    if isinstance(batch, dict):
        return type(batch)((k, on_meta(torch, v, depth + 1)) for k, v in batch.items())
    return batch


def stand_in(name: str, mode: str, height: int, width: int, classes: int, train_size: int,
             test_size: int) -> type:
    from torch.utils.data import Dataset

    class StandIn(Dataset):  # type: ignore[misc,type-arg]
        def __init__(self, root: Any = None, *args: Any, train: bool = True, split: Any = None,
                     transform: Any = None, target_transform: Any = None, download: bool = False,
                     **kwargs: Any):
            self.root, self.transform, self.target_transform = root, transform, target_transform
            self.train = train if split is None else split in ("train", "byclass", "balanced")
            self.size = train_size if self.train else test_size
            self.classes = [str(i) for i in range(classes)]
            self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
            self.targets: Any = [i % classes for i in range(self.size)]
            if mode == "L":  # the MNIST family keeps a tensor of labels
                import torch

                self.targets = torch.arange(self.size) % classes

        def __len__(self) -> int:
            return self.size

        @property
        def data(self) -> Any:
            """The raw images, as torchvision keeps them (zeros): a uint8 tensor (N, H, W) for
            the MNIST family, a numpy array (N, H, W, 3) for CIFAR where numpy is installed."""
            import torch

            if mode == "L":
                return torch.zeros(self.size, height, width, dtype=torch.uint8)
            if importlib.util.find_spec("numpy") is not None:
                import numpy

                return numpy.zeros((self.size, height, width, 3), dtype=numpy.uint8)
            return torch.zeros(self.size, height, width, 3, dtype=torch.uint8)

        train_data = test_data = data  # torchvision's old names

        @property
        def train_labels(self) -> Any:
            return self.targets

        test_labels = train_labels

        def __getitem__(self, index: int) -> Any:
            if not 0 <= index < self.size and not -self.size <= index < 0:
                raise IndexError(index)
            image = _image(mode, height, width)
            target = index % classes
            if self.transform is not None:
                image = self.transform(image)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return image, target

    StandIn.__name__ = StandIn.__qualname__ = name
    return StandIn


def _image(mode: str, height: int, width: int) -> Any:
    if importlib.util.find_spec("PIL") is not None:
        from PIL import Image

        return Image.new(mode, (width, height), color=128 if mode == "L" else (128, 64, 32))
    import torch

    return torch.rand(1 if mode == "L" else 3, height, width)


def install(fence: Any) -> None:
    """Replace torchvision's datasets by stand-ins (where torchvision is installed)."""
    if importlib.util.find_spec("torchvision") is None:
        return
    try:
        import torchvision.datasets as datasets
    except Exception:  # noqa: BLE001 - a broken torchvision: the script will say so itself
        return
    for name, shape in IMAGE_DATASETS.items():
        if hasattr(datasets, name):
            fence.patch(datasets, name, stand_in(name, *shape))
