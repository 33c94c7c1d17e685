"""TL002 loss-kept-with-graph: a tensor that carries an autograd graph is stored, every
iteration, in something that outlives the iteration. In ``finish``:

* *stores* (``semantic.stores``): ``C.append(v)`` / ``extend`` / ``insert``, ``C += v``,
  ``C = C + v``, by the code (function, module or class body) they run in;
* judged in their *iteration*: the innermost data loop around them (training model), or,
  with none, a function that runs once per batch (``training.once_per_batch``: backward and
  a step of its own, or called from a data loop; or named in ``step-methods``);
* the container outlives it (``semantic.stores``): not rebound, cleared or popped in the
  loop (for a per-batch function: a ``self`` attribute or global, not reset there), not
  ``deque(maxlen=...)``; a reset on some iterations only (every N steps) still holds N
  graphs unless each value is backward-ed;
* the value carries a graph (``semantic.autograd``): a backward-ed name (plain numbers and parameters scaling a loss
  are not carriers; one backward-ed with ``retain_graph=True`` still holds its activations, so
  the exemptions below for a backward-ed value do not apply to it), a loss, criterion or model call (also element by element through tuple
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

from typing import Any, Iterable

import libcst as cst

from torchlint import libraries
from torchlint.finding import Finding, Severity, Span, from_trailing, trailing_json
from torchlint.fixes import SAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.autograd import GRAPH_METHODS, RETAINED, GraphValues
from torchlint.semantic.dataflow import is_plain_number
from torchlint.semantic.gradmode import GradModes
from torchlint.semantic.modules import class_key
from torchlint.semantic.stores import (WINDOW, Accumulates, KeptStores, Store, StoreCode, accumulators,
                                       codes_with_stores, receiver_classes, store_of_accumulation, store_of_assign,
                                       store_of_augassign, store_of_call)
from torchlint.textscan import contains_any
from torchlint.torch_api import is_detached, mode_switch

# Stored values that never carry a graph, whatever their names are bound to.
_GRAPH_FREE = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
               cst.Comparison, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
               cst.Lambda)
# Text one of which a file needs for any value in it to count as carrying a graph.
_EVIDENCE_TEXT = ("backward", "autograd", "scaler", "oss", "kl_div", "criteri", "model", "net", "Net", "Module",
                  "generator", "discriminator", "self(", "forward")


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
    # the commonest first: ``any`` stops there; an accumulator's method (``meter.update(loss, n)``) last
    requires_text = ("+", "append", "extend", "insert", "update", "add", "accumulate", "push", "record")
    fixable = (SAFE,)


    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        # A store, and some evidence of a graph: a backward (also through a scaler or
        # autograd.grad), a loss, a criterion, or a model call; or a class's method keeping
        # what it is given (an accumulator other files call).
        return contains_any(text, cls.requires_text) and contains_any(text, _EVIDENCE_TEXT + ("self.",))

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._step_methods = set(options.get("step-methods", ()))
        self._stores: list[Store] = []
        self._dels: list[cst.Del] = []

    # -- the walk: statements that store or shrink ---------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        self._keep(store_of_assign(node))  # total = total + v

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._keep(store_of_augassign(node))

    def visit_Call(self, node: cst.Call) -> None:
        self._keep(store_of_call(node))

    def _keep(self, store: Store | None) -> None:
        if store is not None:
            self._stores.append(store)

    def visit_Del(self, node: cst.Del) -> None:
        self._dels.append(node)

    # -- the judgement -----------------------------------------------------------------
    def finish(self) -> None:
        self._stores = [s for s in self._stores if self._may_matter(s)]
        if libraries.only_foreign(self.ctx.imports.values()):
            return
        keeps = accumulators(self.ctx)
        facts: dict[str, Any] = {}
        if keeps:
            facts["accumulators"] = {class_key(info): {m: [k.to_json() for k in ks] for m, ks in methods.items()}
                                     for info, methods in keeps.items()}
        self._imported: dict[Store, list] = {}  # a store through a method of an imported class -> its key
        self._stores += [s for s in self._accumulations(keeps) if self._may_matter(s)]
        self._pending: list[list] = []
        if self._stores:
            self.model = self.ctx.semantic.model
            self._modes = GradModes(self.ctx)
            self._graphs = GraphValues(self.ctx)
            self._kept = KeptStores(self.ctx, self._graphs)
            for code in codes_with_stores(self.ctx, self._stores, self._dels):
                self._check(code)
        if self._pending:
            facts["pending"] = self._pending
        if facts:
            self.ctx.facts[self.code] = facts

    def _accumulations(self, keeps: dict) -> list[Store]:
        """Calls of a method that keeps what it is given (``meter.update(loss, n)`` of an
        ``AverageMeter``): of a same-file class (``semantic.stores.accumulators``), or of an
        imported class, each argument a possible store the project pass confirms."""
        methods = {m for by_method in keeps.values() for m in by_method}
        out: list[Store] = []
        model = self.ctx.semantic.model
        star = tuple(m for m in self.ctx.star_imports if not libraries.is_library(m))
        imports_classes = self._imports_classes
        for site in model.calls:
            call, func = site.node, site.node.func
            if not isinstance(func, cst.Attribute) or not call.args or func.attr.value.startswith("_"):
                continue
            method = func.attr.value
            local, imported = receiver_classes(model, func.value, star=star) \
                if method in methods or imports_classes else ([], [])
            for info in local:
                kept = keeps.get(info, {}).get(method)
                if kept:
                    out += store_of_accumulation(call, func.value, info.name, kept)
            for name in imported:
                if libraries.is_library(name):
                    continue
                for n, arg in enumerate(a for a in call.args if not a.star):
                    where = [n, None] if arg.keyword is None else [-1, arg.keyword.value]
                    param = arg.keyword.value if arg.keyword is not None else f"#{n}"
                    for store in store_of_accumulation(call, func.value, name.rsplit(".", 1)[-1],
                                                       [Accumulates(param, n if arg.keyword is None else -1, "")]):
                        self._imported[store] = [name, method, *where]
                        out.append(store)
        return out

    @property
    def _imports_classes(self) -> bool:
        """Some import of the file names a class of the project (a capitalised name from
        a module that is no library)."""
        return any(not libraries.is_library(q) and q.rsplit(".", 1)[-1][:1].isupper()
                   for q in self.ctx.imports.values()) or any(not libraries.is_library(m) for m in self.ctx.star_imports)

    def _may_matter(self, store: Store) -> bool:
        """Worth the analysis: in a loop or a function, and not plainly graph-free."""
        if isinstance(store.value, _GRAPH_FREE) or is_detached(self.ctx, store.value):
            return False
        return bool(self.ctx.enclosing_loops(store.node)) or self.ctx.enclosing_function(store.node) is not None

    def _check(self, code: StoreCode) -> None:
        fn = code.scope.node if isinstance(code.scope.node, cst.FunctionDef) else None
        named = fn is not None and fn.name.value in self._step_methods
        per_step: bool | None = named or None  # asked (a closure over the call graph) only for a store in no data loop
        order = self.model.order
        for store in sorted(code.stores, key=lambda s: order[s.node]):
            loop = self._kept.iteration(code, store.node)
            if loop is None:
                if per_step is None:
                    per_step = fn is not None and self.ctx.semantic.training.once_per_batch(fn)
                if not per_step:
                    continue
            lifetime = self._kept.lifetime(code, store, loop)
            if lifetime is None:
                continue
            evidence = self._evidence(code, store, fn, named)
            if evidence is None or lifetime == WINDOW and evidence == "backward":
                continue
            if loop is not None and evidence == "backward" and self._kept.per_epoch(loop):
                continue  # once an epoch, and backward-ed: its activations are already freed
            message = self._message(store, evidence, loop is None, lifetime == WINDOW)
            fix = self._detach_fix(code, store, evidence)
            if store in self._imported:  # the project pass knows whether the method keeps it
                self._pending.append([self.ctx.span(store.node).to_json(), message, *self._imported[store],
                                      *trailing_json(fix)])
            else:
                self.report(store.node, message, fix=fix)

    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        """Calls of a method of a class of another file that keeps what it is given
        (``losses.update(loss, n)``, ``AverageMeter`` in ``utils.py``)."""
        for record in project.records:
            for span, message, name, method, index, keyword, *fix in (record.facts.get(cls.code) or {}).get("pending", ()):
                found = project.resolve_symbol(name, record)
                if found is None:
                    continue
                owner, qual = found
                kept = ((owner.facts.get(cls.code) or {}).get("accumulators") or {}).get(qual, {}).get(method, ())
                if any(Accumulates.from_json(k).index == index if keyword is None else
                       Accumulates.from_json(k).param == keyword for k in kept):
                    yield Finding.at(cls, record.path, Span.from_json(span), message, fix=from_trailing(fix))

    def _detach_fix(self, code: StoreCode, store: Store, evidence: str) -> Fix | None:
        """The stored value as ``value.detach()``: the same numbers, without the graph. Only
        for a value that is surely one tensor (a backward-ed name or a loss, not a model's
        output, which may be a tuple or a dict) stored one at a time (not ``extend``), unless
        what the store builds is returned and the store may run without this code's backward
        (a chunked loss: the caller differentiates the returned total)."""
        value = store.value
        if evidence not in ("backward", RETAINED, "loss") or store.verb == "extend" \
                or not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return None
        if self._kept.returned(code, store) and self._kept.backward_skipped(code, store):
            return None  # on the path without backward the caller backward-s what it builds
        detached = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach")))
        short = self.ctx.module.code_for_node(value).strip()
        return Fix.safe(f"Store `{short}.detach()`", replace_node(self.ctx, value, detached))

    # does the value carry a graph, with autograd on?
    def _evidence(self, code: StoreCode, store: Store, fn: cst.FunctionDef | None, step_method: bool) -> str | None:
        training = self.ctx.semantic.training
        if training.grad_choice_above(store.node, lightning_hooks=True) or training.grad_disabled_before(store.node) \
                or is_plain_number(self.model, store.value):
            return None
        evidence = self._graphs.carrier(code, store.value, store.node)
        if evidence is None:
            return None
        if evidence not in ("backward", RETAINED) and fn is not None and not step_method and not self._kept.trains_itself(code) \
                and not self._runs_with_grad(fn):
            return None  # a model or criterion call in a function that does not train
        return None if self._kept.backwarded(code, store) else evidence

    def _runs_with_grad(self, fn: cst.FunctionDef) -> bool:
        """As far as this file shows, autograd is on when ``fn`` runs: not every call site
        makes a grad-mode choice, and it has one, or it switches a model to eval mode itself
        (an evaluation routine: its callers elsewhere are not trusted to disable autograd)."""
        graph = self.ctx.semantic.graph
        if self._modes.only_called_with_choice(fn):
            return False
        return bool(graph.callers(fn)) or any(mode_switch(s.node) is False for s in graph.sites(fn))

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

    def _message(self, store: Store, evidence: str, per_step: bool, window: bool) -> str:
        code = self.ctx.module.code_for_node
        value = code(store.value).strip()
        short = value if len(value) <= 40 and "\n" not in value else None
        if store.through:
            call = code(store.node).strip()
            text = call if len(call) <= 70 and "\n" not in call else f"{code(store.container).strip()}.{store.verb}(...)"
        elif store.kind == "call":
            text = f"{code(store.container).strip()}.{store.verb}({short or '...'})"
        elif store.kind == "aug":
            text = f"{code(store.container).strip()} += {short or '...'}"
        else:
            target = code(store.container).strip()
            text = f"{target} = {target} + {short or '...'}"
        if len(text) > 70:
            text = text[:67] + "..."
        verb = "pass" if store.through else "store" if store.kind == "call" else "accumulate"
        kept = f" (`{store.through}` keeps what it is given)" if store.through else ""
        if window:
            return f"`{text}` keeps every iteration's autograd graph alive until it is reset{kept}, so memory grows " \
                   f"with every step in between; {verb} {self._fix(store.value, short, evidence)}"
        span = "each training step's" if per_step else "each iteration's"
        return f"`{text}` keeps {span} autograd graph alive{kept}, so memory grows every step; " \
               f"{verb} {self._fix(store.value, short, evidence)}"
