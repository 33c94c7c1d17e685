"""``sarif``: SARIF 2.1.0, as GitHub code scanning (and other SARIF viewers) read it.

One run. ``tool.driver.rules`` describes every enabled rule from its catalog page (``help``:
the page's body as Markdown, which GitHub renders, and as plain text); each finding is a
result with a ``%SRCROOT%``-relative location (``%SRCROOT%`` is the working directory, so run
torchlint from the repository root) and two partial fingerprints: ``primaryLocationLineHash``,
computed exactly as GitHub's upload computes it (``torchlint.formats.linehash``), and
``torchlint/v1``, the stable fingerprint that baselines and ``--format json`` use. Files that could not be parsed are TL000 results and also tool execution
notifications; internal rule errors, paths that do not exist (``E902``, which have no file to
point at: notifications only) and fixes that could not be written are notifications and make
the execution unsuccessful (the run exits 2). At most ``RESULTS_LIMIT`` (25,000, GitHub's
limit per run) results are kept, errors first then by position, and a warning notification
says how many were left out. Each rule's ``fullDescription`` is complete sentences (the
page's first paragraph, with the list its colon introduces); TL016 is a ``security`` rule
with a ``security-severity``.
Columns count Unicode code points (``columnKind``), 1-based, end column exclusive.
A finding with a fix carries it in ``fixes`` (``artifactChanges``/``replacements``, and its
applicability, safe or unsafe, in the fix's ``properties``).
Artifact URIs percent-encode the path's raw bytes (a file name that is not UTF-8 keeps every
byte); paths inside message texts are escaped as in the text formats.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote

from torchlint import __version__, catalog
from torchlint.fingerprint import for_run
from torchlint.finding import Finding, Severity, escape_path
from torchlint.formats import INFORMATION_URI, rule_url
from torchlint.formats.linehash import hashes_for, line_hash, notebook_places_for
from torchlint.notebook import place
from torchlint.codes import IO_ERROR, UNSAFE_CHECKPOINT_LOAD
from torchlint.rule import Rule, all_rules
from torchlint.ruleinfo import shown_summary

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "torchlint/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def help_uri(rule: type[Rule]) -> str:
    return rule_url(rule.code, rule.name)


def _page_body(rule: type[Rule]) -> str:
    """The catalog page without its ``# CODE name`` title line."""
    try:
        text = catalog.page(rule.code, rule.name)
    except OSError:
        return rule.summary
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip() + "\n"


_FENCE = re.compile(r"^```[a-z]*\n(.*?)^```\n?", re.MULTILINE | re.DOTALL)
# Link text may hold balanced brackets itself (``[`np.array([False]).all() is False` fails](url)``).
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\(([^)\s]+)\)")
_EMPHASIS = re.compile(r"(?<![\\*])\*\*?([^*\n]+?)\*\*?(?!\*)")


def plain_text(markdown: str) -> str:
    """A catalog page's Markdown as plain text: headings without ``#``, code blocks indented
    by four spaces without fences (their code untouched), links as ``text (url)``, no
    backticks or emphasis marks in the prose."""
    out, end = [], 0
    for block in _FENCE.finditer(markdown):
        out.append(_plain_prose(markdown[end:block.start()]))
        out.append("".join(f"    {line}" if line.strip() else line for line in block.group(1).splitlines(keepends=True)))
        end = block.end()
    out.append(_plain_prose(markdown[end:]))
    return "".join(out)


def _plain_prose(text: str) -> str:
    text = re.sub(r"^#{1,6} +", "", text, flags=re.MULTILINE)
    text = _LINK.sub(r"\1 (\2)", text)
    text = _EMPHASIS.sub(r"\1", text)
    return text.replace("`", "").replace("\\*", "*")


# A full description longer than this with its list (TL004's watched values) keeps the
# first paragraph's complete sentences; the list is in ``help``.
FULL_DESCRIPTION_LIMIT = 1200
_ITEM = re.compile(r"^[-*] +(.*)")


def _list_after_first_paragraph(section: str) -> list[str]:
    """The items of the list that follows the section's first paragraph, each on one line."""
    lines = section.splitlines()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].strip():
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    items: list[str] = []
    for line in lines[i:]:
        item = _ITEM.match(line)
        if item:
            items.append(item.group(1).strip())
        elif items and line.strip() and line[:1] in " \t":
            items[-1] += " " + line.strip()
        else:
            break
    return items


def full_description_markdown(rule: type[Rule]) -> str:
    """The first paragraph of the page's "What it does", as complete sentences: a paragraph
    that ends in a colon takes the list after it ("Reports ...: a; b; c."), or, where that
    would run past ``FULL_DESCRIPTION_LIMIT``, keeps its sentences before the one with the
    colon (that sentence ending in a full stop when it is the only one). The summary when
    the page has no such paragraph."""
    try:
        section = catalog.sections(catalog.page(rule.code, rule.name)).get("What it does", "")
    except OSError:
        section = ""
    text = catalog.first_paragraph(section)
    if not text:
        text = shown_summary(rule.summary)
    elif text.endswith(":"):
        items = [item.rstrip(";,. ") for item in _list_after_first_paragraph(section)]
        joined = f"{text} {'; '.join(items)}." if items else ""
        if items and len(joined) <= FULL_DESCRIPTION_LIMIT:
            text = joined
        else:
            head, dot, _ = text.rpartition(". ")
            text = head + dot.strip() if head else text[:-1] + "."
    return text if text.endswith((".", "!", "?", ")")) else text + "."


def full_description(rule: type[Rule]) -> dict:
    markdown = full_description_markdown(rule)
    return {"text": " ".join(_plain_prose(markdown).split()), "markdown": markdown}


# GitHub code scanning's "Security" rules, by code: security-severity is a CVSS-like score as
# a string (7.0-8.9 "high"). TL016: a crafted checkpoint runs code when it is loaded.
SECURITY_SEVERITY = {UNSAFE_CHECKPOINT_LOAD: "7.5"}


def rule_descriptor(rule: type[Rule]) -> dict:
    level = _LEVEL[rule.severity]
    body = _page_body(rule)
    tags = list(getattr(rule, "tags", None) or ("pytorch", "correctness"))
    security = SECURITY_SEVERITY.get(rule.code)
    if security is not None and "security" not in tags:
        tags.append("security")
    precision = getattr(rule, "precision", None) or "high"
    problem_severity = getattr(rule, "problem_severity", None) or level
    properties = {
        "tags": tags,
        "precision": precision,
        # GitHub reads the literal key "problem.severity" (as CodeQL writes it); the nested
        # form is for readers that follow the documentation's dotted path.
        "problem.severity": problem_severity,
        "problem": {"severity": problem_severity},
    }
    if security is not None:
        properties["security-severity"] = security
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": shown_summary(rule.summary)},
        "fullDescription": full_description(rule),
        "help": {"text": plain_text(body), "markdown": body},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": level, "enabled": bool(rule.default_enabled)},
        "properties": properties,
    }


def _artifact(path: str) -> dict:
    if os.path.isabs(path):  # a file outside the working directory
        return {"uri": Path(path).as_uri()}  # percent-encodes os.fsencode(path)
    return {"uri": quote(os.fsencode(path), safe="/"), "uriBaseId": SRCROOT}


def _region(f: Finding, raw: tuple[int, int, int, int] | None = None) -> dict:
    """The finding's region; in a notebook, ``raw``: where its lines are in the notebook's
    JSON (``linehash.notebook_places_for``), else the lines of its cell."""
    if raw is not None:
        line, column, end_line, end_column = raw
        end_line = max(end_line, line)
        return {"startLine": line, "startColumn": column, "endLine": end_line,
                "endColumn": max(end_column, column) if end_line == line else end_column}
    _, line, end_line = place(f)
    end_line = max(end_line, line)
    end_column = max(f.end_column, f.column) if end_line == line else max(f.end_column, 1)
    return {"startLine": line, "startColumn": f.column, "endLine": end_line, "endColumn": end_column}


def _location(f: Finding, raw: tuple[int, int, int, int] | None = None) -> dict:
    return {"physicalLocation": {"artifactLocation": _artifact(f.path), "region": _region(f, raw)}}


def _fix(f: Finding) -> dict:
    """The finding's fix as a SARIF ``fix``: one artifact change whose replacements are the
    fix's edits (an empty region inserts), its applicability in ``properties``."""
    fix = f.fix
    replacements = [{
        "deletedRegion": {"startLine": e.span.line, "startColumn": e.span.column,
                          "endLine": e.span.end_line, "endColumn": e.span.end_column},
        "insertedContent": {"text": e.content},
    } for e in fix.edits]
    return {
        "description": {"text": fix.title},
        "artifactChanges": [{"artifactLocation": _artifact(f.path), "replacements": replacements}],
        "properties": {"applicability": fix.applicability},
    }


# GitHub code scanning rejects a run with more results than this (and shows the first 5,000
# by severity); a report keeps the first RESULTS_LIMIT (``kept``) and says how many it left out.
RESULTS_LIMIT = 25_000
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1}


def omitted(findings: list[Finding], limit: int = RESULTS_LIMIT) -> int:
    """How many of ``findings`` a SARIF report leaves out (past ``limit`` results; ``E902``
    findings are notifications, not results)."""
    return max(0, sum(1 for f in findings if f.rule != IO_ERROR) - limit)


def kept(findings: list[Finding], limit: int = RESULTS_LIMIT) -> set[int]:
    """The indices of the findings a SARIF report keeps as results: at most ``limit``, the
    first by severity (errors first), then by position (path, line, column)."""
    candidates = [i for i, f in enumerate(findings) if f.rule != IO_ERROR]
    if len(candidates) > limit:
        candidates = sorted(candidates, key=lambda i: (_RANK[findings[i].severity], findings[i].sort_key))[:limit]
    return set(candidates)


def build(report, limit: int = RESULTS_LIMIT) -> dict:
    result = report.result
    findings: list[Finding] = result.findings
    enabled = set(report.settings.enabled) | {f.rule for f in findings}
    rules = [r for r in all_rules() if r.code in enabled]
    index = {r.code: i for i, r in enumerate(rules)}

    results = []
    line_hashes = hashes_for(report.cwd)
    notebook_places = notebook_places_for(report.cwd)
    keep = kept(findings, limit)
    for i, (f, fingerprint) in enumerate(zip(findings, for_run(findings, report.cwd))):
        if i not in keep:
            continue
        prints = {FINGERPRINT_KEY: fingerprint}
        cell = place(f)[0]
        # a notebook's finding points at the line of its JSON file where the cell's source line is
        raw = notebook_places(f) if cell is not None else None
        github = line_hash(line_hashes(f.path), raw[0] if raw is not None else f.line) \
            if cell is None or raw is not None else None
        if github is not None:  # else GitHub's upload computes it, if it can read the file
            prints["primaryLocationLineHash"] = github
        item = {
            "ruleId": f.rule,
            "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [_location(f, raw)],
            "partialFingerprints": prints,
        }
        if f.rule in index:
            item["ruleIndex"] = index[f.rule]
        properties = {"confirmedByTrace": f.confirmed} if f.confirmed is not None else {}
        if cell is not None:
            properties["cell"] = cell
        if properties:
            item["properties"] = properties
        if f.fix is not None and cell is None:  # a notebook's edits are in its cells, not in its JSON's lines
            item["fixes"] = [_fix(f)]
        results.append(item)

    notifications = []
    for f in result.failed_files:
        note = {
            "level": "error",
            "message": {"text": f"{escape_path(f.path)}: {f.message}"},
            "locations": [_location(f)],
            "descriptor": {"id": f.rule},
        }
        if f.rule in index:
            note["associatedRule"] = {"id": f.rule, "index": index[f.rule]}
        notifications.append(note)
    for err in result.errors:
        notifications.append({
            "level": "error",
            "message": {"text": f"rule {err.rule} failed on {escape_path(err.path)}: {err.error}"},
            "descriptor": {"id": "internal-error"},
        })
    missing = [f for f in findings if f.rule == IO_ERROR]
    for f in missing:  # no artifact to point at: a notification, not a result
        notifications.append({
            "level": "error",
            "message": {"text": f"{escape_path(f.path)}: {f.message}"},
            "descriptor": {"id": IO_ERROR},
        })
    failures = list(getattr(report, "failures", None) or ())
    for failure in failures:
        notifications.append({"level": "error", "message": {"text": escape_path(failure)},
                              "descriptor": {"id": "fix-error"}})
    left_out = omitted(findings, limit)
    if left_out:
        notifications.append({
            "level": "warning",
            "message": {"text": f"{left_out:,} result(s) left out: GitHub code scanning accepts at most {limit:,} "
                                f"results per run; this report keeps the first {limit:,}, errors first, then by "
                                "file and position"},
            "descriptor": {"id": "results-limit"},
        })

    invocation: dict = {"executionSuccessful": not (result.errors or missing or failures)}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications

    driver = {
        "name": "torchlint",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [rule_descriptor(r) for r in rules],
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": report.cwd.as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(report) -> str:
    return json.dumps(build(report), indent=2, ensure_ascii=False) + "\n"
