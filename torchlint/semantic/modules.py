"""What rules about ``nn.Module`` definitions share: which bases make a class an ``nn.Module``
(``is_module_base``, ``is_module_here``), what module, layer or parameter an expression builds
(``built_by``, ``constructions``), whether it is parameter-free (``parameter_free``), whether
registering it would change nothing (``stateless``), a frozen ``nn.Parameter``
(``frozen_parameter``), the values a class stores in ``self.x``, the code its ``forward`` runs,
and findings that only hold if the class is an ``nn.Module``.

Whether a class is an ``nn.Module`` often depends on another file (``class Net(BaseNet)``
with ``BaseNet`` in ``base.py``), so a rule records such findings as *pending* facts
(``pending``) in the per-file pass and the project pass keeps those whose class the project
index knows to be an ``nn.Module`` (``settle``, through ``Project.is_nn_module``).
"""

from __future__ import annotations

import builtins

from typing import TYPE_CHECKING, Iterator, NamedTuple

import libcst as cst

from torchlint.finding import Finding, Span
from torchlint.fixes import Fix, from_trailing, trailing_json
from torchlint.libraries import is_module_base, torch_nn_class
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.index import index_name
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes
from torchlint.torch_api import (PARAMETER_FREE_LAYERS, PARAMETER_FREE_LOSSES, SELF_RETURNING, WEIGHTED_LOSSES,
                                 has_star_kwargs, is_false_literal, is_parameter_free_layer, keyword_arg)

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.project import Project
    from torchlint.rule import Rule
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import Binding, ClassInfo, Scope, SemanticModel


# ``nn.Parameter`` by its qualified names.
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Methods of a module (or tensor) that return the same object.
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}
# Roots of imported callables that build no module of the project's.
_NO_MODULE_ROOTS = ("torch", "builtins", "typing", "copy")


def is_module_here(model: "SemanticModel", info: "ClassInfo") -> bool:
    """A class whose bases, through same-file ones, include a library ``nn.Module`` base
    (a base from another file needs the project pass: ``Project.is_nn_module``)."""
    return any(is_module_base(base) for cls in model.mro(info) for base in cls.bases)


def is_parameter(model: "SemanticModel", value: cst.BaseExpression | None) -> bool:
    """``nn.Parameter(...)``. A qualified name only ever expands the head of what is written,
    so a callee that is neither an attribute ``.Parameter`` nor a bare ``Parameter`` or
    imported name cannot be one: the scope-aware lookup is skipped for it."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    kind = type(func)
    if kind is cst.Attribute:
        if func.attr.value != "Parameter":
            return False
    elif kind is not cst.Name or func.value != "Parameter" and func.value not in model.ctx.imports:
        return False
    return model.qualified_name(func) in PARAMETER_CLASSES


def frozen_parameter(call: cst.Call) -> bool:
    """``nn.Parameter(t, requires_grad=False)`` (or ``False`` as the second argument): a
    tensor kept in ``state_dict()`` that gets no gradient, no optimizer update and that
    ``DistributedDataParallel`` does not wait for."""
    flag = keyword_arg(call, "requires_grad")
    if flag is None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        flag = positional[1] if len(positional) > 1 else None
    return flag is not None and is_false_literal(flag.value)


class Built(NamedTuple):
    """A module (or parameter) one call builds. ``kind``: ``"nn"`` (a ``torch.nn`` class,
    ``name`` its class name), ``"param"`` (``nn.Parameter``), ``"class"`` (a class that may be
    a project ``nn.Module``: ``name`` as the project index names it, a bare name when a star
    import may bring it; ``info`` when it is a class of this file)."""

    kind: str
    name: str
    call: cst.Call
    info: "ClassInfo | None" = None


def built_by(model: "SemanticModel", call: cst.Call) -> Built | None:
    """What ``call`` builds, when it may be a module or a parameter."""
    func = call.func
    if model.is_imported(func):
        qualified = model.qualified_name(func) or ""
        name = torch_nn_class(qualified)
        if name is not None:
            return Built("nn", name, call)
        if qualified in PARAMETER_CLASSES:
            return Built("param", qualified, call)
        if qualified.split(".")[0] not in _NO_MODULE_ROOTS:
            return Built("class", qualified, call)
    elif isinstance(func, cst.Name):
        found = model.binding_of(func)
        for b in reversed(found):
            if b.kind == "class":
                module = model.ctx.import_table.module_name
                name = index_name(model.scopes[b.node])
                return Built("class", f"{module}.{name}" if module else name, call, model.classes.get(b.node))
        if not found and model.ctx.star_imports:
            return Built("class", func.value, call)
    return None


def constructions(model: "SemanticModel", value: cst.BaseExpression) -> list[Built]:
    """The modules ``value`` may build: both branches of ``a if c else b``, and a call under
    methods returning the module itself (``nn.Linear(...).to(device)``)."""
    if isinstance(value, cst.IfExp):
        return constructions(model, value.body) + constructions(model, value.orelse)
    if not isinstance(value, cst.Call):
        return []
    func = value.func
    while isinstance(func, cst.Attribute) and func.attr.value in SELF_RETURNING and isinstance(func.value, cst.Call):
        value = func.value
        func = value.func
    found = built_by(model, value)
    return [found] if found is not None else []


def parameter_free(model: "SemanticModel", built: Built) -> bool:
    """A ``torch.nn`` construction that holds no parameters: a parameter-free layer
    (``nn.ReLU``, ``nn.Dropout``, ``DropPath``), a bare ``nn.Module()``, or a container
    (``nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))``) of nothing else."""
    if built.kind != "nn":
        return False
    if built.name == "Module":
        return True
    if built.name not in CONTAINERS:
        return built.name in PARAMETER_FREE_LAYERS or built.name in PARAMETER_FREE_LOSSES or \
            is_parameter_free_layer(model.ctx, built.call.func)
    items = _container_items(built)
    return bool(items) and all(
        len(found) == 1 and parameter_free(model, found[0]) for found in (constructions(model, i) for i in items))


def stateless(model: "SemanticModel", built: Built) -> bool:
    """A ``torch.nn`` construction that registering would change nothing for: no parameters,
    no buffers (a loss given no ``weight``/``pos_weight``), no train/eval behaviour (not a
    dropout): ``nn.ReLU()``, ``nn.MaxPool2d(2)``, ``nn.MSELoss()``."""
    if not parameter_free(model, built) or built.name in CONTAINERS or "Drop" in built.name:
        return False
    if built.name in WEIGHTED_LOSSES:
        call = built.call
        return not (has_star_kwargs(call) or any(a.keyword is None for a in call.args)
                    or keyword_arg(call, "weight") or keyword_arg(call, "pos_weight"))
    return True


# ``self.<method>(...)`` calls that register something on a module.
REGISTERING = frozenset({"add_module", "register_module", "register_parameter", "register_buffer"})


def holds_state(sem: "Analyses", info: "ClassInfo", seen: frozenset = frozenset()) -> bool | None:
    """Whether an instance of the same-file class ``info`` holds something ``nn.Module``
    registration matters for: a ``torch.nn`` layer that is not ``stateless``, an
    ``nn.Parameter``, a ``register_*``/``add_module`` call, a mode of its own (it reads
    ``self.training``), or a same-file class (built or derived from) that holds state.
    False when it holds none of these and builds nothing else; None when it cannot be told:
    it builds or derives from a class defined elsewhere (``torchaudio.transforms.Resample``,
    a project class in another file) and nothing above settles it."""
    if info.node in seen:
        return False  # a cycle adds nothing new
    seen = seen | {info.node}
    model = sem.model
    unknown = False
    if any(node.attr.value == "training" or node.attr.value in REGISTERING for node, _ in info.self_sites):
        return True
    for base_info in info.local_bases:
        found = holds_state(sem, base_info, seen)
        if found:
            return True
        unknown = unknown or found is None
    local_names = {b.name for b in info.local_bases}
    for base in info.bases:
        name = torch_nn_class(base)
        if name is not None:
            if name != "Module" and name not in CONTAINERS and name not in PARAMETER_FREE_LAYERS:
                return True
        elif base.rsplit(".", 1)[-1] not in local_names and base not in ("object", "ABC", "abc.ABC"):
            unknown = True
    for method in info.methods.values():
        for site in sem.graph.sites(method):
            built = built_by(model, site.node)
            if built is None:
                continue
            if built.kind == "param" or built.kind == "nn" and not stateless(model, built):
                return True
            if built.kind == "class":
                found = holds_state(sem, built.info, seen) if built.info is not None else None
                if found:
                    return True
                unknown = unknown or found is None
    return None if unknown else False


def _container_items(built: Built) -> list[cst.BaseExpression] | None:
    """The modules an ``nn.Sequential``/``ModuleList``/``ModuleDict`` call lists; None when
    it cannot be told (keywords, ``*args``, a variable)."""
    items: list[cst.BaseExpression] = []
    for arg in built.call.args:
        if arg.keyword is not None or arg.star:
            return None
        value = arg.value
        if built.name == "Sequential":
            items.append(value)
        elif isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
            items.extend(el.value for el in value.elements)
        elif isinstance(value, cst.Dict):
            if not all(isinstance(el, cst.DictElement) for el in value.elements):
                return None
            items.extend(el.value for el in value.elements)
        else:
            return None
    return items

# The methods a module runs its layers in: ``forward`` (Lightning's ``training_step`` too).
RUNNERS = ("forward", "training_step")


def is_abstract(node: cst.FunctionDef) -> bool:
    """``@abstractmethod``, or a body that only raises ``NotImplementedError`` (or is ``...``/
    ``pass`` after a docstring): subclasses, maybe unseen, provide the real method."""
    if {dotted_name(d.decorator) for d in node.decorators} & {"abstractmethod", "abc.abstractmethod"}:
        return True
    if isinstance(node.body, cst.IndentedBlock):
        body = node.body.body
        stmts = [small for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body]
        if len(stmts) != len(body):
            return False
    else:  # ``def f(self): ...`` on one line: its statements are the suite's
        stmts = list(node.body.body)
    for small in stmts:
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.BaseString, cst.Ellipsis)):
            continue
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Raise) and small.exc is not None:
            exc = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
            if dotted_name(exc) == "NotImplementedError":
                continue
        return False
    return True


def runs_layers(info: "ClassInfo") -> bool:
    """The class defines a ``forward`` (or ``training_step``) of its own that is not
    abstract (``is_abstract``) nor unfinished (``unfinished``), under any branch: its layers
    run there."""
    scopes = {child.node: child for child in info.scope.children}
    return any(b.kind == "def" and not is_abstract(b.node) and not unfinished(scopes.get(b.node), b.node)
               for name in RUNNERS for b in info.scope.bindings.get(name, ()))


_BUILTINS = frozenset(dir(builtins))


def unfinished(scope: "Scope | None", node: cst.FunctionDef) -> bool:
    """A method that cannot run as written, an exercise template's ``forward`` whose body the
    student is to write: its body is only a bare ``return`` (or ``return None``, after a
    docstring or ``pass``); it returns a name bound nowhere (not in the function, around it, in
    the module, nor a builtin: a ``NameError``), or bound only outside it while it reads nothing
    of ``self`` (a notebook's ``# your code here`` forward returning ``output, hidden``, names a
    later cell binds from its result); or it first binds a local from itself
    (``y = self.proj(y)`` with no ``y`` before it: an ``UnboundLocalError``). Its layers cannot
    be used yet, so none is reported unused."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    smalls = [small for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body]
    if len(smalls) == len(body) and any(isinstance(small, cst.Return) for small in smalls) and all(
            isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(small.value, cst.BaseString))
            or (isinstance(small, cst.Return) and (small.value is None or
                                                  (isinstance(small.value, cst.Name) and small.value.value == "None")))
            for small in smalls):
        return True
    if scope is None:
        return False
    module = scope
    while module.parent is not None:
        module = module.parent
    if _star_import(module.node):
        return False
    uses_self = _reads_self(scope, node)
    for ret in scope.returns:
        for name in _returned_names(ret.value):
            if name in _BUILTINS:
                continue
            if name in scope.bindings or name in scope.globals:
                continue
            if any(name in s.bindings or name in s.globals for s in _chain(scope.parent) if s.kind != "class"):
                if uses_self:
                    continue
                # a module-level name (a notebook's ``output, hidden, attn = decoder(...)`` of a
                # later cell) handed back by a forward that uses nothing of its module: a stub
            return True
    for key, bindings in scope.bindings.items():
        first = bindings[0]
        if "." in key or key in scope.globals or first.kind != "assign" or not isinstance(first.node, cst.Assign):
            continue
        if key in _read_names(first.node.value):
            return True  # assigned in the function, so local: read before it is bound
    return False


def _reads_self(scope: "Scope", node: cst.FunctionDef) -> bool:
    """The method reads an attribute of ``self`` (a layer, a setting) anywhere in its body."""
    params = node.params.params
    if not params:
        return False
    me = params[0].name.value
    return any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == me
               for n in iter_nodes(node.body))


def _read_names(value: cst.BaseExpression) -> set[str]:
    """The bare names ``value`` reads (not an attribute's name, ``self.qkv``, nor a keyword's)."""
    skip = set()
    for node in iter_nodes(value, into_scopes=False):
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
    return {node.value for node in iter_nodes(value, into_scopes=False)
            if isinstance(node, cst.Name) and id(node) not in skip}


def _chain(scope: "Scope | None") -> Iterator["Scope"]:
    while scope is not None:
        yield scope
        scope = scope.parent


def _returned_names(value: cst.BaseExpression | None) -> list[str]:
    """The bare names a ``return`` gives back (``return out, hidden``)."""
    if isinstance(value, cst.Name):
        return [value.value]
    if isinstance(value, cst.Tuple):
        return [e.value.value for e in value.elements if isinstance(e.value, cst.Name)]
    return []


def _star_import(module: cst.CSTNode) -> bool:
    return isinstance(module, cst.Module) and any(
        isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar)
        for line in module.body if isinstance(line, cst.SimpleStatementLine) for small in line.body)


def self_attr_bindings(model: "SemanticModel", info: "ClassInfo", attr: str) -> list["Binding"]:
    """Every binding of ``self.<attr>`` in the methods of ``info`` (its own, not its bases'),
    in source order, whatever name ``self`` goes by in each method."""
    memo = model.memo("self_attr_bindings")  # per class: attr -> its bindings, sorted once
    table = memo.get(info)
    if table is None:
        table = memo[info] = {}
        for method in info.methods.values():
            scope = model.scopes.get(method)
            if scope is None or scope.self_name is None:
                continue
            prefix = scope.self_name + "."
            for key, bindings in scope.bindings.items():
                if key.startswith(prefix):
                    table.setdefault(key[len(prefix):], []).extend(bindings)
        for found in table.values():
            found.sort(key=lambda b: b.order)
    return list(table.get(attr, ()))


def forward_code(sem: "Analyses", info: "ClassInfo") -> set[cst.CSTNode]:
    """The functions ``info``'s own ``forward`` runs: itself and the same-file functions
    and methods it calls, transitively (nested functions and lambdas it calls included).
    Empty when the class defines no ``forward``."""
    forward = info.methods.get("forward")
    if forward is None:
        return set()
    return sem.graph.reach([forward])


def forward_owners(sem: "Analyses") -> dict[cst.CSTNode, "ClassInfo"]:
    """Every function a class's ``forward`` runs (``forward_code``) -> that class (the first
    class, in source order, whose forward runs it)."""
    owners: dict[cst.CSTNode, "ClassInfo"] = {}
    for info in sem.model.classes.values():
        for function in forward_code(sem, info):
            owners.setdefault(function, info)
    return owners


def runs_in(model: "SemanticModel", node: cst.CSTNode, functions: set[cst.CSTNode]) -> bool:
    """Whether ``node``'s code belongs to one of ``functions`` (comprehensions count as
    the code around them)."""
    return enclosing_function(model, model.scope_of(node)) in functions


def class_key(info: "ClassInfo") -> str:
    """The class's name in the project index (``Outer.Inner``, ``make.Net``)."""
    return index_name(info.scope)


def attribute_never_read(ctx: "FileContext", info: "ClassInfo", attr: str) -> bool:
    """No code of the file reads the attribute ``attr`` of ``info``'s instances: every
    ``<x>.<attr>`` in it is the target of an assignment (``self.linears = [...]``) or a
    ``self.<attr>`` of a class unrelated to ``info`` (neither a base nor a subclass of it in
    the file); none is loaded by ``info``'s methods, its bases' or its subclasses', nor on
    another object (``net.linears``); and nothing reaches attributes by a computed name
    (``getattr``, ``vars``, ``__dict__``). In a file no other file imports (a notebook, a
    script), what it stores there is never used: a layer kept there computes nothing,
    registered or not (a textbook's demonstration that a plain list is not registered)."""
    model = ctx.semantic.model
    related = {id(c) for c in model.mro(info)}
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Name) and node.value in ("getattr", "vars", "__dict__"):
            return False
        if isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return False
        if not (isinstance(node, cst.Attribute) and node.attr.value == attr):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.AssignTarget) and parent.target is node \
                or isinstance(parent, cst.AnnAssign) and parent.target is node and parent.value is not None:
            continue
        scope = model.scope_of(node)
        other = scope.cls if isinstance(node.value, cst.Name) and node.value.value == scope.self_name else None
        if other is not None and id(other) not in related and id(info) not in {id(c) for c in model.mro(other)}:
            continue  # ``self.linears`` of an unrelated class
        return False
    return True


def pending(ctx: "FileContext", info: "ClassInfo", node: cst.CSTNode, message: str, fix: "Fix | None" = None) -> list:
    """A finding at ``node`` (with ``fix``) that holds if ``info`` is an ``nn.Module``: JSON
    for the facts."""
    return [class_key(info), Span.of_range(ctx.position(node)).to_json(), message, *trailing_json(fix)]


def settle(rule: type["Rule"], project: "Project", key: str = "pending", keep=None) -> Iterator[Finding]:
    """The pending findings (``facts[rule.code][key]``) of every file whose class the
    project index knows to be an ``nn.Module`` (and, given ``keep``, for which
    ``keep(project, record)`` holds)."""
    for record in project.records:
        facts = record.facts.get(rule.code)
        if not facts or not facts.get(key) or keep is not None and not keep(project, record):
            continue
        for qual, span, message, *fix in facts.get(key, ()):
            name = record.qualified(qual)
            if project.is_nn_module(name):
                yield Finding.at(rule, record.path, Span.from_json(span), message, extra={"class": qual},
                                 fix=from_trailing(fix))


def torch_nn_alias(model: "SemanticModel") -> str | None:
    """How code anywhere in the file can name ``torch.nn``: a top-level ``import torch.nn as
    nn`` / ``from torch import nn`` (its name), else a top-level ``import torch``
    (``torch.nn``); None without either (a fix that needs ``torch.nn`` then adds nothing)."""
    imports = {key: b.qualified for key, found in model.scopes[model.ctx.module].bindings.items() for b in found
               if b.kind == "import" and len(found) == 1}
    for name, qualified in sorted(imports.items()):
        if qualified == "torch.nn" and "." not in name:
            return name
    return "torch.nn" if imports.get("torch") == "torch" else None
