"""The language server's state: what the client set, which documents wait to be linted, what
was published (``torchlint server``; the LSP plumbing is ``torchlint.server``).

* **Keeping up with typing.** A change does not lint at once: the document waits
  ``DEBOUNCE`` seconds (each newer change restarts its wait) on one worker thread
  (``Scheduler``), which then lints the latest text. A result is published only if the
  document is still at the version that was linted; an older one is dropped, and the
  newer version's lint is already queued. So a burst of keystrokes costs one lint, of the
  last version.
* **A text that does not parse** (a line being typed) keeps the last diagnostics of a version
  that did, marked stale ("(stale: ...)"), beside the syntax error.
* **Notebooks** (LSP 3.17 notebook documents): the cells' texts are linted together, as
  ``torchlint check`` lints the ``.ipynb`` file, and each cell gets its own diagnostics.
* **Settings** from ``initializationOptions`` and ``workspace/configuration`` (section
  ``torchlint``): ``select``, ``extendSelect``, ``ignore`` (rule codes or prefixes, as on the
  command line), ``configuration`` (a ``torchlint.toml``/``pyproject.toml`` used for every
  file, as ``--config``) and ``unsafeFixes``. A change of them, or of a configuration file
  the client watches, lints every open document again.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from torchlint.errors import TorchlintError

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from torchlint.config import Configs

DEBOUNCE = 0.15  # seconds a changed document waits for the next keystroke before it is linted
STALE = "(stale: from the last version that parsed) "
_LINE = re.compile(r"\bline (\d+)\b")  # "after `model.eval()` (line 12)": a line the message names


@dataclass
class ClientSettings:
    """What the client asked for (``initializationOptions``, ``workspace/configuration``)."""

    select: list[str] | None = None
    extend_select: list[str] | None = None
    ignore: list[str] | None = None
    configuration: str | None = None
    unsafe_fixes: bool | None = None

    @classmethod
    def of(cls, options: Any) -> "ClientSettings":
        """From the client's JSON (a ``settings`` or ``torchlint`` object inside is read too);
        what is not of the right type is left out."""
        if isinstance(options, dict):
            options = options.get("settings", options.get("torchlint", options))
        if not isinstance(options, dict):
            return cls()

        def codes(key: str) -> list[str] | None:
            value = options.get(key)
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            return [str(v) for v in value] if isinstance(value, list) else None

        configuration = options.get("configuration")
        unsafe = options.get("unsafeFixes")
        return cls(codes("select"), codes("extendSelect"), codes("ignore"),
                   configuration if isinstance(configuration, str) and configuration else None,
                   unsafe if isinstance(unsafe, bool) else None)

    def configs(self, directory: Path) -> "Configs":
        """The settings of files in ``directory``: as ``torchlint check`` finds them, with the
        client's selection on top (``--select``...), or its configuration file for all."""
        from torchlint.config import Configs, build_settings, discover_configs

        cli = {"select": self.select, "extend-select": self.extend_select, "ignore": self.ignore}
        if self.configuration:
            path = Path(self.configuration).expanduser()
            if not path.is_file():
                raise TorchlintError(f"the configuration {self.configuration} set by the editor is no file")
            configs = Configs(build_settings(path, cli), cli, fixed=True)
        else:
            configs = discover_configs(directory, cli)
        if self.unsafe_fixes is not None:
            configs.base.unsafe_fixes = self.unsafe_fixes
        return configs


class Scheduler:
    """One worker thread lints documents: each the latest time it was asked for, once it
    waited ``delay`` seconds since (see the module docstring)."""

    def __init__(self, lint: Callable[[str], None], delay: float = DEBOUNCE):
        self.lint = lint
        self.delay = delay
        self._due: dict[str, float] = {}
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="torchlint-lint", daemon=True)
        self._thread.start()

    def request(self, uri: str, delay: float | None = None) -> None:
        with self._ready:
            self._due[uri] = time.monotonic() + (self.delay if delay is None else delay)
            self._ready.notify()

    def _work(self) -> None:
        while True:
            with self._ready:
                while True:
                    now = time.monotonic()
                    due = min(self._due.items(), key=lambda item: item[1], default=None)
                    if due is not None and due[1] <= now:
                        del self._due[due[0]]
                        break
                    self._ready.wait(None if due is None else due[1] - now)
            try:
                self.lint(due[0])
            except Exception:  # noqa: BLE001 - a failed lint must not end the worker
                pass


@dataclass
class Published:
    version: int | None
    diagnostics: list  # what the client was sent
    parsed: bool  # False: the text did not parse (the diagnostics hold stale ones)


@dataclass
class Session:
    """The server's state (see the module docstring)."""

    server: "LanguageServer"
    settings: ClientSettings = field(default_factory=ClientSettings)
    published: dict[str, Published] = field(default_factory=dict)
    good: dict[str, list] = field(default_factory=dict)  # uri -> diagnostics of the last version that parsed
    scheduler: Scheduler | None = None

    def start(self) -> None:
        self.scheduler = Scheduler(self.lint_now)

    # -- what is linted ---------------------------------------------------------------------
    def changed(self, uri: str, delay: float | None = None) -> None:
        """``uri`` changed (a text document, or a notebook): lint it once the typing paused."""
        if self.scheduler is None:
            self.lint_now(uri)
        else:
            self.scheduler.request(uri, delay)

    def relint_all(self) -> None:
        workspace = self.server.workspace
        for uri in [*workspace.text_documents, *workspace.notebook_documents]:
            if not self._cell_of_notebook(uri):
                self.changed(uri, delay=0)

    def _cell_of_notebook(self, uri: str) -> bool:
        return self.server.workspace.get_notebook_document(cell_uri=uri) is not None

    def lint_now(self, uri: str) -> None:
        """Lint ``uri`` as the editor holds it now and publish, unless it changed meanwhile."""
        workspace = self.server.workspace
        notebook = workspace.notebook_documents.get(uri)
        if notebook is not None:
            self._lint_notebook(notebook)
            return
        if self._cell_of_notebook(uri):  # its notebook is linted as a whole
            notebook = workspace.get_notebook_document(cell_uri=uri)
            self._lint_notebook(notebook)
            return
        document = workspace.text_documents.get(uri)
        if document is None:
            return
        version, text = document.version, document.source
        diagnostics, parsed = self.diagnose(uri, text)
        if document.version != version:
            return  # a newer version is queued
        self._publish(uri, version, diagnostics, parsed)

    def diagnose(self, uri: str, text: str) -> tuple[list, bool]:
        """The diagnostics of ``text`` at ``uri`` and whether it parsed; a configuration error
        is shown to the user once (no diagnostics then)."""
        from torchlint.lsp_documents import lint_document

        try:
            diagnostics, parsed = lint_document(uri, text, self.units, configs=self._configs_for(uri), parsed=True)
        except TorchlintError as exc:
            self._show(f"torchlint: {exc}")
            return [], True
        return [self._related(uri, d) for d in diagnostics], parsed

    def _configs_for(self, uri: str) -> "Configs":
        from torchlint.lsp_documents import linted_as

        return self.settings.configs(linted_as(uri, "")[0].parent)

    @property
    def units(self):
        return self.server.workspace.position_codec.client_num_units

    def _publish(self, uri: str, version: int | None, diagnostics: list, parsed: bool) -> None:
        from lsprotocol import types

        if parsed:
            self.good[uri] = diagnostics
        else:
            diagnostics = diagnostics + [_stale(d) for d in self.good.get(uri, [])]
        self.published[uri] = Published(version, diagnostics, parsed)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    def _show(self, message: str) -> None:
        from lsprotocol import types

        self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def _related(self, uri: str, d: "types.Diagnostic") -> "types.Diagnostic":
        """``d`` with a related location for each line its message names."""
        from lsprotocol import types

        related = [types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=types.Range(start=types.Position(line=int(m.group(1)) - 1, character=0),
                                                              end=types.Position(line=int(m.group(1)) - 1, character=0))),
            message=f"line {m.group(1)}, named in the message") for m in _LINE.finditer(d.message)]
        if related:
            d.related_information = related
        return d

    # -- notebooks ----------------------------------------------------------------------------
    def _lint_notebook(self, notebook: "types.NotebookDocument") -> None:
        """The cells linted together, as ``torchlint check`` lints the ``.ipynb`` file; each
        cell's diagnostics published to it (a cell without any gets an empty list)."""
        from lsprotocol import types

        from torchlint.lsp_documents import diagnostics_of, document_path

        workspace = self.server.workspace
        version = notebook.version
        cells, texts = [], []
        for cell in notebook.cells:
            document = workspace.text_documents.get(cell.document)
            text = document.source if document is not None else ""
            code = cell.kind == types.NotebookCellKind.Code
            cells.append({"cell_type": "code" if code else "markdown", "metadata": {}, "source": text,
                          **({"outputs": [], "execution_count": None} if code else {})})
            texts.append((cell.document, text))
        data = json.dumps({"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                           "nbformat_minor": 5}).encode("utf-8", "surrogatepass")
        path = document_path(notebook.uri)
        try:
            per_cell = diagnostics_of(path if path.suffix == ".ipynb" else path.with_suffix(".ipynb"), data, texts,
                                      self.units, self.settings.configs(path.parent))
        except TorchlintError as exc:
            self._show(f"torchlint: {exc}")
            per_cell = {}
        current = workspace.notebook_documents.get(notebook.uri)
        if current is not None and current.version != version:
            return  # a newer version is queued
        for cell_uri, _ in texts:
            found = per_cell.get(cell_uri, [])
            self.published[cell_uri] = Published(version, found, True)
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=found))

    # -- hover ---------------------------------------------------------------------------------
    def hover(self, uri: str, position: "types.Position") -> "types.Hover | None":
        """For a diagnostic of ours under the cursor: the rule, what it reports, its fix and a
        link to its page."""
        from lsprotocol import types

        from torchlint.formats import rule_url
        from torchlint.rule import rule_info

        published = self.published.get(uri)
        if published is None:
            return None
        here = (position.line, position.character)
        for d in published.diagnostics:
            start, end = (d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character)
            if not (start <= here <= end) or not isinstance(d.code, str):
                continue
            try:
                info = rule_info(d.code)
            except KeyError:
                continue
            fixes = " or ".join(info.fixable) if info.fixable else "none (the fix needs judgement)"
            text = (f"**{info.code} {info.name}** ({info.severity.value})\n\n{info.summary}\n\n"
                    f"Fix: {fixes}\n\n[Rule documentation]({rule_url(info.code, info.name)})")
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=d.range)
        return None

    # -- pull diagnostics ------------------------------------------------------------------------
    def report(self, uri: str) -> list:
        """``textDocument/diagnostic``: the diagnostics of the current version (linted now, or
        those published for it)."""
        workspace = self.server.workspace
        document = workspace.text_documents.get(uri)
        if document is None:
            return []
        published = self.published.get(uri)
        if published is not None and published.version == document.version and published.version is not None:
            return published.diagnostics
        version, text = document.version, document.source
        diagnostics, parsed = self.diagnose(uri, text)
        if not parsed:
            diagnostics = diagnostics + [_stale(d) for d in self.good.get(uri, [])]
        elif document.version == version:
            self.good[uri] = diagnostics
        return diagnostics


def _stale(d: "types.Diagnostic") -> "types.Diagnostic":
    from lsprotocol import types

    if d.message.startswith(STALE):
        return d
    return types.Diagnostic(range=d.range, message=STALE + d.message, severity=types.DiagnosticSeverity.Hint,
                            code=d.code, code_description=d.code_description, source=d.source, data=d.data,
                            tags=d.tags)
