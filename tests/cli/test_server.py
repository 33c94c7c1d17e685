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

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import Edit, Fix
from torchlint.lsp_documents import MISSING, diagnostic, fix_all, lint_document, offered_fix
from torchlint.testing import make_settings

REPO = Path(__file__).resolve().parents[2]

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


# -- code actions ---------------------------------------------------------------------------

# a kept loss (TL002, a safe fix) after a character that is two UTF-16 code units, an unused
# noqa code (TL901, a safe fix) and a missing zero_grad (TL001, whose fix is unsafe)
FIXABLE = textwrap.dedent("""\
    import torch

    def train(model, loader, optimizer):
        losses = []
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            note = "\U0001F60B"; losses.append(loss)  # noqa: TL003, E501
""")
FIXED_LINE = '        note = "\U0001F60B"; losses.append(loss.detach())  # noqa: E501\n'


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` after LSP ``edits`` (positions in UTF-16 code units, as the client said)."""
    lines = text.splitlines(keepends=True) + [""]

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return sum(map(len, lines[:position.line])) + index
            units += 2 if ord(char) > 0xFFFF else 1
        return sum(map(len, lines[:position.line])) + len(line)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def action_session(tmp_path: Path) -> tuple[list[types.Diagnostic], dict[str, list[types.CodeAction]]]:
    """Open FIXABLE in the real server; the diagnostics, then the code actions asked for each
    diagnostic's range (by its code) and for ``source.fixAll.torchlint`` (under "fixAll")."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001", "TL002", "TL901"]\n')
    uri = (tmp_path / "train.py").as_uri()

    async def session():
        client = LanguageClient("torchlint-test", "1")
        received: asyncio.Queue = asyncio.Queue()
        client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: received.put_nowait(params))
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        await client.start_io(sys.executable, "-m", "torchlint", "server", cwd=str(tmp_path), env=env)
        try:
            await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                                 root_uri=tmp_path.as_uri()))
            client.initialized(types.InitializedParams())
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=FIXABLE)))
            diagnostics = (await asyncio.wait_for(received.get(), 120)).diagnostics
            actions = {}
            for d in diagnostics:
                actions[d.code] = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
                    context=types.CodeActionContext(diagnostics=[d], only=[types.CodeActionKind.QuickFix]))), 120)
            whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=9, character=0))
            actions["fixAll"] = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=whole,
                context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]))), 120)
            await client.shutdown_async(None)
            client.exit(None)
        finally:
            await client.stop()
        return diagnostics, actions

    return asyncio.run(session())


def test_the_server_offers_quick_fixes_a_noqa_comment_and_fix_all(tmp_path):
    diagnostics, actions = action_session(tmp_path)
    uri = (tmp_path / "train.py").as_uri()
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diagnostics] == [
        ("TL001", 7, 8), ("TL002", 8, 21), ("TL901", 8, 42)]  # UTF-16: the emoji counts two
    assert [(a.title, a.kind) for a in actions["TL002"]] == [
        ("Store `loss.detach()`", "quickfix"), ("Disable TL002 for this line", "quickfix")]
    fixed = apply_edits(FIXABLE, actions["TL002"][0].edit.changes[uri])
    assert fixed == FIXABLE.replace("losses.append(loss)", "losses.append(loss.detach())")
    assert [a.title for a in actions["TL901"]] == ["Remove unused noqa code TL003", "Disable TL901 for this line"]
    assert apply_edits(FIXABLE, actions["TL901"][0].edit.changes[uri]).endswith(
        '        note = "\U0001F60B"; losses.append(loss)  # noqa: E501\n')
    noqa = apply_edits(FIXABLE, actions["TL002"][1].edit.changes[uri])
    assert noqa.endswith('losses.append(loss)  # noqa: TL003, E501, TL002\n')
    # TL001's fix is unsafe: not offered without `unsafe-fixes = true`; its line can be silenced
    assert [a.title for a in actions["TL001"]] == ["Disable TL001 for this line"]
    assert "        optimizer.step()  # noqa: TL001\n" in apply_edits(FIXABLE, actions["TL001"][0].edit.changes[uri])
    [fix_all] = actions["fixAll"]
    assert fix_all.kind == "source.fixAll.torchlint"
    assert apply_edits(FIXABLE, fix_all.edit.changes[uri]) == FIXABLE.rsplit("\n", 2)[0] + "\n" + FIXED_LINE


def test_an_unsafe_fix_is_offered_only_where_the_configuration_allows_it(tmp_path):
    uri = (tmp_path / "train.py").as_uri()
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001"]\n')
    [finding] = lint_document(uri, BUGGY)
    assert finding.data is None
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001"]\nunsafe-fixes = true\n')
    [finding] = lint_document(uri, BUGGY)
    assert finding.data["fix"]["title"].endswith(" (unsafe)")
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001"]\nunsafe-fixes = true\n'
                                             'unfixable = ["TL001"]\n')
    [finding] = lint_document(uri, BUGGY)
    assert finding.data is None


def test_fix_all_lints_the_editors_text_not_the_file_on_disk(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL002"]\n')
    (tmp_path / "train.py").write_text("x = 1\n")  # the buffer differs from the file
    uri = (tmp_path / "train.py").as_uri()
    action = fix_all(uri, CHANGED)
    [edit] = action.edit.changes[uri]
    assert apply_edits(CHANGED, [edit]) == CHANGED.replace("losses.append(loss)", "losses.append(loss.detach())")
    assert fix_all(uri, "x = 1\n") is None


def test_a_notebook_cell_gets_no_fix_that_replaces_a_line_its_masking_changed(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL901"]\n')
    cell = "%time x = 1\ny = 2  # noqa: TL003\n"
    [found] = lint_document(f"vscode-notebook-cell:{tmp_path.as_posix()}/nb.ipynb#W1sZmlsZQ%3D%3D", cell)
    assert (found.code, found.range.start.line, found.data["fix"]["edits"]) == ("TL901", 1, [[1, 5, 1, 20, ""]])
    settings = make_settings(["TL003"])
    finding = Finding("TL003", "eval-without-no-grad", Severity.WARNING, "nb.ipynb.py", 3, 1, 3, 5, "message",
                      fix=Fix.safe("wrap", Edit(Span(1, 1, 3, 1), "with torch.no_grad():\n    a\n    b\n")))
    assert offered_fix(finding, settings, {1}) is None  # it rewrites the masked line 1 (`pass`)
    assert offered_fix(finding, settings, {3}) is finding.fix  # it ends where line 3 starts
    assert offered_fix(finding, settings, set()) is finding.fix
