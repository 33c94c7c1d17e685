"""TL013 scheduler-step-granularity: a learning-rate schedule stepped in the wrong unit.

The shared queries are in ``torchlint.semantic.schedulers``: what a scheduler construction
counts (``schedule_unit``: batches for ``OneCycleLR``/``CyclicLR``/Hugging Face warm-up schedules
or anything sized by ``len(loader)``/``total_steps``; epochs for ``StepLR``/``MultiStepLR``/
``ExponentialLR``/``CosineAnnealingLR`` sized by ``epochs`` or small literals) and how often a
bare ``sched.step()`` runs (``step_rate``, from the loop kinds of the training model). Reported:

* a batch-counting scheduler stepped once per epoch;
* an epoch-counting scheduler stepped every batch inside an epoch loop;
* ``sched.step()`` before the first optimizer step of the same loop iteration (directly or
  through a same-file function), not in the other branch of an ``if``;
* a batch-counting scheduler built in a Lightning ``configure_optimizers`` that never says
  ``"interval"`` (or says ``"epoch"``), unless the file optimises manually; a
  ``SequentialLR``/``ChainedScheduler`` counts in its sub-schedulers' unit
  (``schedulers.schedule_unit``), and is reported once, not each of its parts.

The scheduler a step uses is followed through parameters and ``self.`` attributes
(``semantic.constructors``): ``train(model, loader, opt, scheduler)`` and the trainer layout,
``Trainer(model, loader, opt, scheduler)`` keeping ``self.scheduler``, in the same file; and
across modules, where the step's scheduler comes in through a parameter of a module-level
function or class (``facts["open"]``) and another module passes one there: the project pass
asks the modules importing it for what they pass (``demanded_facts``: ``passes``, each
described by ``schedulers.schedule_of``) and judges the step by that scheduler's unit.

Silent: a ``sched.step()`` before the optimizer step made on purpose: the file rewinds
``sched.last_epoch`` outside that loop (``last_epoch = start_epoch - 1``, so stepping first
skips no value) or silences the "lr_scheduler.step() before optimizer.step()" warning around it
(``with warnings.catch_warnings()``); ``ReduceLROnPlateau``, ``step(epoch)``/``step(metric)`` (the caller chooses the count),
schedulers of unknown unit (``LambdaLR`` not sized by steps), step-based training without an
epoch loop.
"""

from __future__ import annotations

import libcst as cst

from typing import Iterable

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Edit, Fix, full_span, insert_after, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.branches import exclusive
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.constructors import ArgumentFlow, origins, passes
from torchlint.semantic.epochs import first_iteration_skipped
from torchlint.semantic.schedulers import (BATCH, EPOCH_UNIT, by_setting, constructions, dict_key, in_epochs, is_plateau,
                                           optimises_manually, returned_as_scheduler, schedule_of, schedule_unit,
                                           scheduler_steps, step_budgeted, step_rate, sub_schedulers)
from torchlint.statements import dotted_name
from torchlint.torch_api import scheduler_kind
from torchlint.tree import iter_nodes


def per_epoch_message(key: str, kind: str) -> str:
    return (f"`{key}` ({kind}) counts optimizer steps but is stepped once per epoch: its schedule runs len(loader)x "
            f"too slowly and never completes; call `{key}.step()` after each `optimizer.step()` in the batch loop")


def per_batch_message(key: str, kind: str) -> str:
    return (f"`{key}` ({kind}) counts epochs but is stepped every batch: it decays len(loader)x too fast; call "
            f"`{key}.step()` once per epoch, after the batch loop")


def order_message(key: str) -> str:
    return (f"`{key}.step()` runs before `optimizer.step()` in the same iteration: the schedule's first value is "
            f"skipped (PyTorch warns); call `{key}.step()` after `optimizer.step()`")


def lightning_message(kind: str) -> str:
    return (f"`{kind}` counts optimizer steps, but `configure_optimizers` returns it without `\"interval\": \"step\"`: "
            f"Lightning steps it once per epoch and the schedule never gets past its start; return "
            f"`{{\"scheduler\": scheduler, \"interval\": \"step\"}}`")


class SchedulerStepGranularity(Rule):
    code = "TL013"
    name = "scheduler-step-granularity"
    severity = Severity.ERROR
    default_enabled = True
    summary = ("a per-batch LR scheduler stepped once per epoch, a per-epoch one stepped every batch, "
               "or scheduler.step() before optimizer.step()")
    options: dict[str, Option] = {}
    requires_text = ("step",)
    fixable = (UNSAFE,)  # Lightning: "interval": "step" for a batch-counting scheduler


    def finish(self) -> None:
        semantic = self.ctx.semantic
        steps = scheduler_steps(semantic)
        self._batch_stepped = {key for site, key in steps if step_rate(semantic.training, site) == BATCH}
        self._open: list = []
        for site, key in steps:
            if is_plateau(semantic, key, site.node):
                continue
            message = self._granularity(site, key) or self._before_optimizer(site, key)
            if message is not None:
                self.report(site.node, message)
        if self._open:
            self.ctx.facts[self.code] = {"open": self._open}
        self._lightning()

    def demanded_facts(self) -> dict:
        """What this file hands other modules' functions and classes that is a schedule of
        known unit (``[callee, slot, [unit, kind]]``), asked only of the files importing a
        module whose steps wait for it (``facts["open"]``)."""
        return {"passes": passes(self.ctx.semantic, schedule_of)}

    def _granularity(self, site, key: str) -> str | None:
        semantic = self.ctx.semantic
        built = constructions(semantic, key, site.node)
        units = {schedule_unit(self.ctx, call) for call in built}
        rate = step_rate(semantic.training, site)
        if not built:
            self._await(site, key, rate)
        if len(units) != 1 or None in units:
            return None
        if all(by_setting(self.ctx, call) for call in built) and step_budgeted(semantic.training, site):
            return None  # a run counted in steps: its configured size may be steps
        return _judged(units.pop(), scheduler_kind(self.ctx, built[0].func), key, rate,
                       in_epochs(semantic.training, site), key in self._batch_stepped)

    def _await(self, site, key: str, rate: str | None) -> None:
        """A step whose scheduler comes in only through parameters other modules may fill:
        kept in the facts for the project pass, with what it needs to judge it."""
        if rate is None or rate == EPOCH_UNIT and key in self._batch_stepped:
            return
        training = self.ctx.semantic.training
        entries = origins(self.ctx.semantic, key, site.node).entries
        if entries:
            self._open.append([[e.to_json() for e in entries], rate, in_epochs(training, site),
                               Span.of_range(self.ctx.position(site.node)).to_json(), key,
                               step_budgeted(training, site)])

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        """Steps waiting for their scheduler (``open``), judged by what the modules importing
        theirs pass into the parameter it comes through (``constructors.ArgumentFlow``)."""
        flow = None
        for record in project.records:
            for entries, rate, epochs, span, key, budgeted in (record.facts.get(cls.code) or {}).get("open", ()):
                if flow is None:
                    flow = ArgumentFlow(project, lambda r: (project.demand(cls.code, r.path) or {}).get("passes"))
                schedules = sorted({tuple(d) for entry in entries for _, d in flow.arrivals(record, entry)})
                if len({unit for unit, _, _ in schedules}) != 1:
                    continue
                if budgeted and all(setting for _, _, setting in schedules):
                    continue  # a run counted in steps: the configured sizes may be steps
                unit, kind, _ = schedules[0]
                message = _judged(unit, kind, key, rate, epochs, False)
                if message is not None:
                    yield Finding.at(cls, record.path, Span.from_json(span), message)

    def _before_optimizer(self, site, key: str) -> str | None:
        """The first optimizer step of the innermost loop's iteration comes after ``site``; or,
        outside loops, of the function ``site`` opens, run once per epoch (``def train(...,
        scheduler): scheduler.step(); for batch in loader: ... optimizer.step()``)."""
        if not site.loops:
            return self._before_epoch_function(site, key)
        training = self.ctx.semantic.training
        stepping = {s for s, _ in training.sites.step}
        stepper = training.closure("step")
        first = next((s for s in training.model.calls_in_loop(site.loops[-1])
                      if s in stepping or any(t in stepper for t in training.graph.targets(s))), None)
        if first is None or first.order < site.order or exclusive(self.ctx, site.node, first.node) \
                or first_iteration_skipped(self.ctx, site.node, site.loops[-1]):
            return None  # ``if epoch > start: scheduler.step()``: after the last iteration's steps
        if self._rewound(site, key) or self._warning_silenced(site.node):
            return None  # stepped first on purpose
        return order_message(key)

    def _before_epoch_function(self, site, key: str) -> str | None:
        training = self.ctx.semantic.training
        model = training.model
        function = enclosing_function(model, site.scope)
        if not isinstance(function, cst.FunctionDef) or not in_epochs(training, site) \
                or any(isinstance(up, cst.If) for up in self.ctx.ancestors(site.node)):
            return None
        stepping = {s for s, _ in training.sites.step}
        stepper = training.closure("step")
        steps = [s for s in model.calls if enclosing_function(model, s.scope) is function
                 and (s in stepping or any(t in stepper for t in training.graph.targets(s)))]
        if not steps or min(s.order for s in steps) < site.order:
            return None
        if self._rewound(site, key) or self._warning_silenced(site.node):
            return None  # stepped first on purpose
        return order_message(key)

    def _rewound(self, site, key: str) -> bool:
        """``<key>.last_epoch = ...`` is stored somewhere in the file outside the loop that steps."""
        loop = site.loops[-1].node if site.loops else None
        target = f"{key}.last_epoch"
        return any(isinstance(node, cst.AssignTarget) and dotted_name(node.target) == target
                   and (loop is None or not self.ctx.inside(node, loop)) for node in iter_nodes(self.ctx.module))

    def _warning_silenced(self, node: cst.CSTNode) -> bool:
        """``node`` runs inside ``with warnings.catch_warnings():`` (the order warning silenced)."""
        model = self.ctx.semantic.model
        return any(isinstance(up, cst.With) and any(isinstance(item.item, cst.Call)
                                                     and model.qualified_name(item.item.func) == "warnings.catch_warnings"
                                                     for item in up.items)
                   for up in self.ctx.ancestors(node))

    def _lightning(self) -> None:
        """Batch-counting schedulers built in ``configure_optimizers`` with no step interval."""
        model = self.ctx.semantic.model
        functions = [s.node for s in model.scopes.values()
                     if isinstance(s.node, cst.FunctionDef) and s.node.name.value == "configure_optimizers"]
        if not functions or optimises_manually(model):
            return
        for function in functions:
            if _says_interval(function):
                continue
            calls = [node for node in iter_nodes(function.body, into_scopes=False) if isinstance(node, cst.Call)]
            # a SequentialLR's parts are stepped by it, not by Lightning: the composite is reported
            parts = {id(part) for call in calls for part in sub_schedulers(self.ctx, call) or ()}
            for node in calls:
                if id(node) not in parts and schedule_unit(self.ctx, node) == BATCH:
                    self.report(node, lightning_message(scheduler_kind(self.ctx, node.func)),
                                fix=self._interval_fix(function, node))

    def _interval_fix(self, function: cst.FunctionDef, construction: cst.Call) -> Fix | None:
        """Where ``configure_optimizers`` hands the scheduler to Lightning in one place: a
        ``{"scheduler": S, "interval": "epoch"}`` gets ``"step"``; a bare ``S`` returned in
        ``[opt], [S]`` or as ``"lr_scheduler": S`` becomes ``{"scheduler": S, "interval":
        "step"}``. ``S`` is the construction or the one name it is assigned to."""
        assign = self.ctx.parent(construction)
        name = None
        if isinstance(assign, cst.Assign) and assign.value is construction and len(assign.targets) == 1 \
                and isinstance(assign.targets[0].target, cst.Name):
            name = assign.targets[0].target.value
        uses = [construction] if name is None else [
            node for node in iter_nodes(function.body, into_scopes=False)
            if isinstance(node, cst.Name) and node.value == name and node is not assign.targets[0].target]
        if len(uses) != 1:
            return None
        use, parent = uses[0], self.ctx.parent(uses[0])
        if isinstance(parent, cst.DictElement) and parent.value is use and dict_key(parent) == "scheduler":
            interval = [e for e in self.ctx.parent(parent).elements if dict_key(e) == "interval"]
            if len(interval) == 1 and isinstance(interval[0].value, cst.SimpleString) \
                    and interval[0].value.evaluated_value == "epoch":
                old = interval[0].value
                new = old.with_changes(value=old.value.replace("epoch", "step"))
                return Fix.unsafe('Step the scheduler every batch ("interval": "step")', replace_node(self.ctx, old, new))
            return None
        if not returned_as_scheduler(self.ctx, use):
            return None
        start = full_span(self.ctx, use)
        return Fix.unsafe('Step the scheduler every batch ("interval": "step")',
                          Edit(Span(start.line, start.column, start.line, start.column), '{"scheduler": '),
                          insert_after(self.ctx, use, ', "interval": "step"}'))


def _judged(unit: str, kind: str, key: str, rate: str | None, epochs: bool, batch_stepped: bool) -> str | None:
    """The message for a step of a ``unit``-counting schedule at ``rate``, if it is wrong."""
    if unit == BATCH and rate == EPOCH_UNIT:
        # also stepped in the batch loop: this step pairs with an extra optimizer step
        # (accumulated gradients flushed after the loop), not the schedule's only one
        return None if batch_stepped else per_epoch_message(key, kind)
    if unit == EPOCH_UNIT and rate == BATCH and epochs:
        return per_batch_message(key, kind)
    return None


def _says_interval(function: cst.FunctionDef) -> bool:
    """An ``"interval"`` key (or ``interval=``) whose value is not the literal ``"epoch"``."""
    keys: set[int] = set()
    for node in iter_nodes(function.body, into_scopes=False):
        if isinstance(node, cst.DictElement) and isinstance(node.key, cst.SimpleString) \
                and node.key.evaluated_value == "interval":
            keys.add(id(node.key))
            value = node.value
        elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "interval":
            value = node.value
        elif isinstance(node, cst.SimpleString) and node.evaluated_value == "interval" and id(node) not in keys:
            return True  # config["interval"] = ...: set somewhere, say nothing
        else:
            continue
        if not (isinstance(value, cst.SimpleString) and value.evaluated_value == "epoch"):
            return True
    return False
