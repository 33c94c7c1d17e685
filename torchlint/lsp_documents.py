"""What the language server answers for one document: its findings as LSP diagnostics (in the
client's code units), the fixes they carry, and the code actions (quick fix, fix all, noqa) --
everything ``torchlint.server`` and ``torchlint.lsp_session`` ask of a text, without pygls'
server (``lsprotocol`` types only)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable
from urllib.parse import unquote, urlparse

from torchlint.finding import Finding, Severity
from torchlint.formats import rule_url
from torchlint.notebook import cell_lines, is_notebook, mask_cell

if TYPE_CHECKING:
    from lsprotocol import types

    from torchlint.config import Configs, Settings
    from torchlint.fixes import Edit, Fix

SOURCE = "torchlint"
NOTEBOOK_CELL = "vscode-notebook-cell"  # the URI scheme of a notebook cell's document in VS Code
FIX_ALL = "source.fixAll.torchlint"
MISSING = "torchlint server needs pygls 2 (the language server library): pip install 'torchlint[lsp]'"
_NEWLINE = re.compile(r"\r\n?|\n")  # where spans (LibCST) break lines; not str.splitlines' form feeds


class Units:
    """Positions in a document's text as LSP gives them: 0-based lines, characters counted in
    the client's code units (``units(text)``: UTF-16 by default; None: code points)."""

    def __init__(self, text: str, units: Callable[[str], int] | None = None):
        self.lines = _NEWLINE.split(text)
        self.units = units or len

    def position(self, line: int, column: int) -> "types.Position":
        """The LSP position of 1-based ``line`` and code-point ``column``; past the end: the end."""
        from lsprotocol import types

        if line > len(self.lines):
            line, column = len(self.lines), len(self.lines[-1]) + 1
        text = self.lines[line - 1]
        return types.Position(line=line - 1, character=self.units(text[:max(column - 1, 0)]))

    def end(self) -> "types.Position":
        return self.position(len(self.lines), len(self.lines[-1]) + 1)


def diagnostic(finding: Finding, units: Units | None = None, fix: "Fix | None" = None) -> "types.Diagnostic":
    """One finding as an LSP diagnostic (0-based lines and characters, in ``units``' code
    units, else code points; the end of a span that ends before it starts is its start),
    carrying ``fix`` (the finding's, where the code actions offer it) in its ``data``."""
    from lsprotocol import types

    def position(line: int, column: int) -> types.Position:
        if units is None:
            return types.Position(line=line - 1, character=max(column - 1, 0))
        return units.position(line, column)

    start = position(finding.line, finding.column)
    end = position(max(finding.end_line, finding.line), finding.end_column)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=finding.message,
        severity=types.DiagnosticSeverity.Error if finding.severity is Severity.ERROR else types.DiagnosticSeverity.Warning,
        code=finding.rule,
        code_description=types.CodeDescription(href=rule_url(finding.rule, finding.name)),
        source=SOURCE,
        data={"fix": fix_data(fix, position)} if fix is not None else None,
    )


def fix_data(fix: "Fix", position: Callable[[int, int], "types.Position"]) -> dict:
    """A fix as a diagnostic carries it: its title (marked "(unsafe)" where it is) and its
    edits as ``[line, character, end line, end character, new text]`` in LSP positions
    (``position`` of a 1-based line and code-point column)."""
    edits = []
    for edit in fix.edits:
        start, end = position(edit.span.line, edit.span.column), position(edit.span.end_line, edit.span.end_column)
        edits.append([start.line, start.character, end.line, end.character, edit.content])
    title = fix.title + (" (unsafe)" if fix.applicability == "unsafe" else "")
    return {"title": title, "edits": edits}


def document_path(uri: str) -> Path:
    """The file a document's URI names; a document that is not a file (``untitled:``) is
    linted as a file of that name in the working directory."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri)
    if path is None:
        return Path.cwd().resolve() / (uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "untitled.py")
    return Path(path).resolve()


def linted_as(uri: str, text: str) -> tuple[Path, str, set[int]]:
    """The file a document is linted as, the Python text linted, and the 1-based lines of a
    notebook cell that its masking changed (no fix edits them)."""
    parts = urlparse(uri)
    if parts.scheme != NOTEBOOK_CELL:
        return document_path(uri), text, set()
    notebook = Path(unquote(parts.path)).resolve()  # one cell: Python, as a file beside its notebook
    lines = cell_lines(text)
    masked = mask_cell(lines)
    changed = {n for n, (old, new) in enumerate(zip(lines, masked), 1) if old != new}
    return notebook.with_name(f"{notebook.name}.py"), "".join(line + "\n" for line in masked), changed


def lint_document(uri: str, text: str, units: Callable[[str], int] | None = None, *, configs: "Configs | None" = None,
                  parsed: bool = False):
    """The diagnostics of a document's ``text`` (characters in ``units``, else code points),
    each with the fix that ``torchlint check --fix`` would apply to its file, with the
    settings ``configs`` gives (default: found as ``torchlint check`` finds them). With
    ``parsed``, ``(diagnostics, whether the text parsed)``."""
    from torchlint.codes import SYNTAX_ERROR
    from torchlint.config import discover_configs
    from torchlint.run import lint_text

    path, linted, masked = linted_as(uri, text)
    if is_notebook(path.name):
        return ([], True) if parsed else []
    configs = configs or discover_configs(path.parent)
    settings = configs.for_path(path)
    positions = Units(text, units)
    result = lint_text(path, linted.encode("utf-8", "surrogatepass"), configs)
    found = [diagnostic(f, positions, offered_fix(f, settings, masked)) for f in result.findings]
    if not parsed:
        return found
    whole = not any(f.rule == SYNTAX_ERROR and f.message.endswith("nothing in this file was checked")
                    for f in result.findings)
    return found, whole


def diagnostics_of(path: Path, data: bytes, cells: list[tuple[str, str]], units: Callable[[str], int] | None,
                   configs: "Configs") -> dict[str, list["types.Diagnostic"]]:
    """A notebook's diagnostics by cell document: ``data`` (its nbformat JSON) linted as the
    file at ``path``, each finding placed in its cell (``cells``: each cell's document URI
    and text, in order). No fixes: their edits are positions in the joined cells."""
    from torchlint.notebook import place
    from torchlint.run import lint_text

    found: dict[str, list] = {}
    for f in lint_text(path, data, configs).findings:
        cell, line, end_line = place(f)
        if cell is None or not 1 <= cell <= len(cells):
            continue
        uri, text = cells[cell - 1]
        placed = replace(f, line=line, end_line=end_line)
        found.setdefault(uri, []).append(diagnostic(placed, Units(text, units)))
    return found


def offered_fix(finding: Finding, settings: "Settings", masked: set[int]) -> "Fix | None":
    """``finding``'s fix where ``--fix`` would apply it with the file's ``settings``, unless it
    edits a line that a notebook cell's masking changed."""
    fix = finding.fix
    if fix is None or not settings.applies_fix(finding):
        return None
    if any(line in masked for e in fix.edits for line in _lines_replaced(e)):
        return None
    return fix


def _lines_replaced(edit: "Edit") -> range:
    """The lines whose text ``edit`` replaces, at least its first (an edit that ends at a
    line's first column leaves that line as it is)."""
    span = edit.span
    return range(span.line, max(span.end_line + (span.end_column > 1), span.line + 1))


# -- code actions ---------------------------------------------------------------------------

def wanted(only: list[str] | None, kind: str) -> bool:
    """Whether a request whose ``context.only`` is ``only`` asks for actions of ``kind``
    (``source`` asks for ``source.fixAll.torchlint``)."""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


def code_actions(uri: str, text: str, params: "types.CodeActionParams",
                 units: Callable[[str], int] | None = None) -> list["types.CodeAction"]:
    """The code actions for ``params``' diagnostics (those torchlint published) in the
    document at ``uri``, whose text is ``text``: each one's fix, a noqa comment for its line,
    and the fix-all action where it is asked for or a diagnostic has a fix."""
    from lsprotocol import types

    only = params.context.only
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and isinstance(d.code, str)]
    actions: list[types.CodeAction] = []
    if wanted(only, types.CodeActionKind.QuickFix):
        actions.extend(a for d in ours if (a := quick_fix(uri, d)) is not None)
        noqa: dict[tuple[str, int], types.Diagnostic] = {}
        for d in ours:
            noqa.setdefault((str(d.code), d.range.start.line), d)
        actions.extend(a for d in noqa.values() if (a := noqa_action(uri, text, d, units)) is not None)
    if (only is not None and wanted(only, FIX_ALL)) or (only is None and any(_fix_of(d) for d in ours)):
        action = fix_all(uri, text, units)
        if action is not None:
            actions.append(action)
    return actions


def _fix_of(d: "types.Diagnostic") -> dict | None:
    data = d.data
    return data.get("fix") if isinstance(data, dict) and isinstance(data.get("fix"), dict) else None


def _edit(uri: str, edits: list["types.TextEdit"]) -> "types.WorkspaceEdit":
    from lsprotocol import types

    return types.WorkspaceEdit(changes={uri: edits})


def quick_fix(uri: str, d: "types.Diagnostic") -> "types.CodeAction | None":
    """The fix a diagnostic carries, as a ``quickfix`` action."""
    from lsprotocol import types

    fix = _fix_of(d)
    if fix is None:
        return None
    edits = [types.TextEdit(range=types.Range(start=types.Position(line=a, character=b),
                                              end=types.Position(line=c, character=e)), new_text=text)
             for a, b, c, e, text in fix["edits"]]
    return types.CodeAction(title=fix["title"], kind=types.CodeActionKind.QuickFix,
                            diagnostics=[d], edit=_edit(uri, edits), is_preferred=True)


def noqa_action(uri: str, text: str, d: "types.Diagnostic",
                units: Callable[[str], int] | None = None) -> "types.CodeAction | None":
    """"Disable TLxxx for this line": the line's ``# noqa`` comment gets the code, as
    ``--add-noqa`` writes it (None where the line already has a blanket one, or a malformed
    one)."""
    from lsprotocol import types

    from torchlint.noqa import add_noqa

    new, edited, _ = add_noqa(text, {d.range.start.line + 1: {str(d.code)}})
    if not edited:
        return None
    old_lines, new_lines = _NEWLINE.split(text), _NEWLINE.split(new)
    index = next(i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b)
    positions = Units(text, units)
    rng = types.Range(start=positions.position(index + 1, 1),
                      end=positions.position(index + 1, len(old_lines[index]) + 1))
    return types.CodeAction(title=f"Disable {d.code} for this line", kind=types.CodeActionKind.QuickFix,
                            diagnostics=[d], edit=_edit(uri, [types.TextEdit(range=rng, new_text=new_lines[index])]))


def fix_all(uri: str, text: str, units: Callable[[str], int] | None = None) -> "types.CodeAction | None":
    """``source.fixAll.torchlint``: the document replaced by its text after ``--fix``'s loop;
    None when nothing changes (or for a notebook's cell or JSON)."""
    from lsprotocol import types

    from torchlint.run import fix_text

    if urlparse(uri).scheme == NOTEBOOK_CELL:
        return None
    path = document_path(uri)
    if is_notebook(path.name):
        return None
    data = text.encode("utf-8", "surrogatepass")
    fixed = fix_text(path, data)
    if fixed == data:
        return None
    positions = Units(text, units)
    edit = types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=positions.end()),
                          new_text=fixed.decode("utf-8", "surrogatepass"))
    return types.CodeAction(title="torchlint: Fix all auto-fixable problems", kind=FIX_ALL,
                            edit=_edit(uri, [edit]))
