"""The rule interface: one class per rule, Fixit-style, with embedded test cases.

A rule subclasses ``Rule`` and defines LibCST-style ``visit_<Node>`` / ``leave_<Node>``
methods. The engine walks each file's tree once and calls every enabled rule's methods
(see ``torchlint.context``); rules ask the shared ``FileContext`` for qualified names,
parents and enclosing scopes, and call ``self.report(node, message)``.

A rule that needs facts from other files (class hierarchies, seed helpers) stores
JSON-serialisable facts in ``self.ctx.facts[self.code]`` during the per-file pass and
implements ``check_project``, which sees only those per-file records, never the trees.
Facts the project pass needs only now and then (and that cost much to gather on every file)
come from ``demanded_facts`` instead, which the project pass asks of the files it needs
(``Project.demand``): the run layer analyses such a file again with that rule alone (or
with the rules of its ``demand_group``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

from torchlint.finding import Finding, Severity
from torchlint.ruleinfo import Option, RuleInfo, default_options, skips_tests
from torchlint.textscan import contains_any

__all__ = ["Invalid", "Option", "Rule", "RuleInfo", "Severity", "Valid", "all_rules", "rule_classes", "rule_index",
           "rules_by_code"]

if TYPE_CHECKING:
    import libcst as cst

    from torchlint.context import FileContext
    from torchlint.fixes import Fix
    from torchlint.project import Project


@dataclass(frozen=True)
class Valid:
    """Code the rule must not report. ``path`` lets a case pretend to live elsewhere."""

    code: str
    path: str = "example.py"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must report, with the whole of what it reports: ``lines`` (1-based)
    and ``messages`` (the exact text) of each finding, both in the order of the findings'
    positions (line, then column). A missing, extra or reworded finding fails the case.
    ``fixed``: what the fixes make of the code (``tests/test_rule_cases.py`` checks it)."""

    code: str
    lines: tuple[int, ...] = ()
    messages: tuple[str, ...] = ()
    path: str = "example.py"
    options: dict[str, Any] = field(default_factory=dict)
    # The whole file after the rule's fixes are applied (unsafe ones too, as with
    # ``--unsafe-fixes``), for a case whose findings carry a fix; None when none does.
    fixed: str | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    default_enabled: ClassVar[bool] = True
    summary: ClassVar[str]
    options: ClassVar[dict[str, Option]] = {}
    # True for rules whose findings come from the shape trace, not from reading the code.
    traced: ClassVar[bool] = False
    # Substrings one of which must occur in the source for the rule to possibly fire;
    # empty means "always run". Used to skip rules soundly.
    requires_text: ClassVar[tuple[str, ...]] = ()
    # True for rules that query ``ctx.semantic`` on most files they run on: the engine then
    # fills the semantic model during its one walk instead of a second walk on first use.
    uses_semantic_model: ClassVar[bool] = False
    # True for a rule that reports nothing in test files (``filekinds.is_test_file``) while
    # its ``skip-tests`` option (which it must declare) is on: the engine and the run layer
    # see to it (``skips``); the rule itself never checks.
    skips_test_files: ClassVar[bool] = False
    # For such a rule with a project pass: the keys of its facts that ``check_project`` reads
    # of a file for *other* files' findings (the callers a test file shows, the paths it
    # writes). On a file the rule skips, the engine runs it with ``reports`` False and keeps
    # only these keys: the rest feed findings the run layer drops there. Empty: not run there.
    shared_facts: ClassVar[tuple[str, ...]] = ()
    # The applicabilities (``fixes.SAFE``, ``fixes.UNSAFE``) of the fixes the rule attaches to
    # its findings (``report(..., fix=...)``); empty for a rule that fixes nothing. Shown by
    # ``torchlint rules``; the rule's page says why in ``## Fix safety``.
    fixable: ClassVar[tuple[str, ...]] = ()
    # Rules whose ``demanded_facts`` come from one shared analysis of a file (the same name):
    # where the project pass demands one's, the run layer analyses the file once for every
    # enabled rule of the group and keeps the others' for when they are asked (``run.demander``).
    demand_group: ClassVar[str | None] = None
    # True where ``demanded_facts`` cost little to compute on a file the rule does not run on
    # (its text pre-check or ``skips`` rule it out): the engine then runs the rule there
    # without reporting, on every file it parses with LibCST for other rules, and keeps
    # them in the record (``FileRecord.demanded``), so that the project pass reads them
    # instead of analysing the file again (``Project.demand``).
    gathers_demanded: ClassVar[bool] = False

    def __init__(self, ctx: "FileContext", options: dict[str, Any]):
        self.ctx = ctx
        self.opts = options
        # False where the engine runs the rule only for its ``shared_facts`` (a test file it
        # skips): work that serves only the file's own findings may be left undone.
        self.reports = True

    # -- reporting -------------------------------------------------------------------
    def report(self, node: cst.CSTNode, message: str, *, extra: dict[str, Any] | None = None,
               fix: "Fix | None" = None) -> None:
        """A finding at ``node``; ``fix`` (built with ``torchlint.fixes``) when one mechanical
        edit is right, of an applicability the rule declares in ``fixable``."""
        self.ctx.report(self, node, message, extra=extra, fix=fix)

    # -- hooks -----------------------------------------------------------------------
    def finish(self) -> None:
        """After the whole file was walked: where a rule judges what it collected (and asks
        ``self.ctx.semantic``). Default: nothing."""

    def demanded_facts(self) -> Any:
        """JSON-serialisable facts of this file for ``check_project`` to ask for only when it
        needs them (``Project.demand``), read after ``finish`` on a run of this rule alone
        over the file (``engine.demand_facts``); never gathered on the ordinary pass, unless
        ``gathers_demanded``. Default: None (nothing)."""
        return None

    @classmethod
    def might_apply(cls, text: str, options: dict[str, Any] | None = None) -> bool:
        """False only when the rule cannot fire on a file with this text (and these
        options): the engine then does not run it there. Must be sound."""
        return not cls.requires_text or contains_any(text, cls.requires_text)

    @classmethod
    def skips(cls, path: str, options: dict[str, Any]) -> bool:
        """Whether the rule reports nothing in ``path`` with these options (a test file)."""
        return skips_tests(cls.skips_test_files, path, options)

    @classmethod
    def has_project_pass(cls) -> bool:
        return cls.check_project.__func__ is not Rule.check_project.__func__

    @classmethod
    def check_project(cls, project: "Project", options: dict[str, Any]) -> Iterable[Finding]:
        """Project-level pass over every file's facts. Default: nothing."""
        return ()

    @classmethod
    def default_options(cls) -> dict[str, Any]:
        return default_options(cls.options)


def rule_index() -> tuple[RuleInfo, ...]:
    """Every rule's metadata, ordered by code, read without importing any rule module: the
    one list of rules (``torchlint/registry.py``, generated by ``tools/generate.py``)."""
    from torchlint.registry import RULES

    return RULES


def rule_classes(enabled: Iterable[str]) -> list[type[Rule]]:
    """The classes of the ``enabled`` rules, ordered by code: only their modules are imported.
    Looked up once per set of rules (the engine asks for every file) while the registry is
    the same (``testing.add_rules`` replaces it)."""
    global _LOADED
    index = rule_index()
    if _LOADED[0] is not index:
        _LOADED = (index, {})
    wanted = frozenset(enabled)
    found = _LOADED[1].get(wanted)
    if found is None:
        found = _LOADED[1][wanted] = tuple(r.load() for r in index if r.code in wanted)
    return list(found)


_LOADED: tuple[tuple[RuleInfo, ...], dict[frozenset[str], tuple[type[Rule], ...]]] = ((), {})


def all_rules() -> list[type[Rule]]:
    """Every rule class, ordered by code (the registry's rules: ``rule_index``)."""
    return rule_classes(info.code for info in rule_index())


def rule_info(code: str) -> RuleInfo:
    """One rule's metadata (``KeyError`` for a code no rule has)."""
    found = _INFO.get(code)
    index = rule_index()
    if found is None or _INFO.get("") is not index:
        _INFO.clear()
        _INFO.update({info.code: info for info in index}, **{"": index})
        found = _INFO[code]
    return found


_INFO: dict = {}


def rules_by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}
