"""Errors that end a run with exit code 2 and a one-line message (never a traceback),
``Terminated``, the SIGTERM counterpart of Ctrl-C's ``KeyboardInterrupt``, and ``RuleError``,
a rule's exception reported without ending the run (``describe``: bounded, never a node's
repr)."""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass


class TorchlintError(Exception):
    """A usage, configuration or environment error: reported as ``torchlint: error: ...``."""

    exit_code = 2


class ConfigError(TorchlintError):
    """A bad configuration file, key or value."""

    def __init__(self, source: str, key: str, problem: str, accepted: str | None = None):
        self.source = source
        self.key = key
        self.problem = problem
        self.accepted = accepted
        text = f"{source}: `{key}`: {problem}"
        if accepted:
            text += f" (accepted: {accepted})"
        super().__init__(text)


class UsageError(TorchlintError):
    """Bad command-line usage (an unknown rule code, a missing file, ...)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt (``cli`` installs the
    handler): the run stops where it is, its worker and trace processes are stopped on the way
    out, and ``main`` exits 143 with a message."""


# -- a rule's exception, reported ----------------------------------------------------------

MESSAGE_LIMIT = 300  # characters of an exception's text kept in a report


def bounded(text: str) -> str:
    """One line of at most ``MESSAGE_LIMIT`` characters."""
    text = " ".join(text[: MESSAGE_LIMIT * 4].split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, bounded, without formatting LibCST nodes among its arguments: the
    ``str()`` of a ``KeyError(node)`` is the node's repr, which for a deep tree recurses or
    runs to megabytes."""
    args = getattr(exc, "args", ())
    if isinstance(args, tuple) and any(_is_node(a) for a in args):
        return bounded(", ".join(f"<{type(a).__name__} node>" if _is_node(a) else _text(a) for a in args))
    return bounded(_text(exc))


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception as exc:  # noqa: BLE001 - a RecursionError included
        return f"<str() failed: {type(exc).__name__}>"


def _is_node(value: object) -> bool:
    """Whether ``value`` is a LibCST node (none can be before LibCST is imported)."""
    cst = sys.modules.get("libcst")
    return cst is not None and isinstance(value, cst.CSTNode)


@dataclass
class RuleError:
    """An exception raised inside a rule: reported, never fatal to the run."""

    rule: str
    path: str
    error: str
    traceback: str


TRACEBACK_FRAMES = 12  # innermost frames kept in a RuleError's traceback


def describe(exc: BaseException) -> tuple[str, str]:
    """``"Type: message"`` on one bounded line, and the innermost frames of its traceback.

    Nothing unbounded is formatted: ``str()`` of an exception holding a LibCST node (a
    ``KeyError(node)``) is the node's repr, which for a deep tree recurses or runs to
    megabytes, and a ``RecursionError``'s traceback has a thousand frames.
    """
    message = f"{type(exc).__name__}: {exception_text(exc)}"
    try:
        frames = "".join(traceback.format_tb(exc.__traceback__, limit=-TRACEBACK_FRAMES))
    except Exception:  # noqa: BLE001 - a traceback we cannot format is left out
        frames = ""
    return message, f"Traceback (innermost {TRACEBACK_FRAMES} frames at most):\n{frames}{message}\n"
