"""``torchlint server``: a Language Server on stdio, built on pygls (``torchlint[lsp]``).

It publishes diagnostics for a Python document when it is opened, changed and saved (and
clears them when it is closed): each finding of ``torchlint.run.lint_text`` on the editor's
text, with the rule code, a link to the rule's page (``codeDescription.href``) and the
rule's severity. A document is linted with the settings ``torchlint check`` gives its file
(the configuration found from its directory), alone: the project's other files are not
read. A notebook's cell open in VS Code (a ``vscode-notebook-cell:`` document) is linted as
Python beside its notebook, its IPython syntax masked (``torchlint.notebook.mask_cell``);
a notebook opened as JSON text gets no diagnostics (``torchlint check`` lints it).

Quick fixes: a ``textDocument/codeAction`` feature registered in ``build_server`` beside the
document features, turning a diagnostic's finding into an edit, once findings carry fixes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from torchlint import __version__
from torchlint.errors import TorchlintError, UsageError
from torchlint.finding import Finding, Severity
from torchlint.formats import rule_url
from torchlint.notebook import cell_lines, is_notebook, mask_cell

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

SOURCE = "torchlint"
NOTEBOOK_CELL = "vscode-notebook-cell"  # the URI scheme of a notebook cell's document in VS Code
MISSING = "torchlint server needs pygls 2 (the language server library): pip install 'torchlint[lsp]'"


def diagnostic(finding: Finding) -> "types.Diagnostic":
    """One finding as an LSP diagnostic (0-based lines and characters; the end of a span
    that ends before it starts is its start)."""
    from lsprotocol import types

    start = types.Position(line=finding.line - 1, character=finding.column - 1)
    end = types.Position(line=max(finding.end_line, finding.line) - 1, character=max(finding.end_column - 1, 0))
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=finding.message,
        severity=types.DiagnosticSeverity.Error if finding.severity is Severity.ERROR else types.DiagnosticSeverity.Warning,
        code=finding.rule,
        code_description=types.CodeDescription(href=rule_url(finding.rule, finding.name)),
        source=SOURCE,
    )


def document_path(uri: str) -> Path:
    """The file a document's URI names; a document that is not a file (``untitled:``) is
    linted as a file of that name in the working directory."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri)
    if path is None:
        return Path.cwd().resolve() / (uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "untitled.py")
    return Path(path).resolve()


def lint_document(uri: str, text: str) -> list["types.Diagnostic"]:
    """The diagnostics of a document's ``text``."""
    from torchlint.run import lint_text

    parts = urlparse(uri)
    if parts.scheme == NOTEBOOK_CELL:  # one cell: Python, as a file beside its notebook
        notebook = Path(unquote(parts.path)).resolve()
        path = notebook.with_name(f"{notebook.name}.py")
        text = "".join(line + "\n" for line in mask_cell(cell_lines(text)))
    else:
        path = document_path(uri)
    if is_notebook(path.name):
        return []
    return [diagnostic(f) for f in lint_text(path, text.encode("utf-8", "surrogatepass")).findings]


def publish(server: "LanguageServer", uri: str) -> None:
    """Lint the document at ``uri`` as the editor holds it and publish its diagnostics; a
    configuration error is shown to the user (the document's diagnostics are cleared)."""
    from lsprotocol import types

    document = server.workspace.get_text_document(uri)
    try:
        found = lint_document(uri, document.source)
    except TorchlintError as exc:
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"torchlint: {exc}"))
        found = []
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=found))


def build_server() -> "LanguageServer":
    """The language server, its features registered (``MISSING`` without pygls)."""
    try:
        from lsprotocol import types
        from pygls.lsp.server import LanguageServer
    except ImportError:
        raise UsageError(MISSING) from None

    server = LanguageServer(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    return server


def serve() -> None:
    """Run the server on standard input and output until the client ends it."""
    build_server().start_io()
