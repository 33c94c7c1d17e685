"""The per-file analysis: a pure function of a file's bytes and its settings (parse, one
walk, every rule). What runs it over many files (cache, process pool, project pass,
suppressions) is ``torchlint.run``; this module imports neither ``pool`` nor ``cache``."""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from torchlint.codes import SYNTAX_ERROR
from torchlint.context import Dispatcher, FileContext
from torchlint.errors import RuleError, describe
from torchlint.finding import Finding, Span
from torchlint.imports import ImportTable
from torchlint.noqa import scan
from torchlint.notebook import NotebookError, is_notebook, read_notebook
from torchlint.project import Facts, FileRecord, encode, module_name_for
from torchlint.results import FileResult, ParseFailure, unanalysed_result
from torchlint.rule import Rule, rule_classes, rule_info
from torchlint.semantic.index import class_facts
from torchlint.source import TOO_DEEP, Parsed, cpython_tree, parse_cst, read_python, read_text
from torchlint.speedups.process import collector_paused
from torchlint.syntax import TARGET_VERSIONS

if TYPE_CHECKING:
    import ast

    import libcst as cst

    from torchlint.notebook import Notebook


# Rules whose cheap textual pre-check (``Rule.might_apply``) says they cannot fire on a file
# are not run on it. The benchmark and the tests turn this off to measure what skipping saves
# and to check that it hides no finding.
SKIP_RULES = True


def analyze_source(
    path: str,
    data: bytes,
    enabled: frozenset[str],
    rule_options: dict[str, dict[str, Any]] | None = None,
) -> FileResult:
    """Lint one file's bytes (``_analyze``), with the cycle collector paused where the
    speed-ups are on (``speedups.process.collector_paused``)."""
    with collector_paused():
        return _analyze(path, data, enabled, rule_options)


def demand_facts(path: str, data: bytes, code: str,
                 rule_options: dict[str, dict[str, Any]] | None = None) -> tuple[Any, list[RuleError]]:
    """What rule ``code`` gives of one file when its project pass asks (``Rule.demanded_facts``,
    ``Project.demand``): the file analysed again, that rule alone, whatever its text
    pre-check says; with the rule's failures there. None where the file cannot be analysed
    or the rule failed on it."""
    return demand_facts_of(path, data, (code,), rule_options)[code]


def demand_facts_of(path: str, data: bytes, codes: tuple[str, ...],
                    rule_options: dict[str, dict[str, Any]] | None = None) -> dict[str, tuple[Any, list[RuleError]]]:
    """``demand_facts`` of several rules from one analysis of the file (the rules of a
    ``Rule.demand_group``): rule code -> (its facts or None, its failures there)."""
    with collector_paused():
        result = _analyze(path, data, frozenset(codes), rule_options, demanded=frozenset(codes))
    facts = result.demanded or {}
    return {code: (facts.get(code), [e for e in result.errors if e.rule == code]) for code in codes}


def _analyze(
    path: str,
    data: bytes,
    enabled: frozenset[str],
    rule_options: dict[str, dict[str, Any]] | None = None,
    demanded: frozenset[str] = frozenset(),
) -> FileResult:
    """Lint one file's bytes. Pure: no file system access, no imports of the linted code.
    A notebook (``path`` ending in ``.ipynb``) is linted as its code cells' Python
    (``torchlint.notebook``); findings stay in the joined text's lines until the run maps
    them to cells.

    Findings are raw (no suppression applied yet); the record carries the file's
    suppression comments, its imports and each rule's facts for the project pass. The
    LibCST tree is built only when some enabled rule might fire on the file's text.

    CPython's parser accepts nesting about 3,000 levels deep (and ``and``/``or`` chains of
    any length, which LibCST nests), but LibCST's native parser, its code generation (used
    for positions) and some rules recurse once per level: the default 1,000 frames run out,
    and an 8 MB stack can crash the process. So everything after CPython's parse runs on a
    thread with a deep stack (``on_deep_stack``); a file too deep even for that is TL000
    "nested too deeply".
    """
    rule_options = rule_options or {}
    is_package = path.endswith(("__init__.py", "__init__.pyi"))
    record = FileRecord(path=path, module_name=module_name_for(path), is_package=is_package)
    # Not on the deep stack: CPython's parser scales its depth limit with the recursion
    # limit, and deeper input only reaches LibCST, whose parse time grows quadratically.
    target = TARGET_VERSIONS.get((rule_options.get(SYNTAX_ERROR) or {}).get("target-version"))
    notebook, bad_cells = None, []
    if is_notebook(path):  # its code cells' Python, never its JSON
        try:
            notebook = read_notebook(data)
        except NotebookError as exc:
            return unanalysed_result(record, ParseFailure(str(exc)), enabled)
        record.cells = notebook.cells.to_json()
        text, bad_cells = _readable_cells(notebook)
    else:
        text, failure = read_text(data)
        if text is None:
            return unanalysed_result(record, failure, enabled)
    result = _analyze_text(record, text, enabled, rule_options, target, demanded)
    if notebook is not None and not result.record.parsed:  # Jupyter compiles each cell alone
        text, found = _parsable_cells(notebook, target, bad_cells)
        if len(found) > len(bad_cells):
            record = FileRecord(path=path, module_name=record.module_name, is_package=is_package, cells=record.cells)
            result, bad_cells = _analyze_text(record, text, enabled, rule_options, target, demanded), found
    if bad_cells and result.record.parsed:
        result.record.skipped_cells = "; ".join(_skipped(notebook, f) for f in bad_cells)
    if bad_cells and SYNTAX_ERROR in enabled and result.record.parsed:
        result.findings.extend(Finding.at(rule_info(SYNTAX_ERROR), path, Span.point(f.line, f.column),
                                          f"{f.message}; this cell was not checked (the notebook's other cells were)")
                               for f in bad_cells)
        result.findings.sort(key=lambda f: f.sort_key)
    return result


def _skipped(notebook: "Notebook", failure: ParseFailure) -> str:
    """``cell 2 (invalid syntax, line 1, column 12)``: a cell left out, where and why."""
    where = notebook.cells.locate(failure.line)
    if where is None:
        return failure.message
    return f"cell {where[0]} ({failure.message}, line {where[1]}, column {failure.column})"


def _readable_cells(notebook: "Notebook") -> tuple[str, list[ParseFailure]]:
    """The notebook's text without the cells Python cannot even read (a lone surrogate, which
    JSON's escapes allow and no source file can hold; a NUL character), and why each is
    left out, at its joined line."""
    bad, failures = set(), []
    for number, start, cell in notebook.cell_texts():
        for offset, line in enumerate(cell.split("\n")):
            found = _UNREADABLE.search(line)
            if found is not None:
                char = found.group(0)
                what = "a NUL character" if char == "\0" else f"a lone surrogate (U+{ord(char):04X}), not a character"
                failures.append(ParseFailure(f"cannot read cell: {what}; Python cannot compile this cell",
                                             start + offset, found.start() + 1))
                bad.add(number)
                break
    return (notebook.without(bad) if bad else notebook.text), failures


_UNREADABLE = re.compile("[\ud800-\udfff\0]")


def _parsable_cells(notebook: "Notebook", target: Any, known: list[ParseFailure]) -> tuple[str, list[ParseFailure]]:
    """The notebook's text without the cells that fail to parse on their own (and those
    ``known`` to fail), with each failure at its joined line (sorted)."""
    failures = list(known)
    cells = notebook.cell_texts()
    bad = {max((n for n, start, _ in cells if start <= f.line), default=0) for f in failures}
    for number, start, cell in cells:
        if number in bad:
            continue
        parsed, failure = read_python(cell, target, on_deep_stack, tree=False)
        failure = failure if parsed is None else parsed.cst_failure
        if failure is not None:
            failures.append(replace(failure, line=start + failure.line - 1))
            bad.add(number)
    failures.sort(key=lambda f: (f.line, f.column))
    return (notebook.without(bad) if bad else notebook.text), failures


def _analyze_text(record: FileRecord, text: str, enabled: frozenset[str], rule_options: dict[str, dict[str, Any]],
                  target: Any, demanded: frozenset[str]) -> FileResult:
    """Lint one file's text (a notebook's joined cells): ``_analyze`` after reading."""
    path = record.path
    record.suppressions = scan(text)
    options = {
        c: rule_options.get(c.code) or c.default_options()
        for c in rule_classes(enabled) if c.code != SYNTAX_ERROR and not c.traced
    }
    # (rule class, its options, whether it reports here: ``_run_as``) of each rule run on the file
    runs = [(c, opts, True if c.code in demanded else _run_as(c, path, text, opts)) for c, opts in options.items()]
    if not demanded and any(reports is not None for _, _, reports in runs):
        # LibCST's tree is built for some rule: the rules that gather their demanded facts run
        # too where they would not, reporting nothing (``GATHER``)
        runs = [(c, opts, GATHER if reports is None and c.gathers_demanded else reports) for c, opts, reports in runs]
    runs = [run for run in runs if run[2] is not None]
    # Where a rule runs, LibCST's tree gives the file's imports and classes: CPython's
    # parser only checks the syntax then, and builds no tree (``check_syntax``), or is not run
    # at all where LibCST's parse gives its verdict (``source.libcst_decides``).
    parsed, failure = read_python(text, target, on_deep_stack, tree=not runs)
    if parsed is None:
        return unanalysed_result(record, failure, enabled)
    imports = ImportTable(record.module_name, record.is_package)
    if parsed.tree is not None:
        _file_facts(record, imports, parsed.tree)
    if not runs:
        return FileResult(path, [], record)
    try:
        return on_deep_stack(_run_rules, record, parsed, imports, runs, enabled, demanded)
    except RecursionError:
        return unanalysed_result(record, ParseFailure(TOO_DEEP), enabled)


def _file_facts(record: FileRecord, imports: ImportTable, tree: "ast.Module | cst.Module") -> None:
    """The file's module-level imports and its classes (``torchlint.statements``: from
    either tree, the same facts), into the table and the record."""
    imports.scan(tree)
    record.imports, record.star_imports = imports.names, imports.star
    record.index = {"classes": class_facts(tree, imports)}  # torchlint.semantic.index


# ``_run_rules``'s mark of a rule run only to gather its ``demanded_facts`` (``Rule.gathers_demanded``)
GATHER = "gather"


def _run_as(rule: type[Rule], path: str, text: str, options: dict[str, Any]) -> bool | None:
    """How ``rule`` is run on this file: True to report, False only for the facts other files'
    findings read (``Rule.shared_facts``) on a test file it skips (the run layer drops its
    findings there: ``Rule.skips``), None not at all: where its text pre-check says it cannot
    fire (``SKIP_RULES``), or on a test file it skips that no project pass reads."""
    reports = not rule.skips(path, options)
    if not reports and not (rule.shared_facts and rule.has_project_pass()):
        return None
    if SKIP_RULES and not rule.might_apply(text, options):
        return None
    return reports


def _run_rules(
    record: FileRecord, parsed: Parsed, imports: ImportTable, rules: list[tuple[type[Rule], dict[str, Any], Any]],
    enabled: frozenset[str], demanded: frozenset[str] = frozenset(),
) -> FileResult:
    """LibCST's parse and one walk of its tree for every rule; the project index's function
    summaries where a rule built the training model; the ``demanded`` rules'
    ``demanded_facts`` on an analysis on demand; those of the rules run to ``GATHER`` them
    into the record (their failures unreported: an analysis on demand reports them if asked)."""
    text = parsed.text
    if parsed.module is not None or parsed.cst_failure is not None:  # read already (``read_python``)
        module, failure = parsed.module, parsed.cst_failure
    else:
        module, failure = parse_cst(text)
    if parsed.tree is None:  # imports and classes from LibCST's tree (CPython's where LibCST fails)
        tree = module if module is not None else cpython_tree(text)
        if tree is not None:
            _file_facts(record, imports, tree)
    if module is None:
        return unanalysed_result(record, failure, enabled)
    ctx = FileContext(record.path, module, text, imports)
    if parsed.exact:  # cheap positions without a second parse (None: parsed if asked for)
        ctx.ast_tree = parsed.tree
    instances, gathering = [], []
    for cls, opts, reports in rules:
        instances.append(rule := cls(ctx, opts))
        rule.reports = reports is True
        if reports is GATHER:
            gathering.append(rule)
    dispatcher = Dispatcher(ctx, instances, gathering)
    dispatcher.run()
    _keep_shared_facts(ctx, [rule for rule in instances if rule not in gathering])
    on_demand = {rule.code: _encode_demanded(ctx, rule, dispatcher.demanded_facts(rule))
                 for rule in instances if rule.code in demanded} or None
    facts = _encode_facts(ctx)
    findings = ctx.findings()
    index = ctx.semantic.index(record.index["classes"]).to_json() if ctx.semantic_started() and ctx.semantic.has_training else None
    gathered = _gathered(dispatcher.gather())
    record.facts = facts  # only now: a file that ran out of stack above has no facts
    if index is not None:
        record.index = index
    record.demanded = gathered
    errors = ctx.errors
    ctx.release()
    return FileResult(record.path, findings, record, errors, demanded=on_demand)


def _keep_shared_facts(ctx: FileContext, rules: list[Rule]) -> None:
    """Of a rule run only for its ``shared_facts``, those facts, if any (its findings were never
    kept: ``FileContext.report``)."""
    for code, keys in ((rule.code, rule.shared_facts) for rule in rules if not rule.reports):
        facts = ctx.facts.pop(code, None)
        shared = {key: facts[key] for key in keys if key in facts} if facts is not None else None
        if shared:
            ctx.facts[code] = shared


# LibCST's work on a file: frames allowed, and the thread's stack (reserved address space;
# only the pages used become memory). Measured on CPython 3.11: LibCST's code generation
# takes ~2.2 frames and ~0.7 KB of C stack per level of nesting, so 200,000 frames use
# ~60 MB of this stack (3.10, which spends C stack on every Python call, stays under it);
# LibCST's native parser, which crashes an 8 MB stack on ~10,000 chained ``and``, parses
# 175,000 of them (a 1 MB file) in 512 MB.
DEEP_RECURSION_LIMIT = 200_000
DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP = threading.Lock()  # the recursion limit is process-wide: one deep run at a time


def on_deep_stack(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a thread with a deep stack and recursion limit (``_DeepThread``);
    returns what it returned or raises what it raised. Where no such thread can start
    (address space limited by ``ulimit -v``), ``fn`` runs here, within the default limits."""
    with _DEEP:
        deep = _deep_thread()
        if deep is None:
            return fn(*args)
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        try:
            return deep.run(fn, args)
        finally:
            sys.setrecursionlimit(old_limit)


class _DeepThread:
    """The one thread per process that ``on_deep_stack`` hands work to, started on first use
    and fed through a queue, one piece of work at a time. (A thread started per file, with a
    fresh stack each time, cost 7% of a cold run on the corpus and 5% of ``-j 1`` on
    torchvision+skorch+accelerate, measured A/B.) It keeps nothing of a piece of work once its
    outcome is handed back, so a file's trees are freed as before."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        old_size = threading.stack_size(DEEP_STACK_BYTES)
        try:
            threading.Thread(target=self._serve, name="torchlint-deep", daemon=True).start()
        finally:
            threading.stack_size(old_size)

    def run(self, fn: Callable[..., Any], args: tuple) -> Any:
        reply: queue.SimpleQueue = queue.SimpleQueue()  # per call: an interrupted wait leaves no stale answer
        self._requests.put((fn, args, reply))
        ok, value = reply.get()
        if ok:
            return value
        raise value

    def _serve(self) -> None:
        while True:
            fn, args, reply = self._requests.get()
            try:
                outcome = (True, fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                outcome = (False, exc)
            reply.put(outcome)
            del fn, args, reply, outcome  # nothing of this file outlives its answer


_deep: _DeepThread | None = None


def _deep_thread() -> _DeepThread | None:
    """This process's deep-stack thread (a forked child starts its own: threads do not
    survive ``fork``); None where none can start."""
    global _deep
    if _deep is None or _deep.pid != os.getpid():
        try:
            _deep = _DeepThread()
        except (ValueError, RuntimeError):  # no stack size setting, or "can't start new thread"
            _deep = None
    return _deep


def _encode_facts(ctx: FileContext) -> Facts:
    encoded = {}
    for code, value in ctx.facts.items():
        blob = _encoded(ctx, code, value, "facts")
        if blob is not None:
            encoded[code] = blob
    return Facts.from_encoded(encoded)


def _gathered(found: dict[str, Any]) -> Facts:
    """The demanded facts gathered on the ordinary pass (``Dispatcher.gather``), encoded for the
    record; a rule's that are None or not JSON are left out (asked, the file is analysed again)."""
    encoded = {}
    for code, value in found.items():
        if value is not None:
            try:
                encoded[code] = encode(value)
            except (TypeError, ValueError):
                continue
    return Facts.from_encoded(encoded)


def _encode_demanded(ctx: FileContext, rule: Rule, value: Any) -> Any:
    """``value`` as plain JSON (as facts are stored); None, reported, where it is not JSON."""
    blob = _encoded(ctx, rule.code, value, "demanded facts")
    return None if blob is None else json.loads(blob)


def _encoded(ctx: FileContext, code: str, value: Any, what: str) -> bytes | None:
    """``value`` as compact JSON (``project.encode``); None where it is not JSON-serialisable,
    a bug of rule ``code`` reported on the file, never fatal."""
    try:
        return encode(value)
    except (TypeError, ValueError) as exc:
        message, trace = describe(exc)
        ctx.errors.append(RuleError(code, ctx.path, f"{what} are not JSON-serialisable: {message}", trace))
        return None
