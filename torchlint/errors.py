"""Errors that end a run with exit code 2 and a one-line message (never a traceback), and
``Terminated``, the SIGTERM counterpart of Ctrl-C's ``KeyboardInterrupt``."""

from __future__ import annotations


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
