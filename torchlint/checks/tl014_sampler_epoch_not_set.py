"""TL014 sampler-epoch-not-set: a ``DistributedSampler`` never given ``set_epoch(epoch)``, or an
``IterableDataset`` that every ``DataLoader`` worker reads whole.

Shared queries: ``torchlint.semantic.samplers``. A ``DistributedSampler(...)`` is reported when
the file never calls ``set_epoch`` (on anything), a ``DataLoader`` built on it (by name or
inline) is iterated inside an epoch loop (or handed to a same-file function from one), it
shuffles (no ``shuffle=False``), it does not feed evaluation (``loaders.feeds_evaluation``), and
no trainer (Lightning, Accelerate, Hugging Face, Fabric) and no ``prepare``/``setup_dataloaders``
call manages the loader.

A ``DataLoader`` with a literal ``num_workers > 0`` (and no ``worker_init_fn``) over an instance
of an ``IterableDataset`` subclass whose code never mentions a worker, rank or shard is
reported: here when the class is in the file; through the facts (``unsharded`` classes per
file, ``readers`` of imported classes) and the project pass when it is imported.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint import torch_api as api
from torchlint.context import dotted_name
from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import SAFE, Fix, insert_statement_before
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.epochs import range_stop
from torchlint.semantic.loaders import feeds_evaluation
from torchlint.semantic.samplers import (assigned_key, distributed_samplers, epoch_loops_reading, is_loader_call,
                                         loader_dataset, loader_workers, loaders_of, read_every_epoch, sets_epoch,
                                         unsharded_iterable_datasets)
from torchlint.semantic.training import EPOCH_VAR

# Calls that take over a loader (and set its sampler's epoch): accelerator.prepare, fabric.setup_dataloaders.
_MANAGERS = ("prepare", "setup_dataloaders")


def sampler_message(name: str) -> str:
    return (f"`{name}` is a DistributedSampler but `set_epoch` is never called: every epoch shuffles into the same "
            f"order on every rank; call `{name}.set_epoch(epoch)` at the start of each epoch")


def iterable_message(cls: str, workers: int) -> str:
    return (f"`{cls}` is an IterableDataset that never looks at `get_worker_info()`, read with `num_workers={workers}`: "
            f"each worker yields the whole dataset, so every sample comes {workers} times per epoch; split the stream "
            f"by `torch.utils.data.get_worker_info()` in `__iter__`")


class SamplerEpochNotSet(Rule):
    code = "TL014"
    name = "sampler-epoch-not-set"
    severity = Severity.WARNING
    default_enabled = True
    fixable = (SAFE,)  # sampler.set_epoch(epoch) at the top of the epoch loop
    summary = ("a DistributedSampler never given set_epoch(epoch), or an IterableDataset that every DataLoader "
               "worker reads whole")
    options: dict[str, Option] = {}
    requires_text = ("DistributedSampler", "IterableDataset", "num_workers")

    VALID: list[Valid | str] = [
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
    ]
    INVALID: list[Invalid] = [
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
    ]

    def finish(self) -> None:
        semantic = self.ctx.semantic
        if "DistributedSampler" in self.ctx.text:
            self._samplers(semantic)
        if "IterableDataset" in self.ctx.text or "num_workers" in self.ctx.text:
            self._iterable_datasets(semantic)

    # -- DistributedSampler -----------------------------------------------------------------
    def _samplers(self, semantic) -> None:
        samplers = distributed_samplers(semantic)
        if not samplers or sets_epoch(semantic.model) or semantic.training.bindings["trainer"]:
            return
        for sampler in samplers:
            shuffle = api.keyword_arg(sampler, "shuffle")
            if shuffle is not None and api.is_false_literal(shuffle.value) or feeds_evaluation(semantic, sampler):
                continue
            for loader, key in loaders_of(semantic, sampler):
                if key is None or self._managed(semantic, key) or feeds_evaluation(semantic, loader):
                    continue
                if read_every_epoch(semantic.training, key):
                    name = assigned_key(semantic, sampler) or f"{key}.sampler"
                    self.report(sampler, sampler_message(name), fix=self._set_epoch_fix(semantic, sampler, key))
                    break

    def _set_epoch_fix(self, semantic, sampler: cst.Call, loader: str) -> Fix | None:
        """``S.set_epoch(epoch)`` as the first statement of the epoch loop, where that is the
        one edit: ``S = DistributedSampler(...)`` names the sampler (never ``None``: not a
        conditional value) before the loop and outside it, and ``S`` is not rebound in it; the
        loader is read in exactly one epoch loop, ``for V in range(...)`` (or ``trange``,
        ``tqdm(range(...))``) whose variable or count names an epoch, so ``V`` counts epochs
        (``_`` is no count the author meant to use);
        and ``S`` is visible there (the same scope, or ``self.S`` in a method of the class)."""
        ctx, model = self.ctx, semantic.model
        assign = ctx.parent(sampler)
        name = assigned_key(semantic, sampler)
        loops = epoch_loops_reading(semantic.training, loader)
        if not isinstance(assign, (cst.Assign, cst.AnnAssign)) or assign.value is not sampler or name is None \
                or len(loops) != 1:
            return None
        loop = next(iter(loops))
        node = loop.node
        if not (isinstance(node, cst.For) and isinstance(node.target, cst.Name) and isinstance(node.body, cst.IndentedBlock)):
            return None
        stop = range_stop(ctx, node.iter)
        var = node.target.value
        if stop is None or var.startswith("_") or not (EPOCH_VAR.search(var) or "epoch" in (dotted_name(stop) or "").lower()):
            return None
        if ctx.inside(sampler, node) or not self._visible(model, name, sampler, loop):
            return None
        if any(ctx.inside(b.node, node) or b.node is node for b in loop.scope.bindings.get(name, ())):
            return None
        code = f"{name}.set_epoch({var})"
        edit = insert_statement_before(ctx, node.body.body[0], code)
        return Fix.safe(f"Call {code} at the start of each epoch", edit) if edit else None

    @staticmethod
    def _visible(model, name: str, sampler: cst.Call, loop) -> bool:
        """``name``, bound at ``sampler``, is the same value inside ``loop``: bound earlier in
        the loop's own scope, or ``self.X`` bound in a method of the class whose method holds
        the loop."""
        scope = model.scope_of(sampler)
        if scope is loop.scope:
            return model.order.get(sampler, 0) < loop.order
        head, _, _ = name.partition(".")
        return (head == scope.self_name and head == loop.scope.self_name and scope.cls is not None
                and scope.cls is loop.scope.cls)

    @staticmethod
    def _managed(semantic, key: str) -> bool:
        """The loader goes through ``accelerator.prepare``/``fabric.setup_dataloaders``."""
        for site in semantic.model.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MANAGERS \
                    and any(api.expr_key(a.value) == key for a in site.node.args):
                return True
        return False

    # -- IterableDataset --------------------------------------------------------------------
    def _iterable_datasets(self, semantic) -> None:
        model = semantic.model
        local = unsharded_iterable_datasets(semantic)
        readers = []
        for site in model.calls:
            call = site.node
            if not is_loader_call(semantic, call):
                continue
            workers = loader_workers(call)
            dataset = loader_dataset(call)
            built = self._constructed(semantic, dataset, call) if workers is not None and dataset is not None else None
            if built is None:
                continue
            info = model.class_named(built.value) if isinstance(built, cst.Name) else None
            if info is not None and not model.is_imported(built):
                if info.qualname in local:
                    self.report(call, iterable_message(info.name, workers))
            elif model.is_imported(built):
                readers.append([model.qualified_name(built), workers,
                                Span.of_range(self.ctx.position(call)).to_json()])
        facts = {k: v for k, v in (("unsharded", sorted(local)), ("readers", readers)) if v}
        if facts:
            self.ctx.facts[self.code] = facts

    @staticmethod
    def _constructed(semantic, dataset: cst.BaseExpression, at: cst.CSTNode) -> cst.BaseExpression | None:
        """The class expression of ``C(...)``, directly or through a name every reaching
        binding of which is the same ``C(...)``."""
        if isinstance(dataset, cst.Call):
            return dataset.func
        key = api.expr_key(dataset)
        if key is None or "." in key:
            return None
        values = [b.value for b in semantic.model.reaching(key, at)]
        funcs = {api.expr_key(v.func) for v in values if isinstance(v, cst.Call)}
        if values and len(funcs) == 1 and all(isinstance(v, cst.Call) for v in values) and None not in funcs:
            return values[0].func
        return None

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        unsharded = set()
        for record in project.records:
            for name in (record.facts.get(cls.code) or {}).get("unsharded", ()):
                unsharded.add(record.qualified(name))
        for record in project.records:
            for written, workers, span in (record.facts.get(cls.code) or {}).get("readers", ()):
                name = project.resolve_class(written, record)
                if name is not None and name in unsharded:
                    yield Finding.at(cls, record.path, Span.from_json(span),
                                     iterable_message(name.rsplit(".", 1)[-1], workers))
