"""``torchlint server``: the real server, started on stdio, driven by pygls' LSP client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from torchlint.finding import Finding, Severity
from torchlint.server import MISSING, diagnostic, lint_document

REPO = Path(__file__).resolve().parent.parent

BUGGY = textwrap.dedent("""\
    import torch

    def train(model, loader, optimizer):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
""")
# the change: the loop clears the gradients, and keeps every loss with its graph
CHANGED = textwrap.dedent("""\
    import torch

    def train(model, loader, optimizer):
        losses = []
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss)
""")


def run_session(tmp_path: Path) -> list[types.PublishDiagnosticsParams]:
    """Open ``train.py`` with BUGGY, then change it to CHANGED: the two diagnostics messages."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001", "TL002"]\n')
    uri = (tmp_path / "train.py").as_uri()  # never written: the editor's buffer is what is linted

    async def session() -> list[types.PublishDiagnosticsParams]:
        client = LanguageClient("torchlint-test", "1")
        received: asyncio.Queue = asyncio.Queue()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            received.put_nowait(params)

        env = {**os.environ, "PYTHONPATH": str(REPO)}
        await client.start_io(sys.executable, "-m", "torchlint", "server", cwd=str(tmp_path), env=env)
        try:
            await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                                 root_uri=tmp_path.as_uri()))
            client.initialized(types.InitializedParams())
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BUGGY)))
            opened = await asyncio.wait_for(received.get(), 120)
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=CHANGED)]))
            changed = await asyncio.wait_for(received.get(), 120)
            await client.shutdown_async(None)
            client.exit(None)
        finally:
            await client.stop()
        return [opened, changed]

    return asyncio.run(session())


def summary(params: types.PublishDiagnosticsParams) -> list[tuple]:
    return [(d.code, d.range.start.line, d.range.start.character, d.severity, d.source, d.code_description.href)
            for d in params.diagnostics]


def test_the_server_publishes_diagnostics_on_open_and_again_after_a_change(tmp_path):
    opened, changed = run_session(tmp_path)
    base = "https://github.com/torchlint/torchlint/blob/main/rules/"
    assert opened.uri == changed.uri == (tmp_path / "train.py").as_uri()
    assert summary(opened) == [("TL001", 6, 8, types.DiagnosticSeverity.Error, "torchlint", base + "TL001-missing-zero-grad.md")]
    assert opened.diagnostics[0].message.startswith("optimizer.step() in this loop applies gradients")
    assert opened.version == 1 and changed.version == 2
    assert summary(changed) == [("TL002", 9, 8, types.DiagnosticSeverity.Warning, "torchlint",
                                 base + "TL002-loss-kept-with-graph.md")]


def test_a_diagnostic_is_the_finding_in_zero_based_positions():
    finding = Finding("TL001", "missing-zero-grad", Severity.ERROR, "t.py", 3, 5, 3, 15, "message")
    got = diagnostic(finding)
    assert (got.range.start.line, got.range.start.character, got.range.end.line, got.range.end.character) == (2, 4, 2, 14)
    assert (got.code, got.severity, got.message) == ("TL001", types.DiagnosticSeverity.Error, "message")


def test_without_pygls_the_server_command_says_what_to_install():
    code = "import sys; sys.modules['pygls'] = None; from torchlint.cli import main; sys.exit(main(['server']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2
    assert done.stderr == f"torchlint: error: {MISSING}\n"
    assert done.stdout == ""


def test_a_notebook_cell_in_vs_code_is_python_with_its_magics_masked(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL000", "TL001"]\n')
    cell = "%matplotlib inline\n!pip install x\n" + BUGGY
    found = lint_document(f"vscode-notebook-cell:{tmp_path.as_posix()}/nb.ipynb#W1sZmlsZQ%3D%3D", cell)
    assert [(d.code, d.range.start.line) for d in found] == [("TL001", 8)]
    # the notebook's JSON, opened as text, is no Python
    assert lint_document((tmp_path / "nb.ipynb").as_uri(), '{"cells": []}') == []
