"""What the target's source alone shows is wrong with a trace, said before the trace child
starts (and imports torch, a second or more): a name the file never binds, and constructor
arguments the target requires that the command line and the configuration do not give.

Read with LibCST, never imported. Only the target's own definition is read: a class whose
``__init__`` is inherited, a decorated one, a name bound by an import, an assignment or a
star import is left to the child, which reports what goes wrong there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from torchlint.errors import UsageError
from torchlint.trace.locate import load_module


def check_target(display: str, path: Path | None, attr: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Raise :class:`UsageError` when the source of ``path`` shows the trace of ``attr`` cannot
    start: the file binds no such name, or its definition requires arguments not given."""
    loaded = load_module(path) if path is not None else None
    if loaded is None:
        return
    module, positions = loaded
    first, *rest = attr.split(".")
    if not _binds(module.body, first):
        defined = sorted(s.name.value for s in module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef)))
        hint = f" (it defines: {', '.join(defined[:12])})" if defined else ""
        raise UsageError(f"bad trace target {display!r}: {path.name} defines no {first!r}{hint}")
    definition = _definition(module.body, attr)
    if definition is None:
        return
    missing = _missing(definition, len(args), set(kwargs))
    if missing:  # worded as the child words it (trace/child/load.py) when it finds the same
        line = positions[definition].start.line
        raise UsageError(f"{display} needs constructor arguments ({', '.join(missing)}; {path.name}, line "
                         f"{line}); pass them with --args/--kwargs (JSON) or a [tool.torchlint.trace.models] entry")


def _binds(statements: Any, name: str) -> bool:
    """Whether the module's top level may bind ``name`` (any definition, assignment, import,
    star import, or a module ``__getattr__``; a name bound in a branch counts)."""
    found = False

    class Binder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            nonlocal found
            found = found or node.name.value in (name, "__getattr__")
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            nonlocal found
            found = found or node.name.value == name
            return False

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value == name  # an assignment, a for target, a global, ...

        def visit_ImportStar(self, node: cst.ImportStar) -> None:
            nonlocal found
            found = True

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            nonlocal found
            bound = node.asname.name if node.asname else node.name
            text = cst.Module([]).code_for_node(bound) if not isinstance(bound, cst.Name) else bound.value
            found = found or text.split(".")[0] == name

    for statement in statements:
        statement.visit(Binder())
    return found


def _definition(statements: Any, attr: str) -> cst.ClassDef | cst.FunctionDef | None:
    """The one plain definition of ``attr`` (``Outer.Inner`` for a nested class); None when
    it is decorated, defined more than once or not a plain class/def at that level."""
    node: Any = None
    for part in attr.split("."):
        body = statements if node is None else (node.body.body if isinstance(node.body, cst.IndentedBlock) else [])
        matches = [s for s in body if isinstance(s, (cst.ClassDef, cst.FunctionDef)) and s.name.value == part]
        if len(matches) != 1 or matches[0].decorators:
            return None
        node = matches[0]
    return node


def _missing(definition: cst.ClassDef | cst.FunctionDef, positional: int, keywords: set[str]) -> list[str]:
    """The required parameters of the class's own ``__init__`` (or the factory) that
    ``positional`` arguments and ``keywords`` leave unset; [] when the class has no
    ``__init__`` of its own, or a dataclass-like body decides it."""
    function = definition
    skip = 0
    if isinstance(definition, cst.ClassDef):
        if definition.decorators or not isinstance(definition.body, cst.IndentedBlock):
            return []
        inits = [s for s in definition.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
        if len(inits) != 1 or inits[0].decorators:
            return []
        function, skip = inits[0], 1
    params = function.params
    ordered = list(params.posonly_params) + list(params.params)
    if len(ordered) < skip:
        return []
    ordered = ordered[skip:]
    missing = [p.name.value for i, p in enumerate(ordered)
               if p.default is None and i >= positional and p.name.value not in keywords]
    missing += [p.name.value for p in params.kwonly_params if p.default is None and p.name.value not in keywords]
    return missing


def optimizer_impl(path: Path | None, class_name: str) -> tuple[str, int] | None:
    """How the file's own code asks ``torch.optim.<class_name>`` to step: ("fused", line) for
    ``fused=True``, ("foreach", line) for ``foreach=True``, ("for-loop", line) for
    ``foreach=False``, with the line of the call; None when no construction of that class
    gives one as a literal, or two of them disagree (the plan then runs PyTorch's choice)."""
    loaded = load_module(path) if path is not None else None
    if loaded is None:
        return None
    module, positions = loaded
    found: list[tuple[str, int]] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            if name != class_name:
                return
            literal = {a.keyword.value: a.value.value for a in node.args
                       if a.keyword is not None and isinstance(a.value, cst.Name) and a.value.value in ("True", "False")}
            impl = ("fused" if literal.get("fused") == "True" else "foreach" if literal.get("foreach") == "True"
                    else "for-loop" if literal.get("foreach") == "False" else None)
            if impl is not None:
                found.append((impl, positions[node].start.line))

    module.visit(Calls())
    if not found or len({impl for impl, _ in found}) != 1:
        return None
    return found[0]
