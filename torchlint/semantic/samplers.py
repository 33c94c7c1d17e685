"""Data-loading order across epochs and workers: ``DistributedSampler`` and ``IterableDataset``.

* ``distributed_samplers(semantic)``: every ``DistributedSampler(...)`` construction.
* ``sets_epoch(model)``: the file calls ``X.set_epoch(...)`` somewhere (a sampler, a loader, a
  batch sampler: any receiver counts, the rule only needs to know it is done).
* ``loaders_of(semantic, sampler)``: the keys of the ``DataLoader``s built on a sampler
  (``sampler=sampler`` or ``sampler=DistributedSampler(...)`` inline).
* ``read_every_epoch(training, key)``: a loop over ``key`` runs inside an epoch loop (or in a
  function named for one epoch, ``train_one_epoch``), or ``key`` is handed to a same-file
  function from inside one, or to a function or class that reads it every epoch itself
  (``Trainer(model, loader)`` keeping ``self.loader`` and looping over it in ``fit``'s epochs:
  ``constructors.handed_to``). ``read_level(training, key, within)``: the same as 2, 1 when it
  is only iterated (once per call), 0 when not even that; ``within`` limits it to the code of
  some functions (a parameter's, a class's methods).
* ``parameters_read(semantic)``: the file's parameters another module may hand a loader to
  (``constructors.exposed``: module-level functions, module-level classes' ``__init__``), each
  with its ``read_level`` (``self.`` attributes ``__init__`` keeps it as followed into the
  class's methods).
* ``unsharded_iterable_datasets(semantic)``: same-file ``IterableDataset`` subclasses whose code
  never looks at the worker (``get_worker_info``, worker ids, ranks, shards).
* ``loader_workers(call)``: the ``num_workers`` literal of a ``DataLoader`` call when above 0.
"""

from __future__ import annotations

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.constructors import bound_key, exposed, handed_to, received
from torchlint.semantic.epochs import inside_epochs, loop_is_epoch
from torchlint.semantic.model import FUNCTION, LAMBDA
from torchlint.semantic.schedulers import runs_one_epoch
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

_MAX_DEPTH = 4

_SAMPLERS = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
                       # torchdata's checkpointable drop-ins, which shuffle by epoch the same way
                       "torchdata.stateful_dataloader.sampler.StatefulDistributedSampler"})
_ITERABLE_DATASETS = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader",
                      "torchdata.stateful_dataloader.StatefulDataLoader"})
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


def loaders_of(semantic, sampler: cst.Call) -> list[tuple[cst.Call, str | None]]:
    """``(DataLoader call, its key)`` for each loader built on ``sampler`` (by its key or inline)."""
    key = bound_key(semantic.ctx, sampler, branches=True)
    out = []
    for site in semantic.model.calls:
        call = site.node
        arg = api.keyword_arg(call, "sampler")
        if arg is None or not is_loader_call(semantic, call):
            continue
        if arg.value is sampler or (key is not None and api.expr_key(arg.value) == key):
            out.append((call, bound_key(semantic.ctx, call, branches=True)))
    return out


def read_every_epoch(training, key: str) -> bool:
    """``key`` is read again and again: a ``for`` loop whose iterable mentions it runs inside an
    epoch loop (or in a function named for one epoch); or a call hands it to a same-file
    function from inside an epoch loop, or to a function or class that reads it every epoch
    itself (a loop nested in another loop, ``def cycle(it): while True: for x in it: yield x``;
    a class keeping it on ``self`` and looping over that in its epochs)."""
    return read_level(training, key) == 2


def read_level(training, key: str, within: set | None = None, depth: int = 0) -> int:
    """2: ``key`` is read every epoch (``read_every_epoch``); 1: it is iterated, once per call
    of the code that does; 0: neither. ``within``: only loops and calls in these functions'
    code count (the key is a parameter or a ``self.`` attribute there), and there a loop
    nested in another loop reads it repeatedly."""
    model = training.model
    level = 0
    for loop in model.loops.values():
        if not isinstance(loop.node, cst.For) or not _mentions(loop.node.iter, key):
            continue
        function = enclosing_function(model, loop.scope)
        if within is not None and function not in within:
            continue
        around = model.loops_around(loop.node)
        if inside_epochs(training, around, loop.scope) or runs_one_epoch(function) or within is not None and around:
            return 2
        level = 1
    for site in model.calls:
        args = [a for a in site.node.args if not a.star and api.expr_key(a.value) == key]
        if not args:
            continue
        function = enclosing_function(model, site.scope)
        if within is not None and function not in within:
            continue
        targets = training.graph.targets(site)
        if not targets:
            continue
        every = inside_epochs(training, site.all_loops, site.scope) or runs_one_epoch(function)
        if every and any(not _constructor(t) for t in targets):
            return 2  # handed to a function from inside the epochs: it reads it each time
        if depth >= _MAX_DEPTH:
            continue
        for arg in args:
            for place in handed_to(training, site, arg):
                inner = read_level(training, place.param, {place.function}, depth + 1)
                if place.cls is not None and place.attrs:
                    me = model.scopes[place.function].self_name
                    methods = _methods(model, place.cls)
                    inner = max([inner, *(read_level(training, f"{me}.{attr}", methods, depth + 1)
                                          for attr in place.attrs)])
                if inner == 2 or inner and every:
                    return 2
                level = max(level, inner)
    return level


def _constructor(function) -> bool:
    return isinstance(function, cst.FunctionDef) and function.name.value in ("__init__", "__post_init__", "__new__")


def _methods(model, info) -> set:
    """The function code of a class's methods (and of the functions inside them), the methods
    of its same-file subclasses included (an instance may be one)."""
    return {scope.node for scope in model.scopes.values() if scope.kind in (FUNCTION, LAMBDA)
            and scope.cls is not None and info in model.mro(scope.cls)}


def parameters_read(semantic) -> list[list]:
    """``[owner, param, position, level]`` (``constructors.Entry`` and its ``read_level``, not
    0) for each parameter of the file another module may fill: the parameter's own reads in
    its function, and for a class's ``__init__`` also those of each ``self.`` attribute it is
    kept as, in the class's methods."""
    training = semantic.training
    model = training.model
    out = []
    for entry, function in exposed(semantic):
        level = read_level(training, entry.param, {function})
        scope = model.scopes[function]
        if function.name.value == "__init__" and scope.cls is not None and level < 2:
            kept = received(semantic).get(scope.cls.qualname, {}).get(entry.param, ())
            methods = _methods(model, scope.cls)
            level = max([level, *(read_level(training, f"{scope.self_name}.{attr}", methods) for attr in kept)])
        if level:
            out.append([*entry.to_json(), level])
    return out


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
