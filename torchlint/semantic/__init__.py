"""Shared analysis that rules query instead of tracking themselves.

What the six rules' private analysers needed (the union this package provides):

* scopes with bindings in order (TL001 ``_Frame``, TL002 ``_Scope``/``_Def``, TL003 ``_Scope``,
  TL004 ``_scope_bindings``, TL005 frames, TL006 unit stack) -> ``model.Scope``/``Binding``;
* which assignment a use sees (TL002 ``_reaching``, TL004 ``_literal_local``) ->
  ``SemanticModel.reaching``; names to imports, scope-aware -> ``SemanticModel.qualified_name``;
* the ``self`` name of a method and what ``self.x`` is assigned/read (TL005 ``_Frame``,
  ``_Class``) -> ``Scope.self_name``, ``ClassInfo.self_assigned``/``self_read``;
* call sites by callee (TL002 ``_calls``, TL003 ``_collect_sites``) -> ``SemanticModel.calls_to``;
* a same-file call graph with reachability (TL001 ``_resolve``/``_method``/``_reach``, TL006
  ``_callees``/``_class_and_bases``/``_reach``) -> ``callgraph.CallGraph``;
* loops per scope, outer loops (TL001 ``_loop_info``, TL006 ``_Loop``) -> ``model.Loop``;
* class bases (qualified), methods, same-file MRO (TL002 ``_is_module_class``, TL004
  ``_class_table``, TL005 ``_Class``, TL006 ``_class_bases``) -> ``ClassInfo``, ``SemanticModel.mro``;
* optimizer/scheduler/scaler/model/criterion/trainer bindings, backward/step/zero_grad/fit
  sites, loop kinds, trains/evaluates/once-per-batch closures, frozen modules, no-grad
  regions (TL001 events, TL002 ``_is_data_loop``/``_frozen``, TL003 ``_frozen``/
  ``_under_grad_context``, TL004 ``_is_epoch_loop``/``_trains``/``_file_trains``, TL006
  ``_trains``) -> ``training.TrainingModel``;
  the cheap ones need only the semantic model: ``training.grad_mode_exprs_of`` (what chooses
  the grad mode inside an enclosing ``with`` or function), ``in_lightning_eval_hook``, ``freeze_sites`` (frozen keys and where);
* library roots (three copies) -> ``libraries``;
* cross-file class hierarchies and "what does this imported function do" (TL004/TL005/TL006
  project passes, ``trace/confirm.py``) -> ``index.FileIndex`` + ``Project.ancestors``/
  ``subclasses``/``is_nn_module``/``function_summary``.

A rule reaches all of it through ``ctx.semantic`` (an ``Analyses``): each part is built the
first time it is asked for, once per file, so rules that ask nothing pay nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.semantic.callgraph import CallGraph
    from torchlint.semantic.index import FileIndex
    from torchlint.semantic.model import SemanticModel
    from torchlint.semantic.training import TrainingModel


class Analyses:
    """The lazily built analyses of one file (``ctx.semantic``)."""

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx
        self._model = self._graph = self._loose = self._training = None
        self._filling: "SemanticModel | None" = None

    def release(self) -> None:
        """Break the model's cycles (a scope holds its children, bindings, calls and loops;
        each of those names its scope) and drop every analysis: see ``FileContext.release``."""
        for model in (self._model, self._filling):
            if model is not None:
                for scope in model.scopes.values():  # bindings, calls, loops and classes name their scope
                    scope.__dict__.clear()
                model.__dict__.clear()
        self.__dict__.clear()

    @property
    def model(self) -> "SemanticModel":
        if self._model is None:
            if self._filling is not None:
                raise RuntimeError("the semantic model is filled by the engine's walk: ask for it from finish()")
            from torchlint.semantic.model import SemanticModel

            self._model = SemanticModel(self.ctx)
        return self._model

    def start_model(self) -> "SemanticModel":
        """For the engine's walk: an empty model it fills node by node (see ``finish_model``)."""
        from torchlint.semantic.model import SemanticModel

        self._filling = SemanticModel(self.ctx, walk=False)
        return self._filling

    def finish_model(self) -> None:
        model, self._filling = self._filling, None
        if model is not None:
            model.finish()
            self._model = model

    @property
    def graph(self) -> "CallGraph":
        """The exact call graph (``self.m()`` through the class, no by-name guesses)."""
        if self._graph is None:
            from torchlint.semantic.callgraph import CallGraph

            self._graph = CallGraph(self.model)
        return self._graph

    @property
    def loose_graph(self) -> "CallGraph":
        """The call graph plus by-name method edges (``x.m()`` -> every method ``m``); it
        shares the exact graph's answers where no by-name edge could enter them."""
        if self._loose is None:
            from torchlint.semantic.callgraph import CallGraph

            self._loose = CallGraph(self.model, loose=True, exact=self.graph)
        return self._loose

    @property
    def has_training(self) -> bool:
        """Whether a rule built the training model (the index's function summaries need it)."""
        return self._training is not None

    @property
    def training(self) -> "TrainingModel":
        if self._training is None:
            from torchlint.semantic.training import TrainingModel

            self._training = TrainingModel(self.ctx, self.model, self.graph)
        return self._training

    def index(self, classes: list | None = None) -> "FileIndex":
        """This file's facts for the project index (classes, top-level functions); ``classes``:
        the class facts the engine already took from the file's tree (else computed here)."""
        from torchlint.semantic.index import build_index

        return build_index(self, classes)
