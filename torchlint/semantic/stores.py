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
from torchlint.semantic.model import Binding, CallSite, Scope
from torchlint.semantic.training import DATA
from torchlint.torch_api import expr_key
from torchlint.tree import iter_nodes, unpack_targets

# Methods that store a value, by the position of the value among their positional arguments.
STORE_METHODS = {"append": 0, "extend": 0, "appendleft": 0, "insert": 1}
# Calls that shrink or empty a container: it does not grow without bound.
BOUNDING_METHODS = {"clear", "pop", "popleft", "popitem", "remove"}

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
        for loop in self.ctx.enclosing_loops(node):
            if DATA in training.loop_kinds(loops[loop]) or any(s.loops and s.loops[-1].node is loop for s in steps):
                return loop
            if any(s.loops and s.loops[-1].node is loop for s in backwards) and not self._steps_after(steps, loop):
                return loop
        return None

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
