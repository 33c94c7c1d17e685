"""``torchlint server``: a Language Server on stdio, built on pygls (``torchlint[lsp]``).

It publishes diagnostics for a Python document when it is opened, changed and saved (and
clears them when it is closed): each finding of ``torchlint.run.lint_text`` on the editor's
text, with the rule code, a link to the rule's page (``codeDescription.href``), the rule's
severity and a related location for each line the message names. A document is linted with
the settings ``torchlint check`` gives its file (the configuration found from its
directory, with what the client set on top: ``lsp_session.ClientSettings``), alone: the
project's other files are not read. Typing is debounced and only the latest version is
linted (``lsp_session``); a text that does not parse keeps the last good diagnostics,
marked stale. Documents sync incrementally. Notebook documents (LSP 3.17) are linted as
``torchlint check`` lints the ``.ipynb``, with diagnostics per cell; a notebook's cell sent
as a document of its own (a ``vscode-notebook-cell:`` URI) is linted as Python beside its
notebook, its IPython syntax masked (``torchlint.notebook.mask_cell``); a notebook opened
as JSON text gets no diagnostics. Hover on a diagnostic shows its rule, summary, fix and
page; pull diagnostics (``textDocument/diagnostic``, ``workspace/diagnostic``) answer with
the current version's.

Code actions (``textDocument/codeAction``), as ruff's server offers them:

* a ``quickfix`` for each diagnostic whose finding has a fix that ``torchlint check --fix``
  would apply to the file (its ``fixable``/``unfixable``; an unsafe fix only where the file's
  configuration sets ``unsafe-fixes = true``, its title then ending in "(unsafe)"). The fix
  travels in the diagnostic's ``data``, its edits already in the client's positions;
* ``source.fixAll.torchlint``: the document's text after ``--fix``'s loop
  (``run.fix_text``), offered when the client asks for that kind (``codeActionsOnSave``, the
  Source Action menu) or the cursor is on a fixable diagnostic;
* a ``quickfix`` "Disable TLxxx for this line" adding ``# noqa: TLxxx`` as ``--add-noqa`` does.

Positions are converted to the client's code units (UTF-16 unless it chose another encoding).
A notebook cell gets no fix-all, and no fix that edits a line its masking changed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable
from urllib.parse import unquote, urlparse

from torchlint import __version__
from torchlint.errors import TorchlintError, UsageError
from torchlint.finding import Finding, Severity
from torchlint.formats import rule_url
from torchlint.notebook import cell_lines, is_notebook, mask_cell

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

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


# A document the editor has not opened is read from disk up to this size (bounded.read_text:
# a FIFO or device is never opened for reading).
UNOPENED_LIMIT = 4_000_000


def document_text(server: "LanguageServer", uri: str) -> tuple[str, int | None] | None:
    """The text of the document at ``uri`` and its version: as the editor holds it where it
    is open, else read from disk without blocking (``torchlint.bounded``); None where it
    cannot be read (a FIFO, a device, too large, missing)."""
    from pygls.uris import to_fs_path

    from torchlint import bounded

    document = server.workspace.text_documents.get(unquote(uri))
    if document is not None:
        return document.source, document.version
    path = to_fs_path(uri)
    if path is None:
        return None
    try:
        return bounded.read_text(path, UNOPENED_LIMIT), None
    except OSError:
        return None


def build_server() -> "LanguageServer":
    """The language server, its features registered (``MISSING`` without pygls); its state
    (settings, scheduling, what was published) is a ``lsp_session.Session``."""
    try:
        from lsprotocol import types
        from pygls.lsp.server import LanguageServer
    except ImportError:
        raise UsageError(MISSING) from None

    from torchlint.lsp_session import ClientSettings, Session

    notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[
        types.NotebookDocumentFilterWithCells(notebook="jupyter-notebook",
                                              cells=[types.NotebookCellLanguage(language="python")])])
    server = LanguageServer(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                            notebook_document_sync=notebooks)
    session = Session(server)
    server.torchlint = session  # type: ignore[attr-defined]

    @server.feature(types.INITIALIZE)
    def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
        session.settings = ClientSettings.of(params.initialization_options)
        session.start()

    @server.feature(types.INITIALIZED)
    def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watched = capabilities is not None and capabilities.did_change_watched_files is not None \
            and capabilities.did_change_watched_files.dynamic_registration
        if watched:  # a configuration file edited outside the editor lints every open document again
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="torchlint-configuration", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    types.FileSystemWatcher(glob_pattern=f"**/{name}")
                    for name in ("pyproject.toml", "torchlint.toml", "requirements*.txt")]))]))
        _ask_configuration(ls, session)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        session.changed(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        session.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.workspace.text_documents:
            session.changed(uri, delay=0)
        else:  # never opened: read from disk, without blocking
            found = document_text(ls, uri)
            if found is not None:
                diagnostics, parsed = session.diagnose(uri, found[0])
                session._publish(uri, None, diagnostics, parsed)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        session.published.pop(uri, None)
        session.good.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: LanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        session.changed(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: LanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        session.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: LanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
        session.changed(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: LanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        for cell in params.cell_text_documents:
            session.published.pop(cell.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        return session.hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True))
    @server.thread()
    def pull(ls: LanguageServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        return types.RelatedFullDocumentDiagnosticReport(items=session.report(params.text_document.uri))

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    @server.thread()
    def pull_all(ls: LanguageServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        items = []
        for uri, document in list(ls.workspace.text_documents.items()):
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=document.version,
                                                                     items=session.report(uri)))
        return types.WorkspaceDiagnosticReport(items=items)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration_changed(ls: LanguageServer, params: types.DidChangeConfigurationParams) -> None:
        if params.settings:
            session.settings = ClientSettings.of(params.settings)
            session.relint_all()
        else:
            _ask_configuration(ls, session)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_changed(ls: LanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        session.relint_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        found_text = document_text(ls, uri)
        if found_text is None:
            return None
        try:
            return code_actions(uri, found_text[0], params, ls.workspace.position_codec.client_num_units) or None
        except TorchlintError as exc:
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"torchlint: {exc}"))
            return None

    return server


def _ask_configuration(ls: "LanguageServer", session) -> None:
    """Ask the client for the ``torchlint`` section of its settings, where it answers such
    requests (``workspace/configuration``), then lint every open document again with them."""
    from lsprotocol import types

    from torchlint.lsp_session import ClientSettings

    workspace = ls.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return

    def answered(future) -> None:
        try:
            result = future.result()
        except Exception:  # noqa: BLE001 - a client that cannot answer keeps the settings it gave
            return
        if result and result[0] is not None:
            session.settings = ClientSettings.of(result[0])
            session.relint_all()

    future = ls.workspace_configuration(types.ConfigurationParams(items=[types.ConfigurationItem(section=SOURCE)]))
    if hasattr(future, "add_done_callback"):
        future.add_done_callback(answered)


def serve() -> None:
    """Run the server on standard input and output until the client ends it. The frames are
    read by ``torchlint.lsp_frames`` (a badly framed message is answered with a JSON-RPC
    error and reading goes on at the next header; pygls alone would fall silent)."""
    import sys

    from torchlint import speedups
    from torchlint.lsp_frames import Framer, FramedStdin, LockedOutput

    speedups.enable()  # the server's process is its own (``torchlint.speedups``)
    output = LockedOutput(sys.stdout.buffer)
    stdin = FramedStdin(Framer(sys.stdin.fileno()), lambda error: output.write(error.response()))
    build_server().start_io(stdin, output)  # type: ignore[arg-type]
