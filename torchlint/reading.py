"""Reading a file's text: its bytes decoded as Python reads them (``decode``), and its lines
read back for reports (code frames, fingerprints). Nothing here parses, so a report on cached
results imports no parser."""

from __future__ import annotations

import io
import os
import re
import tokenize
from pathlib import Path
from typing import Callable


def decode(data: bytes) -> str:
    """Decode source bytes honouring a BOM and PEP 263 coding cookie.

    Raises ``ParseFailure``-describing ``ValueError`` on binary or undecodable input.
    """
    if b"\x00" in data:
        raise ValueError("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown coding cookie, or bytes that are not UTF-8
        if "invalid or missing encoding declaration" in str(exc):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(
                    f"cannot decode as utf-8 (byte {err.start}: {err.reason}); "
                    "add a PEP 263 coding declaration if the file uses another encoding"
                ) from None
        raise ValueError(str(exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise ValueError(f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's own line ends (str.splitlines() knows more)

LineSource = Callable[[str], "list[str] | None"]


def source_lines(text: str) -> list[str]:
    return _NEWLINE.split(text)


# Code frames and fingerprints read a finding's file again; a file this large (a TL000 "too
# large to analyse" finding) gets none rather than being read whole a second time.
FRAME_MAX_BYTES = 8 << 20


# Text given for a file instead of its bytes on disk (``torchlint check -``: standard input,
# named by ``--stdin-filename``): reports quote it, never the file.
_GIVEN: dict[Path, bytes] = {}


def give(path: Path, data: bytes) -> None:
    """``data`` stands for the file at ``path`` (absolute) in this process's reports."""
    _GIVEN[path] = data


def given(path: Path) -> bytes | None:
    """The text given for ``path`` (see ``give``), if any."""
    return _GIVEN.get(Path(os.path.abspath(path))) if _GIVEN else None


def _text_of(path: str, data: bytes) -> str:
    """The text findings' lines count in: a notebook's joined code cells (as written), else the source."""
    from torchlint.notebook import is_notebook, read_notebook

    return read_notebook(data).source if is_notebook(path) else decode(data)


def file_lines(cwd: Path) -> LineSource:
    """Reads (and caches) a finding's file, relative to ``cwd`` (a notebook as its joined
    code cells: ``torchlint.notebook``); None when unreadable, not a
    regular file any more (a FIFO swapped in after linting never blocks the report), or
    larger than ``FRAME_MAX_BYTES``."""
    from torchlint.bounded import NOTEBOOK_LIMIT, read_file

    cache: dict[str, list[str] | None] = {}

    def lines(path: str) -> list[str] | None:
        if path not in cache:
            try:
                data = given(cwd / path)
                if data is None:
                    limit = NOTEBOOK_LIMIT if path.endswith(".ipynb") else FRAME_MAX_BYTES
                    data = read_file(cwd / path, limit)  # OSError where larger: no code frame
                cache[path] = source_lines(_text_of(path, data))
            except (OSError, ValueError):
                cache[path] = None
        return cache[path]

    return lines
