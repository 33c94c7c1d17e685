"""Data-loading order across epochs and workers: ``DistributedSampler`` and ``IterableDataset``.

* ``distributed_samplers(semantic)``: every ``DistributedSampler(...)`` construction.
* ``sets_epoch(model)``: the file calls ``X.set_epoch(...)`` somewhere (a sampler, a loader, a
  batch sampler: any receiver counts, the rule only needs to know it is done).
* ``loaders_of(semantic, sampler)``: the keys of the ``DataLoader``s built on a sampler
  (``sampler=sampler`` or ``sampler=DistributedSampler(...)`` inline).
* ``read_every_epoch(training, key)``: a loop over ``key`` runs inside an epoch loop, or ``key``
  is handed to a same-file function from inside one, or to one that loops over it repeatedly.
* ``unsharded_iterable_datasets(semantic)``: same-file ``IterableDataset`` subclasses whose code
  never looks at the worker (``get_worker_info``, worker ids, ranks, shards).
* ``loader_workers(call)``: the ``num_workers`` literal of a ``DataLoader`` call when above 0.
"""

from __future__ import annotations

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.epochs import inside_epochs, loop_is_epoch
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

_SAMPLERS = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
_ITERABLE_DATASETS = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Names in a dataset's code that mean it splits its stream by worker or rank.
_SHARDING_WORDS = frozenset({"get_worker_info", "worker_info", "worker_id", "num_workers", "split_dataset_by_node",
                             "shard", "shards", "num_shards", "shard_id", "rank", "world_size", "get_rank",
                             "split_by_worker", "split_by_node"})


def _qualified_in(semantic, func: cst.BaseExpression, names: frozenset) -> bool:
    model = semantic.model
    return model.is_imported(func) and model.qualified_name(func) in names


def is_loader_call(semantic, call: cst.Call) -> bool:
    """A ``torch.utils.data.DataLoader(...)`` call."""
    return _qualified_in(semantic, call.func, _LOADERS)


def distributed_samplers(semantic) -> list[cst.Call]:
    return [s.node for s in semantic.model.calls if _qualified_in(semantic, s.node.func, _SAMPLERS)]


def sets_epoch(model) -> bool:
    return any(isinstance(s.node.func, cst.Attribute) and s.node.func.attr.value == "set_epoch" for s in model.calls)


def assigned_key(semantic, call: cst.Call) -> str | None:
    """``x`` / ``self.x`` of ``x = call`` (the whole value, or a branch of ``call if c else
    None``), else None."""
    ctx = semantic.model.ctx
    value, parent = call, ctx.parent(call)
    while isinstance(parent, cst.IfExp) and parent.test is not value:
        value, parent = parent, ctx.parent(parent)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is value:
        targets = parent.targets if isinstance(parent, cst.Assign) else [parent]
        keys = [api.expr_key(t.target) for t in targets]
        return keys[0] if len(keys) == 1 else None
    return None


def loaders_of(semantic, sampler: cst.Call) -> list[tuple[cst.Call, str | None]]:
    """``(DataLoader call, its key)`` for each loader built on ``sampler`` (by its key or inline)."""
    key = assigned_key(semantic, sampler)
    out = []
    for site in semantic.model.calls:
        call = site.node
        arg = api.keyword_arg(call, "sampler")
        if arg is None or not is_loader_call(semantic, call):
            continue
        if arg.value is sampler or (key is not None and api.expr_key(arg.value) == key):
            out.append((call, assigned_key(semantic, call)))
    return out


def read_every_epoch(training, key: str) -> bool:
    """``key`` is read again and again: a ``for`` loop whose iterable mentions it runs inside an
    epoch loop; or a call hands it to a same-file function from inside an epoch loop (which
    then iterates it), or to one that iterates that parameter inside a loop of its own
    (``def cycle(it): while True: for x in it: yield x``)."""
    model = training.model
    for loop in model.loops.values():
        if isinstance(loop.node, cst.For) and _mentions(loop.node.iter, key):
            if inside_epochs(training, model.loops_around(loop.node), loop.scope):
                return True
    for site in model.calls:
        positions = [i for i, a in enumerate(site.node.args) if a.keyword is None and api.expr_key(a.value) == key]
        targets = training.graph.targets(site) if positions else []
        if not targets:
            continue
        if inside_epochs(training, site.all_loops, site.scope) or \
                any(_iterates_repeatedly(model, t, i) for t in targets for i in positions):
            return True
    return False


def epoch_loops_reading(training, key: str) -> set:
    """The epoch loops (``Loop``s) of the file around a ``for`` loop over ``key`` or around a
    call that hands ``key`` to a same-file function: where an epoch of ``key`` starts."""
    model = training.model
    around = [model.loops_around(loop.node) for loop in model.loops.values()
              if isinstance(loop.node, cst.For) and _mentions(loop.node.iter, key)]
    around += [site.all_loops for site in model.calls
               if any(a.keyword is None and api.expr_key(a.value) == key for a in site.node.args)
               and training.graph.targets(site)]
    return {loop for loops in around for loop in loops if loop_is_epoch(training, loop)}


def _iterates_repeatedly(model, function: cst.CSTNode, position: int) -> bool:
    """The function's positional parameter ``position`` is the iterable of a ``for`` loop
    nested in another loop of the function."""
    if not isinstance(function, cst.FunctionDef) or position >= len(function.params.params):
        return False
    name = function.params.params[position].name.value
    return any(isinstance(loop.node, cst.For) and loop.outer is not None and _mentions(loop.node.iter, name)
               for loop in model.scopes[function].loops)


def _mentions(expr: cst.BaseExpression, key: str) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and dotted_name(n) == key for n in iter_nodes(expr))


def unsharded_iterable_datasets(semantic) -> dict[str, cst.ClassDef]:
    """Same-file classes deriving from ``torch.utils.data.IterableDataset`` (directly or through
    same-file classes) that define ``__iter__`` and whose code (theirs and their same-file
    bases') never mentions a worker, a rank or a shard; by qualified name in the file."""
    model = semantic.model
    out = {}
    for info in model.classes.values():
        chain = model.mro(info)
        bases = [b for c in chain for b in c.bases
                 if b not in {name for local in c.local_bases for name in (local.name, local.qualname)}]
        if not bases or not all(b in _ITERABLE_DATASETS for b in bases):
            continue
        if not any("__iter__" in c.methods for c in chain):
            continue
        if any(_shards(c.node) for c in chain):
            continue
        out[info.qualname] = info.node
    return out


def _shards(node: cst.ClassDef) -> bool:
    for n in iter_nodes(node):
        if isinstance(n, cst.Name) and n.value in _SHARDING_WORDS:
            return True
        if isinstance(n, cst.Attribute) and n.attr.value in _SHARDING_WORDS:
            return True
    return False


def loader_workers(call: cst.Call) -> int | None:
    """``num_workers=N`` with a literal ``N > 0`` and no ``worker_init_fn`` (which may split the
    stream per worker), else None."""
    if api.keyword_arg(call, "worker_init_fn") is not None:
        return None
    arg = api.keyword_arg(call, "num_workers")
    if arg is None or not isinstance(arg.value, cst.Integer):
        return None
    workers = int(arg.value.evaluated_value)
    return workers if workers > 0 else None


def loader_dataset(call: cst.Call) -> cst.BaseExpression | None:
    """The dataset argument of a ``DataLoader`` call (first positional or ``dataset=``)."""
    arg = api.keyword_arg(call, "dataset")
    if arg is not None:
        return arg.value
    return call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
