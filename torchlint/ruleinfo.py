"""What a run knows of a rule without importing it: its options (``Option``) and its
metadata (``RuleInfo``), as the generated registry (``torchlint/registry.py``) lists them."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchlint.filekinds import is_test_file
from torchlint.finding import Severity

if TYPE_CHECKING:
    from torchlint.rule import Rule


@dataclass(frozen=True)
class Option:
    """A per-rule option, set under ``[tool.torchlint.<rule-name>]``."""

    default: Any
    kind: type | tuple[type, ...]
    description: str
    # For list options: the type of each item.
    item_kind: type | None = None


# Letters whose English names start with a vowel sound: an abbreviation read letter by letter
# takes "an" (an nn.Module, an F.dropout call).
_AN_LETTERS = set("aefhilmnorsx")


def _article(word: str) -> str:
    """"A" or "An" before ``word`` (code): its leading letters read as a word (a
    load_state_dict call), or letter by letter when they are an abbreviation (an nn.Module)."""
    lead = ""
    for char in word:
        if not char.isalpha():
            break
        lead += char.lower()
    abbreviation = len(lead) <= 2 or not any(c in "aeiouy" for c in lead)
    if abbreviation:
        return "An" if lead[:1] in _AN_LETTERS else "A"
    return "An" if lead[:1] in "aeio" else "A"


def shown_summary(summary: str) -> str:
    """A rule's summary as every report shows it (``torchlint rules``, the README's table,
    SARIF, JSON): starting with a capital. A plain first word is capitalised (``a layer or
    tensor ...`` -> ``A layer or tensor ...``); one that is code, whose case is its spelling
    (``nn.Module``, ``F.dropout``, ``x.to()``, ``snake_case``), keeps it and gets an article
    when it starts in lower case (``An nn.Module layer ...``). The rest is as written."""
    first = summary.split(" ", 1)[0]
    if not first or first[0].isupper():
        return summary
    if any(mark in first for mark in "._()[]") or any(c.isupper() for c in first[1:]):
        return _article(first) + " " + summary
    return summary[0].upper() + summary[1:]


def skips_tests(skips_test_files: bool, path: str, options: dict[str, Any]) -> bool:
    """Whether a rule that ``skips_test_files`` reports nothing in ``path`` with ``options``."""
    return skips_test_files and bool(options.get("skip-tests", True)) and is_test_file(path)


def default_options(options: dict[str, Option]) -> dict[str, Any]:
    """Each option's default (a fresh list for a list option)."""
    return {k: (list(v.default) if isinstance(v.default, list) else v.default) for k, v in options.items()}


@dataclass(frozen=True)
class RuleInfo:
    """What a run needs of a rule to configure it and report on it (its metadata), without
    importing it: a run whose every file comes from the cache never imports the rule modules
    nor LibCST. Each rule's is written out from its class (``RuleInfo.of``) into
    ``torchlint/registry.py`` by ``tools/generate.py``; ``tests/rules/test_registry.py``
    checks that the two agree. ``load`` imports the class itself."""

    code: str
    name: str
    module: str  # the rule's module (``torchlint.checks.tl001_missing_zero_grad``)
    class_name: str
    summary: str
    severity: Severity = Severity.WARNING
    default_enabled: bool = True
    options: dict[str, Option] = field(default_factory=dict)
    traced: bool = False
    skips_test_files: bool = False
    fixable: tuple[str, ...] = ()
    project_pass: bool = False

    @classmethod
    def of(cls, rule: type[Rule]) -> "RuleInfo":
        return cls(rule.code, rule.name, rule.__module__, rule.__name__, rule.summary,
                   rule.severity, rule.default_enabled, dict(rule.options), rule.traced, rule.skips_test_files,
                   tuple(rule.fixable), rule.has_project_pass())

    def load(self) -> type[Rule]:
        return getattr(importlib.import_module(self.module), self.class_name)

    def skips(self, path: str, options: dict[str, Any]) -> bool:
        return skips_tests(self.skips_test_files, path, options)

    def has_project_pass(self) -> bool:
        return self.project_pass

    def default_options(self) -> dict[str, Any]:
        return default_options(self.options)


