"""TL014 sampler-epoch-not-set: a ``DistributedSampler`` never given ``set_epoch(epoch)``, or an
``IterableDataset`` that every ``DataLoader`` worker reads whole.

Shared queries: ``torchlint.semantic.samplers``. A ``DistributedSampler(...)`` is reported when
the file never calls ``set_epoch`` (on anything), a ``DataLoader`` built on it (by name or
inline) is iterated inside an epoch loop (or handed to a same-file function from one), it
shuffles (no ``shuffle=False``), it does not feed evaluation (``loaders.feeds_evaluation``), and
no trainer (Lightning, Accelerate, Hugging Face, Fabric) and no ``prepare``/``setup_dataloaders``
call manages the loader (torchdata's ``StatefulDistributedSampler``/``StatefulDataLoader`` count as
these). The loader is followed into the same file's functions and classes (``Trainer(model,
loader)`` keeping ``self.loader`` and looping over it every epoch), out of the helper that returns
it (``self._sampler, self._dataloader = self._setup_data(...)``: ``constructors.kept_as``), and into
another module's: a loader handed to an imported function or class (``facts["handed"]``) is
reported when that module reads the parameter every epoch, or iterates it and is called from
inside this file's epochs, and never calls ``set_epoch`` itself (its ``demanded_facts``:
``samplers.parameters_read``).

A ``DataLoader`` with a literal ``num_workers > 0`` (and no ``worker_init_fn``) over an instance
of an ``IterableDataset`` subclass whose code never mentions a worker, rank or shard is
reported: here when the class is in the file; through the facts (``unsharded`` classes per
file, ``readers`` of imported classes) and the project pass when it is imported.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint import torch_api as api
from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import SAFE, Fix, insert_statement_before
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.constructors import bound_key, kept_as, matches, passes, received
from torchlint.semantic.epochs import inside_epochs, range_stop
from torchlint.semantic.loaders import feeds_evaluation
from torchlint.semantic.samplers import (distributed_samplers, epoch_loops_reading, is_loader_call, loader_dataset,
                                         loader_workers, loaders_of, parameters_read, read_every_epoch,
                                         sets_epoch, unsharded_iterable_datasets)
from torchlint.semantic.schedulers import runs_one_epoch
from torchlint.semantic.training import EPOCH_VAR
from torchlint.statements import dotted_name
from torchlint.textscan import contains

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


    def finish(self) -> None:
        semantic = self.ctx.semantic
        self._facts: dict = {}
        if contains(self.ctx.text, "DistributedSampler"):
            self._samplers(semantic)
        if contains(self.ctx.text, "IterableDataset") or contains(self.ctx.text, "num_workers"):
            self._iterable_datasets(semantic)
        if self._facts:
            self.ctx.facts[self.code] = self._facts

    def demanded_facts(self) -> dict:
        """The parameters of this file's functions and classes that another module may hand a
        loader to, with how this file reads them (``samplers.parameters_read``); none where the
        file calls ``set_epoch`` or a trainer runs the loop. Asked only of the files a loader
        over a shuffling ``DistributedSampler`` is handed to (``facts["handed"]``)."""
        semantic = self.ctx.semantic
        if sets_epoch(semantic.model) or semantic.training.bindings["trainer"]:
            return {"reads": []}
        reads = [read for read in parameters_read(semantic) if not self._managed_parameter(semantic, read)]
        return {"reads": reads}

    # -- DistributedSampler -----------------------------------------------------------------
    def _samplers(self, semantic) -> None:
        samplers = distributed_samplers(semantic)
        if not samplers or sets_epoch(semantic.model) or semantic.training.bindings["trainer"]:
            return
        handed: list = []
        for sampler in samplers:
            shuffle = api.keyword_arg(sampler, "shuffle")
            if shuffle is not None and api.is_false_literal(shuffle.value) or feeds_evaluation(semantic, sampler):
                continue
            for loader, key in loaders_of(semantic, sampler):
                if key is None or self._managed(semantic, key) or feeds_evaluation(semantic, loader):
                    continue
                name = bound_key(semantic.ctx, sampler, branches=True) or f"{key}.sampler"
                if read_every_epoch(semantic.training, key):
                    self.report(sampler, sampler_message(name), fix=self._set_epoch_fix(semantic, sampler, key))
                    break
                kept = [k for k in kept_as(semantic, key, loader)[1:] if not self._managed(semantic, k)]
                if any(read_every_epoch(semantic.training, k) for k in kept):
                    self.report(sampler, sampler_message(name))
                    break
                handed += self._handed(semantic, sampler, key, name)
        if handed:
            self._facts["handed"] = handed

    def _handed(self, semantic, sampler: cst.Call, key: str, name: str) -> list:
        """``[callee, slot, [every epoch, span, name]]`` for each imported function or class the
        loader ``key`` is handed to (``constructors.passes``); ``every epoch``: the call runs
        inside this file's epochs, so the callee iterating it once reads it every epoch."""
        training = semantic.training
        span = Span.of_range(self.ctx.position(sampler)).to_json()

        def describe(_, expr, at):
            if api.expr_key(expr) != key:
                return None
            site = semantic.model.call_site(at)
            every = inside_epochs(training, site.all_loops, site.scope) or \
                runs_one_epoch(enclosing_function(semantic.model, site.scope))
            return [every, span, name]

        return passes(semantic, describe)

    @classmethod
    def _managed_parameter(cls, semantic, read: list) -> bool:
        """The parameter (or an attribute ``__init__`` keeps it as) goes through ``prepare``."""
        owner, param = read[0], read[1]
        keys = {param, *(f"self.{attr}" for attr in received(semantic).get(owner, {}).get(param, ()))}
        return any(cls._managed(semantic, key) for key in keys)

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
        name = bound_key(semantic.ctx, sampler, branches=True)
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
        self._facts.update({k: v for k, v in (("unsharded", sorted(local)), ("readers", readers)) if v})

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
        yield from cls._handed_samplers(project)
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

    @classmethod
    def _handed_samplers(cls, project) -> Iterable[Finding]:
        """Loaders over a shuffling ``DistributedSampler`` handed to another module's function or
        class (``handed``) that reads the parameter every epoch (or iterates it, called from
        inside the epochs here) and never sets the epoch (``reads``, demanded of that module)."""
        for record in project.records:
            reported = set()
            for callee, slot, (every, span, name) in (record.facts.get(cls.code) or {}).get("handed", ()):
                hit = project.resolve_symbol(callee, record)
                if hit is None or hit[0] is record or tuple(span) in reported:
                    continue
                reads = (project.demand(cls.code, hit[0].path) or {}).get("reads", ())
                if any(owner == hit[1] and matches((owner, param, position), slot) and (level == 2 or every)
                       for owner, param, position, level in reads):
                    reported.add(tuple(span))
                    yield Finding.at(cls, record.path, Span.from_json(span), sampler_message(name))
