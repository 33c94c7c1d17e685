"""One check run, above the engine. Data flows one way:

    discover → cache → pool of pure per-file analyses (``engine.analyze_source``)
             → project pass → suppressions → baseline → report

``engine`` analyses one file and knows nothing of files on disk, the cache or processes;
``pool`` runs the engine over many files; ``cache`` stores the engine's results. None of
them imports this module: only the command line (and ``torchlint.testing``) do.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from torchlint.cache import settings_key
from torchlint.codes import SYNTAX_ERROR
from torchlint.config import Configs, Settings, discover_configs
from torchlint.errors import RuleError, describe
from torchlint.files import SourceFile, discover, display_path, read_source
from torchlint.finding import Finding
from torchlint.gitignore import git_root
from torchlint.noqa import noqa_findings
from torchlint.notebook import code_size, in_cells, is_notebook, read_notebook
from torchlint.notebook_fixes import fix_notebook
from torchlint.pins import TorchPin, read_torch_pin
from torchlint.project import FileRecord, Project
from torchlint.results import FileResult, crashed_result
from torchlint.rule import rule_classes, rule_index

if TYPE_CHECKING:
    from torchlint.baseline import Baseline
    from torchlint.cache import Cache
    from torchlint.pool import Item

Transform = Callable[[list[Finding], list[FileRecord]], list[Finding]]


@dataclass
class RunResult:
    findings: list[Finding]
    errors: list[RuleError]
    files: list[str]
    hidden_by_baseline: int = 0
    # (path, what was not analysed and why) of each file or notebook cell that could not be
    # analysed where TL000 is not enabled: no finding says so, so the report warns of it
    unanalysed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def failed_files(self) -> list[Finding]:
        return [f for f in self.findings if f.rule == SYNTAX_ERROR]


def lint_files(files: list[SourceFile], settings: Settings, cwd: Path | None = None, **run: Any) -> RunResult:
    """Lint ``files``: ``Run(files, settings, cwd, **run).result()`` (see ``Run``)."""
    return Run(files, settings, cwd or Path.cwd(), **run).result()


@dataclass(eq=False)
class Run:
    """One lint run over ``files`` and the ``context`` (the rest of the project, see
    ``project_context``: linted for its records, never reported on), in named phases:

    1. ``analyse``: every file's result, from the cache where its bytes are unchanged, else
       from the engine in ``jobs`` processes (``analyse``, the module's function);
    2. ``report``: the project pass of each settings group over every file's record (with the
       project's torch pin; ``demand`` answers a rule asking for more of a file), ``transform``
       (the shape trace's merge), suppressions and the noqa judgements (TL901/TL902), a
       notebook's findings given their cells;
    3. ``result``: both, then the run pack saved and the ``baseline`` applied.

    Each file is linted with its own settings from ``configs`` (default: ``settings`` for
    all). Light results (from the cache's run pack) are made whole (``whole_results``) only
    where a project pass must run or the trace reads the records."""

    files: list[SourceFile]
    settings: Settings
    cwd: Path
    jobs: int = 1
    cache: "Cache | None" = None
    transform: Transform | None = None
    baseline: "Baseline | None" = None
    context: list[SourceFile] = field(default_factory=list)
    progress: Callable[[int], None] | None = None
    configs: Configs | None = None
    demand: "Demand | None" = None  # default: the run's own files, analysed again (``demander``)
    results: list[FileResult] = field(default_factory=list)
    torch_pin: TorchPin | None = None  # default: read from the project root of ``files``

    def __post_init__(self) -> None:
        self.cwd = self.cwd.resolve()
        named = {f.display for f in self.files}
        rest = [f for f in self.context if f.display not in named]
        self.everything = [*self.files, *rest]
        self.reported = named if rest else None  # None: every file
        self._own = {f.display: self.configs.for_path(f.path) for f in self.everything} if self.configs else {}
        self._by_display = {f.display: f for f in self.everything}
        if self.demand is None:
            self.demand = demander(self._source_of, self.cache)
        if self.torch_pin is None and self.files:
            self.torch_pin = read_torch_pin(project_root(self.files, self.settings))

    @classmethod
    def of_results(cls, results: list[FileResult], settings: Settings, cwd: Path,
                   demand: "Demand | None" = None) -> "Run":
        """A run over results analysed already (``testing.lint_tree``): its ``report`` alone."""
        return cls([], settings, cwd, demand=demand or (lambda code, path, own: (None, [])), results=list(results))

    def settings_of(self, display: str) -> Settings:
        return self._own.get(display, self.settings)

    def result(self) -> RunResult:
        self.analyse()
        result = self.report()
        if self.cache is not None:
            self.cache.save_pack(self.results)
        if self.baseline is not None:
            result.findings, result.hidden_by_baseline = self.baseline.filter(result.findings, self.cwd)
        return result

    # -- phase 1 ---------------------------------------------------------------------------
    def analyse(self) -> list[FileResult]:
        self.results = analyse(self.everything, self.settings, jobs=self.jobs, cache=self.cache,
                               progress=self.progress, settings_of=self.settings_of)
        return self.results

    def whole_results(self) -> list[FileResult]:
        """The results with every light one whole: read from its entry, else analysed again."""
        if not any(r.light for r in self.results):
            return self.results
        if self.cache is None:
            raise ValueError("light results come from a cache")
        whole = [self.cache.complete(r) if r.light else r for r in self.results]
        redo = [index for index, r in enumerate(whole) if r is None]
        if redo:
            again = analyse([self._by_display[self.results[index].path] for index in redo], self.settings,
                            jobs=self.jobs, cache=self.cache, settings_of=self.settings_of, whole=True)
            for index, r in zip(redo, again):
                whole[index] = r
        self.results = whole  # type: ignore[assignment]
        return self.results

    def _source_of(self, display: str) -> bytes | None:
        """A file's bytes for an analysis on demand (``Project.demand``): read again (a file
        edited since is read as it is now), None where it cannot be."""
        source = self._by_display.get(display)
        if source is None:
            return None
        try:
            return read_within(source, self.settings_of(display).max_file_size)[0]
        except OSError:
            return None

    # -- phase 2 ---------------------------------------------------------------------------
    def _reports_on(self, path: str) -> bool:
        return self.reported is None or path in self.reported

    def report(self) -> RunResult:
        """The findings the run reports (see the class docstring)."""
        records = {r.path: r.record for r in self.results}
        by_settings = groups(list(records), self.settings_of)
        findings = [f for r in self.results if self._reports_on(r.path) for f in r.findings]
        errors = [e for r in self.results if self._reports_on(r.path) for e in r.errors]
        files = list(self.results)
        for own, paths in by_settings:  # every group's rules see the whole project, report on their files
            more, project_errors = _project_pass(self._whole_records, own, self.torch_pin, self.cache, files,
                                                 self.demand)
            findings.extend(f for f in more if f.path in paths)
            errors.extend(e for e in project_errors if e not in errors)
        if self.transform is not None:
            findings = self.transform(findings, self._whole_records())
        records = {r.path: r.record for r in self.results}
        findings = [f for f in findings if self._reports_on(f.path)]
        kept: list[Finding] = []
        for own, paths in by_settings:
            suppressor = Suppressor(own, records, self.cwd)
            mine = [f for f in findings if f.path in paths]
            kept.extend(f for f in mine if suppressor.keep(f))
            # TL901/TL902 judge the noqa comments themselves, against what the rest left standing.
            judged = noqa_findings([records[p] for p in sorted(paths) if self._reports_on(p)],
                                   [f for f in mine if suppressor.configured(f)], own.enabled)
            kept.extend(f for f in judged if suppressor.keep(f, blanket=False))
        kept.sort(key=lambda f: f.sort_key)
        kept = [in_cells(f, records[f.path].cells) if f.path in records else f for f in kept]
        unanalysed = sorted((p, f"not analysed: {records[p].unanalysed}" if records[p].unanalysed
                             else f"not checked: {records[p].skipped_cells}")
                            for own, paths in by_settings if SYNTAX_ERROR not in own.enabled
                            for p in paths if (records[p].unanalysed or records[p].skipped_cells) and self._reports_on(p))
        return RunResult(kept, errors, sorted(p for p in records if self._reports_on(p)), unanalysed=unanalysed)

    def _whole_records(self) -> list[FileRecord]:
        return [r.record for r in self.whole_results()]


def lint_text(path: Path, data: bytes, configs: Configs | None = None) -> RunResult:
    """Lint ``data`` as the file at ``path`` (absolute; it need not exist, nor hold these
    bytes): an editor's unsaved buffer, flake8's lines. Its settings are those
    ``torchlint check`` would give the file (``configs``, default: found from its
    directory); findings name it relative to the working directory. The project's other
    files are not read (each keystroke is one file's analysis), so their facts are missing
    from the project pass; no cache."""
    configs = configs or discover_configs(path.parent)
    cwd = Path.cwd().resolve()
    source = SourceFile(path, display_path(path, cwd), data)
    return lint_files([source], configs.base, cwd, configs=configs)


def fix_text(path: Path, data: bytes, configs: Configs | None = None) -> bytes:
    """``data`` (an editor's buffer, linted as ``lint_text`` lints it) after ``--fix``'s loop
    (``fix_files``) with the settings of the file at ``path``: its safe fixes, and its unsafe
    ones where ``unsafe-fixes`` is on, of its ``fixable`` rules. Nothing is written."""
    configs = configs or discover_configs(path.parent)
    cwd = Path.cwd().resolve()
    source = SourceFile(path, display_path(path, cwd), data)
    outcome = fix_files([source], configs.base, cwd, applies=configs.for_path(path).applies_fix, configs=configs)
    return outcome.changed[source.display][1] if source.display in outcome.changed else data


# -- discover ----------------------------------------------------------------------------

def project_root(files: list[SourceFile], settings: Settings) -> Path | None:
    """The root of the project ``files`` belong to: the configuration's directory, else the
    git root. None without either (or without files): then the paths named are the project,
    and nothing beside them is read (a directory of unrelated checkouts is not one project)."""
    if settings.config_path is not None:
        return settings.root
    if not files:
        return None
    return git_root(Path(os.path.commonpath([str(f.path.parent) for f in files])))


def project_context(paths: list[str], files: list[SourceFile], settings: Settings, cwd: Path) -> list[SourceFile]:
    """The project's files beyond those named, when ``paths`` do not cover the project root:
    linted for their records (the project pass needs them), never reported on. Fast once
    cached. Discovery's warnings about them are not shown (they are not linted)."""
    root = project_root(files, settings)
    if root is None:
        return []
    for raw in paths:
        given = Path(os.path.realpath(cwd / raw))
        if given == root or given in root.parents:
            return []  # a directory at or above the root: every file of the project is named
    everything = discover([str(root)], replace(settings, force_exclude=False), cwd).files
    named = {f.path for f in files}
    return [f for f in everything if f.path not in named]


# -- read, cache, pool -------------------------------------------------------------------

def size_failure(size: int, limit: int) -> str | None:
    """Why a file of ``size`` bytes is not analysed, or None when it is within ``limit``."""
    if size <= limit:
        return None
    return f"file is too large to analyse ({size / 1e6:.3g} MB, limit {limit / 1e6:.3g} MB; raise max-file-size to lint it)"


def read_within(source: SourceFile, limit: int) -> tuple[bytes, None] | tuple[None, str]:
    """A file's bytes (its ``data`` where given), or why it is not analysed: over ``limit``
    bytes. A source is never read past ``limit`` (``bounded.read_file``); a notebook is read
    up to ``bounded.NOTEBOOK_LIMIT`` and measured by its code cells (its outputs, images
    included, do not count). Raises ``OSError``."""
    from torchlint import bounded

    notebook = is_notebook(source.display)
    data = source.data
    if data is None:
        try:
            data = read_source(source.path, bounded.NOTEBOOK_LIMIT if notebook else limit)
        except bounded.TooLarge as exc:
            if notebook:
                raise
            return None, size_failure(exc.size if exc.size is not None else limit + 1, limit)
    too_large = size_failure(code_size(data) if notebook else len(data), limit)
    return (None, too_large) if too_large else (data, None)


def _largest_first(files: list[SourceFile]) -> list[int]:
    """``files``' indexes, largest file first: with several workers, the long files start
    early and the small ones even out the end, instead of one worker finishing a large file
    alone while the others wait (a file that cannot be measured counts as empty; reading it
    reports why)."""
    def size(index: int) -> int:
        source = files[index]
        if source.data is not None:
            return len(source.data)
        try:
            return source.path.stat().st_size
        except OSError:
            return 0

    return sorted(range(len(files)), key=lambda index: -size(index))


def analyse(files: list[SourceFile], settings: Settings, *, jobs: int = 1, cache: "Cache | None" = None,
            progress: Callable[[int], None] | None = None,
            settings_of: Callable[[str], Settings] | None = None, whole: bool = False) -> list[FileResult]:
    """Every file's result, in ``files``' order: from the cache where its bytes are
    unchanged, else from the engine (in ``jobs`` processes), stored back in the cache. A
    file's bytes are its ``data`` where given (standard input), else read from disk
    (``read_within``). A result from the cache's run pack is light (``FileResult.light``)
    unless ``whole``.
    ``progress`` is called with the number of files done after each one. A file is analysed
    with ``settings_of(its display path)`` (default: ``settings``)."""
    results: list[FileResult | None] = [None] * len(files)
    if cache is not None and not whole:
        cache.open_pack([f.display for f in files])
    keys: dict[int, str] = {}
    done = 0

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done)

    def todo():
        for index in _largest_first(files) if jobs > 1 else range(len(files)):
            source = files[index]
            own = settings_of(source.display) if settings_of is not None else settings
            try:
                data, too_large = read_within(source, own.max_file_size)
                if data is None:
                    results[index] = crashed_result(source.display, too_large, own.enabled)
                    advance()
                    continue
            except OSError as exc:
                results[index] = crashed_result(source.display, f"cannot read file: {exc.strerror or exc}", own.enabled)
                advance()
                continue
            if cache is not None:
                # the cache's bucket is ``settings``'; a file with settings of its own keys them too
                extra = "" if own is settings else settings_key(own.enabled, own.rule_options)
                key = keys[index] = cache.key(source.display, data, extra)
                hit = cache.get(source.display, key, whole=whole)
                if hit is not None:
                    hit.key = key
                    results[index] = hit
                    advance()
                    continue
            item: "Item" = (index, source.display, data, own.enabled, own.rule_options)
            yield item

    def store(index: int, result: FileResult) -> None:
        results[index] = result
        advance()
        if cache is not None and index in keys:
            cache.put(keys[index], result)
            result.key = keys[index]

    items = todo()
    first = next(items, None)
    if first is not None:  # the engine, the pool (and LibCST) are imported only to analyse a file
        from torchlint.pool import analyze_all

        analyze_all(itertools.chain([first], items), jobs, store)
    return [r for r in results if r is not None]


# -- project pass, suppressions ----------------------------------------------------------

# A rule's demanded facts of one file (``Rule.demanded_facts``) for the run's project pass:
# (rule code, path, the settings of the pass) -> (facts or None, the rule's failures there).
Demand = Callable[[str, str, Settings], tuple[Any, list[RuleError]]]


def demander(source_of: Callable[[str], bytes | None], cache: "Cache | None" = None) -> Demand:
    """``Project.demand`` for a run: the file's bytes from ``source_of``, its demanded facts
    from the cache where an entry holds them for these bytes and settings, else the file
    analysed again (``engine.demand_facts_of``: with the enabled rules of the rule's
    ``demand_group``, whose facts are kept for when they are asked) and the facts stored there."""
    # (code, path) -> (the bytes and settings they are of, (facts, failures)) of a group's
    # rules analysed with another one, until asked
    kept: dict[tuple[str, str], tuple[bytes, Settings, tuple[Any, list[RuleError]]]] = {}

    def demand(code: str, path: str, settings: Settings) -> tuple[Any, list[RuleError]]:
        data = source_of(path)
        if data is None:
            return None, []
        held = kept.pop((code, path), None)
        if held is not None and held[0] == data and held[1] is settings:
            return held[2]
        key = None if cache is None else cache.key(path, data, settings_key(settings.enabled, settings.rule_options))
        found = None if key is None else cache.get_demanded(key, code)
        if found is not None:
            return found, []
        from torchlint.engine import demand_facts_of  # imported only where a file is analysed

        answers = demand_facts_of(path, data, _demand_group(code, settings), settings.rule_options)
        for other, (facts, failures) in answers.items():
            if key is not None and facts is not None and not failures:
                cache.put_demanded(key, other, facts)
            if other != code:
                kept[(other, path)] = (data, settings, (facts, failures))
        return answers[code]
    return demand


def _demand_group(code: str, settings: Settings) -> tuple[str, ...]:
    """``code`` and the other enabled rules of its ``Rule.demand_group`` (``code`` alone
    where it has none)."""
    group = next((cls.demand_group for cls in rule_classes([code])), None)
    if group is None:
        return (code,)
    return (code, *(cls.code for cls in rule_classes(settings.enabled) if cls.demand_group == group and cls.code != code))


def project_findings(records: list[FileRecord], settings: Settings, torch_pin: TorchPin | None = None,
                     demand: Demand | None = None) -> tuple[list[Finding], list[RuleError]]:
    """Every enabled rule's ``check_project`` over every file's record (and the project's
    torch pin, read once per run). A rule's ``Project.demand`` goes to ``demand`` (nothing
    without it); the rule's failures there are reported."""
    findings: list[Finding] = []
    errors: list[RuleError] = []

    def ask(code: str, path: str) -> Any:
        if demand is None:
            return None
        facts, failures = demand(code, path, settings)
        errors.extend(e for e in failures if e not in errors)
        return facts

    project = Project(records, torch_pin=torch_pin, demand=ask)
    for cls in rule_classes(settings.enabled):
        if not cls.has_project_pass():
            continue
        try:
            findings.extend(cls.check_project(project, settings.options_for(cls)))
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            errors.append(RuleError(cls.code, "<project>", *describe(exc)))
    return findings, errors


def _project_pass(records: Callable[[], list[FileRecord]], settings: Settings, torch_pin: TorchPin | None,
                  cache: "Cache | None", files: list[FileResult],
                  demand: Demand | None = None) -> tuple[list[Finding], list[RuleError]]:
    """``project_findings`` over ``records()`` (every file's whole record), remembered in the
    cache. The project pass is a function of what it reads of every file's record
    (``FileRecord.project_digest``), the rules' settings, the torch pin and the facts it
    demands of some files (each a function of that file's bytes: its cache key), so when none
    of them changed (a warm run, or an edit that changes no fact: a comment that moves no line) its
    findings are read back instead of recomputed; ``files`` are the results it runs over
    (light ones carry their digest). Without a cache, or with a file that has no key, it
    always runs; a pass that raised is never remembered."""
    if cache is None or any(r.key is None for r in files):
        return project_findings(records(), settings, torch_pin, demand)
    pin = None if torch_pin is None else [torch_pin.file, torch_pin.spec]
    keys = {r.path: r.key for r in files}
    memo = cache.project_key(settings_key(settings.enabled, settings.rule_options), pin,
                             sorted((r.path, r.project_digest()) for r in files))
    found = cache.get_project(memo)
    if found is not None and _demands_hold(found[1], keys, settings, demand):
        if any(keys.get(path) != key for path, (key, _) in found[1].items()):  # held, for new bytes
            cache.put_project(memo, found[0], {path: [keys.get(path), read] for path, (_, read) in found[1].items()})
        return found[0], []
    asked: dict[str, list] = {}

    def noted(code: str, path: str, own: Settings) -> tuple[Any, list[RuleError]]:
        facts, failures = demand(code, path, own)  # type: ignore[misc]
        asked.setdefault(path, [keys.get(path), {}])[1][code] = demanded_digest(facts)
        return facts, failures

    findings, errors = project_findings(records(), settings, torch_pin, noted if demand is not None else None)
    if not errors:
        cache.put_project(memo, findings, asked)
    return findings, errors


def demanded_digest(facts: Any) -> str:
    """What a project pass read of one file's demanded facts, hashed (``_demands_hold``)."""
    blob = json.dumps(facts, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(blob.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _demands_hold(demanded: dict[str, list], keys: dict[str, str | None], settings: Settings,
                  demand: Demand | None) -> bool:
    """Whether the facts a remembered project pass demanded (path -> [the entry key of the
    bytes it read, rule code -> ``demanded_digest``]) are still what it read. A file whose
    bytes are the same gives the same; one whose bytes changed is asked again (its new
    facts are cached for the pass that may follow) and must give the same facts to every
    rule that asked: a comment added to a model file another file evaluates changes none."""
    for path, (key, read) in demanded.items():
        if keys.get(path) == key:
            continue
        if demand is None or keys.get(path) is None:
            return False
        for code, digest in read.items():
            facts, failures = demand(code, path, settings)
            if failures or demanded_digest(facts) != digest:
                return False
    return True


def groups(paths: list[str], settings_of: Callable[[str], Settings]) -> list[tuple[Settings, set[str]]]:
    """The distinct settings of ``paths`` (one per configuration file), each with its files,
    in a fixed order (whatever the order of ``paths``)."""
    found: dict[int, tuple[Settings, set[str]]] = {}
    for path in sorted(paths):
        own = settings_of(path)
        found.setdefault(id(own), (own, set()))[1].add(path)
    return list(found.values())


def _per_file_ignores(settings: Settings) -> list[tuple[Any, frozenset[str], Path]]:
    """(compiled pattern, codes, the directory it is relative to: that of the configuration
    file that wrote it) of each ``per-file-ignores`` entry."""
    if not settings.per_file_ignores:
        return []
    from torchlint.gitignore import Spec

    return [(Spec.from_lines([pattern]), codes, settings.ignore_bases.get(pattern, settings.root))
            for pattern, codes in settings.per_file_ignores.items()]


class Suppressor:
    """Drops findings silenced by ``# noqa`` comments, ``per-file-ignores``, a rule's
    disabling or a rule's skipping of test files (``Rule.skips``)."""

    def __init__(self, settings: Settings, records: dict[str, FileRecord], cwd: Path):
        self.records = records
        self.settings = settings
        self.rules = {r.code: r for r in rule_index()}
        self.ignores = _per_file_ignores(settings)
        self.root = settings.root
        self.cwd = cwd

    def _relative(self, display: str, base: Path | None = None) -> str:
        """``display`` relative to ``base`` (default: the settings' root), else as given."""
        base = base or self.root
        # realpath, not Path.resolve(): a symbolic link loop must not raise here
        path = Path(os.path.realpath(self.cwd / display))
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            return display

    def configured(self, finding: Finding) -> bool:
        """Not dropped by the rule's disabling or test-file skipping, ``per-file-ignores`` or
        a file-level ``# torchlint: noqa``."""
        if finding.rule not in self.settings.enabled:
            return False
        rule = self.rules.get(finding.rule)
        if rule is not None and rule.skips(finding.path, self.settings.options_for(rule)):
            return False
        record = self.records.get(finding.path)
        if record is not None and record.suppressions.suppresses_file(finding.rule):
            return False
        for spec, codes, base in self.ignores:
            if finding.rule in codes and spec.match_file(self._relative(finding.path, base)):
                return False
        return True

    def keep(self, finding: Finding, *, blanket: bool = True) -> bool:
        """Not suppressed at all; ``blanket=False`` (for TL901/TL902, which are about the noqa
        comment itself) lets only a line directive that names the rule drop it."""
        if not self.configured(finding):
            return False
        record = self.records.get(finding.path)
        return record is None or not record.suppressions.suppresses_line(finding.rule, finding.line, blanket=blanket)


# -- fixing --------------------------------------------------------------------------------

# Passes of lint-then-fix: a file whose fixes still apply after this many is a fix that keeps
# re-appearing (a rule bug), reported, and the file is left as after the last pass.
MAX_FIX_PASSES = 10


@dataclass
class FixOutcome:
    """What the fix loop did: the findings left after its last pass (``result``), the fixes
    applied per rule code, each changed file's bytes before and after (by display path), and
    each file it gave up on with why (an exit 2)."""

    result: RunResult
    fixed: dict[str, int]
    changed: dict[str, tuple[bytes, bytes]]
    problems: list[tuple[str, str]]

    @property
    def total_fixed(self) -> int:
        return sum(self.fixed.values())


class MemoryCache:
    """The cache's interface (``key``/``get``/``put``, the project pass's memo, demanded facts) in memory: the fix loop's passes
    re-analyse only the files they changed when the run has no cache on disk."""

    def __init__(self) -> None:
        self._results: dict[str, FileResult] = {}
        self._project: dict[str, tuple[list[Finding], dict[str, list]]] = {}
        self._demanded: dict[tuple[str, str], Any] = {}
        self.hits = self.misses = 0

    def key(self, display: str, data: bytes, extra: str = "") -> str:
        import hashlib

        return hashlib.sha256(b"\0".join([display.encode("utf-8", "surrogateescape"), extra.encode(), data])).hexdigest()

    def get(self, display: str, key: str, *, whole: bool = False) -> FileResult | None:
        found = self._results.get(key)
        self.hits += found is not None
        self.misses += found is None
        return found

    def put(self, key: str, result: FileResult) -> None:
        if not result.errors:
            self._results[key] = result

    # Results in memory are always whole: there is no run pack.
    def open_pack(self, paths: list[str]) -> None:
        pass

    def save_pack(self, results: list[FileResult]) -> None:
        pass

    def complete(self, result: FileResult) -> FileResult:
        return result

    def project_key(self, settings: str, torch_pin: list | None, files: list[tuple[str, str | None]]) -> str:
        return repr((settings, torch_pin, files))

    def get_project(self, key: str) -> tuple[list[Finding], dict[str, list]] | None:
        found = self._project.get(key)
        return (list(found[0]), dict(found[1])) if found is not None else None

    def get_demanded(self, key: str, code: str) -> Any:
        return self._demanded.get((key, code))

    def put_demanded(self, key: str, code: str, facts: Any) -> None:
        self._demanded[(key, code)] = facts

    def put_project(self, key: str, findings: list[Finding], demanded: dict[str, list]) -> None:
        self._project[key] = (list(findings), dict(demanded))


def fix_files(files: list[SourceFile], settings: Settings, cwd: Path | None = None, *,
              applies: Callable[[Finding], bool], passes: int = MAX_FIX_PASSES, cache: "Cache | None" = None,
              **lint: object) -> FixOutcome:
    """Lint ``files``, apply every fix ``applies`` accepts (of findings left after
    suppressions and the baseline) that overlaps no other in its file, and lint again, until
    no fix applies or ``passes`` passes are done. Nothing is written: ``changed`` holds the
    new bytes, and ``changed``'s "before" bytes are the ones every file was linted and fixed
    from (each read once, first: ``_read_once``). A pass whose fixes leave a file that no
    longer compiles is not kept for that file (a problem: the file stays as before that pass
    and is fixed no further)."""
    from torchlint.fixes import apply_fixes, decode_source

    current: dict[str, bytes] = {}
    originals: dict[str, bytes] = {}
    fixed: dict[str, int] = {}
    problems: list[tuple[str, str]] = []
    given_up: set[str] = set()
    configs = lint.get("configs")
    own = (lambda f: configs.for_path(f.path)) if configs is not None else (lambda f: settings)  # type: ignore[attr-defined]
    files = [_read_once(f, own(f)) for f in files]  # edits apply to the bytes they were computed on
    named = {f.display: f for f in files}
    cache = cache if cache is not None else MemoryCache()
    for done in range(passes + 1):
        passing = [replace(f, data=current[f.display]) if f.display in current else f for f in files]
        result = lint_files(passing, settings, cwd, cache=cache, **lint)  # type: ignore[arg-type]
        todo: dict[str, list[Finding]] = {}
        for f in result.findings:
            if f.path in named and f.path not in given_up and applies(f):
                todo.setdefault(f.path, []).append(f)
        if not todo or done == passes:
            for path in sorted(todo):
                problems.append((path, f"fixes still apply after {passes} passes (a fix that keeps re-appearing: "
                                       "a torchlint bug, please report it); the file is left as after the last pass"))
            break
        for path, findings in sorted(todo.items()):
            try:
                data = current.get(path, named[path].data)
                if data is None:
                    raise OSError("the file could not be read")
                if is_notebook(path):  # the cells' sources in the JSON (``notebook_fixes.fix_notebook``)
                    new_data, applied = fix_notebook(data, [f.fix for f in findings])
                    text, new_text = read_notebook(data).text, read_notebook(new_data).text
                else:
                    text, encoding = decode_source(data)
                    new_text, applied = apply_fixes(text, [f.fix for f in findings])
            except (OSError, ValueError) as exc:
                problems.append((path, f"cannot fix: {getattr(exc, 'strerror', None) or exc}"))
                given_up.add(path)
                continue
            if _compiles(text) and not _compiles(new_text):
                codes = ", ".join(sorted({f.rule for f in findings}))
                problems.append((path, f"fixes of {codes} made code that does not compile (a torchlint bug, please "
                                       "report it); the file is left as before them"))
                given_up.add(path)
                continue
            if not is_notebook(path):
                try:
                    new_data = new_text.encode(encoding)
                except UnicodeEncodeError:
                    problems.append((path, "cannot fix: the fixed code cannot be written in the file's encoding "
                                           f"({encoding})"))
                    given_up.add(path)
                    continue
            originals.setdefault(path, data)
            current[path] = new_data
            for f in findings:
                if f.fix in applied:
                    fixed[f.rule] = fixed.get(f.rule, 0) + 1
    changed = {p: (originals[p], current[p]) for p in sorted(current) if current[p] != originals[p]}
    return FixOutcome(result, dict(sorted(fixed.items())), changed, problems)


def _read_once(source: SourceFile, settings: Settings) -> SourceFile:
    """``source`` with its bytes read now (where they can be and are within the file size
    limit): the fix loop lints, fixes and compares against these bytes alone, so an edit is
    never applied to a file that changed after it was computed."""
    if source.data is not None:
        return source
    try:
        data = read_within(source, settings.max_file_size)[0]
    except OSError:
        return source  # linting it reports why
    return source if data is None else replace(source, data=data)


def _compiles(text: str) -> bool:
    """Whether CPython compiles ``text``: its parser and its compiler, which alone refuse
    some code ``ast.parse`` accepts (a keyword argument given twice, ``nonlocal`` at module
    level, ``return`` outside a function)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return False
    return True
