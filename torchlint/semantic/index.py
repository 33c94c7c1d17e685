"""The project index: typed, JSON-serialisable per-file facts the engine stores in each
``FileRecord.index`` (next to ``imports``), and ``Project`` answers from.

Classes come from CPython's tree the engine already has (every parsed file, even one no
rule needed a LibCST tree for: a few microseconds per class). Function summaries
(trains, evaluates, seeds, builds an optimizer) need the training model, so they are filled
only for files where a rule built it (``ctx.semantic``); elsewhere ``functions`` is empty,
which ``Project.function_summary`` reports as unknown (None), never as "does nothing".
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from torchlint.imports import ImportTable
    from torchlint.semantic import Analyses


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


@dataclass
class FileIndex:
    classes: list[ClassFact] = field(default_factory=list)
    functions: dict[str, FunctionFact] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def class_facts(tree: ast.Module, imports: "ImportTable") -> list[ClassFact]:
    """Module-level classes (and classes nested in them), bases qualified. Iterative."""
    out: list[ClassFact] = []
    local = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    stack: list[tuple[ast.ClassDef, str]] = [(n, n.name) for n in reversed(tree.body) if isinstance(n, ast.ClassDef)]
    prefix = imports.module_name
    while stack:
        node, qual = stack.pop()
        bases = []
        for base in node.bases:
            expr = base.value if isinstance(base, ast.Subscript) else base
            written = _dotted(expr)
            if written is None:
                continue
            head, dot, rest = written.partition(".")
            if head in imports.names:
                bases.append(imports.names[head] + dot + rest)
            elif head in local:
                bases.append(f"{prefix}.{written}" if prefix else written)
            else:
                bases.append(written)
        methods, attrs = [], set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.append(item.name)
                args = item.args.posonlyargs + item.args.args
                if args:
                    me = args[0].arg
                    for sub in ast.walk(item):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) \
                                and isinstance(sub.value, ast.Name) and sub.value.id == me:
                            attrs.add(sub.attr)
            elif isinstance(item, ast.ClassDef):
                stack.append((item, f"{qual}.{item.name}"))
        out.append(ClassFact(name=qual, bases=bases, methods=methods, self_attrs=sorted(attrs)))
    return out


_SEEDS = ("manual_seed", "manual_seed_all", "seed_everything", "set_seed")


def _may_seed(func, ctx) -> bool:
    """A cheap necessary condition for a callee whose qualified name ends in a seeding
    function: written so, or a bare name that some import binds (it may be an alias)."""
    import libcst as cst

    if isinstance(func, cst.Attribute):
        return func.attr.value in _SEEDS
    return isinstance(func, cst.Name) and (func.value in _SEEDS or func.value in ctx.imports)


def build_index(sem: "Analyses", classes: list[ClassFact] | None = None) -> FileIndex:
    """The whole index of a file whose analyses exist (classes + function summaries);
    ``classes`` when the caller already has them (``class_facts`` of the same tree)."""
    from torchlint import torch_api as api
    from torchlint.semantic.model import MODULE

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
    for scope in model.module.children:
        if scope.kind != "function" or scope.parent is None or scope.parent.kind != MODULE:
            continue
        node = scope.node
        index.functions[scope.name] = FunctionFact(
            trains=training.trains(node), evaluates=training.evaluates(node), seeds=node in seeds,
            builds_optimizer=any(api.is_optimizer_constructor(ctx, s.node.func) for s in sem.graph.sites(node)))
    return index
