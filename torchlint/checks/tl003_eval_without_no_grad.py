"""TL003 eval-without-no-grad: a model put in eval mode, then called with autograd recording.

``model.eval()`` only switches dropout and batch-norm; a later forward of that object outside
``no_grad``/``inference_mode``/``set_grad_enabled`` still saves every activation for a
backward that never comes. Per function / module body (comprehensions belong to theirs; its
events: ``semantic.evaluation.scan_body``):

* an *eval event*: ``k.eval()``, ``k.train(False)``, ``k = <expr>.eval()``, on a statement
  that runs whenever the forward runs;
* a *forward* of ``k`` after it: ``k(...)``, ``k.forward(...)``, a submodule or forward-like
  method (``k.encoder(...)``, ``k.get_action(...)``), or a call of a same-file helper that
  forwards ``k`` itself with no grad-mode choice, eval or backward of its own
  (``self._predict_batch(x)`` for ``self.model``; ``predict(model, x)``);
* in between, no ``k.train()``, rebinding, call that may train it or freezing;
* the forward makes no grad-mode choice (``semantic.gradmode``), its value does not reach a
  backward / ``autograd.grad`` (followed value by value: ``semantic.dataflow``), the body
  asks for no input gradients; Lightning evaluation hooks, submodules in their parent's
  ``forward``, a forward that is a statement of its own in no loop and is only measured
  (FLOP counter, profiler, forward hooks: its graph is freed at once) and functions only called under a grad-mode choice are
  skipped. A forward in a function or method is settled by ``check_project``: skipped
  when every call of that function in the linted project runs under a grad-mode choice,
  directly or through callers only called so (``crossfile.CalledUnderChoice`` over each
  file's ``gradmode.choice_sites``; calls on objects of unknown class matched by name), and
  when some call of it sits in a module's ``forward``, directly or through callers
  (``CalledUnderChoice.reached_from_forward``: that graph is the forward's). In a project
  where a module's ``forward`` returns a gradient it takes with ``torch.autograd.grad``, itself
  or through the functions it calls in any file (each file's ``differentiates`` facts: the
  functions returning one; a force field's forces, not a gradient penalty), no deferred forward
  is reported: the model a function evaluates may be that
  one, which ``no_grad`` would break.

A forward whose callee turns autograd off itself in evaluation mode is not reported: where the
classes of what it is called on are known (``gradmode.instance_classes``), every project method
it may run (``CalledUnderChoice.method_keys``: the class's, its ancestors' and its subclasses')
is one of its file's ``eval_no_grad`` facts (``evaluation.eval_no_grad_methods``: under a
choice that is off while ``self.training`` is False, by ``grad_state.grad_mode_at(...,
training=False)``, or an abstract stub). Such a forward is settled in ``check_project``, at
module level too.

A test by its name in a library module whose forward's value an assertion checks
(``evaluation.is_test_function``, ``checked_by_assertion``) is skipped with ``skip-tests``, as
test files are.

One finding per eval event, at its first unprotected forward.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span, one_line
from torchlint.fixes import UNSAFE, Fix, insert_statement_before
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import argument_name, enclosing_function
from torchlint.semantic.crossfile import CalledUnderChoice, reached_by
from torchlint.semantic.dataflow import Flow
from torchlint.semantic.evaluation import (BodyEvents, checked_by_assertion, differentiating_functions,
                                          eval_no_grad_methods, few_examples, few_iterations, fixed_few_examples,
                                          is_test_function, made_up_examples, module_evals, scan_body)
from torchlint.semantic.gradmode import (GradModes, bound_signatures, called_names, choice_sites, function_key,
                                         imported_callees, instance_classes)
from torchlint.semantic.model import COMPREHENSION, SemanticModel
from torchlint.semantic.training import freeze_sites, unfreeze_sites
from torchlint.statements import dotted_name
from torchlint.textscan import contains
from torchlint.torch_api import mode_switch
from torchlint.tree import iter_nodes

# Nodes an eval call may sit under and still run whenever the code after it runs.
_STRAIGHT = (cst.Expr, cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock, cst.With,
             cst.Try, cst.TryStar, cst.Finally, cst.Assign, cst.AnnAssign)


# What a one-shot forward is measured by: a FLOP counter or profiler around it, forward hooks.
_MEASURING = re.compile(r"FlopCounterMode$|profile$|FlopCount")
_HOOKS = {"register_forward_hook", "register_forward_pre_hook"}


def _measuring_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and bool(_MEASURING.match((dotted_name(expr.func) or "").rsplit(".", 1)[-1]))


@dataclass
class _Candidate:
    forward: cst.Call  # the forward, or the helper call that runs one
    eval_call: cst.Call
    key: str  # the object put in eval mode
    shown: str  # what is called: ``model``, ``net.encoder``, ``self._predict_batch``
    inner: tuple | None  # (forward Call, its text) inside the helper, for a helper call
    function: cst.FunctionDef | None
    scope_is_body: bool  # in a function or class body, not at module level
    body: BodyEvents | None = None  # the body it was found in


class EvalWithoutNoGrad(Rule):
    code = "TL003"
    name = "eval-without-no-grad"
    severity = Severity.WARNING
    default_enabled = True
    summary = "Model called after .eval() outside torch.no_grad(): autograd still records every activation"
    # Every file's calls decide which functions the project only runs under a grad-mode choice
    # (``check_project``), a file with no eval event included; a file with no attribute and no
    # import can call no function of another file.
    requires_text = (".", "import")
    uses_semantic_model = True  # every file's finish asks it (``choice_sites``)
    fixable = (UNSAFE,)
    skips_test_files = True
    shared_facts = ("called", "imported", "differentiates")  # a test's calls under no_grad protect a helper
    options = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py): a test's forward checks shapes once, often on the "
                                         "meta device, and wastes nothing worth a finding"),
    }


    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._evals: list[cst.Call] = []
        self._model: SemanticModel | None = None
        self._helper_memo: dict[tuple[cst.CSTNode, str], tuple | None] = {}

    # -- the walk only notes eval events; everything else is asked in finish() -----------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func  # (``type() is``: every call of the file passes here; not subclassed)
        if type(func) is cst.Attribute and func.attr.value in ("eval", "train") and mode_switch(node) is False:
            self._evals.append(node)

    def finish(self) -> None:
        self._model = self.ctx.semantic.model
        self._modes = GradModes(self.ctx)
        deferred = self._candidates_to_report() if self._evals and self.reports else []
        differentiating = differentiating_functions(self._model) if contains(self.ctx.text, "autograd") else []
        # Every analysed file has facts: a file without them is one nobody could read
        # (``CalledUnderChoice``: its uses are unknown).
        self.ctx.facts[self.code] = {"called": called_names(self.ctx, self._modes),
                                     "imported": imported_callees(self.ctx, self._modes), "deferred": deferred,
                                     "differentiates": differentiating,
                                     "eval_no_grad": eval_no_grad_methods(self.ctx)}

    def demanded_facts(self) -> dict:
        """Every call in this file of a function the project may define, and the signatures of
        its methods (``gradmode.choice_sites``, ``bound_signatures``): what
        ``crossfile.CalledUnderChoice`` asks of the files that may call a function it decides
        on. Costly on every file, and only needed in a project with deferred forwards."""
        return {"sites": choice_sites(self.ctx, self._modes), "signatures": bound_signatures(self._model)}

    def _candidates_to_report(self) -> list[dict]:
        """Report the unprotected forwards outside named functions; return the others, as
        facts for ``check_project`` (which knows whether every call of it, in any file, is
        under a grad-mode choice)."""
        self._flow = Flow(self.ctx, self._model)
        candidates = [c for body in self._bodies() for c in self._analyze(body)]
        candidates += self._after_module_eval()
        deferred: list[dict] = []
        if not candidates:
            return deferred
        # Frozen, unless a part is made trainable again (freeze all, then unfreeze layer4 and fc).
        unfrozen = {key for key, _ in unfreeze_sites(self._model)}
        frozen = {(self._owner(key, node), key) for key, node in freeze_sites(self._model)
                  if not any(u == key or u.startswith(key + ".") for u in unfrozen)}
        module_no_grad = self._modes.module_grad_off()
        for cand in candidates:
            if module_no_grad and cand.scope_is_body:
                continue  # module-level torch.set_grad_enabled(False): functions run without grad
            owner = self._owner(cand.key, cand.forward)
            if (owner, cand.key) in frozen or (owner, cand.shown) in frozen:
                continue
            if cand.function is not None and self._modes.only_called_with_choice(cand.function):
                continue
            fix = self._decorator_fix(cand)
            key = function_key(self._model, cand.function) if cand.function is not None else None
            callees = self._callees(cand.inner[0] if cand.inner is not None else cand.forward)
            if key is not None or callees:  # its callers or its callee, in any linted file, decide (``check_project``)
                deferred.append({"function": key, "span": self.ctx.span(cand.forward).to_json(),
                                 "message": one_line(self._message(cand)), "fix": fix.to_json() if fix else None,
                                 "callees": callees})
                continue
            self.report(cand.forward, self._message(cand), fix=fix)
        return deferred

    def _callees(self, call: cst.Call) -> list[str]:
        """What a forward runs, where the classes of what it is called on are known
        (``gradmode.instance_classes``): ``pkg.mod.Net.forward`` for ``model(x)`` with ``model =
        Net()``, ``pkg.mod.Encoder.forward`` for ``self.encoder(x)`` with ``self.encoder =
        Encoder()``, ``pkg.mod.Embedder.embed`` for ``self.embedder.embed(x)``; empty when unknown.
        ``check_project`` matches them against each file's ``eval_no_grad`` methods."""
        func = call.func
        classes = instance_classes(self.ctx, func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if classes is not None and not (isinstance(func, cst.Attribute) and func.attr.value == "forward"):
            return [f"{q}.forward" for q in classes]
        if isinstance(func, cst.Attribute):
            classes = instance_classes(self.ctx, func.value)
            if classes is not None:
                return [f"{q}.{func.attr.value}" for q in classes]
        return []

    def _results_may_train(self, function: cst.FunctionDef) -> bool:
        """Whether what ``function`` computes may reach a backward elsewhere: it returns a
        value or stores one in an attribute or item, and some caller may differentiate it (a
        caller this file does not show, a reference handed on, or a caller that runs a
        backward itself or through its callees)."""
        escapes = any(isinstance(n, cst.Return) and n.value is not None
                      or isinstance(n, cst.AssignTarget) and isinstance(n.target, (cst.Attribute, cst.Subscript))
                      for n in iter_nodes(function.body, into_scopes=False))
        if not escapes:
            return False
        graph = self.ctx.semantic.loose_graph
        if self._called_only_elsewhere(function) or any(function in graph.references(s) for s in self._model.calls):
            return True
        backward = self.ctx.semantic.training.closure("backward")
        callers = graph.callers(function)
        return not callers or any(enclosing_function(self._model, site.scope) in backward for site in callers)

    def _decorator_fix(self, cand: _Candidate) -> Fix | None:
        """``@torch.no_grad()`` right above the ``def`` of the function holding the eval and
        the forward, where that function only evaluates: nothing in it (or in what it calls)
        does a backward, a step or ``autograd.grad``, chooses a grad mode, wants input
        gradients, or puts a model back in training mode (nor a constructor: what it builds
        would lose its gradients), and what it returns or stores reaches no backward
        (``_results_may_train``). Unsafe: its results no longer carry gradients, which code
        this file does not show (another file, a callback) may want."""
        function, body = cand.function, cand.body
        if function is None or body is None or body.node is not function or function.asynchronous is not None \
                or function.name.value == "__init__" \
                or body.grad_exprs or body.set_grad_at is not None or body.wants_input_grad \
                or any(isinstance(n, cst.Call) and mode_switch(n) is True for n in iter_nodes(function.body)):
            return None
        training = self.ctx.semantic.training
        if function in training.closure("backward") or function in training.closure("step") \
                or function in training.closure("fit"):
            return None
        if self._results_may_train(function):
            return None
        module_scope = self._model.scopes[self.ctx.module]
        torch = module_scope.bindings.get("torch", ())
        if len(torch) != 1 or torch[0].kind != "import" or torch[0].qualified != "torch":
            return None
        edit = insert_statement_before(self.ctx, function, "@torch.no_grad()", at=function.name)
        return Fix.unsafe("Decorate the evaluation function with @torch.no_grad()", edit) if edit else None

    def _message(self, cand: _Candidate) -> str:
        e_call = cand.eval_call
        text = "train(False)" if e_call.func.attr.value == "train" else "eval()"
        position = self.ctx.position
        runs = "runs" if cand.inner is None else f"runs `{cand.inner[1]}(...)` (line {position(cand.inner[0]).start.line})"
        return (
            f"`{cand.shown}(...)` {runs} after `{cand.key}.{text}` (line {position(e_call).start.line}) outside "
            "`torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every "
            "activation for a backward that never comes, wasting memory and time; wrap the evaluation in "
            "`with torch.no_grad():` (or `torch.inference_mode()`)"
        )

    # -- across files: helpers only other files call -----------------------------------------
    def _called_only_elsewhere(self, function: cst.FunctionDef | None) -> bool:
        """A module-level function this file never calls nor passes on: only the files
        importing it decide whether it runs under no_grad."""
        if function is None or not isinstance(self.ctx.parent(function), cst.Module):
            return False
        graph = self.ctx.semantic.loose_graph
        return not graph.callers(function) and not any(function in graph.references(s) for s in self._model.calls)

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        """The deferred forwards of functions the linted project does not only call under a
        grad-mode choice (``crossfile.CalledUnderChoice``: every call, in any file, makes one
        or sits in such a function; a function no file calls is reported), nor calls from a
        module's ``forward`` (``reached_from_forward``: its graph is that forward's, which the
        forward's caller may differentiate). None in a project whose models differentiate in
        their own methods (``_models_differentiate``)."""
        deferred = [(record, fact) for record in project.records
                    for fact in (record.facts.get(cls.code) or {}).get("deferred", ())]
        if not deferred:
            return []
        choices = CalledUnderChoice(project, cls.code)
        evidence = _models_differentiate(project, cls.code, choices)
        if evidence:  # the exemption reaches its evidence's package and what imports connect to it
            exempt = reached_by(project, evidence)
            deferred = [(record, fact) for record, fact in deferred
                        if record.path not in exempt or fact["function"] is None]
        return [Finding.at(cls, record.path, Span.from_json(fact["span"]), fact["message"],
                           fix=Fix.from_json(fact["fix"]) if fact["fix"] else None)
                for record, fact in deferred
                if not (fact["function"] is not None and (choices.protected(record.path, fact["function"])
                                                          or choices.reached_from_forward(record.path, fact["function"])))
                and not _runs_without_grad(project, cls.code, choices, record, fact.get("callees") or ())]

    # -- step 1b: functions run after a module-level eval -------------------------------------
    def _after_module_eval(self) -> list[_Candidate]:
        """A script's or notebook's module-level ``model.eval()`` (``evaluation.module_evals``:
        never put back in training mode in the file), then a function that forwards that global
        ``model`` with no eval, grad-mode choice or backward of its own, and that the module body
        calls after the eval (directly or through the functions it calls)."""
        evals = module_evals(self.ctx, self._model)
        if not evals:
            return []
        model, graph = self._model, self.ctx.semantic.graph
        backward = self.ctx.semantic.training.closure("backward")
        module = self.ctx.module
        out: list[_Candidate] = []
        for scope in list(model.scopes.values()):
            function = scope.node
            if not isinstance(function, cst.FunctionDef) or function in backward or self._modes.chosen(function.body):
                continue
            keys = {k for k in evals if k.split(".", 1)[0] not in scope.bindings}  # the global, not a local
            if not keys:
                continue
            body = scan_body(self.ctx, function, function, keys)
            if body.evals or body.grad_exprs or body.wants_input_grad:
                continue  # its own eval is judged in its body; it trains or wants gradients
            for f_index, key, call, shown in body.forwards:
                if key not in keys or any(r < f_index for r in body.resets.get(key, []) + body.resets.get(shown, [])):
                    continue
                if not self._exposed(body, f_index, key, shown, call) \
                        or not self._run_after(function, model.order[evals[key]], module, graph):
                    continue
                out.append(_Candidate(call, evals[key], key, shown, None, function, True, body))
                break
        return out

    def _run_after(self, function: cst.FunctionDef, after: int, module: cst.Module, graph) -> bool:
        """The module body runs ``function`` (itself or through the functions it calls) at a
        statement after position ``after``."""
        seen, stack = set(), [function]
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            for site in graph.callers(fn):
                caller = self._model.code_scope(site.scope).node
                if caller is module:
                    if site.order > after:
                        return True
                elif isinstance(caller, cst.FunctionDef):
                    stack.append(caller)
        return False

    # -- step 1: the bodies holding an eval event ------------------------------------------
    def _bodies(self) -> list[cst.CSTNode]:
        """Function, lambda, class and module bodies (comprehensions belong to theirs),
        innermost first, as the old scope stack left them."""
        model = self._model
        found: dict[cst.CSTNode, int] = {}
        for call in self._evals:
            site = model.call_site(call)
            scope = site.scope if site is not None else model.scope_of(call)
            while scope.kind == COMPREHENSION and scope.parent is not None:
                scope = scope.parent
            found[scope.node] = scope.order
        return sorted(found, key=lambda n: -found[n])

    # -- step 2: one body's events, in order (``semantic.evaluation``) ----------------
    def _analyze(self, node: cst.CSTNode) -> list[_Candidate]:
        function = node if isinstance(node, cst.FunctionDef) else None
        if function is not None and self._modes.chosen(function.body):
            return []  # decorated with a grad mode, or a Lightning evaluation hook
        body = scan_body(self.ctx, node, function)
        if not body.evals or body.wants_input_grad:
            return []
        return self._unprotected_forwards(body)

    # -- step 3: forwards (direct or through a helper) after a dominating eval, unprotected --
    def _unprotected_forwards(self, body: BodyEvents) -> list[_Candidate]:
        events = [(i, key, call, shown, None) for i, key, call, shown in body.forwards] + self._helper_forwards(body)
        reported: set[int] = set()
        out: list[_Candidate] = []
        for f_index, key, call, shown, inner in sorted(events, key=lambda e: e[0]):
            if not self._exposed(body, f_index, key, shown, call):
                continue
            chosen = self._dominating_eval(body, key, shown, f_index, call)
            if chosen is None or chosen[0] in reported:
                continue
            reported.add(chosen[0])
            out.append(_Candidate(call, chosen[1], key, shown, inner, body.function, not isinstance(body.node, cst.Module),
                                  body))
        return out

    def _exposed(self, body: BodyEvents, f_index: int, key: str, shown: str, call: cst.Call) -> bool:
        """The forward records a graph nobody asked for: not a submodule in its parent's
        forward, not checkpointed or parameter-free, no grad-mode choice, its value never
        reaches a backward."""
        function = body.function
        if function is not None and function.name.value in ("forward", "__call__") and shown.startswith("self."):
            return False  # a submodule inside its parent's forward: the caller decides
        if key in body.grad_wanted or body.parameter_free(shown, f_index) or self._one_shot(call) \
                or self._on_few_examples(call):
            return False
        if body.set_grad_at is not None and body.set_grad_at < f_index or self._modes.chosen(call):
            return False
        if function is not None and self.opts.get("skip-tests", True) and is_test_function(function) \
                and checked_by_assertion(self.ctx, self._flow, call):
            return False  # a test: its forward is checked once, as a test file's is
        return not self._flow.reaches(call, set(body.grad_exprs))

    def _on_few_examples(self, call: cst.Call) -> bool:
        """A forward in no loop of one example or a handful picked by literals
        (``model(x[0, None])``, ``model(features[:8])``: a notebook's prediction shown for one
        image; in module-level code, which runs once, also a batch of one or a tensor written
        out in the code: ``net(torch.randn(1, 1, 17, 17))``, and in loops of a handful of literal
        steps there, ``for k in range(10)``): the graph it records is too small to matter
        (``evaluation.few_examples``, ``few_iterations``). In module-level code also: a loop
        that forwards the same handful made before it on every pass (an equivariance check,
        ``net(x.transform(g))``: ``evaluation.fixed_few_examples``). In a function, in no loop,
        also a handful the function makes up itself (``x = torch.rand(1, 3, 299, 299)``, then
        ``model(x)``: a calibration or shape check on a dummy input, the same on every call:
        ``evaluation.made_up_examples``); a forward of what its caller hands in is still
        reported. A loop over the data is
        still reported, and so is a real batch forwarded once (``next(iter(loader))``)."""
        args = [a.value for a in call.args if a.keyword is None and a.star == ""]
        if not args:
            return False
        model = self.ctx.semantic.model
        once = model.scope_of(call).function() is None
        loops = self.ctx.enclosing_loops(call)
        if loops and not (once and few_iterations(loops)):
            return once and fixed_few_examples(args[0], loops, model)
        return few_examples(args[0], model if once else None) or not once and made_up_examples(args[0], model)

    def _one_shot(self, call: cst.Call) -> bool:
        """``model(x)`` as a statement of its own, in no loop of its function, run only to be
        measured (under ``FlopCounterMode``/a profiler, or in a function that registers forward
        hooks): its graph is freed as soon as the call returns. A calibration pass
        (``prepare(model); model(x)``) is still reported."""
        if not isinstance(self.ctx.parent(call), cst.Expr) or self.ctx.enclosing_loops(call):
            return False
        function = next((a for a in self.ctx.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if function is None:
            return False
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, cst.With) and any(self._measures(item.item, function) for item in anc.items):
                return True
        return any(isinstance(n, cst.Attribute) and n.attr.value in _HOOKS for n in iter_nodes(function.body))

    @staticmethod
    def _measures(expr: cst.BaseExpression, function: cst.FunctionDef) -> bool:
        """``FlopCounterMode(...)``/``profile(...)``, or a name ``function`` binds to one."""
        if isinstance(expr, cst.Name):
            values = [n.value for n in iter_nodes(function.body) if isinstance(n, cst.Assign)
                      and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in n.targets)]
            return len(values) == 1 and _measuring_call(values[0])
        return _measuring_call(expr)

    def _helper_forwards(self, body: BodyEvents) -> list[tuple]:
        """Calls of same-file helpers that forward an eval'd key themselves:
        (index, key, call, callee text, (inner forward, its text))."""
        graph, model = self.ctx.semantic.graph, self._model
        out = []
        for index, call in body.helpers:
            site = model.call_site(call)
            targets = graph.targets(site) if site is not None else []
            if len(targets) != 1 or not isinstance(targets[0], cst.FunctionDef):
                continue
            for key in sorted(body.eval_keys):
                inner_key = argument_name(model, site, targets[0], key)
                inner = self._helper_forward(targets[0], inner_key) if inner_key is not None else None
                if inner is not None:
                    out.append((index, key, call, dotted_name(call.func), inner))
                    break
        return out

    def _helper_forward(self, helper: cst.FunctionDef, key: str) -> tuple | None:
        """The first forward of ``key`` in ``helper`` that records a graph: the helper makes
        no grad-mode choice, does no backward, and does not switch or rebind ``key`` first."""
        memo_key = (helper, key)
        if memo_key not in self._helper_memo:
            found = None
            if not self._modes.chosen(helper.body):
                body = scan_body(self.ctx, helper, helper, {key})
                if not body.grad_exprs and not body.wants_input_grad and not body.evals:
                    for f_index, k, call, shown in body.forwards:
                        if any(r < f_index for r in body.resets.get(k, []) + body.resets.get(shown, [])):
                            break
                        if self._exposed(body, f_index, k, shown, call):
                            found = (call, shown)
                            break
            self._helper_memo[memo_key] = found
        return self._helper_memo[memo_key]

    def _dominating_eval(self, body: BodyEvents, key: str, shown: str, f_index: int,
                         call: cst.Call) -> tuple[int, cst.Call] | None:
        """The last eval of ``key`` before the forward that always runs on the way to it,
        with no reset of ``key`` (or of the submodule called) in between."""
        f_ancestors = None
        key_resets = body.resets.get(key, []) + (body.resets.get(shown, []) if shown != key else [])
        for e_index, e_key, e_call in reversed(body.evals):
            if e_key != key or e_index >= f_index:
                continue
            if any(e_index < r < f_index for r in key_resets):
                return None  # back in training mode (or maybe): earlier evals are moot too
            if f_ancestors is None:
                f_ancestors = set(self.ctx.ancestors(call))
            if e_call in f_ancestors:
                continue
            if self._dominates(e_call, f_ancestors):
                return e_index, e_call
        return None

    def _dominates(self, e_call: cst.Call, f_ancestors: set[cst.CSTNode]) -> bool:
        """Whether the statement holding ``e_call`` runs whenever the forward runs: every
        node between it and the closest common ancestor is straight-line code."""
        node: cst.CSTNode = e_call
        for anc in self.ctx.ancestors(e_call):
            if anc in f_ancestors:
                return True
            if isinstance(anc, cst.Attribute) and anc.value is node or isinstance(anc, cst.Call) and anc.func is node:
                pass
            elif not isinstance(anc, _STRAIGHT):
                return False
            node = anc
        return False

    # -- step 4: file-wide exemptions -----------------------------------------------------
    def _owner(self, key: str, node: cst.CSTNode) -> cst.CSTNode | None:
        """Where a key means one object: the class for ``self...``, else the function."""
        model = self._model
        if key == "self" or key.startswith("self."):
            info = model.class_of(node)
            return info.node if info is not None else None
        scope = model.scope_of(node).function()
        return scope.node if scope is not None else None


def _runs_without_grad(project, code: str, choices: CalledUnderChoice, record, callees) -> bool:
    """Whether every project method the forward may run (``callees``: ``pkg.mod.Cls.m``, each
    matched in ``Cls``, its ancestors and its subclasses: ``CalledUnderChoice.method_keys``) is
    one of its file's ``eval_no_grad`` methods (``evaluation.runs_without_grad_in_eval``: it
    turns autograd off itself while its module is in evaluation mode). None found: False."""
    keys = {key for callee in callees for key in choices.method_keys(callee, record)}
    if not keys:
        return False
    for path, name in keys:
        where = project.record(path)
        facts = (where.facts.get(code) or {}) if where is not None else {}
        if name not in facts.get("eval_no_grad", ()):
            return False
    return True


def _models_differentiate(project, code: str, choices: CalledUnderChoice) -> set[str]:
    """The files where a module of the linted project differentiates in its own ``forward`` (a
    force field computing forces as ``-dE/dx`` with ``torch.autograd.grad``), itself or through
    the functions it calls (``CalledUnderChoice.reached_from_forward``): a function evaluating a
    model of a class it does not name, in a file of the same package or connected to one of them
    by imports (``crossfile.reached_by``), may be running one, which ``no_grad`` would break, so its
    forwards are not reported. Another package linted in the same run is not reached."""
    found: set[str] = set()
    for record in project.records:
        for key in (record.facts.get(code) or {}).get("differentiates", ()):
            owner, _, name = key.rpartition(".")
            if name == "forward" and owner:
                if project.is_nn_module(record.qualified(owner)):
                    found.add(record.path)
            elif choices.reached_from_forward(record.path, key):
                found.add(record.path)
    return found
