"""Installed beside torchlint with a ``.pth`` line that imports it at interpreter start.

``python -m torchlint`` puts the working directory first on ``sys.path``, and Python itself
imports modules through it before any torchlint code runs: ``runpy`` imports
``importlib.machinery``, ``contextlib``, ``functools``, ``types``, ``warnings``... so a
``functools.py`` (or a ``torchlint/`` package) in the project being linted would be executed.
Nothing inside torchlint can prevent that: it happens before torchlint is imported.

This guard does, for that one kind of process only. At start-up it reads how the interpreter
was started (``sys.orig_argv``); only for ``python [options] -m torchlint[.submodule] ...``
without ``-P``/``PYTHONSAFEPATH`` does it add a meta-path finder, which, at the first import
after Python has put the working directory first on ``sys.path``, removes that entry again (what
``python -P`` does) and then removes itself. Every other Python process of the environment
pays this module's import and one look at ``sys.orig_argv``, and gets no finder at all.

A ``torchlint/`` package in the working directory is then never found instead of the
installed one; naming it on purpose (``PYTHONPATH=.``) still works. The console script
``torchlint`` never had the problem (its ``sys.path[0]`` is its own directory).
"""

import sys

_LONG_WITH_VALUE = ("--check-hash-based-pycs",)


def started_module(argv):
    """The module a ``python [options] -m MODULE ...`` command line runs; None for anything
    else (a script, ``-c``, standard input, the interactive prompt)."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("--", "-") or not arg.startswith("-"):
            return None
        if arg.startswith("--"):
            i += arg in _LONG_WITH_VALUE
            continue
        for j in range(1, len(arg)):
            flag = arg[j]
            if flag in "cmWX":  # an option with a value: the rest of this argument, or the next one
                value = arg[j + 1:]
                if not value:
                    if i >= len(argv):
                        return None
                    value = argv[i]
                    i += 1
                if flag == "m":
                    return value
                if flag == "c":
                    return None
                break
    return None


def runs_torchlint(argv):
    module = started_module(argv)
    return module is not None and (module == "torchlint" or module.startswith("torchlint."))


class DropWorkingDirectory:
    """Removes the working directory that ``python -m`` put first on ``sys.path``, at the
    first import after it was put there, then itself."""

    first = None  # sys.path[0] when the guard was installed

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if sys.path and sys.path[0] != cls.first:
            import os  # already loaded by site: no import from the working directory

            try:
                cwd = os.getcwd()
            except OSError:
                cwd = None
            if sys.path[0] in ("", cwd):
                del sys.path[0]
            if cls in sys.meta_path:
                sys.meta_path.remove(cls)
        return None


def install():
    if getattr(sys.flags, "safe_path", False) or not runs_torchlint(getattr(sys, "orig_argv", ())):
        return
    if DropWorkingDirectory not in sys.meta_path:
        DropWorkingDirectory.first = sys.path[0] if sys.path else None
        sys.meta_path.insert(0, DropWorkingDirectory)
