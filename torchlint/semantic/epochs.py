"""Epoch loops: ``for epoch in range(N)`` loops whose iterations each run a training pass.

* ``range_stop(ctx, iterable)``: the expression giving the number of iterations of
  ``range(N)``, ``range(1, N + 1)``, ``range(start, start + N)``, ``trange(N)``,
  ``tqdm(range(N))``; None for any other iterable.
* ``range_arguments(call)``: the start, stop and step a ``range(...)`` call is given.
* ``is_epoch_loop(training, node)``: the loop calls ``train_one_epoch``/``run_epoch``-like
  functions; or its variable is named like an epoch and it trains; or its body runs a data
  loop (not over ``range``) that trains.
* ``loop_is_epoch(training, loop)``: the training model's ``epoch`` kind, or ``is_epoch_loop``;
  ``inside_epochs(training, loops, function)``: one of ``loops`` is, or one around a caller of
  ``function`` (code that runs once or more per epoch).
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.model import Loop
from torchlint.semantic.training import EPOCH, EPOCH_VAR
from torchlint.statements import dotted_name
from torchlint.torch_api import mode_switch
from torchlint.tree import iter_nodes

_TRAIN_CALL = re.compile(r"train|fit", re.IGNORECASE)
_EPOCH_CALL = re.compile(r"epoch", re.IGNORECASE)
_RUN_CALL = re.compile(r"train|fit|run", re.IGNORECASE)
_RANGES = {"range", "trange"}
_PROGRESS = ("tqdm", "track", "progress_bar")
# Some call in the file must look like this for any loop to be an epoch loop.
TRAINISH_CALL = re.compile(r"train|fit|epoch|backward|step", re.IGNORECASE)


def call_name(call: cst.Call) -> str:
    """The last name of the callee: ``f`` of ``f(...)``, ``m`` of ``x.m(...)``."""
    func = call.func
    kind = type(func)  # (neither class is subclassed)
    if kind is cst.Name:
        return func.value  # type: ignore[union-attr]
    if kind is cst.Attribute:
        return func.attr.value  # type: ignore[union-attr]
    return ""


def range_stop(ctx, it: cst.BaseExpression) -> cst.BaseExpression | None:
    """The iteration count of ``range(N)``, ``range(1, N + 1)``, ``range(s, s + N)``,
    ``trange(N)``, ``tqdm(range(N))`` (``N``); None for any other iterable."""
    if not isinstance(it, cst.Call):
        return None
    func = it.func
    name = func.value if isinstance(func, cst.Name) else None
    if name is None and isinstance(func, cst.Attribute) and func.attr.value in ("tqdm", "trange"):
        name = func.attr.value
    if name in _PROGRESS and it.args and isinstance(it.args[0].value, cst.Call):
        return range_stop(ctx, it.args[0].value)
    if name not in _RANGES or name == "range" and ctx.is_imported(func):
        return None
    bounds = range_arguments(it)
    return _count(bounds[0], bounds[1]) if bounds is not None else None


def range_arguments(call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression,
                                             cst.BaseExpression | None] | None:
    """(start, stop, step) of a ``range``-like call's arguments as ``range`` reads them: one to
    three positional arguments, keywords left out (``trange(n, desc=...)``); start and step None
    where not given. None where the count of positional arguments is wrong or one is starred."""
    args = [a for a in call.args if a.keyword is None]
    if not args or len(args) > 3 or any(a.star for a in args):
        return None
    if len(args) == 1:
        return None, args[0].value, None
    return args[0].value, args[1].value, args[2].value if len(args) == 3 else None


def _count(start: cst.BaseExpression | None, stop: cst.BaseExpression) -> cst.BaseExpression:
    """``N`` of ``range(1, N + 1)`` (a name plus one) and of ``range(s, s + N)``; else the stop."""
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add):
        left = dotted_name(stop.left)
        if left is not None and left == dotted_name(start):
            return stop.right
        if isinstance(stop.left, cst.Name) and isinstance(stop.right, cst.Integer) and stop.right.value == "1":
            return stop.left
    return stop


def is_epoch_loop(training, node: cst.For) -> bool:
    """It calls ``train_one_epoch``/``run_epoch``-like functions; or its variable is named
    like an epoch and it trains; or its body runs a data loop (not over ``range``) that trains."""
    model = training.model
    loop = model.loops.get(node)
    if loop is None:
        return False
    names = [call_name(site.node) for site in model.calls_in_loop(loop)]
    if any(_EPOCH_CALL.search(name) and _RUN_CALL.search(name) for name in names):
        return True
    var = node.target.value if isinstance(node.target, cst.Name) else None
    if var is not None and EPOCH_VAR.search(var) and (
            any(_TRAIN_CALL.search(name) for name in names) or training.loop_runs(loop)):
        return True
    return any(_trains(training, inner) for inner in loop.scope.loops if inner.within(loop)
               and isinstance(inner.node, cst.For) and range_stop(training.ctx, inner.node.iter) is None)


def _trains(training, loop: Loop) -> bool:
    """An iteration does backward or an optimizer step, or calls ``train...``/``fit...``
    (not ``model.train()``)."""
    if training.loop_runs(loop):
        return True
    return any(_TRAIN_CALL.search(call_name(site.node)) and mode_switch(site.node) is None
               for site in training.model.calls_in_loop(loop))


def loop_is_epoch(training, loop: Loop) -> bool:
    """An epoch loop by the training model's kinds, or by ``is_epoch_loop`` (``for epoch in
    range(n): train_epoch(...)``, whose kinds say training)."""
    return EPOCH in training.loop_kinds(loop) or isinstance(loop.node, cst.For) and is_epoch_loop(training, loop.node)


def inside_epochs(training, loops, scope) -> bool:
    """One of ``loops`` is an epoch loop, or one around a same-file caller of the function
    ``scope`` belongs to."""
    if any(loop_is_epoch(training, loop) for loop in loops):
        return True
    function = enclosing_function(training.model, scope)
    return any(loop_is_epoch(training, loop) for caller in training.graph.callers(function) for loop in caller.all_loops)


def targets(loop: Loop) -> set[str]:
    """The names a ``for`` loop binds in each iteration (``for block in blocks``: ``block``)."""
    node = loop.node
    return {key for key, bindings in loop.scope.bindings.items() if any(b.kind == "for" and b.node is node for b in bindings)}


def counters(ctx, loop: Loop) -> set[str]:
    """The names each iteration of ``loop`` advances: a ``for`` loop's ``targets``; the
    names a ``while`` loop's test reads that its body rebinds (``while epoch < n: ... epoch += 1``)."""
    node = loop.node
    if isinstance(node, cst.For):
        return targets(loop)
    tested = {n.value for n in iter_nodes(node.test) if isinstance(n, cst.Name)}
    return {key for key in tested
            if any(b.kind in ("assign", "aug", "ann", "unpack") and ctx.inside(b.node, node.body)
                   for b in loop.scope.bindings.get(key, ()))}


def first_iteration_skipped(ctx, node: cst.CSTNode, loop: Loop) -> bool:
    """``node`` runs, inside ``loop``, only under a test on one of its ``counters`` that the
    first iteration fails: ``if epoch > start:``, ``if step != 0:``, ``if i:``, ``if epoch >= 1:``."""
    names = counters(ctx, loop)
    if not names:
        return False
    for up in ctx.ancestors(node):
        if up is loop.node:
            return False
        if isinstance(up, cst.If) and any(_excludes_start(test, names) for test in _conjuncts(up.test)):
            return True
    return False


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def _excludes_start(test: cst.BaseExpression, names: set[str]) -> bool:
    if isinstance(test, cst.Name):
        return test.value in names
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    left_counter = isinstance(test.left, cst.Name) and test.left.value in names
    right_counter = isinstance(right, cst.Name) and right.value in names
    if left_counter and isinstance(op, (cst.GreaterThan, cst.NotEqual)):
        return True
    if right_counter and isinstance(op, (cst.LessThan, cst.NotEqual)):
        return True
    return left_counter and isinstance(op, cst.GreaterThanEqual) and isinstance(right, cst.Integer) \
        and int(right.evaluated_value) >= 1
