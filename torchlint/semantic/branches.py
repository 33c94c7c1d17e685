"""Which statements cannot run in the same pass: the two branches of one ``if``
(``exclusive``); the control statements a statement runs under in its function
(``blocks_around``); statements guarded by opposite tests of one value that nothing rebinds
between them (``never_together``); the statements of a function that a call cannot reach, its literal
arguments deciding the ``if`` around them (``ruled_out``), the parameters whose default alone
keeps a statement from running (``default_guards``), and those of a private function that
none of its calls reaches (``dead_at_every_call``); and whether a statement runs where the code
catches an error (``catches``)."""

from __future__ import annotations

import ast
from typing import Callable

import libcst as cst

from torchlint.semantic.callgraph import passed_argument

_CONTROL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Match)


def _if_branches(ctx, node: cst.CSTNode) -> dict[cst.If, cst.CSTNode]:
    """For each enclosing ``if``, the part of it holding ``node`` (its test, body or orelse)."""
    out: dict[cst.If, cst.CSTNode] = {}
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.If):
            out[anc] = child
        child = anc
    return out


def exclusive(ctx, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` sit in different branches (body / ``else``/``elif``) of one ``if``:
    ``if amp: scaler.scale(loss).backward() else: loss.backward(); opt.step()``."""
    branches_a = _if_branches(ctx, a)
    if not branches_a:
        return False
    for node, part in _if_branches(ctx, b).items():
        other = branches_a.get(node)
        if other is not None and other is not part and node.test not in (other, part):
            return True
    return False


# What a test says of a name where a branch runs: None, not None, true, false.
_NONE, _NOT_NONE, _TRUE, _FALSE = "none", "not-none", "true", "false"
_CONTRARY = {frozenset((_NONE, _NOT_NONE)), frozenset((_NONE, _TRUE)), frozenset((_TRUE, _FALSE))}


def _test_states(test: cst.BaseExpression, holds: bool) -> list[tuple[cst.Name, str]]:
    """What ``test`` says of plain names when it evaluates to ``holds``: ``x is None``,
    ``x is not None``, ``x``, ``not x``, and the parts of an ``and`` that holds (of an ``or``
    that fails)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _test_states(test.expression, not holds)
    if isinstance(test, cst.BooleanOperation):
        both = isinstance(test.operator, cst.And) if holds else isinstance(test.operator, cst.Or)
        return [*_test_states(test.left, holds), *_test_states(test.right, holds)] if both else []
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return [(test, _TRUE if holds else _FALSE)]
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        target = test.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
            if isinstance(target.operator, cst.Is):
                return [(test.left, _NONE if holds else _NOT_NONE)]
            if isinstance(target.operator, cst.IsNot):
                return [(test.left, _NOT_NONE if holds else _NONE)]
    return []


def _guards(ctx, node: cst.CSTNode) -> list[tuple[cst.Name, str]]:
    """What the ``if`` tests around ``node`` in its function say of names where it runs."""
    out = []
    for anc, part in _if_branches(ctx, node).items():
        if part is anc.body:
            out.extend(_test_states(anc.test, True))
        elif part is not anc.test:
            out.extend(_test_states(anc.test, False))
    return out


def never_together(sem, a: cst.CSTNode, b: cst.CSTNode, within: cst.CSTNode | None = None) -> bool:
    """``a`` and ``b`` never run in the same pass: ``a`` runs only where a test of a name
    holds and ``b`` only where a contrary one does (``if optimizer is not None: ...`` against
    ``if optimizer is None: ... else: ...``; ``x is None`` / ``x``; ``x`` / ``not x``), both
    reading the same bindings of it, none of them inside ``within`` (a loop: the value is the
    same in each of its iterations, so no iteration runs both)."""
    guards_b = _guards(sem.ctx, b)
    if not guards_b:
        return False
    model = sem.model
    for name_a, state_a in _guards(sem.ctx, a):
        for name_b, state_b in guards_b:
            if name_a.value != name_b.value or frozenset((state_a, state_b)) not in _CONTRARY:
                continue
            seen_a, seen_b = model.reaching(name_a.value, name_a), model.reaching(name_b.value, name_b)
            if not seen_a or {id(x) for x in seen_a} != {id(x) for x in seen_b}:
                continue
            if within is not None and any(x.node is within or sem.ctx.inside(x.node, within) for x in seen_a):
                continue
            return True
    return False


def blocks_around(ctx, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The ``if``/loop/``try``/``match`` statements around ``node`` inside its function (innermost
    first): what decides whether, and how often, ``node`` runs there."""
    blocks = []
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(anc, _CONTROL):
            blocks.append(anc)
    return blocks


_NO_VALUE = object()


def ruled_out(ctx, node: cst.CSTNode, function: cst.FunctionDef,
              argument: Callable[[str], cst.BaseExpression | None]) -> bool:
    """``node`` (in ``function``) cannot run for a call passing ``argument(name)`` for each
    parameter: it sits in a branch of an ``if`` (or a conditional expression) of ``function``
    whose test is a parameter (``if mode == "inference":``, ``if not training:``, ``if
    pretrained:``, ``Engine(f) if not deterministic else DeterministicEngine(f)``) that the
    call's literal argument (``build("training")``) decides the other way."""
    params, tested, _ = _tested_parameters(ctx, function)
    if not tested:
        return False  # no test of the function a parameter's value could decide (most functions)
    return any(_against(test, in_body, params, argument) for test, in_body in _tests_around(ctx, node, function))


def _tested_parameters(ctx, function: cst.FunctionDef) -> tuple[frozenset[str], frozenset[str], tuple[cst.Param, ...]]:
    """``function``'s parameter names; those an ``if`` or conditional expression inside it
    tests in a shape an argument's literal could decide (``_decidable_names``), since a
    parameter none of them names decides no test around a node of it (``ruled_out``,
    ``default_guards``); and the tested ones with a default, as parameters. Once per
    function (``memo``), from the tests inside it (``SemanticModel.tests_within``)."""
    model = ctx.semantic.model
    table = model.memo("tested_parameters")
    found = table.get(function)
    if found is None:
        every = (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
        params = frozenset(p.name.value for p in every)
        names = {name for node in model.tests_within(function) for name in _decidable_names(node.test)}
        tested = params & names
        found = table[function] = (params, tested, tuple(p for p in every if p.default is not None and p.name.value in tested))
    return found


def _tests_around(ctx, node: cst.CSTNode, function: cst.CSTNode) -> list[tuple[cst.BaseExpression, bool]]:
    """(the test, whether ``node`` is in the branch it takes) of each ``if`` and conditional
    expression of ``function`` (not of a nested function) around ``node``, innermost first."""
    found = []
    child = node
    for anc in ctx.ancestors(node):
        if anc is function or isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(anc, (cst.If, cst.IfExp)) and child is not anc.test:
            found.append((anc.test, child is anc.body))
        child = anc
    return found


def _against(test: cst.BaseExpression, in_body: bool, params: set[str], argument) -> bool:
    """The call's literal arguments decide ``test`` so that the branch holding the node is not taken."""
    taken = _decided(test, params, argument)
    return taken is not None and in_body != taken


def default_guards(ctx, node: cst.CSTNode, function: cst.CSTNode) -> tuple[str, ...]:
    """The parameters of ``function`` whose default alone rules ``node`` out (``ruled_out``
    with that parameter at its default and the others unknown): ``node`` runs only for a call
    that passes one of them. ignite's ``create_supervised_trainer(..., deterministic=False)``
    builds ``DeterministicEngine(f)`` only ``if deterministic``: a call leaving it out never
    does. Empty where no ``if`` or conditional expression of ``function`` (not of a nested
    function) holds ``node``."""
    if not isinstance(function, cst.FunctionDef):
        return ()
    params, _, defaults = _tested_parameters(ctx, function)  # (the others decide nothing)
    tests = _tests_around(ctx, node, function) if defaults else []
    if not tests:
        return ()
    return tuple(p.name.value for p in defaults if any(
        _against(test, in_body, params, lambda name, p=p: p.default if name == p.name.value else None)
        for test, in_body in tests))


def dead_at_every_call(sem, node: cst.CSTNode, function: cst.CSTNode) -> bool:
    """``node`` (in ``function``) runs at none of its calls: ``function`` is private to the file
    (a name with one leading underscore, not a dunder), written in the file only at its calls,
    which the call graph resolves to it, and each of them passes (or leaves at its default) a
    literal that decides an ``if`` around ``node`` the other way (``ruled_out``): pytorch-
    forecasting's ``self._scaled_dot_product_attention(q, k, v)`` leaves ``is_causal=False``, so
    its ``if is_causal:`` branch never runs. A function used any other way (passed on, named
    in another file, called through ``*args``) is not judged."""
    if not isinstance(function, cst.FunctionDef):
        return False
    name = function.name.value
    if not name.startswith("_") or name.startswith("__"):
        return False
    sites = sem.graph.callers(function)
    if not sites:
        return False
    calls = {id(site.node.func) for site in sites}
    attributes, names = _written_names(sem.model).get(name, ((), ()))
    if any(id(ref) not in calls for ref in attributes):
        return False  # ``fn = self._helper``: passed on
    attrs = {id(ref.attr) for ref in attributes}
    if any(id(ref) not in attrs and id(ref) not in calls and ref is not function.name for ref in names):
        return False  # passed on, or another function of the name
    for site in sites:
        if not ruled_out(sem.ctx, node, function, lambda param, site=site: passed_argument(sem.model, site, function,
                                                                                         param)):
            return False
    return True


def _written_names(model) -> dict[str, tuple[list[cst.Attribute], list[cst.Name]]]:
    """Where the file writes each name: the attributes ``<x>.name`` and the names ``name``
    (attribute names among them), gathered once per file (``memo``) for
    ``dead_at_every_call``, which asks of every private function it judges."""
    table = model.memo("written_names")
    if not table and model.order:
        for ref in model.nodes_of(cst.Attribute, cst.Name):
            if type(ref) is cst.Attribute:
                table.setdefault(ref.attr.value, ([], []))[0].append(ref)
            else:
                table.setdefault(ref.value, ([], []))[1].append(ref)
    return table


_DECIDING = (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)


def _deciding_shape(test: cst.BaseExpression) -> tuple[bool, cst.Name | cst.Comparison] | None:
    """The shape of a test a literal argument could decide (``_decided``): whether an odd
    number of ``not`` wraps it, and inside them a name or one ``==``/``!=``/``is``/``is not``
    comparison; None for any other test."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if isinstance(test, cst.Name):
        return negated, test
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, _DECIDING):
        return negated, test
    return None


def _decidable_names(test: cst.BaseExpression) -> list[str]:
    """The names a literal argument for them could decide ``test`` by (``_deciding_shape``)."""
    shape = _deciding_shape(test)
    if shape is None:
        return []
    inner = shape[1]
    if isinstance(inner, cst.Name):
        return [inner.value]
    return [side.value for side in (inner.left, inner.comparisons[0].comparator) if isinstance(side, cst.Name)]


def _decided(test: cst.BaseExpression, params: set[str], argument) -> bool | None:
    """The value of ``test`` for the call, when it is decided by a literal argument."""
    shape = _deciding_shape(test)
    if shape is None:
        return None
    negated, inner = shape
    if isinstance(inner, cst.Name):
        value = _literal_argument(inner, params, argument)
        if value is _NO_VALUE:
            return None
        return bool(value) is not negated
    target = inner.comparisons[0]
    left = _literal_argument(inner.left, params, argument)
    right = _literal(target.comparator)
    if left is _NO_VALUE:
        left, right = _literal_argument(target.comparator, params, argument), _literal(inner.left)
    if left is _NO_VALUE or right is _NO_VALUE:
        return None
    same = left == right and type(left) is type(right)
    return same is not negated if isinstance(target.operator, (cst.Equal, cst.Is)) else same is negated


def _literal_argument(expr: cst.BaseExpression, params: set[str], argument) -> object:
    if not isinstance(expr, cst.Name) or expr.value not in params:
        return _NO_VALUE
    passed = argument(expr.value)
    return _literal(passed) if passed is not None else _NO_VALUE


def _literal(expr: cst.BaseExpression) -> object:
    """The value of a literal string, number, ``True``/``False``/``None``; else ``_NO_VALUE``."""
    if isinstance(expr, cst.Name):
        return {"True": True, "False": False, "None": None}.get(expr.value, _NO_VALUE)
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        try:
            return ast.literal_eval(cst.Module([]).code_for_node(expr))
        except (ValueError, SyntaxError):
            return _NO_VALUE
    return _NO_VALUE


def catches(ctx, node: cst.CSTNode, error: str) -> bool:
    """``node`` runs in the body of a ``try`` one of whose handlers names ``error`` (itself or
    in a tuple: ``except (RuntimeError, ValueError) as e``): the code expects that error there
    (a tutorial demonstrating it, an out-of-memory fallback)."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(anc, (cst.Try, cst.TryStar)) and child is anc.body:
            for handler in anc.handlers:
                kind = handler.type
                names = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
                if any(isinstance(n, (cst.Name, cst.Attribute)) and
                       (n.value if isinstance(n, cst.Name) else n.attr.value) == error for n in names):
                    return True
        child = anc
    return False
