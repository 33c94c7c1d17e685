"""TL011 model-mode: a model evaluated in training mode, or left in eval mode for the next
epoch's training.

(a) An evaluation loop: a loop of the training model that does no backward and no step, over
an evaluation loader (``val_loader``, ``semantic.loaders.is_evaluation_name``), in an
evaluation function (``validate``/``evaluate``/``test``) or with autograd off (there, or in
every same-file caller: ``semantic.grad_callers``; then over any named iterable, and only for a
model known to hold dropout or batch norm), that calls a model (a model binding, a model-like
name, a name the file switches, or a parameter a caller passes one for: ``modes.model_key``)
while no mode is chosen for it: no ``eval`` switch reaching that model
(``semantic.modes.switch_reaches``) in the function or its same-file callees, none before the
call in every same-file caller, and no ``train`` switch before it in a function that trains
nothing (Monte-Carlo dropout on purpose). A function nobody in the file calls is reported only
when it builds (or loads) the model itself or is the module: otherwise its caller, elsewhere,
may set the mode. Also a model call with autograd off, or in a decoding function
(``modes.decodes``) that trains nothing, outside any data loop, while nothing in the file
switches that model to eval (strict: its class must hold dropout or batch norm).

(b) A loop whose iteration trains (backward and step, directly or through same-file callees:
an epoch loop, a step loop, a batch loop with a periodic validation) and switches some model
to eval mode (itself or in a callee such as ``validate``) but never that model back to training
mode. Left alone: eval on a copy or model built inside the iteration or the callee
(``copy.deepcopy(model)``, ``Cls(...).to(device)``), on submodules picked under a test in a
loop over the model's modules or by ``model.apply(fn)`` (``semantic.modes.selected_submodule``:
frozen batch-norm statistics, the model training on), on EMA/teacher/target names, a mode helper
used as a ``with`` item (``with eval_mode(model):``), a loop that optimises only inputs.

Both need what the model may be: ``semantic.modes.model_classes`` (classes through
constructors, ``nn.Sequential`` literals, models handed to a constructor, parameters, a plain
function, a class defined nowhere readable), the findings are pending facts, and the project
pass (``semantic.modes.ModeLayers``) drops those whose classes have neither dropout nor batch
norm and says "may" when it cannot tell, asking the layers of a project class of the file
defining it (``demanded_facts``: ``class_layers``) only then. Lightning modules and hooks are
left alone (Lightning, like the HF Trainer and ignite's supervised evaluators, sets the modes
itself). Test files are skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import libcst as cst

from torchlint import torch_api as api
from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, from_trailing, insert_statement_before, trailing_json
from torchlint.libraries import is_lightning_module
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.loaders import is_evaluation_function, is_evaluation_name
from torchlint.semantic.grad_callers import grad_mode_through_callers
from torchlint.semantic.grad_state import Grad
from torchlint.semantic.modes import (UNREAD, ModeLayers, built_anew, built_here, caller_key, class_layers, decodes,
                                      level_key, switch_reaches, switch_receiver,
                                      imported_factories, innermost_training_loop, model_call, model_classes,
                                      model_key, only_model_class, optimises_only_inputs, rebound_in, receiver_iterated, selected_submodule,
                                      switched_anywhere, switched_classes, switches, trains_after)
from torchlint.semantic.training import DATA, DATA_ITERABLE, EVALUATION, TRAINING, in_lightning_eval_hook
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.semantic.model import CallSite

_KNOWN, _MAY = "its dropout and batch norm", "any dropout or batch norm it has"


def evaluated_in_training_mode(model: str, loader: str, layers: str = _KNOWN) -> str:
    return (f"`{model}` is evaluated over `{loader}` in training mode: {layers} still act as in training (random drops, "
            f"batch statistics); call `{model}.eval()` before this loop")


def left_in_eval_mode(call: str, model: str, layers: str = _KNOWN) -> str:
    return (f"`{call}` runs inside the training loop but nothing calls `{model}.train()` before the next training "
            f"step: from then on {layers} stay in eval mode (no dropout, frozen statistics); call `{model}.train()` "
            f"before training resumes")


def run_in_training_mode(model: str, where: str, layers: str = _KNOWN) -> str:
    return (f"`{model}` is evaluated {where} in training mode, and nothing in the file calls `{model}.eval()`: "
            f"{layers} still act as in training (random drops, batch statistics); call `{model}.eval()` before "
            f"evaluating")


def evaluated_unread(model: str, cls: str, notebook: bool) -> str:
    where = "in a cell that does not parse" if notebook else "nowhere this file defines or imports"
    return (f"`{model}` is evaluated in training mode, but its class `{cls}` is defined {where}, so whether it "
            f"has dropout or batch norm (which would still act as in training) is unknown; if it has, call "
            f"`{model}.eval()` before this loop")


def _unread_layers(cls: str, notebook: bool) -> str:
    where = "in a cell that does not parse" if notebook else "nowhere this file defines or imports"
    return f"any dropout or batch norm of `{cls}` (defined {where}: unknown)"


class ModelMode(Rule):
    code = "TL011"
    name = "model-mode"
    severity = Severity.WARNING
    default_enabled = True
    summary = "evaluation without model.eval(), or model.eval() in the epoch loop with no model.train() before the next training step"
    skips_test_files = True
    # Evaluation and epoch loops are ``for`` loops. The classes the project pass settles are
    # asked of the files defining them (``demanded_facts``), whatever their text.
    requires_text: tuple[str, ...] = ("for",)
    fixable = (UNSAFE,)  # model.eval() before an evaluation-only file's loop; model.train() atop the training loop
    # [tool.torchlint.model-mode]; the page's Options block is generated from this.
    options: dict[str, Option] = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py)"),
    }


    def finish(self) -> None:
        sem = self.ctx.semantic
        pending = [*self._evaluation_findings(sem), *self._epoch_findings(sem)]
        if pending:
            self.ctx.facts[self.code] = {"pending": pending}

    def demanded_facts(self) -> dict:
        """The mode-dependent layers of each class of the file (``class_layers``), asked by the
        project pass only of the files defining a class a pending finding evaluates
        (``ModeLayers``): most projects evaluate few models, and most files define none."""
        return class_layers(self.ctx.semantic)

    # -- (a) evaluation in training mode -------------------------------------------------
    def _evaluation_findings(self, sem) -> list:
        model, training = sem.model, sem.training
        out, reported = [], set()
        for loop in model.loops.values():
            node = loop.node
            if not isinstance(node, cst.For):
                continue
            kinds = training.loop_kinds(loop)
            if TRAINING in kinds or training.loop_runs(loop):
                continue
            function = enclosing_function(model, loop.scope)
            in_evaluation = is_evaluation_function(training, function if isinstance(function, cst.FunctionDef) else None)
            # the iterable's name is one piece of evidence, not the only one: any named
            # iterable (``data_source``, ``iterator``) in an evaluation function or with autograd off
            loader = _loader_name(node) if DATA in kinds else None
            if loader is None:
                loader = _iterable_name(node)
                if loader is None or not in_evaluation and grad_mode_through_callers(sem, node) is not Grad.DISABLED:
                    continue
            if self._lightning(node):
                continue
            evaluation = is_evaluation_name(loader) or EVALUATION in kinds or in_evaluation
            # a data loop under a grad-mode choice its callers make (``compute_accuracy(model,
            # loader)`` called under ``torch.inference_mode()``): reported where the model
            # is known to hold dropout or batch norm and nothing in the file calls eval()
            strict = not evaluation
            if strict and grad_mode_through_callers(sem, node) is not Grad.DISABLED:
                continue
            site = model_call(sem, loop)
            key = model_key(sem, site) if site is not None else None
            if key is None or strict and switched_anywhere(sem, "eval", key) \
                    or self._mode_chosen(sem, function, site, key, depth=0):
                continue
            reported.add((function, key))
            out.append(self._pending(sem, site.node, key, loader, strict, node))
        out.extend(self._evaluation_calls(sem, reported))
        return out

    def _evaluation_calls(self, sem, reported: set) -> list:
        """Evaluation recognised by what it does, whatever the loop (or no loop) it is in: a
        call of the model with autograd off (``with torch.no_grad():`` around it, around a
        call of its function, or set before it), or in a function named for running a
        trained model (``greedy_decode``, ``translate``, ``predict``) that trains nothing,
        while nothing in the file calls ``eval()``. Reported (strictly: its class known to
        hold dropout or batch norm) once per function and model."""
        model, training = sem.model, sem.training
        out = []
        for site in model.calls:
            key = model_key(sem, site)
            if key is None or switched_anywhere(sem, "eval", key):
                continue
            function = enclosing_function(model, site.scope)
            if (function, key) in reported or self._lightning(site.node):
                continue
            disabled = grad_mode_through_callers(sem, site.node) is Grad.DISABLED
            named = decodes(function) and not training.trains(function)
            if not disabled and not named:
                continue
            loops = [lp for lp in site.loops if training.loop_runs(lp)]
            if loops and (not disabled or trains_after(sem, model.calls_in_loop(loops[-1]), site)):
                continue  # the training step's own forward (a target, a pseudo-label), or a sample amid it
            if not disabled and any(training.loop_runs(lp) for c in sem.graph.callers(function) for lp in c.loops):
                continue  # ``sample_image(...)`` every few batches of a GAN's training: a sample amid training
            if not disabled and built_here(sem, key, site.node, function) and not _loads_weights(sem, function):
                continue  # ``def test_tagger(): m = Tagger(...); m(x)``: a shape check of a model just built, untrained
            if self._mode_chosen(sem, function, site, key, depth=0):
                continue
            reported.add((function, key))
            anchor = next((lp.node for lp in reversed(site.loops) if not training.loop_runs(lp)), site.node)
            loader = _iterable_name(anchor) if isinstance(anchor, cst.For) else None
            where = f"in `{function.name.value}`" if named else "with autograd off"
            out.append(self._pending(sem, site.node, key, loader, True, anchor, where))
        return out

    def _pending(self, sem, at: cst.CSTNode, key: str, loader: str | None, strict: bool, anchor: cst.CSTNode,
                 where: str = "") -> list:
        """The pending finding: [what the model may be, span, message if its class has
        dropout or batch norm, message if that is unknown, imported factories, strict, *fix]."""
        classes = model_classes(sem, key, at)
        if loader is not None:
            known, may = evaluated_in_training_mode(key, loader), evaluated_in_training_mode(key, loader, _MAY)
        else:
            known, may = run_in_training_mode(key, where), run_in_training_mode(key, where, _MAY)
        unread = next((c[len(UNREAD):] for c in classes if c is not None and c.startswith(UNREAD)), None)
        if unread is not None:
            may = evaluated_unread(key, unread, self.ctx.path.endswith(".ipynb"))
            # A notebook's class in a cell that does not parse: that cell is TL000's finding, and
            # Jupyter cannot run the notebook until it is fixed; only a class known to hold
            # dropout or batch norm is reported then.
            strict = strict or self.ctx.path.endswith(".ipynb")
        fix = self._eval_fix(sem, anchor, key) if isinstance(anchor, cst.For) else None
        return [classes, self._span(anchor), known, may, imported_factories(sem, key, at), strict, *trailing_json(fix)]

    def _eval_fix(self, sem, node: cst.For, key: str) -> Fix | None:
        """``key.eval()`` on the line above the evaluation loop, in a file that trains nothing
        (no backward, no step, no ``fit``), for a model the loop's own function (or module)
        builds or loads: nothing after the loop needs training mode back, and no caller in
        another file hands over a model it goes on training. ``key`` must not be rebound in
        the loop (the switch would reach another object). In a file that trains, where training
        mode comes back is a second edit: no fix."""
        sites = sem.training.sites
        loop = sem.model.loops[node]
        function = enclosing_function(sem.model, loop.scope)
        bindings = sem.model.reaching(key, loop.node)
        if sites.backward or sites.step or sites.fit or rebound_in(sem, key, loop) or not bindings or any(
                b.kind == "param" or enclosing_function(sem.model, b.scope) is not function for b in bindings):
            return None
        edit = insert_statement_before(self.ctx, loop.node, f"{key}.eval()")
        return Fix.unsafe(f"Call {key}.eval() before the evaluation loop", edit) if edit else None

    def _mode_chosen(self, sem, function: cst.CSTNode, at: "CallSite", key: str | None, depth: int) -> bool:
        """Some code that runs before the call ``at`` of the model ``key`` chooses that model's
        mode: an eval switch reaching it (``switch_reaches``) in this function or its
        callees; a train switch before it in a function that trains nothing (Monte-Carlo
        dropout on purpose); in every caller, an eval switch before the call that leads
        here, the model followed to the argument passed for it. Or the model is no local one
        and nobody in the file calls the function."""
        graph = sem.graph
        own = graph.sites(function)
        level = own if depth == 0 else [s for s in own if s.order < at.order]
        reached = graph.reach([t for s in level for t in graph.targets(s)])
        if any(switches(sem, s.node) == "eval" and switch_reaches(sem, s, key, level)
               for s in [*level, *(s for f in reached for s in graph.sites(f))]):
            return True
        trained = any(switches(sem, s.node) == "train" and s.order < at.order and switch_reaches(sem, s, key, own)
                      for s in own)
        if depth == 0 and trained and not isinstance(function, cst.Module) and not sem.training.trains(function):
            return True  # Monte-Carlo dropout: training mode chosen on purpose
        if depth > 0 and trained:
            return False  # the caller put the model in training mode before the call: no caller above changes that
        if isinstance(function, cst.Module):
            return False
        callers = graph.callers(function)
        if not callers:
            return depth > 0 or not built_here(sem, key, at.node, function)
        if depth >= 3:
            return True
        for site in callers:  # every call must choose it: one that does not runs the model in training mode
            outer = caller_key(sem.model, site, function, key) if key is not None and _parameter(function, key) else key
            if not self._mode_chosen(sem, enclosing_function(sem.model, site.scope), site, outer, depth + 1):
                return False
        return True

    # -- (b) eval mode left on for the next training step ----------------------------------------
    def _epoch_findings(self, sem) -> list:
        model, training, graph = sem.model, sem.training, sem.graph
        out, seen = [], set()
        for loop in model.loops.values():
            if training.loop_runs(loop) != {"backward", "step"}:
                continue
            if self._lightning(loop.node):
                continue
            inside = [s for s in model.calls if loop in s.all_loops]
            reached = graph.reach([t for s in inside for t in graph.targets(s)])
            sites = inside + [s for f in reached for s in graph.sites(f)]
            modes = [(switches(sem, s.node), s) for s in sites]
            trains = [s for mode, s in modes if mode == "train"]
            if optimises_only_inputs(sem, sites):
                continue  # the loop trains no model (an adversarial patch)
            for mode, site in modes:
                if mode != "eval" or site.node in seen or isinstance(self.ctx.parent(site.node), cst.WithItem):
                    continue  # ``with eval_mode(model):`` restores the mode on leaving the block
                receiver = switch_receiver(site.node)
                if receiver is None or api.looks_like_frozen_copy(receiver) or built_anew(sem, receiver, site, loop) \
                        or receiver_iterated(sem, receiver, site, loop, inside) or selected_submodule(sem, receiver, site):
                    continue  # a copy, the loop's own target, batch norms picked from the model's modules
                if any(switch_reaches(sem, t, level_key(sem, site, receiver, inside), inside) for t in trains):
                    continue  # training mode comes back for this model
                seen.add(site.node)
                classes = switched_classes(sem, site, receiver, inside)
                if None in classes and len(classes) == 1:
                    classes = [only_model_class(sem, loop.node)]
                call = cst.Module([]).code_for_node(site.node)
                unread = next((c[len(UNREAD):] for c in classes if c is not None and c.startswith(UNREAD)), None)
                may = left_in_eval_mode(call, receiver, _MAY) if unread is None else \
                    left_in_eval_mode(call, receiver, _unread_layers(unread, self.ctx.path.endswith(".ipynb")))
                out.append([classes, self._span(site.node), left_in_eval_mode(call, receiver), may, [], False,
                            *trailing_json(self._train_fix(sem, site, receiver))])
                break  # one train() fixes every eval() of the loop: one finding
        return out

    def _train_fix(self, sem, site, receiver: str) -> Fix | None:
        """``model.train()`` as the first statement of the innermost training loop around the
        eval switch (or around the one same-file call, from a loop, of the function holding
        it), where that is where training resumes: nothing in that loop's iteration trains
        after the switch (or the call), nor in the function after the switch, the
        model is named in the loop's scope (the argument passed for a parameter, ``self.m``
        through a method of the same object), and not rebound in the loop."""
        model, training = sem.model, sem.training
        anchor, key = site, receiver
        loop = innermost_training_loop(training, site)
        if loop is None:
            function = enclosing_function(model, site.scope)
            callers = [c for c in sem.graph.callers(function) if c.loops]
            if len(callers) != 1 or not isinstance(function, cst.FunctionDef) \
                    or trains_after(sem, sem.graph.sites(function), site):
                return None
            anchor, key = callers[0], caller_key(model, callers[0], function, receiver)
            loop = innermost_training_loop(training, anchor)
        if loop is None or key is None or not isinstance(loop.node.body, cst.IndentedBlock) \
                or trains_after(sem, model.calls_in_loop(loop), anchor) or rebound_in(sem, key, loop):
            return None
        edit = insert_statement_before(self.ctx, loop.node.body.body[0], f"{key}.train()")
        return Fix.unsafe(f"Call {key}.train() at the start of each training iteration", edit) if edit else None

    # -- shared ---------------------------------------------------------------------------
    def _lightning(self, node: cst.CSTNode) -> bool:
        """In a Lightning hook or a ``LightningModule``'s method: Lightning sets the modes."""
        if in_lightning_eval_hook(self.ctx, node):
            return True
        model = self.ctx.semantic.model
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                info = model.classes.get(anc)
                if info is not None and any(is_lightning_module(b) for c in model.mro(info) for b in c.bases):
                    return True
        return False

    def _span(self, node: cst.CSTNode) -> dict:
        return Span.of_range(self.ctx.position(node)).to_json()

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        layers = ModeLayers(project, cls.code)
        for record in project.records:
            for classes, span, known, may, factories, strict, *fix in \
                    (record.facts.get(cls.code) or {}).get("pending", ()):
                if factories and all((project.function_summary(f, record) or {}).get("returns_eval_model")
                                     for f in factories):
                    continue  # the imported factory returns the model in eval mode
                has = layers.of(classes, record)
                if has is False or strict and not has:
                    continue
                yield Finding.at(cls, record.path, Span.from_json(span), known if has else may,
                                 fix=from_trailing(fix))


def _loader_name(node: cst.For) -> str | None:
    """The data iterable a loop reads (``val_loader`` of ``enumerate(tqdm(val_loader))``);
    None for index loops (``range(num_batches)``)."""
    for sub in iter_nodes(node.iter):
        if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and sub.func.value == "range":
            return None
        if isinstance(sub, (cst.Name, cst.Attribute)):
            last = sub.value if isinstance(sub, cst.Name) else sub.attr.value
            if DATA_ITERABLE.search(last):
                return dotted_name(sub)
    return None


def _iterable_name(node: cst.For) -> str | None:
    """What a loop iterates, named (``data_source`` of ``enumerate(tqdm(data_source))``);
    None for index loops (``range(...)``) and other expressions."""
    it = node.iter
    while isinstance(it, cst.Call) and it.args and dotted_name(it.func) in _WRAPPING:
        it = it.args[0].value
    return dotted_name(it) if isinstance(it, (cst.Name, cst.Attribute)) else None


_WRAPPING = ("enumerate", "tqdm", "tqdm.tqdm", "zip", "iter", "tqdm.auto.tqdm", "progress_bar", "track")


def _parameter(function: cst.CSTNode, key: str) -> bool:
    """``key`` (or its head, ``model`` of ``model.module``) is a parameter of ``function``."""
    if not isinstance(function, cst.FunctionDef):
        return False
    head = key.split(".", 1)[0]
    params = function.params
    return any(p.name.value == head for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def _loads_weights(sem, function: cst.CSTNode) -> bool:
    """Some call in ``function`` loads trained weights (``load_state_dict``, ``torch.load``,
    ``from_pretrained``)."""
    return any((dotted_name(s.node.func) or "").rsplit(".", 1)[-1] in ("load_state_dict", "load", "from_pretrained")
               for s in sem.graph.sites(function))
