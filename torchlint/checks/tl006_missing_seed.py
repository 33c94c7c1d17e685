"""TL006 missing-seed: a training entry point that never seeds torch (or uses Python's /
numpy's global random generator without seeding it).

Per-file pass (no walk of its own): the file is cut into *units* -- each module-level
function or method (nested defs merged into it), each module-level statement, and the
``if __name__ == "__main__":`` block. For every unit ``finish`` records, from
``ctx.semantic``, what it seeds, what it builds (an optimizer, a shuffling ``DataLoader``),
``random_split`` without a generator, same-file callees and imported callees. Whether an
entry statement runs a training loop is the training model's answer
(``TrainingModel.starts_training_loop`` over the loose call graph); what the entry point
(main block and top-level statements, plus every same-file function they reach) seeds comes
from the units it reaches. A file that optimises an input tensor of a fixed model (style
transfer, adversarial examples: ``semantic.runs.optimises_inputs``, as for TL004) is no
training run. What only another file can answer (does ``from .utils import
set_seed`` seed torch? does ``from engine import train`` train? what do the bases of
``class Trainer(engine.Engine)`` seed in their ``__init__`` or train in their methods?) goes into
``ctx.facts["TL006"]``; ``check_project`` settles it from the other files' TL006 facts and
the project index (``Project.function_summary``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.libraries import is_library
from torchlint.rule import Option, Rule
from torchlint.semantic.branches import default_guards
from torchlint.semantic.crossfile import ProjectCalls, call_shape, merge_shapes, parameter_positions
from torchlint.semantic.dataflow import Flow
from torchlint.semantic.display import only_shown
from torchlint.semantic.entry import first_line, is_main_guard, top_statement
from torchlint.semantic.fragments import is_fragment
from torchlint.semantic.index import index_name
from torchlint.semantic.model import CLASS, FUNCTION, MODULE
from torchlint.semantic.runs import optimises_inputs
from torchlint.semantic.torch_rng import draws_from_torch, only_starts_a_convex_fit
from torchlint.semantic.seeding import (ALL_GENERATORS, EXTERNAL_ROOTS, NUMPY, OBJECT_SEED_METHODS, RANDOM, TORCH,
                                        display_use, known_generators, random_use, seedish, shuffling_loader,
                                        unseeded_random_split)
from torchlint.torch_api import expr_key, is_optimizer_class

# Names of values drawn for something other than training randomness.
_INCIDENTAL = re.compile(r"port|seed|uuid|(^|_)(id|name|tag|run)$", re.IGNORECASE)
# An imported callable the linted files do not define, named like the training it runs.
_TRAINING_NAME = re.compile(r"^(train|fit)|trainer$", re.IGNORECASE)


@dataclass(eq=False)
class _Unit:
    """One module-level function or method (nested defs merged into it), module-level
    statement or main block: what the semantic model says its call sites do."""

    key: str
    builds: bool = False  # builds an optimizer or a shuffling DataLoader
    split: Any = None  # the first random_split(...) without a generator
    callees: list = field(default_factory=list)  # same-file function nodes called or passed
    imported: set = field(default_factory=set)  # qualified names of imported functions called
    methods: set = field(default_factory=set)  # names of methods called on other objects (x.fit())
    seeds: set = field(default_factory=set)  # generators seeded directly
    unresolved_seedish: bool = False  # a seed-like call to nothing this file defines
    # Code of a function that runs only for calls passing one of these parameters (their defaults
    # rule it out: ``branches.default_guards``) -> a unit of its own, with the parameters' places.
    guarded: dict = field(default_factory=dict)
    positions: list = field(default_factory=list)  # a guarded unit's parameters' places (crossfile)
    shapes: dict = field(default_factory=dict)  # imported name -> how its calls pass arguments

    def whole(self) -> list["_Unit"]:
        """The unit with the code its parameters' defaults rule out: in this file, every
        call of it counts as possibly passing them."""
        return [self, *self.guarded.values()]


class MissingSeed(Rule):
    code = "TL006"
    name = "missing-seed"
    severity = Severity.WARNING
    summary = "Training entry point never seeds torch (or uses random/numpy.random unseeded)"
    # An entry point that trains, seeds, or builds what it hands to a training function.
    uses_semantic_model = True
    requires_text = ("backward", "fit(", "seed", "optim", "shuffle", "train(", "scaler(")
    skips_test_files = True
    shared_facts = ("defined", "helpers", "classes", "on_import")  # what importing its helpers seeds
    options = {
        "skip-tests": Option(True, bool, "skip entry points in test files (tests/, test/, testing/, test_utils/ "
                                         "directories, test_*.py, *_test.py, tests.py, conftest.py): a test that needs "
                                         "reproducible runs seeds where it compares them"),
    }


    # -- the analysis: everything comes from ctx.semantic -------------------------------
    def finish(self) -> None:
        sem = self.ctx.semantic
        self.model, self.graph, self.training = sem.model, sem.loose_graph, sem.training
        self._flow: Flow | None = None
        self._index_units()
        self._collect()
        self._store_facts()

    def _index_units(self) -> None:
        """Unit keys: entry statements of the module, and module-level functions/methods."""
        self._order: list[str] = []  # entry unit keys in source order
        self._top_keys: dict[int, str] = {}
        for i, stmt in enumerate(self.ctx.module.body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                continue
            key = f"<main:{i}>" if is_main_guard(stmt) else f"<top:{i}>"
            self._top_keys[i] = key
            self._order.append(key)
        self.units: dict[str, _Unit] = {}
        self._scope_units: dict = {}  # scope -> its unit key, None (class body) or _TOP (module code)
        self._functions = {s.name for s in self.model.module.children if s.kind == FUNCTION}
        self._classes: dict[str, list[str]] = {}  # module-level class -> its method keys
        for info in self.model.classes.values():
            if all(s.kind in (CLASS, MODULE) for s in info.scope.chain()):
                self._classes[info.qualname] = [f"{info.qualname}.{m}" for m in info.methods]

    def _unit_key(self, node: cst.CSTNode) -> str | None:
        """The unit of a function or lambda: the outermost function around it (a module-level
        function or a method), named as the project index names it; None in module code."""
        key = self._scope_unit(self.model.scopes[node])
        return key if isinstance(key, str) else None

    def _scope_unit(self, scope) -> str | object | None:
        """The unit key of code in ``scope`` (``_unit_key``), ``_TOP`` for module code (whose
        unit is its statement's), None for a class body. Once per scope."""
        key = self._scope_units.get(scope, _UNSET)
        if key is _UNSET:
            outer = _outermost_function(scope)
            if outer is not None:
                key = index_name(outer)
            else:
                key = None if any(s.kind == CLASS for s in scope.chain()) else _TOP
            self._scope_units[scope] = key
        return key

    def _site_unit(self, site) -> _Unit | None:
        key = self._scope_unit(site.scope)
        if key is None:
            return None
        if key is _TOP:
            key = self._top_keys.get(site.top)
            if key is None:
                return None
        unit = self.units.get(key)
        if unit is None:
            unit = self.units[key] = _Unit(key)
        return unit

    def _collect(self) -> None:
        model, graph = self.model, self.graph
        self.trains: dict[str, bool] = {}  # entry unit key -> it runs a training loop
        self.uses: dict[str, tuple[str, cst.Call]] = {}  # generator -> (name, first call drawing from it)
        self.file_seeds: set[str] = set()
        for site in model.calls:
            call = site.node
            func = call.func
            qualified = model.qualified_name(func)
            imported = qualified is not None and model.is_imported(func)
            if imported:
                use = random_use(qualified)
                if use is not None:
                    if use not in self.uses and not self._incidental(call) and not self._shown(qualified, call):
                        self.uses[use] = (display_use(qualified), call)
                    continue
            unit = self._site_unit(site)
            if unit is None:
                continue
            # Whether an entry statement trains is read by ``_entry`` only, which a rule run only
            # for its shared facts (``self.reports`` False: a test file) never builds.
            if self.reports and unit.key.startswith("<") and not self.trains.get(unit.key):
                self.trains[unit.key] = self.training.starts_training_loop(site, graph)
            if not unit.key.startswith("<"):
                unit = self._guarded_unit(site, unit)
            if imported:
                self._imported_call(site, unit, qualified)
                callees = graph.references(site)
            else:
                targets = graph.targets(site)
                callees = targets + graph.references(site)
                name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
                if isinstance(func, cst.Attribute):
                    unit.methods.add(name)
                    if _is_super(func.value) and site.scope.cls is not None and not targets:
                        unit.imported |= {f"{b}.{name}" for b in self._imported_bases(site.scope.cls.qualname)}
                elif isinstance(func, cst.Name):
                    unit.imported |= self._imported_bases(func.value)
                if seedish(name) and not (isinstance(func, cst.Attribute) and name in OBJECT_SEED_METHODS) \
                        and not targets:
                    unit.unresolved_seedish = True
            unit.callees.extend(callees)

    def _guarded_unit(self, site, unit: _Unit) -> _Unit:
        """``unit``, or its part that runs only for calls passing a parameter whose default
        rules ``site`` out (``branches.default_guards``)."""
        function = _outermost_function(site.scope).node
        guards = default_guards(self.ctx, site.node, function)
        if not guards:
            return unit
        part = unit.guarded.get(guards)
        if part is None:
            positions = parameter_positions(function, guards, self.model.self_name(function))
            part = unit.guarded[guards] = _Unit(f"{unit.key}?{','.join(guards)}", positions=positions)
        return part

    def _imported_bases(self, name: str) -> set[str]:
        """The bases another project file may define of the same-file class ``name``: constructing
        it runs their ``__init__`` when it inherits it and gives it their methods
        (``TrainerWithMetrics(Trainer)``); ``super().m(...)`` runs their ``m``. The project pass
        follows them as imported calls."""
        info = self.model.class_named(name)
        if info is None:
            return set()
        return {b for c in self.model.mro(info) for b in c.bases
                if "." in b and not is_library(b) and b.split(".")[0] not in EXTERNAL_ROOTS}

    def _imported_call(self, site, unit: _Unit, qualified: str) -> None:
        """What a call of an imported name does: seeds, builds, splits, runs an ignite engine."""
        call = site.node
        unit.shapes[qualified] = merge_shapes(unit.shapes.get(qualified), call_shape(call))
        if is_optimizer_class(qualified) or shuffling_loader(qualified, call):
            unit.builds = True
        elif unit.split is None and unseeded_random_split(qualified, call):
            unit.split = call
        gens = known_generators(qualified)
        if gens is None:
            unit.imported.add(qualified)
        elif gens:
            unit.seeds |= gens
            self.file_seeds |= gens

    def _incidental(self, call: cst.Call) -> bool:
        """A draw that picks a port, a seed, a run id or a name (``port = random.randint(..)``,
        ``str(random.random())``, ``f"{random.randint(..)}"``): not training randomness, and
        seeding it would even be wrong."""
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, (cst.FormattedStringExpression, cst.SimpleStatementLine, cst.BaseSuite)):
                return isinstance(anc, cst.FormattedStringExpression)
            if isinstance(anc, cst.Call) and isinstance(anc.func, cst.Name) and anc.func.value in ("str", "hex"):
                return True
            if isinstance(anc, cst.Arg) and anc.keyword is not None and _INCIDENTAL.search(anc.keyword.value):
                return True
            if isinstance(anc, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in anc.targets] if isinstance(anc, cst.Assign) else [anc.target]
                return any(_INCIDENTAL.search((expr_key(t) or "").rsplit(".", 1)[-1]) for t in targets)
        return False

    def _shown(self, qualified: str, call: cst.Call) -> bool:
        """A draw whose value is only shown (a random example to print or plot, a plot colour:
        ``semantic.display.only_shown``): no training randomness. An in-place shuffle never is."""
        if qualified.endswith(".shuffle"):  # changes its argument in place
            return False
        if self._flow is None:
            self._flow = Flow(self.ctx, self.model)
        return only_shown(self.ctx, self.model, self._flow, call)

    # -- per-file conclusions ----------------------------------------------------------
    def _keys(self, nodes) -> list[str]:
        return [k for k in (self._unit_key(n) for n in nodes) if k is not None]

    def _reach(self, start) -> list[_Unit]:
        keys = {self._unit_key(n) for n in self.graph.reach(
            [c for k in start if k in self.units for part in self.units[k].whole() for c in part.callees])}
        keys |= set(start)
        return [part for k, u in self.units.items() if k in keys for part in u.whole()]

    def _seeds(self, unit: _Unit) -> set[str]:
        return unit.seeds | (set(ALL_GENERATORS) if unit.unresolved_seedish else set())

    def _summary(self, key: str, unit: _Unit) -> list:
        """What a helper amounts to for another file: [its seeds, the imported names it calls
        (project ones), the same-file units it calls]."""
        imported = sorted(q for q in unit.imported if q.split(".")[0] not in EXTERNAL_ROOTS)
        return [sorted(self._seeds(unit)), imported, sorted(set(self._keys(unit.callees)) - {key})]

    def _store_facts(self) -> None:
        facts: dict[str, Any] = {}
        # Seed helpers of this file, for the files that import them.
        defined = sorted(self._functions | set(self._classes))
        helpers: dict[str, list] = {}
        for key, unit in self.units.items():
            if key.startswith("<"):
                continue
            summary = self._summary(key, unit)
            guarded = [[part.positions, *self._summary(key, part)] for part in unit.guarded.values()]
            guarded = [g for g in guarded if any(g[1:])]
            if guarded:
                helpers[key] = [*summary, guarded]  # the guarded part counts for calls passing them
            elif any(summary):
                helpers[key] = summary
        classes = {}
        for cls, methods in self._classes.items():
            info = self.model.class_named(cls)
            ctors = self._keys(self.graph.constructors(info)) if info is not None else []
            helpers.setdefault(cls, [[], [], ctors])  # what cls(...) runs
            classes[cls] = methods + [f"{base.qualname}.{m}" for base in (self.model.mro(info)[1:] if info else ())
                                      for m in base.methods]
        if defined:
            # A defined name absent from ``helpers`` seeds nothing and calls nothing imported.
            facts["defined"] = defined
            facts["helpers"] = helpers
            facts["classes"] = classes
        # Seeding at import time (module-level code): importing this module seeds.
        on_import = {g for key in self._order if key.startswith("<top") and key in self.units
                     for g in self._seeds(self.units[key])}
        if on_import:
            facts["on_import"] = sorted(on_import)
        entry = self._entry() if self.reports else None
        if entry is not None:
            facts["entry"] = entry
        if facts:
            self.ctx.facts[self.code] = facts

    def _entry(self) -> dict[str, Any] | None:
        """The entry point's facts: whether it trains here (else whether it builds an
        optimizer or a shuffling loader, so an imported callee may be its training), what
        it still needs seeded, and where the unseeded draws and splits are."""
        if not self._order:
            return None
        trains = self.trains
        reached = self._reach(self._order)
        builds = any(u.builds for u in reached)
        main = next((k for k in self._order if k.startswith("<main") and trains.get(k)), None)
        at = main or next((k for k in self._order if trains.get(k)), None)
        if at is None:  # an imported callee may train: the main block, or a statement handing off
            at = next((k for k in self._order if k.startswith("<main")), None) or next(
                (k for k in self._order if k in self.units and (self.units[k].builds or any(
                    _TRAINING_NAME.search(q.rsplit(".", 1)[-1]) for q in self.units[k].imported))), None)
            if at is None:
                return None
        seeds: set[str] = set(self.file_seeds) - {TORCH}
        imported: set[str] = set()
        methods: set[str] = set()
        shapes: dict[str, list] = {}
        split = None
        for unit in reached:
            seeds |= self._seeds(unit)
            imported |= unit.imported
            methods |= unit.methods
            split = split or unit.split
            for qualified, shape in unit.shapes.items():
                shapes[qualified] = merge_shapes(shapes.get(qualified), shape)
        needs = [g for g in ALL_GENERATORS if g not in seeds and (g == TORCH or g in self.uses)]
        if TORCH in needs and (not draws_from_torch(self.ctx.semantic) or only_starts_a_convex_fit(self.ctx.semantic)):
            needs.remove(TORCH)  # every run gives the same numbers, or converges to the same fit
        if not needs or (not trains.get(at) and not imported) or optimises_inputs(self.ctx.semantic) \
                or is_fragment(self.ctx.semantic):
            return None  # (optimising an input tensor of a fixed model is no training run; a fragment, no program)
        entry = {"at": self._place(at), "trains": bool(trains.get(at)), "builds": builds, "needs": needs,
                 "calls": sorted(imported),
                 "shapes": {q: shapes[q] for q in sorted(imported) if q in shapes},
                 "uses": {g: [self.uses[g][0], self._range(self.uses[g][1])] for g in needs if g in self.uses}}
        if not trains.get(at):
            entry["methods"] = sorted(methods)
        if split is not None and TORCH in needs:
            entry["split"] = self._range(split)
        return entry

    def _range(self, node: cst.CSTNode) -> list[int]:
        return self.ctx.span(node).to_json()

    def _place(self, key: str) -> list[int]:
        """One line for an entry unit: its ``if __name__`` line (from the ``if``), or the
        first line of a top-level statement (a loop header). From CPython's tree, far
        cheaper than LibCST's positions; ``ctx.position`` is the fallback."""
        index = int(key[key.index(":") + 1:-1])
        try:
            stmt = top_statement(self.ctx, index)
            if stmt is not None:
                return Span(*first_line(self.ctx, stmt)).to_json()
        except (IndexError, TypeError, ValueError):
            pass
        span = self.ctx.span(self.ctx.module.body[index])
        return Span(span.line, span.column, span.line, span.column).to_json()

    # -- project pass ------------------------------------------------------------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        findings = []
        for record in project.records:
            entry = (record.facts.get(cls.code) or {}).get("entry")
            if not entry:
                continue
            for at, message in _ProjectEntry(project, record, entry).messages():
                findings.append(Finding.at(cls, record.path, Span.from_json(at), message))
        return findings


class _ProjectEntry:
    """One file's entry point, settled with the other files: what its imported callees
    seed, whether one of them is its training, and the messages that remain."""

    def __init__(self, project, record, entry: dict) -> None:
        self.project, self.record, self.entry = project, record, entry
        self.resolver = _seeded_by(project)

    def messages(self) -> list[tuple[list[int], str]]:
        entry, record = self.entry, self.record
        needs = set(entry["needs"])
        for qualified in set(record.imports.values()):
            if not needs:
                break
            needs -= self.resolver.on_import(qualified, record)
        delegates = self._delegates()
        if not entry["trains"] and not delegates:
            unseen = self._unseen_trainer() if entry["builds"] else None
            if unseen is None or TORCH not in needs:
                return []
            return [(entry["at"], handed_off(unseen))]
        shapes = entry.get("shapes", {})
        for qualified in entry["calls"]:
            if qualified not in {shown for shown, _ in delegates}:
                needs -= self.resolver.values(qualified, record, shape=shapes.get(qualified))
        later: set[str] = set()  # seeded only inside the training itself
        for shown, resolved in delegates:
            later |= _seeded_by(self.project).values(resolved, record, shape=shapes.get(shown))
        out = []
        if TORCH in needs - later:
            out.append((entry["at"], NEVER_SEEDS_TORCH))
        elif TORCH in needs and "split" in entry:
            out.append((entry["split"], split_before_seed(delegates[0][0])))
        for gen in (RANDOM, NUMPY):
            if gen in needs - later and gen in entry["uses"]:
                name, at = entry["uses"][gen]
                out.append((at, unseeded_draw(gen, name)))
        return out

    def _delegates(self) -> list[tuple[str, str]]:
        """Imported project functions (``engine.train``) and methods of imported project
        classes the entry calls (``Trainer(...).fit()``) that the index says train: (the name
        as the entry calls it, the function's project name)."""
        found = []
        for qualified in self.entry["calls"]:
            summary = self.project.function_summary(qualified, self.record)
            if summary is not None:
                if summary.get("trains"):
                    found.append((qualified, qualified))
                continue
            cls = self.project.resolve_class(qualified, self.record)
            if cls is None:
                continue
            for method in self.entry.get("methods", ()):
                for owner in [cls, *self.project.ancestors(cls)]:
                    summary = self.project.function_summary(f"{owner}.{method}", self.record)
                    if summary is not None and summary.get("trains"):
                        found.append((f"{qualified}.{method}", f"{owner}.{method}"))
                        break
        return found

    def _unseen_trainer(self) -> str | None:
        """An imported callable no linted file defines, named like training (``train``,
        ``fit_model``, ``Trainer``), that the entry hands its optimizer or loader to."""
        for qualified in self.entry["calls"]:
            if is_library(qualified) or not _TRAINING_NAME.search(qualified.rsplit(".", 1)[-1]):
                continue
            if self.project.resolve_symbol(qualified, self.record) is None:
                return qualified
        return None


NEVER_SEEDS_TORCH = (
    "training entry point never seeds torch, so weight init, dropout and shuffling differ on every run and runs "
    "cannot be reproduced or compared; call torch.manual_seed(seed) (or lightning's seed_everything) before "
    "building the model"
)


def handed_off(trainer: str) -> str:
    return (
        f"training entry point builds an optimizer or a shuffling DataLoader and hands training to `{trainer}` "
        f"(not linted) without seeding torch first, so whatever it initialises or shuffles before that call "
        f"differs on every run; call torch.manual_seed(seed) (or lightning's seed_everything) before building "
        f"the model"
    )


def split_before_seed(delegate: str) -> str:
    return (
        f"random_split without a generator runs before anything seeds torch (only `{delegate}` seeds it, "
        f"later), so the train/validation split differs on every run and on every rank; pass "
        f"generator=torch.Generator().manual_seed(seed) or seed torch before splitting"
    )


def unseeded_draw(gen: str, used: str) -> str:
    name, call = ("Python's random", "random.seed(seed)") if gen == RANDOM else \
        ("numpy's global generator", "np.random.seed(seed)")
    return (f"uses {used} but never seeds {name}, so shuffling/augmentation/sampling differs on every run; "
            f"call {call} next to torch.manual_seed(seed)")


def _seeded_by(project) -> ProjectCalls:
    """The generators an imported function seeds, from the other files' TL006 facts: a
    library seeder by its name (``known_generators``), an unresolved name that reads like
    a seeder (``set_seed``) as seeding everything."""
    return ProjectCalls(project, MissingSeed.code, known=known_generators, everything=ALL_GENERATORS,
                        fallback=lambda q: set(ALL_GENERATORS) if seedish(q.rsplit(".", 1)[-1]) else set())


def _is_super(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


_UNSET = object()
_TOP = object()  # ``_site_unit``: a scope of module code, whose unit is the statement's


def _outermost_function(scope):
    """The outermost function scope around ``scope`` (itself included), None in module code
    and class bodies."""
    outer = None
    for s in scope.chain():
        if s.kind == FUNCTION:
            outer = s
    return outer
