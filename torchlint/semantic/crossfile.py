"""What an imported project function does, followed across files: a cross-file call graph
over per-file *summaries* that a rule stores in its facts, for one property whose values
are sets (the generators a function seeds, ...).

A file's summary (JSON, in ``record.facts[code]``)::

    {"defined": [names of module-level functions and classes],
     "helpers": {"fn" or "Class.method": [values, imported callees, same-file callees]},
     "classes": {"Class": ["Class.method", "Base.method", ...]},   # own and same-file inherited
     "on_import": [values of module-level code]}                     # optional

A defined function absent from ``helpers`` has no values and calls nothing imported.
``ProjectCalls`` answers from the summaries of every linted file: it resolves an imported
name to the project file defining it (``Project.resolve_symbol``, re-exports followed), and
unions the values of everything that function runs, transitively, in that file and in the
files it imports from. Names no linted file defines are answered by ``known`` (a library
table) or ``fallback`` (a guess from the name): the property supplies both.
"""

from __future__ import annotations

from typing import Callable

_MAX_DEPTH = 12


class ProjectCalls:
    """One property's values of imported project functions (see the module docstring).
    ``seen`` spans the calls on one instance: a function already followed adds nothing."""

    def __init__(self, project, code: str, *, known: Callable[[str], set | None],
                 fallback: Callable[[str], set], everything: frozenset | set = frozenset()) -> None:
        self.project, self.code = project, code
        self.known, self.fallback, self.everything = known, fallback, set(everything)
        self.seen: set[tuple[str, str]] = set()

    def values(self, qualified: str, importer, depth: int = 0) -> set:
        """What running the function (or method, ``mod.Class.m``) ``qualified``, as
        ``importer`` names it, amounts to."""
        known = self.known(qualified)
        if known is not None:
            return known
        fallback = self.fallback(qualified)
        if depth > _MAX_DEPTH:
            return fallback
        found = self.project.resolve_symbol(qualified, importer)
        if found is None:
            return fallback
        record, name = found
        head, dot, rest = name.partition(".")
        if head in record.imports:  # re-exported from a module outside the project
            return self.values(record.imports[head] + dot + rest, record, depth + 1)
        facts = record.facts.get(self.code)
        if not record.parsed or facts is None or "defined" not in facts:
            return fallback
        if head not in facts["defined"]:
            return fallback  # an alias, variable or something else torchlint cannot see
        if rest:
            # A method (or attribute) of a class defined there: its own method, one it
            # inherits from a same-file base, or something torchlint cannot see.
            members = facts["classes"].get(head, ())
            suffix = "." + name.rsplit(".", 1)[-1]
            keys = [k for k in members if k == name or k.endswith(suffix)]
            if not keys:
                return fallback
            out: set = set()
            for k in keys:
                out |= self._function(record, k, depth)
            return out
        return self._function(record, name, depth)

    def on_import(self, qualified: str, importer) -> set:
        """What importing ``qualified`` (a module, or a name from one) runs at import time."""
        if self.known(qualified) is not None:
            return set()
        found = self.project.resolve_module(qualified, importer)
        if found is None:
            symbol = self.project.resolve_symbol(qualified, importer)
            found = symbol[0] if symbol is not None else None
        if found is None or found is importer:
            return set()
        facts = found.facts.get(self.code) or {}
        return set(facts.get("on_import", ()))

    def _function(self, record, key: str, depth: int) -> set:
        """The values of ``key`` and of every same-file function it calls, with what their
        imported callees amount to."""
        out: set = set()
        stack = [key]
        helpers = record.facts[self.code]["helpers"]
        while stack:
            k = stack.pop()
            if (record.path, k) in self.seen:
                continue
            self.seen.add((record.path, k))
            info = helpers.get(k)
            if info is None:
                continue
            values, imported, local = info
            out |= set(values)
            for q in imported:
                if self.everything and len(out) == len(self.everything):
                    return out
                out |= self.values(q, record, depth + 1)
            stack.extend(local)
        return out
