"""Whether a file is a program or a fragment of one.

A slide, a tutorial's listing in pieces or an exercise's gap holds code that uses names
written in another piece (``outputs = net(images)`` with ``net``, ``optimizer`` and even
``torch`` defined nowhere in the file): it cannot run as written, so whatever a rule judges
of the whole program (is torch seeded before the model is built?) cannot be judged from it.

* ``bound_nowhere(sem, name)``: nothing in the file binds the plain name ``name`` (no
  assignment, import, parameter, ``def``/``class``, loop or ``with`` target in any scope, no
  ``global`` naming it, no star import that may bring it, no builtin or module global of that
  name). Reading it raises ``NameError`` as the file stands.
* ``unbound_reads(sem)``: every plain name the file reads that is bound nowhere, with its first
  read in source order; empty where the file may bind names no binding shows (``exec(...)``,
  ``globals()``, ``locals()``: a ``globals().update(config)``).
* ``is_fragment(sem)``: the file is a piece of a listing, not a program: it reads a name bound
  nowhere, imports nothing at all (even the ``torch`` it reads comes from code around it) and
  has no ``if __name__ == "__main__":`` guard. A name bound nowhere alone is no proof: abridged
  scripts, notebooks that ``%run`` a helper or lost a cell, and exercises with a gap to fill
  import what they use and are programs with a few unknown values.

A notebook is one program (its cells joined), so a name bound in an earlier cell is bound; a
notebook or script with ``from x import *`` may get any name from there and is never a
fragment by this test.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.semantic.entry import is_main_guard
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.semantic import Analyses

# Names every module, script or notebook has without binding them.
_ALWAYS_BOUND = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__", "__path__",
    "__annotations__", "__cached__", "__debug__",
    # IPython's namespace in a notebook
    "display", "get_ipython", "In", "Out", "_", "__", "___", "exit", "quit",
}
# Calls that bind names no binding of the file shows.
_DYNAMIC_BINDERS = frozenset({"exec", "globals", "locals", "execfile"})
# Parents under which a Name is no read: a binding, an attribute's name, a keyword.
_NOT_READS = (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AssignTarget, cst.ImportFrom,
              cst.Import, cst.Global, cst.Nonlocal, cst.AsName, cst.Annotation)


def bound_nowhere(sem: "Analyses", name: str) -> bool:
    """``name`` (a plain name, not dotted) is bound by nothing in the file (module docstring):
    the file is a fragment of code written elsewhere."""
    if "." in name or not name.isidentifier() or sem.ctx.star_imports or name in _ALWAYS_BOUND:
        return False
    return not any(name in scope.bindings or name in scope.globals for scope in sem.model.scopes.values())


def unbound_reads(sem: "Analyses") -> dict[str, cst.Name]:
    """Each plain name the file reads that is bound nowhere (``bound_nowhere``), with its
    first read. Memoised on the semantic model."""
    memo = sem.model.memo("unbound_reads")
    if "" not in memo:
        memo[""] = _unbound_reads(sem)
    return memo[""]


def is_fragment(sem: "Analyses") -> bool:
    """The file is a piece of a listing, not a program (module docstring): it reads a name
    nothing in it binds (``unbound_reads``), imports nothing (so every object it uses, ``torch``
    itself included, comes from code outside it) and has no main guard (nothing in it says it is
    run as a script). An abridged script that imports what it uses, or declares itself runnable,
    is judged as the program it stands for. Memoised on the semantic model."""
    memo = sem.model.memo("unbound_reads")
    if "fragment" not in memo:
        memo["fragment"] = not _imports_anything(sem) \
            and not any(is_main_guard(stmt) for stmt in sem.ctx.module.body) and bool(unbound_reads(sem))
    return memo["fragment"]


def _imports_anything(sem: "Analyses") -> bool:
    return bool(sem.ctx.star_imports) or any(
        b.kind == "import" for scope in sem.model.scopes.values() for bindings in scope.bindings.values()
        for b in bindings)


def _unbound_reads(sem: "Analyses") -> dict[str, cst.Name]:
    ctx = sem.ctx
    if ctx.star_imports:
        return {}
    found: dict[str, cst.Name] = {}
    for node in iter_nodes(ctx.module):
        if not isinstance(node, cst.Name):
            continue
        name = node.value
        if name in _DYNAMIC_BINDERS:
            return {}  # exec(...), globals().update(...): names bound where no binding shows
        if name in found or name in _ALWAYS_BOUND:
            continue
        up = ctx.parent(node)
        if isinstance(up, cst.Attribute) and up.attr is node or isinstance(up, cst.Arg) and up.keyword is node \
                or isinstance(up, _NOT_READS) or isinstance(up, (cst.For, cst.CompFor)) and up.target is node \
                or _in_annotation_or_import(ctx, node):
            continue
        if bound_nowhere(sem, name):
            found[name] = node
    return found


def _in_annotation_or_import(ctx, node: cst.CSTNode) -> bool:
    """Inside an annotation (never evaluated with ``from __future__ import annotations``,
    and often a name only a type checker imports) or an import statement."""
    for up in ctx.ancestors(node):
        if isinstance(up, (cst.Annotation, cst.Import, cst.ImportFrom)):
            return True
        if isinstance(up, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False
