#!/usr/bin/env python3
"""Scaffold a new rule: every file it needs, with placeholders the tests flag until filled.

    python tools/new_rule.py TL007 unregistered-module --severity warning \\
        --summary "A layer kept in a plain list or dict is not registered"

writes

    torchlint/checks/tl007_unregistered_module.py   the Rule subclass: the rule alone
    rules/TL007-unregistered-module.md              the catalog page, its six headings
    tests/rules/cases/tl007_unregistered_module.py  its cases, VALID/INVALID empty
    fixtures/buggy_project/tl007_unregistered_module.py
                                                    where the buggy project shows the bug

and regenerates the README tables, the page's Options block and the rule registry
(torchlint/registry.py) with tools/generate.py.
Until the placeholders are filled, tests/test_rule_cases.py (too few cases, the page's
Example not reported) and tests/test_fixtures.py (no finding in fixtures/buggy_project) fail.
Tests beyond the cases (several files, options) go in tests/rules/test_<module>.py where a
rule needs them. Modelled on ruff's scripts/add_rule.py.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = re.compile(r"TL\d{3}")
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def paths(repo: Path, code: str, name: str) -> dict[str, Path]:
    stem = f"{code.lower()}_{name.replace('-', '_')}"
    return {
        "rule": repo / "torchlint" / "checks" / f"{stem}.py",
        "page": repo / "rules" / f"{code}-{name}.md",
        "cases": repo / "tests" / "rules" / "cases" / f"{stem}.py",
        "fixture": repo / "fixtures" / "buggy_project" / f"{stem}.py",
    }


def rule_module(code: str, name: str, severity: str, summary: str, enabled: bool) -> str:
    return f'''"""{code} {name}: {summary}

TODO: how the rule finds it, for maintainers (what it tracks, what it leaves alone); the
user-facing description is rules/{code}-{name}.md.
"""

from __future__ import annotations

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Option, Rule


class {class_name(name)}(Rule):
    code = "{code}"
    name = "{name}"
    severity = Severity.{severity.upper()}
    default_enabled = {enabled}
    summary = {summary!r}
    # [tool.torchlint.{name}]; the page's Options block is generated from this.
    options: dict[str, Option] = {{}}
    # Substrings one of which a file must contain for the rule to fire (skips the rest).
    requires_text: tuple[str, ...] = ()

    # TODO: the logic; its cases are tests/rules/cases/{code.lower()}_{name.replace("-", "_")}.py. The engine
    # walks each file once and calls visit_<Node>/leave_<Node>; report with
    # self.report(node, message). See CONTRIBUTING.md.
    # def visit_Call(self, node: cst.Call) -> None:
    #     ...
'''


def page(code: str, name: str, summary: str) -> str:
    return f"""# {code} {name}

## What it does
TODO: what the rule reports, in one paragraph; the summary says: {summary}

## Why is this bad?
TODO: what goes wrong in training when this code runs.

## Example
```python
# TODO: code that {code} reports
```

## Use instead
```python
# TODO: the same code, fixed
```

## Fix safety
TODO: the fix the rule attaches (`fixable`), safe or unsafe and why; or why no single
mechanical edit is right (then: no fix).

## Options
<!-- options:start -->
This rule has no options.
<!-- options:end -->

## References
- TODO
"""


def cases_module(code: str, name: str) -> str:
    return f'''"""{code}'s cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid

# TODO: at least 8 of each (tests/test_rule_cases.py counts them).
VALID: list[Valid | str] = [
    # Code that must stay silent, each a trap: "...", or Valid("...", path=..., options=...).
]

INVALID: list[Invalid] = [
    # Invalid("...", lines=(N,), messages=("the exact message",)), one message per finding;
    # fixed="..." (the whole file after the fix) where the findings carry a fix.
]
'''


def fixture(code: str, name: str) -> str:
    return f'''"""TODO({code} {name}): code with the bug {code} reports, so that fixtures/buggy_project
has a finding for every rule (tests/test_fixtures.py). Or put the bug in model.py or train.py
and delete this file."""
'''


def refuse(message: str) -> None:
    raise SystemExit(f"new_rule.py: {message}")


def main(argv: list[str] | None = None, repo: Path = REPO) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="TL followed by three digits, e.g. TL007")
    parser.add_argument("name", help="kebab-case, e.g. unregistered-module")
    parser.add_argument("--severity", choices=("error", "warning"), default="warning")
    parser.add_argument("--summary", default="TODO: one line, shown by `torchlint rules`")
    parser.add_argument("--off", action="store_true", help="not enabled by default")
    args = parser.parse_args(argv)

    code, name = args.code, args.name
    if not CODE.fullmatch(code):
        refuse(f"malformed code {code!r}: TL followed by three digits, e.g. TL007")
    if not NAME.fullmatch(name):
        refuse(f"malformed name {name!r}: lower-case words joined by '-', e.g. unregistered-module")
    if "|" in args.summary or "\n" in args.summary:
        refuse("the summary is one line without '|' (it goes into the README table)")

    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from torchlint import checks

    for rule in checks.discover():
        if rule.code == code:
            refuse(f"{code} is taken by {rule.code} {rule.name}")
        if rule.name == name:
            refuse(f"{name} is taken by {rule.code} {rule.name}")
    targets = paths(repo, code, name)
    for path in targets.values():
        if path.exists():
            refuse(f"{path.relative_to(repo)} exists")
    if any((repo / "rules").glob(f"{code}-*.md")):
        refuse(f"rules/ has a page for {code}")

    contents = {
        "rule": rule_module(code, name, args.severity, args.summary, not args.off),
        "page": page(code, name, args.summary),
        "cases": cases_module(code, name),
        "fixture": fixture(code, name),
    }
    for key, path in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(contents[key], encoding="utf-8")
        print(f"created {path.relative_to(repo)}")

    importlib.invalidate_caches()
    checks._discover.cache_clear()
    if code not in {r.code for r in checks.discover()}:  # pragma: no cover - a template bug
        refuse(f"{code} was written but is not discovered")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate import update

    for path in update(repo):
        print(f"updated {path.relative_to(repo)}")
    print(f"next: write {code}'s logic and cases, fill the TODOs in the files above, then run the tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
