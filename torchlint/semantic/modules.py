"""What rules about ``nn.Module`` definitions share: the values a class stores in ``self.x``,
the code its ``forward`` runs, and findings that only hold if the class is an ``nn.Module``.

Whether a class is an ``nn.Module`` often depends on another file (``class Net(BaseNet)``
with ``BaseNet`` in ``base.py``), so a rule records such findings as *pending* facts
(``pending``) in the per-file pass and the project pass keeps those whose class the project
index knows to be an ``nn.Module`` (``settle``, through ``Project.is_nn_module``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import libcst as cst

from torchlint.finding import Finding, Span
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.index import index_name

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.project import Project
    from torchlint.rule import Rule
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import Binding, ClassInfo, SemanticModel


def self_attr_bindings(model: "SemanticModel", info: "ClassInfo", attr: str) -> list["Binding"]:
    """Every binding of ``self.<attr>`` in the methods of ``info`` (its own, not its bases'),
    in source order, whatever name ``self`` goes by in each method."""
    out = []
    for method in info.methods.values():
        scope = model.scopes.get(method)
        if scope is None or scope.self_name is None:
            continue
        out.extend(scope.bindings.get(f"{scope.self_name}.{attr}", ()))
    out.sort(key=lambda b: b.order)
    return out


def forward_code(sem: "Analyses", info: "ClassInfo") -> set[cst.CSTNode]:
    """The functions ``info``'s own ``forward`` runs: itself and the same-file functions
    and methods it calls, transitively (nested functions and lambdas it calls included).
    Empty when the class defines no ``forward``."""
    forward = info.methods.get("forward")
    if forward is None:
        return set()
    return sem.graph.reach([forward])


def runs_in(model: "SemanticModel", node: cst.CSTNode, functions: set[cst.CSTNode]) -> bool:
    """Whether ``node``'s code belongs to one of ``functions`` (comprehensions count as
    the code around them)."""
    return enclosing_function(model, model.scope_of(node)) in functions


def class_key(info: "ClassInfo") -> str:
    """The class's name in the project index (``Outer.Inner``, ``make.Net``)."""
    return index_name(info.scope)


def pending(ctx: "FileContext", info: "ClassInfo", node: cst.CSTNode, message: str) -> list:
    """A finding at ``node`` that holds if ``info`` is an ``nn.Module``: JSON for the facts."""
    return [class_key(info), Span.of_range(ctx.position(node)).to_json(), message]


def settle(rule: type["Rule"], project: "Project") -> Iterator[Finding]:
    """The pending findings (``facts[rule.code]["pending"]``) of every file whose class the
    project index knows to be an ``nn.Module``."""
    for record in project.records:
        facts = record.facts.get(rule.code)
        if not facts:
            continue
        for qual, span, message in facts.get("pending", ()):
            name = f"{record.module_name}.{qual}" if record.module_name else qual
            if project.is_nn_module(name):
                yield Finding.at(rule, record.path, Span.from_json(span), message, extra={"class": qual})
