"""The language server's transport: LSP base-protocol frames read from standard input, bad
ones answered and skipped.

A frame is headers (``Content-Length: N``, optionally ``Content-Type``), a blank line, and N
bytes of JSON. pygls reads frames trusting the length: after one frame whose length is wrong,
or whose headers lack it, it reads the following messages at the wrong offsets and never
answers again. :class:`Framer` reads the raw stream itself and resynchronises on the next
header:

* a header block without a usable ``Content-Length`` is an error; what follows it, up to the
  next ``Content-Length:`` header, is skipped;
* a length larger than the message: the next header shows up inside the body, after a
  complete JSON value (or nothing more arrives for ``idle`` seconds after one): an error, and
  reading goes on at that header;
* a length smaller than the message: the body is not JSON: an error, and the rest of the
  message is skipped up to the next header;
* bytes between messages that are not a header are skipped up to the next header.

Each error is reported once as a :class:`FrameError` (the server answers it with a JSON-RPC
error, ``id`` null). :class:`FramedStdin` serves the well-formed messages to pygls as
canonical frames, so pygls' own loop runs unchanged. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import select
import threading
from dataclasses import dataclass
from typing import Callable, IO

HEADER_LIMIT = 64 * 1024  # bytes of headers before the blank line
BODY_LIMIT = 256 * 1024 * 1024  # a message's JSON
IDLE_SECONDS = 0.5  # how long a complete JSON value may wait for bytes its length still claims
_CHUNK = 1 << 16
_NEXT_HEADER = re.compile(rb"content-length\s*:", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)")
_STARTS_HEADER = re.compile(rb"\s*[A-Za-z][A-Za-z0-9-]*\s*:")


@dataclass(frozen=True)
class FrameError:
    """A frame that could not be read, and why (one line)."""

    message: str

    def response(self) -> bytes:
        """The JSON-RPC error a server sends for it (``id`` null: the request is unknown)."""
        body = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32700, "message": f"torchlint server: {self.message}"}}).encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _complete_json(data: bytes) -> bool:
    text = data.strip()
    if not text.endswith((b"}", b"]")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class Framer:
    """Messages of the raw byte stream ``fd`` (see the module docstring)."""

    def __init__(self, fd: int, idle: float = IDLE_SECONDS):
        self.fd = fd
        self.idle = idle
        self.buffer = bytearray()
        self.eof = False
        self.skip_quietly = False  # the bytes skipped next belong to a frame already reported

    def _fill(self, timeout: float | None = None) -> bool | None:
        """Read what is there (waiting at most ``timeout`` seconds, None: until something
        comes): True when bytes came, False at the end of the stream, None on a timeout."""
        if self.eof:
            return False
        if timeout is not None and not select.select([self.fd], [], [], timeout)[0]:
            return None
        chunk = os.read(self.fd, _CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def _skip_to_header(self, start: int = 0) -> FrameError | None | bool:
        """Drop bytes before the next ``Content-Length:`` at or after ``start``. False when
        there is none yet (more must be read), an error where something that mattered was
        dropped, None otherwise."""
        found = _NEXT_HEADER.search(self.buffer, start)
        if found is None:
            keep = len(b"content-length :")  # a header may be arriving in pieces
            dropped = bytes(self.buffer[:max(0, len(self.buffer) - keep)])
            del self.buffer[:len(dropped)]
            if dropped.strip() and not self.skip_quietly:
                self.skip_quietly = True
                return FrameError("bytes that are no message were skipped up to the next header")
            return False
        dropped = bytes(self.buffer[:found.start()])
        del self.buffer[:found.start()]
        quiet, self.skip_quietly = self.skip_quietly, False
        if dropped.strip() and not quiet:
            return FrameError("bytes that are no message were skipped up to the next header")
        return None

    def next(self) -> bytes | FrameError | None:
        """The next message's JSON, an error, or None at the end of the stream."""
        while True:
            if self.buffer and not _STARTS_HEADER.match(self.buffer):
                skipped = self._skip_to_header()
                if isinstance(skipped, FrameError):
                    return skipped
                if skipped is False and not self._fill():
                    return None
                continue
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > HEADER_LIMIT:
                    del self.buffer[:1]
                    self.skip_quietly = True
                    return FrameError(f"headers longer than {HEADER_LIMIT} bytes; skipped")
                if not self._fill():
                    return None
                continue
            self.skip_quietly = False
            length, why = self._length(bytes(self.buffer[:end]))
            start = end + 4
            later = _NEXT_HEADER.search(self.buffer, 1, end)
            if length is None and later is not None:  # junk run into a header: read on from it
                del self.buffer[:later.start()]
                return FrameError(f"{why}; read on from the next Content-Length")
            if length is None:
                del self.buffer[:start]
                self.skip_quietly = True  # its body, whatever it is, up to the next header
                return FrameError(why)
            return self._body(start, length)

    @staticmethod
    def _length(headers: bytes) -> tuple[int | None, str]:
        length = None
        for line in headers.split(b"\r\n"):
            match = _HEADER_LINE.fullmatch(line.strip())
            if match is None:
                return None, "a header line that is not 'Name: value'"
            if match.group(1).lower() == b"content-length":
                value = match.group(2).strip()
                if not value.isdigit():
                    return None, f"Content-Length is not a number: {value[:40].decode('latin-1')!r}"
                length = int(value)
        if length is None:
            return None, "a message without a Content-Length header"
        if length > BODY_LIMIT:
            return None, f"Content-Length {length} is over the limit of {BODY_LIMIT} bytes"
        return length, ""

    def _body(self, start: int, length: int) -> bytes | FrameError | None:
        while len(self.buffer) < start + length:
            early = self._ends_early(start)
            if early is not None:
                del self.buffer[:early]
                return FrameError("Content-Length is larger than the message; read on from the next header")
            waiting = _complete_json(self.buffer[start:])
            got = self._fill(self.idle if waiting else None)
            if got is None:  # a whole JSON value, and nothing more for a while: the length is wrong
                del self.buffer[:]
                return FrameError("Content-Length is larger than the message")
            if got is False:
                return None
        body = bytes(self.buffer[start:start + length])
        try:
            json.loads(body)
        except ValueError:
            early = self._ends_early(start, start + length)
            if early is not None:
                del self.buffer[:early]
                return FrameError("Content-Length is larger than the message; read on from the next header")
            del self.buffer[:start + length]
            self.skip_quietly = True
            return FrameError("the message is not JSON (is its Content-Length smaller than the message?)")
        del self.buffer[:start + length]
        return body

    def _ends_early(self, start: int, stop: int | None = None) -> int | None:
        """Where the next header starts inside a body whose bytes before it are one whole
        JSON value; None where there is no such header."""
        for found in _NEXT_HEADER.finditer(self.buffer, start, len(self.buffer) if stop is None else stop):
            if _complete_json(self.buffer[start:found.start()]):
                return found.start()
        return None


class FramedStdin:
    """A binary stream of canonical frames (``Content-Length: N``, a blank line, the JSON)
    of the messages ``framer`` reads; each ``FrameError`` goes to ``on_error`` instead."""

    def __init__(self, framer: Framer, on_error: Callable[[FrameError], None]):
        self.framer = framer
        self.on_error = on_error
        self.pending = bytearray()

    def _more(self) -> bool:
        while True:
            item = self.framer.next()
            if item is None:
                return False
            if isinstance(item, FrameError):
                self.on_error(item)
                continue
            self.pending += b"Content-Length: %d\r\n\r\n" % len(item) + item
            return True

    def readline(self) -> bytes:
        while b"\n" not in self.pending:
            if not self._more():
                line = bytes(self.pending)
                self.pending.clear()
                return line
        end = self.pending.index(b"\n") + 1
        line = bytes(self.pending[:end])
        del self.pending[:end]
        return line

    def read(self, size: int) -> bytes:
        while len(self.pending) < size:
            if not self._more():
                break
        data = bytes(self.pending[:size])
        del self.pending[:size]
        return data


class LockedOutput:
    """Standard output for frames written from several threads: each write whole, flushed."""

    def __init__(self, stream: IO[bytes]):
        self.stream = stream
        self.lock = threading.Lock()

    def write(self, data: bytes) -> int:
        with self.lock:
            self.stream.write(data)
            self.stream.flush()
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.stream.close()
