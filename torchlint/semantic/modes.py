"""Train / eval modes: which layers depend on the mode, which classes hold them, and where
code switches a model's mode.

* ``mode_layer(qualified)``: ``torch.nn`` layers whose behaviour ``model.eval()`` changes
  (dropouts, batch norms, transformer layers), True / False (another ``torch.nn`` class) /
  None (not ``torch.nn``).
* ``class_layers(sem)``: per class of the file, JSON for the project pass: whether its
  methods build a mode-dependent layer themselves, and the other callables they call (project
  classes, library builders, same-file helpers: unknown) that may build one.
* ``ModeLayers(project)``: settles those facts across files: does a project class (or a
  library constructor) have dropout or batch norm: True / False / None (cannot tell). The
  facts are asked of the file defining the class when a question needs them (TL011's
  ``demanded_facts``), never gathered on the ordinary pass.
* ``switches(sem, call)``: ``"eval"`` / ``"train"`` for ``m.eval()``, ``m.train()`` and
  helpers named for a mode (``set_eval_mode(m)``, ``enable_dropout(m)`` for Monte-Carlo
  dropout, ``set_bn_eval``); None otherwise.
* ``constructed_class(sem, key, at)``: the class a model variable was built from
  (``Net(...).to(device)``, ``nn.DataParallel(Net())``), as the project index names it.

Which model a loop evaluates or an epoch switches (TL011):

* ``model_called(sem, loop)``: the model a loop calls; ``imported_factories(sem, key, at)``:
  the imported functions that built it; ``built_here``: the function builds (or loads) it;
  ``argument_class``: the class every same-file caller passes for a parameter;
  ``only_model_class``: the class of the file's one model binding.
* ``built_anew``, ``receiver_iterated``: an eval switch on a copy built in the iteration or on
  the loop's own target, not the model the epoch trains.
* ``innermost_training_loop``, ``trains_after``, ``caller_key``, ``rebound_in``: where training
  resumes after a switch, and under what name the model is known there.

Functional code that reads the mode (TL008):

* ``mode_guarded(sem, call)``: under a test of ``self.training`` (or after an early return on it);
  ``rate_off_outside_training(sem, call)``: a dropout rate that is zero outside training.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic import epochs
from torchlint.semantic.callgraph import argument_name, enclosing_function
from torchlint.semantic.index import index_name
from torchlint.torch_api import strip_self_returning
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.project import FileRecord, Project
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import CallSite, Loop, SemanticModel
    from torchlint.semantic.training import TrainingModel

_NN = "torch.nn."
# Mode-dependent ``torch.nn`` layers (by last name): dropout drops only in training mode, batch
# norm uses batch statistics and updates its running ones only in training mode.
_MODE_LAYER = re.compile(r"^(?:.*Dropout\d?d?|(?:Lazy)?BatchNorm\d?d?|SyncBatchNorm|Transformer(?:Encoder|Decoder)?"
                         r"(?:Layer)?)$")
# ``torch.nn`` layers that take a ``dropout=`` (default 0: mode-dependent only when given).
_DROPOUT_ARGUMENT = frozenset({"RNN", "LSTM", "GRU", "MultiheadAttention"})
# ``torch.nn.functional`` calls that follow a ``training=`` argument.
_FUNCTIONAL_MODE = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                              "feature_alpha_dropout", "batch_norm"})
# Library builders whose models all hold dropout or batch norm.
_LIBRARY_MODELS = ("torchvision.models.", "timm.models.", "timm.create_model")
# Helpers named for a mode switch: set_eval_mode(m), model.apply(set_bn_eval), enable_dropout(m).
_MODE_HELPER = re.compile(r"(?:^|_)(?:eval|train)_?mode(?:$|_)|set_?(?:bn_?)?(?:eval|train)(?:$|_)|"
                          r"(?:enable|activate)_?(?:mc_?)?dropout",
                          re.IGNORECASE)
_MAX_DEPTH = 12


def mode_layer(qualified: str | None) -> bool | None:
    """True for a mode-dependent ``torch.nn`` layer class, False for another ``torch.nn``
    name, None for anything else."""
    if qualified is None or not qualified.startswith(_NN):
        return None
    last = qualified.rsplit(".", 1)[-1]
    return bool(_MODE_LAYER.match(last))


def _builds_mode_layer(model, call: cst.Call) -> bool | None:
    """For one call in a class's methods: True (a mode-dependent layer), False (some other
    ``torch``/builtin call), None (something to settle in the project pass)."""
    qualified = model.qualified_name(call.func)
    if qualified is None:
        return False
    last = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("torch.nn.functional."):
        return last in _FUNCTIONAL_MODE and api.keyword_arg(call, "training") is not None
    if qualified.startswith(_NN) and last in _DROPOUT_ARGUMENT:
        arg = api.keyword_arg(call, "dropout")
        return arg is not None and not (isinstance(arg.value, (cst.Integer, cst.Float)) and float(arg.value.value) == 0)
    found = mode_layer(qualified)
    if found is not None:
        return found
    if qualified.startswith(("torch.", "builtins.", "typing.", "math.", "copy.")) or qualified == "super":
        return False
    return None


def class_layers(sem: "Analyses") -> dict[str, list]:
    """``{class: [builds a mode layer itself, [qualified callables to settle]]}`` for every
    class of the file (names as the project index keys them)."""
    model = sem.model
    module = sem.ctx.module_name
    local_classes = {info.name: info for info in model.classes.values()}
    out: dict[str, list] = {}
    for info in model.classes.values():
        direct, calls = False, set()
        own = set(info.methods.values())
        for method in own:
            for site in sem.graph.sites(method):
                found = _builds_mode_layer(model, site.node)
                if found:
                    direct = True
                elif found is None:
                    name = _callable_name(sem, site.node.func, local_classes, module)
                    if name is not None:
                        calls.add(name)
                    # a same-file helper (``make_layers(cfg)``) may build one: unknown
                    calls.update(_helper_name(t, module) for t in sem.graph.targets(site)
                                 if isinstance(t, cst.FunctionDef) and t not in own)
        out[index_name(info.scope)] = [direct, sorted(calls)]
    return out


def _callable_name(sem: "Analyses", func: cst.BaseExpression, local_classes: dict, module: str) -> str | None:
    """A callee worth settling: an imported name (qualified), a same-file class (as the index
    names it); None for methods of values (``x.view``), ``self`` calls and locals."""
    model = sem.model
    if isinstance(func, cst.Name) and func.value in local_classes:
        name = index_name(local_classes[func.value].scope)
        return f"{module}.{name}" if module else name
    if model.is_imported(func):  # its chain's head (memoised with the name ``_builds_mode_layer`` asked)
        return model.qualified_name(func)
    return None


def _helper_name(function: cst.FunctionDef, module: str) -> str:
    """A name for a same-file helper that no class lookup resolves (so it settles as unknown)."""
    return f"{module}.{function.name.value}()" if module else f"{function.name.value}()"


class ModeLayers:
    """Across the project: does a class (or a library constructor) hold dropout or batch norm.
    A project class's ``class_layers`` are asked of the file defining it, the first time a
    question needs them (``Project.demand``: rule ``code``'s ``demanded_facts``)."""

    def __init__(self, project: "Project", code: str):
        self.project, self.code = project, code
        # qualified class name -> the records whose index lists it (the last by path counts)
        self._defined: dict[str, list["FileRecord"]] = {}
        for record in project.records:
            for fact in record.index.get("classes", ()):
                self._defined.setdefault(record.qualified(fact["name"]), []).append(record)
        self._memo: dict[str, bool | None] = {}

    def _fact(self, name: str) -> tuple["FileRecord", list] | None:
        """(the record, ``[builds a mode layer itself, callables to settle]``) of the project
        class ``name``, from the last file by path whose ``class_layers`` has it."""
        for record in reversed(self._defined.get(name, ())):
            layers = self.project.demand(self.code, record.path) or {}
            local = name[len(record.module_name) + 1:] if record.module_name else name
            if local in layers:
                return record, layers[local]
        return None

    def has(self, qualified: str | None, importer: "FileRecord | None" = None, depth: int = 0) -> bool | None:
        """True / False / None (unknown) for the class or constructor ``qualified``."""
        if qualified is None or depth > _MAX_DEPTH:
            return None
        if qualified.startswith(_LIBRARY_MODELS):
            return True
        found = mode_layer(qualified)
        if found is not None:
            return found
        name = self.project.resolve_class(qualified, importer) or qualified
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = None  # a cycle reads as unknown
        result = self._settle(name, depth)
        self._memo[name] = result
        return result

    def _settle(self, name: str, depth: int) -> bool | None:
        hit = self._fact(name)
        if hit is None:
            return None
        record, (direct, calls) = hit
        if direct:
            return True
        answers = [self.has(call, record, depth + 1) for call in calls]
        for base in self.project.ancestors(name):
            if self.project.is_project_class(base):
                answers.append(self.has(base, record, depth + 1))
            elif mode_layer(base) is None and not base.endswith(("LightningModule", "Module")):
                answers.append(None)
        if any(answers):
            return True
        return None if any(a is None for a in answers) else False


def switches(sem: "Analyses", call: cst.Call) -> str | None:
    """``"eval"`` / ``"train"`` for a call that sets a mode (``train(flag)`` counts as
    training: the mode it picks is unknown), None otherwise."""
    mode = api.mode_switch(call)
    if mode is not None:
        return "train" if mode else "eval"
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if not _MODE_HELPER.search(name):
        # model.apply(set_bn_eval): the helper handed on
        if name == "apply" and call.args and isinstance(call.args[0].value, (cst.Name, cst.Attribute)):
            handed = call.args[0].value
            name = handed.attr.value if isinstance(handed, cst.Attribute) else handed.value
            if not _MODE_HELPER.search(name):
                return None
        else:
            return None
    low = name.lower()
    return "train" if "train" in low or "dropout" in low else "eval"


def constructed_class(sem: "Analyses", key: str, at: cst.CSTNode, depth: int = 0) -> str | None:
    """The class ``key`` holds at ``at`` when every reaching assignment builds the same one:
    ``Net(...)``, ``Net(...).to(device)``, ``nn.DataParallel(Net())``, ``model = other``."""
    if depth > 4:
        return None
    model = sem.model
    names = set()
    for b in model.reaching(key, at):
        if b.kind not in ("assign", "ann") or b.value is None:
            return None
        names.add(_value_class(sem, b.value, b.node, depth))
    return names.pop() if len(names) == 1 else None


def _value_class(sem: "Analyses", value: cst.BaseExpression, at: cst.CSTNode, depth: int) -> str | None:
    value = strip_self_returning(value)
    if isinstance(value, (cst.Name, cst.Attribute)):
        key = api.expr_key(value)
        return constructed_class(sem, key, at, depth + 1) if key is not None else None
    if not isinstance(value, cst.Call):
        return None
    qualified = sem.model.qualified_name(value.func) or ""
    if qualified.rsplit(".", 1)[-1] in ("DataParallel", "DistributedDataParallel", "compile") and value.args:
        return _value_class(sem, value.args[0].value, at, depth + 1)
    local = {info.name: info for info in sem.model.classes.values()}
    return _callable_name(sem, value.func, local, sem.ctx.module_name)


def model_called(sem: "Analyses", loop: "Loop") -> str | None:
    """The key of a model the loop calls (``model(x)``, ``self.net(x)``; not a class or a
    function of the file, ``Net()``), if any."""
    models = sem.training.bindings["model"]
    for site in sem.model.calls:
        if loop not in site.loops:
            continue
        func = site.node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            continue
        key = api.expr_key(func)
        if key is not None and (key in models or api.looks_like_model_name(key)) and not api.looks_like_frozen_copy(key) \
                and not any(b.kind in ("class", "def") for b in sem.model.reaching(key, site.node)):
            return key  # ``Net()`` builds a model; it is no model called
    return None


def imported_factories(sem: "Analyses", key: str, at: cst.CSTNode) -> list[str]:
    """When every binding of ``key`` reaching ``at`` is the result of an imported function
    (``model = get_model(args)``, ``.to(device)`` of it too): those functions' qualified
    names, which the project pass looks up in the index (do they return the model in eval
    mode?); else nothing."""
    model = sem.model
    out = []
    for binding in model.reaching(key, at):
        value = strip_self_returning(binding.value) if binding.value is not None else None
        if binding.kind not in ("assign", "ann") or not isinstance(value, cst.Call) or not model.is_imported(value.func):
            return []
        out.append(model.qualified_name(value.func))
    return [q for q in out if q] if all(out) else []


def built_here(sem: "Analyses", key: str, at: cst.CSTNode, function: cst.CSTNode) -> bool:
    """``key`` is a model the function builds (or loads) itself: its mode is the function's
    business. ``model = model.to(device)`` of a parameter builds nothing."""
    bindings = sem.model.reaching(key, at)
    return bool(bindings) and all(enclosing_function(sem.model, b.scope) is function for b in bindings) \
        and constructed_class(sem, key, at) is not None


def argument_class(sem: "Analyses", function: cst.CSTNode, key: str) -> str | None:
    """For a parameter ``key`` of ``function``: the class every same-file caller passes."""
    if not isinstance(function, cst.FunctionDef):
        return None
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if key not in params:
        return None
    index = params.index(key) - (1 if params and params[0] in ("self", "cls") else 0)
    found = set()
    for site in sem.graph.callers(function):
        args = site.node.args
        arg = next((a for a in args if a.keyword is not None and a.keyword.value == key), None)
        if arg is None:
            positional = [a for a in args if a.keyword is None and not a.star]
            arg = positional[index] if 0 <= index < len(positional) else None
        value_key = api.expr_key(arg.value) if arg is not None else None
        found.add(constructed_class(sem, value_key, site.node) if value_key is not None else None)
    return found.pop() if len(found) == 1 else None


def built_anew(sem: "Analyses", receiver: str, site: "CallSite", loop: "Loop") -> bool:
    """The receiver is built anew in the epoch's iteration or in the callee (a copy to
    evaluate, ``Cls(...).to(device)``), not the model the epoch trains."""
    model = sem.model
    own = enclosing_function(model, site.scope)
    outer = enclosing_function(model, loop.scope)
    for b in model.reaching(receiver, site.node):
        if b.kind in ("assign", "ann") and b.value is not None and isinstance(strip_self_returning(b.value), cst.Call) and \
                (own is not outer and enclosing_function(model, b.scope) is own or sem.ctx.inside(b.node, loop.node)):
            return True
    return False


def receiver_iterated(sem: "Analyses", receiver: str, site: "CallSite", loop: "Loop", inside: list) -> bool:
    """The receiver is the loop's own target (``for block in blocks:``), directly or as the
    argument every call from the loop passes to the function holding the switch: each
    iteration trains and then switches another object (block-by-block training), so the
    next training step never meets the one switched."""
    model = sem.model
    if site in inside:
        return receiver in epochs.targets(loop)
    function = enclosing_function(model, site.scope)
    if not isinstance(function, cst.FunctionDef):
        return False
    calls = [s for s in inside if function in sem.graph.targets(s)]
    keys = [caller_key(model, call, function, receiver) for call in calls]
    names = epochs.targets(loop)
    return bool(keys) and all(key in names for key in keys)


def only_model_class(sem: "Analyses", at: cst.CSTNode) -> str | None:
    """The class of the file's one model binding, if it has exactly one."""
    models = sem.training.bindings["model"]
    if len(models) != 1:
        return None
    return constructed_class(sem, next(iter(models)), at)


def innermost_training_loop(training: "TrainingModel", site: "CallSite") -> "Loop | None":
    """The innermost loop of ``site``'s own scope around it whose iteration trains."""
    return next((loop for loop in reversed(site.loops) if training.loop_runs(loop) == {"backward", "step"}), None)


def trains_after(sem: "Analyses", sites: Iterable["CallSite"], anchor: "CallSite") -> bool:
    """One of ``sites`` (a loop's or a function's calls) after ``anchor`` runs a backward or
    a step (itself or through a same-file callee)."""
    training, graph = sem.training, sem.graph
    backward, step = training.closure("backward"), training.closure("step")
    trains = set(training.sites.backward) | {s for s, _ in training.sites.step}
    return any(s in trains or any(t in backward or t in step for t in graph.targets(s))
               for s in sites if s.order > anchor.order)


def caller_key(model: "SemanticModel", call: "CallSite", function: cst.FunctionDef, receiver: str) -> str | None:
    """What ``receiver`` (a key inside ``function``) is called at ``call``: the argument passed
    for it, or the caller's ``self`` path for the callee's ``self.m``."""
    candidates = [api.expr_key(a.value) for a in call.node.args if not a.star]
    outer_self = call.scope.self_name
    if outer_self is not None:
        candidates += [outer_self + receiver[receiver.find("."):]] if "." in receiver else [outer_self]
    return next((c for c in candidates if c is not None and argument_name(model, call, function, c) == receiver), None)


def rebound_in(sem: "Analyses", key: str, loop: "Loop") -> bool:
    """``key`` is bound inside ``loop`` (then a switch above it reaches another object)."""
    ctx = sem.ctx
    return any(b.node is loop.node or ctx.inside(b.node, loop.node) for b in loop.scope.bindings.get(key, ()))


def _reads_mode(expr: cst.CSTNode) -> bool:
    """The expression reads ``<x>.training`` (the module's mode) or a name ``training`` (the
    flag a functional helper takes, as ``F.dropout`` itself does)."""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "training" or isinstance(n, cst.Name)
               and n.value == "training" for n in iter_nodes(expr))


def rate_off_outside_training(sem: "Analyses", call: cst.Call) -> bool:
    """The rate is a variable that is zero whenever the module is not training:
    ``p = self.p if self.training else 0.0``, or ``if not training: dropout_p = 0.0`` before
    the call (``nn.MultiheadAttention``'s functional form)."""
    ctx, model = sem.ctx, sem.model
    positional = [a for a in call.args if a.keyword is None and not a.star]
    rate = api.keyword_arg(call, "p") or (positional[1] if len(positional) >= 2 else None)
    if rate is None or not isinstance(rate.value, cst.Name):
        return False
    for binding in model.reaching(rate.value.value, call):
        value = binding.value if binding.kind in ("assign", "ann") else None
        if isinstance(value, cst.IfExp) and _reads_mode(value.test) and (_zero(value.body) or _zero(value.orelse)):
            return True
        if _zero(value) and any(isinstance(anc, cst.If) and _reads_mode(anc.test) for anc in ctx.ancestors(binding.node)):
            return True
    return False


def _zero(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.evaluated_value) == 0.0


def mode_guarded(sem: "Analyses", call: cst.Call) -> bool:
    """Under an ``if``/conditional expression testing the mode, or after an ``if`` on the mode
    that returns or raises (``if not self.training: return x``) in the same function."""
    ctx, model = sem.ctx, sem.model
    function = ctx.enclosing_function(call)
    for anc in ctx.ancestors(call):
        if anc is function:
            break
        if isinstance(anc, (cst.If, cst.IfExp)) and _reads_mode(anc.test):
            return True
    if function is None:
        return False
    start = model.order.get(call, 0)
    for node in iter_nodes(function.body, into_scopes=False):
        if isinstance(node, cst.If) and model.order.get(node, start) < start and _reads_mode(node.test) \
                and any(isinstance(n, (cst.Return, cst.Raise)) for n in iter_nodes(node.body, into_scopes=False)):
            return True
    return False
