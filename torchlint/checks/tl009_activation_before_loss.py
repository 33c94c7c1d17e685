"""TL009 activation-before-loss: softmax output fed to ``CrossEntropyLoss``/``F.cross_entropy``
or ``NLLLoss``/``F.nll_loss``, sigmoid output fed to ``BCEWithLogitsLoss``.

A loss call is recognised (``torch_api.logits_loss``) as a call of the functional loss, of
a constructed loss (``nn.CrossEntropyLoss()(out, y)``), or of a name or ``self.<attr>`` every
binding of which constructs one. Its input (the first argument, or ``input=``) is judged:

* an activation (``F.softmax``, ``torch.sigmoid``, ``x.softmax(1)``, ``nn.Softmax(1)(h)``,
  ``self.act(h)`` with ``self.act = nn.Softmax(1)``), directly or through a local name whose
  only reaching binding is one: reported here;
* the output of a model: a local or ``self.<attr>`` bound to ``nn.Sequential(..., nn.Softmax())``
  (reported here) or to a class's construction (``Net(...)``, same file or imported): the class
  goes into the facts with the loss, and the project pass reports when the class (or the
  nearest of its ancestors that defines ``forward``) has a ``forward`` every return of which
  is such an activation (each file records those endings).

Never reported: ``log_softmax`` before ``CrossEntropyLoss`` (harmless: log-softmax is
idempotent), softmax as the *target* (distillation), a model returning a tuple or only
sometimes an activation, a criterion that may be another loss.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.libraries import torch_nn_class
from torchlint.rule import Option, Rule
from torchlint.semantic.modules import class_key, self_attr_bindings
from torchlint.statements import dotted_name
from torchlint.torch_api import activation_function, activation_layer, activation_method, keyword_arg, logits_loss

# (what the loss wants, what it got) -> the fix
_BAD = {
    ("cross_entropy", "softmax"): "which applies log_softmax itself: softmax is applied twice and the gradients "
                                  "shrink; pass the logits instead",
    ("nll", "softmax"): "which expects log-probabilities: the loss is wrong and can go negative; use log_softmax "
                        "instead of softmax",
    ("bce_logits", "sigmoid"): "which applies sigmoid itself: sigmoid is applied twice; pass the logits instead "
                               "(or use nn.BCELoss)",
}


def message(source: str, loss: str, wants: str, got: str) -> str:
    return f"{source} is passed to `{loss}`, {_BAD[(wants, got)]}"


def model_source(cls: str, got: str) -> str:
    return f"The output of `{cls}` (its forward ends in {got})"


class ActivationBeforeLoss(Rule):
    code = "TL009"
    name = "activation-before-loss"
    severity = Severity.ERROR
    default_enabled = True
    summary = "softmax/sigmoid output fed to a loss that applies its own (CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss)"
    options: dict[str, Option] = {}
    requires_text = ("softmax", "Softmax", "sigmoid", "Sigmoid", "expit", "cross_entropy", "CrossEntropy", "nll_loss",
                     "NLLLoss", "with_logits", "WithLogits")
    fixable = (UNSAFE,)


    def finish(self) -> None:
        model = self.ctx.semantic.model
        ends = {}
        for info in model.classes.values():
            forward = info.methods.get("forward")
            got = _returns_activation(self.ctx, model, forward) if forward is not None else None
            if got is not None:
                ends[class_key(info)] = got
        uses = []
        for site in model.calls:
            call = site.node
            loss = self._loss(call)
            if loss is None:
                continue
            wants, written = loss
            arg = _input(call)
            if arg is None:
                continue
            direct = _activation(self.ctx, model, arg.value)
            if direct is not None:
                if (wants, direct) in _BAD:
                    self.report(arg.value, message(f"{direct.capitalize()} output", written, wants, direct),
                                fix=self._fix(model, arg.value, wants))
                continue
            produced = _model_of(self.ctx, model, arg.value)
            if produced is None:
                continue
            kind, data = produced
            if kind == "sequential":
                if (wants, data) in _BAD:
                    self.report(arg.value, message(f"The output of an nn.Sequential ending in {data}", written, wants, data))
                continue
            uses.append([data, wants, written, Span.of_range(self.ctx.position(arg.value)).to_json()])
        facts = {key: value for key, value in (("ends", ends), ("uses", uses)) if value}
        if facts:
            self.ctx.facts[self.code] = facts

    def _fix(self, model, activated: cst.BaseExpression, wants: str) -> Fix | None:
        """For an activation call written in the loss's argument (not through a name, which
        other code may read): its input instead (the logits), or for ``NLLLoss`` its
        ``log_softmax`` form. Unsafe: the loss's value changes, as the author may not expect."""
        found = _activation_call(model, activated)
        if found is None:
            return None
        form, logits = found
        if wants != "nll":
            return Fix.unsafe("Pass the logits to the loss", replace_node(self.ctx, activated, logits))
        renamed = _log_softmax(form, activated)
        if renamed is None:
            return None
        return Fix.unsafe("Use log_softmax instead of softmax", replace_node(self.ctx, activated, renamed))

    def _loss(self, call: cst.Call) -> tuple[str, str] | None:
        """(what the loss wants, the loss as written) if ``call`` computes such a loss."""
        model = self.ctx.semantic.model
        func = call.func
        wants = logits_loss(model.qualified_name(func))
        if wants is not None:
            return wants, dotted_name(func) or wants
        if isinstance(func, cst.Call):
            wants = logits_loss(model.qualified_name(func.func))
            return (wants, dotted_name(func.func) or wants) if wants is not None else None
        values = _values_of(model, func)
        if not values:
            return None
        kinds = {logits_loss(model.qualified_name(v.func)) if isinstance(v, cst.Call) else None for v in values}
        if len(kinds) != 1 or None in kinds:
            return None
        return kinds.pop(), dotted_name(func) or ""

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        ends: dict[str, str] = {}
        for record in project.records:
            facts = record.facts.get(cls.code)
            for qual, got in (facts or {}).get("ends", {}).items():
                ends[record.qualified(qual)] = got
        for record in project.records:
            facts = record.facts.get(cls.code)
            for written_cls, wants, loss, span in (facts or {}).get("uses", ()):
                name = project.resolve_class(written_cls, record)
                got = _ending(project, name, ends) if name is not None else None
                if got is None or (wants, got) not in _BAD:
                    continue
                yield Finding.at(cls, record.path, Span.from_json(span),
                                 message(model_source(name.rsplit(".", 1)[-1], got), loss, wants, got))


def _ending(project, name: str, ends: dict[str, str]) -> str | None:
    """The activation the forward ``name`` runs ends in: its own or the nearest ancestor's."""
    for cls in [name, *project.ancestors(name)]:
        found = project.class_fact(cls)
        if found is None:
            return None  # an external base: its forward is unknown
        if "forward" in found[1]["methods"]:
            return ends.get(cls)
    return None


def _input(call: cst.Call) -> cst.Arg | None:
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0]
    return keyword_arg(call, "input")


def _values_of(model, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
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


def _single_value(model, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    values = _values_of(model, expr)
    return values[0] if len(values) == 1 else None


def _activation(ctx, model, expr: cst.BaseExpression, depth: int = 0) -> str | None:
    """``softmax``/``log_softmax``/``sigmoid`` when ``expr`` is such an activation's output."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Name):
        value = _single_value(model, expr)
        return _activation(ctx, model, value, depth + 1) if value is not None else None
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
        value = _single_value(model, func)  # self.act(h) with self.act = nn.Softmax(1)
        if isinstance(value, cst.Call):
            return activation_layer(model.qualified_name(value.func))
    return None


def _activation_call(model, expr: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
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


def _log_softmax(form: str, call: cst.Call) -> cst.Call | None:
    """``call`` (a softmax) as its ``log_softmax`` form: ``F.log_softmax``, ``h.log_softmax``,
    ``nn.LogSoftmax``; None for a bare imported ``softmax`` (its log form is not imported)."""
    if form == "layer":
        layer = call.func.func
        if isinstance(layer, cst.Attribute) and layer.attr.value == "Softmax":
            return call.with_changes(func=call.func.with_changes(func=layer.with_changes(attr=cst.Name("LogSoftmax"))))
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "softmax":
        return call.with_changes(func=func.with_changes(attr=cst.Name("log_softmax")))
    return None


def _returns_activation(ctx, model, forward: cst.FunctionDef) -> str | None:
    """The activation every ``return`` of ``forward`` gives (not its nested functions')."""
    from torchlint.tree import iter_nodes

    kinds = set()
    for node in iter_nodes(forward.body, into_scopes=False):
        if isinstance(node, cst.Return):
            if node.value is None:
                return None
            found = _activation(ctx, model, node.value)
            if found is None:
                seq = _model_of(ctx, model, node.value)
                found = seq[1] if seq is not None and seq[0] == "sequential" else None
            kinds.add(found)
    return kinds.pop() if len(kinds) == 1 else None


def _model_of(ctx, model, expr: cst.BaseExpression, depth: int = 0) -> tuple[str, str] | None:
    """For ``m(x)`` (or a name bound to it once): ``("sequential", activation)`` when ``m`` is an
    ``nn.Sequential`` whose last layer is an activation, ``("class", name)`` when ``m`` is bound
    to a construction of a class (the project index's name: a same-file class, or the
    qualified name of an imported one), else None."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Name):
        value = _single_value(model, expr)
        return _model_of(ctx, model, value, depth + 1) if value is not None else None
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return None
    built = _single_value(model, expr.func)
    if not isinstance(built, cst.Call):
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
