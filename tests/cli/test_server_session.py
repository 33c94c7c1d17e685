"""The language server as an editor drives it, through pygls' own client: a burst of typing
(only the last version is linted and published last), incremental changes, a text that does
not parse (the last good diagnostics kept, marked stale), a notebook document (diagnostics
per cell, the seed in another cell seen), hover, pull diagnostics, settings from
``initializationOptions`` and a settings change, related locations."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from torchlint.lsp_session import STALE, ClientSettings

REPO = Path(__file__).resolve().parents[2]

BUGGY = textwrap.dedent("""\
    import torch

    def train(model, loader, optimizer):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
""")


class Editor:
    """A pygls client and the diagnostics it received, by URI, in order."""

    def __init__(self, root: Path, options: dict | None = None, configuration: bool = False):
        self.root = root
        self.options = options
        self.configuration = configuration
        self.client = LanguageClient("torchlint-test", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.config_answer: dict | None = None

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.put_nowait(params)

        @self.client.feature(types.WORKSPACE_CONFIGURATION)
        def on_configuration(params: types.ConfigurationParams):
            return [self.config_answer]

    async def __aenter__(self) -> "Editor":
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        await self.client.start_io(sys.executable, "-m", "torchlint", "server", cwd=str(self.root), env=env)
        caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=self.configuration))
        await self.client.initialize_async(types.InitializeParams(
            capabilities=caps, root_uri=self.root.as_uri(), initialization_options=self.options))
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 30)
            self.client.exit(None)
        finally:
            await self.client.stop()

    async def next(self, uri: str | None = None, version: int | None = None, within: float = 90):
        """The next diagnostics published (for ``uri``, at ``version``), skipping others."""
        while True:
            params = await asyncio.wait_for(self.published.get(), within)
            if (uri is None or params.uri == uri) and (version is None or params.version == version):
                return params

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))

    def change(self, uri: str, version: int, *changes) -> None:
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=list(changes)))


def codes(params) -> list[str]:
    return [d.code for d in params.diagnostics]


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL000", "TL001", "TL002", "TL003", "TL006"]\n')
    return tmp_path


def test_a_burst_of_keystrokes_lints_only_the_last_version(project):
    """Before: 15 keystrokes 50 ms apart were linted and published one after another."""
    uri = (project / "train.py").as_uri()

    async def session():
        async with Editor(project) as editor:
            editor.open(uri, BUGGY)
            assert codes(await editor.next(uri, 1)) == ["TL001"]
            text = BUGGY
            for version in range(2, 17):
                text += "#"
                editor.change(uri, version, types.TextDocumentContentChangeWholeDocument(text=text))
                await asyncio.sleep(0.03)
            seen = []
            while not seen or seen[-1] != 16:
                params = await editor.next(uri)
                assert codes(params) == ["TL001"]
                seen.append(params.version)
            await asyncio.sleep(0.5)
            while not editor.published.empty():
                seen.append(editor.published.get_nowait().version)
            return seen

    seen = run(session())
    assert seen[-1] == 16 and seen == sorted(seen)  # the last version's last, none older after it
    assert len(seen) <= 3, seen  # typing 30 ms apart: the versions in between are not linted


def test_incremental_changes_and_a_text_that_does_not_parse(project):
    uri = (project / "train.py").as_uri()

    async def session():
        async with Editor(project) as editor:
            editor.open(uri, BUGGY)
            await editor.next(uri, 1)
            # an incremental change: "optimizer.step()" -> "optimizer.step(" on line 7 (0-based 6)
            end = types.Position(line=6, character=len("        optimizer.step()"))
            editor.change(uri, 2, types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=6, character=end.character - 1), end=end), text=""))
            broken = await editor.next(uri, 2)
            editor.change(uri, 3, types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=6, character=end.character - 1),
                                  end=types.Position(line=6, character=end.character - 1)), text=")"))
            fixed = await editor.next(uri, 3)
            return broken, fixed

    broken, fixed = run(session())
    assert codes(broken) == ["TL000", "TL001"]  # the syntax error, and the last good one kept
    stale = broken.diagnostics[1]
    assert stale.message.startswith(STALE) and stale.severity == types.DiagnosticSeverity.Hint
    assert codes(fixed) == ["TL001"] and not fixed.diagnostics[0].message.startswith(STALE)


def test_a_notebook_document_is_linted_as_a_whole_with_diagnostics_per_cell(project):
    """Before: notebookDocument/didOpen was ignored; cells sent as documents were linted
    alone, so a cell got 'never seeds torch' though the seed is in the cell above."""
    notebook = (project / "nb.ipynb").as_uri()
    cells = [f"{notebook}#cell{n}" for n in range(3)]
    texts = ["import torch\ntorch.manual_seed(0)\n", "# notes", BUGGY]

    async def session():
        async with Editor(project) as editor:
            editor.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=notebook, notebook_type="jupyter-notebook", version=1,
                    cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=cells[0]),
                           types.NotebookCell(kind=types.NotebookCellKind.Markup, document=cells[1]),
                           types.NotebookCell(kind=types.NotebookCellKind.Code, document=cells[2])]),
                cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python" if i != 1 else "markdown",
                                                            version=1, text=t)
                                     for i, (u, t) in enumerate(zip(cells, texts))]))
            got = {}
            while len(got) < 3:
                params = await editor.next()
                got[params.uri] = params
            return got

    got = run(session())
    assert codes(got[cells[0]]) == [] and codes(got[cells[1]]) == []
    (d,) = got[cells[2]].diagnostics
    assert d.code == "TL001" and d.range.start.line == 6  # its line in the cell, not in the notebook


def test_hover_pull_diagnostics_and_related_locations(project):
    uri = (project / "evaluate.py").as_uri()
    text = "import torch\nmodel.eval()\nfor x in loader:\n    out = model(x)\n    print(out)\n"

    async def session():
        async with Editor(project) as editor:
            editor.open(uri, text)
            published = await editor.next(uri, 1)
            d = published.diagnostics[0]
            hover = await editor.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
            nothing = await editor.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
            pulled = await editor.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            workspace = await editor.client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
                previous_result_ids=[]))
            return d, hover, nothing, pulled, workspace

    d, hover, nothing, pulled, workspace = run(session())
    assert d.code == "TL003"
    assert "**TL003 eval-without-no-grad**" in hover.contents.value and "rules/TL003-eval-without-no-grad.md" in \
        hover.contents.value and "Fix: unsafe" in hover.contents.value
    assert nothing is None
    assert [x.code for x in pulled.items] == ["TL003"]
    assert [(item.uri, [x.code for x in item.items]) for item in workspace.items] == [(uri, ["TL003"])]
    # "after `model.eval()` (line 2)": the related location is that line
    assert [(r.location.uri, r.location.range.start.line) for r in d.related_information] == [(uri, 1)]


def test_settings_from_initialization_options_and_a_change_of_them(project):
    uri = (project / "train.py").as_uri()

    async def session():
        async with Editor(project, options={"settings": {"select": ["TL002"]}}, configuration=True) as editor:
            editor.open(uri, BUGGY + "    losses.append(loss)\n")
            first = await editor.next(uri, 1)
            editor.config_answer = {"select": ["TL001"]}
            editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
            second = await editor.next(uri)
            editor.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"torchlint": {"select": ["TL001", "TL002"]}}))
            third = await editor.next(uri)
            return first, second, third

    first, second, third = run(session())
    assert codes(first) == ["TL002"] and codes(second) == ["TL001"] and sorted(codes(third)) == ["TL001", "TL002"]


def test_client_settings_read_what_they_can():
    assert ClientSettings.of({"settings": {"select": "TL001, TL002", "unsafeFixes": True}}) == \
        ClientSettings(["TL001", "TL002"], None, None, None, True)
    assert ClientSettings.of({"torchlint": {"ignore": ["TL004"], "configuration": 3}}) == \
        ClientSettings(None, None, ["TL004"], None, None)
    assert ClientSettings.of(None) == ClientSettings.of([1]) == ClientSettings()
