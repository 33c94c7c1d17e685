"""The trace child process, started by :mod:`torchlint.trace.supervisor`.

This is the only part of torchlint that imports torch and user code.  It reads its request
(a list of jobs, and the key that signs its results) from stdin before importing anything
else, and for each job builds the model, runs forward passes with hooks and writes signed
JSON lines to the result pipe: ``{"event": "ready"}`` once torch is imported, then
``{"event": "start", "id": ...}`` and ``{"event": "result", "id": ..., ...}`` per job (a
:class:`torchlint.trace.records.TraceResult`).  The supervisor checks and relays them, so a
crash, ``os._exit`` or hang in user code costs only the job it happened in.

=============  ==========================================================================
``process``    the request, the signed result pipe, ``sys.path``, memory limit
``job``        the main loop and one job: load, pick inputs, trace, retry, result record
``load``       import the target, build the model, check arguments and arity
``inputs``     infer / read / make the forward inputs
``tracer``     the hooks and what they record
``failure``    an exception from user code -> a ``Failure`` record
``diagnose``   per-layer-kind table: what the layer expected, how to fix it
``values``     describe tensors and values; where classes are defined
=============  ==========================================================================

The supervisor starts ``from torchlint.trace.child import main``: importing this package
imports every module of it (standard library and torchlint only), so nothing is imported
after ``sys.path`` gets the user's directories except torch and the user's code.
"""

from __future__ import annotations

from torchlint.trace.child.job import main

__all__ = ["main"]
