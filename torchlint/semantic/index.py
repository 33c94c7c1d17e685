"""The project index: typed, JSON-serialisable per-file facts the engine stores in each
``FileRecord.index`` (next to ``imports``), and ``Project`` answers from.

Classes come from the tree the engine has for every parsed file, even one no rule needed a
LibCST tree for (``class_facts``: CPython's tree there, LibCST's where a rule needed it; a
few microseconds per class). Function summaries
(trains, evaluates, seeds, builds an optimizer) need the training model, so they are filled
only for files where a rule built it (``ctx.semantic``); elsewhere ``functions`` is empty,
which ``Project.function_summary`` reports as unknown (None), never as "does nothing".
Functions are module-level functions and methods of module-level classes (``Class.method``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

import libcst as cst

from torchlint import torch_api as api
from torchlint.statements import CLASS, FUNCTION, reader_for

if TYPE_CHECKING:
    import ast

    from torchlint.imports import ImportTable
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import Scope
    from torchlint.statements import Statements


class ClassFact(TypedDict):
    name: str  # qualified inside the file: ``Outer.Inner``
    bases: list[str]  # imports expanded; same-file classes as ``<module>.<Name>``
    methods: list[str]
    self_attrs: list[str]  # ``self.<attr> = ...`` in any method


class FunctionFact(TypedDict):
    trains: bool  # backward + optimizer step (or a trainer's fit), itself or through callees
    evaluates: bool
    seeds: bool  # calls a torch / library seeding function
    builds_optimizer: bool
    returns_eval_model: bool  # switches what it returns to eval mode (``m.eval(); return m``)


@dataclass
class FileIndex:
    classes: list[ClassFact] = field(default_factory=list)
    functions: dict[str, FunctionFact] = field(default_factory=dict)

    def to_json(self) -> dict:
        """Plain JSON values (a copy: the facts are dicts of strings, lists and bools)."""
        return {"classes": [{k: list(v) if isinstance(v, list) else v for k, v in c.items()} for c in self.classes],
                "functions": {name: dict(fact) for name, fact in self.functions.items()}}


def _classes_in(body: list, reader: "Statements") -> list:
    """Classes a block defines, under compound statements too (not inside nested defs)."""
    out, stack = [], list(reversed(body))
    kind, blocks = reader.kind, reader.blocks
    while stack:
        node = stack.pop()
        what = kind(node)
        if what is CLASS:
            out.append(node)
        elif what is not FUNCTION:
            for block in reversed(blocks(node)):
                stack.extend(reversed(block))
    return out


def _attributes_stored(body: list, me: str, reader: "Statements") -> set[str]:
    """``x`` for every ``me.x = ...`` (also unpacked, annotated, augmented, ``for``/``with``
    targets) in a method's statements, nested blocks and nested functions included. Reads
    statements only: about a tenth of the nodes ``ast.walk`` would visit."""
    found: set[str] = set()
    stack = list(body)
    unpacked, self_attribute = reader.unpacked, reader.self_attribute
    while stack:
        node = stack.pop()
        targets = reader.targets(node)
        while targets:
            target = targets.pop()
            inner = unpacked(target)
            if inner is not None:
                targets.extend(inner)
            elif (attr := self_attribute(target, me)) is not None:
                found.add(attr)
        if reader.kind(node) is FUNCTION:
            stack.extend(reader.body(node))
        else:
            for block in reader.blocks(node):
                stack.extend(block)
    return found


class _FunctionClasses:
    """The classes a function's body sees: its own local classes over those around it,
    looked for only when a class inside the function needs them (most functions hold none)."""

    __slots__ = ("outer", "body", "qual", "reader", "_names")

    def __init__(self, outer: "dict | _FunctionClasses", body: list, qual: str, reader: "Statements"):
        self.outer, self.body, self.qual, self.reader = outer, body, qual, reader
        self._names: dict | None = None

    def names(self) -> dict:
        if self._names is None:
            outer = self.outer.names() if type(self.outer) is _FunctionClasses else self.outer
            name_of = self.reader.name
            self._names = {**outer, **{name_of(c): f"{self.qual}.{name_of(c)}" for c in _classes_in(self.body, self.reader)}}
        return self._names


def class_facts(tree: "ast.Module | cst.Module", imports: "ImportTable") -> list[ClassFact]:
    """Every class of the file, bases qualified, from either tree (``torchlint.statements``:
    the same facts from CPython's tree and LibCST's). Iterative. A class inside a function
    (or a method) is named through it, as ``index_name`` names it: ``make.Net``,
    ``Test.test_x.Model``; its bare-name bases see the classes of the functions around it."""
    reader = reader_for(tree)
    kind, name_of, body_of = reader.kind, reader.name, reader.body
    out: list[ClassFact] = []
    prefix = imports.module_name
    module_body = body_of(tree)
    module_env = {name_of(c): name_of(c) for c in _classes_in(module_body, reader)}
    # (statement, qualified name of the enclosing class/function, visible local classes: a
    # dict, or inside a function the ``_FunctionClasses`` that finds them when a class asks)
    stack: list[tuple[object, str, "dict | _FunctionClasses"]] = [(n, "", module_env) for n in reversed(module_body)]
    while stack:
        node, outer, env = stack.pop()
        what = kind(node)
        if what is FUNCTION:
            qual = f"{outer}.{name_of(node)}" if outer else name_of(node)
            body = body_of(node)
            inner = _FunctionClasses(env, body, qual, reader)
            stack.extend((n, qual, inner) for n in reversed(body))
            continue
        if what is not CLASS:
            for block in reversed(reader.blocks(node)):
                stack.extend((n, outer, env) for n in reversed(block))
            continue
        if type(env) is _FunctionClasses:
            env = env.names()
        qual = f"{outer}.{name_of(node)}" if outer else name_of(node)
        bases = []
        for written in reader.bases(node):
            if written is None:
                continue
            head, dot, rest = written.partition(".")
            if head in imports.names:
                bases.append(imports.names[head] + dot + rest)
            elif head in env:
                local = env[head] + dot + rest
                bases.append(f"{prefix}.{local}" if prefix else local)
            else:
                bases.append(written)
        methods, attrs = [], set()
        body = body_of(node)
        for item in body:
            if kind(item) is FUNCTION:
                methods.append(name_of(item))
                me = reader.first_param(item)
                if me is not None:
                    attrs.update(_attributes_stored(body_of(item), me, reader))
        out.append(ClassFact(name=qual, bases=bases, methods=methods, self_attrs=sorted(attrs)))
        # The class body: nested classes (which see the body's classes) and methods (which do not).
        body_env = {**env, **{name_of(c): f"{qual}.{name_of(c)}" for c in _classes_in(body, reader)}}
        stack.extend((n, qual, env if kind(n) is FUNCTION else body_env) for n in reversed(body))
    return out


_SEEDS = ("manual_seed", "manual_seed_all", "seed_everything", "set_seed")


def _may_seed(func, ctx) -> bool:
    """A cheap necessary condition for a callee whose qualified name ends in a seeding
    function: written so, or a bare name that some import binds (it may be an alias)."""
    if isinstance(func, cst.Attribute):
        return func.attr.value in _SEEDS
    return isinstance(func, cst.Name) and (func.value in _SEEDS or func.value in ctx.imports)


def index_name(scope: "Scope") -> str:
    """The name ``class_facts`` gives the class (or function) of a semantic-model scope:
    enclosing classes and functions joined by dots (``Outer.Inner``, ``make.Net``)."""
    names = []
    current: Scope | None = scope
    while current is not None:
        name = current.name
        if name is not None:
            names.append(name)
        current = current.parent
    names.reverse()
    return ".".join(names)


def build_index(sem: "Analyses", classes: list[ClassFact] | None = None) -> FileIndex:
    """The whole index of a file whose analyses exist (classes + function summaries);
    ``classes`` when the caller already has them (``class_facts`` of the same tree)."""
    ctx = sem.ctx
    index = FileIndex()
    index.classes = classes if classes is not None else class_facts(ctx.module, ctx.import_table)
    model, training = sem.model, sem.training
    seeding = {s.scope.node for s in model.calls
               if _may_seed(s.node.func, ctx) and (model.qualified_name(s.node.func) or "").rsplit(".", 1)[-1] in _SEEDS}
    seeds = sem.graph.closure(seeding) if seeding else set()
    # Module-level functions, and methods of module-level classes as ``Class.method``.
    scopes = [(s.name, s) for s in model.module.children if s.kind == "function"]
    scopes += [(f"{c.name}.{s.name}", s) for c in model.module.children if c.kind == "class"
               for s in c.children if s.kind == "function"]
    for name, scope in scopes:
        node = scope.node
        sites = sem.graph.sites(node)
        index.functions[name] = FunctionFact(
            trains=training.trains(node), evaluates=training.evaluates(node), seeds=node in seeds,
            builds_optimizer=any(api.is_optimizer_constructor(ctx, s.node.func) for s in sites),
            returns_eval_model=_returns_eval_model(sem, node, sites))
    return index


def _returns_eval_model(sem: "Analyses", function, sites: list) -> bool:
    """``function`` switches to eval mode the value it returns: ``model.eval()`` then ``return
    model`` (or ``return model.eval()``), with no switch back to training mode in its body.
    ``sites``: the call graph's ``sites`` of ``function``."""
    switches = []
    for site in sites:
        func = site.node.func
        if type(func) is cst.Attribute and func.attr.value in ("eval", "train"):  # what mode_switch reads
            mode = api.mode_switch(site.node)
            if mode is not None:
                switches.append((mode, api.expr_key(func.value)))
    if any(mode for mode, _ in switches):
        return False
    evaluated = {key for mode, key in switches if mode is False and key is not None}
    if not evaluated:  # the common case
        return False
    scope = sem.model.scopes.get(function)
    returned = [api.expr_key(api.strip_self_returning(r.value)) for r in (scope.returns if scope is not None else ())
                if r.value is not None]
    return bool(returned) and all(key in evaluated for key in returned)
