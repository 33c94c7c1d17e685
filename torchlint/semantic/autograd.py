"""Which values carry an autograd graph, within one function (or module / class body).

A store, a return, a log call keeps a graph alive when what it holds carries one. The
analysis answers that for an expression read at a point of its code:

* ``Code``: the code one function (or the module body, or a class body) runs: its scope and
  the backward-like calls in it (``dataflow.gradient_target`` of each, with its call site);
  ``code_owner(scope)`` is the scope whose code a comprehension runs in (None for a lambda).
* ``GraphValues.carrier(code, expr, at)``: ``"backward"`` when ``expr`` is (bound to) a value
  this code differentiates (its saved activations freed by that backward), ``"retained"`` when
  every backward of it keeps its graph (``retains_graph``: ``retain_graph=True`` or
  ``create_graph=True``, so the activations stay with the value), ``"loss"`` for a loss function, loss module or criterion call,
  ``"model"`` for a model call (``model(x)``, ``self(x)`` in an ``nn.Module``, ``m.forward(x)``;
  not a frozen model, a pipeline, an ONNX session or an unpickled object), followed through
  names (the binding made last before the read; ``+=`` keeps what the name held), tuple
  unpacking (an element of what a same-file function called by its name returns counts only
  if that element carries a graph there: ``acc`` in ``loss, acc = self._run_network(x)``, which
  the name alone would call a model's output), arithmetic, displays, graph-keeping methods (``GRAPH_METHODS``) and torch
  functions; else None. Never through ``.detach()``/``.item()``/``.data`` and the like, a
  plain number (``dataflow.is_plain_number``), ``no_grad``, or a ``self`` attribute.
  A backward's differentiated keys leave out plain numbers and, in a product or quotient,
  factors with no graph of their own (``scale`` in ``(loss * scale).backward()``).
* ``GraphValues.bindings(code, key)`` / ``latest(code, key, at)``: the bindings of ``key``
  the code makes (``global`` names included), and the last one before ``at``.
* A loss or criterion call carries a graph unless every argument is known to carry none
  (made under ``no_grad``, detached, ``.data``, a number); a call of a same-file function
  carries what its returns carry; a ``model`` parameter that every call of its function
  fills with an instance of a plain class holding no grad-requiring tensor
  (``plain_class_records_graph``) is no model.
* ``records_graphs(ctx)``: whether anything in the file can carry a graph at all: some
  tensor may require grad (``requires_grad``, ``nn.Parameter``, a ``torch.nn`` layer or
  ``nn.Module`` class, a loaded or pretrained model, ``.parameters()``), or may come from
  elsewhere (an import of anything but the standard library, data and plotting libraries and
  torch's tensor, data and functional parts; in a ``.py`` file, for code in a function, a
  parameter of it, of a function around it or of its class's methods: another file may pass
  one). A notebook that hand-writes its model from plain tensors (a from-scratch MLP with
  ``torch.zeros(...).normal_()`` weights and a ``backward`` method of its own), or never
  imports torch, records none: ``carrier`` answers None there.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import libcst as cst

from torchlint import libraries
from torchlint.semantic.callgraph import passed_argument
from torchlint.semantic.dataflow import is_plain_number
from torchlint.semantic.model import COMPREHENSION, LAMBDA, MODULE, Binding, CallSite, Scope
from torchlint.torch_api import (expr_key, is_detached, is_false_literal, is_loss_constructor, is_loss_function,
                                 looks_like_criterion_name, looks_like_model_name)
from torchlint.tree import iter_nodes

# Methods whose result keeps the receiver's graph.
GRAPH_METHODS = {
    "mean", "sum", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "view", "reshape", "squeeze",
    "unsqueeze", "clone", "contiguous", "abs", "pow", "sqrt", "exp", "log", "flatten", "permute", "transpose",
    "sigmoid", "softmax", "log_softmax", "tanh", "relu", "mul", "div", "add", "sub", "neg", "norm", "prod",
    "expand", "repeat", "chunk", "split", "unbind", "type_as", "masked_fill", "narrow", "t",
}
# torch functions (first argument) whose result keeps the argument's graph.
_GRAPH_FUNCTIONS = {
    "sigmoid", "softmax", "log_softmax", "exp", "log", "tanh", "abs", "mean", "sum", "squeeze", "flatten",
    "relu", "stack", "cat", "clone", "sqrt", "square", "neg",
}
# Attributes that are not tensors sharing the graph (``.data`` is detached).
_NON_GRAPH_ATTRIBUTES = {
    "shape", "dtype", "device", "ndim", "data", "grad", "requires_grad", "is_cuda", "is_leaf", "names", "layout",
    "grad_fn", "itemsize", "nbytes",
}
_FOREIGN_MODEL_CALLS = {"pipeline", "InferenceSession", "load_model"}
_MAX_DEPTH = 12
# Import roots that hold no model and make no tensor require grad (``torch`` and
# ``torchvision`` are judged by their parts: ``_GRAPH_SOURCE_IMPORTS``).
_GRAPH_FREE_ROOTS = frozenset(libraries.UTILITY_ROOTS | set(getattr(sys, "stdlib_module_names", ())) | {
    "seaborn", "plotly", "IPython", "ipywidgets", "imageio", "skimage", "h5py", "yaml", "requests", "sympy",
    "torch", "torchvision", "__future__", "watermark", "pprint", "csv", "zipfile", "tarfile", "gzip", "urllib",
})
# Parts of torch and torchvision that build, load or differentiate models.
_GRAPH_SOURCE_PREFIXES = ("torch.hub", "torch.jit", "torch.export", "torch.package", "torch.autograd",
                          "torch.func", "torch.load", "torch.compile", "torchvision.models", "torch.nn.Parameter",
                          "torch.nn.parameter", "torch.nn.modules", "torch.nn.Module")
# Methods that make or reveal a trainable model.
_GRAPH_SOURCE_METHODS = {"requires_grad_", "parameters", "named_parameters", "from_pretrained", "load_state_dict"}


@dataclass(eq=False)
class Code:
    """One function (or the module body, or a class body): its scope and the backward-like
    calls that run in it, as (what is differentiated, call site)."""

    scope: Scope
    backwards: list[tuple[cst.BaseExpression, CallSite]] = field(default_factory=list)


def code_owner(scope: Scope) -> Scope | None:
    """The scope whose code a comprehension runs in; None for lambdas."""
    while scope.kind == COMPREHENSION and scope.parent is not None:
        scope = scope.parent
    return None if scope.kind == LAMBDA else scope


def root_name(expr: cst.BaseExpression) -> str | None:
    """``self`` for ``self.hist["a"]``: the name an attribute/subscript chain hangs from."""
    node = expr
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _position(assign: cst.Assign, key: str) -> tuple[int, int] | None:
    """(index, number of targets) of ``key`` in ``a, b = ...``; None when it is not a plain element."""
    for t in assign.targets:
        if isinstance(t.target, (cst.Tuple, cst.List)):
            elements = t.target.elements
            for index, element in enumerate(elements):
                if not isinstance(element, cst.StarredElement) and expr_key(element.value) == key:
                    return None if any(isinstance(e, cst.StarredElement) for e in elements) else (index, len(elements))
    return None


RETAINED = "retained"  # ``carrier``: backward-ed, but every backward of it keeps the graph


def retains_graph(call: cst.Call) -> bool:
    """A backward-like call that keeps the graph it differentiates, with its saved activations:
    ``loss.backward(retain_graph=True)``, ``torch.autograd.grad(..., create_graph=True)``
    (``create_graph`` retains it too), ``accelerator.backward(loss, retain_graph=True)``; a
    flag that is not the literal ``True`` (``retain_graph=i < n``) is not known to."""
    return any(arg.keyword is not None and arg.keyword.value in ("retain_graph", "create_graph")
               and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in call.args)


class GraphValues:
    """One file's graph-carrier queries (build one per rule run; memoised)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.model = ctx.semantic.model
        self._frozen: set[str] | None = None
        self._foreign: set[str] | None = None
        # What each backward differentiates (``_differentiated``), and the backwards whose
        # answer is being worked out: asking whether ``loss`` in ``(loss / n).backward()``
        # has a graph of its own asks what ``loss`` was made of, whose names ask again
        # whether this backward differentiates them.
        self._differentiates: dict[cst.CSTNode, list[str]] = {}
        self._differentiating: set[cst.CSTNode] = set()
        # While a same-file function's returns are read (``_function_graph``): the parameters
        # the graph led to (their values are what each call passes).
        self._params_reached: set[str] | None = None

    def carrier(self, code: Code, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
        """"backward", "loss" or "model" when ``expr`` (read at ``at``) carries an autograd
        graph, else None (always in a file where nothing records one: ``records_graphs``)."""
        if not records_graphs(self.ctx, code.scope):
            return None
        return self._graph(code, expr, at, 0)

    def bindings(self, code: Code, key: str) -> list[Binding]:
        """Bindings of ``key`` made by ``code`` (``global`` names: the model keeps them in the module)."""
        scope = code.scope
        if key in scope.globals and scope.kind != MODULE:
            model = self.model
            return [b for b in model.module.bindings.get(key, ()) if code_owner(model.scope_of(b.node)) is scope]
        return scope.bindings.get(key, [])


    def _graph(self, code: Code, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            sites = self._backward_sites(code, expr.value, at)
            if sites:
                return RETAINED if all(retains_graph(site.node) for site in sites) else "backward"
            return self._binding_graph(code, expr.value, at, depth)
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            if isinstance(expr, cst.Attribute) and expr.attr.value in _NON_GRAPH_ATTRIBUTES:
                return None
            key = expr_key(expr)
            sites = self._backward_sites(code, key, at) if key is not None else []
            if sites:
                return RETAINED if all(retains_graph(site.node) for site in sites) else "backward"
            if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
                return None
            return self._graph(code, expr.value, at, depth + 1)
        if isinstance(expr, cst.Call):
            return self._call_graph(code, expr, at, depth)
        parts: list = []
        if isinstance(expr, cst.BinaryOperation):
            parts = [expr.left, expr.right]
        elif isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            parts = [expr.expression]
        elif isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            parts = [el.value for el in expr.elements]
        elif isinstance(expr, cst.Dict):
            parts = [el.value for el in expr.elements if isinstance(el, cst.DictElement)]
        elif isinstance(expr, cst.IfExp):
            parts = [expr.body, expr.orelse]
        return self._first_graph(code, parts, at, depth)

    def _first_graph(self, code: Code, parts, at: cst.CSTNode, depth: int) -> str | None:
        for part in parts:
            found = self._graph(code, part, at, depth + 1)
            if found:
                return found
        return None

    def _call_graph(self, code: Code, expr: cst.Call, at: cst.CSTNode, depth: int) -> str | None:
        ctx = self.ctx
        if is_detached(ctx, expr):
            return None
        func = expr.func
        if is_loss_function(ctx, func) or (isinstance(func, cst.Call) and is_loss_constructor(ctx, func.func)):
            return None if self._inputs_graph_free(code, expr, at) else "loss"
        key = expr_key(func)
        if key is not None:
            helpers = self._own_functions(func, expr)
            if helpers:  # ``test_model(net, loader)``, ``loss_func(yhat, y)``: what the function returns
                return self._function_graph(helpers, code, expr, at, depth)
            if key in self.ctx.semantic.training.bindings["criterion"] or looks_like_criterion_name(key):
                return None if self._inputs_graph_free(code, expr, at) else "loss"
            if self._is_model(key, expr):
                return "model"
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr == "forward":
                inner = expr_key(func.value)
                if inner is not None and self._is_model(inner, expr):
                    return "model"
            if attr in GRAPH_METHODS and not self.model.is_imported(func):  # ``torch.mean(x)``: below
                return self._graph(code, func.value, at, depth + 1)
        name = self.model.qualified_name(func) or ""
        if name.startswith("torch.") and name.rsplit(".", 1)[-1] in _GRAPH_FUNCTIONS and expr.args:
            first = expr.args[0].value
            if isinstance(first, (cst.List, cst.Tuple)):
                return self._first_graph(code, [el.value for el in first.elements], at, depth)
            return self._graph(code, first, at, depth + 1)
        return None

    def _inputs_graph_free(self, code: Code, call: cst.Call, at: cst.CSTNode) -> bool:
        """A loss of values known to carry no graph: every argument computed under
        ``no_grad`` (``y_val = model(x)`` in a ``with torch.no_grad():`` block, then
        ``criterion(y_val, y)`` after it), detached, ``.data``, or a plain number."""
        args = [a.value for a in call.args if not a.star]
        return bool(args) and len(args) == len(call.args) and all(self._graph_free(code, a, at, 0) for a in args)

    def _graph_free(self, code: Code, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``expr`` is known to carry no graph (see ``_inputs_graph_free``); unknown: False."""
        if depth > 4:
            return False
        if is_plain_number(self.model, expr) or isinstance(expr, cst.Call) and is_detached(self.ctx, expr):
            return True
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _NON_GRAPH_ATTRIBUTES or (
                not (isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"))
                and self._graph_free(code, expr.value, at, depth + 1))
        if isinstance(expr, cst.Subscript):
            return self._graph_free(code, expr.value, at, depth + 1)
        if isinstance(expr, cst.Name):
            b = self.latest(code, expr.value, at)
            if b is None:
                return False
            if self.ctx.semantic.training.grad_choice_above(b.node):
                return True  # made under ``no_grad`` (also a ``for`` target there)
            return b.kind in ("assign", "ann") and b.value is not None and \
                self._graph_free(code, b.value, b.node, depth + 1)
        return False

    def _own_functions(self, func: cst.BaseExpression, call: cst.Call) -> list[cst.FunctionDef]:
        """The same-file plain functions (no methods) a call by name runs (``test_model(net,
        loader)``): every binding of the name reaching the call is a ``def``."""
        if not isinstance(func, cst.Name):
            return []
        bindings = self.model.reaching(func.value, call)
        defs = [b.node for b in bindings if isinstance(b.node, cst.FunctionDef)]
        if not defs or len(defs) != len(bindings):
            return []
        return [d for d in defs if self.model.scopes.get(d) is not None and self.model.scopes[d].self_name is None]

    def _function_graph(self, helpers: list[cst.FunctionDef], code: Code, call: cst.Call, at: cst.CSTNode,
                        depth: int) -> str | None:
        """What the same-file functions ``helpers`` return carries: a graph some return value
        has in its function (a parameter counts as what ``call`` passes for it), else None."""
        if depth > _MAX_DEPTH:
            return None
        site = self.model.call_site(call)
        for helper in helpers:
            scope = self.model.scopes[helper]
            inner = Code(scope)
            for ret in scope.returns:
                if ret.value is None:
                    continue
                outer, self._params_reached = self._params_reached, set()
                try:
                    found = self._graph(inner, ret.value, ret, depth + 1)
                    reached = self._params_reached
                finally:
                    self._params_reached = outer
                if found == "param":  # ``return torch.mean((yhat - y) ** 2)``: what the call passes
                    args = [passed_argument(self.model, site, helper, p) if site is not None else None
                            for p in sorted(reached)]
                    found = self._first_graph(code, [a for a in args if a is not None], at, depth)
                if found:
                    return found
        return None

    def latest(self, code: Code, key: str, at: cst.CSTNode) -> Binding | None:
        """The binding of ``key`` in ``code`` made last before ``at`` (None: bound only in an
        enclosing scope, or not yet)."""
        order = self.model.order[at]
        found = None
        for b in self.bindings(code, key):
            if b.order >= order:
                break
            found = b
        return found

    def _binding_graph(self, code: Code, key: str, at: cst.CSTNode, depth: int) -> str | None:
        """Does the value ``key`` holds at ``at`` carry a graph? (``+=`` keeps what it held before.)"""
        b = self.latest(code, key, at)
        if b is not None and b.kind == "param" and self._params_reached is not None:
            self._params_reached.add(key)  # a function's result read through ``_function_graph``
            return "param"
        if b is not None and b.kind == "unpack" and depth <= _MAX_DEPTH:
            return self._unpacked_graph(code, b, depth)
        if b is None or b.value is None or depth > _MAX_DEPTH or self.ctx.semantic.training.grad_choice_above(b.node):
            return None
        found = self._graph(code, b.value, b.node, depth + 1)
        if found or b.kind != "aug":
            return found
        return self._binding_graph(code, key, b.node, depth + 1)

    def _unpacked_graph(self, code: Code, b: Binding, depth: int) -> str | None:
        """An element of ``a, b = <value>``: the matching element of a tuple display, or any
        element of a model's output (an element of a loss function's result may be a logged
        number, so it counts only when it is backward-ed itself)."""
        node = b.node
        if not isinstance(node, cst.Assign) or self.ctx.semantic.training.grad_choice_above(node):
            return None
        value = node.value
        if isinstance(value, (cst.Tuple, cst.List)):
            for t in node.targets:
                elements = t.target.elements if isinstance(t.target, (cst.Tuple, cst.List)) else ()
                if len(elements) == len(value.elements):
                    for target, element in zip(elements, value.elements):
                        if expr_key(target.value) == b.key:
                            return self._graph(code, element.value, node, depth + 1)
            return None
        if not isinstance(value, cst.Call):
            return None
        found = self._graph(code, value, node, depth + 1)
        if found != "model":
            return None
        helpers = self._helpers(value)
        if helpers:  # ``loss, acc = self._run_network(x)``: only if its own element carries one
            position = _position(node, b.key)
            return found if position is not None and self._returns_graph(helpers, position, depth) else None
        return found

    def _helpers(self, call: cst.Call) -> list[cst.FunctionDef]:
        """The same-file functions a call by their own name runs (``helper(x)``,
        ``self._run_batch(x)``); not a call of an object (``self.model(x)`` running some
        ``forward``), where the object's kind decides."""
        func = call.func
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
        site = self.model.call_site(call)
        if name is None or name in ("forward", "__call__") or site is None:
            return []
        targets = self.ctx.semantic.graph.targets(site)
        return [t for t in targets if type(t) is cst.FunctionDef and t.name.value == name]

    def _returns_graph(self, helpers: list[cst.FunctionDef], position: tuple[int, int], depth: int) -> bool:
        """Some value the ``helpers`` return at ``position = (index, length)`` carries a graph:
        element ``index`` of a returned tuple display of ``length`` elements (a return of
        anything else gives no element)."""
        if depth > _MAX_DEPTH:
            return False
        index, length = position
        for helper in helpers:
            scope = self.model.scopes.get(helper)
            if scope is None:
                continue
            code = Code(scope)
            for ret in scope.returns:
                value = ret.value
                if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == length \
                        and self._graph(code, value.elements[index].value, ret, depth + 1):
                    return True
        return False

    def _backward_sites(self, code: Code, key: str, at: cst.CSTNode) -> list[CallSite]:
        """The backwards of this code whose target is ``key`` as bound at ``at`` (empty: none)."""
        root = key.split(".")[0].split("[")[0]
        current = self.latest(code, root, at)
        return [site for target, site in code.backwards
                if any(k == key for k in self._differentiated(code, target, site.node))
                and (current in self.model.reaching(root, site.node) if current is not None
                     else self.latest(code, root, site.node) is None)]

    def _differentiated(self, code: Code, target: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        """Keys a backward differentiates: ``loss`` in ``loss.backward()``, ``(loss / n).backward()``,
        ``loss.mean().backward()``; ``out.loss``, ``out["loss"]``. Never a plain number, nor, in
        a product or quotient, a factor with no graph of its own next to one that has
        (``scale`` in ``(loss * scale).backward()``).

        Memoised per backward. While a backward's answer is being worked out (a factor's own
        graph is asked of the values it was made of), that backward differentiates nothing:
        a graph of its own is one a value has other than by being backward-ed."""
        known = self._differentiates.get(target)
        if known is not None:
            return known
        if target in self._differentiating:
            return []
        outermost = not self._differentiating
        self._differentiating.add(target)
        try:
            found = self._differentiated_keys(code, target, at)
        finally:
            self._differentiating.discard(target)
        if outermost:  # an inner answer may rest on an outer one not known yet: not kept
            self._differentiates[target] = found
        return found

    def _differentiated_keys(self, code: Code, target: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        out: list[str] = []
        stack = [target]
        while stack:
            node = stack.pop()
            key = expr_key(node)
            if key is not None:
                if not is_plain_number(self.model, node):
                    out.append(key)
            elif isinstance(node, cst.BinaryOperation):
                stack.extend(self._factors(code, node, at))
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in GRAPH_METHODS:
                stack.append(node.func.value)
        return out

    def _factors(self, code: Code, node: cst.BinaryOperation, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """The operands of ``node`` that carry what a backward differentiates: in a product or
        quotient, those with a graph of their own, else those that are not parameters of the
        function (``loss * scale`` in ``def step(self, batch, scale)``), else both."""
        sides = [node.left, node.right]
        if not isinstance(node.operator, (cst.Multiply, cst.Divide)):
            return sides
        return [x for x in sides if self._own_graph(code, x, at)] or \
            [x for x in sides if not self._parameter(code, x, at)] or sides

    def _parameter(self, code: Code, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        b = self.latest(code, expr.value, at) if isinstance(expr, cst.Name) else None
        return b is not None and b.kind == "param"

    def _own_graph(self, code: Code, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """May carry a graph of its own (not only by being backward-ed): no name bound to a
        value without one, no ``self`` attribute, no plain number."""
        if isinstance(expr, cst.Name):
            return self._binding_graph(code, expr.value, at, 1) is not None
        return root_name(expr) != code.scope.self_name and not is_plain_number(self.model, expr)

    def _is_model(self, key: str, call: cst.Call) -> bool:
        training = self.ctx.semantic.training
        if self._frozen is None:
            self._frozen = training.frozen()
        if key in self._frozen or key in self._not_models():
            return False
        if key in ("self", "cls"):
            info = self.model.class_of(call)
            return info is not None and training.is_module_class(info)
        if self._plain_instances_only(key, call):
            return False
        return key in training.bindings["model"] or looks_like_model_name(key)

    def _plain_instances_only(self, key: str, call: cst.Call) -> bool:
        """``key`` is a parameter of a plain function every call of which in the file passes
        an instance of a same-file plain class whose tensors never require grad
        (``plain_class_records_graph``): a from-scratch model (``Adaline1(n)`` with
        ``torch.zeros`` weights and a hand-written ``backward``) given to ``train(model, ...)``."""
        func = call.func
        name = func.value if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) else \
            func if isinstance(func, cst.Name) else None
        if not isinstance(name, cst.Name) or name.value != key.split(".")[0]:
            return False
        bindings = self.model.reaching(name.value, name)
        if not bindings or any(b.kind != "param" for b in bindings):
            return False
        function = self.model.scope_of(name)
        while function is not None and not isinstance(function.node, cst.FunctionDef):
            function = function.parent
        if function is None or function.self_name is not None:
            return False
        callers = self.ctx.semantic.graph.callers(function.node)
        if not callers:
            return False
        for site in callers:
            arg = passed_argument(self.model, site, function.node, name.value)
            values = [arg]
            if isinstance(arg, cst.Name):
                found = self.model.reaching(arg.value, site.node)
                values = [b.value for b in found] if found and all(b.kind == "assign" for b in found) else [None]
            for value in values:
                info = self._constructed_class(value, site.node)
                if info is None or plain_class_records_graph(self.ctx, info):
                    return False
        return True

    def _constructed_class(self, value: cst.BaseExpression | None, at: cst.CSTNode):
        """The same-file class ``value`` (``C(...)``) constructs, with no base but ``object``."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        bindings = self.model.reaching(value.func.value, at)
        if len(bindings) != 1 or bindings[0].node not in self.model.classes:
            return None
        info = self.model.classes[bindings[0].node]
        return info if all(b == "object" for b in info.bases) else None


    def _not_models(self) -> set[str]:
        """Keys assigned a pipeline, an ONNX session, ...: their calls carry no graph."""
        if self._foreign is None:
            self._foreign = {key for scope in self.model.scopes.values() for key, bindings in scope.bindings.items()
                             for b in bindings if b.kind == "assign" and isinstance(b.value, cst.Call)
                             and _is_foreign_model(self.ctx, b.value.func)}
        return self._foreign


def _is_foreign_model(ctx, func: cst.BaseExpression) -> bool:
    """``pipeline(...)``, ``ort.InferenceSession(...)``, ``joblib.load(...)``: callables whose
    results carry no autograd graph."""
    name = ctx.qualified_name(func) or ""
    root, last = name.split(".")[0], name.rsplit(".", 1)[-1]
    return last in _FOREIGN_MODEL_CALLS or root in libraries.FOREIGN_FRAMEWORKS or root in ("joblib", "pickle")


def records_graphs(ctx, scope: Scope | None = None) -> bool:
    """Can a value of this file (read in ``scope``: None for any) carry an autograd graph at
    all (see the module's docstring)? Memoised on the model."""
    model = ctx.semantic.model
    memo = model.memo("autograd.records_graphs")
    if "file" not in memo:
        memo["file"] = _graph_source(ctx, model)
    if memo["file"] or ctx.path.endswith(".ipynb"):
        return memo["file"]  # nothing calls a notebook's functions from outside
    if scope is None:
        return any(_receives(model, s) for s in model.scopes.values())
    if scope not in memo:
        memo[scope] = _receives(model, scope)
    return memo[scope]


def _graph_source(ctx, model) -> bool:
    """Something in the file makes a tensor that requires grad, or comes from a library or
    module that may hold one."""
    if _asks_for_grad(model):
        return True
    if any(_source_name(q) or libraries.root(q) not in _GRAPH_FREE_ROOTS for q in ctx.imports.values()):
        return True
    for info in model.classes.values():
        if any(b != "object" for b in info.bases):
            return True  # an nn.Module, an autograd.Function, or a class from elsewhere
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GRAPH_SOURCE_METHODS:
            return True
        if _source_name(model.qualified_name(func) or ""):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and not site.node.args \
                and _autograd_backward(model, func.value):
            return True  # loss.backward(): autograd's (a hand-written model's backward takes its gradients)
    return False


def _autograd_backward(model, receiver: cst.BaseExpression) -> bool:
    """``receiver.backward()`` is autograd's: the receiver is no instance of a class of the file
    (a from-scratch network's own ``backward``)."""
    if isinstance(receiver, cst.Name):
        for b in model.reaching(receiver.value, receiver):
            value = b.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in {
                    info.name for info in model.classes.values()}:
                return False
    return True


def _asks_for_grad(model) -> bool:
    """Some code asks a tensor to require grad: ``requires_grad=<not False>`` passed to a
    call, ``t.requires_grad = <not False>`` (the tree, never comments or strings)."""
    for site in model.calls:
        for arg in site.node.args:
            if arg.keyword is not None and arg.keyword.value == "requires_grad" and not is_false_literal(arg.value):
                return True
    for scope in model.scopes.values():
        for node in iter_nodes(scope.node, into_scopes=False):
            if isinstance(node, cst.Assign) and not is_false_literal(node.value) and any(
                    isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in node.targets):
                return True
    return False


def plain_class_records_graph(ctx, info) -> bool:
    """Can an instance of the plain class ``info`` hold a tensor that requires grad? Its body
    asks for grad (``requires_grad=True``, ``.requires_grad_()``, ``x.requires_grad = True``),
    builds a ``torch.nn`` layer or parameter, or loads or finds a model (``_graph_source``'s
    names and methods). A class of plain tensors (``torch.zeros(n, 1)`` weights, a
    ``backward`` of its own) holds none."""
    model = ctx.semantic.model
    for node in iter_nodes(info.node):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _GRAPH_SOURCE_METHODS:
                return True
            if _source_name(model.qualified_name(func) or ""):
                return True
            if any(a.keyword is not None and a.keyword.value == "requires_grad" and not is_false_literal(a.value)
                   for a in node.args):
                return True
        elif isinstance(node, cst.Assign) and not is_false_literal(node.value) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in node.targets):
            return True
    return False


def _receives(model, scope: Scope) -> bool:
    """Code in ``scope`` may see values another file passes in: a parameter of its function
    or of one around it, or, in a method, of any method of its class (``self.model`` set from
    ``__init__(self, model)``)."""
    current: Scope | None = scope
    while current is not None:
        if isinstance(current.node, cst.FunctionDef):
            if len(_params(current.node)) > (1 if current.self_name else 0):
                return True
            if current.cls is not None and any(len(_params(m)) > 1 for m in current.cls.methods.values()):
                return True
        current = current.parent
    return False


def _source_name(qualified: str) -> bool:
    return qualified.startswith(_GRAPH_SOURCE_PREFIXES) or libraries.torch_nn_class(qualified) is not None


def _params(node: cst.FunctionDef) -> list:
    p = node.params
    return [*p.posonly_params, *p.params, *p.kwonly_params, *([p.star_arg] if isinstance(p.star_arg, cst.Param) else []),
            *([p.star_kwarg] if p.star_kwarg is not None else [])]
