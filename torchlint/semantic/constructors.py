"""Values handed across calls: what a function's parameters and a class's ``self`` attributes
are given, in the file and across the project's modules.

The usual trainer layout is the reason: ``train.py`` builds the model, the loaders, the
optimizer and the scheduler and hands them over, ``trainer = Trainer(model, train_loader,
optimizer, scheduler)``; ``trainer.py`` keeps them (``self.scheduler = scheduler``) and uses
them in other methods (``self.scheduler.step()`` in ``train_epoch``). A rule that looks at the
step sees a ``self.`` attribute; the facts that judge it (which scheduler, how it is sized) are
at the construction site, often in another module. The same holds for plain functions:
``train(model, loader, opt, scheduler)``.

Per file (``semantic`` is ``ctx.semantic``; ask from ``finish()``):

* ``received(semantic)``: for each class of the file, the ``__init__`` parameters it keeps on
  ``self`` and as which attributes: ``{"Trainer": {"scheduler": ["scheduler"], ...}}``
  (``self.model = model.to(device)``, ``self.model = DDP(model)`` keep ``model`` too).
* ``origins(semantic, value, at)``: an ``Origins``, what a key (``"sched"``, ``"self.scheduler"``)
  or an expression may hold at ``at``: ``values``, the expressions it may come from (each with
  the node it is evaluated at), found by following assignments of other names, parameters to
  the arguments the file's own calls pass (``train(model, loader, opt, sched)``; a
  constructor's ``C(...)`` for ``__init__``), and ``self.x`` to what the class's methods store
  there; and ``entries``, the parameters through which a value may also come from another
  module (``Entry(owner, param, position)``, owner a module-level function or a module-level
  class, whose ``__init__`` it is).
* ``exposed(semantic)``: every such entry of the file, with the function it belongs to.
* ``unwrapped(model, value)``: the object a call hands back as itself (``model`` of
  ``model.to(device)``, ``DDP(model)``, ``torch.compile(model)``).
* ``bound_key(ctx, value)``: the name or ``self.`` attribute a value is assigned to (through
  ``.to(device)``-style calls, or from a branch of ``value if c else None``, where asked).
* ``kept_as(semantic, key, at)``: the keys a function's returned value is kept as by the file's
  callers (``self._sampler, self._loader = self._setup_data(...)``).
* ``handed_to(semantic, site, arg)``: where an argument of a call goes in a same-file callee
  (``Destination``: the function, the parameter it binds and, for ``__init__``, the ``self.``
  attributes it is kept as).
* ``passes(semantic, describe)``: the file's calls of imported callables, with each argument
  that ``describe(semantic, expression, at)`` says something of (JSON facts a rule stores:
  ``[callee, slot, description]``; ``slot`` the argument's position, or its keyword).

Across files, in a project pass (records and facts only):

* ``ArgumentFlow(project, passes_of)``: ``arrivals(record, entry)`` lists what the project's
  other modules pass into an entry of ``record`` (as ``passes_of(caller)`` gives each caller's
  ``passes``: from a rule's facts, or its demanded facts); ``callers(record)`` the records that
  import from it. Every callee is resolved through its caller's own imports
  (``Project.resolve_symbol``), so facts stay keyed by module: two unrelated packages linted
  together never receive each other's values.
* ``matches(entry, slot)``: a pass's slot binds that entry (by keyword, or by position).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple

import libcst as cst

from torchlint.semantic.callgraph import bound_argument
from torchlint.semantic.model import CLASS, MODULE, ClassInfo, SemanticModel
from torchlint.torch_api import SELF_RETURNING, expr_key, strip_self_returning

# Wrappers that hand back (a view of) the object they are given: ``DDP(model)``, ``torch.compile(model)``.
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel", "compile", "FullyShardedDataParallel"})
_MAX_DEPTH = 6


class Entry(NamedTuple):
    """A parameter through which another module may hand a value: ``owner`` is the function
    (``train``) or the class whose ``__init__`` it is (``Trainer``), ``position`` its place among
    the positional arguments a call writes (``self`` not counted; None: keyword-only)."""

    owner: str
    param: str
    position: int | None

    def to_json(self) -> list:
        return [self.owner, self.param, self.position]


@dataclass
class Origins:
    """What ``origins`` found: ``values`` (expression, the node it is evaluated at), ``entries``
    (parameters other modules may fill), ``unknown`` (some way in cannot be followed: an
    unpacking, a loop variable, a parameter nobody in the file passes)."""

    values: list[tuple[cst.BaseExpression, cst.CSTNode]] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    unknown: bool = False

    def calls(self) -> list[cst.Call]:
        """The values that are calls (constructions), each once."""
        out: list[cst.Call] = []
        for value, _ in self.values:
            if isinstance(value, cst.Call) and value not in out:
                out.append(value)
        return out


@dataclass(frozen=True)
class Destination:
    """Where an argument goes in a same-file callee: ``function`` binds it to ``param``; for a
    constructor, ``cls`` keeps it as ``self.<attr>`` for each of ``attrs``."""

    function: cst.FunctionDef = field(repr=False)
    param: str
    cls: ClassInfo | None = field(default=None, repr=False)
    attrs: tuple[str, ...] = ()


# -- what a class keeps ---------------------------------------------------------------------

def _params(function: cst.FunctionDef) -> list[cst.Param]:
    return [*function.params.posonly_params, *function.params.params]


def unwrapped(model: SemanticModel, value: cst.BaseExpression) -> cst.BaseExpression:
    """``model`` of ``model.to(device)``, ``DDP(model, ...)``, ``torch.compile(model)``."""
    for _ in range(_MAX_DEPTH):
        value = strip_self_returning(value)
        if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None \
                and (model.qualified_name(value.func) or "").rsplit(".", 1)[-1] in _WRAPPERS:
            value = value.args[0].value
            continue
        return value
    return value


def _kept(model: SemanticModel, init: cst.FunctionDef) -> dict[str, list[str]]:
    """``__init__``'s parameters -> the ``self.`` attributes its own body stores them in."""
    scope = model.scopes.get(init)
    me = scope.self_name if scope is not None else None
    if me is None:
        return {}
    names = {p.name.value for p in [*_params(init), *init.params.kwonly_params]} - {me}
    out: dict[str, list[str]] = {}
    for key, bindings in scope.bindings.items():
        head, dot, attr = key.partition(".")
        if head != me or not dot or "." in attr or "[" in attr:
            continue
        for b in bindings:
            if b.kind not in ("assign", "ann") or b.value is None:
                continue
            value = unwrapped(model, b.value)
            if isinstance(value, cst.Name) and value.value in names \
                    and all(r.kind == "param" for r in model.reaching(value.value, b.node)):
                found = out.setdefault(value.value, [])
                if attr not in found:
                    found.append(attr)
    return out


def received(semantic) -> dict[str, dict[str, list[str]]]:
    """Per class of the file (by its name in the file, ``Outer.Inner``), the ``__init__``
    parameters it keeps on ``self``, each with the attributes it is kept as; classes that
    keep none are left out. A class without an ``__init__`` of its own uses its same-file
    base's."""
    model = semantic.model
    out = {}
    for info in model.classes.values():
        init = model.method(info, "__init__")
        if init is not None:
            kept = _kept(model, init)
            if kept:
                out[info.qualname] = kept
    return out


# -- where a value comes from ---------------------------------------------------------------

def _owner(model: SemanticModel, function: cst.FunctionDef) -> str | None:
    """The entry owner of a function other modules can call with arguments they choose: a
    module-level function (its name), or the ``__init__`` of a module-level class (the class)."""
    scope = model.scopes.get(function)
    if scope is None or scope.parent is None:
        return None
    if scope.parent.kind == MODULE:
        return function.name.value
    if scope.parent.kind == CLASS and function.name.value == "__init__" and scope.method_kind == "method" \
            and scope.parent.parent is not None and scope.parent.parent.kind == MODULE and scope.cls is not None:
        return scope.cls.name
    return None


def _skips_first(model: SemanticModel, function: cst.FunctionDef) -> bool:
    """A call of ``function`` does not write its first parameter (``self``, ``cls``)."""
    scope = model.scopes.get(function)
    return scope is not None and scope.method_kind in ("method", "classmethod")


def _entry(model: SemanticModel, function: cst.FunctionDef, param: cst.Param) -> Entry | None:
    owner = _owner(model, function)
    if owner is None:
        return None
    positional = _params(function)[1 if _skips_first(model, function) else 0:]
    position = next((i for i, p in enumerate(positional) if p is param), None)
    if position is None and param not in function.params.kwonly_params:
        return None  # ``self``, ``*args``, ``**kwargs``
    return Entry(owner, param.name.value, position)


def exposed(semantic) -> list[tuple[Entry, cst.FunctionDef]]:
    """Every parameter of the file another module can fill (see ``Entry``), with its function:
    the parameters of module-level functions and of module-level classes' ``__init__``."""
    model = semantic.model
    out = []
    for scope in model.functions():
        function = scope.node
        if not isinstance(function, cst.FunctionDef) or _owner(model, function) is None:
            continue
        for param in [*_params(function), *function.params.kwonly_params]:
            entry = _entry(model, function, param)
            if entry is not None:
                out.append((entry, function))
    return out


def _constructed(model: SemanticModel, site) -> ClassInfo | None:
    """The same-file class ``site`` constructs (``C(...)``), if any."""
    func = site.node.func
    if isinstance(func, cst.Name):
        for b in model.lookup(func.value, site.scope, site.node):
            if b.kind == "class" and b.node in model.classes:
                return model.classes[b.node]
    return None


def _runs_constructor(model: SemanticModel, site, function: cst.FunctionDef) -> bool | None:
    """For a call ``site`` that may run ``__init__`` ``function``: True when it is ``C(...)`` of a
    class whose ``__init__`` that is, False for a bound call (``super().__init__(...)``), None
    when it runs another class's constructor (a subclass with an ``__init__`` of its own)."""
    info = _constructed(model, site)
    if info is None:
        return False
    return True if model.method(info, "__init__") is function else None


def argument_for(model: SemanticModel, site, function: cst.FunctionDef, param: str):
    """The expression the call ``site`` binds to ``function``'s parameter ``param`` (by keyword,
    by position: a method called on an object or a class's ``C(...)`` does not write ``self``),
    None when the call does not pass it, ``...`` when that cannot be told (``*args`` first, a
    constructor of another class, a method called unbound)."""
    positional = _params(function)
    if _skips_first(model, function):
        constructing = _runs_constructor(model, site, function) if function.name.value == "__init__" else None
        if constructing is None and function.name.value == "__init__":
            return ...
        if not isinstance(site.node.func, cst.Attribute) and not constructing:
            return ...
        positional = positional[1:]
    return bound_argument(site.node, [p.name.value for p in positional], param)


def origins(semantic, value: str | cst.BaseExpression, at: cst.CSTNode) -> Origins:
    """What the key (``"sched"``, ``"self.scheduler"``) or expression ``value`` may hold at
    ``at`` (see the module docstring). ``None`` is no value; ``x if c else y`` may be either."""
    out = Origins()
    walk = _Walk(semantic, out)
    if isinstance(value, str):
        walk.key(value, at, 0)
    else:
        walk.value(value, at, 0)
    return out


class _Walk:
    def __init__(self, semantic, out: Origins):
        self.semantic, self.model, self.out = semantic, semantic.model, out
        self.seen: set = set()

    def key(self, key: str, at: cst.CSTNode, depth: int) -> None:
        if (key, at) in self.seen:
            return
        self.seen.add((key, at))
        if depth > _MAX_DEPTH:
            self.out.unknown = True
            return
        model = self.model
        scope = model.scope_of(at)
        head, dot, attr = key.partition(".")
        if dot and head == scope.self_name and scope.cls is not None and "." not in attr:
            found = False
            for b in self._stores(scope.cls, attr):
                found = True
                self.binding(b, depth)
            if not found:
                self.out.unknown = True
            return
        bindings = model.reaching(key, at)
        if not bindings:
            self.out.unknown = True
        for b in bindings:
            self.binding(b, depth)

    def _stores(self, info: ClassInfo, attr: str) -> Iterator:
        """Every ``self.<attr> = ...`` in the methods of the class and its same-file bases."""
        classes = set(map(id, self.model.mro(info)))
        for scope in self.model.scopes.values():
            if scope.cls is None or id(scope.cls) not in classes or scope.self_name is None or scope.kind == CLASS:
                continue
            yield from scope.bindings.get(f"{scope.self_name}.{attr}", ())

    def binding(self, b, depth: int) -> None:
        if b.kind in ("assign", "ann", "walrus") and b.value is not None:
            self.value(b.value, b.node, depth + 1)
        elif b.kind == "param" and isinstance(b.scope.node, cst.FunctionDef):
            self.parameter(b.scope.node, b.node, depth + 1)
        else:
            self.out.unknown = True

    def value(self, value: cst.BaseExpression, at: cst.CSTNode, depth: int) -> None:
        if isinstance(value, cst.IfExp):
            self.value(value.body, at, depth)
            self.value(value.orelse, at, depth)
            return
        if isinstance(value, cst.Name) and value.value == "None":
            return
        value = unwrapped(self.model, value)  # the object itself: ``model.to(device)``, ``DDP(model)``
        if isinstance(value, (cst.Name, cst.Attribute)):
            key = expr_key(value)
            if key is not None and not self.model.is_imported(value):
                self.key(key, at, depth)
                return
        self.out.values.append((value, at))

    def parameter(self, function: cst.FunctionDef, param: cst.Param, depth: int) -> None:
        model, name = self.model, param.name.value
        entry = _entry(model, function, param)
        if entry is not None and entry not in self.out.entries:
            self.out.entries.append(entry)
        callers = self.semantic.graph.callers(function)
        for site in callers:
            arg = argument_for(model, site, function, name)
            if arg is ...:
                self.out.unknown = True
            elif arg is None:
                if param.default is not None:
                    self.value(param.default, function, depth)
            else:
                self.value(arg, site.node, depth)
        if not callers and entry is None:
            self.out.unknown = True


# -- where a value goes -----------------------------------------------------------------

def handed_to(semantic, site, arg: cst.Arg) -> list[Destination]:
    """Where the argument ``arg`` of the call ``site`` goes in the same-file functions the call
    may run: the parameter it binds, and for a class's ``C(...)`` the attributes ``__init__``
    keeps it as. Nothing for a callee outside the file or an argument after ``*args``.
    ``semantic`` may be the training model too (what is asked: ``model`` and ``graph``)."""
    model = semantic.model
    out = []
    for target in semantic.graph.targets(site):
        if not isinstance(target, cst.FunctionDef):
            continue
        names = [p.name.value for p in [*_params(target), *target.params.kwonly_params]]
        param = next((n for n in names if argument_for(model, site, target, n) is arg.value), None)
        if param is None:
            continue
        scope = model.scopes.get(target)
        if target.name.value == "__init__" and scope is not None and scope.cls is not None:
            info = _constructed(model, site) or scope.cls
            out.append(Destination(target, param, info, tuple(_kept(model, target).get(param, ()))))
        else:
            out.append(Destination(target, param))
    return out


def bound_key(ctx, value: cst.BaseExpression, *, self_returning: bool = False,
              branches: bool = False, chained: bool = False) -> str | None:
    """``x`` / ``self.x`` of ``x = value`` (one target; an annotated assignment too), else None.
    With ``self_returning``, through the calls that hand back their receiver (``x =
    Net().to(device)``, ``.cuda()``: ``torch_api.SELF_RETURNING``); with ``chained``, through
    any attribute read of the value or call of it (``x = Net().eval().to(dev)``); with
    ``branches``, from a branch of a conditional expression (``x = value if c else None``)."""
    node, up = value, ctx.parent(value)
    while True:
        if branches and isinstance(up, cst.IfExp) and up.test is not node:
            node = up
        elif chained and (isinstance(up, cst.Attribute) and up.value is node
                          or isinstance(up, cst.Call) and up.func is node):
            node = up
        elif self_returning and isinstance(up, cst.Attribute) and up.value is node \
                and up.attr.value in SELF_RETURNING and isinstance(call := ctx.parent(up), cst.Call) \
                and call.func is up:
            node = call
        else:
            break
        up = ctx.parent(node)
    if isinstance(up, cst.Assign) and len(up.targets) == 1 and up.value is node:
        return expr_key(up.targets[0].target)
    if isinstance(up, cst.AnnAssign) and up.value is node:
        return expr_key(up.target)
    return None


def kept_as(semantic, key: str, at: cst.CSTNode) -> list[str]:
    """``key`` and the keys its value is kept as once its function returns it: the function
    ``return loader`` (or ``return sampler, loader``, an element of a returned tuple) is called
    in the file as ``self._loader = self._setup_data(...)`` (or ``self._sampler, self._loader =
    ...``, the same element of the target): ``self._loader``; followed through the callers' own
    returns. Only plain assignments of the whole call are followed (the caller's key)."""
    model = semantic.model
    out = [key]
    todo = [(key, at, 0)]
    while todo:
        current, node, depth = todo.pop()
        if depth >= _MAX_DEPTH or "." in current:
            continue
        scope = model.scope_of(node)
        function = scope.node if scope is not None else None
        if not isinstance(function, cst.FunctionDef):
            continue
        positions = set()
        for ret in model.scopes[function].returns:
            value = ret.value
            if isinstance(value, cst.Tuple):
                positions |= {i for i, e in enumerate(value.elements)
                              if not isinstance(e, cst.StarredElement) and expr_key(e.value) == current}
            elif value is not None and expr_key(value) == current:
                positions.add(None)
        for site in semantic.graph.callers(function) if positions else ():
            statement = model.ctx.parent(site.node)
            if not isinstance(statement, (cst.Assign, cst.AnnAssign)) or statement.value is not site.node:
                continue
            targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
            for target in targets:
                for position in positions:
                    if position is None:
                        found = expr_key(target)
                    elif isinstance(target, (cst.Tuple, cst.List)) and position < len(target.elements) \
                            and not any(isinstance(e, cst.StarredElement) for e in target.elements):
                        found = expr_key(target.elements[position].value)
                    else:
                        found = None
                    if found is not None and found not in out:
                        out.append(found)
                        todo.append((found, site.node, depth + 1))
    return out


# -- across modules -------------------------------------------------------------------------

def passes(semantic, describe: Callable[[Any, cst.BaseExpression, cst.CSTNode], Any]) -> list[list]:
    """``[callee, slot, description]`` for each argument of a call of an imported callable
    (``Trainer(...)`` after ``from trainer import Trainer``; ``engine.train(...)``) that
    ``describe(semantic, expression, call)`` describes (not None: JSON). ``callee`` is the
    imported name qualified (``trainer.Trainer``), ``slot`` the argument's position among the
    positional ones, or its keyword. Arguments after a ``*args``/``**kwargs`` are left out."""
    model = semantic.model
    out = []
    for site in model.calls:
        func = site.node.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or not model.is_imported(func):
            continue
        callee = model.qualified_name(func)
        if callee is None:
            continue
        for i, arg in enumerate(site.node.args):
            if arg.star:
                break
            description = describe(semantic, arg.value, site.node)
            if description is not None:
                out.append([callee, arg.keyword.value if arg.keyword is not None else i, description])
    return out


def matches(entry, slot) -> bool:
    """A pass's ``slot`` (a position or a keyword) binds ``entry`` (an ``Entry`` or its JSON)."""
    _, param, position = entry
    return slot == param if isinstance(slot, str) else position is not None and slot == position


class ArgumentFlow:
    """What the project's modules pass into the entries of one another (see the module
    docstring). ``passes_of(record)`` gives a caller's ``passes`` (None: nothing known)."""

    def __init__(self, project, passes_of: Callable[[Any], list | None]):
        self.project, self.passes_of = project, passes_of
        self._passes: dict[str, list] = {}

    def callers(self, record) -> list:
        """The other records whose imports name ``record``'s module or something it defines,
        resolved from each importer (the nearest module of that name wins)."""
        return self.project.importers(record, star=True)

    def _passes_of(self, record) -> list:
        found = self._passes.get(record.path)
        if found is None:
            found = self._passes[record.path] = list(self.passes_of(record) or ())
        return found

    def arrivals(self, record, entry) -> list[tuple[Any, Any]]:
        """``(caller record, description)`` for everything another module passes into
        ``entry`` (an ``Entry`` or its JSON) of ``record``."""
        owner = entry[0]
        out = []
        for caller in self.callers(record):
            for callee, slot, description in self._passes_of(caller):
                if not matches(entry, slot):
                    continue
                hit = self.project.resolve_symbol(callee, caller)
                if hit is not None and hit[0] is record and hit[1] == owner:
                    out.append((caller, description))
        return out
