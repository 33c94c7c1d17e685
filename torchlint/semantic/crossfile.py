"""What an imported project function does, followed across files: a cross-file call graph
over per-file *summaries* that a rule stores in its facts, for one property whose values
are sets (the generators a function seeds, ...).

A file's summary (JSON, in ``record.facts[code]``)::

    {"defined": [names of module-level functions and classes],
     "helpers": {"fn" or "Class.method": [values, imported callees, same-file callees,
                                          guarded (optional)]},
     "classes": {"Class": ["Class.method", "Base.method", ...]},   # own and same-file inherited
     "on_import": [values of module-level code]}                     # optional

A defined function absent from ``helpers`` has no values and calls nothing imported. The
optional ``guarded`` part is code that runs only for calls passing one of some parameters
(their defaults rule it out: ``branches.default_guards``): ``[[the parameters and their
places (``parameter_positions``), values, imported callees, same-file callees], ...]``. It counts for
a call whose shape (``call_shape``, stored by the importing file) may pass one of them, and
for every call whose shape is unknown.
``ProjectCalls`` answers from the summaries of every linted file: it resolves an imported
name to the project file defining it (``Project.resolve_symbol``, re-exports followed), and
unions the values of everything that function runs, transitively, in that file and in the
files it imports from. Names no linted file defines are answered by ``known`` (a library
table) or ``fallback`` (a guess from the name): the property supplies both.
"""

from __future__ import annotations

from typing import Callable, Iterator

import libcst as cst

from torchlint.semantic.gradmode import fits

_MAX_DEPTH = 12
# Methods Python or torch call without naming them.
_IMPLICIT = frozenset({"forward", "__call__", "__init__", "__enter__", "__exit__", "__iter__", "__next__",
                       "__getitem__", "__len__", "__del__"})


class ProjectCalls:
    """One property's values of imported project functions (see the module docstring).
    ``seen`` spans the calls on one instance: a function already followed adds nothing."""

    def __init__(self, project, code: str, *, known: Callable[[str], set | None],
                 fallback: Callable[[str], set], everything: frozenset | set = frozenset()) -> None:
        self.project, self.code = project, code
        self.known, self.fallback, self.everything = known, fallback, set(everything)
        self.seen: set[tuple[str, str, str | None]] = set()  # (file, function, guarded part)

    def values(self, qualified: str, importer, depth: int = 0, shape: list | None = None) -> set:
        """What running the function (or method, ``mod.Class.m``) ``qualified``, as
        ``importer`` names it, amounts to; called as ``shape`` says (``call_shape``) where
        that is known: the code its parameters' defaults rule out counts only where the call
        may pass one of them."""
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
                out |= self._function(record, k, depth, shape)
            return out
        return self._function(record, name, depth, shape)

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

    def _function(self, record, key: str, depth: int, shape: list | None = None) -> set:
        """The values of ``key`` and of every same-file function it calls, with what their
        imported callees amount to; ``key``'s guarded parts only where ``shape`` may pass
        their parameters (the functions it calls are called with arguments nobody stored)."""
        out: set = set()
        stack = [key]
        helpers = record.facts[self.code]["helpers"]
        while stack:
            k = stack.pop()
            info = helpers.get(k)
            parts = [] if info is None else [(None, info[:3])] + [
                (str(g[0]), g[1:]) for g in (info[3] if len(info) > 3 else ())
                if k != key or may_pass(shape, g[0])]
            for guard, (values, imported, local) in parts:
                if (record.path, k, guard) in self.seen:
                    continue
                self.seen.add((record.path, k, guard))
                out |= set(values)
                for q in imported:
                    if self.everything and len(out) == len(self.everything):
                        return out
                    out |= self.values(q, record, depth + 1)
                stack.extend(local)
        return out


def call_shape(call: cst.Call) -> list:
    """How ``call`` passes its arguments, for a function another file defines: [the keywords
    it names, how many positional arguments, whether it unpacks ``*args``/``**kwargs``]."""
    return [sorted(a.keyword.value for a in call.args if a.keyword is not None),
            sum(1 for a in call.args if a.keyword is None and not a.star), any(a.star for a in call.args)]


def merge_shapes(a: list | None, b: list) -> list:
    """One shape for several calls of a function: what any of them may pass."""
    if a is None:
        return b
    return [sorted(set(a[0]) | set(b[0])), max(a[1], b[1]), a[2] or b[2]]


def parameter_positions(function: cst.FunctionDef, names: tuple[str, ...], self_name: str | None) -> list:
    """[[name, its place among the positional parameters a caller fills; -1 for a keyword-only
    one], ...] for ``names`` of ``function``; a method's first parameter (``self_name``, as the
    semantic model names it: ``SemanticModel.self_name``) left out."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if self_name is not None:
        params = params[1:]
    return [[name, params.index(name) if name in params else -1] for name in names]


def may_pass(shape: list | None, positions: list) -> bool:
    """A call of ``shape`` (``call_shape``; None: unknown) may pass one of the parameters at
    ``positions`` (``parameter_positions``)."""
    if shape is None:
        return True
    keywords, positional, star = shape
    return star or any(name in keywords or 0 <= place < positional for name, place in positions)


class CalledUnderChoice:
    """Which project functions run only under a grad-mode choice, across files, from the
    ``choice_sites`` (``semantic.gradmode``) of the files that may call them.

    A function is *protected* when every call of it (or hand-over) the project shows either
    makes a grad-mode choice or sits in a function that is itself protected, and at least one
    of them is such a way in (a call from within its own recursion is none). A method is
    matched by the receiver's class where the caller's file knows it, else by name:
    ``model.recognize(x)`` on a model of unknown class may run any project method called
    ``recognize`` whose signature its arguments fit, so every such call counts (more calls
    can only make a function less protected). ``forward``, ``__call__`` and other methods run
    without being named are never protected. A file importing the function's module without
    such facts is a use nobody can see: its functions are not protected.

    Call sites cost much to gather, so no file's ordinary facts hold them: each file's
    facts under ``code`` name what its calls could call (``called``: ``gradmode.called_names``)
    and the imported names they could run (``imported``: ``gradmode.imported_callees``), and
    the sites and method signatures of a file are asked for (``Project.demand``) the first
    time a function it defines, or one whose name it calls, is decided; for another file's
    module-level function, only where one of its imported names resolves to it. A file that
    cannot be analysed again then is a use nobody can see too."""

    def __init__(self, project, code: str) -> None:
        self.project, self.code = project, code
        # callee key -> (file, caller, chosen, call shape where the signature must fit)
        self._calls: dict[tuple[str, str], list[tuple[str, str | None, bool, str | None]]] = {}
        self._unknown: set[str] = set()
        self._memo: dict[tuple[str, str], bool] = {}
        self._related: dict[str, list[str]] = {}
        self._signatures: dict[tuple[str, str], str] = {}
        self._callers: dict[str, list] = {}  # a name -> the records whose calls may call it
        self._read: set[str] = set()  # paths whose sites are in ``_calls``
        # a name -> (record, local name, qualified) of each import renaming it (``as``)
        self._renamed: dict[str, list[tuple[object, str, str]]] = {}
        for record in project.records:
            for local, qualified in record.imports.items():
                if local != (name := qualified.rpartition(".")[2]):
                    self._renamed.setdefault(name, []).append((record, local, qualified))
            facts = record.facts.get(code)
            if facts is None:
                self._unseen_uses(record)
                continue
            for name in facts.get("called", ()):
                self._callers.setdefault(name, []).append(record)

    def _names(self, key: tuple[str, str]) -> set[str]:
        """The names a call of ``key`` is written with elsewhere (``called`` holds the last
        part of each imported name): its own, and for a module-level function those it is
        re-exported as (``from .infer import predict as run_predict`` in a package's
        ``__init__``), renamings of those included."""
        names = {key[1].rsplit(".", 1)[-1]}
        if "." in key[1]:
            return names
        todo = list(names)
        while todo:
            for record, local, qualified in self._renamed.get(todo.pop(), ()):
                if local not in names and key in self._callee_keys("@" + qualified, record):
                    names.add(local)
                    todo.append(local)
        return names

    def _read_calls(self, key: tuple[str, str]) -> None:
        """Every site that may call ``key`` in ``_calls``: those of its own file and of the
        files whose calls name it (``called``), each file's read once."""
        own = self.project.record(key[0])
        names = self._names(key)
        for record in [*([own] if own is not None else []), *(r for n in names for r in self._callers.get(n, ()))]:
            if record.path in self._read or record is not own and not self._may_call(record, key, names):
                continue
            self._read.add(record.path)
            facts = self.project.demand(self.code, record.path)
            if not isinstance(facts, dict):  # read and analysed before, but not now
                self._unseen_uses(record)
                for name in (record.facts.get(self.code) or {}).get("called", ()):
                    self._calls.setdefault((".", name), []).append((record.path, None, False, None))
                continue
            for name, signature in facts.get("signatures", {}).items():
                self._signatures[(record.path, name)] = signature
            for callee, caller, chosen, shape in facts.get("sites", ()):
                bound = callee[0] in ".^"  # on an instance: only a method its arguments fit
                for callee_key in self._callee_keys(callee, record):
                    self._calls.setdefault(callee_key, []).append((record.path, caller, chosen, shape if bound else None))

    def _may_call(self, record, key: tuple[str, str], names: set[str]) -> bool:
        """Whether another file's sites may name ``key`` (written as one of ``names``): always
        for a method (called on an object of any class), for a module-level function only
        through an imported name (``@``) that resolves to it. Unknown (facts without
        ``imported``): yes."""
        imported = (record.facts.get(self.code) or {}).get("imported")
        if imported is None or "." in key[1]:
            return True
        return any(key in self._callee_keys("@" + q, record) for q in imported if q.rpartition(".")[2] in names)

    def protected(self, path: str, function: str) -> bool:
        """Whether ``function`` (``fn`` / ``Class.method`` of the file ``path``) only runs
        under a grad-mode choice in the linted project."""
        return self._search((path, function), set())[0] and path not in self._unknown

    def _search(self, key: tuple[str, str], open_: set) -> tuple[bool, bool]:
        """(protected, whether that answer assumed something about a function still being
        decided). A call from a function still being decided (recursion, ``translate``
        retrying itself) adds no way in: it is left out, but at least one call must be a
        way in that is protected."""
        if key in self._memo:
            return self._memo[key], False
        path, function = key
        if "." in function and function.rsplit(".", 1)[-1] in _IMPLICIT:
            return False, False  # ``module(x)`` runs ``forward``: callers nobody sees
        open_.add(key)
        entered = provisional = False
        result = True
        for where, caller, chosen in self._calls_of(key):
            if chosen:
                entered = True
                continue
            if caller is None:
                result = False
                break
            if (where, caller) in open_:
                provisional = True
                continue
            ok, assumed = self._search((where, caller), open_)
            provisional |= assumed
            if not ok:
                result = False
                break
            entered = True
        open_.discard(key)
        result = result and entered
        if not provisional:
            self._memo[key] = result
        return result, provisional

    def reached_from_forward(self, path: str, function: str) -> bool:
        """Whether some call of ``function`` (``fn`` / ``Class.method`` of the file ``path``)
        the project shows sits in a ``forward`` method, directly or through the functions
        calling it (at most ``_MAX_DEPTH`` calls up, unchosen calls only: a chosen one settles
        nothing here): what it computes is then part of a module's forward, whose caller
        decides whether that graph is wanted (``acquisition(X)`` differentiated with respect
        to ``X`` through ``model.posterior(X)``)."""
        todo, seen = [(path, function)], {(path, function)}
        for _ in range(_MAX_DEPTH):
            above = []
            for key in todo:
                for where, caller in self._unchosen_callers(key):
                    if caller.rsplit(".", 1)[-1] == "forward" and "." in caller:
                        return True
                    if (where, caller) not in seen:
                        seen.add((where, caller))
                        above.append((where, caller))
            if not above:
                return False
            todo = above
        return False

    def _unchosen_callers(self, key: tuple[str, str]) -> Iterator[tuple[str, str]]:
        """(file, caller) of each call of ``key`` that makes no grad-mode choice and sits in a function."""
        for where, caller, chosen in self._calls_of(key):
            if caller is not None and not chosen:
                yield where, caller

    def _calls_of(self, key: tuple[str, str]) -> Iterator[tuple[str, str | None, bool]]:
        """(file, caller, chosen) of each call the project shows of ``key``: its own, and for
        a method those by name on objects of unknown class whose arguments fit its signature
        (``line.translate(table)`` cannot run ``translate(self, x, args)``)."""
        self._read_calls(key)
        path, function = key
        calls = list(self._calls.get(key, ()))
        if "." in function:
            calls += self._calls.get((".", function.rsplit(".", 1)[-1]), ())
        signature = self._signatures.get(key)
        for where, caller, chosen, shape in calls:
            if fits(shape, signature):
                yield where, caller, chosen

    def _callee_keys(self, callee: str, record) -> list[tuple[str, str]]:
        kind, name = callee[0], callee[1:]
        if kind == "=":
            return [(record.path, name)]
        if kind == ".":
            return [(".", name)]
        if kind == "^":
            return self._method_keys(name, record)
        found = self.project.resolve_symbol(name, record)
        return [(found[0].path, found[1])] if found is not None else []

    def method_keys(self, name: str, record) -> list[tuple[str, str]]:
        """(file, ``Class.method``) of every project method an instance of the class may run
        when ``record`` calls ``pkg.mod.Cls.m`` on it (``_method_keys``)."""
        return self._method_keys(name, record)

    def _method_keys(self, name: str, record) -> list[tuple[str, str]]:
        """``pkg.mod.Cls.m`` called on an instance of ``Cls``: the method ``m`` of ``Cls``, of
        the classes it inherits from and of its subclasses (the instance may be one)."""
        owner, method = name.rsplit(".", 1)
        cls = self.project.resolve_class(owner, record) or owner
        related = self._related.get(cls)
        if related is None:
            related = self._related[cls] = [cls, *self.project.ancestors(cls), *self.project.subclasses(cls)]
        keys = []
        for q in related:
            found = self.project.resolve_symbol(f"{q}.{method}", record)
            if found is not None:
                keys.append((found[0].path, found[1]))
        return keys

    def _unseen_uses(self, record) -> None:
        """A file without facts (not analysed) importing project names: unknown uses."""
        for name in record.imports.values():
            hit = self.project.resolve_symbol(name, record)
            if hit is not None:
                self._calls.setdefault((hit[0].path, hit[1]), []).append((record.path, None, False, None))
            elif (module := self.project.resolve_module(name, record)) is not None:
                self._unknown.add(module.path)


def reached_by(project, evidence: set[str]) -> set[str]:
    """The linted files a fact found in the files ``evidence`` may concern: those of the same
    package (under the top of the ``__init__.py`` chain holding an evidence file; for a file in
    no package, its own directory) and those connected to them by imports, either way and
    transitively (``import_components``). Another package linted in the same run, importing
    nothing of them, is not reached."""
    paths = [r.path for r in project.records]
    packages = {r.path.rsplit("/", 1)[0] if "/" in r.path else "" for r in project.records
                if r.path.rsplit("/", 1)[-1] == "__init__.py"}
    reached: set[str] = set()
    for path in evidence:
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        top = directory
        while top in packages and "/" in top and top.rsplit("/", 1)[0] in packages:
            top = top.rsplit("/", 1)[0]
        if top in packages:
            reached |= {p for p in paths if p.startswith(top + "/") or top == ""}
        else:
            reached |= {p for p in paths if (p.rsplit("/", 1)[0] if "/" in p else "") == directory}
    components = import_components(project)
    linked = {components[p] for p in reached | set(evidence) if p in components}
    return reached | {p for p, c in components.items() if c in linked}


def import_components(project) -> dict[str, int]:
    """``{path: component}``: the linted files grouped by the imports between them (either way,
    transitively): two packages linted together that import nothing of each other fall in
    different components, so a fact found in one (an exemption's evidence) reaches only the
    files of its own."""
    parent: dict[str, str] = {r.path: r.path for r in project.records}

    def find(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    for record in project.records:
        for name in list(record.imports.values()) + list(record.star_imports):
            hit = project.resolve_symbol(name, record)
            target = hit[0] if hit is not None else project.resolve_module(name, record)
            if target is None and "." in name:
                target = project.resolve_module(name.rsplit(".", 1)[0], record)
            if target is not None and target.path in parent:
                parent[find(record.path)] = find(target.path)
    roots: dict[str, int] = {}
    return {path: roots.setdefault(find(path), len(roots)) for path in parent}
