#!/usr/bin/env python3
"""The language server against typing, measured with a scripted client over stdio.

    python benchmarks/server_latency.py [--lines 2000] [--keys 20] [--gap 0.05]

Starts ``torchlint server``, measures ``initialize`` (from starting the process to its answer,
and the request alone), opens a file of ``--lines`` lines of training code, waits for its
diagnostics, then types ``--keys`` keystrokes ``--gap`` seconds apart (each one
``textDocument/didChange`` with the next version) and measures the time from the last
keystroke to the diagnostics of the last version, and which versions were published on the
way. Compares with ``torchlint check`` of the same file (wall and CPU seconds). Targets
(issue "Editors and CI at ruff's level"): both under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BLOCK = '''
def train_{n}(model, loader, optimizer, epochs={n}):
    losses = []
    for epoch in range(epochs):
        for x, y in loader:
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
            losses.append(loss)
    return losses

'''


def source(lines: int) -> str:
    head = "import torch\nimport torch.nn as nn\n\n"
    text, n = head, 0
    while text.count("\n") < lines:
        text += BLOCK.format(n=n)
        n += 1
    return text


class Client:
    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "torchlint", "server"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**os.environ, "PYTHONPATH": str(REPO)})
        self.buffer = b""
        self.ident = 0

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        self.ident += 1
        self.send({"jsonrpc": "2.0", "id": self.ident, "method": method, "params": params})
        return self.ident

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self, until, within: float = 120.0) -> list[tuple[float, dict]]:
        got, end = [], time.monotonic() + within
        fd = self.proc.stdout.fileno()
        while time.monotonic() < end:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                message = json.loads(rest[:length])
                self.buffer = rest[length:]
                got.append((time.monotonic(), message))
                if until(message):
                    return got
            if select.select([fd], [], [], 0.05)[0]:
                self.buffer += os.read(fd, 1 << 20)
        raise TimeoutError("no answer")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=20)
    ap.add_argument("--gap", type=float, default=0.05)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        path = root / "train.py"
        text = source(args.lines)
        path.write_text(text)
        uri = path.as_uri()
        started = time.monotonic()
        client = Client(root)
        try:
            sent = time.monotonic()
            ident = client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
            answered = client.read(lambda m: m.get("id") == ident)[-1][0]
            client.notify("initialized", {})
            print(f"initialize: {answered - started:.3f} s from starting the process, {answered - sent:.3f} s the request")
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": text}})
            opened = time.monotonic()
            got = client.read(lambda m: m.get("method") == "textDocument/publishDiagnostics")
            print(f"open: diagnostics of version 1 after {got[-1][0] - opened:.3f} s "
                  f"({len(got[-1][1]['params']['diagnostics'])} diagnostics)")
            version, last = 1, None
            for key in range(args.keys):
                version += 1
                text = text + "#"  # a keystroke: one character typed at the end
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [{"text": text}]})
                last = time.monotonic()
                if key < args.keys - 1:
                    time.sleep(args.gap)
            final = version
            got = client.read(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"].get("version") == final)
            versions = [m["params"].get("version") for _, m in got if m.get("method") == "textDocument/publishDiagnostics"]
            print(f"typing: {args.keys} keystrokes {args.gap * 1000:.0f} ms apart; diagnostics of the last version "
                  f"(v{final}) {got[-1][0] - last:.3f} s after the last keystroke; versions published: {versions}")
        finally:
            client.close()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "-q", str(path)], cwd=root,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"torchlint check of the same file: {time.monotonic() - t:.3f} s wall, {cpu:.3f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
