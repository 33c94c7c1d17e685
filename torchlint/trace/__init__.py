"""The dry-run shape trace (``torchlint trace`` and ``torchlint check --trace``).

Nothing in this package imports torch at module import time except :mod:`.child`, which
only ever runs in a separate process, behind :mod:`.supervisor`.  The parent
side (target parsing, LibCST lookups, rendering) works without torch installed.
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'torchlint[trace]'"
