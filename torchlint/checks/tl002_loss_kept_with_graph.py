"""TL002 loss-kept-with-graph: a tensor that carries an autograd graph is stored, every
iteration, in something that outlives the iteration. In ``finish``:

* *stores*: ``C.append(v)`` / ``extend`` / ``insert``, ``C += v``, ``C = C + v``, by the code
  (function, module or class body) they run in;
* judged in their *iteration*: the innermost data loop around them (training model), or,
  with none, a function that runs once per batch (``training.once_per_batch``: backward and
  a step of its own, or called from a data loop; or named in ``step-methods``);
* the container outlives it: not rebound, cleared or popped in the loop (for a per-batch
  function: a ``self`` attribute or global, not reset there), not ``deque(maxlen=...)``; a
  reset on some iterations only (every N steps) still holds N graphs unless each value is
  backward-ed;
* the value carries a graph (``semantic.autograd``): a backward-ed name (plain numbers and parameters scaling a loss
  are not carriers), a loss, criterion or model call (also element by element through tuple
  unpacking), through arithmetic and graph-keeping methods; never through ``.item()``,
  ``.detach()``, ``float()``, ``.data``, a plain number (``semantic.dataflow``), or
  ``no_grad``;
* not reported: values whose container or total later reaches a backward (value flow),
  Lightning evaluation hooks, and model/criterion outputs in a function that does not train
  unless, in this file, it runs with autograd on (``semantic.gradmode``: called outside a
  grad-mode choice, or an evaluation routine switching a model to eval itself). Files of
  other frameworks are left alone, and test files unless ``skip-tests`` is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchlint import libraries
from torchlint.finding import Severity
from torchlint.fixes import SAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.autograd import GRAPH_METHODS, Code, GraphValues, code_owner, root_name
from torchlint.semantic.dataflow import Flow, gradient_target, is_plain_number
from torchlint.semantic.gradmode import GradModes
from torchlint.semantic.model import Binding, CallSite, Scope
from torchlint.semantic.training import DATA
from torchlint.torch_api import expr_key, is_detached, mode_switch
from torchlint.tree import iter_nodes, unpack_targets

_STORE_METHODS = {"append": 0, "extend": 0, "appendleft": 0, "insert": 1}
# Calls that shrink or empty a container: it does not grow without bound.
_BOUNDING_METHODS = {"clear", "pop", "popleft", "popitem", "remove"}
# Stored values that never carry a graph, whatever their names are bound to.
_GRAPH_FREE = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
               cst.Comparison, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
               cst.Lambda)
# Text one of which a file needs for any value in it to count as carrying a graph.
_EVIDENCE_TEXT = ("backward", "autograd", "scaler", "oss", "kl_div", "criteri", "model", "net", "Net", "Module",
                  "generator", "discriminator", "self(", "forward")


@dataclass(eq=False)
class _Store:
    kind: str  # "call" | "aug" | "add"
    node: cst.CSTNode  # the Call / AugAssign / Assign reported
    container: cst.BaseExpression
    key: str
    value: cst.BaseExpression
    verb: str = ""


@dataclass(eq=False)
class _Code(Code):
    """One function (or the module body, or a class body) as this rule sees it: the shared
    ``Code`` (scope, backward-like calls), the stores that run in it, and what shrinks its containers."""

    stores: list[_Store] = field(default_factory=list)
    bounding: list[tuple[str, cst.CSTNode]] = field(default_factory=list)  # (container key, node)
    steps: list[CallSite] | None = None  # its optimizer steps (from the training model, when asked)


def _root_chain(expr: cst.BaseExpression) -> list[str]:
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


class LossKeptWithGraph(Rule):
    code = "TL002"
    name = "loss-kept-with-graph"
    severity = Severity.WARNING
    default_enabled = True
    summary = "A loss or model output with its autograd graph is stored across iterations: memory grows every step"
    skips_test_files = True
    options = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py): a test keeps a few steps' losses to compare them, "
                                         "which costs nothing worth a finding"),
        "step-methods": Option(
            ["training_step", "train_step", "train_batch"],
            list,
            "methods and functions that run once per training batch with autograd on; what they store in "
            "`self` attributes or globals outlives the step",
            item_kind=str,
        ),
    }
    uses_semantic_model = True
    requires_text = ("+", "append", "extend", "insert")  # the commonest first: ``any`` stops there
    fixable = (SAFE,)


    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        # A store, and some evidence of a graph: a backward (also through a scaler or
        # autograd.grad), a loss, a criterion, or a model call.
        return any(t in text for t in cls.requires_text) and any(t in text for t in _EVIDENCE_TEXT)

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._step_methods = set(options.get("step-methods", ()))
        self._stores: list[_Store] = []
        self._dels: list[cst.Del] = []
        self._deques: set[str] | None = None

    # -- the walk: statements that store or shrink ---------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        # total = total + v
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
            return
        target = node.targets[0].target
        key = expr_key(target)
        if key is None:
            return
        if expr_key(value.left) == key:
            self._stores.append(_Store("add", node, target, key, value.right))
        elif expr_key(value.right) == key:
            self._stores.append(_Store("add", node, target, key, value.left))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            key = expr_key(node.target) or root_name(node.target)
            if key is not None:
                self._stores.append(_Store("aug", node, node.target, key, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _STORE_METHODS:
            positional = [a for a in node.args if a.keyword is None and not a.star]
            key = expr_key(func.value)
            if len(positional) == _STORE_METHODS[func.attr.value] + 1 and key is not None:
                self._stores.append(_Store("call", node, func.value, key, positional[-1].value, func.attr.value))

    def visit_Del(self, node: cst.Del) -> None:
        self._dels.append(node)

    # -- the judgement -----------------------------------------------------------------
    def finish(self) -> None:
        self._stores = [s for s in self._stores if self._may_matter(s)]
        if not self._stores or libraries.only_foreign(self.ctx.imports.values()):
            return  # (cheap files stay cheap: no semantic model is built)
        self.model = self.ctx.semantic.model
        self._flow = Flow(self.ctx, self.model)
        self._modes = GradModes(self.ctx)
        self._graphs = GraphValues(self.ctx)
        for code in self._collect():
            self._check(code)

    def _collect(self) -> list[_Code]:
        """Stores, backward-like calls and shrinking calls, by the code they run in (the
        enclosing function, module or class body; code in lambdas is not judged)."""
        model = self.model
        codes: dict[Scope, _Code] = {}

        def add(scope: Scope, kind: str, items) -> None:
            owner = code_owner(scope)
            if owner is not None:
                code = codes.get(owner)
                if code is None:
                    code = codes[owner] = _Code(owner)
                getattr(code, kind).extend(items)

        for site in model.calls:
            call, func = site.node, site.node.func
            target = gradient_target(self.ctx, call)
            if target is not None:
                add(site.scope, "backwards", [(target, site)])
            elif isinstance(func, cst.Attribute) and func.attr.value in _BOUNDING_METHODS:
                add(site.scope, "bounding", [(k, call) for k in _root_chain(func.value)])
        for store in self._stores:
            add(model.scope_of(store.node), "stores", [store])
        for node in self._dels:
            for el in unpack_targets(node.target):
                add(model.scope_of(node), "bounding", [(k, node) for k in _root_chain(el)])
        return [c for c in codes.values() if c.stores]

    def _may_matter(self, store: _Store) -> bool:
        """Worth the analysis: in a loop or a function, and not plainly graph-free."""
        if isinstance(store.value, _GRAPH_FREE) or is_detached(self.ctx, store.value):
            return False
        return bool(self.ctx.enclosing_loops(store.node)) or self.ctx.enclosing_function(store.node) is not None

    def _check(self, code: _Code) -> None:
        fn = code.scope.node if isinstance(code.scope.node, cst.FunctionDef) else None
        named = fn is not None and fn.name.value in self._step_methods
        per_step: bool | None = named or None  # asked (a closure over the call graph) only for a store in no data loop
        order = self.model.order
        for store in sorted(code.stores, key=lambda s: order[s.node]):
            loop = self._data_loop(code, store.node)
            if loop is None:
                if per_step is None:
                    per_step = fn is not None and self.ctx.semantic.training.once_per_batch(fn)
                if not per_step:
                    continue
            lifetime = self._lifetime(code, store, loop)
            if lifetime is None:
                continue
            evidence = self._evidence(code, store, fn, named)
            if evidence is not None and not (lifetime == "window" and evidence == "backward"):
                self.report(store.node, self._message(store, evidence, loop is None, lifetime == "window"),
                            fix=self._detach_fix(code, store, evidence))

    def _detach_fix(self, code: _Code, store: _Store, evidence: str) -> Fix | None:
        """The stored value as ``value.detach()``: the same numbers, without the graph. Only
        for a value that is surely one tensor (a backward-ed name or a loss, not a model's
        output, which may be a tuple or a dict) stored one at a time (not ``extend``), unless
        what the store builds is returned and the store may run without this code's backward
        (a chunked loss: the caller differentiates the returned total)."""
        value = store.value
        if evidence not in ("backward", "loss") or store.verb == "extend" \
                or not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return None
        if self._returned(code, store) and self._backward_skipped(code, store):
            return None  # on the path without backward the caller backward-s what it builds
        detached = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach")))
        short = self.ctx.module.code_for_node(value).strip()
        return Fix.safe(f"Store `{short}.detach()`", replace_node(self.ctx, value, detached))

    # where the store's iteration is, and whether the container outlives it
    def _data_loop(self, code: _Code, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost loop around ``node`` (in its function) whose iterations are steps:
        a data loop, or one whose own body does this code's optimizer step, or its backward
        unless every optimizer step of this code comes after the loop: that loop's iterations
        are the micro-batches of one step (``for _ in range(accumulate_every): ...
        loss.backward()`` then ``optimizer.step()``), and what it keeps lives as long as the
        code around it does."""
        loops, training = self.model.loops, self.ctx.semantic.training
        steps = self._steps(code)
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

    def _lifetime(self, code: _Code, store: _Store, loop: cst.CSTNode | None) -> str | None:
        """How long what is stored lives: "run" (past the iteration or call), "window" (until
        a reset that runs on some iterations only: every N steps), None (one iteration)."""
        if store.key in self._bounded() or loop is None and not self._outlives_call(code, store):
            return None
        resets = [] if loop is None else self._resets_in(code, store, loop)
        if not resets:
            return "run"
        return "window" if all(self._conditional(node, loop) for node in resets) else None

    def _conditional(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Under an ``if`` inside ``loop``: runs on some iterations only."""
        for anc in self.ctx.ancestors(node):
            if anc is loop:
                return False
            if isinstance(anc, cst.If):
                return True
        return False

    def _reassigned(self, code: _Code, store: _Store, key: str) -> list[Binding]:
        """Bindings of ``key`` other than the store itself (and ``+=`` on the stored key)."""
        return [b for b in self._graphs.bindings(code, key)
                if b.node is not store.node and not (b.kind == "aug" and key == store.key)]

    def _resets_in(self, code: _Code, store: _Store, loop: cst.CSTNode) -> list[cst.CSTNode]:
        """Where the container is (re)assigned, cleared or shrunk inside ``loop``."""
        chain = _root_chain(store.container)
        found = [b.node for key in chain for b in self._reassigned(code, store, key) if self.ctx.inside(b.node, loop)]
        return found + [node for key, node in code.bounding if key in chain and self.ctx.inside(node, loop)]

    def _outlives_call(self, code: _Code, store: _Store) -> bool:
        """In a per-step method: a ``self`` attribute or a global, not reset in the method."""
        root = root_name(store.container)
        if root is None:
            return False
        is_self = root == code.scope.self_name and root != store.key
        if not is_self and code.scope.bindings.get(root):
            return False  # a parameter or a local
        chain = _root_chain(store.container)
        if any(self._reassigned(code, store, key) for key in chain if not (is_self and key == root)):
            return False
        return not any(key in chain for key, _ in code.bounding)

    def _bounded(self) -> set[str]:
        """Keys assigned a ``deque(maxlen=...)``."""
        if self._deques is None:
            self._deques = {key for scope in self.model.scopes.values() for key, bindings in scope.bindings.items()
                            for b in bindings if b.kind == "assign" and isinstance(b.value, cst.Call)
                            and (expr_key(b.value.func) or "").rsplit(".", 1)[-1] == "deque"
                            and any(a.keyword is not None and a.keyword.value == "maxlen" for a in b.value.args)}
        return self._deques

    # does the value carry a graph, with autograd on?
    def _evidence(self, code: _Code, store: _Store, fn: cst.FunctionDef | None, step_method: bool) -> str | None:
        training = self.ctx.semantic.training
        if training.grad_choice_above(store.node, lightning_hooks=True) or training.grad_disabled_before(store.node) \
                or is_plain_number(self.model, store.value):
            return None
        evidence = self._graphs.carrier(code, store.value, store.node)
        if evidence is None:
            return None
        if evidence != "backward" and fn is not None and not step_method and not self._trains_itself(code) \
                and not self._runs_with_grad(fn):
            return None  # a model or criterion call in a function that does not train
        return None if self._consumed(code, store) else evidence

    def _runs_with_grad(self, fn: cst.FunctionDef) -> bool:
        """As far as this file shows, autograd is on when ``fn`` runs: not every call site
        makes a grad-mode choice, and it has one, or it switches a model to eval mode itself
        (an evaluation routine: its callers elsewhere are not trusted to disable autograd)."""
        graph = self.ctx.semantic.graph
        if self._modes.only_called_with_choice(fn):
            return False
        return bool(graph.callers(fn)) or any(mode_switch(s.node) is False for s in graph.sites(fn))

    def _steps(self, code: _Code) -> list[CallSite]:
        if code.steps is None:
            code.steps = [s for s, _ in self.ctx.semantic.training.sites.step if code_owner(s.scope) is code.scope]
        return code.steps

    def _trains_itself(self, code: _Code) -> bool:
        """Does a backward or an optimizer step of its own."""
        return bool(code.backwards or self._steps(code))

    def _returned(self, code: _Code, store: _Store) -> bool:
        """Does what the store builds (the container, the total) reach a ``return`` of this code?"""
        returns = {node.value for node in iter_nodes(code.scope.node, into_scopes=False)
                   if isinstance(node, cst.Return) and node.value is not None}
        return bool(returns) and self._flow.reaches(store.value, returns)

    def _backward_skipped(self, code: _Code, store: _Store) -> bool:
        """Does this code backward something only on some of the paths that reach the store
        (under an ``if`` that does not hold the store)?"""
        for _, site in code.backwards:
            for anc in self.ctx.ancestors(site.node):
                if anc is code.scope.node or self.ctx.inside(store.node, anc):
                    break
                if isinstance(anc, cst.If):
                    return True
        return False

    def _consumed(self, code: _Code, store: _Store) -> bool:
        """Is what the store builds (the container, the total) backward-ed later in this code?"""
        return self._flow.reaches(store.value, {target for target, _ in code.backwards})

    # reporting
    def _fix(self, value: cst.BaseExpression, short: str | None, evidence: str) -> str:
        """What to store instead: ``loss.item()`` (or ``loss.detach()``), ``out.detach()``,
        ``loss.detach().cpu()``."""
        if short is None or not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return "detached values (`.detach()`, or `.item()` for scalars)"
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in GRAPH_METHODS:
            receiver = self.ctx.module.code_for_node(value.func.value).strip()
            if short.startswith(receiver):
                return f"`{receiver}.detach(){short[len(receiver):]}` instead"
        if evidence == "model":
            return f"`{short}.detach()` instead"
        return f"`{short}.item()` (or `{short}.detach()`) instead"

    def _message(self, store: _Store, evidence: str, per_step: bool, window: bool) -> str:
        code = self.ctx.module.code_for_node
        value = code(store.value).strip()
        short = value if len(value) <= 40 and "\n" not in value else None
        if store.kind == "call":
            text = f"{code(store.container).strip()}.{store.verb}({short or '...'})"
        elif store.kind == "aug":
            text = f"{code(store.container).strip()} += {short or '...'}"
        else:
            target = code(store.container).strip()
            text = f"{target} = {target} + {short or '...'}"
        if len(text) > 70:
            text = text[:67] + "..."
        verb = "store" if store.kind == "call" else "accumulate"
        if window:
            return f"`{text}` keeps every iteration's autograd graph alive until it is reset, so memory grows " \
                   f"with every step in between; {verb} {self._fix(store.value, short, evidence)}"
        span = "each training step's" if per_step else "each iteration's"
        return f"`{text}` keeps {span} autograd graph alive, so memory grows every step; {verb} {self._fix(store.value, short, evidence)}"
