"""Which layers a class defines and which of them its forward, its other methods and its
callers use: the per-file facts TL005 (unused-layer) judges.

``class_layers(ctx, named)`` reads, from the semantic model, for every class of the file
(``ClassLayers``):

* the attributes it assigns a module to (``self.x = nn.Linear(...)``, a container, a call of
  a class that may be a project ``nn.Module``), with the first such assignment, what it may
  build (``semantic.modules.constructions``) and whether an argument of the method configures
  it (``layers``);
* every ``self.<name>`` it reads outside ``__init__`` (nested functions and lambdas of any
  method included; ``getattr(self, "name")`` too). Inside ``__init__`` a read counts only
  when the module (or one of its tensors) flows somewhere: into a container, another layer,
  a variable, an assignment. Initialisation (``nn.init.zeros_(self.fc.bias)``,
  ``self.fc.weight.data.normal_()``, ``if self.fc.bias is not None``) is not a use (``reads``);
* whether it accesses its submodules dynamically (``getattr(self, name)``, ``setattr``,
  ``self.children()``, ``self._modules``, ``vars(self)``, a ``__getattr__`` of its own, ...:
  ``dynamic``);
* whether it defines ``forward`` (or Lightning's ``training_step``) that is not abstract
  (``runs``), holds no parameters of its own (``pf``), iterates ``self.parameters()``
  (``iterates``), which torch functions it applies (``functional``), the other names of a
  layer (``self.a = self.b = X()``, a container registering what another attribute holds:
  ``aliases``), the layers it deletes (``deleted``) and the attributes it touches at all
  (``touched``).

Which scope ``self`` is bound in, and what each ``self.x`` site and assignment is, come from
``ctx.semantic.model`` (``Scope.self_name``/``cls``/``method_kind``, ``ClassInfo.self_sites``,
bindings). The file's callers are read too: the attribute names it reads through another
object outside ``__init__`` (``self.backbone.fc(x)``, ``model.criterion(out, y)``: ``outside``,
from the ``named`` attribute nodes a rule's walk collected, see ``MODEL_NAME``), and whether it
loads weights into a module (``loads``).

Two smaller questions about what a layer or tensor is built from: ``element_sources`` (the
collections whose elements an expression holds as they are: what a container registers) and
``requires_grad_tensor`` (a tensor factory's result that requires grad: a parameter that is
not an ``nn.Parameter``, TL007).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

import libcst as cst

from torchlint.semantic.model import CLASS, COMPREHENSION, MODULE
from torchlint.semantic.modules import (CONTAINERS, constructions, frozen_parameter, is_parameter, parameter_free,
                                        runs_layers)
from torchlint.torch_api import SELF_RETURNING, keyword_arg, tensor_factory
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.semantic.model import SemanticModel

# Submodules reached without naming them.
_DYNAMIC_METHODS = {"children", "named_children", "modules", "named_modules", "get_submodule",
                    "__getattr__", "__getattribute__", "__setattr__"}
_DYNAMIC_ATTRS = {"_modules", "__dict__"}
# Calls that only look at a module inside ``__init__``.
_INSPECTING = {"isinstance", "hasattr", "print", "type", "callable", "id", "repr", "str", "getattr"}
_INIT = "__init__"
# Calls that load weights into a module (a head kept so that a checkpoint loads).
_LOADING = {"load_state_dict", "load_state_dict_from_url", "load_url"}
# Variables that hold a model (``model.criterion(out, y)`` reads a layer from outside): a rule's
# walk collects ``self.x`` and ``<MODEL_NAME>.x`` attribute nodes for ``class_layers``.
MODEL_NAME = re.compile(r"(model|net|network|module|encoder|decoder|backbone|student|teacher|generator|"
                        r"discriminator|classifier|wrapper)s?$|^(m|mod|g|d)$", re.IGNORECASE)


@functools.lru_cache(maxsize=16384)
def is_model_variable(name: str) -> bool:
    """Whether a variable called ``name`` may hold a model (``MODEL_NAME``), kept per name: a
    walk asks it of every ``x.attr`` of a file (24,534 times on torchvision+skorch+accelerate,
    a tenth of the names distinct), and the pattern, anchored at the end, is tried from
    every character."""
    return MODEL_NAME.search(name) is not None


# Tensor methods named like layers: ``self.weights.softmax(-1)`` reads no layer.
_TENSOR_METHODS = {"softmax", "log_softmax", "relu", "relu_", "sigmoid", "tanh", "flatten", "unflatten",
                   "norm", "abs", "exp", "mean", "sum", "max", "min", "pow", "sqrt", "float", "half"}


def normalised(name: str) -> str:
    """A layer's or function's name as ``functional`` holds it: ``ReLU``, ``relu`` -> ``relu``;
    ``LogSoftmax``, ``log_softmax`` -> ``logsoftmax``."""
    return name.replace("_", "").lower()


class ClassLayers:
    """What one class does with ``self``, gathered from the semantic model."""

    __slots__ = ("info", "reads", "dynamic", "runs", "pf", "layers", "iterates", "functional", "aliases",
                 "deleted", "touched")

    def __init__(self, info):
        self.info = info  # ClassInfo
        self.reads: set[str] = set()  # self.<name> read outside __init__ (or flowing somewhere in it)
        self.dynamic = False  # reaches its submodules without naming them
        self.runs = False  # defines a forward (training_step) that is not abstract
        self.pf = True  # holds no parameters of its own (only parameter-free layers, plain values)
        self.layers: dict[str, tuple[cst.CSTNode, list, bool]] = {}  # attr -> (statement, kinds, configured)
        self.iterates = False  # reads its parameters without naming them (self.parameters() outside __init__)
        self.functional: set[str] = set()  # torch functions called outside __init__, normalised (F.relu: relu)
        # ``self.a = self.b = X()``: a -> {b}, b -> {a} (one module); a container registering
        # what another attribute holds -> that attribute
        self.aliases: dict[str, set[str]] = {}
        self.deleted: set[str] = set()  # ``del self.x``/``delattr(self, "x")``: the layer is removed
        self.touched: set[str] = set()  # any site of ``self.x`` that does not store it (``.append(...)`` too)

    def empty_container(self, attr: str) -> bool:
        """``self.x = nn.ModuleList()`` (``ModuleDict()``, ``Sequential()``) that the class never
        touches again: it never gets a layer, so it holds no parameters and costs nothing."""
        stmt, kinds, _ = self.layers[attr]
        value = stmt.value if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else None
        return (attr not in self.touched and len(kinds) == 1 and kinds[0][0] == "nn" and kinds[0][2] in CONTAINERS
                and isinstance(value, cst.Call) and not value.args)


class FileLayers(NamedTuple):
    """``class_layers``'s answer for one file."""

    classes: list[ClassLayers]  # every class of the file, in the model's order
    outside: set[str]  # attribute names read through another object outside __init__
    loads: bool  # the file loads weights into a module (load_state_dict, load_url, ...)


def class_layers(ctx: "FileContext", named: Iterable[cst.Attribute]) -> FileLayers:
    """Which layers each class of the file defines and which of them its forward, its other
    methods and its callers use (see the module's docstring). ``named``: the file's
    ``self.x`` and ``<MODEL_NAME>.x`` attribute nodes, in the order of the walk."""
    return _Scan(ctx).run(named)


class _Method(NamedTuple):
    """Where ``self`` is an instance of ``cls``: in a method (not a class/static method) or a
    function, lambda or comprehension inside one; ``init`` when directly in ``__init__``."""

    cls: Any  # ClassInfo
    init: bool


class _Scan:
    """One file's classes, filled from the semantic model by ``class_layers``."""

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx
        self._methods: dict[int, _Method | None] = {}
        self._loads = False

    def run(self, named: Iterable[cst.Attribute]) -> FileLayers:
        model = self.ctx.semantic.model
        classes = {id(info): ClassLayers(info) for info in model.classes.values()}
        outside: set[str] = set()
        for cls in classes.values():
            self._scan_methods(cls)
            self._scan_self_sites(cls, outside)
            self._registration_aliases(cls)
        self._scan_calls(model, classes)
        self._scan_named_reads(model, classes, named, outside)
        return FileLayers(list(classes.values()), outside, self._loads)

    def _method(self, scope) -> _Method | None:
        """The method ``scope`` sees ``self`` of (None: no bound ``self`` there)."""
        key = id(scope)
        if key in self._methods:
            return self._methods[key]
        found = None
        inner = scope
        while inner.kind == COMPREHENSION and inner.parent is not None:
            inner = inner.parent
        if inner.self_name is not None and inner.cls is not None:
            method = inner
            while method.parent is not None and method.parent.kind != CLASS:
                method = method.parent
            params = method.node.params if isinstance(method.node, cst.FunctionDef) else None
            if method.method_kind == "method" and params is not None and (params.posonly_params or params.params):
                found = _Method(inner.cls, inner is method and method.name == _INIT)
        self._methods[key] = found
        return found

    def _scan_methods(self, cls: ClassLayers) -> None:
        """A ``forward`` that is not abstract; a ``__getattr__`` of its own."""
        info = cls.info
        cls.runs = runs_layers(info)
        if any(b.kind == "def" for name in ("__getattr__", "__getattribute__")
               for b in info.scope.bindings.get(name, ())):
            cls.dynamic = True

    def _scan_self_sites(self, cls: ClassLayers, outside: set[str]) -> None:
        """Every ``self.x``: a read, a layer assignment, ``self._modules``; and the attributes
        of another module read through it (``self.backbone.fc``)."""
        parent = self.ctx.parent
        for node, scope in cls.info.self_sites:
            method = self._method(scope)
            if method is None:
                continue
            attr = node.attr.value
            if not method.init:
                self._chain_reads(node, outside)
            if attr in _DYNAMIC_ATTRS:
                cls.dynamic = True
                continue
            if self._is_store(node):
                up = parent(node)
                if isinstance(up, cst.AssignTarget):
                    self._alias(cls, parent(up), attr)
                    self._assigned(cls, parent(up), attr, parent(up).value)
                elif isinstance(up, cst.Del):
                    cls.deleted.add(attr)
                elif isinstance(up, cst.AnnAssign) and up.value is not None:
                    self._assigned(cls, up, attr, up.value)
            else:
                cls.touched.add(attr)
                if not method.init or self._flows(node):
                    cls.reads.add(attr)

    def _alias(self, cls: ClassLayers, stmt: cst.Assign, attr: str) -> None:
        """``self.a = self.b = X()`` binds one module to both names: a read of either uses it."""
        names = {t.target.attr.value for t in stmt.targets
                 if isinstance(t.target, cst.Attribute) and _is_name(t.target.value, "self")}
        if len(names) > 1:
            cls.aliases.setdefault(attr, set()).update(names - {attr})

    def _chain_reads(self, node: cst.Attribute, outside: set[str]) -> None:
        parent = self.ctx.parent
        cur: cst.CSTNode = node
        up = parent(cur)
        while isinstance(up, cst.Attribute) and up.value is cur:
            self._outside_read(up, outside)
            cur, up = up, parent(up)

    def _outside_read(self, node: cst.Attribute, outside: set[str]) -> None:
        attr = node.attr.value
        if attr in _TENSOR_METHODS:
            call = self.ctx.parent(node)
            if isinstance(call, cst.Call) and call.func is node:
                return  # self.weights.softmax(-1): a tensor method
        if not self._is_store(node):
            outside.add(attr)

    def _scan_named_reads(self, model, classes: dict, named: Iterable[cst.Attribute], outside: set[str]) -> None:
        """``model.criterion(out, y)`` outside ``__init__``: a layer of another module used from
        outside its class; ``self.fc`` in a free function attached as a method."""
        sited = {id(node) for cls in classes.values() for node, _ in cls.info.self_sites}
        for node in named:
            if id(node) in sited:
                continue
            scope = model.scope_of(node)
            method = self._method(scope)
            if method is not None and method.init:
                continue
            root = node.value.value
            if root == "self" and method is None:
                while scope.kind == COMPREHENSION and scope.parent is not None:
                    scope = scope.parent
                if scope.kind == MODULE:
                    continue
            elif not is_model_variable(root) or root in self.ctx.imports:
                continue
            self._outside_read(node, outside)

    def _scan_calls(self, model, classes: dict) -> None:
        """``getattr(self, ...)``/``setattr``/``vars(self)``, ``self.children()``, parameters
        registered by hand."""
        self._loads = False
        methods = self._methods  # ``_method``'s answers, asked here of every call's scope
        for site in model.calls:
            node = site.node
            func = node.func
            kind = type(func)  # (neither class is subclassed)
            last = func.attr.value if kind is cst.Attribute else func.value if kind is cst.Name else ""
            if not self._loads and last in _LOADING:
                self._loads = True
            key = id(site.scope)
            method = methods[key] if key in methods else self._method(site.scope)
            if method is None:
                continue
            cls = classes[id(method.cls)]
            me = site.scope.self_name
            if not method.init and (last in _TENSOR_METHODS and isinstance(func, cst.Attribute) or (
                    self.ctx.is_imported(func) and (self.ctx.qualified_name(func) or "").startswith("torch."))):
                cls.functional.add(normalised(last))  # F.softmax(x), torch.relu(x), x.softmax(-1)
                if any(a.keyword is not None and a.keyword.value == "dropout_p" for a in node.args):
                    cls.functional.add("dropout")  # F.scaled_dot_product_attention(..., dropout_p=...)
            if isinstance(func, cst.Name) and func.value in ("getattr", "setattr", "vars", "delattr"):
                if not node.args or not _is_name(node.args[0].value, me):
                    continue
                if func.value == "getattr" and len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString):
                    if not method.init:
                        cls.reads.add(str(node.args[1].value.evaluated_value))
                    continue
                if func.value != "delattr":
                    cls.dynamic = True
                elif len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString):
                    cls.deleted.add(str(node.args[1].value.evaluated_value))
            elif isinstance(func, cst.Attribute) and _is_name(func.value, me):
                name = func.attr.value
                if name in _DYNAMIC_METHODS:
                    if not (method.init and name in ("modules", "named_modules") and self._iterated(node)):
                        cls.dynamic = True  # (``for m in self.modules(): init(m)`` in __init__ is not)
                elif name in ("register_parameter", "register_module", "add_module"):
                    cls.pf = False
                elif name in ("parameters", "named_parameters") and not method.init:
                    cls.iterates = True
            elif cls.pf and is_parameter(model, node):
                cls.pf = False

    def _iterated(self, call: cst.Call) -> bool:
        parent = self.ctx.parent(call)
        return isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is call

    # -- what is a use -------------------------------------------------------------------
    def _is_store(self, node: cst.CSTNode) -> bool:
        parent = self.ctx.parent(node)
        while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
            node, parent = parent, self.ctx.parent(parent)
        if isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Del)):
            return True
        if isinstance(parent, (cst.AnnAssign, cst.For, cst.CompFor)):
            return parent.target is node
        return False

    def _flows(self, node: cst.Attribute) -> bool:
        """In ``__init__``: does ``self.x`` (or a tensor of it) go anywhere, rather than only
        being initialised, inspected or called?"""
        ctx = self.ctx
        cur: cst.CSTNode = node
        while True:
            parent = ctx.parent(cur)
            if isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is cur:
                if isinstance(parent, cst.Attribute) and parent.attr.value in SELF_RETURNING:
                    call = ctx.parent(parent)
                    if isinstance(call, cst.Call) and call.func is parent:
                        cur = call  # ``self.x.to(device)`` is ``self.x`` again
                        continue
                cur = parent
                continue
            if isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
                cur = parent
                continue
            break
        if isinstance(parent, cst.Call) and parent.func is cur:
            return False  # a method of the layer (or the layer itself) called here
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if isinstance(call, cst.Call):
                return not self._inspecting(call)
            return True
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            return False
        if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is cur:
            return False
        if isinstance(parent, cst.Expr):
            return False
        return not self._is_store(cur) and not isinstance(parent, cst.AugAssign)

    def _inspecting(self, call: cst.Call) -> bool:
        name = self.ctx.qualified_name(call.func)
        if name is None:
            return False
        if name.startswith("torch.nn.init."):
            return True
        last = name.rsplit(".", 1)[-1]
        if "." not in name and last in _INSPECTING:
            return True
        return "init" in last.lower() or (last.endswith("_") and not last.endswith("__"))

    # -- what is a layer -----------------------------------------------------------------
    def _assigned(self, cls: ClassLayers, stmt: cst.CSTNode, attr: str, value: cst.BaseExpression) -> None:
        kinds = self._kinds(value)
        if not kinds:
            if not isinstance(value, (cst.BaseNumber, cst.BaseString, cst.BinaryOperation)) and not (
                isinstance(value, cst.Name) and value.value in ("None", "True", "False")
            ):
                cls.pf = False  # may hold parameters (an argument, a factory's result)
            return
        if not all(k[0] == "nn" and k[1] for k in kinds):
            cls.pf = False
        if attr not in cls.layers:
            cls.layers[attr] = (stmt, kinds, self._configured(stmt, value))

    def _configured(self, stmt: cst.CSTNode, value: cst.BaseExpression) -> bool:
        """Does an argument of the method assigning the layer configure it: passed to its
        constructor (``nn.Dropout(attn_drop)``) or choosing it (``if activation:``, ``... if act else``)? Then
        the layer was meant to act, and not applying it loses what the caller asked for."""
        scope = self.ctx.semantic.model.scope_of(stmt)
        params = {k for k, bindings in scope.bindings.items() if any(b.kind == "param" for b in bindings)}
        nodes = list(iter_nodes(value))
        exprs = [a.value for call in nodes if isinstance(call, cst.Call) for a in call.args]
        exprs += [n.test for n in nodes if isinstance(n, cst.IfExp)]
        exprs += [anc.test for anc in self.ctx.ancestors(stmt) if isinstance(anc, cst.If)]
        return any(isinstance(n, cst.Name) and n.value in params for e in exprs for n in iter_nodes(e))

    def _kinds(self, value: cst.BaseExpression) -> list[list]:
        """The module constructions ``value`` may be (``semantic.modules.constructions``), as
        facts: ``["nn", parameter_free, name]`` for a torch.nn class, ``["param", False]``,
        ``["class", qualified]`` for a class the project pass settles."""
        model = self.ctx.semantic.model
        return [["nn", parameter_free(model, b), b.name] if b.kind == "nn" else ["param", False] if b.kind == "param"
                else ["class", b.name] for b in constructions(model, value)
                if not (b.kind == "param" and frozen_parameter(b.call))]

    def _registration_aliases(self, cls: ClassLayers) -> None:
        """``self._subs = nn.ModuleList(policies.values())`` next to ``self.policies = policies``
        (or built from ``self.policies`` itself): the container only registers modules the class
        uses through the other attribute, so a read of that attribute uses it. So does a
        container of the elements of a collection (``element_sources``) that another attribute
        keeps through one call (``self.projections = _checked(projections)`` next to
        ``nn.ModuleList([p for p in projections if isinstance(p, nn.Module)])``)."""
        stored: dict[tuple[int, str], set[str]] = {}  # (scope, name) -> attributes ``self.<attr> = name``
        wrapped: dict[tuple[int, str], set[str]] = {}  # (scope, name) -> attributes ``self.<attr> = f(name)``
        for node, scope in cls.info.self_sites:
            up = self.ctx.parent(node)
            if isinstance(up, cst.AssignTarget):
                value = self.ctx.parent(up).value
                if isinstance(value, cst.Name):
                    stored.setdefault((id(scope), value.value), set()).add(node.attr.value)
                elif isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].keyword \
                        and isinstance(value.args[0].value, cst.Name):
                    wrapped.setdefault((id(scope), value.args[0].value.value), set()).add(node.attr.value)
        model = self.ctx.semantic.model
        for attr, (stmt, kinds, _) in cls.layers.items():
            if len(kinds) != 1 or kinds[0][0] != "nn" or kinds[0][2] not in CONTAINERS:
                continue
            scope = id(model.scope_of(stmt))
            args = [n for a in stmt.value.args for n in iter_nodes(a.value)] if isinstance(stmt.value, cst.Call) else []
            others = {n.attr.value for n in args if isinstance(n, cst.Attribute) and _is_name(n.value, "self")}
            others |= {a for n in args if isinstance(n, cst.Name) for a in stored.get((scope, n.value), ())}
            if wrapped and isinstance(stmt.value, cst.Call) and stmt.value.args:
                held = element_sources(model, stmt.value.args[0].value)
                others |= {a for name in held for a in wrapped.get((scope, name), ())}
            if others - {attr}:
                cls.aliases.setdefault(attr, set()).update(others - {attr})


def _is_name(expr: cst.BaseExpression, name: str | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def element_sources(model: "SemanticModel", expr: cst.BaseExpression, depth: int = 0) -> set[str]:
    """The names of the collections whose elements ``expr`` holds as they are: ``xs``,
    ``xs.values()``, ``list(xs)``, ``[x for x in xs if ...]``, and a local assigned one of those
    (``mods = [p for p in projections if ...]`` gives ``mods`` and ``projections``)."""
    if depth > 3:
        return set()
    if isinstance(expr, cst.Name):
        found = {expr.value}
        for binding in model.reaching(expr.value, expr):
            if binding.kind == "assign" and binding.value is not None:
                found |= element_sources(model, binding.value, depth + 1)
        return found
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        loop = expr.for_in
        if loop.inner_for_in is None and isinstance(loop.target, cst.Name) and _is_name(expr.elt, loop.target.value):
            return element_sources(model, loop.iter, depth + 1)
        return set()
    if isinstance(expr, cst.Call):
        func, args = expr.func, expr.args
        if isinstance(func, cst.Attribute) and func.attr.value == "values" and not args:
            return element_sources(model, func.value, depth + 1)
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and len(args) == 1 and not args[0].keyword \
                and not args[0].star:
            return element_sources(model, args[0].value, depth + 1)
    return set()


def requires_grad_tensor(model: "SemanticModel", value: cst.Call) -> bool:
    """Whether ``value`` builds a tensor that requires grad: ``torch.randn(...,
    requires_grad=True)``, ``torch.zeros(...).requires_grad_()`` (also after methods that keep
    the tensor: ``torch.randn(n).cuda().requires_grad_()``), or
    ``Variable(torch.randn(n), requires_grad=True)`` (a tensor factory's)."""
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
        if value.args and value.args[0].value is not None and not (
                isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == "True"):
            return False
        made = tensor_made_by(model, func.value, follow_names=False, moves=True)
        return made is not None and tensor_factory(model.qualified_name(made.func)) is not None
    flag = keyword_arg(value, "requires_grad")
    if flag is None or not (isinstance(flag.value, cst.Name) and flag.value.value == "True"):
        return False
    if (model.qualified_name(func) or "").endswith("autograd.Variable") and value.args and value.args[0].keyword is None:
        made = tensor_made_by(model, value.args[0].value, follow_names=False, moves=True)
        return made is not None and tensor_factory(model.qualified_name(made.func)) is not None
    return tensor_factory(model.qualified_name(func)) is not None


# Methods and torch functions whose result is a plain tensor made from their receiver (or
# first argument), on its device.
_KEEPING_METHODS = {"unsqueeze", "squeeze", "transpose", "permute", "view", "reshape", "contiguous", "t", "float",
                    "double", "half", "long", "int", "bool", "flatten", "expand", "repeat", "clone", "detach", "tril",
                    "triu", "flip", "exp", "log", "sin", "cos", "sqrt", "abs", "neg", "cumsum", "normal_", "uniform_",
                    "fill_", "zero_"}
_MOVING_METHODS = {"to", "cuda", "cpu"}
_KEEPING_FUNCTIONS = {"torch.tril", "torch.triu", "torch.flip", "torch.exp", "torch.log", "torch.sin", "torch.cos",
                      "torch.sqrt", "torch.abs", "torch.cumsum", "torch.transpose", "torch.unsqueeze",
                      "torch.squeeze"}
_MAX_MADE_DEPTH = 6


def tensor_made_by(model: "SemanticModel", expr: cst.BaseExpression, follow_names: bool = True,
                   moves: bool = False, depth: int = 0) -> cst.Call | None:
    """The call that made the tensor ``expr`` is, through methods and torch functions that
    keep it a plain tensor on its device (``torch.zeros(n, d).unsqueeze(0)``,
    ``torch.tril(torch.ones(n, n))``, indexing; with ``moves``, also ``.to(...)``/``.cuda()``) and, with
    ``follow_names``, through local names each read of which sees one assignment
    (``pe = torch.zeros(n, d)``; ``pe[:, 0::2] = ...`` fills it in place;
    ``pe = pe.unsqueeze(0)``; ``self.pe = pe``). The innermost call (a factory, a layer,
    anything), or None when a name has several or no assignments."""
    if depth > _MAX_MADE_DEPTH:
        return None
    if isinstance(expr, cst.Name) and follow_names:
        bindings = model.reaching(expr.value, expr)
        if len(bindings) == 1 and bindings[0].value is not None and _within(expr, bindings[0].value):
            bindings = model.reaching(expr.value, bindings[0].node)  # ``pe = pe.unsqueeze(0)``: the one before
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None \
                or _within(expr, bindings[0].value):
            return None
        return tensor_made_by(model, bindings[0].value, follow_names, moves, depth + 1)
    if isinstance(expr, cst.Subscript):  # ``torch.linspace(0, 1, n)[..., None]``: indexing keeps it
        return tensor_made_by(model, expr.value, follow_names, moves, depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and not model.is_imported(func) and (
            func.attr.value in _KEEPING_METHODS or moves and func.attr.value in _MOVING_METHODS):
        return tensor_made_by(model, func.value, follow_names, moves, depth + 1)
    if model.qualified_name(func) in _KEEPING_FUNCTIONS and expr.args and expr.args[0].keyword is None:
        return tensor_made_by(model, expr.args[0].value, follow_names, moves, depth + 1)
    return expr


def _within(node: cst.CSTNode, root: cst.CSTNode) -> bool:
    return any(n is node for n in iter_nodes(root))
