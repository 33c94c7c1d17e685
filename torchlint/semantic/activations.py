"""Activations and what reaches a loss: what a forward, an ``nn.Sequential`` or a helper returns
through an activation, and what model an input comes out of.

* ``values_of(model, expr)`` / ``single_value(model, expr)``: what a name or ``self.<attr>``
  holds (the values of every plain assignment it may see; the one value when there is one).
* ``activation_of(model, expr)``: ``"softmax"``/``"log_softmax"``/``"sigmoid"`` when ``expr`` is
  such an activation's output (``F.softmax(h)``, ``h.softmax(1)``, ``nn.Softmax(1)(h)``,
  ``self.act(h)`` with ``self.act = nn.Softmax(1)``), directly or through a name bound to one.
* ``activation_call(model, expr)``: the form and the input of an activation applied right
  there (what a fix hands the loss instead).
* ``model_of(ctx, model, expr)``: ``m(x)`` comes out of an ``nn.Sequential`` ending in an
  activation, or out of a construction of a class (its project index name); ``m`` may be a
  parameter or a ``self.`` attribute the file's calls fill (``Trainer(Net(), ...)`` keeping
  ``self.model``), or come from another module (``("entries", ...)``, ``constructors.Entry``).
* ``built_model(ctx, model, call)``: the same for a construction call.
* ``returns_activation(ctx, model, forward)``: the activation every ``return`` of a forward
  (or helper) gives.
"""

from __future__ import annotations

import libcst as cst

from torchlint.libraries import torch_nn_class
from torchlint.semantic.constructors import origins, unwrapped
from torchlint.semantic.modules import class_key, self_attr_bindings
from torchlint.torch_api import activation_function, activation_layer, activation_method, keyword_arg
from torchlint.tree import iter_nodes


def values_of(model, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a name or ``self.<attr>`` holds: the values of every binding it may see (empty
    when one is no plain assignment: a parameter, an unpacking, a loop variable...)."""
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        scope = model.scope_of(expr)
        if scope.self_name != expr.value.value or scope.cls is None:
            return []
        bindings = self_attr_bindings(model, scope.cls, expr.attr.value)
    else:
        return []
    if not bindings or any(b.kind not in ("assign", "ann") or b.value is None for b in bindings):
        return []
    return [b.value for b in bindings]


def single_value(model, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The one value a name or ``self.<attr>`` holds (``values_of``), else None."""
    values = values_of(model, expr)
    return values[0] if len(values) == 1 else None


def activation_of(model, expr: cst.BaseExpression, depth: int = 0) -> str | None:
    """``softmax``/``log_softmax``/``sigmoid`` when ``expr`` is such an activation's output."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Name):
        value = single_value(model, expr)
        return activation_of(model, value, depth + 1) if value is not None else None
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    found = activation_function(model.qualified_name(func))
    if found is not None:
        return found
    if isinstance(func, cst.Call):  # nn.Softmax(dim=1)(h)
        return activation_layer(model.qualified_name(func.func))
    if isinstance(func, cst.Attribute):
        if not model.is_imported(func):
            found = activation_method(func.attr.value)
            if found is not None and (expr.args or found == "sigmoid"):
                return found
        value = single_value(model, func)  # self.act(h) with self.act = nn.Softmax(1)
        if isinstance(value, cst.Call):
            return activation_layer(model.qualified_name(value.func))
    return None


def activation_call(model, expr: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """(``"function"``/``"method"``/``"layer"``, the activation's input) for an activation
    applied right here: ``F.softmax(h, dim=1)``, ``h.softmax(1)``, ``nn.Softmax(1)(h)``."""
    if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
        return None
    func = expr.func
    positional = [a for a in expr.args if a.keyword is None]
    if activation_function(model.qualified_name(func)) is not None:
        first = positional[0] if positional else keyword_arg(expr, "input")
        return ("function", first.value) if first is not None else None
    if isinstance(func, cst.Call) and activation_layer(model.qualified_name(func.func)) is not None:
        return ("layer", expr.args[0].value) if len(expr.args) == 1 and positional else None
    if isinstance(func, cst.Attribute) and not model.is_imported(func) and activation_method(func.attr.value):
        return "method", func.value
    return None


def returns_activation(ctx, model, forward: cst.FunctionDef) -> str | None:
    """The activation every ``return`` of ``forward`` gives (not its nested functions'): an
    activation's output, or the output of an ``nn.Sequential`` ending in one."""
    kinds = set()
    for node in iter_nodes(forward.body, into_scopes=False):
        if isinstance(node, cst.Return):
            if node.value is None:
                return None
            found = activation_of(model, node.value)
            if found is None:
                seq = model_of(ctx, model, node.value)
                found = seq[1] if seq is not None and seq[0] == "sequential" else None
            kinds.add(found)
    return kinds.pop() if len(kinds) == 1 else None


def model_of(ctx, model, expr: cst.BaseExpression, depth: int = 0) -> tuple[str, str] | None:
    """For ``m(x)`` (or a name bound to it once): ``("sequential", activation)`` when ``m`` is an
    ``nn.Sequential`` whose last layer is an activation, ``("class", name)`` when ``m`` is bound
    to a construction of a class (the project index's name: a same-file class, or the
    qualified name of an imported one), else None."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Name):
        value = single_value(model, expr)
        return model_of(ctx, model, value, depth + 1) if value is not None else None
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return None
    built = single_value(model, expr.func)
    if built is None or not isinstance(unwrapped(model, built), cst.Call):  # a parameter, ``model.to(device)``
        return _handed_model(ctx, model, expr.func, expr)
    built = unwrapped(model, built)
    return built_model(ctx, model, built)


def _handed_model(ctx, model, func: cst.BaseExpression, at: cst.CSTNode) -> tuple[str, object] | None:
    """The model a parameter or a ``self.`` attribute holds (``constructors.origins``): the one
    kind of model every construction the file hands it is (``Trainer(Net(), ...)`` keeping
    ``self.model``; ``train(model, ...)``), or, when none is in the file, ``("entries", [...])``:
    the parameters through which another module hands it."""
    found = origins(ctx.semantic, func, at)
    built = found.calls()
    if built:
        kinds = {built_model(ctx, model, call) for call in built}
        return kinds.pop() if len(kinds) == 1 else None
    if found.entries and not found.values and not found.unknown:
        return "entries", [entry.to_json() for entry in found.entries]
    return None


def built_model(ctx, model, built: cst.Call) -> tuple[str, str] | None:
    """What the construction ``built`` makes (see ``model_of``): ``("sequential", activation)``,
    ``("class", name)``, else None."""
    if not isinstance(built.func, (cst.Name, cst.Attribute)):
        return None
    qualified = model.qualified_name(built.func)
    if qualified is None:
        return None
    if torch_nn_class(qualified) == "Sequential":
        layers = [a.value for a in built.args if a.keyword is None and not a.star]
        last = layers[-1] if layers and not any(a.star for a in built.args) else None
        got = activation_layer(model.qualified_name(last.func)) if isinstance(last, cst.Call) else None
        return ("sequential", got) if got is not None else None
    if model.is_imported(built.func):
        return ("class", qualified) if not qualified.startswith("torch.") else None
    for b in model.binding_of(built.func):
        if b.kind == "class":
            info = model.classes.get(b.node)
            if info is not None:
                module = ctx.import_table.module_name
                return "class", f"{module}.{class_key(info)}" if module else class_key(info)
    return None
