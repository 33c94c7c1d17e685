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

from typing import TYPE_CHECKING
from urllib.parse import unquote

from torchlint import __version__
from torchlint.errors import TorchlintError, UsageError
from torchlint.lsp_documents import FIX_ALL, MISSING, SOURCE, code_actions

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


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
