"""Every change torchlint makes to LibCST, the standard library or the process to run faster,
in one place, behind one switch.

Importing torchlint changes nothing. The processes torchlint owns call :func:`enable` once at
their start: the command line (``cli.main``), the language server (``torchlint server``) and
the analysis workers they start (``pool``: inherited through ``fork``, enabled again
otherwise). The flake8 plugin and library callers (``torchlint.testing``, ``run.lint_files``
from your own code) get none of it unless they call :func:`enable` themselves.
``TORCHLINT_NO_SPEEDUPS=1`` (any value but empty or ``0``) turns all of them off: torchlint
then runs on LibCST and Python as they are, slower and with one difference in what it finds:
LibCST's node validation stays on, so the few valid files LibCST's node classes refuse
(``else.5``, ``for x in*y:``, ``return*x``) are TL000 "LibCST cannot parse this valid Python"
instead of analysed.

| speed-up | where | what it changes | what it saves (measured) | what it relies on |
| --- | --- | --- | --- | --- |
| node identity in C | ``nodes._identity_in_c`` | every node class's ``__eq__``/``__hash__`` become ``object``'s | an eighth of the walk and the rules | LibCST nodes compare and hash by identity already |
| type checks in C | ``nodes._type_checks_in_c`` | node classes' metaclass ``ABCMeta`` -> a subclass with ``type``'s checks | ~1.4 million ABC checks on the subset | LibCST registers no virtual subclass |
| native parse call | ``nodes.parse_module`` | none: a frame of its own whose ``__import__`` does nothing | subset parse 5.13 s -> 4.92 s | ``libcst.native.parse_module(text, "utf-8")`` (checked once on a trial parse); ``PyImport_Import`` reading ``sys.modules`` |
| no node validation | ``nodes.parsing`` | ``CSTNode.__post_init__`` validates only outside the engine's parse | about a tenth of a parse | ``__post_init__`` -> ``_validate``; CPython checked the text first |
| plain constructors | ``nodes._plain_constructors`` | ~170 node classes' ``__init__`` assign their fields, and their frozen ``__setattr__``/``__delattr__`` become ``object``'s (after 325,000 parsed characters): nodes of this process can be assigned to | ~8% of a parse; assigning rather than calling each slot's setter, a further ~4% | frozen dataclasses with slots, ``__init__`` taking the fields in order; nothing assigns to a node (the tests run without the speed-ups too, where LibCST's nodes refuse it) |
| shared trivia | ``nodes._SharedMeta`` | 11 trivia classes hand out one node per value while the engine parses | subset parse 5.09 s -> 4.63 s | nodes are immutable; the analysis never keys trivia by identity |
| kept dataclass code | ``dataclass_code`` | the name ``exec`` in ``dataclasses`` runs code compiled by an earlier run | ``import libcst`` 0.32 s -> 0.19 s | ``dataclasses`` compiles its methods with the module-level name ``exec`` |
| two malloc arenas | ``process.limit_malloc_arenas`` | glibc's ``M_ARENA_MAX`` = 2 | ~30 MB peak RSS per process | glibc ``mallopt`` |
| collector paused per file | ``process.collector_paused`` | ``gc.disable()`` during one file's analysis, ``collect(0)`` after | 10-18% of a cold run | refcounting frees nearly all of a file's objects |
| frozen at exit | ``process.install`` | ``gc.freeze`` at exit | 60-85 ms -> 20 ms at exit | objects alive at exit need no collection |

The LibCST versions these rely on are bounded in ``pyproject.toml``; ``tests/engine`` runs
both ways (``tests/engine/test_speedups.py``), and those tests are what a new LibCST must
pass before the bound moves.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext
from typing import Iterator

SWITCH = "TORCHLINT_NO_SPEEDUPS"
_ENABLED = [False]


def switched_off() -> bool:
    """Whether ``TORCHLINT_NO_SPEEDUPS`` turns the speed-ups off."""
    return os.environ.get(SWITCH, "") not in ("", "0")


def enabled() -> bool:
    return _ENABLED[0]


def enable() -> bool:
    """Apply every speed-up to this process, once; False (nothing applied) where
    ``TORCHLINT_NO_SPEEDUPS`` is set. Only for a process torchlint owns, before any LibCST
    tree is built."""
    if _ENABLED[0]:
        return True
    if switched_off():
        return False
    from torchlint.speedups import nodes, process

    nodes.install()
    process.install()
    _ENABLED[0] = True
    return True


@contextmanager
def start_up() -> Iterator[None]:
    """The start of a process torchlint owns (the command line): dataclasses (LibCST's ~200
    node classes among them) reuse the code earlier runs compiled for them
    (``dataclass_code``), unless the speed-ups are switched off."""
    if switched_off():
        with nullcontext():
            yield
        return
    from torchlint.speedups.dataclass_code import compiled_dataclass_methods

    with compiled_dataclass_methods():
        yield
