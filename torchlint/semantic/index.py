"""The project index: typed, JSON-serialisable per-file facts the engine stores in each
``FileRecord.index`` (next to ``imports``), and ``Project`` answers from.

Classes come from CPython's tree the engine already has (every parsed file, even one no
rule needed a LibCST tree for: a few microseconds per class). Function summaries
(trains, evaluates, seeds, builds an optimizer) need the training model, so they are filled
only for files where a rule built it (``ctx.semantic``); elsewhere ``functions`` is empty,
which ``Project.function_summary`` reports as unknown (None), never as "does nothing".
Functions are module-level functions and methods of module-level classes (``Class.method``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from torchlint.imports import ImportTable
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import Scope


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


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Compound statements other than defs -> the fields holding their statement lists.
_COMPOUND = {ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
             ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
             ast.Try: ("body", "orelse", "finalbody"), ast.Match: ()}
if hasattr(ast, "TryStar"):
    _COMPOUND[ast.TryStar] = _COMPOUND[ast.Try]


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly under a compound statement (``if``/``for``/``try``/...)."""
    fields = _COMPOUND.get(type(node))
    if fields is None:
        return []
    out = [getattr(node, name) for name in fields]
    out += [h.body for h in getattr(node, "handlers", ())]
    out += [c.body for c in getattr(node, "cases", ())]
    return out


def _classes_in(body: list[ast.stmt]) -> list[ast.ClassDef]:
    """Classes a block defines, under compound statements too (not inside nested defs)."""
    out, stack = [], list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            out.append(node)
        elif not isinstance(node, _FUNCTIONS):
            for block in reversed(_blocks(node)):
                stack.extend(reversed(block))
    return out


def _targets(node: ast.stmt) -> list[ast.expr]:
    """What a statement stores to (an attribute can be stored to by nothing else, but a
    comprehension's ``for``)."""
    kind = type(node)
    if kind is ast.Assign:
        return node.targets
    if kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
        return [node.target]
    if kind in (ast.With, ast.AsyncWith):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _attributes_stored(body: list[ast.stmt], me: str) -> set[str]:
    """``x`` for every ``me.x = ...`` (also unpacked, annotated, augmented, ``for``/``with``
    targets) in a method's statements, nested blocks and nested functions included. Reads
    statements only: about a tenth of the nodes ``ast.walk`` would visit."""
    found: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        targets = _targets(node)
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(target.elts)
            elif isinstance(target, ast.Starred):
                targets.append(target.value)
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                found.add(target.attr)
        if isinstance(node, _FUNCTIONS):
            stack.extend(node.body)
        else:
            for block in _blocks(node):
                stack.extend(block)
    return found


def class_facts(tree: ast.Module, imports: "ImportTable") -> list[ClassFact]:
    """Every class of the file, bases qualified. Iterative. A class inside a function (or a
    method) is named through it, as ``index_name`` names it: ``make.Net``,
    ``Test.test_x.Model``; its bare-name bases see the classes of the functions around it."""
    out: list[ClassFact] = []
    prefix = imports.module_name
    module_env = {c.name: c.name for c in _classes_in(tree.body)}
    # (statement, qualified name of the enclosing class/function, visible local classes)
    stack: list[tuple[ast.stmt, str, dict]] = [(n, "", module_env) for n in reversed(tree.body)]
    while stack:
        node, outer, env = stack.pop()
        if isinstance(node, _FUNCTIONS):
            qual = f"{outer}.{node.name}" if outer else node.name
            inner = {**env, **{c.name: f"{qual}.{c.name}" for c in _classes_in(node.body)}}
            stack.extend((n, qual, inner) for n in reversed(node.body))
            continue
        if not isinstance(node, ast.ClassDef):
            for block in reversed(_blocks(node)):
                stack.extend((n, outer, env) for n in reversed(block))
            continue
        qual = f"{outer}.{node.name}" if outer else node.name
        bases = []
        for base in node.bases:
            expr = base.value if isinstance(base, ast.Subscript) else base
            written = _dotted(expr)
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
        for item in node.body:
            if isinstance(item, _FUNCTIONS):
                methods.append(item.name)
                args = item.args.posonlyargs + item.args.args
                if args:
                    attrs.update(_attributes_stored(item.body, args[0].arg))
        out.append(ClassFact(name=qual, bases=bases, methods=methods, self_attrs=sorted(attrs)))
        # The class body: nested classes (which see the body's classes) and methods (which do not).
        body_env = {**env, **{c.name: f"{qual}.{c.name}" for c in _classes_in(node.body)}}
        stack.extend((n, qual, env if isinstance(n, _FUNCTIONS) else body_env) for n in reversed(node.body))
    return out


_SEEDS = ("manual_seed", "manual_seed_all", "seed_everything", "set_seed")


def _may_seed(func, ctx) -> bool:
    """A cheap necessary condition for a callee whose qualified name ends in a seeding
    function: written so, or a bare name that some import binds (it may be an alias)."""
    import libcst as cst

    if isinstance(func, cst.Attribute):
        return func.attr.value in _SEEDS
    return isinstance(func, cst.Name) and (func.value in _SEEDS or func.value in ctx.imports)


def index_name(scope: "Scope") -> str:
    """The name ``class_facts`` gives the class (or function) of a semantic-model scope:
    enclosing classes and functions joined by dots (``Outer.Inner``, ``make.Net``)."""
    names = [s.name for s in scope.chain() if s.name is not None]
    return ".".join(reversed(names))


def build_index(sem: "Analyses", classes: list[ClassFact] | None = None) -> FileIndex:
    """The whole index of a file whose analyses exist (classes + function summaries);
    ``classes`` when the caller already has them (``class_facts`` of the same tree)."""
    from torchlint import torch_api as api

    ctx = sem.ctx
    index = FileIndex()
    tree = sem.ast_tree
    if classes is not None:
        index.classes = classes
    elif tree is not None:
        index.classes = class_facts(tree, ctx.import_table)
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
        index.functions[name] = FunctionFact(
            trains=training.trains(node), evaluates=training.evaluates(node), seeds=node in seeds,
            builds_optimizer=any(api.is_optimizer_constructor(ctx, s.node.func) for s in sem.graph.sites(node)),
            returns_eval_model=_returns_eval_model(sem, node))
    return index


def _returns_eval_model(sem: "Analyses", function) -> bool:
    """``function`` switches to eval mode the value it returns: ``model.eval()`` then ``return
    model`` (or ``return model.eval()``), with no switch back to training mode in its body."""
    import libcst as cst

    from torchlint import torch_api as api
    from torchlint.semantic.modules import strip_self_returning

    switches = []
    for site in sem.graph.sites(function):
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
    returned = [api.expr_key(strip_self_returning(r.value)) for r in (scope.returns if scope is not None else ())
                if r.value is not None]
    return bool(returned) and all(key in evaluated for key in returned)
