"""TL001 missing-zero-grad: a training loop steps an optimizer without clearing gradients.

Everything structural comes from the shared layer (``ctx.semantic``): backward, optimizer-step
and ``zero_grad`` sites and optimizer bindings from the training model, scopes and loops from
the semantic model, "what does this call run" from the call graph. The rule adds the clearings
only it knows (``p.grad = None``, ``p.grad.zero_()``, ``zero_grad(model)``, a ``zero_grad``
handed on) and its judgement, in ``finish``:

* Each backward, step, clearing, optimizer construction and call of a same-file function is
  an *event*, placed in its code scope (function, lambda, class or module) and its loops there.
* A *unit* is a loop (``for``/``while``), a Lightning ``training_step`` that calls
  ``self.manual_backward``, an ignite ``Engine``'s process function (each runs once per batch) or
  a method stepping an optimizer its object keeps, not itself called from a loop here. Its
  iteration is the events in its body plus those of every same-file function its calls reach.
* A step that runs only where a clearing cannot (``branches.never_together``) is not cleared by it.
* For every optimizer step, the units whose iteration does a backward and that step are its
  candidates; the innermost ones (no other candidate inside them) must clear that
  optimizer's gradients somewhere in their iteration.
* Two ordering mistakes are reported at the misplaced ``zero_grad()``: clearing between the
  backward and the step, and clearing every iteration while the step only runs under a
  gradient-accumulation ``if``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.finding import Severity
from torchlint.fixes import UNSAFE, Fix, insert_statement_before
from torchlint.rule import Rule
from torchlint.semantic import gradients, optim_classes
from torchlint.semantic.branches import never_together
from torchlint.semantic.updates import kept_optimizer_steps
from torchlint.statements import dotted_name
from torchlint.textscan import contains
from torchlint.torch_api import expr_key, is_optimizer_constructor, looks_like_optimizer_name
from torchlint.tree import iter_nodes

_ALL = "*"  # a clearing that covers every optimizer (module.zero_grad(), p.grad = None)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")

@dataclass(eq=False)
class _Event:
    kind: str  # "backward" | "step" | "clear" | "call" | "bind" (an optimizer built)
    node: cst.CSTNode
    order: int
    scope: cst.CSTNode  # FunctionDef, Lambda, ClassDef or Module whose code holds the event
    loops: tuple  # loop nodes around the event inside ``scope``, outermost first
    key: str | None = None  # optimizer key (step/clear/bind); _ALL for clear-everything
    ref: cst.BaseExpression | None = None  # "call": what is called; "step": its closure argument
    callees: tuple = ()  # same-file functions it runs ("call": targets and references; "step": the closure)
    module: str | None = None  # "clear" by ``<module>.zero_grad()``: the receiver (not known as an optimizer)

    @property
    def closure(self) -> cst.CSTNode | None:
        return self.callees[0] if self.kind == "step" and self.callees else None


class MissingZeroGrad(Rule):
    code = "TL001"
    name = "missing-zero-grad"
    severity = Severity.ERROR
    default_enabled = True
    summary = "Training loop steps an optimizer without clearing gradients each iteration"
    uses_semantic_model = True
    requires_text = ("backward",)
    fixable = (UNSAFE,)


    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        return contains(text, "backward") and contains(text, "step")

    # -- the walk: a cheap gate -------------------------------------------------------------
    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._backward = self._step = False  # seen a call that may be a backward / a step

    def visit_Call(self, node: cst.Call) -> None:
        # Only a gate: the shared models are built in finish() if both may occur.
        func = node.func
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            self._backward = self._backward or attr in ("backward", "manual_backward")
            self._step = self._step or attr == "step"
        elif isinstance(func, cst.Name):
            self._backward = self._backward or self.ctx.imports.get(func.value, func.value).endswith("backward")

    # -- the analysis ------------------------------------------------------------------
    def finish(self) -> None:
        if not (self._backward and self._step):
            return
        sem = self.ctx.semantic
        self.model, self.graph, self.training = sem.model, sem.graph, sem.training
        if not self.training.sites.backward or not self.training.sites.step:
            return
        self._optimizers = self.training.bindings["optimizer"]
        self._aliases: dict[str, set[str]] = {}
        self._ext_cache: dict[cst.CSTNode, list[_Event]] = {}
        self._inner_cache: dict[cst.CSTNode, set] = {}
        self._engine_fns = set(self._engine_functions())
        events = self._collect_events()
        self._direct: dict[cst.CSTNode, list[_Event]] = {}
        for e in events:
            self._direct.setdefault(e.scope, []).append(e)
        units, reach = self._find_units(events)
        unit_events, candidates = self._find_candidates(units, reach)
        reported: set[cst.CSTNode] = set()
        for step, cands in candidates.items():
            self._judge_step(step, cands, units, reach, unit_events, reported)
        self._judge_lone_closures(events, candidates, reported)
        for unit, direct in units.items():
            if unit in unit_events:
                self._check_order(unit, direct, reported)

    # -- step 1: events ----------------------------------------------------------------
    def _collect_events(self) -> list[_Event]:
        """Every event of the file, in source order."""
        training, graph = self.training, self.graph
        known: dict = {site: ("backward", None) for site in training.sites.backward}
        known.update((site, ("step", key)) for site, key in training.sites.step)
        modules: dict = {}  # clearing site -> the receiver of a zero_grad() not known as an optimizer's
        for site, key in training.sites.zero_grad:  # an optimizer's, or a module's (its parameters)
            if key is not None and self._is_optimizer(key):
                known[site] = ("clear", key)
            else:
                known[site], modules[site] = ("clear", _ALL), key
        events: list[_Event] = []
        for site in self.model.calls:
            kind, key = known.get(site, (None, None))
            ref, callees = None, ()
            if kind == "step":
                ref, callees = self._step_closure(site, key)
                if ref is not None and not callees:
                    # The closure does the backward (and should clear); one we cannot see
                    # (an object, a function from elsewhere) leaves nothing to judge.
                    continue
            elif kind is None:
                if gradients.clears_all_gradients(site.node.func):
                    kind, key = "clear", _ALL
                else:
                    kind, ref = "call", site.node.func
            scope = self.model.code_scope(site.scope)
            loops = tuple(lp.node for lp in site.all_loops if lp.scope is scope)
            if kind == "call":  # only calls a unit makes (in a loop, in a training_step) matter
                if not loops and not (isinstance(scope.node, cst.FunctionDef) and scope.name == "training_step") \
                        and scope.node not in self._engine_fns:
                    continue
                callees = tuple(graph.targets(site)) + tuple(graph.references(site))
                if not callees:
                    continue
            events.append(_Event(kind, site.node, site.order, scope.node, loops, key, ref, callees,
                                 modules.get(site)))
        for node in gradients.clearing_nodes(self.model):  # p.grad = None, del p.grad, fn=opt.zero_grad
            events.append(self._event_at("clear", node, _ALL))
        events.extend(self._bindings())
        events.sort(key=lambda e: e.order)
        return events

    def _event_at(self, kind: str, node: cst.CSTNode, key: str | None) -> _Event:
        model = self.model
        scope = model.code_scope(model.scope_of(node))
        loops = tuple(lp.node for lp in model.loops_around(node))
        return _Event(kind, node, model.order[node], scope.node, loops, key)

    def _step_closure(self, site, key: str) -> tuple[cst.BaseExpression | None, tuple]:
        """``opt.step(closure)``: the closure argument and what it resolves to here
        (``scaler.step(opt)`` has none)."""
        call = site.node
        if expr_key(call.func.value) != key:
            return None, ()
        ref = _closure_arg(call)
        if ref is None:
            return None, ()
        return ref, tuple(self.graph.resolve(ref, site.scope, call)[:1])

    def _bindings(self) -> list[_Event]:
        """Optimizers built (``opt = SGD(...)``, ``opt = opt_cls(model.parameters())``) as
        events; plain ``a = b`` assignments as aliases."""
        ctx, loops, optimizers, out = self.ctx, self.model.loops, self._optimizers, []
        for scope in self.model.scopes.values():
            for key, bindings in scope.bindings.items():
                for b in bindings:
                    if b.kind not in ("assign", "ann") or b.value is None:
                        continue
                    value = b.value
                    if isinstance(value, cst.Call):
                        if (key in optimizers and is_optimizer_constructor(ctx, value.func)) or (
                                value.args and looks_like_optimizer_name(key.split("[")[0])):
                            out.append(_Event("bind", b.node, b.order, scope.node,
                                              tuple(n for n in b.branches if n in loops), key))
                        continue
                    other = expr_key(value)
                    if other is not None:
                        self._aliases.setdefault(key, set()).add(other)
                        self._aliases.setdefault(other, set()).add(key)
        return out

    # -- step 2: units and what each iteration does --------------------------------------
    def _find_units(self, events: list[_Event]) -> tuple[dict, dict]:
        """Loops with events of their own, then Lightning training_steps not called from a
        loop here; each with the same-file functions its iteration reaches."""
        units: dict[cst.CSTNode, list[_Event]] = {}
        for e in events:
            for loop in e.loops:
                units.setdefault(loop, []).append(e)
        reach = {loop: self._reach_of(direct) for loop, direct in units.items()}
        called_from_loops = set().union(*reach.values())
        for scope, direct in self._direct.items():
            if (
                isinstance(scope, cst.FunctionDef)
                and scope.name.value == "training_step"
                and scope not in called_from_loops
                and any(e.kind == "backward" and _is_manual_backward(e.node) for e in self._ext(scope))
            ):
                units[scope] = direct
                reach[scope] = self._reach_of(direct)
        # An ignite Engine's process function runs once per batch, its event handlers once per event (an
        # episode, an epoch), a method stepping an optimizer its object keeps once per call from elsewhere
        # (``updates.kept_optimizer_steps``): each an iteration of its own.
        self._kept = {fn for fn in self._direct if fn not in units and fn not in called_from_loops
                      and kept_optimizer_steps(self.ctx.semantic, fn)}
        for fn in [*self._engine_fns, *self._kept]:
            if fn in self._direct and fn not in units and fn not in called_from_loops:
                units[fn] = self._direct[fn]
                reach[fn] = self._reach_of(self._direct[fn])
        return units, reach

    def _engine_functions(self) -> list:
        """Functions an ignite ``Engine`` runs repeatedly: its process function
        (``Engine(step)``), the handlers registered on it (``@trainer.on(Events.X)``,
        ``trainer.add_event_handler(Events.X, fn)``)."""
        out, engines = [], set()
        for site, expr in self.training.sites.engines:
            out.extend(self.graph.resolve(expr, site.scope, site.node))
            holder = self.ctx.parent(site.node)
            if isinstance(holder, cst.Assign) and len(holder.targets) == 1:
                key = expr_key(holder.targets[0].target)
                if key is not None:
                    engines.add(key)
        if not engines:
            return out
        for scope in self.model.scopes.values():
            fn = scope.node
            if isinstance(fn, cst.FunctionDef) and any(
                    isinstance(d.decorator, cst.Call) and isinstance(d.decorator.func, cst.Attribute)
                    and d.decorator.func.attr.value == "on" and expr_key(d.decorator.func.value) in engines
                    for d in fn.decorators):
                out.append(fn)
        for site in self.model.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_event_handler" \
                    and expr_key(func.value) in engines and len(site.node.args) >= 2:
                out.extend(self.graph.resolve(site.node.args[1].value, site.scope, site.node))
        return out

    def _find_candidates(self, units: dict, reach: dict) -> tuple[dict, dict]:
        """Per unit doing a backward, all its iteration's events; per step, its units."""
        unit_events: dict[cst.CSTNode, list[_Event]] = {}
        candidates: dict[_Event, list[cst.CSTNode]] = {}
        for unit, direct in units.items():
            every = list(direct)
            for fn in reach[unit]:
                every.extend(self._direct.get(fn, ()))
            if not any(e.kind == "backward" for e in every):
                continue
            unit_events[unit] = every
            for e in every:
                if e.kind == "step":
                    candidates.setdefault(e, []).append(unit)
        return unit_events, candidates

    def _reach_of(self, events: list[_Event]) -> set:
        return self.graph.reach([c for e in events for c in e.callees])

    def _ext(self, fn: cst.CSTNode) -> list[_Event]:
        """Events of ``fn`` and of every same-file function it may run."""
        found = self._ext_cache.get(fn)
        if found is None:
            found = self._ext_cache[fn] = [e for scope in self.graph.reach([fn]) for e in self._direct.get(scope, ())]
        return found

    def _inner_units(self, unit: cst.CSTNode, reach: dict) -> set:
        """Units inside ``unit``: nested loops and loops of the functions it calls."""
        found = self._inner_cache.get(unit)
        if found is None:
            called = reach.get(unit, frozenset())
            found = set(called)
            outer = self.model.loops.get(unit)  # None for a training_step
            for loop in self.model.loops.values():
                if loop.scope.node in called or (outer is not None and loop.within(outer)):
                    found.add(loop.node)
            self._inner_cache[unit] = found
        return found

    # -- step 3: is each step's gradient cleared? ----------------------------------------
    def _judge_step(self, step: _Event, cands: list, units: dict, reach: dict, unit_events: dict,
                    reported: set) -> None:
        inner_of = {u: self._inner_units(u, reach) for u in cands}
        minimal = [u for u in cands if not any(v is not u and v in inner_of[u] for v in cands)]
        closure_events = self._ext(step.closure) if step.closure is not None else []
        closure_backward = any(e.kind == "backward" for e in closure_events)
        if closure_backward and self._clears(closure_events, step.key, {step.key}):
            return
        for unit in minimal:
            if self._built_in_iteration(step, units[unit]):
                continue
            every = unit_events[unit]
            # a clearing never run where the step is (``optimizer is None`` / ``is not None``) clears nothing
            clearing = [e for e in every if e.kind != "clear" or not never_together(self.ctx.semantic, e.node,
                                                                                    step.node, unit)]
            if self._clears(clearing, step.key, {e.key for e in every if e.kind == "step"}):
                if closure_backward and self._is_lbfgs(step):
                    self._report_closure(step, reported, lbfgs=True)
            elif closure_backward:
                self._report_closure(step, reported, lbfgs=self._is_lbfgs(step))
            else:
                self._report_missing(step, unit, units[unit], reported)

    def _judge_lone_closures(self, events: list[_Event], candidates: dict, reported: set) -> None:
        """LBFGS closures outside any unit (a step at module level or in a function)."""
        for e in events:
            if e.kind == "step" and e not in candidates and e.closure is not None and self._is_lbfgs(e):
                ext = self._ext(e.closure)
                if any(x.kind == "backward" for x in ext) and not self._clears(ext, e.key, {e.key}):
                    self._report_closure(e, reported, lbfgs=True)

    def _built_in_iteration(self, step: _Event, direct: list[_Event]) -> bool:
        """The optimizer is built anew in each iteration before it steps (``for cls in
        (SGD, Adam): opt = cls(Net().parameters())``): typically over fresh parameters,
        as in tests, so there is nothing left over to accumulate."""
        in_unit = any(e is step for e in direct)
        return any(
            e.kind == "bind" and self._same(e.key, step.key) and (e.order < step.order or not in_unit)
            for e in direct
        )

    def _is_optimizer(self, key: str) -> bool:
        return key in self._optimizers or looks_like_optimizer_name(key.split("[")[0])

    def _is_lbfgs(self, step: _Event) -> bool:
        """The stepped optimizer is an LBFGS: a binding of it (or of an alias) builds one, or a
        same-file factory returns one (``opt = get_input_optimizer(img)``)."""
        key = step.key
        if key is None:
            return False
        if any(self._same(key, k) and (dotted_name(stmt.value.func) or "").rsplit(".", 1)[-1] == "LBFGS"
               for k, stmt in self._optimizers.items()):
            return True
        return (optim_classes.constructed_optimizer(self.ctx.semantic, key, step.node) or "").endswith(".LBFGS")

    def _same(self, a: str, b: str) -> bool:
        if a == b or a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]:
            return True
        return b in self._aliases.get(a, ()) or a in self._aliases.get(b, ())

    def _clears(self, events: list[_Event], key: str | None, stepped: set) -> bool:
        """Does one of ``events`` clear the gradients ``key``'s step applies?"""
        optimizer_clears = []
        for e in events:
            if e.kind != "clear":
                continue
            if e.module is not None and key is not None and not self._module_clears(e.module, key, stepped):
                continue
            if e.key == _ALL or key is None:
                return True
            if self._is_loop_variable(e) or self._same(e.key, key):
                return True
            optimizer_clears.append(e)
        # One optimizer steps here and another name is cleared: most likely an alias.
        distinct = {k for k in stepped if k is not None}
        if optimizer_clears and len(distinct) <= 1:
            return True
        # ``for opt in optimizers: opt.step()`` is matched by any optimizer's clearing.
        return bool(optimizer_clears) and self._key_is_loop_variable(key, events)

    def _module_clears(self, module: str, key: str, stepped: set) -> bool:
        """Whether ``module.zero_grad()`` clears what ``key``'s step applies. A module clears
        its own parameters only: when the receiver is itself stepped here it is an optimizer
        (``D_solver.zero_grad()``: that one's); when it is the module another stepped optimizer
        is built over, and not one ``key``'s is (``netG.zero_grad()`` with ``optimizerD`` over
        ``netD``), it leaves ``key``'s gradients. Otherwise (what ``key`` optimises is not
        seen, or the receiver may be its module under another name) it counts as clearing."""
        if any(self._same(module, s) for s in stepped if s is not None):
            return self._same(module, key)
        sources = self._sources(key)
        if sources is None or gradients.module_clears(module, sources):
            return True
        others = [self._sources(s) for s in stepped if s is not None and not self._same(s, key)]
        return not any(o is not None and gradients.module_clears(module, o) for o in others)

    def _sources(self, key: str) -> frozenset[str] | None:
        """The modules the optimizer ``key`` is built over in this file
        (``gradients.optimized_modules``), None if any binding of it is not seen so."""
        found: set[str] = set()
        bindings = [node for k, node in self._optimizers.items() if k == key or k in self._aliases.get(key, ())]
        if not bindings:
            return None
        for node in bindings:
            sources = gradients.optimized_modules(getattr(node, "value", None))
            if sources is None:
                return None
            found |= sources
        return frozenset(found)

    @staticmethod
    def _is_loop_variable(e: _Event) -> bool:
        """``for opt in optimizers: opt.zero_grad()`` clears whatever those are."""
        if "." in (e.key or "") or "[" in (e.key or ""):
            return False
        return any(isinstance(loop, cst.For) and e.key in _target_names(loop.target) for loop in e.loops)

    @staticmethod
    def _key_is_loop_variable(key: str, events: list[_Event]) -> bool:
        for e in events:
            if e.kind == "step" and e.key == key:
                return any(isinstance(loop, cst.For) and key in _target_names(loop.target) for loop in e.loops)
        return False

    # -- reports -----------------------------------------------------------------------
    def _report_missing(self, step: _Event, unit: cst.CSTNode, direct: list[_Event], reported: set) -> None:
        if step.node in reported:
            return
        reported.add(step.node)
        text = _step_text(step.node, step.key)
        fix = f"call {step.key}.zero_grad() once per iteration"
        if any(e is step for e in direct):
            if isinstance(unit, cst.FunctionDef) and unit.name.value == "training_step":
                message = (f"{text} in this training_step applies gradients that were never cleared, so they add up "
                           f"across batches; call {step.key}.zero_grad() once per training_step")
            elif unit in self._kept:
                message = (f"{text} in {unit.name.value}() applies gradients that are never cleared: {step.key} is kept on "
                           f"the object, so each call adds its gradients to those of every call before; call "
                           f"{step.key}.zero_grad() before the backward")
            elif isinstance(unit, cst.FunctionDef):
                message = (f"{text} in {unit.name.value}(), which the ignite Engine runs on every batch or event, "
                           f"applies gradients that were never cleared, so they add up across runs; "
                           f"call {step.key}.zero_grad() once per run")
            elif self._cleared_outside(step, unit):
                message = (f"{text} in this loop applies gradients that were never cleared in it (the zero_grad() "
                           f"outside does not run every iteration), so they add up across iterations; {fix}")
            else:
                message = f"{text} in this loop applies gradients that were never cleared, so they add up across iterations; {fix}"
            if not isinstance(unit, cst.FunctionDef):
                self.report(step.node, message, fix=self._clear_fix(step, unit, direct))
                return
        else:
            via = self._call_site(step, direct)
            where = "the loop" if not isinstance(unit, cst.FunctionDef) or unit.name.value == "training_step" \
                else f"{unit.name.value}(), which {'its callers run' if unit in self._kept else 'the ignite Engine runs'} repeatedly,"
            message = f"{text} applies gradients that are never cleared in {where} calling {via}, so they add up across iterations; {fix}"
        self.report(step.node, message)

    def _clear_fix(self, step: _Event, unit: cst.For | cst.While, direct: list[_Event]) -> Fix | None:
        """``<optimizer>.zero_grad()`` as the first statement of the loop's body, where the
        step runs on every iteration (not under a gradient-accumulation ``if``, which clearing
        every iteration would defeat), it is the only optimizer the iteration steps (with two,
        as in a GAN, which backward fills which gradients decides where each clearing goes),
        and the optimizer is a name or attribute not rebound in the loop. Unsafe: where
        gradients are meant to be cleared is the author's call."""
        key = step.key or ""
        stepped = {e.key for e in direct if e.kind == "step"}
        stepped |= {x.key for e in direct for c in e.callees for x in self._ext(c) if x.kind == "step"}
        if stepped != {key} or not _DOTTED.fullmatch(key) or not isinstance(unit.body, cst.IndentedBlock) \
                or not gradients.runs_every_iteration(self.ctx, step.node, unit):
            return None
        bindings = self.model.scope_of(step.node).bindings.get(key, ())
        if any(self.ctx.inside(b.node, unit) for b in bindings):
            return None
        edit = insert_statement_before(self.ctx, unit.body.body[0], f"{key}.zero_grad()")
        return Fix.unsafe(f"Call {key}.zero_grad() at the start of each iteration", edit) if edit else None

    def _cleared_outside(self, step: _Event, unit: cst.CSTNode) -> bool:
        scope = self.model.loops[unit].scope.node
        return any(
            e.kind == "clear" and unit not in e.loops and (e.key == _ALL or self._same(e.key, step.key))
            for e in self._direct.get(scope, ())
        )

    def _call_site(self, step: _Event, direct: list[_Event]) -> str:
        """``train_step() at line 12``: where the loop reaches the step (positions are
        computed only here, for a finding)."""
        for e in direct:
            if e.callees and step.scope in self.graph.reach(e.callees):
                name = dotted_name(e.ref) if not isinstance(e.ref, cst.Lambda) else None
                return f"{name or 'a helper'}() at line {self.ctx.line_of(e.node)}"
        return "a helper"

    def _report_closure(self, step: _Event, reported: set, lbfgs: bool) -> None:
        if step.node in reported:
            return
        reported.add(step.node)
        text = _step_text(step.node, step.key)
        if lbfgs:
            why = "without clearing gradients; LBFGS evaluates it several times per step, so they add up"
        else:
            why = "and nothing in the loop clears the gradients, so they add up across iterations"
        self.report(
            step.node,
            f"the closure passed to {text} calls backward() {why}; call {step.key}.zero_grad() at the start of the closure",
        )

    # -- step 4: misplaced clearings ---------------------------------------------------
    def _check_order(self, unit: cst.CSTNode, direct: list[_Event], reported: set) -> None:
        """Clearing between backward and step; clearing every iteration with a gated step."""
        clears = [e for e in direct if e.kind == "clear" and e.key != _ALL]
        if not clears:
            return
        steps = [e for e in direct if e.kind == "step"]
        # Only steps of this very iteration: not those of a nested loop, which has its own.
        own = [s for s in steps if (s.loops[-1] if s.loops else s.scope) is unit]
        # Backwards, also those inside helpers and step closures, at their call sites.
        backs = [e for e in direct
                 if e.kind == "backward" or any(x.kind == "backward" for c in e.callees for x in self._ext(c))]
        for c in clears:
            if c.node in reported or not gradients.runs_every_iteration(self.ctx, c.node, unit) or self._is_loop_variable(c):
                continue
            mine = [s for s in own if self._same(c.key, s.key)]
            if not mine:
                continue
            wiped = self._wiped_step(c, mine, backs)
            if wiped is not None:
                reported.add(c.node)
                self.report(
                    c.node,
                    f"{_clear_text(c)} runs between the backward and {_step_text(wiped.node, wiped.key)}, "
                    f"wiping the gradients before they are applied; clear before the backward or after the step",
                )
                continue
            gated = self._gated_step(c, mine, steps, backs, unit)
            if gated is not None:
                reported.add(c.node)
                self.report(
                    c.node,
                    f"{_clear_text(c)} runs on every iteration but {_step_text(gated.node, gated.key)} only under an "
                    f"accumulation `if`, so the accumulated gradients are wiped before each step; "
                    f"move {_clear_text(c)} into that `if`, after the step",
                )

    @staticmethod
    def _wiped_step(c: _Event, mine: list[_Event], backs: list[_Event]) -> _Event | None:
        """A step of this iteration that ``c`` runs before, after a backward and with no
        backward in between."""
        if not any(b.order < c.order for b in backs):
            return None
        for s in mine:
            if s.order > c.order and not any(c.order < b.order <= s.order for b in backs):
                return s
        return None

    def _gated_step(self, c: _Event, mine: list[_Event], steps: list[_Event], backs: list[_Event],
                    unit: cst.CSTNode) -> _Event | None:
        """A step of this iteration that only runs at accumulation boundaries, while ``c``
        clears every iteration."""
        for s in mine:
            gate = gradients.accumulation_gate(self.ctx, s.node, unit)
            if gate is None or any(self._same(c.key, x.key) for x in steps if x is not s and not self.ctx.inside(x.node, gate.body)):
                continue
            # Accumulation means backwards on the iterations that do not step, and
            # none of its own under the gate (an n_critic schedule is fine).
            if not any(not self.ctx.inside(b.node, gate) for b in backs):
                continue
            if any(self.ctx.inside(b.node, gate.body) and b is not s for b in backs):
                continue
            return s
        return None


# -- small syntax helpers --------------------------------------------------------------

def _closure_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "closure":
            return arg.value
    if call.args and call.args[0].keyword is None:
        return call.args[0].value  # resolved later; a call or anything unknown is not judged
    return None


def _is_manual_backward(call: cst.CSTNode) -> bool:
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "manual_backward"


def _target_names(target: cst.BaseExpression) -> set[str]:
    return {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}


def _step_text(call: cst.CSTNode, key: str | None) -> str:
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        receiver = expr_key(call.func.value)
        if receiver is not None and receiver != key:
            return f"{receiver}.step({key})"
    return f"{key}.step()"


def _clear_text(e: _Event) -> str:
    return f"{e.key}.zero_grad()"
