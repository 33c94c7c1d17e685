"""Learning-rate schedulers: what unit a schedule counts in, and how often it is stepped.

* ``schedule_unit(ctx, call)``: ``"batch"`` when a scheduler construction counts optimizer
  steps (``OneCycleLR``, ``CyclicLR``, Hugging Face warm-up schedules, or any scheduler sized
  by ``len(loader)``/``total_steps``/``max_iters``), ``"epoch"`` when it counts epochs
  (``StepLR``/``MultiStepLR``/``ExponentialLR``/``CosineAnnealingLR``... sized by ``epochs``;
  ``StepLR``/``MultiStepLR``/``ExponentialLR`` sized by anything else that names no steps,
  a configuration's ``step_size`` included: they count epochs unless sized in steps;
  ``CosineAnnealingLR(T_max=200)`` and other small literals), else None
  (``ReduceLROnPlateau``, ``LambdaLR`` of unknown unit). A ``SequentialLR``/``ChainedScheduler``
  counts in the unit of its sub-schedulers (``sub_schedulers``; names followed), with
  ``SequentialLR``'s ``milestones``: steps when one of them counts steps, epochs when those
  that tell all count epochs (``LinearLR(total_iters=warmup_epochs)`` then
  ``CosineAnnealingLR(T_max=max_epochs)``: epochs), else None.
* ``by_setting(ctx, call)``: it counts epochs only because a configuration sizes it;
  ``step_budgeted(training, site)``: the run around a step is counted in optimizer steps
  (``range(cfg.n_steps // len(loader))``, ``if step >= max_steps: break``): a configured size
  may be steps there.
* ``constructions(semantic, key, at)``: the scheduler constructor calls ``key`` may hold,
  followed through parameters and ``self.`` attributes (``semantic.constructors.origins``:
  ``train(model, loader, opt, sched)``, ``Trainer(..., scheduler)`` keeping ``self.scheduler``).
* ``schedule_of(semantic, expr, at)``: ``[unit, kind, by setting]`` of the one schedule an
  expression may hold, else None: what a file hands another module's trainer (``constructors.passes``).
* ``scheduler_steps(semantic)``: ``(site, key)`` of every bare ``sched.step()`` on a key bound
  to a scheduler or named like one (``step(epoch)``/``step(metric)`` choose their own count).
* ``step_rate(training, site)``: ``"batch"`` when a call runs once per batch (in a data or
  training loop, or in a function that runs once per batch), ``"epoch"`` when once per epoch.
* ``in_epochs(training, site)``: the call runs within epochs (an epoch loop around it or a
  caller, or a function named for one epoch: ``train_epoch``, ``train_one_epoch``).
* Lightning: ``returned_as_scheduler(ctx, use)``: ``configure_optimizers`` hands ``use`` to
  Lightning as a scheduler (``return [opt], [use]``, ``"lr_scheduler": use``);
  ``optimises_manually(model)``: the file steps its schedulers itself (manual optimization);
  ``dict_key(element)``: a dict element's literal key (``"interval"``, ``"scheduler"``).
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.constructors import origins
from torchlint.semantic.epochs import inside_epochs, loop_is_epoch
from torchlint.semantic.training import DATA, DATA_ITERABLE, TRAINING
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

BATCH, EPOCH_UNIT = "batch", "epoch"
# Schedulers whose natural unit is one optimizer step.
_PER_STEP = frozenset({"OneCycleLR", "CyclicLR"})
# Schedulers whose natural unit is one epoch when sized by epochs or by small literals.
_PER_EPOCH = frozenset({"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
                        "PolynomialLR"})
# Of those, the ones that count epochs unless their size names steps (PyTorch's examples and
# docs step them once per epoch; ``step_size=cfg.step_size`` is a number of epochs).
_EPOCH_UNLESS_STEPS = frozenset({"StepLR", "MultiStepLR", "ExponentialLR"})
# The argument that sizes a schedule, by keyword and position (after the optimizer).
_SIZE = {"StepLR": "step_size", "MultiStepLR": "milestones", "ExponentialLR": "gamma", "CosineAnnealingLR": "T_max"}
_NEVER = frozenset({"ReduceLROnPlateau"})
# Names that count optimizer steps: total_steps, num_training_steps, max_iters, steps_per_epoch.
_BATCH_WORD = re.compile(r"steps|iters?(_|$)|iterations|batches|updates", re.IGNORECASE)
_EPOCH_WORD = re.compile(r"epoch", re.IGNORECASE)
# The decay points of a step schedule (torchvision's references: ``--lr-steps 16 22``, epochs):
# "steps" there are the schedule's steps, not optimizer steps.
_LR_POINTS = re.compile(r"^(lr|learning_rate)_?steps?$", re.IGNORECASE)
# A function that runs one epoch: train_epoch, train_one_epoch, _run_epoch, epoch_train.
_EPOCH_FUNCTION = re.compile(r"(train|run|fit)\w*epoch|epoch\w*(train|run|fit)", re.IGNORECASE)
# Literal step sizes/milestones this small count epochs (iteration milestones run to thousands).
_EPOCH_LITERAL_MAX = 1000
# How many assignments of a local name ``_sized_by`` reads back (``size = n * len(loader)``).
_FOLLOW = 2


def schedule_unit(ctx, call: cst.Call, depth: int = 0) -> str | None:
    """``"batch"`` / ``"epoch"`` / None for a scheduler construction (see the module doc)."""
    kind = api.scheduler_kind(ctx, call.func)
    if kind is None or kind in _NEVER:
        return None
    if kind in _COMPOSITE:
        return _composite_unit(ctx, call, kind, depth)
    batch, epoch = _sized_by(ctx, call)
    if batch:
        return BATCH
    if kind in _PER_STEP or kind.startswith("get_"):
        return None if epoch else BATCH
    if kind in _PER_EPOCH and (epoch or _small_literals(kind, call) or _sized_by_setting(kind, call)):
        return EPOCH_UNIT
    return None


# Schedulers made of others: ``SequentialLR(opt, schedulers, milestones)``, ``ChainedScheduler(schedulers)``.
_COMPOSITE = frozenset({"SequentialLR", "ChainedScheduler"})
# How deep composites of composites are read.
_MAX_NESTING = 3


def sub_schedulers(ctx, call: cst.Call) -> list[cst.Call] | None:
    """The scheduler constructions a ``SequentialLR``/``ChainedScheduler`` is made of, in order
    (``schedulers=[LinearLR(...), CosineAnnealingLR(...)]``; a name in the list is followed to
    its assignments, ``warmup = LinearLR(...)``); None when the list, or one of its elements,
    cannot be read (a list built elsewhere, a starred element, a parameter)."""
    kind = api.scheduler_kind(ctx, call.func)
    if kind not in _COMPOSITE:
        return None
    arg = api.keyword_arg(call, "schedulers")
    if arg is None:
        position = 1 if kind == "SequentialLR" else 0
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) <= position or positional[position].star:
            return None
        arg = positional[position]
    if not isinstance(arg.value, (cst.List, cst.Tuple)):
        return None
    model = ctx.semantic.model if ctx.semantic_started() else None
    out: list[cst.Call] = []
    for element in arg.value.elements:
        value = element.value
        if isinstance(element, cst.StarredElement):
            return None
        if isinstance(value, cst.Name) and model is not None:
            bound = model.reaching(value.value, value)
            if not bound or any(b.kind not in ("assign", "ann") or not isinstance(b.value, cst.Call) for b in bound):
                return None
            values = [b.value for b in bound]
        else:
            values = [value]
        for v in values:
            if not isinstance(v, cst.Call) or api.scheduler_kind(ctx, v.func) is None:
                return None
            out.append(v)
    return out


def _composite_unit(ctx, call: cst.Call, kind: str, depth: int) -> str | None:
    """The unit of a ``SequentialLR``/``ChainedScheduler``: what its sub-schedulers (and
    ``SequentialLR``'s ``milestones``, counted in the same steps) say. A sub-scheduler tells by
    ``schedule_unit``, else by the names sizing it (``LinearLR(opt, total_iters=warmup_epochs)``:
    epochs; ``warmup_steps``: steps). Steps when any tells steps; epochs when those that tell
    all tell epochs; None when none tells (a list that cannot be read tells nothing)."""
    parts = sub_schedulers(ctx, call) if depth < _MAX_NESTING else None
    units = set()
    for part in parts or ():
        unit = schedule_unit(ctx, part, depth + 1)
        if unit is None and api.scheduler_kind(ctx, part.func) not in _NEVER | _COMPOSITE:
            batch, epoch = _sized_by(ctx, part)
            unit = BATCH if batch else EPOCH_UNIT if epoch else None
        units.add(unit)
    milestones = api.keyword_arg(call, "milestones")
    if milestones is None and kind == "SequentialLR":
        positional = [a for a in call.args if a.keyword is None]
        milestones = positional[2] if len(positional) > 2 else None
    if milestones is not None:
        batch, epoch = _sized_value(ctx, milestones.value)
        units.add(BATCH if batch else EPOCH_UNIT if epoch else None)
    units.discard(None)
    if BATCH in units:
        return BATCH
    return EPOCH_UNIT if units else None


def by_setting(ctx, call: cst.Call) -> bool:
    """The construction counts epochs only because a configuration sizes it
    (``StepLR(opt, step_size=cfg.step_size)``: see ``schedule_unit``), not by its names or
    small literals: a run budgeted in steps (``step_budgeted``) may mean steps by it."""
    kind = api.scheduler_kind(ctx, call.func)
    if kind not in _EPOCH_UNLESS_STEPS or _small_literals(kind, call):
        return False
    batch, epoch = _sized_by(ctx, call)
    return not batch and not epoch and _sized_by_setting(kind, call)


def step_budgeted(training, site) -> bool:
    """The run around ``site`` is counted in optimizer steps, epochs only repeating the data:
    an epoch loop (around the site, or around a same-file caller of its function) whose count
    names steps (``range(start, cfg.n_steps // len(loader) + 1)``, ``while step < max_iters``;
    a local name's assignment read back), or a loop around the site that ends on a step count
    (``if global_step >= args.max_steps: break``)."""
    model = training.model
    loops = list(site.all_loops)
    function = enclosing_function(model, site.scope)
    for caller in training.graph.callers(function):
        loops += caller.all_loops
    for loop in loops:
        node = loop.node
        counted = node.iter if isinstance(node, cst.For) else node.test
        if loop_is_epoch(training, loop) and _names_steps(model, counted):
            return True
    for loop in site.all_loops:
        for n in iter_nodes(loop.node.body):
            if isinstance(n, cst.If) and _names_steps(model, n.test) and any(
                    isinstance(b, (cst.Break, cst.Return)) for b in iter_nodes(n.body)):
                return True
    return False


def _names_steps(model, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A name in ``expr`` counts optimizer steps (``n_steps``, ``max_iters``), or a local name
    is assigned a value that does."""
    for node in iter_nodes(expr):
        if isinstance(node, (cst.Name, cst.Attribute)):
            last = node.value if isinstance(node, cst.Name) else node.attr.value
            if _BATCH_WORD.search(last):
                if not _EPOCH_WORD.search(last):  # ``max_steps_per_epoch`` caps an epoch
                    return True
            elif isinstance(node, cst.Name) and depth < _FOLLOW and any(
                    b.kind in ("assign", "ann") and b.value is not None and _names_steps(model, b.value, depth + 1)
                    for b in model.reaching(node.value, node)):
                return True
    return False


def _size(kind: str, call: cst.Call) -> cst.Arg | None:
    """The argument that sizes the schedule: ``step_size``, ``milestones``, ``gamma``, ``T_max``."""
    keyword = _SIZE.get(kind)
    if keyword is None:
        return None
    return api.keyword_arg(call, keyword) or \
        (call.args[1] if len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star else None)


def _sized_by_setting(kind: str, call: cst.Call) -> bool:
    """``StepLR(opt, step_size=cfg.step_size)``, ``MultiStepLR(opt, args.milestones)``,
    ``ExponentialLR(opt, gamma=args.gamma)``: sized by names that count no steps (``_sized_by``
    found none), so the schedule counts epochs, as these schedulers do unless sized in steps."""
    if kind not in _EPOCH_UNLESS_STEPS:
        return False
    size = _size(kind, call)
    return size is not None and any(isinstance(n, (cst.Name, cst.Attribute)) for n in iter_nodes(size.value))


def _sized_by(ctx, call: cst.Call) -> tuple[bool, bool]:
    """(counts in batches, counts in epochs) from the names in the arguments' values:
    ``len(loader)``/``total_steps``/``max_iter`` vs ``epochs``/``args.num_epochs``; a local
    name's assigned value is read too (``step_size = 30 * len(loader)``: batches)."""
    todo = [(arg.value, 0) for i, arg in enumerate(call.args) if i or arg.keyword is not None]
    todo += [(arg.value, _FOLLOW) for arg in call.args[:1] if arg.keyword is None]  # the optimizer: as written
    return _scan(ctx, todo)


def _sized_value(ctx, value: cst.BaseExpression) -> tuple[bool, bool]:
    """(names steps, names epochs) for one argument's value, as ``_sized_by`` reads it."""
    return _scan(ctx, [(value, 0)])


def _scan(ctx, todo: list) -> tuple[bool, bool]:
    batch = epoch = False
    model = ctx.semantic.model if ctx.semantic_started() else None
    while todo:
        value, depth = todo.pop()
        for node in iter_nodes(value):
            if isinstance(node, cst.Call) and dotted_name(node.func) == "len" and node.args \
                    and DATA_ITERABLE.search(dotted_name(node.args[0].value) or ""):
                batch = True
            elif isinstance(node, (cst.Name, cst.Attribute)):
                last = node.value if isinstance(node, cst.Name) else node.attr.value
                if _LR_POINTS.match(last):
                    continue  # the schedule's own decay points: a setting, in whatever unit
                if _BATCH_WORD.search(last):
                    batch = True
                elif _EPOCH_WORD.search(last):
                    epoch = True
                elif isinstance(node, cst.Name) and model is not None and depth < _FOLLOW:
                    todo += [(b.value, depth + 1) for b in model.reaching(node.value, node)
                             if b.kind in ("assign", "ann") and b.value is not None]
    return batch, epoch


def _small_literals(kind: str, call: cst.Call) -> bool:
    """``StepLR(opt, 30)``, ``MultiStepLR(opt, [30, 60])``, ``ExponentialLR(opt, 0.9)``,
    ``CosineAnnealingLR(opt, T_max=200)``: sizes no iteration-based schedule would use."""
    if kind == "ExponentialLR":
        gamma = api.keyword_arg(call, "gamma") or (call.args[1] if len(call.args) > 1 else None)
        return gamma is not None and isinstance(gamma.value, cst.Float) and float(gamma.value.value) < 0.99
    if kind not in ("StepLR", "MultiStepLR", "CosineAnnealingLR"):
        return False
    size = _size(kind, call)
    if size is None:
        return False
    numbers = [n for n in iter_nodes(size.value) if isinstance(n, cst.Integer)]
    values = [n for n in iter_nodes(size.value) if isinstance(n, (cst.Name, cst.Attribute, cst.Float))]
    return bool(numbers) and not values and all(int(n.evaluated_value) < _EPOCH_LITERAL_MAX for n in numbers)


def constructions(semantic, key: str | cst.BaseExpression, at: cst.CSTNode) -> list[cst.Call]:
    """The scheduler constructor calls ``key`` (or an expression) may hold at ``at``: reaching
    bindings, followed through other names, parameters (the arguments the file's calls pass)
    and ``self.x`` (what the class stores there, ``__init__``'s parameters followed to its
    construction sites): ``constructors.origins``. For another dotted key (``trainer.sched``),
    every binding of it in the file."""
    ctx = semantic.ctx
    found = [c for c in origins(semantic, key, at).calls() if api.scheduler_kind(ctx, c.func) is not None]
    if found or not isinstance(key, str) or "." not in key:
        return found
    model = semantic.model
    return [b.value for scope in model.scopes.values() for b in scope.bindings.get(key, ())
            if b.kind in ("assign", "ann") and isinstance(b.value, cst.Call)
            and api.scheduler_kind(ctx, b.value.func) is not None]


def schedule_of(semantic, expr: cst.BaseExpression, at: cst.CSTNode) -> list | None:
    """``[unit, kind, by setting]`` when every scheduler ``expr`` may hold at ``at`` counts in
    the same known unit (``schedule_unit``), ``kind`` the first one's, ``by setting`` when each
    counts epochs only by a configuration (``by_setting``); else None (no scheduler, a
    ``ReduceLROnPlateau``, units that disagree or are unknown)."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.IfExp)):
        return None
    built = constructions(semantic, expr, at)
    units = {schedule_unit(semantic.ctx, call) for call in built}
    if len(units) != 1 or None in units:
        return None
    return [units.pop(), api.scheduler_kind(semantic.ctx, built[0].func),
            all(by_setting(semantic.ctx, call) for call in built)]


def is_plateau(semantic, key: str, at: cst.CSTNode) -> bool:
    """``key`` holds a ``ReduceLROnPlateau`` (stepped with a metric, whenever the metric is ready)."""
    return any(api.scheduler_kind(semantic.ctx, c.func) in _NEVER for c in constructions(semantic, key, at))


def scheduler_steps(semantic) -> list:
    """``(site, key)`` of every bare ``key.step()`` where ``key`` is bound to a scheduler in the
    file or named like one (``scheduler``, ``lr_scheduler``)."""
    bound = semantic.training.bindings["scheduler"]
    out = []
    for site in semantic.model.calls:
        func = site.node.func
        if site.node.args or not isinstance(func, cst.Attribute) or func.attr.value != "step":
            continue
        key = api.expr_key(func.value)
        if key is not None and (key in bound or api.looks_like_scheduler_name(key)):
            out.append((site, key))
    return out


def step_rate(training, site) -> str | None:
    """``"batch"`` / ``"epoch"`` / None: how often the call at ``site`` runs. In loops, the
    loops decide; outside any loop of its function: ``"epoch"`` after a batch loop of that
    function (``for b in loader: ...`` then ``sched.step()``), else what the loops around the
    function's callers say (a function with no caller in the file that steps an optimizer
    outside loops is a per-batch step)."""
    if site.all_loops:
        return _loops_rate(training, site.all_loops)
    model = training.model
    function = enclosing_function(model, site.scope)
    if any(loop.order < site.order and _loops_rate(training, (loop,)) == BATCH
           for loop in model.scopes[function].loops if loop.outer is None):
        return EPOCH_UNIT
    callers = training.graph.callers(function)
    if not callers:
        steps = [s for s, _ in training.sites.step if not s.loops and enclosing_function(model, s.scope) is function]
        return BATCH if steps else None
    rates = {_loops_rate(training, caller.all_loops) for caller in callers}
    return rates.pop() if len(rates) == 1 else None


def _loops_rate(training, loops) -> str | None:
    """The innermost loop that says: an epoch loop -> ``"epoch"``; a data or training loop ->
    ``"batch"``."""
    for loop in reversed(loops):
        if loop_is_epoch(training, loop):
            return EPOCH_UNIT
        if training.loop_kinds(loop) & {DATA, TRAINING}:
            return BATCH
    return None


def runs_one_epoch(function) -> bool:
    """A function named for one epoch (``train_epoch``, ``train_one_epoch``, ``_run_epoch``):
    whoever calls it, in this module or another, calls it once per epoch."""
    return isinstance(function, cst.FunctionDef) and bool(_EPOCH_FUNCTION.search(function.name.value))


def in_epochs(training, site) -> bool:
    """The call runs within epochs: inside an epoch loop (of its own function, or around a
    caller), or in a function named for one epoch (``train_epoch``, ``train_one_epoch``,
    ``run_epoch``: whoever calls it, in this module or another, calls it once per epoch)."""
    if inside_epochs(training, site.all_loops, site.scope):
        return True
    return runs_one_epoch(enclosing_function(training.model, site.scope))


def dict_key(element) -> str | None:
    """The literal string key of a dict element (None for any other key or a ``**`` element)."""
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        return element.key.evaluated_value
    return None


def returned_as_scheduler(ctx, use: cst.BaseExpression) -> bool:
    """``use`` is what a ``return`` hands Lightning as a scheduler: an element of the second
    list of ``return [opt], [use]``, or the value of ``"lr_scheduler": use`` in a returned dict."""
    parent = ctx.parent(use)
    if isinstance(parent, cst.Element) and isinstance(ctx.parent(parent), cst.List):
        outer = ctx.parent(ctx.parent(parent))
        tuple_ = ctx.parent(outer) if isinstance(outer, cst.Element) else None
        return isinstance(tuple_, cst.Tuple) and len(tuple_.elements) == 2 and tuple_.elements[1] is outer \
            and isinstance(ctx.parent(tuple_), cst.Return)
    if isinstance(parent, cst.DictElement) and parent.value is use and dict_key(parent) == "lr_scheduler":
        return isinstance(ctx.parent(ctx.parent(parent)), cst.Return)
    return False


def optimises_manually(model) -> bool:
    """Whether the file optimises manually under Lightning (so Lightning does not step its
    schedulers): ``self.automatic_optimization = False`` or ``self.lr_schedulers()`` in it."""
    return any(key.endswith("automatic_optimization") for scope in model.scopes.values() for key in scope.bindings) \
        or bool(model.calls_to("lr_schedulers")) or any(
            s.callee is not None and s.callee.endswith(".lr_schedulers") for s in model.calls)
