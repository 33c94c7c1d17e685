"""The training model: what the file's PyTorch code does, on top of the semantic model.

Bindings of optimizers, schedulers, GradScalers, models, criteria and trainers
(Lightning/HF ``Trainer``, ``Fabric``, ``Accelerator``); backward, optimizer-step and
``zero_grad`` sites keyed by optimizer; loop classification; "this function trains /
evaluates / runs once per batch" closed over the call graph; frozen modules; ONE
no-grad / inference-mode region model. Recognisers of single calls stay in
``torchlint.torch_api``; this module applies them once per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchlint import torch_api as api
from torchlint.libraries import LIGHTNING_ROOTS
from torchlint.semantic.callgraph import CallGraph, enclosing_function
from torchlint.semantic.model import COMPREHENSION, CallSite, Loop, SemanticModel
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

DATA_ITERABLE = re.compile(r"loader|batches|dataset|^dl$|_dl$|data_?iter|train_?iter", re.IGNORECASE)
EPOCH_VAR = re.compile(r"epoch|^ep(_?(i|idx|id|num|no))?$|^(i|n|cur|num)_?ep$", re.IGNORECASE)
# ignite engines call their process function once per batch.
ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.DeterministicEngine", "ignite.engine.engine.Engine",
                     "ignite.engine.deterministic.DeterministicEngine"})
# ignite's ready-made training: an engine whose process function clears, backpropagates and
# steps (``create_supervised_trainer``, the truncated-BPTT one), and the process functions it is
# built from, handed to an ``Engine`` (``Engine(supervised_training_step(model, opt, loss_fn))``).
IGNITE_TRAINERS = frozenset({"ignite.engine.create_supervised_trainer",
                             "ignite.contrib.engines.create_supervised_tbptt_trainer",
                             "ignite.contrib.engines.tbptt.create_supervised_tbptt_trainer"})
IGNITE_STEPS = frozenset(f"ignite.engine.supervised_training_step{kind}" for kind in ("", "_amp", "_apex", "_tpu"))
DATA, EPOCH, TRAINING, EVALUATION = "data", "epoch", "training", "evaluation"


def is_lightning_trainer(ctx, func: cst.BaseExpression) -> bool:
    """``pl.Trainer``, ``lightning.Trainer``, ``L.Trainer.from_argparse_args`` (imported)."""
    if not ctx.is_imported(func):
        return False
    parts = (ctx.qualified_name(func) or "").split(".")
    return parts[0] in LIGHTNING_ROOTS and "Trainer" in parts


def trainer_kind(ctx, func: cst.BaseExpression) -> str | None:
    """``lightning`` / ``transformers`` / ``fabric`` / ``accelerate`` for a trainer-like
    constructor, else None."""
    if is_lightning_trainer(ctx, func):
        return "lightning"
    if not ctx.is_imported(func):
        return None
    name = ctx.qualified_name(func) or ""
    last, root = name.rsplit(".", 1)[-1], name.split(".", 1)[0]
    if root == "transformers" and last.endswith("Trainer"):
        return "transformers"
    if root in LIGHTNING_ROOTS and last == "Fabric":
        return "fabric"
    if root == "accelerate" and last == "Accelerator":
        return "accelerate"
    return None


@dataclass(eq=False)
class Sites:
    """The training-relevant call sites of one file."""

    backward: list = field(default_factory=list)  # CallSite
    step: list = field(default_factory=list)  # (CallSite, optimizer key)
    zero_grad: list = field(default_factory=list)  # (CallSite, receiver key)
    fit: list = field(default_factory=list)  # CallSite of trainer.fit(...), ignite's create_supervised_trainer(...)
    engines: list = field(default_factory=list)  # (CallSite, process-function expression)


_SCALER_HELPER = re.compile(r"scaler$", re.IGNORECASE)


def scaler_helper_step(call: cst.Call, optimizers: set[str] | frozenset = frozenset()) -> str | None:
    """``loss_scaler(loss, optimizer, clip_grad=..., parameters=...)``: a callable helper object
    named like a scaler (timm's ``NativeScaler``, copied into DeiT, MAE, BEiT, ...) whose
    ``__call__`` runs ``scaler.scale(loss).backward()`` and ``scaler.step(optimizer)``: the
    stepped optimizer's key (the second argument, or ``optimizer=``), else None. A
    ``GradScaler`` itself is not callable, so a called ``*scaler`` with an optimizer is such a
    helper."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    if not _SCALER_HELPER.search(name):
        return None
    keyword = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "optimizer"]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    target = keyword[0] if keyword else positional[1] if len(positional) > 1 else None
    key = api.expr_key(target) if target is not None else None
    if key is None or not (key in optimizers or api.looks_like_optimizer_name(key.split("[")[0])):
        return None
    return key


def _is_method_of(func: cst.BaseExpression, key: str, method: str) -> bool:
    """``func`` is ``<key>.<method>``."""
    return isinstance(func, cst.Attribute) and func.attr.value == method and api.expr_key(func.value) == key


class TrainingModel:
    def __init__(self, ctx, model: SemanticModel, graph: CallGraph | None = None):
        self.ctx = ctx
        self.model = model
        self.graph = graph or CallGraph(model)
        self.bindings: dict[str, dict[str, cst.CSTNode]] = {
            k: {} for k in ("optimizer", "scheduler", "scaler", "model", "criterion", "trainer")}
        self._collect_bindings()
        self.sites = self._collect_sites()
        self._closures: dict[tuple[str, CallGraph], set] = {}
        self._runs: dict[CallGraph, dict[Loop, set[str]]] = {}
        self._training_loops: dict[CallGraph, set] = {}
        self._loop_kinds: dict[Loop, set[str]] = {}
        self._grad_off: list[CallSite] | None = None
        self._eval_switching: set[cst.CSTNode] | None = None

    # -- bindings -----------------------------------------------------------------------
    def _collect_bindings(self) -> None:
        ctx = self.ctx
        local_modules = {c.name for c in self.model.classes.values() if self.is_module_class(c)}
        for scope in self.model.scopes.values():
            for key, bindings in scope.bindings.items():
                for b in bindings:
                    if b.kind not in ("assign", "ann") or not isinstance(b.value, cst.Call):
                        continue
                    func = b.value.func
                    if api.is_optimizer_constructor(ctx, func):
                        kind = "optimizer"
                    elif api.scheduler_kind(ctx, func) is not None:
                        kind = "scheduler"
                    elif (ctx.qualified_name(func) or "").endswith("GradScaler"):
                        kind = "scaler"
                    elif trainer_kind(ctx, func) is not None:
                        kind = "trainer"
                    elif api.is_loss_constructor(ctx, func):
                        kind = "criterion"
                    elif api.is_model_constructor(ctx, func, local_modules):
                        kind = "model"
                    else:
                        continue
                    self.bindings[kind].setdefault(key, b.node)

    def _all_bases(self, info) -> list[str]:
        return [b for c in self.model.mro(info) for b in c.bases]

    def is_module_class(self, info) -> bool:
        """A same-file class that is an ``nn.Module`` (or a ``LightningModule``, ...): a base,
        direct or through its same-file bases, whose last part ends in ``Module``."""
        return any(b.rsplit(".", 1)[-1].endswith("Module") for b in self._all_bases(info))

    @property
    def optimizers(self) -> set[str]:
        return set(self.bindings["optimizer"])

    @property
    def trainers(self) -> set[str]:
        return set(self.bindings["trainer"])

    # -- sites --------------------------------------------------------------------------
    def _collect_sites(self) -> Sites:
        ctx = self.ctx
        sites = Sites()
        optimizers = self.optimizers
        lightning = {k for k, node in self.bindings["trainer"].items()}
        for site in self.model.calls:
            call = site.node
            func = call.func
            if api.backward_target(ctx, call) is not None:
                sites.backward.append(site)
                continue
            key = scaler_helper_step(call, optimizers)
            if key is not None and not self.graph.targets(site):
                # loss_scaler(loss, optimizer) of a class from elsewhere: backward and step in one
                # call (a same-file class's __call__ is followed by the call graph instead)
                sites.backward.append(site)
                sites.step.append((site, key))
                continue
            key = api.step_optimizer(ctx, call, optimizers)
            if key is not None:
                sites.step.append((site, key))
                continue
            if isinstance(func, cst.Attribute):
                if func.attr.value == "zero_grad":
                    sites.zero_grad.append((site, api.expr_key(func.value)))
                elif func.attr.value == "fit" and (
                        api.expr_key(func.value) in lightning
                        or (isinstance(func.value, cst.Call) and is_lightning_trainer(ctx, func.value.func))):
                    sites.fit.append(site)
            if ctx.is_imported(func):
                qualified = ctx.qualified_name(func)
                if call.args and qualified in ENGINES:
                    sites.engines.append((site, call.args[0].value))
                elif qualified in IGNITE_TRAINERS:
                    sites.fit.append(site)
        return sites

    # -- per function, closed over the call graph --------------------------------------
    def direct(self, kind: str) -> set[cst.CSTNode]:
        """Function/lambda/module nodes with a ``kind`` (backward | step | fit) site of their own."""
        model = self.model
        if kind == "backward":
            sites = self.sites.backward
        elif kind == "step":
            sites = [s for s, _ in self.sites.step]
        else:
            sites = self.sites.fit
        return {enclosing_function(model, s.scope) for s in sites}

    def closure(self, kind: str, graph: CallGraph | None = None) -> set[cst.CSTNode]:
        """Function/lambda/module nodes that run a ``kind`` (backward | step | fit) site,
        themselves or through same-file callees (of ``graph``: by default the exact one;
        ``ctx.semantic.loose_graph`` adds by-name method edges)."""
        graph = graph or self.graph
        found = self._closures.get((kind, graph))
        if found is None:
            found = self._closures[(kind, graph)] = graph.closure(self.direct(kind))
        return found

    def trains(self, function: cst.CSTNode) -> bool:
        """Does backward and an optimizer step (directly or through callees), or fits a trainer."""
        return (function in self.closure("backward") and function in self.closure("step")) \
            or function in self.closure("fit")

    def once_per_batch(self, function: cst.CSTNode) -> bool:
        """Runs once per batch: it does backward and a step itself (whatever its name), or
        is called once per iteration of a data loop, or is an ignite process function."""
        if function in self.closure("backward") and function in self.closure("step"):
            return True
        for site in self.graph.callers(function):
            if any(DATA in self.loop_kinds(loop) for loop in site.loops):
                return True
        return any(function in self.graph.resolve(expr, site.scope, site.node) for site, expr in self.sites.engines)

    def evaluates(self, function: cst.CSTNode) -> bool:
        """Runs the model without training it: a Lightning evaluation hook, a function under
        no-grad, or one that switches to eval mode and never trains."""
        if isinstance(function, cst.FunctionDef):
            if api.is_lightning_eval_hook(function.name.value) or api.function_disables_grad(self.ctx, function):
                return True
        if self.trains(function):
            return False
        self.model.scopes[function]  # (what ``graph.sites`` asks first)
        return function in self._switching_to_eval()

    def _switching_to_eval(self) -> set[cst.CSTNode]:
        """The scope nodes one of whose ``graph.sites`` switches to eval mode (``mode_switch``
        False: an ``<x>.eval()``): each such call's scope and, up through comprehensions,
        the scopes whose sites include it. One pass over the file's calls, kept."""
        found = self._eval_switching
        if found is None:
            found = self._eval_switching = set()
            for site in self.model.calls:
                func = site.node.func
                if type(func) is cst.Attribute and func.attr.value == "eval" and api.mode_switch(site.node) is False:
                    scope = site.scope
                    found.add(scope.node)
                    while scope.kind == COMPREHENSION and scope.parent is not None:
                        scope = scope.parent
                        found.add(scope.node)
        return found

    # -- loops --------------------------------------------------------------------------
    def loop_kinds(self, loop: Loop) -> set[str]:
        """``data`` (iterates batches), ``training`` (a data loop whose iteration does backward
        and a step), ``evaluation`` (a data loop under no-grad or in eval mode, never
        training), ``epoch`` (its body runs a data loop, or ``for epoch in range(...)``).
        Computed once per loop."""
        found = self._loop_kinds.get(loop)
        if found is None:
            found = self._loop_kinds[loop] = self._classify(loop)
        return found

    def _classify(self, loop: Loop) -> set[str]:
        node = loop.node
        kinds: set[str] = set()
        inner_data = False
        if isinstance(node, cst.For):
            for sub in iter_nodes(node.iter):
                if isinstance(sub, (cst.Name, cst.Attribute)):
                    last = sub.value if isinstance(sub, cst.Name) else sub.attr.value
                    if DATA_ITERABLE.search(last):
                        kinds.add(DATA)
                        break
        for other in self.model.loops.values():
            if other is not loop and other.within(loop) and DATA_ITERABLE.search(_iter_text(other)):
                inner_data = True
        if self.loop_runs(loop) == {"backward", "step"}:
            kinds.add(TRAINING)
            if not inner_data:
                kinds.add(DATA)
        elif DATA in kinds and (self.grad_choice_above(node) or any(api.mode_switch(s.node) is False
                                                              for s in self._loop_sites(loop))):
            kinds.add(EVALUATION)
        target = dotted_name(node.target) if isinstance(node, cst.For) else None
        if inner_data or (target is not None and EPOCH_VAR.search(target) and DATA not in kinds):
            kinds.add(EPOCH)
        return kinds

    def loop_runs(self, loop: Loop, graph: CallGraph | None = None) -> set[str]:
        """Which of ``backward`` / ``step`` an iteration of ``loop`` runs: a site of its own
        (nested loops, comprehensions and functions defined in its body included), or a
        same-file function of ``graph`` (default: the exact one) that one of them calls or
        passes on (``opt.step(closure)`` runs ``closure``)."""
        graph = graph or self.graph
        found = self._runs.get(graph)
        if found is None:
            found = self._runs[graph] = self._runs_by_loop(graph)
        return found.get(loop, set())

    def _runs_by_loop(self, graph: CallGraph) -> dict[Loop, set[str]]:
        """``loop_runs`` of every loop, in one pass over the call sites."""
        backward, step = self.closure("backward", graph), self.closure("step", graph)
        backward_sites, step_sites = set(self.sites.backward), {s for s, _ in self.sites.step}
        out: dict[Loop, set[str]] = {}
        for site in self.model.calls:
            if not site.all_loops:
                continue
            runs = set()
            callees = graph.targets(site) + graph.references(site)
            if site in backward_sites or any(t in backward for t in callees):
                runs.add("backward")
            if site in step_sites or any(t in step for t in callees):
                runs.add("step")
            if runs:
                for loop in site.all_loops:
                    out.setdefault(loop, set()).update(runs)
        return out

    # -- training loops: a run, not a single step ---------------------------------------
    def training_loops(self, graph: CallGraph | None = None) -> set[Loop]:
        """Loops whose iteration runs backward and an optimizer step (``loop_runs``)."""
        graph = graph or self.graph
        found = self._training_loops.get(graph)
        if found is None:
            found = self._training_loops[graph] = {
                loop for loop in self.model.loops.values() if self.loop_runs(loop, graph) == {"backward", "step"}}
        return found

    def runs_training_loop(self, graph: CallGraph | None = None) -> set[cst.CSTNode]:
        """Function/lambda/module nodes that run a training loop, themselves or through
        same-file callees of ``graph``: a loop whose iteration does backward and a step, a
        trainer's ``fit``, an ignite engine whose process function does both. Unlike
        ``trains``, one backward and step outside any loop (a demo, a smoke test) is none."""
        graph = graph or self.graph
        key = ("training loop", graph)
        found = self._closures.get(key)
        if found is None:
            model = self.model
            direct = {enclosing_function(model, loop.scope) for loop in self.training_loops(graph)}
            direct |= self.direct("fit")
            direct |= {enclosing_function(model, site.scope) for site, _ in self.sites.engines
                       if self._engine_trains(site, graph)}
            found = self._closures[key] = graph.closure(direct)
        return found

    def starts_training_loop(self, site: CallSite, graph: CallGraph | None = None) -> bool:
        """Running ``site`` runs a training loop: it is a trainer's ``fit``, an ignite engine
        with a training process function, a call in a training loop (of any scope around
        it), or it calls or passes on a same-file function that runs one (``graph``)."""
        graph = graph or self.graph
        if site in self.sites.fit or self._engine_trains(site, graph):
            return True
        training = self.training_loops(graph)
        if any(loop in training for loop in site.all_loops):
            return True
        runs = self.runs_training_loop(graph)
        return any(t in runs for t in graph.targets(site) + graph.references(site))

    def _engine_trains(self, site: CallSite, graph: CallGraph) -> bool:
        """``site`` builds an ignite engine whose process function does backward and a step."""
        for engine, process in self.sites.engines:
            if engine is site:
                if isinstance(process, cst.Call) and self.ctx.is_imported(process.func) \
                        and self.ctx.qualified_name(process.func) in IGNITE_STEPS:
                    return True
                functions = graph.resolve(process, site.scope, site.node) + self.engine_handlers(site, graph)
                return any(f in self.closure("backward", graph) for f in functions) and \
                    any(f in self.closure("step", graph) for f in functions)
        return False

    def engine_handlers(self, site: CallSite, graph: CallGraph) -> list[cst.CSTNode]:
        """The event handlers of the ignite engine ``site`` builds (``engine = Engine(f)``): functions
        decorated ``@engine.on(Events.X)`` or passed to ``engine.add_event_handler(Events.X, fn)``
        / ``engine.on(Events.X)(fn)``. ``engine.run`` runs them too: an update done once per
        episode in an ``EPOCH_COMPLETED`` handler (ignite's reinforcement-learning examples)
        trains as the process function would."""
        up = self.ctx.parent(site.node)
        if not isinstance(up, cst.Assign) or len(up.targets) != 1:
            return []
        key = api.expr_key(up.targets[0].target)
        if key is None:
            return []
        found: list[cst.CSTNode] = []
        for scope in self.model.scopes.values():
            node = scope.node
            if isinstance(node, cst.FunctionDef) and any(
                    isinstance(d.decorator, cst.Call) and _is_method_of(d.decorator.func, key, "on")
                    for d in node.decorators):
                found.append(node)
        for other in self.model.calls:
            call = other.node
            if _is_method_of(call.func, key, "add_event_handler") and len(call.args) > 1:
                found += graph.resolve(call.args[1].value, other.scope, call)
            elif isinstance(call.func, cst.Call) and _is_method_of(call.func.func, key, "on") and call.args:
                found += graph.resolve(call.args[0].value, other.scope, call)
        return found

    def _loop_sites(self, loop: Loop) -> list[CallSite]:
        return [s for s in self.model.calls if loop in s.all_loops]

    # -- frozen modules -----------------------------------------------------------------
    def frozen(self) -> set[str]:
        """Keys whose parameters are frozen: ``m.requires_grad_(False)``, ``freeze(m)``,
        ``for p in m.parameters(): p.requires_grad = False``."""
        out: set[str] = set()
        for site in self.model.calls:
            func = site.node.func
            args = site.node.args
            if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and args and api.is_false_literal(args[0].value):
                key = api.expr_key(func.value)
            elif isinstance(func, cst.Attribute) and func.attr.value in ("freeze", "freeze_"):
                key = api.expr_key(func.value)
            elif isinstance(func, cst.Name) and "freeze" in func.value.lower() and "unfreeze" not in func.value.lower() \
                    and args:
                key = api.expr_key(args[0].value)
            else:
                continue
            if key is not None:
                out.add(key)
        for loop in self.model.loops.values():
            node = loop.node
            if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call):
                continue
            func = node.iter.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                owner = api.expr_key(func.value)
                for stmt in iter_nodes(node.body, into_scopes=False):
                    if isinstance(stmt, cst.Assign) and isinstance(stmt.targets[0].target, cst.Attribute) \
                            and stmt.targets[0].target.attr.value == "requires_grad" and api.is_false_literal(stmt.value):
                        if owner is not None:
                            out.add(owner)
        return out

    # -- no-grad regions ----------------------------------------------------------------
    def grad_choice_above(self, node: cst.CSTNode, *, lightning_hooks: bool = False) -> bool:
        """Some grad-mode choice is made around ``node`` (``torch_api.grad_choice_above``);
        with ``lightning_hooks``, a Lightning evaluation hook counts too (Lightning turns
        autograd off there). Whether autograd records: ``grad_state.grad_mode_at``."""
        if api.grad_choice_above(self.ctx, node):
            return True
        return lightning_hooks and in_lightning_eval_hook(self.ctx, node)


# -- cheap queries: the semantic model alone, no TrainingModel built -------------------------

    def grad_disabled_before(self, node: cst.CSTNode) -> bool:
        """A bare ``torch.set_grad_enabled(False)`` statement runs earlier in the code ``node``
        belongs to (its function, or the module body): autograd is off from there on."""
        if self._grad_off is None:
            self._grad_off = [s for s in self.model.calls if _switches_grad_off(self.ctx, s.node)]
        if not self._grad_off:
            return False
        model = self.model
        order = model.order.get(node, 0)
        owner = enclosing_function(model, model.scope_of(node))
        return any(s.order < order and enclosing_function(model, s.scope) is owner for s in self._grad_off)


def in_lightning_eval_hook(ctx, node: cst.CSTNode) -> bool:
    """Inside a Lightning evaluation hook (``validation_step``, ``test_step``, ...: Lightning
    turns autograd off there), in any enclosing function."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.FunctionDef) and api.is_lightning_eval_hook(anc.name.value):
            return True
    return False


def grad_mode_exprs_of(model: SemanticModel, anc: cst.CSTNode):
    """The expressions that may choose the grad mode for code inside ``anc``: a ``with``'s
    items (for ``with ctx():``, also every value ``ctx`` may hold there, by reaching
    definitions: ``ctx = torch.no_grad if frozen else nullcontext``), a function's
    decorators; nothing for other nodes. Asked of each enclosing node, innermost first, it
    gives everything around a node; the rule decides which count."""
    if isinstance(anc, cst.With):
        for item in anc.items:
            yield item.item
            key = api.expr_key(item.item.func if isinstance(item.item, cst.Call) else item.item)
            if key is None:
                continue
            for b in model.reaching(key, item):
                value = b.value if b.value is not None else getattr(b.node, "value", None)
                if isinstance(value, cst.BaseExpression):
                    yield value
    elif isinstance(anc, cst.FunctionDef):
        for d in anc.decorators:
            yield d.decorator


def freeze_sites(model: SemanticModel) -> list[tuple[str, cst.CSTNode]]:
    """Where parameters get frozen, as (key, node): ``m.requires_grad_(False)``,
    ``m.freeze()``, ``freeze(m)``/``utils.freeze_params(m)``, ``set_requires_grad(m, False)``,
    ``m.requires_grad = False``; the parameter of ``for p in m.parameters()`` stands for
    ``m``. The node says where (for rules that key a freeze by class or function)."""
    out: list[tuple[str, cst.CSTNode]] = []

    def add(expr: cst.BaseExpression, at: cst.CSTNode) -> None:
        key = api.expr_key(expr)
        if key is not None:
            out.append((_parameter_owner(model, key, at), at))

    for site in model.calls:
        call = site.node
        func = call.func
        attr = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        low = attr.lower()
        if not ("freeze" in low and "unfreeze" not in low or "requires_grad" in low):
            continue
        if isinstance(func, cst.Attribute) and attr == "requires_grad_":
            if call.args and api.is_false_literal(call.args[0].value):
                add(func.value, call)
            continue
        if isinstance(func, cst.Attribute) and attr in ("freeze", "freeze_"):
            add(func.value, call)
        # freeze(model), utils.freeze_params(model), set_requires_grad(model, False)
        if not call.args or call.args[0].keyword is not None:
            continue
        if "requires_grad" in low and not any(api.is_false_literal(a.value) for a in call.args[1:]):
            continue
        add(call.args[0].value, call)
    for scope in model.scopes.values():
        for key, bindings in scope.bindings.items():
            if key.endswith(".requires_grad"):
                for b in bindings:
                    if b.kind == "assign" and api.is_false_literal(b.value):
                        out.append((_parameter_owner(model, key[: -len(".requires_grad")], b.node), b.node))
    return out


def unfreeze_sites(model: SemanticModel) -> list[tuple[str, cst.CSTNode]]:
    """Where parameters are made trainable again, as (key, node): ``m.requires_grad_(True)``
    (or with no argument), ``m.requires_grad = True``; the parameter of ``for p in
    m.layer4.parameters()`` stands for ``m.layer4`` (fine-tuning: freeze all, unfreeze the head)."""
    out: list[tuple[str, cst.CSTNode]] = []
    for site in model.calls:
        call, func = site.node, site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" \
                and not (call.args and api.is_false_literal(call.args[0].value)):
            key = api.expr_key(func.value)
            if key is not None:
                out.append((_parameter_owner(model, key, call), call))
    for scope in model.scopes.values():
        for key, bindings in scope.bindings.items():
            if key.endswith(".requires_grad"):
                for b in bindings:
                    if b.kind == "assign" and isinstance(b.value, cst.Name) and b.value.value == "True":
                        out.append((_parameter_owner(model, key[: -len(".requires_grad")], b.node), b.node))
    return out


def _parameter_owner(model: SemanticModel, key: str, at: cst.CSTNode) -> str:
    """``m`` for ``p`` bound by ``for p in m.parameters()`` (or ``named_parameters``), else ``key``."""
    if "." in key or "[" in key:
        return key
    for b in model.reaching(key, at):
        if b.kind == "for" and isinstance(b.node, cst.For):
            for call in iter_nodes(b.node.iter):
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        call.func.attr.value in ("parameters", "named_parameters"):
                    return api.expr_key(call.func.value) or key
    return key


def _switches_grad_off(ctx, call: cst.Call) -> bool:
    """``torch.set_grad_enabled(False)`` as a statement of its own (not a ``with`` item)."""
    return bool(call.args) and api.is_false_literal(call.args[0].value) and isinstance(ctx.parent(call), cst.Expr) \
        and api.is_grad_mode_call(ctx, call) == "set_grad_enabled"


def _iter_text(loop: Loop) -> str:
    node = loop.node
    if not isinstance(node, cst.For):
        return ""
    return " ".join(n.value if isinstance(n, cst.Name) else n.attr.value
                    for n in iter_nodes(node.iter) if isinstance(n, (cst.Name, cst.Attribute)))
