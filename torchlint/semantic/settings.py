"""Where a value written in code is a configurable default rather than a hard-coded one.

* ``configurator_order(model)``: where the module's own code runs ``exec(...)`` or
  ``globals().update(...)`` (the "configurator" idiom: ``exec(open("configurator.py").read())``
  overrides the script's top-level assignments from the command line or a config file), so
  every module-level assignment before it is an overridable default.
* ``header_constants(model)``: names assigned once, in the block of imports and plain value
  assignments (no call in the value) at the top of a script: named constants, whatever their
  letter case. The first other statement (``model = Net()``, a ``def``, a loop) ends it.
* ``fills_parameter_default(model, node)``: ``node`` builds the value a parameter of the
  enclosing function takes when the caller passed none (``opt = Adam(...) if opt is None
  else opt``, ``opt or Adam(...)``, ``if opt is None: opt = Adam(...)``).
"""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.model import SemanticModel
from torchlint.tree import iter_nodes

_HEADER_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.Import, cst.ImportFrom)
# Calls a script's preamble makes between its imports and settings: where to import from,
# which warnings to show, which plotting backend (they set up the run; they decide nothing).
_PREAMBLE_CALLS = frozenset({"sys.path.append", "sys.path.insert", "sys.path.extend", "warnings.filterwarnings",
                             "warnings.simplefilter", "matplotlib.use"})


def configurator_order(model: SemanticModel) -> int | None:
    """The order (``Binding.order`` scale) of the last call of the builtin ``exec`` or of
    ``globals().update`` in module-level code (not a function's); None if there is none."""
    found = None
    for site in model.module.calls:
        func = site.node.func
        if isinstance(func, cst.Name) and func.value == "exec" and not model.lookup("exec", site.scope) \
                or isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value in ("globals", "vars") \
                and not func.value.args:
            found = site.order
    return found


def header_constants(model: SemanticModel) -> set[str]:
    """Names bound once at module level, by an assignment in the script's leading block of
    imports and assignments of plain values (a docstring allowed first, and preamble calls
    such as ``sys.path.append(...)`` anywhere in it)."""
    body = model.ctx.module.body
    header: set[cst.CSTNode] = set()
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            break
        small = stmt.body
        if i == 0 and len(small) == 1 and isinstance(small[0], cst.Expr) and isinstance(small[0].value, cst.SimpleString):
            continue
        if not all(isinstance(s, _HEADER_STATEMENTS) and not _calls(s) or _preamble(model, s) for s in small):
            break
        header.update(small)
    names = set()
    for key, bindings in model.module.bindings.items():
        if "." not in key and "[" not in key and len(bindings) == 1 and bindings[0].node in header:
            names.add(key)
    return names


def _preamble(model: SemanticModel, statement: cst.BaseSmallStatement) -> bool:
    return isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
        and model.ctx.qualified_name(statement.value.func) in _PREAMBLE_CALLS


def _calls(statement: cst.BaseSmallStatement) -> bool:
    value = getattr(statement, "value", None)
    return value is not None and any(isinstance(n, cst.Call) for n in iter_nodes(value))


def fills_parameter_default(model: SemanticModel, node: cst.CSTNode) -> bool:
    """``node`` computes the fallback of a parameter that is None (or falsy) when the caller
    gives none: the chosen branch of ``p if p is not None else node`` / ``node if p is None
    else p`` / ``p or node``, ``p = node`` under ``if p is None:`` / ``if not p:``, or any code
    of the branch that runs without ``p`` (``if p: <use p> else: <build one>``), where ``p``
    is a parameter of the enclosing function or ``self.<attr>`` the class only ever sets from
    one (``_given_by_caller``)."""
    child = node
    for anc in model.ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        if isinstance(anc, cst.IfExp):
            name = _none_test(anc.test)
            if name is not None and child is (anc.body if name[1] else anc.orelse):
                return _given_by_caller(model, name[0], node)
        elif isinstance(anc, cst.BooleanOperation) and isinstance(anc.operator, cst.Or) and child is anc.right \
                and isinstance(anc.left, cst.Name):
            return _is_parameter(model, anc.left.value, node)
        elif isinstance(anc, cst.Assign) and isinstance(child, cst.BaseExpression) and child is anc.value:
            targets = {t.target.value for t in anc.targets if isinstance(t.target, cst.Name)}
            if any(_guarded_by_none_test(model, anc, name) for name in targets):
                return True
        elif isinstance(anc, cst.If):  # ``if p: <use p> else: <build one>``, ``if p is None: <build one>``
            name = _none_test(anc.test)
            if name is not None and child is (anc.body if name[1] else anc.orelse) \
                    and _given_by_caller(model, name[0], node, none_default=True):
                return True
        child = anc
    return False


def _given_by_caller(model: SemanticModel, name: str, at: cst.CSTNode, *, none_default: bool = False) -> bool:
    """``name`` is a parameter of the enclosing function, or ``self.<attr>`` that the class's
    methods only ever set from a parameter (``self.lr_scheduler = lr_scheduler``); with
    ``none_default``, a parameter whose default is None (an object the caller may give, not a
    flag such as ``warm_start=False``)."""
    if not name.startswith("self."):
        return _is_parameter(model, name, at, none_default)
    cls = model.scope_of(at).cls
    stores = cls.self_assigned.get(name[len("self."):], ()) if cls is not None else ()
    for target in stores:
        assign = model.ctx.parent(model.ctx.parent(target))
        if not isinstance(assign, cst.Assign) or not isinstance(assign.value, cst.Name) \
                or not _is_parameter(model, assign.value.value, assign, none_default):
            return False
    return bool(stores)


def _tested(expr: cst.BaseExpression) -> str | None:
    """``p`` or ``self.p``: what a None test may be about."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def _none_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """(``p``, True) for ``p is None`` / ``not p``; (``p``, False) for ``p is not None`` / ``p``
    (``p`` a name or ``self.<attr>``)."""
    name = _tested(test)
    if name is not None:
        return name, False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name = _tested(test.expression)
        return None if name is None else (name, True)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _tested(test.left) is not None:
        target = test.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
            if isinstance(target.operator, cst.Is):
                return _tested(test.left), True
            if isinstance(target.operator, cst.IsNot):
                return _tested(test.left), False
    return None


def _guarded_by_none_test(model: SemanticModel, assign: cst.Assign, name: str) -> bool:
    """``name = ...`` is in the body of ``if name is None:`` / ``if not name:`` (nothing
    between but plain blocks and ``try:``, whose handlers deal with a failed fallback), and
    ``name`` is a parameter."""
    for anc in model.ctx.ancestors(assign):
        if isinstance(anc, cst.If):
            found = _none_test(anc.test)
            return found is not None and found == (name, True) and _is_parameter(model, name, assign)
        if not isinstance(anc, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Try)):
            return False
    return False


def _is_parameter(model: SemanticModel, name: str, at: cst.CSTNode, none_default: bool = False) -> bool:
    function = model.scope_of(at).function()
    return function is not None and any(
        b.kind == "param" and (not none_default or isinstance(b.node, cst.Param) and isinstance(b.node.default, cst.Name)
                               and b.node.default.value == "None")
        for b in function.bindings.get(name, ()))
