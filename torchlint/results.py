"""What the analysis of one file gives (``FileResult``), and the result of a file that could
not be analysed. Nothing here parses: a run whose every file comes from the cache reads its
results without importing the engine (nor LibCST)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchlint.codes import SYNTAX_ERROR
from torchlint.finding import Finding, Span
from torchlint.project import FileRecord, module_name_for
from torchlint.rule import rule_info

if TYPE_CHECKING:
    from torchlint.errors import RuleError


@dataclass(frozen=True)
class ParseFailure:
    """Why a file could not be analysed, with a 1-based position."""

    message: str
    line: int = 1
    column: int = 1
    # CPython's grammar rejected the text (not a limit such as nesting): a newer grammar may not.
    grammar: bool = False


@dataclass
class FileResult:
    path: str
    findings: list[Finding]
    record: FileRecord
    errors: "list[RuleError]" = field(default_factory=list)
    # The cache's key of the file's bytes and settings (``Cache.key``), set by the run layer
    # where a cache is in use: what the project pass's memo is keyed by.
    key: str | None = None
    # True for a result read from the cache's run pack: ``record`` then holds only what the
    # run needs once the project pass is remembered (suppressions, cells); ``Cache.complete``
    # reads the whole record (imports, index, facts) from the file's own entry.
    light: bool = False
    # ``record.project_digest()``: as the run pack stored it for a light result (whose record
    # lacks what it is computed from), else computed on first use (``project_digest``).
    digest: str | None = None
    # What the rules of an analysis on demand gave (``demand_facts_of``: rule code -> its
    # demanded facts); None otherwise.
    demanded: Any = None

    def project_digest(self) -> str:
        """``FileRecord.project_digest`` of this file's record: the project pass's memo key."""
        if self.digest is not None:
            return self.digest
        if self.light:
            raise ValueError(f"a light result of {self.path} without its digest")
        self.digest = self.record.project_digest()  # a whole result's record is not changed after
        return self.digest


def unanalysed_result(record: FileRecord, failure: ParseFailure | None, enabled: frozenset[str]) -> FileResult:
    """The result of a file that could not be analysed: its TL000 finding where TL000 is
    enabled; the record says why either way (``FileRecord.unanalysed``: the run warns of it
    where TL000 is not enabled)."""
    failure = failure or ParseFailure("could not be analysed")
    where = f" (line {failure.line}, column {failure.column})" if failure.message.startswith("syntax error") else ""
    record.unanalysed = failure.message + where
    findings = []
    if SYNTAX_ERROR in enabled:
        message = f"{failure.message}; nothing in this file was checked"
        findings.append(Finding.at(rule_info(SYNTAX_ERROR), record.path, Span.point(failure.line, failure.column), message))
    return FileResult(record.path, findings, record)


def crashed_result(path: str, reason: str, enabled: frozenset[str]) -> FileResult:
    """The result for a file that could not be analysed at all (unreadable, or it crashed
    the process): a TL000 finding and an empty record."""
    record = FileRecord(path=path, module_name=module_name_for(path))
    return unanalysed_result(record, ParseFailure(reason), enabled)
