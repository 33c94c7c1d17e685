"""TL005 unused-layer: an ``nn.Module`` attribute assigned a layer that nothing ever calls.

Per file (``finish``, from the semantic model: no walk of its own but one cheap hook that
collects ``model.x`` reads), for every class:

* the attributes it assigns a module to (``self.x = nn.Linear(...)``, a container, a call of
  a class that may be a project ``nn.Module``), with the place of the first such assignment;
* every ``self.<name>`` it reads outside ``__init__`` (nested functions and lambdas of any
  method included; ``getattr(self, "name")`` too). Inside ``__init__`` a read counts only
  when the module (or one of its tensors) flows somewhere: into a container, another layer,
  a variable, an assignment. Initialisation (``nn.init.zeros_(self.fc.bias)``,
  ``self.fc.weight.data.normal_()``, ``if self.fc.bias is not None``) is not a use;
* whether it accesses its submodules dynamically (``getattr(self, name)``, ``setattr``,
  ``self.children()``, ``self._modules``, ``vars(self)``, a ``__getattr__`` of its own, ...);
* whether it defines ``forward`` (or Lightning's ``training_step``) that is not abstract.

Which scope ``self`` is bound in, and what each ``self.x`` site and assignment is, come from
``ctx.semantic.model`` (``Scope.self_name``/``cls``/``method_kind``, ``ClassInfo.self_sites``,
bindings); the class's name is ``index.index_name``, the key of the project index.

Each file also records the attribute names it reads through another object outside
``__init__`` (``self.backbone.fc(x)``, ``model.criterion(out, y)``): a layer can be used by
the module that holds it, so such a name is never reported anywhere in the project.

Those facts go to ``ctx.facts["TL005"]`` (``bases`` there only records what the class wrote).
The project pass takes the class hierarchy from ``Project`` (``ancestors``,
``direct_subclasses``, ``is_nn_module``, ``resolve_class``) and reports a layer only when the
class is an ``nn.Module`` whose whole family -- its bases, its subclasses anywhere in the
linted files and their other bases -- is known (project classes, ``torch.nn.Module``,
Lightning's ``LightningModule``), none of them reads the attribute or accesses submodules
dynamically, and one of them defines ``forward``. ``del self.x`` (``delattr``) in any of them
removes the layer; ``self.a = self.b = X()`` is one module under two names, used when either is
read, and a container built from modules the class keeps under another attribute
(``self._subs = nn.ModuleList(policies.values())`` next to ``self.policies = policies``) only
registers them: it is used when that attribute is read (also a container of a collection's
elements that another attribute keeps through one call: ``_element_sources``); a layer whose own
comment gives the reason it is kept (TorchScript registration, checkpoints, compatibility:
``_KEPT_ON_PURPOSE``) is not reported, nor one named as a stand-in (``dummy``, ``placeholder``:
``_PLACEHOLDER``); an ``nn.ModuleList()``/``ModuleDict()``/
``Sequential()`` built empty that the class never touches again holds nothing. A bare
``nn.Parameter`` nothing reads is reported too (unless the family iterates ``self.parameters()``,
or it is frozen: ``requires_grad=False`` gets no gradient or optimizer state by design). A parameter-free layer is
reported only when it was built to act -- a dropout, or one an ``__init__`` argument builds or
chooses -- and forward does not apply its functional form (``F.softmax``, ``x.softmax``):
otherwise it is a leftover that changes nothing. The message says what holds: a conditional
layer's parameters "whenever it is built with parameters"; in a file that loads weights, keeping a
head for ``load_state_dict`` is offered (``nn.Identity()`` after loading) instead of deleting it. A base from a third-party library or from a
file that was not linted can read anything, so the class is not reported. A subclass in a
file that was not linted cannot be seen: that is accepted (linting a single file reports what
that file shows).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Iterable, NamedTuple

import libcst as cst

from torchlint import codes
from torchlint.finding import Finding, Severity, Span
from torchlint.libraries import is_lightning_module, torch_nn_class
from torchlint.rule import Option, Rule
from torchlint.semantic.comments import documented
from torchlint.semantic.index import index_name
from torchlint.semantic.model import CLASS, COMPREHENSION, MODULE
from torchlint.semantic.modules import (CONTAINERS, constructions, frozen_parameter, is_parameter, parameter_free,
                                        runs_layers)
from torchlint.torch_api import SELF_RETURNING
from torchlint.tree import iter_nodes

__all__ = ["UnusedLayer", "message", "torch_nn_class"]

# Bases that read nothing at all.
_NEUTRAL_BASES = {"object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol"}
# Submodules reached without naming them.
_DYNAMIC_METHODS = {"children", "named_children", "modules", "named_modules", "get_submodule",
                    "__getattr__", "__getattribute__", "__setattr__"}
_DYNAMIC_ATTRS = {"_modules", "__dict__"}
# Calls that only look at a module inside ``__init__``.
_INSPECTING = {"isinstance", "hasattr", "print", "type", "callable", "id", "repr", "str", "getattr"}
# Methods whose presence means the class runs its layers itself.
_INIT = "__init__"
# Parameter-free layers built only to act (regularisation): never a harmless leftover.
_REGULARISERS = ("dropout", "alphadropout", "featurealphadropout")
# Calls that load weights into a module (a head kept so that a checkpoint loads).
_LOADING = {"load_state_dict", "load_state_dict_from_url", "load_url"}


def _normalised(name: str) -> str:
    """``ReLU``, ``relu`` -> ``relu``; ``LogSoftmax``, ``log_softmax`` -> ``logsoftmax``."""
    return name.replace("_", "").lower()
# Variables that hold a model (``model.criterion(out, y)`` reads a layer from outside).
_MODEL_NAME = re.compile(r"(model|net|network|module|encoder|decoder|backbone|student|teacher|generator|"
                         r"discriminator|classifier|wrapper)s?$|^(m|mod|g|d)$", re.IGNORECASE)
# Tensor methods named like layers: ``self.weights.softmax(-1)`` reads no layer.
_TENSOR_METHODS = {"softmax", "log_softmax", "relu", "relu_", "sigmoid", "tanh", "flatten", "unflatten",
                   "norm", "abs", "exp", "mean", "sum", "max", "min", "pow", "sqrt", "float", "half"}


class _Method(NamedTuple):
    """Where ``self`` is an instance of ``cls``: in a method (not a class/static method) or a
    function, lambda or comprehension inside one; ``init`` when directly in ``__init__``."""

    cls: Any  # ClassInfo
    init: bool


class _Class:
    """What one class does with ``self``, gathered from the semantic model."""

    __slots__ = ("info", "reads", "dynamic", "runs", "pf", "layers", "iterates", "functional", "aliases",
                 "deleted", "touched")

    def __init__(self, info):
        self.info = info
        self.reads: set[str] = set()
        self.dynamic = False
        self.runs = False
        self.pf = True  # holds no parameters of its own (only parameter-free layers, plain values)
        self.layers: dict[str, tuple[cst.CSTNode, list, bool]] = {}  # attr -> (statement, kinds, configured)
        self.iterates = False  # reads its parameters without naming them (self.parameters() outside __init__)
        self.functional: set[str] = set()  # torch functions called outside __init__, normalised (F.relu: relu)
        # ``self.a = self.b = X()``: a -> {b}, b -> {a} (one module); a container registering
        # what another attribute holds -> that attribute
        self.aliases: dict[str, set[str]] = {}
        self.deleted: set[str] = set()  # ``del self.x``/``delattr(self, "x")``: the layer is removed
        self.touched: set[str] = set()  # any site of ``self.x`` that does not store it (``.append(...)`` too)


class UnusedLayer(Rule):
    code = codes.UNUSED_LAYER
    name = "unused-layer"
    severity = Severity.WARNING
    default_enabled = True
    summary = "nn.Module layer assigned in the model but never used outside __init__"
    options = {
        "ignore-names": Option([], list, "attribute names (or fnmatch patterns) never reported", item_kind=str),
    }
    # Every file with a class: a subclass that reads a base's layer must be seen even when it
    # mentions nothing of torch. Scripts that use a model's layer from outside
    # (``model.criterion(...)``) are read too.
    uses_semantic_model = True
    requires_text = ("class", "model", "net.", "Net.", "module.", "encoder.", "decoder.", "backbone.",
                     "student.", "teacher.", "generator.", "discriminator.", "classifier.", "wrapper.")


    # -- per-file pass -----------------------------------------------------------------
    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._named: list[cst.Attribute] = []  # ``model.x``/``self.x``: maybe read from outside
        self._methods: dict[int, _Method | None] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        value = node.value
        if type(value) is cst.Name and (value.value == "self" or _MODEL_NAME.search(value.value)):
            self._named.append(node)

    def finish(self) -> None:
        model = self.ctx.semantic.model
        classes = {id(info): _Class(info) for info in model.classes.values()}
        outside: set[str] = set()
        for cls in classes.values():
            self._scan_methods(cls)
            self._scan_self_sites(cls, outside)
            self._registration_aliases(cls)
        self._scan_calls(model, classes)
        self._scan_named_reads(model, classes, outside)
        if not classes and not outside:
            return
        facts: dict[str, Any] = {"classes": [self._entry(cls) for cls in classes.values()]}
        if outside:
            facts["outside"] = sorted(outside)
        if self._loads:
            facts["loads"] = True
        self.ctx.facts[self.code] = facts

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

    def _scan_methods(self, cls: _Class) -> None:
        """A ``forward`` that is not abstract; a ``__getattr__`` of its own."""
        info = cls.info
        cls.runs = runs_layers(info)
        if any(b.kind == "def" for name in ("__getattr__", "__getattribute__")
               for b in info.scope.bindings.get(name, ())):
            cls.dynamic = True

    def _scan_self_sites(self, cls: _Class, outside: set[str]) -> None:
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

    def _alias(self, cls: _Class, stmt: cst.Assign, attr: str) -> None:
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

    def _scan_named_reads(self, model, classes: dict, outside: set[str]) -> None:
        """``model.criterion(out, y)`` outside ``__init__``: a layer of another module used from
        outside its class; ``self.fc`` in a free function attached as a method."""
        sited = {id(node) for cls in classes.values() for node, _ in cls.info.self_sites}
        for node in self._named:
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
            elif not _MODEL_NAME.search(root) or root in self.ctx.imports:
                continue
            self._outside_read(node, outside)

    def _scan_calls(self, model, classes: dict) -> None:
        """``getattr(self, ...)``/``setattr``/``vars(self)``, ``self.children()``, parameters
        registered by hand."""
        self._loads = False
        for site in model.calls:
            node = site.node
            func = node.func
            last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            self._loads = self._loads or last in _LOADING
            method = self._method(site.scope)
            if method is None:
                continue
            cls = classes[id(method.cls)]
            me = site.scope.self_name
            if not method.init and (last in _TENSOR_METHODS and isinstance(func, cst.Attribute) or (
                    self.ctx.is_imported(func) and (self.ctx.qualified_name(func) or "").startswith("torch."))):
                cls.functional.add(_normalised(last))  # F.softmax(x), torch.relu(x), x.softmax(-1)
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
    def _assigned(self, cls: _Class, stmt: cst.CSTNode, attr: str, value: cst.BaseExpression) -> None:
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

    def _empty_container(self, cls: _Class, attr: str) -> bool:
        """``self.x = nn.ModuleList()`` (``ModuleDict()``, ``Sequential()``) that the class never
        touches again: it never gets a layer, so it holds no parameters and costs nothing."""
        stmt, kinds, _ = cls.layers[attr]
        value = stmt.value if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else None
        return (attr not in cls.touched and len(kinds) == 1 and kinds[0][0] == "nn" and kinds[0][2] in CONTAINERS
                and isinstance(value, cst.Call) and not value.args)

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

    def _registration_aliases(self, cls: _Class) -> None:
        """``self._subs = nn.ModuleList(policies.values())`` next to ``self.policies = policies``
        (or built from ``self.policies`` itself): the container only registers modules the class
        uses through the other attribute, so a read of that attribute uses it. So does a
        container of the elements of a collection (``_element_sources``) that another attribute
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
                held = _element_sources(model, stmt.value.args[0].value)
                others |= {a for name in held for a in wrapped.get((scope, name), ())}
            if others - {attr}:
                cls.aliases.setdefault(attr, set()).update(others - {attr})

    # -- facts ---------------------------------------------------------------------------
    def _entry(self, cls: _Class) -> dict[str, Any]:
        info = cls.info
        entry: dict[str, Any] = {"name": info.name, "qual": index_name(info.scope),
                                 "bases": [["q", b] for b in info.bases], "reads": sorted(cls.reads)}
        layers = []
        if not cls.dynamic and info.node.bases:
            for attr in sorted(cls.layers):
                if attr in cls.reads or cls.aliases.get(attr, set()) & cls.reads or self._empty_container(cls, attr):
                    continue
                stmt, kinds, configured = cls.layers[attr]
                if documented(self.ctx, stmt, _KEPT_ON_PURPOSE, own_statement=True):
                    continue  # ``self._dummy = Potential(...)  # register the class for TorchScript``
                if _PLACEHOLDER.search(attr):
                    continue  # ``self.dummy_parameter = nn.Parameter(...)``: there to be held, not run
                layers.append([attr, kinds, self.ctx.span(stmt).to_json(), configured])
        aliases = {attr: sorted(others) for attr, others in cls.aliases.items()}
        for key, value in (("dynamic", cls.dynamic), ("runs", cls.runs), ("pf", cls.pf), ("layers", layers),
                           ("iterates", cls.iterates), ("functional", sorted(cls.functional)),
                           ("aliases", aliases), ("deleted", sorted(cls.deleted))):
            if value:
                entry[key] = value
        return entry

    # -- project pass --------------------------------------------------------------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        return _ProjectPass(project, options, cls).run()


# A comment on the assignment (or right above it) giving the reason the layer is kept unused:
# to register a class for TorchScript, to keep checkpoints loading, for compatibility.
_KEPT_ON_PURPOSE = re.compile(r"regist|\bjit\b|torchscript|\bkeep|\bkept\b|compat|checkpoint|state[ _]?dict",
                              re.IGNORECASE)
# An attribute named as a stand-in: a module that must have a parameter (for an optimizer, for
# ``next(m.parameters()).device``) or a slot filled later. Its name says it is not meant to run.
_PLACEHOLDER = re.compile(r"dummy|placeholder", re.IGNORECASE)


def _is_name(expr: cst.BaseExpression, name: str | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _element_sources(model, expr: cst.BaseExpression, depth: int = 0) -> set[str]:
    """The names of the collections whose elements ``expr`` holds as they are: ``xs``,
    ``xs.values()``, ``list(xs)``, ``[x for x in xs if ...]``, and a local assigned one of those
    (``mods = [p for p in projections if ...]`` gives ``mods`` and ``projections``)."""
    if depth > 3:
        return set()
    if isinstance(expr, cst.Name):
        found = {expr.value}
        for binding in model.reaching(expr.value, expr):
            if binding.kind == "assign" and binding.value is not None:
                found |= _element_sources(model, binding.value, depth + 1)
        return found
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        loop = expr.for_in
        if loop.inner_for_in is None and isinstance(loop.target, cst.Name) and _is_name(expr.elt, loop.target.value):
            return _element_sources(model, loop.iter, depth + 1)
        return set()
    if isinstance(expr, cst.Call):
        func, args = expr.func, expr.args
        if isinstance(func, cst.Attribute) and func.attr.value == "values" and not args:
            return _element_sources(model, func.value, depth + 1)
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and len(args) == 1 and not args[0].keyword \
                and not args[0].star:
            return _element_sources(model, args[0].value, depth + 1)
    return set()


class _FamilyUse(NamedTuple):
    """What a class, its bases and subclasses do with ``self`` outside ``__init__``."""

    reads: set  # attributes read (or deleted: `del self.x` removes the layer)
    functional: set  # torch functions applied (normalised names)
    iterates: bool  # self.parameters() / named_parameters()


_PARAM, _LAYER, _MAYBE, _FREE = "parameter", "layer", "maybe", "free"
# What an external base (no project class) means for the attributes of its subclasses.
_MODULE, _NEUTRAL, _OPAQUE, _TORCH_NN = "module", "neutral", "opaque", "torch.nn"


def _external_kind(qualified: str) -> str:
    """``torch.nn.Module``/``LightningModule`` read none of them, ``object``/``ABC`` nothing;
    another ``torch.nn`` class (``nn.Sequential``) runs its children; anything else is opaque."""
    torch_name = torch_nn_class(qualified)
    if torch_name == "Module" or is_lightning_module(qualified):
        return _MODULE
    if qualified in _NEUTRAL_BASES:
        return _NEUTRAL
    return _TORCH_NN if torch_name is not None else _OPAQUE


class _ProjectPass:
    """Classes are the project index's names (``Project``); their TL005 facts hang off them."""

    def __init__(self, project, options: dict[str, Any], rule: type[UnusedLayer]):
        self.project = project
        self.rule = rule
        self.ignore = [str(p) for p in options.get("ignore-names") or []]
        self.entries: dict[str, list[tuple[Any, dict]]] = {}  # class -> (record, its facts)
        self.outside: set[str] = set()
        for record in project.records:
            facts = record.facts.get(rule.code)
            if not facts:
                continue
            self.outside.update(facts.get("outside", ()))
            module = record.module_name
            for entry in facts["classes"]:
                key = f"{module}.{entry['qual']}" if module else entry["qual"]
                self.entries.setdefault(key, []).append((record, entry))
        self._lineage: dict[str, tuple[set[str], set[str]]] = {}

    def lineage(self, name: str) -> tuple[set[str], set[str]]:
        """The project classes from ``name`` up (itself included) and the kinds of the external
        bases met on the way."""
        found = self._lineage.get(name)
        if found is None:
            members, external = {name}, set()
            for base in self.project.ancestors(name):
                if self.project.is_project_class(base):
                    members.add(base)
                else:
                    external.add(_external_kind(base))
            found = self._lineage[name] = (members, external)
        return found

    def run(self) -> list[Finding]:
        findings = []
        for name, entries in self.entries.items():
            if not any(entry.get("layers") for _, entry in entries):
                continue
            family = self.family(name)
            if family is None:
                continue
            facts = [entry for member in family for _, entry in self.entries[member]]
            seen = _FamilyUse({attr for entry in facts for attr in (*entry["reads"], *entry.get("deleted", ()))},
                              {f for entry in facts for f in entry.get("functional", ())},
                              any(entry.get("iterates") for entry in facts))
            for record, entry in entries:
                findings.extend(self.report(record, entry, seen))
        return findings

    def report(self, record, entry: dict, seen: "_FamilyUse") -> Iterable[Finding]:
        loads = bool((record.facts.get(self.rule.code) or {}).get("loads"))
        aliases = entry.get("aliases", {})
        for attr, kinds, span, configured in entry.get("layers", ()):
            if attr in seen.reads or seen.reads.intersection(aliases.get(attr, ())) or attr in self.outside or any(fnmatch.fnmatchcase(attr, p) for p in self.ignore):
                continue
            kind = self.layer(kinds, record)
            if kind is None or (kind == _PARAM and seen.iterates):
                continue
            built = {"nn": lambda k: k[2], "class": lambda k: k[1].rsplit(".", 1)[-1]}.get(kinds[0][0], str)(kinds[0])
            if kind == _FREE and (_normalised(built) in seen.functional
                                  or not (configured or _normalised(built).startswith(_REGULARISERS))):
                continue  # forward applies the functional form, or a leftover that changes nothing
            yield Finding.at(self.rule, record.path, Span.from_json(span), message(entry["name"], attr, kind, built, loads),
                             extra={"class": entry["name"], "attribute": attr})

    def family(self, name: str) -> set[str] | None:
        """The classes whose methods see ``self`` as an instance of ``name``, or None when it
        must not be reported (not a module, an unknown base, dynamic access, no forward)."""
        members, external = self.lineage(name)
        if _OPAQUE in external or _TORCH_NN in external or _MODULE not in external:
            return None
        family = set(members)
        stack = self.project.direct_subclasses(name, loose=True)
        while stack:
            sub = stack.pop()
            if sub in family:
                continue
            up, ext = self.lineage(sub)
            if _OPAQUE in ext or _TORCH_NN in ext:
                return None
            family |= up
            stack.extend(self.project.direct_subclasses(sub, loose=True))
        facts = [entry for member in family for _, entry in self.entries.get(member, [(None, None)])]
        if None in facts or any(entry.get("dynamic") for entry in facts):
            return None  # a class without facts (its file failed) may do anything
        if not any(entry.get("runs") for entry in facts):
            return None
        return family

    def layer(self, kinds: list, record) -> str | None:
        """What the attribute holds when it is a module or a parameter: a bare parameter,
        a layer with parameters, one that may have them (built conditionally, one choice
        parameter-free) or a parameter-free layer; None when it is neither."""
        choices = []
        for kind, data, *_ in kinds:
            if kind == "param":
                return _PARAM
            if kind == "nn":
                choices.append(data)
                continue
            name = self.project.resolve_class(data, record)
            if name is not None and self.project.is_nn_module(name):
                choices.append(self.class_pf(name))
        if not choices:
            return None
        return _FREE if all(choices) else _MAYBE if any(choices) else _LAYER

    def class_pf(self, name: str) -> bool:
        members, external = self.lineage(name)
        return external <= {_MODULE, _NEUTRAL} and all(
            entry.get("pf") for member in members for _, entry in self.entries.get(member, [(None, {})]))


def message(cls: str, attr: str, kind: str, built: str, loads: bool = False) -> str:
    nobody = f"nothing outside __init__ in {cls}, its bases or subclasses"
    ddp = ("DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
           "unless find_unused_parameters=True")
    fix = ("use it in forward, or, if it is kept so that pretrained weights load, replace it with nn.Identity() "
           "after loading" if loads else "use it in forward or delete it")
    if kind == _FREE:
        return (f"`{cls}.{attr}` is built but never applied: {nobody} uses `self.{attr}`, so the {built} it "
                f"was built for never runs; apply it in forward or delete it")
    if kind == _PARAM:
        return (f"`{cls}.{attr}` is a parameter that is never read: {nobody} reads `self.{attr}`, so it gets no "
                f"gradient, wastes optimizer state and checkpoint space, and {ddp}; use it in forward or "
                f"delete it")
    holds = "whenever it is built with parameters, they get" if kind == _MAYBE else "its parameters get"
    return (f"`{cls}.{attr}` is built but never used: {nobody} reads `self.{attr}`, so {holds} no gradient, "
            f"waste memory and checkpoint space, and {ddp}; {fix}")
