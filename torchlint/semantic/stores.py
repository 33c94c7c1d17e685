"""Where a value is kept beyond its iteration: appends, running sums, attributes, containers
and what bounds them.

* ``Store``: one statement that keeps a value in something that may outlive it:
  ``C.append(v)`` / ``extend`` / ``appendleft`` / ``insert`` (``store_of_call``), ``C += v``
  (``store_of_augassign``), ``C = C + v`` (``store_of_assign``); each pure, from the node
  alone (a rule's walk collects them).
* ``root_chain(expr)``: the keys of a container and of everything it hangs from
  (``self.hist["a"]``, ``self.hist``, ``self``).
* ``StoreCode``: the shared ``autograd.Code`` of one function (or the module body, or a class
  body) with the stores that run in it, what shrinks its containers (``clear``, ``pop``, ...,
  ``del``) and, once asked, its optimizer steps; ``codes_with_stores(ctx, stores, dels)``
  builds them (only codes with a store; code in lambdas is left out).
* ``KeptStores(ctx, graphs)``: per file, for one store of a ``StoreCode``:
  ``iteration(code, node)`` (the innermost loop around it whose iterations are steps: a data
  loop, one whose body steps this code's optimizer, or backward-s unless every step of this
  code comes after it), ``lifetime(code, store, loop)`` (``"run"``: past the iteration, or
  past the call of a once-per-batch function; ``"window"``: until a reset that runs on some
  iterations only; None: one iteration), ``bounded()`` (keys assigned a
  ``deque(maxlen=...)``), ``steps(code)`` / ``trains_itself(code)``, and whether what the
  store builds (the container, the total) is backward-ed later (``backwarded``) or returned
  (``returned``), and whether the code backward-s only on some paths to the store
  (``backward_skipped``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchlint.semantic.autograd import Code, GraphValues, code_owner, root_name
from torchlint.semantic.dataflow import Flow, gradient_target
from torchlint.semantic.model import Binding, CallSite, ClassInfo, Scope, SemanticModel
from torchlint.semantic.training import DATA, EPOCH
from torchlint.torch_api import expr_key, is_detached
from torchlint.tree import children, iter_nodes, unpack_targets

# Methods that store a value, by the position of the value among their positional arguments.
STORE_METHODS = {"append": 0, "extend": 0, "appendleft": 0, "insert": 1}
# Calls that shrink or empty a container: it does not grow without bound.
BOUNDING_METHODS = {"clear", "pop", "popleft", "popitem", "remove", "reset"}

RUN, WINDOW = "run", "window"


@dataclass(eq=False)
class Store:
    """One statement keeping ``value`` in ``container`` (whose key is ``key``)."""

    kind: str  # "call" | "aug" | "add"
    node: cst.CSTNode  # the Call / AugAssign / Assign
    container: cst.BaseExpression
    key: str
    value: cst.BaseExpression
    verb: str = ""  # the method of a "call" store
    through: str = ""  # an accumulator's method that keeps the value (``AverageMeter.update``)


def store_of_assign(node: cst.Assign) -> Store | None:
    """``total = total + v`` (or ``total = v + total``): a running sum."""
    value = node.value
    if len(node.targets) != 1 or not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
        return None
    target = node.targets[0].target
    key = expr_key(target)
    if key is None:
        return None
    if expr_key(value.left) == key:
        return Store("add", node, target, key, value.right)
    if expr_key(value.right) == key:
        return Store("add", node, target, key, value.left)
    return None


def store_of_augassign(node: cst.AugAssign) -> Store | None:
    """``C += v``."""
    if isinstance(node.operator, cst.AddAssign):
        key = expr_key(node.target) or root_name(node.target)
        if key is not None:
            return Store("aug", node, node.target, key, node.value)
    return None


def store_of_call(node: cst.Call) -> Store | None:
    """``C.append(v)``, ``C.extend(vs)``, ``C.appendleft(v)``, ``C.insert(i, v)``."""
    func = node.func
    if type(func) is cst.Attribute and func.attr.value in STORE_METHODS:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        key = expr_key(func.value)
        if len(positional) == STORE_METHODS[func.attr.value] + 1 and key is not None:
            return Store("call", node, func.value, key, positional[-1].value, func.attr.value)
    return None


def root_chain(expr: cst.BaseExpression) -> list[str]:
    """Keys of ``expr`` and of every container it hangs from: ``self.hist["a"]`` gives
    ``['self.hist["a"]', 'self.hist', 'self']`` (simple keys only)."""
    out = []
    node = expr
    while True:
        key = expr_key(node)
        if key is not None:
            out.append(key)
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            break
    return out


@dataclass(eq=False)
class StoreCode(Code):
    """One function (or the module body, or a class body): the shared ``Code`` (scope,
    backward-like calls), the stores that run in it, and what shrinks its containers."""

    stores: list[Store] = field(default_factory=list)
    bounding: list[tuple[str, cst.CSTNode]] = field(default_factory=list)  # (container key, node)
    steps: list[CallSite] | None = None  # its optimizer steps (from the training model, when asked)


def codes_with_stores(ctx, stores: list[Store], dels: list[cst.Del]) -> list[StoreCode]:
    """Stores, backward-like calls and shrinking calls (``dels``: the file's ``del``
    statements), by the code they run in (the enclosing function, module or class body; code
    in lambdas is left out): the codes with a store."""
    model = ctx.semantic.model
    codes: dict[Scope, StoreCode] = {}

    def add(scope: Scope, kind: str, items) -> None:
        owner = code_owner(scope)
        if owner is not None:
            code = codes.get(owner)
            if code is None:
                code = codes[owner] = StoreCode(owner)
            getattr(code, kind).extend(items)

    for site in model.calls:
        call, func = site.node, site.node.func
        target = gradient_target(ctx, call)
        if target is not None:
            add(site.scope, "backwards", [(target, site)])
        elif isinstance(func, cst.Attribute) and func.attr.value in BOUNDING_METHODS:
            add(site.scope, "bounding", [(k, call) for k in root_chain(func.value)])
    for store in stores:
        add(model.scope_of(store.node), "stores", [store])
    for node in dels:
        for el in unpack_targets(node.target):
            add(model.scope_of(node), "bounding", [(k, node) for k in root_chain(el)])
    return [c for c in codes.values() if c.stores]


class KeptStores:
    """One file's queries about how long what a store keeps lives (build one per rule run;
    memoised). ``graphs``: the ``GraphValues`` the caller asks too (one is built if none)."""

    def __init__(self, ctx, graphs: GraphValues | None = None):
        self.ctx = ctx
        self.model = ctx.semantic.model
        self.graphs = graphs if graphs is not None else GraphValues(ctx)
        self._flow: Flow | None = None
        self._deques: set[str] | None = None

    @property
    def flow(self) -> Flow:
        if self._flow is None:
            self._flow = Flow(self.ctx, self.model)
        return self._flow

    # -- the code's own training ----------------------------------------------------------
    def steps(self, code: StoreCode) -> list[CallSite]:
        """This code's optimizer steps (``training.sites.step`` run in it)."""
        if code.steps is None:
            code.steps = [s for s, _ in self.ctx.semantic.training.sites.step if code_owner(s.scope) is code.scope]
        return code.steps

    def trains_itself(self, code: StoreCode) -> bool:
        """Does a backward or an optimizer step of its own."""
        return bool(code.backwards or self.steps(code))

    # -- where the store's iteration is -------------------------------------------------
    def iteration(self, code: StoreCode, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost loop around ``node`` (in its function) whose iterations are steps:
        a data loop, or one whose own body does this code's optimizer step, or its backward
        unless every optimizer step of this code comes after the loop: that loop's iterations
        are the micro-batches of one step (``for _ in range(accumulate_every): ...
        loss.backward()`` then ``optimizer.step()``), and what it keeps lives as long as the
        code around it does."""
        loops, training = self.model.loops, self.ctx.semantic.training
        steps = self.steps(code)
        backwards = [s for _, s in code.backwards]
        enclosing = self.ctx.enclosing_loops(node)
        for loop in enclosing:
            if DATA in training.loop_kinds(loops[loop]) or any(s.loops and s.loops[-1].node is loop for s in steps):
                return loop
            if any(s.loops and s.loops[-1].node is loop for s in backwards) and not self._steps_after(steps, loop):
                return loop
        return next((loop for loop in enclosing if self.per_epoch(loop)), None)

    def per_epoch(self, loop: cst.CSTNode) -> bool:
        """``loop`` runs epochs: a loop around a data loop, or ``for epoch in range(...)``
        (``training.loop_kinds``), that is not a data loop itself. What a store there keeps
        grows once per epoch; only what still holds its forward's activations (never
        backward-ed) makes that grow much."""
        kinds = self.ctx.semantic.training.loop_kinds(self.model.loops[loop])
        return EPOCH in kinds and DATA not in kinds

    def _steps_after(self, steps: list[CallSite], loop: cst.CSTNode) -> bool:
        """This code steps an optimizer, and only after ``loop``, outside it."""
        order = self.model.order
        return bool(steps) and all(not self.ctx.inside(s.node, loop) and s.order > order[loop] for s in steps)

    # -- whether the container outlives it ----------------------------------------------
    def lifetime(self, code: StoreCode, store: Store, loop: cst.CSTNode | None) -> str | None:
        """How long what is stored lives, judged in ``loop`` (None: the store runs once per
        call of a once-per-batch function): ``RUN`` (past the iteration or call), ``WINDOW``
        (until a reset that runs on some iterations only: every N steps), None (one
        iteration: rebound, cleared or shrunk on every iteration, a ``deque(maxlen=...)``, or,
        in a function, a local or a parameter)."""
        if store.key in self.bounded() or loop is None and not self._outlives_call(code, store):
            return None
        resets = [] if loop is None else self._resets_in(code, store, loop)
        if not resets:
            return RUN
        return WINDOW if all(self._conditional(node, loop) for node in resets) else None

    def _conditional(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Under an ``if`` inside ``loop``: runs on some iterations only."""
        for anc in self.ctx.ancestors(node):
            if anc is loop:
                return False
            if isinstance(anc, cst.If):
                return True
        return False

    def _reassigned(self, code: StoreCode, store: Store, key: str) -> list[Binding]:
        """Bindings of ``key`` other than the store itself (and ``+=`` on the stored key)."""
        return [b for b in self.graphs.bindings(code, key)
                if b.node is not store.node and not (b.kind == "aug" and key == store.key)]

    def _resets_in(self, code: StoreCode, store: Store, loop: cst.CSTNode) -> list[cst.CSTNode]:
        """Where the container is (re)assigned, cleared or shrunk inside ``loop``."""
        chain = root_chain(store.container)
        found = [b.node for key in chain for b in self._reassigned(code, store, key) if self.ctx.inside(b.node, loop)]
        return found + [node for key, node in code.bounding if key in chain and self.ctx.inside(node, loop)]

    def _outlives_call(self, code: StoreCode, store: Store) -> bool:
        """In a per-step function: a ``self`` attribute or a global, not reset in the function."""
        root = root_name(store.container)
        if root is None:
            return False
        is_self = root == code.scope.self_name and root != store.key
        if not is_self and code.scope.bindings.get(root):
            return False  # a parameter or a local
        chain = root_chain(store.container)
        if any(self._reassigned(code, store, key) for key in chain if not (is_self and key == root)):
            return False
        return not any(key in chain for key, _ in code.bounding)

    def bounded(self) -> set[str]:
        """Keys assigned a ``deque(maxlen=...)`` anywhere in the file."""
        if self._deques is None:
            self._deques = {key for scope in self.model.scopes.values() for key, bindings in scope.bindings.items()
                            for b in bindings if b.kind == "assign" and isinstance(b.value, cst.Call)
                            and (expr_key(b.value.func) or "").rsplit(".", 1)[-1] == "deque"
                            and any(a.keyword is not None and a.keyword.value == "maxlen" for a in b.value.args)}
        return self._deques

    # -- what the store builds ----------------------------------------------------------
    def backwarded(self, code: StoreCode, store: Store) -> bool:
        """Is what the store builds (the container, the total) backward-ed later in this code?"""
        return self.flow.reaches(store.value, {target for target, _ in code.backwards})

    def returned(self, code: StoreCode, store: Store) -> bool:
        """Does what the store builds (the container, the total) reach a ``return`` of this code?"""
        returns = {node.value for node in iter_nodes(code.scope.node, into_scopes=False)
                   if isinstance(node, cst.Return) and node.value is not None}
        return bool(returns) and self.flow.reaches(store.value, returns)

    def backward_skipped(self, code: StoreCode, store: Store) -> bool:
        """Does this code backward something only on some of the paths that reach the store
        (under an ``if`` that does not hold the store)?"""
        for _, site in code.backwards:
            for anc in self.ctx.ancestors(site.node):
                if anc is code.scope.node or self.ctx.inside(store.node, anc):
                    break
                if isinstance(anc, cst.If):
                    return True
        return False


# -- accumulators: methods that keep what they are given ------------------------------------

@dataclass(frozen=True)
class Accumulates:
    """A method keeps its parameter ``param`` (``index``: its position after ``self``; -1
    keyword-only) in ``attr`` (``self.sum``), past the call."""

    param: str
    index: int
    attr: str

    def to_json(self) -> list:
        return [self.param, self.index, self.attr]

    @classmethod
    def from_json(cls, data: list) -> "Accumulates":
        return cls(str(data[0]), int(data[1]), str(data[2]))


def accumulators(ctx) -> dict[ClassInfo, dict[str, list[Accumulates]]]:
    """The file's plain classes (no ``nn.Module``, no bases but ``object``) whose methods keep
    a parameter in an attribute of ``self``: ``self.sum += val * n``, ``self.sum = self.sum +
    val``, ``self.values.append(val)`` (also ``self.d[k] += val``), where the stored value
    reads the parameter as it was passed (not rebound before, not through ``.item()``,
    ``.detach()``, ``float()``) and the method does not also rebind the attribute. Memoised
    on the model."""
    model = ctx.semantic.model
    memo = model.memo("stores.accumulators")
    if "found" in memo:
        return memo["found"]
    found: dict[ClassInfo, dict[str, list[Accumulates]]] = {}
    for info in model.classes.values():
        if any(b not in ("object",) for b in info.bases):
            continue  # a subclass (a Module, a Metric, ...): its base's state is not this one's
        for name, method in info.methods.items():
            kept = _accumulated_params(ctx, model, method)
            if kept:
                found.setdefault(info, {})[name] = kept
    memo["found"] = found
    return found


def _accumulated_params(ctx, model: SemanticModel, method: cst.FunctionDef) -> list[Accumulates]:
    scope = model.scopes.get(method)
    me = scope.self_name if scope is not None else None
    if me is None or scope.method_kind != "method" or method.name.value.startswith("__"):
        return []
    positional = [p.name.value for p in [*method.params.posonly_params, *method.params.params]][1:]
    params = positional + [p.name.value for p in method.params.kwonly_params]
    if not params:
        return []
    out: list[Accumulates] = []
    assigned: dict[str, list[cst.CSTNode]] = {}
    stores: list[Store] = []
    for node in iter_nodes(method.body, into_scopes=False):
        store = store_of_augassign(node) if isinstance(node, cst.AugAssign) else \
            store_of_assign(node) if isinstance(node, cst.Assign) else \
            store_of_call(node) if isinstance(node, cst.Call) else None
        if store is not None and root_name(store.container) == me and store.key != me:
            stores.append(store)
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for leaf in unpack_targets(t.target):
                    key = expr_key(leaf)
                    if key is not None:
                        assigned.setdefault(key, []).append(node)
    for store in stores:
        attr = root_chain(store.container)[-2] if len(root_chain(store.container)) > 1 else store.key
        if any(node is not store.node for node in assigned.get(attr, ())):
            continue  # rebound in the method too: it keeps the last value, not a history
        for param in _params_read(ctx, model, store.value, params):
            index = positional.index(param) if param in positional else -1
            keep = Accumulates(param, index, attr)
            if keep not in out:
                out.append(keep)
    return out


def _params_read(ctx, model: SemanticModel, value: cst.BaseExpression, params: list[str]) -> list[str]:
    """The parameters ``value`` reads as they were passed (not under a detaching call)."""
    if is_detached(ctx, value):
        return []
    found = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and is_detached(ctx, node):
            continue
        if isinstance(node, cst.Name):
            if node.value in params and node.value not in found:
                bindings = model.reaching(node.value, node)
                if bindings and all(b.kind == "param" for b in bindings):
                    found.append(node.value)
            continue
        if isinstance(node, cst.Attribute):
            if node.attr.value not in ("data", "shape", "dtype", "device"):
                stack.append(node.value)  # ``val.sum``, not the attribute's name
            continue
        stack.extend(children(node))
    return found


def receiver_classes(model: SemanticModel, expr: cst.BaseExpression, depth: int = 0,
                     star: tuple[str, ...] = ()) -> tuple[list[ClassInfo], list[str]]:
    """The classes ``expr`` may be an instance of, as (same-file ``ClassInfo``s, qualified
    names of imported classes): a name or ``self`` attribute every binding of which is a
    construction (``meter = AverageMeter()``), an element of a container whose every value
    is one (``self.meters["loss"]`` of ``{"loss": AverageMeter()}``, a dict comprehension,
    ``defaultdict(AverageMeter)``). A capitalised name bound nowhere in the file may come
    from a ``from utils import *`` (``star``: those modules): each ``<module>.<Name>``, for
    the project pass to resolve. Anything else (a parameter, a call's result) gives nothing."""
    if depth > 3:
        return [], []
    if isinstance(expr, cst.Subscript):
        values = _bound_values(model, expr.value)
        if not values:
            return [], []
        local, imported = [], []
        for value in values:
            classes = _element_classes(model, value, star)
            if classes is None:
                return [], []
            local += classes[0]
            imported += classes[1]
        return local, imported
    values = _bound_values(model, expr)
    local, imported = [], []
    for value in values:
        built = _constructed(model, value, star)
        if built is None:
            return [], []
        local += built[0]
        imported += built[1]
    return local, imported


def _bound_values(model: SemanticModel, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values every binding of a name (reaching ``expr``) or of ``self.<attr>`` (in the
    class's methods) assigns; empty when one of them is not a plain assignment."""
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, expr)
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        scope = model.scope_of(expr)
        info = scope.cls
        if info is None or expr.value.value != scope.self_name:
            return []
        key = f"{expr.value.value}.{expr.attr.value}"
        bindings = [b for m in info.methods.values() if model.scopes.get(m) is not None
                    for b in model.scopes[m].bindings.get(f"{model.scopes[m].self_name}.{expr.attr.value}", ())]
        if not bindings:
            bindings = model.reaching(key, expr)
    else:
        return []
    values = [b.value if b.kind in ("assign", "ann") else _unpacked_value(b) for b in bindings]
    if not values or any(v is None for v in values):
        return []
    return values


def _unpacked_value(binding: Binding) -> cst.BaseExpression | None:
    """The element of a tuple display that ``a, b = A(), B()`` binds to the binding's name."""
    node = binding.node
    if binding.kind != "unpack" or not isinstance(node, cst.Assign) or not isinstance(node.value, (cst.Tuple, cst.List)):
        return None
    for t in node.targets:
        if isinstance(t.target, (cst.Tuple, cst.List)) and len(t.target.elements) == len(node.value.elements):
            for target, element in zip(t.target.elements, node.value.elements):
                if expr_key(target.value) == binding.key and isinstance(element, cst.Element):
                    return element.value
    return None


def _constructed(model: SemanticModel, value: cst.BaseExpression,
                 star: tuple[str, ...] = ()) -> tuple[list[ClassInfo], list[str]] | None:
    """``C(...)``: ([C], []) for a same-file class, ([], ["pkg.C"]) for an imported name (or
    one a ``from pkg import *`` of ``star`` may bind)."""
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Name):
        bindings = model.reaching(func.value, value)
        classes = [model.classes[b.node] for b in bindings if b.kind == "class" and b.node in model.classes]
        if classes and len(classes) == len(bindings):
            return classes, []
        if not bindings and star and func.value[:1].isupper() and not model.is_imported(func):
            return [], [f"{module}.{func.value}" for module in star]
    if model.is_imported(func):
        name = model.qualified_name(func)
        if name is not None and name.rsplit(".", 1)[-1][:1].isupper():
            return [], [name]
    return None


def _element_classes(model: SemanticModel, value: cst.BaseExpression,
                     star: tuple[str, ...] = ()) -> tuple[list[ClassInfo], list[str]] | None:
    """The classes of a container's values: a dict display or comprehension of constructions,
    ``defaultdict(C)``."""
    if isinstance(value, cst.Dict):
        items = [el.value for el in value.elements if isinstance(el, cst.DictElement)]
        if not items or len(items) != len(value.elements):
            return None
    elif isinstance(value, cst.DictComp):
        items = [value.value]
    elif isinstance(value, cst.Call) and (model.qualified_name(value.func) or "").rsplit(".", 1)[-1] == "defaultdict" \
            and len(value.args) == 1 and not value.args[0].keyword:
        factory = value.args[0].value
        if isinstance(factory, cst.Name):
            bindings = model.reaching(factory.value, value)
            classes = [model.classes[b.node] for b in bindings if b.kind == "class" and b.node in model.classes]
            if classes and len(classes) == len(bindings):
                return classes, []
        if model.is_imported(factory):
            name = model.qualified_name(factory)
            return ([], [name]) if name is not None and name.rsplit(".", 1)[-1][:1].isupper() else None
        return None
    else:
        return None
    local, imported = [], []
    for item in items:
        built = _constructed(model, item, star)
        if built is None:
            return None
        local += built[0]
        imported += built[1]
    return local, imported


def store_of_accumulation(call: cst.Call, receiver: cst.BaseExpression, owner: str,
                          keeps: list[Accumulates]) -> list[Store]:
    """What ``call`` (``receiver.<method>(...)``, the method of class ``owner`` keeping
    ``keeps``) stores in ``receiver``: one ``Store`` per argument it passes for a kept
    parameter."""
    key = expr_key(receiver)
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if key is None or any(a.star for a in call.args):
        return []
    positional = [a for a in call.args if a.keyword is None]
    out = []
    for keep in keeps:
        arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == keep.param), None)
        if arg is None and 0 <= keep.index < len(positional):
            arg = positional[keep.index]
        if arg is not None:
            out.append(Store("call", call, receiver, key, arg.value, method, f"{owner}.{method}"))
    return out
