"""``python -m torchlint``: the same as the ``torchlint`` console script.

``python -m`` puts the working directory first on ``sys.path``, so a ``json.py`` or
``libcst.py`` in the project being linted would be imported by torchlint itself.  That entry
is dropped before anything else is imported (the ``torchlint`` package is already loaded, and
its submodules are found through the package, not through ``sys.path``), unless torchlint
itself was found there (running from its own source checkout).  That covers a copy of
torchlint without its start-up guard: Python's ``runpy`` imports modules through that entry
before this file runs, which only the ``torchlint-precedence.pth`` guard installed with the
package prevents (``packaging/_torchlint_precedence.py``: ``python -P`` semantics for
``python -m torchlint`` alone).
"""

import os
import sys


def _drop_working_directory() -> None:
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        cwd = None
    if sys.path[0] not in ("", cwd):
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if cwd is not None and os.path.realpath(cwd) == os.path.realpath(here):
        return  # torchlint's own source checkout: it was found there
    del sys.path[0]


_drop_working_directory()

from torchlint.cli import main  # noqa: E402 - after the sys.path fix above

raise SystemExit(main())
