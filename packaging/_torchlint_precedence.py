"""Installed beside torchlint with a ``.pth`` line that imports it at interpreter start.

``python -m torchlint`` puts the working directory first on ``sys.path`` and resolves
``torchlint`` before any torchlint code runs, so a ``torchlint.py`` in the project being
linted would run instead of the linter. This finder looks past a plain ``torchlint.py``
module (torchlint is always a package): a ``torchlint/`` package found first, e.g. a source
checkout or ``PYTHONPATH``, is still used. setuptools ships the same kind of shim for
``distutils`` (``distutils-precedence.pth``). It costs one small import per interpreter
start and acts on the name ``torchlint`` only.
"""

import os
import sys


class TorchlintPrecedence:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "torchlint" or path is not None:
            return None
        from importlib.machinery import PathFinder

        entries = list(sys.path)
        while True:
            spec = PathFinder.find_spec(name, entries)
            if spec is None:
                return None  # nothing but plain torchlint.py modules: the normal import decides
            if spec.submodule_search_locations is not None or not spec.origin:
                return spec  # a package: torchlint itself
            shadow = os.path.dirname(os.path.abspath(spec.origin))
            entries = [e for e in entries if os.path.abspath(e or os.curdir) != shadow]


def install() -> None:
    if not any(type(f) is type and f.__name__ == "TorchlintPrecedence" for f in sys.meta_path):
        sys.meta_path.insert(0, TorchlintPrecedence)
