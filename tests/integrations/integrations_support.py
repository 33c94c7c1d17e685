"""Helpers for the integration tests (output formats, baselines, pre-commit, README).

Projects with findings are built from the rule catalog: every rule's ``## Example`` blocks,
each as ``<code>_<n>/train.py``, so these tests cover every rule that exists. (A module with a
name of its own, not ``conftest``: tests import it, and other test folders may have a
conftest too.)
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from torchlint import catalog
from torchlint.rule import all_rules

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_NAME = "sarif-schema-2.1.0.json"
BUNDLED_SCHEMA = REPO_ROOT / "tests" / "data" / SCHEMA_NAME

CLEAN_SOURCE = "import torch\n\n\ndef double(x):\n    return x * 2\n"
# Rules a static run can report (TL100 comes from the shape trace, tested in tests/trace).
RULES = [r for r in all_rules() if not r.traced]


def schema_candidates() -> list[Path]:
    found = []
    env = os.environ.get("TORCHLINT_SARIF_SCHEMA")
    if env:
        found.append(Path(env))
    # ``<repo>/../shared/sarif/`` (CI: a fresh clone with shared/ beside it), then further up
    # (e.g. a git worktree one level deeper).
    for directory in REPO_ROOT.parents:
        found.append(directory / "shared" / "sarif" / SCHEMA_NAME)
    # The copy shipped with the tests (the OASIS schema, errata 01, unchanged), so that the
    # README's test command passes on a fresh clone with nothing beside it.
    found.append(BUNDLED_SCHEMA)
    return found


def example_blocks(rule) -> list[str]:
    sections = catalog.sections(catalog.page(rule.code, rule.name))
    return catalog.code_blocks(sections.get("Example", ""))


def fix_blocks(rule) -> list[str]:
    sections = catalog.sections(catalog.page(rule.code, rule.name))
    return catalog.code_blocks(sections.get("Use instead", ""))


def write_examples(root: Path, rules=None, header: str = "") -> dict[str, str]:
    """Every Example block of each rule as ``<root>/<code>_<n>/train.py``; returns
    {relative path: rule code}."""
    written = {}
    for rule in RULES if rules is None else rules:
        for n, block in enumerate(example_blocks(rule)):
            rel = f"{rule.code.lower()}_{n}/train.py"
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(header + block, encoding="utf-8")
            written[rel] = rule.code
    return written


@dataclass
class Run:
    code: int
    out: str
    err: str


# -- the README section ------------------------------------------------------------------

START, END = "<!-- integrations:start -->", "<!-- integrations:end -->"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def readme_section() -> str:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text, "README.md lacks the integrations markers"
    return text[text.index(START) + len(START):text.index(END)]


def readme_blocks(language: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(readme_section()) if lang == language]


def torchlint_argv(command: str) -> list[str]:
    """``torchlint check ...`` from a README snippet, as CLI arguments (a comment dropped)."""
    words = shlex.split(command, comments=True)
    assert words and words[0] == "torchlint", command
    return words[1:]
