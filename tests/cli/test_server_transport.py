"""The language server's transport and disk reads never make it fall silent: a badly framed
message is answered with a JSON-RPC error and the next message is read as usual
(``torchlint.lsp_frames``); a document next to a FIFO ``requirements.txt``, and code actions
or saves of a FIFO the editor never opened, never block it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchlint.lsp_frames import FrameError, Framer

pytest.importorskip("pygls")
REPO = Path(__file__).resolve().parents[2]


def frame(message: dict | bytes, length: int | None = None, headers: bytes | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    if headers is None:
        headers = b"Content-Length: %d\r\n" % (len(body) if length is None else length)
    return headers + b"\r\n" + body


def request(ident: int, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}


def notify(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


class RawClient:
    def __init__(self, cwd: Path):
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen([sys.executable, "-m", "torchlint", "server"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def messages(self, until, within: float = 60.0) -> list[dict]:
        """Messages read until ``until(messages)`` holds (or ``within`` seconds pass)."""
        got: list[dict] = []
        end = time.monotonic() + within
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while not until(got) and time.monotonic() < end:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                got.append(json.loads(rest[:length]))
                self.buffer = rest[length:]
            if until(got):
                break
            if select.select([fd], [], [], 0.2)[0]:
                self.buffer += os.read(fd, 1 << 16)
        return got

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def client(tmp_path):
    c = RawClient(tmp_path)
    c.send(frame(request(1, "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})))
    assert any(m.get("id") == 1 for m in c.messages(lambda got: any(m.get("id") == 1 for m in got)))
    c.send(frame(notify("initialized", {})))
    yield c
    c.close()


def _answered(ident: int):
    return lambda got: any(m.get("id") == ident and "result" in m for m in got)


def _errors(messages: list[dict]) -> list[str]:
    return [m["error"]["message"] for m in messages if m.get("id") is None and "error" in m]


@pytest.mark.parametrize(("bad", "says"), [
    (frame(request(7, "shutdown"), length=500), "Content-Length is larger than the message"),
    (frame(request(7, "shutdown"), length=10), "the message is not JSON"),
    (frame(request(7, "shutdown"), headers=b"Content-Type: application/vscode-jsonrpc\r\n"),
     "a message without a Content-Length header"),
    (frame(request(7, "shutdown"), headers=b"Content-Length: many\r\n"), "Content-Length is not a number"),
    (b"garbage before a message\r\n", "bytes that are no message"),
])
def test_a_badly_framed_message_is_answered_and_the_next_one_is_read(client, bad, says):
    """Before: the server stayed alive and answered nothing, ever again."""
    client.send(bad + frame(request(2, "shutdown")))
    got = client.messages(_answered(2), within=30)
    assert _answered(2)(got), got
    assert [e for e in _errors(got) if says in e], got


def test_a_length_too_large_with_nothing_after_it_is_answered_soon(client):
    client.send(frame(request(3, "shutdown"), length=5000))
    got = client.messages(lambda got: bool(_errors(got)), within=10)
    assert "Content-Length is larger than the message" in _errors(got)[0]
    client.send(frame(request(4, "shutdown")))
    assert _answered(4)(client.messages(_answered(4), within=30))


def test_a_document_next_to_a_fifo_requirements_txt_gets_its_diagnostics(tmp_path, client):
    """Before: linting it opened the FIFO to read the torch pin and blocked every request."""
    os.mkfifo(tmp_path / "requirements.txt")
    path = tmp_path / "load.py"
    text = ('import torch\nstate = torch.load("m.pt")\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n'
            '    opt.step()\n')
    path.write_text(text)
    client.send(frame(notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                                       "version": 1, "text": text}})))
    published = lambda got: any(m.get("method") == "textDocument/publishDiagnostics" for m in got)  # noqa: E731
    got = client.messages(published, within=60)
    assert published(got), got
    diagnostics = next(m for m in got if m.get("method") == "textDocument/publishDiagnostics")["params"]["diagnostics"]
    assert "TL001" in {d["code"] for d in diagnostics}


def test_save_and_code_actions_of_a_fifo_never_opened_do_not_block(tmp_path, client):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    client.send(frame(notify("textDocument/didSave", {"textDocument": {"uri": fifo.as_uri()}})))
    client.send(frame(request(5, "textDocument/codeAction", {
        "textDocument": {"uri": fifo.as_uri()},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}})))
    client.send(frame(request(6, "shutdown")))
    got = client.messages(_answered(6), within=30)
    assert _answered(6)(got), got


# -- the framer alone ----------------------------------------------------------------------

def _frames(data: bytes) -> list[bytes | FrameError]:
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    framer = Framer(r, idle=0.05)
    out = []
    while (item := framer.next()) is not None:
        out.append(item)
    os.close(r)
    return out


def test_the_framer_reads_well_formed_messages_and_their_headers():
    one, two = {"a": 1}, {"b": "Content-Length: 3\r\n\r\n"}  # a header inside a string is text
    got = _frames(frame(one) + frame(two, headers=b"content-length: %d\r\nContent-Type: x\r\n"
                                     % len(json.dumps(two).encode())))
    assert [json.loads(g) for g in got] == [one, two]


def test_the_framer_resynchronises_after_each_kind_of_bad_frame():
    good = frame({"ok": True})
    cases = [frame({"x": 1}, length=200) + good, frame({"x": 1}, length=3) + good,
             frame({"x": 1}, headers=b"X-Other: 1\r\n") + good, b"\r\nnoise" + good, b"Header-Only\r\n\r\n" + good]
    for data in cases:
        got = _frames(data)
        assert isinstance(got[0], FrameError) and [json.loads(g) for g in got[1:]] == [{"ok": True}], (data, got)
