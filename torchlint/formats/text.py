"""The human formats: ``full`` (with a code frame, the default) and ``concise``."""

from __future__ import annotations

from torchlint.finding import Finding, Severity, escape_path, escape_text
from torchlint.notebook import place
from torchlint.reading import file_lines

BOLD, RED, YELLOW, CYAN, DIM, RESET = "\033[1m", "\033[31m", "\033[33m", "\033[36m", "\033[2m", "\033[0m"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color else text


def headline(f: Finding, color: bool = False, fixable: bool = False) -> str:
    """``path:line:col: CODE [name] message``, with ``[*]`` after the code when ``--fix``
    would fix the finding (``fixable``), as ruff marks it."""
    sev = RED if f.severity is Severity.ERROR else YELLOW
    cell, line, _ = place(f)
    where = f"{line}:{f.column}" if cell is None else f"cell {cell}:line {line}:{f.column}"
    loc = _paint(f"{escape_path(f.path)}:{where}:", BOLD, color)
    code = _paint(f.rule, BOLD + sev, color)
    mark = " [*]" if fixable else ""
    confirmed = ("" if not f.confirmed else " (confirmed by the dry run)" if "run" in f.extra
                 else " (confirmed by trace)")
    return f"{loc} {code}{mark} [{f.name}] {escape_text(f.message)}{confirmed}"


def fixable_note(report) -> str | None:
    """"[*] N fixable with --fix (M more with --unsafe-fixes)" under the summary ("M fixable
    with --fix --unsafe-fixes" when only unsafe fixes apply), or None."""
    settings, findings = report.settings, report.result.findings
    safe = sum(1 for f in findings if settings.applies_fix(f))
    unsafe = sum(1 for f in findings if settings.applies_fix(f, unsafe=True)) - safe
    if not safe:
        return f"{unsafe} fixable with --fix --unsafe-fixes" if unsafe else None
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
    return f"[*] {safe} fixable with --fix{more}"


def _summary_lines(report) -> list[str]:
    note = fixable_note(report)
    return [summary(report.result.findings, len(report.result.files)), *([note] if note else [])]


def summary(findings: list[Finding], files: int | None = None) -> str:
    """The last line of the text formats; with ``files``, how many files were checked."""
    checked = "" if files is None else f" Checked {files} file{'s' if files != 1 else ''}."
    if not findings:
        return "All checks passed!" + checked
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = len(findings) - errors
    n = len(findings)
    return (f"Found {n} problem{'s' if n != 1 else ''} ({errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''}).{checked}")


# A code frame shows at most FRAME_WIDTH characters of each source line: a window around
# the finding's column, with an ellipsis where the line goes on. A frame has at most
# FRAME_LINES source lines (the line before the finding, the finding's first lines, the
# line after).
FRAME_WIDTH = 200
FRAME_LINES = 6
ELLIPSIS = "\u2026"
TAB = "    "


def _window(length: int, start: int, width: int = FRAME_WIDTH) -> tuple[int, int]:
    """The ``[lo, hi)`` slice of a line of ``length`` characters to show: the whole line
    when it fits, else ``width`` characters with ``start`` (0-based) a third of the way in."""
    if length <= width:
        return 0, length
    lo = min(max(0, start - width // 3), length - width)
    return lo, lo + width


def _shown(text: str) -> str:
    """Source text as a frame shows it: tabs as spaces, anything unsafe escaped."""
    return escape_text(text.replace("\t", TAB))


def _frame_line(text: str, lo: int, hi: int) -> str:
    """``text[lo:hi]`` as shown, with an ellipsis on each side where the line goes on."""
    return (ELLIPSIS if lo > 0 else "") + _shown(text[lo:hi]) + (ELLIPSIS if hi < len(text) else "")


def frame(f: Finding, lines: list[str] | None, color: bool) -> str:
    """The lines around ``f`` (of a notebook, its joined cells), numbered as shown: in a
    notebook, by line of the finding's cell, from the cell's first line."""
    if not lines or f.line > len(lines):
        return ""
    offset = f.line - place(f)[1]  # joined line - shown line
    first = max(1, f.line - 1, offset + 1)
    last = min(len(lines), offset + f.extra.get("cell_lines", len(lines)),
               max(f.line, min(f.end_line, f.line + FRAME_LINES - 3)) + 1)
    width = len(str(last - offset))
    gutter = " " * width + " |"
    start = max(f.column - 1, 0)
    lo, hi = _window(max(len(lines[n - 1].rstrip()) for n in range(first, last + 1)), start)
    out = [_paint(gutter, CYAN, color)]
    for n in range(first, last + 1):
        text = lines[n - 1].rstrip()
        out.append(f"{_paint(str(n - offset).rjust(width) + ' |', CYAN, color)} {_frame_line(text, lo, hi)}".rstrip())
        if n == f.line:
            end = f.end_column - 1 if f.end_line == f.line else len(text)
            shown_start, shown_end = max(start, lo), min(max(end, start), hi)
            pad = int(lo > 0) + len(_shown(text[lo:shown_start]))
            carets = "^" * max(1, len(_shown(text[shown_start:shown_end])))
            out.append(f"{_paint(gutter, CYAN, color)} {' ' * pad}{_paint(carets + ' ' + f.rule, RED if f.severity is Severity.ERROR else YELLOW, color)}")
    out.append(_paint(gutter, CYAN, color))
    return "\n".join(out)


def render_full(report) -> str:
    lines_of = file_lines(report.cwd)
    blocks = []
    for f in report.result.findings:
        blocks.append(headline(f, report.color, report.settings.applies_fix(f)) + "\n"
                      + frame(f, lines_of(f.path), report.color) + "\n")
    if not report.quiet:
        blocks.append("\n".join(_summary_lines(report)))
    return "\n".join(blocks) + ("\n" if blocks else "")


def render_concise(report) -> str:
    lines = [headline(f, report.color, report.settings.applies_fix(f)) for f in report.result.findings]
    if not report.quiet:
        lines.extend(_summary_lines(report))
    return "\n".join(lines) + ("\n" if lines else "")


def statistics(report) -> list[dict]:
    """Findings per rule, the most first: ``code``, ``name``, ``severity``, ``count``,
    ``fixable`` (how many ``--fix`` would fix with this run's settings: ``fixable``,
    ``unfixable``, ``unsafe-fixes``) and ``fixable_unsafe`` (how many ``--fix
    --unsafe-fixes`` would)."""
    settings = report.settings
    rows: dict[str, dict] = {}
    for f in report.result.findings:
        row = rows.setdefault(f.rule, {"code": f.rule, "name": f.name, "severity": f.severity.value, "count": 0,
                                       "fixable": 0, "fixable_unsafe": 0})
        row["count"] += 1
        row["fixable"] += settings.applies_fix(f)
        row["fixable_unsafe"] += settings.applies_fix(f, unsafe=True)
    return sorted(rows.values(), key=lambda row: (-row["count"], row["code"]))


def fixable_column(row: dict) -> str:
    """``[*] 3 fixable`` (``--fix`` fixes 3 of the rule's findings), ``[*] 1 fixable (2 with
    --unsafe-fixes)``, ``[ ] 2 fixable with --unsafe-fixes``, or ``-`` (ruff's ``[*]``)."""
    safe, unsafe = row["fixable"], row["fixable_unsafe"]
    if safe:
        return f"[*] {safe} fixable" + (f" ({unsafe} with --unsafe-fixes)" if unsafe > safe else "")
    return f"[ ] {unsafe} fixable with --unsafe-fixes" if unsafe else "-"


def render_statistics(report) -> str:
    """``count  code  fixable  [name]`` per rule, tab-separated, then the summary line."""
    rows = statistics(report)
    lines = [f"{row['count']:>5}\t{row['code']}\t{fixable_column(row)}\t[{row['name']}]" for row in rows]
    if not report.quiet:
        lines.append(summary(report.result.findings, len(report.result.files)))
    return "\n".join(lines) + ("\n" if lines else "")
