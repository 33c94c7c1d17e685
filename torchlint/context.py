"""Per-file analysis state shared by every rule, filled in one walk of the tree.

LibCST's ``QualifiedNameProvider`` and ``ScopeProvider`` are exact but cost several times
the parse itself. Rules here need much less: what an imported name stands for
(``from torch import optim as o`` makes ``o.SGD`` mean ``torch.optim.SGD``), each node's
parent, and the enclosing loop, ``with``, function and class. ``FileContext`` records those
while the ``Dispatcher`` walks the tree once for all rules.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import libcst as cst
from libcst.metadata import CodeRange

from torchlint.errors import RuleError, describe
from torchlint.finding import Finding, Span, one_line
from torchlint.imports import ImportTable
from torchlint.positions import StatementPositions
from torchlint.source import cpython_tree
from torchlint.statements import dotted_name
from torchlint.tree import chain_head, children_function, nesting_depth

if TYPE_CHECKING:
    from torchlint.fixes import Fix
    from torchlint.rule import Rule
    from torchlint.semantic import Analyses

LOOP_TYPES = (cst.For, cst.While)
FUNCTION_TYPES = (cst.FunctionDef, cst.Lambda)
SCOPE_TYPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)


_UNSET = object()


class FileContext:
    def __init__(self, path: str, module: cst.Module, text: str, imports: ImportTable):
        self.path = path
        self.module = module
        self.text = text
        # Dotted name of this file derived from its path ("pkg/sub/mod.py" -> "pkg.sub.mod").
        self.module_name = imports.module_name
        self.is_package = imports.is_package
        self.import_table = imports
        # local name -> qualified name, for every import in the file (any scope).
        self.imports: dict[str, str] = imports.names
        self.star_imports: list[str] = imports.star
        self.facts: dict[str, Any] = {}
        self.errors: list[RuleError] = []
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        # ``parent(node)``: the node the walk reached ``node`` from (None for the module and
        # nodes the walk skips). The dict's own ``get``: asked millions of times per corpus.
        self.parent: Callable[[cst.CSTNode], cst.CSTNode | None] = self._parents.get
        self._positions: Any = None
        # CPython's tree of ``text`` (``cpython_tree``): the engine's, when it built one.
        self.ast_tree: Any = None
        self._ast_tried = False
        self._reports: list[tuple["Rule", cst.CSTNode, str, dict | None, "Fix | None"]] = []
        # Name answers, kept until an import the walk meets changes what names mean
        # (``add_import``), and for good once it has met them all (``names_complete``).
        self._qualified: dict[cst.CSTNode | None, str | None] = {}
        self._imported: dict[cst.CSTNode | None, bool] = {}

    def release(self) -> None:
        """Forget the file's trees and analyses once its results are out. They hold reference
        cycles (rules and analyses point back at this context, scopes at their parents), so
        without this only the cycle collector frees a file's millions of nodes, traversing them
        all first (``speedups.process.collector_paused``); with it, reference counting frees them at once."""
        semantic = self.__dict__.get("_semantic")
        if semantic is not None:
            semantic.release()
        self.__dict__.clear()

    # -- names -------------------------------------------------------------------------
    def resolve_relative(self, level: int, module: str) -> str:
        return self.import_table.resolve_relative(level, module)

    def add_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if self.import_table.add_cst(node):  # an import inside a function: answers change from here
            self._qualified, self._imported = {}, {}

    def qualified_name(self, node: cst.CSTNode | None) -> str | None:
        """What a Name/Attribute chain refers to, with import aliases expanded.

        ``o.SGD`` -> ``torch.optim.SGD`` after ``from torch import optim as o``; names that
        are not imported come back as written (``self.optimizer``, ``model.eval``).
        Memoised until an import changes what names mean (``add_import``).
        """
        memo = self._qualified
        found = memo.get(node, _UNSET)
        if found is not _UNSET:
            return found
        dotted = dotted_name(node)
        if dotted is None:
            found = None
        else:
            head, dot, rest = dotted.partition(".")
            target = self.imports.get(head)
            found = dotted if target is None else f"{target}{dot}{rest}"
        memo[node] = found
        return found

    def is_imported(self, node: cst.CSTNode | None) -> bool:
        memo = self._imported
        found = memo.get(node)
        if found is not None:
            return found
        head = chain_head(node)  # without building the dotted string
        found = type(head) is cst.Name and head.value in self.imports
        memo[node] = found
        return found

    def names_complete(self) -> None:
        """For the engine, after its walk: every import of the file is in ``imports`` (the
        walk adds those inside functions), so name answers hold from here on and are kept."""
        self._qualified, self._imported = {}, {}

    @property
    def semantic(self) -> "Analyses":
        """The file's shared analyses (``torchlint.semantic``), each built on first use."""
        found = self.__dict__.get("_semantic")
        if found is None:
            from torchlint.semantic import Analyses

            found = self.__dict__["_semantic"] = Analyses(self)
        return found

    def semantic_started(self) -> bool:
        """Whether any rule asked for ``semantic`` on this file (asking builds nothing yet)."""
        return self.__dict__.get("_semantic") is not None

    # -- tree structure ----------------------------------------------------------------
    def walked_nodes(self) -> Iterable[cst.CSTNode]:
        """Every node the engine's walk reached below the module (trivia skipped), in no
        particular order: far cheaper than a walk of the tree when order does not matter."""
        return self._parents.keys()

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node_ = self._parents.get(node)
        while node_ is not None:
            yield node_
            node_ = self._parents.get(node_)

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """``container`` is an ancestor of ``node``."""
        return any(anc is container for anc in self.ancestors(node))

    def enclosing(self, node: cst.CSTNode, types: type | tuple[type, ...], stop_at_scope: bool = False) -> cst.CSTNode | None:
        """The nearest ancestor of ``types``; with ``stop_at_scope`` none beyond the enclosing
        function/class/lambda."""
        for anc in self.ancestors(node):
            if isinstance(anc, types):
                return anc
            if stop_at_scope and isinstance(anc, SCOPE_TYPES):
                return None
        return None

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return anc
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class a node's method belongs to (the class directly containing the
        enclosing function), or the class whose body holds the node."""
        for anc in self.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                return anc
        return None

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """Loops around ``node`` inside its own function (innermost first)."""
        loops = []
        for anc in self.ancestors(node):
            if isinstance(anc, LOOP_TYPES):
                loops.append(anc)
            elif isinstance(anc, SCOPE_TYPES):
                break
        return loops

    # -- positions and reports ---------------------------------------------------------
    def position(self, node: cst.CSTNode) -> CodeRange:
        """Source range of ``node`` (computed once per file, and only when needed)."""
        if self._positions is None:
            self._positions = StatementPositions(self.module, self.text, lambda: self.cpython_tree, self.parent)
        return self._positions[node]

    @property
    def cpython_tree(self) -> Any:
        """CPython's ``ast`` tree of ``text``: cheap line numbers of statements (positions,
        ``semantic.entry``). The engine's when it built one (no rule needed LibCST's tree, or
        the syntax check needed it), else parsed on first use: only files with something to
        report ask. None where CPython cannot parse the text (syntax newer than the
        interpreter, read through LibCST)."""
        if self.ast_tree is None and not self._ast_tried:
            self._ast_tried = True
            self.ast_tree = cpython_tree(self.text)
        return self.ast_tree

    def line_of(self, node: cst.CSTNode) -> int:
        return self.position(node).start.line

    def report(self, rule: "Rule", node: cst.CSTNode, message: str, *, extra: dict | None = None,
               fix: "Fix | None" = None) -> None:
        """Record a finding at ``node`` (with ``fix``); the message is put on one line (a
        quoted multi-line expression is joined with single spaces). Nothing from a rule run
        only for its shared facts (``Rule.reports`` False)."""
        if rule.reports:
            self._reports.append((rule, node, one_line(message), extra, fix))

    def span(self, node: cst.CSTNode) -> Span:
        """Where ``node`` is, as findings and facts encode it."""
        return Span.of_range(self.position(node))

    def findings(self) -> list[Finding]:
        return [Finding.at(rule, self.path, self.span(node), message, extra=extra, fix=fix)
                for rule, node, message, extra, fix in self._reports]


_HOOKS: dict[type, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {}


def _hooks(kind: type) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """A rule class's ``visit_<Node>`` and ``leave_<Node>`` methods as (node name, attribute)
    pairs: looked up once per class and process (``dir`` of a rule class, per file and rule,
    was a measurable part of a run)."""
    found = _HOOKS.get(kind)
    if found is None:
        names = dir(kind)
        found = _HOOKS[kind] = (tuple((a[6:], a) for a in names if a.startswith("visit_")),
                                tuple((a[6:], a) for a in names if a.startswith("leave_")))
    return found


# How many frames a rule may spend per level of nesting of the tree. A ``RecursionError``
# in a tree shallower than the recursion limit allows at that rate is a rule recursing
# without end, not the file's depth.
FRAMES_PER_LEVEL = 50


class Dispatcher:
    """Walks the tree once, recording parents and calling every rule's ``visit_<Node>`` and
    ``leave_<Node>`` methods (LibCST naming; trivia nodes such as whitespace, commas and
    operators are not visited).

    A rule that raises is reported (``FileContext.errors``) and dropped for the rest of the
    file; the other rules go on. A ``RecursionError`` in a deeply nested file is the file's
    depth, not a rule bug: it propagates, and the engine reports the file as too deep to
    analyse. In a file shallow enough for every rule (``FRAMES_PER_LEVEL``), it is a rule
    recursing without end: reported and dropped like any other failure.
    """

    def __init__(self, ctx: FileContext, rules: list["Rule"], gathering: Iterable["Rule"] = ()):
        """``gathering``: those of ``rules`` run only to gather their ``demanded_facts``
        (``Rule.gathers_demanded``): walked with the others, finished only by ``gather``."""
        self.ctx = ctx
        self._by_name_visit: dict[str, list] = {}
        self._by_name_leave: dict[str, list] = {}
        self._rules = rules
        self._gathering = {id(rule) for rule in gathering}
        self._dead: set[int] = set()
        self._entries: dict[type, tuple] = {}
        for rule in rules:
            visits, leaves = _hooks(type(rule))
            for node_name, attr in visits:
                self._by_name_visit.setdefault(node_name, []).append((rule, getattr(rule, attr)))
            for node_name, attr in leaves:
                self._by_name_leave.setdefault(node_name, []).append((rule, getattr(rule, attr)))

    def _call(self, handlers: list, node: cst.CSTNode) -> None:
        dead = self._dead
        for rule, method in handlers:
            if dead and id(rule) in dead:
                continue
            try:
                method(node)
            except RecursionError as exc:
                self._recursed(rule, exc)
            except Exception as exc:  # noqa: BLE001 - a rule bug must not end the run
                self._fail(rule, exc)

    def _recursed(self, rule: "Rule", exc: RecursionError) -> None:
        """Re-raise where the file is too deep for the rule (the engine reports the file);
        else the rule recursed without end: a rule failure. (A rule only gathering never ends
        the file's analysis: it fails alone.)"""
        if id(rule) not in self._gathering and nesting_depth(self.ctx.module) * FRAMES_PER_LEVEL >= sys.getrecursionlimit():
            raise exc
        self._fail(rule, exc)

    def _fail(self, rule: "Rule", exc: BaseException) -> None:
        """Drop the rule for the rest of the file, its findings and facts with it; report the
        failure, but for a rule only gathering (an analysis on demand reports it, if asked)."""
        self._dead.add(id(rule))
        if id(rule) in self._gathering:
            self.ctx.facts.pop(rule.code, None)
            return
        message, trace = describe(exc)
        self.ctx.errors.append(RuleError(rule.code, self.ctx.path, message, trace))
        self.ctx._reports = [r for r in self.ctx._reports if r[0] is not rule]
        self.ctx.facts.pop(rule.code, None)

    def demanded_facts(self, rule: "Rule") -> Any:
        """``rule.demanded_facts()`` after the walk (None where the rule failed on the file):
        a failure there is reported and drops the rule, as one in ``finish`` does."""
        return self._after_walk(rule, rule.demanded_facts)

    def _after_walk(self, rule: "Rule", hook: Callable[[], Any]) -> Any:
        """``hook()`` of a rule still alive after the walk; a failure is reported and drops the
        rule (None then). The walk's own handlers stay inline in ``_call``: they run per node."""
        if id(rule) in self._dead:
            return None
        try:
            return hook()
        except RecursionError as exc:
            self._recursed(rule, exc)
        except Exception as exc:  # noqa: BLE001 - a rule bug must not end the run
            self._fail(rule, exc)
        return None

    def _entry(self, kind: type, model_kinds: frozenset, model_left: frozenset) -> tuple:
        """What the walk does at a node of ``kind``, looked up once per kind: (the rules'
        visit handlers, its children function or None for a kind with no children, what is
        done on leaving it: (the rules' leave handlers, whether the semantic model's
        ``leave`` acts on the kind), or None for nothing; whether the model's ``visit`` acts
        on the kind, whether it is an import, whether it is a statement: only those can be
        the module-level statements the model follows)."""
        leaves = self._by_name_leave.get(kind.__name__, [])
        entry = self._entries[kind] = (
            self._by_name_visit.get(kind.__name__, []),
            children_function(kind),
            (leaves, kind in model_left) if leaves or kind in model_left else None,
            kind in model_kinds,
            kind is cst.Import or kind is cst.ImportFrom,
            issubclass(kind, cst.BaseStatement),
        )
        return entry

    def run(self) -> None:
        ctx = self.ctx
        parents = ctx._parents
        # The semantic model, filled by this walk when a rule declares it needs it.
        model = ctx.semantic.start_model() if any(r.uses_semantic_model for r in self._rules) else None
        model_visit = model.visit if model is not None else None
        model_leave = model.leave if model is not None else None
        # The model numbers every node but acts on a few: it is called only for those.
        order, kinds, left, openers, tops = model.walk_interest() if model is not None \
            else ({}, frozenset(), frozenset(), {}, {})
        n = 0
        entries, new_entry = self._entries, self._entry
        call = self._call
        # A node to visit, or (node, what leaving it does) to leave once its children are
        # done: pushed only for a kind whose leaving does something (a few: no rule has a
        # ``leave`` handler now, the model leaves scopes and branches).
        stack: list = [ctx.module]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            if type(node) is tuple:
                node, leaving = node
            else:
                kind = type(node)
                entry = entries.get(kind) or new_entry(kind, kinds, left)
                visits, of_kind, leaving, modelled, is_import, statement = entry
                if model_visit is not None:
                    n += 1
                    order[node] = n
                    if modelled or openers and node in openers or statement and node in tops:
                        model_visit(node, n)
                if is_import:
                    ctx.add_import(node)  # imports inside functions; idempotent for the rest
                if visits:
                    call(visits, node)
                kids = of_kind(node) if of_kind is not None else None
                if kids:
                    if leaving is not None:
                        push((node, leaving))
                    for child in reversed(kids):
                        parents[child] = node
                        push(child)
                    continue
                # a leaf (half of all nodes): left at once, without a trip through the stack
                if leaving is None:
                    continue
            leaves, model_leaves = leaving
            if model_leaves and model_leave is not None:
                model_leave(node)
            if leaves:
                call(leaves, node)
        ctx.names_complete()
        if model is not None:
            ctx.semantic.finish_model()
        gathering = self._gathering
        for rule in self._rules:
            if id(rule) not in gathering:
                self._after_walk(rule, rule.finish)

    def gather(self) -> dict[str, Any]:
        """After ``run``: the ``demanded_facts`` of the rules only gathering (rule code ->
        facts; none of a rule that failed), each finished as on an analysis on demand: after
        every other rule (whose answers they cannot change), from the answers the semantic
        model's memos keep (the same whoever asked first: ``activations.Outputs`` keeps for
        good no answer a cycle guard cut short). Their facts for the ordinary pass are dropped."""
        rules = [rule for rule in self._rules if id(rule) in self._gathering]
        if not rules:
            return {}
        out = {}
        for rule in rules:
            self._after_walk(rule, rule.finish)
            facts = self.demanded_facts(rule)
            if id(rule) not in self._dead:
                out[rule.code] = facts
            self.ctx.facts.pop(rule.code, None)
        return out
