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
  the loop's own target, not the model the epoch trains; ``selected_submodule``: one on
  submodules picked in a loop over a model's modules (frozen batch-norm statistics).
* ``bound_nowhere`` (from ``semantic.fragments``): a model name nothing in the file binds (a
  fragment; ``UNBOUND``).
* ``innermost_training_loop``, ``trains_after``, ``caller_key``, ``rebound_in``: where training
  resumes after a switch, and under what name the model is known there.

Functional code that reads the mode (TL008):

* ``mode_guarded(sem, call)``: under a test of ``self.training`` (or after an early return on it);
  ``rate_off_outside_training(sem, call)``: a dropout rate that is zero outside training.
"""

from __future__ import annotations

import builtins
import re
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from torchlint import torch_api as api
from torchlint.libraries import UTILITY_ROOTS, root
from torchlint.semantic import epochs
from torchlint.semantic.callgraph import argument_name, bound_argument, enclosing_function, passed_argument
from torchlint.semantic.constructors import bound_key, origins
from torchlint.semantic.fragments import bound_nowhere
from torchlint.semantic.index import index_name
from torchlint.semantic.modules import RUNNERS, self_attr_bindings
from torchlint.semantic.runs import over_tensors
from torchlint.torch_api import SELF_RETURNING, strip_self_returning
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.project import FileRecord, Project
    from torchlint.semantic import Analyses
    from torchlint.semantic.model import CallSite, ClassInfo, Loop, SemanticModel
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
        positional = [a for a in call.args if a.keyword is None and not a.star]
        training = api.keyword_arg(call, "training") is not None or len(positional) >= (5 if last == "batch_norm" else 3)
        return last in _FUNCTIONAL_MODE and training
    if qualified.startswith(_NN) and last in _DROPOUT_ARGUMENT:
        arg = api.keyword_arg(call, "dropout")
        return arg is not None and not (isinstance(arg.value, (cst.Integer, cst.Float)) and float(arg.value.value) == 0)
    found = mode_layer(qualified)
    if found is not None:
        return found
    if qualified.startswith(("torch.", "builtins.", "typing.", "math.", "copy.")) or qualified == "super" \
            or root(qualified) in UTILITY_ROOTS:
        return False  # a tensor, a number, a string: no layer
    return None


def class_layers(sem: "Analyses") -> dict[str, list]:
    """``{class: [builds a mode layer itself, [qualified callables to settle]]}`` for every
    class of the file (names as the project index keys them).

    What a class builds is read from its construction code: every method but those only its
    ``forward`` runs (``forward_only``). There a call counts only when it is a functional
    form that follows the mode (``F.dropout(x, training=self.training)``) or its result is
    stored on ``self`` (a layer built lazily): a helper computing a tensor, a hidden state or
    a resize in ``forward`` builds no submodule, and ``nn.Dropout(p)(x)`` there is a fresh
    layer, always training, that ``eval()`` never reaches."""
    model = sem.model
    module = sem.ctx.module_name
    local_classes = {info.name: info for info in model.classes.values()}
    out: dict[str, list] = {}
    for info in model.classes.values():
        direct, calls = False, set()
        own = set(info.methods.values())
        running = forward_only(sem, info)
        for method in own:
            for site in sem.graph.sites(method):
                found = _builds_mode_layer(model, site.node)
                if found and method in running and not _stored_on_self(sem, site.node) \
                        and not (model.qualified_name(site.node.func) or "").startswith("torch.nn.functional."):
                    continue  # ``nn.Dropout(p)(x)`` in forward: a fresh layer, always training, eval() cannot reach it
                if found:
                    direct = True
                elif found is None and (method not in running or _stored_on_self(sem, site.node)):
                    name = _callable_name(sem, site.node.func, local_classes, module)
                    if name is not None:
                        calls.add(name)
                    # a same-file helper (``make_layers(cfg)``) may build one: unknown
                    # (not a method of another class: ``super().__init__()`` resolves to some
                    # ``__init__`` of the file, and builds nothing of this class)
                    calls.update(_helper_name(t, module) for t in sem.graph.targets(site)
                                 if isinstance(t, cst.FunctionDef) and t not in own
                                 and (t not in model.scopes or model.scopes[t].self_name is None))
        out[index_name(info.scope)] = [direct, sorted(calls)]
    return out


def forward_only(sem: "Analyses", info: "ClassInfo") -> set[cst.CSTNode]:
    """The methods of ``info`` that only its forward runs: ``forward`` (Lightning's
    ``training_step`` too) and the methods whose every same-file caller is one of them
    (``self._init_hidden(batch)``). A method nobody in the file calls is no such one (it may
    build layers when called from elsewhere)."""
    own = set(info.methods.values())
    found = {info.methods[name] for name in RUNNERS if name in info.methods}
    changed = True
    while changed:
        changed = False
        for method in own - found:
            callers = sem.graph.callers(method)
            if callers and all(enclosing_function(sem.model, c.scope) in found for c in callers):
                found.add(method)
                changed = True
    return found


def _stored_on_self(sem: "Analyses", call: cst.Call) -> bool:
    """``self.x = call`` (``.to(device)`` of it too): a layer built lazily, in ``forward``."""
    parent = sem.ctx.parent
    above = parent(call)
    while isinstance(above, cst.Attribute) and above.attr.value in SELF_RETURNING and isinstance(parent(above), cst.Call):
        above = parent(parent(above))
    if not isinstance(above, (cst.Assign, cst.AnnAssign)):
        return False
    self_name = sem.model.scope_of(call).self_name
    targets = [t.target for t in above.targets] if isinstance(above, cst.Assign) else [above.target]
    return self_name is not None and any(
        isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == self_name for t in targets)


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

    def of(self, classes: list, importer: "FileRecord | None" = None) -> bool | None:
        """For what a value may hold (``model_classes`` entries): True when one of them has
        dropout or batch norm, False when none has (a plain function has no mode), None when
        it cannot be told (an entry unknown or unread, and none has them). A name bound
        nowhere (``UNBOUND``) holds no model the code can run: no layer to tell of."""
        answers = [False if c in (NOT_A_MODEL, UNBOUND) else True if c == HOLDS_MODE_LAYER else
                   None if c is None or c.startswith(UNREAD) else self.has(c, importer) for c in classes or [None]]
        if any(answers):
            return True
        return None if any(a is None for a in answers) else False

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


# ``model_classes`` entries besides a class name: a plain function or lambda (no mode at
# all), and ``?Name``: a call of a name nothing the file holds defines (a notebook cell that
# does not parse, a file that does not import it).
NOT_A_MODEL = "()"
UNREAD = "?"
HOLDS_MODE_LAYER = "(dropout or batch norm)"
# A plain name no code of the file binds (a slide's or an exercise's fragment, ``outputs =
# net(images)`` with ``net`` defined in another piece): the code cannot run as written, and
# what it would hold is nowhere to be read.
UNBOUND = "(bound nowhere)"


def model_classes(sem: "Analyses", key: str, at: cst.CSTNode, depth: int = 0) -> list[str | None]:
    """What ``key`` may hold at ``at``, one entry per way it gets its value, each once: the
    class it was built from, as the project index names it (``Net(...).to(device)``,
    ``nn.DataParallel(Net())``, ``copy.deepcopy(net)``, what a same-file function returns);
    for a parameter, what every same-file caller passes (``def evaluate(model, loader)``
    called with ``Net()``, a closure's parameter of the function around it too); for
    ``obj.attr`` and ``self.attr``, what the class of ``obj`` (else every class of the file
    that stores an ``attr``) stores there; ``NOT_A_MODEL`` for a function (``def net(X):``);
    ``UNREAD + name`` for a call of a name nothing in the file defines; ``UNBOUND`` for a
    name nothing in the file binds (``bound_nowhere``); None where it cannot be told."""
    if depth > _MAX_CLASS_DEPTH:
        return [None]
    bindings = sem.model.reaching(key, at)
    if not bindings:
        if "." in key:
            return _attribute_classes(sem, key, at, depth)
        return [UNBOUND] if bound_nowhere(sem, key) else [None]
    out: list[str | None] = []
    for b in bindings:
        if b.kind in ("def", "class"):
            found = [NOT_A_MODEL] if b.kind == "def" else [None]
        elif b.kind in ("assign", "ann") and b.value is not None:
            found = _value_classes(sem, b.value, b.node, depth + 1)
        elif b.kind == "param":
            found = _parameter_classes(sem, b, depth + 1)
        else:
            found = [None]
        out.extend(f for f in found if f not in out)
    return out


_MAX_CLASS_DEPTH = 6
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def _layers_held(sem: "Analyses", call: cst.Call, at: cst.CSTNode, depth: int) -> list[str | None]:
    """What a literal ``nn.Sequential(...)``/``nn.ModuleList([...])`` holds: ``HOLDS_MODE_LAYER``
    for a dropout or batch norm among its layers (``nn.LSTM(..., dropout=0.2)`` too), the
    classes of the others that may hold one (a block class, a model handed in)."""
    out: list[str | None] = []
    values = []
    for arg in call.args:
        value = arg.value
        if isinstance(value, (cst.List, cst.Tuple)):
            values.extend(e.value for e in value.elements if not isinstance(e, cst.StarredElement))
        elif isinstance(value, cst.Dict):
            values.extend(e.value for e in value.elements if isinstance(e, cst.DictElement))
        elif not arg.star:
            values.append(value)
    for value in values:
        if isinstance(value, cst.Call):
            built = _builds_mode_layer(sem.model, value)
            got = [HOLDS_MODE_LAYER] if built else [] if built is False else _value_classes(sem, value, at, depth + 1)
        elif isinstance(value, (cst.Name, cst.Attribute)) and api.expr_key(value) is not None:
            got = model_classes(sem, api.expr_key(value), at, depth + 1)
        else:
            got = []
        out.extend(g for g in got if g is not None and g not in out)
    return out
_WRAPPERS = ("DataParallel", "DistributedDataParallel", "compile", "deepcopy")


def _undefined(sem: "Analyses", name: str) -> str | None:
    """``UNREAD + name`` for a class name (capitalised) bound nowhere in the file (no star
    import may bring it, no builtin has it)."""
    if sem.ctx.star_imports or not name[:1].isupper() or hasattr(builtins, name):
        return None
    return UNREAD + name


def _value_classes(sem: "Analyses", value: cst.BaseExpression, at: cst.CSTNode, depth: int) -> list[str | None]:
    model = sem.model
    value = strip_self_returning(value)
    if isinstance(value, cst.Lambda):
        return [NOT_A_MODEL]
    if isinstance(value, (cst.Name, cst.Attribute)):
        key = api.expr_key(value)
        return model_classes(sem, key, at, depth) if key is not None else [None]
    if isinstance(value, cst.Await):
        return [None]
    if not isinstance(value, cst.Call):
        return [None]
    qualified = model.qualified_name(value.func) or ""
    if qualified.rsplit(".", 1)[-1] in _WRAPPERS and value.args:
        return _value_classes(sem, value.args[0].value, at, depth + 1)
    if qualified in _CONTAINERS:
        return [qualified, *_layers_held(sem, value, at, depth)]
    local = {info.name: info for info in model.classes.values()}
    name = _callable_name(sem, value.func, local, sem.ctx.module_name)
    if name is not None:
        return [name, *_handed_models(sem, value, at, depth)]
    if isinstance(value.func, cst.Name):
        found = model.reaching(value.func.value, value)
        functions = [b.node for b in found if b.kind == "def"]
        if found and len(functions) == len(found):  # a same-file factory: what it returns
            out: list[str | None] = []
            for function in functions:
                returns = [r for r in model.scopes[function].returns if r.value is not None] \
                    if function in model.scopes else []
                for r in returns or [None]:
                    got = _value_classes(sem, r.value, r, depth + 1) if r is not None else [None]
                    out.extend(g for g in got if g not in out)
            return out
        if not found:
            return [_undefined(sem, value.func.value)]
    return [None]


def _handed_models(sem: "Analyses", call: cst.Call, at: cst.CSTNode, depth: int) -> list[str]:
    """The classes of the models a constructor call is handed (``Seq2Seq(encoder, decoder)``:
    what ``encoder`` and ``decoder`` were built from): a composite model keeps them as its
    submodules, their dropout and batch norm are its own. Counted: classes of the file, and
    any class of an argument named like a model (``encoder``, ``backbone``); an imported
    helper's result (a vocabulary, a config) is no submodule."""
    out: list[str] = []
    local = {info.name: info for info in sem.model.classes.values()}
    own = {_local_name(sem, info) for info in local.values()}
    for arg in call.args:
        if arg.star or not isinstance(arg.value, (cst.Name, cst.Attribute, cst.Call)):
            continue
        value = arg.value
        if isinstance(value, cst.Call):
            named = False
            got = [_callable_name(sem, value.func, local, sem.ctx.module_name)]
        else:
            key = api.expr_key(value)
            named = key is not None and api.looks_like_model_name(key)
            got = model_classes(sem, key, at, depth + 1) if key is not None else []
        out.extend(g for g in got if isinstance(g, str) and g not in (NOT_A_MODEL, UNBOUND) and not g.startswith(UNREAD)
                   and (named or g in own) and g not in out)
    return out


def _parameter_classes(sem: "Analyses", binding, depth: int) -> list[str | None]:
    """What every same-file caller passes for the parameter ``binding`` binds."""
    function = binding.scope.node
    if not isinstance(function, cst.FunctionDef):
        return [None]
    callers = sem.graph.callers(function)
    if not callers:
        return [None]
    out: list[str | None] = []
    for site in callers:
        value = _passed(sem, site, function, binding.key)
        got = _value_classes(sem, value, site.node, depth + 1) if value is not None else [None]
        out.extend(g for g in got if g not in out)
    return out


def _passed(sem: "Analyses", site: "CallSite", function: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
    """The expression ``site`` passes for ``param``; through ``C(...)`` for a constructor."""
    model = sem.model
    scope = model.scopes[function]
    if scope.self_name is not None and function.name.value == "__init__" and isinstance(site.node.func, cst.Name):
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)][1:]
        found = bound_argument(site.node, params, param)
        return None if found is ... else found
    return passed_argument(model, site, function, param)


def _attribute_classes(sem: "Analyses", key: str, at: cst.CSTNode, depth: int) -> list[str | None]:
    """``obj.attr``: what the class of ``obj`` stores in ``self.attr`` (``self.attr`` in a
    method: its own class); when the class of ``obj`` cannot be told, what every class of the
    file that stores an ``attr`` stores there, if any does."""
    model = sem.model
    head, _, attr = key.rpartition(".")
    if "." in attr or not attr:
        return [None]
    infos = []
    scope = model.scope_of(at)
    if head == scope.self_name and scope.cls is not None:
        infos = [scope.cls]
    else:
        classes = model_classes(sem, head, at, depth + 1)
        by_name = {_local_name(sem, info): info for info in model.classes.values()}
        infos = [by_name[c] for c in classes if c in by_name]
        if len(infos) != len(classes):
            infos = []
    if not infos:
        infos = [info for info in model.classes.values() if attr in info.self_assigned]
    out: list[str | None] = []
    for info in infos:
        found = [b for cls in model.mro(info) for b in self_attr_bindings(model, cls, attr)]
        for b in found or [None]:
            if b is None or b.kind not in ("assign", "ann") or b.value is None:
                got = [None]
            else:
                got = _value_classes(sem, b.value, b.node, depth + 1)
            out.extend(g for g in got if g not in out)
    return out or [None]


def _local_name(sem: "Analyses", info: "ClassInfo") -> str:
    module = sem.ctx.module_name
    name = index_name(info.scope)
    return f"{module}.{name}" if module else name


def switched_classes(sem: "Analyses", site: "CallSite", receiver: str, inside: list) -> list[str | None]:
    """What the model an eval switch at ``site`` reaches may be (``model_classes``): for a
    switch in a function the loop's own calls run (``validate(model)``), what those calls
    pass for ``receiver``; else what ``receiver`` holds at the switch."""
    model = sem.model
    function = enclosing_function(model, site.scope)
    if site not in inside and isinstance(function, cst.FunctionDef):
        out: list[str | None] = []
        for call in (s for s in inside if function in sem.graph.targets(s)):
            key = caller_key(model, call, function, receiver)
            if key is None:
                out = []
                break
            out.extend(c for c in model_classes(sem, key, call.node) if c not in out)
        if out:
            return out
    return model_classes(sem, receiver, site.node)


def optimises_only_inputs(sem: "Analyses", sites: Iterable["CallSite"]) -> bool:
    """Every optimizer step among ``sites`` (a loop's calls and its callees') is of an
    optimizer built over plain tensors (``SGD([patch])``, ``LBFGS([input_img])``: an
    adversarial patch, style transfer, feature visualisation): the loop optimises inputs
    through a fixed model, it trains no model."""
    model, training = sem.model, sem.training
    steps = {s: key for s, key in training.sites.step}
    found = False
    for site in sites:
        key = steps.get(site)
        if key is None:
            continue
        found = True
        bindings = model.reaching(key, site.node)
        if not bindings or any(b.kind not in ("assign", "ann") or not isinstance(b.value, cst.Call)
                               or not api.is_optimizer_constructor(sem.ctx, b.value.func) or not over_tensors(b.value)
                               for b in bindings):
            return False
    return found


def model_key(sem: "Analyses", site: "CallSite") -> str | None:
    """The key of the model ``site`` calls (``model(x)``, ``self.net(x)``: a model binding or a
    model-like name; not a class or a function of the file, ``Net()``, nor an EMA, teacher or
    target copy), or None."""
    func = site.node.func
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return None
    key = api.expr_key(func)
    if key is None:
        return None
    names = sem.model.memo("model_key_names")  # what the key alone says, once per key (TL011 asks of every call)
    named = names.get(key, names)
    if named is names:
        named = names[key] = _named_model(sem, key)
    if named is None:
        return None
    reaching = sem.model.reaching(key, site.node)
    if not named and not _model_passed(sem, key, reaching):
        return None
    if any(b.kind in ("class", "def") for b in reaching):
        return None  # ``Net()`` builds a model; it is no model called
    return key


def _named_model(sem: "Analyses", key: str) -> bool | None:
    """``model_key``'s verdict on the key alone: True where it names a model (a model binding,
    a model-like name, a name the file switches to train or eval mode), False where only its
    bindings can say (a plain name: a parameter a caller passes a model for), None for an EMA,
    teacher or target copy or a dotted key named for no model."""
    if api.looks_like_frozen_copy(key):
        return None
    if key in sem.training.bindings["model"] or api.looks_like_model_name(key) or key in _switched_receivers(sem):
        return True
    return False if key.isidentifier() else None  # ``_model_passed`` wants parameters, plain names


def _switched_receivers(sem: "Analyses") -> set[str]:
    """The names the file calls ``.train()``/``.eval()`` on (``encoder.train()``): modules."""
    memo = sem.model.memo("modes_switched_receivers")
    if None not in memo:
        memo[None] = {api.expr_key(s.node.func.value) for s in sem.model.calls
                      if isinstance(s.node.func, cst.Attribute) and s.node.func.attr.value in ("train", "eval")
                      and api.mode_switch(s.node) is not None} - {None}
    return memo[None]


def _model_passed(sem: "Analyses", key: str, bindings: list, depth: int = 0) -> bool:
    """``key`` is a parameter (``def validate(val_loader, encoder, decoder)``) for which a
    same-file caller passes a model: a model binding, a model-like name, a name the file
    switches to train or eval mode, or a parameter for which its own callers pass one."""
    params = [b for b in bindings if b.kind == "param"]
    if not params or len(params) != len(bindings) or depth > 3:
        return False
    for b in params:
        function = b.scope.node
        if not isinstance(function, cst.FunctionDef):
            return False
        for site in sem.graph.callers(function):
            value = passed_argument(sem.model, site, function, key)
            outer = api.expr_key(value) if value is not None else None
            if outer is None or api.looks_like_frozen_copy(outer):
                continue
            if outer in sem.training.bindings["model"] or api.looks_like_model_name(outer) \
                    or outer in _switched_receivers(sem) or _model_passed(sem, outer, sem.model.reaching(outer, site.node), depth + 1):
                return True
    return False


# Functions that run a trained model on new input: decoding, translating, generating.
_DECODING = re.compile(r"(?:^|_)(?:decode|decoding|translate|generate|generation|beam_?search|greedy|caption|"
                       r"transcribe|predict\w*|infer\w*|sample|evaluate\w*|eval|validate|test)(?:_|$)")


def decodes(function: cst.CSTNode) -> bool:
    """A function named for running a trained model on new input (``greedy_decode``,
    ``translate``, ``generate_text``, ``predict``, ``evaluate``)."""
    return isinstance(function, cst.FunctionDef) and bool(_DECODING.search(function.name.value.lower()))


def switch_receiver(call: cst.Call) -> str | None:
    """``model`` of ``model.eval()``; the first argument of a mode helper (``set_eval_mode(model)``)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("eval", "train", "apply"):
        return api.expr_key(func.value)
    return api.expr_key(call.args[0].value) if call.args and call.args[0].keyword is None else None


def _related(receiver: str, key: str) -> bool:
    """The same object, or one holding the other (``model.module``, ``self.model.encoder``)."""
    return receiver == key or key.startswith(receiver + ".") or receiver.startswith(key + ".")


def _parameter_of(function: cst.CSTNode, key: str) -> bool:
    if not isinstance(function, cst.FunctionDef):
        return False
    head = key.split(".", 1)[0]
    params = function.params
    return any(p.name.value == head for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def switch_reaches(sem: "Analyses", switch: "CallSite", key: str | None, level: Iterable["CallSite"]) -> bool:
    """Whether the mode switch at ``switch`` may reach the model the code holding the calls
    ``level`` names ``key``: its receiver is ``key`` (or holds it, or is held by it), for a
    switch among ``level``; for a switch in a function one of ``level`` calls, the argument
    that call passes for the receiver is (a global or ``self`` path: the same name). True
    where that cannot be told (no receiver, ``key`` None, a switch deeper down, a receiver
    passed through ``*args``): a switch then counts."""
    receiver = switch_receiver(switch.node)
    if receiver is None or key is None:
        return True
    level = list(level)
    if switch in level:
        return _related(receiver, key)
    model = sem.model
    function = enclosing_function(model, switch.scope)
    calls = [s for s in level if function in sem.graph.targets(s)]
    if not calls or not isinstance(function, cst.FunctionDef):
        return True
    parameter = _parameter_of(function, receiver) or receiver.split(".", 1)[0] == model.scopes[function].self_name
    for call in calls:
        seen = caller_key(model, call, function, receiver) if parameter else receiver
        if seen is None or _related(seen, key):
            return True
    return False


def level_key(sem: "Analyses", switch: "CallSite", receiver: str, level: Iterable["CallSite"]) -> str | None:
    """What the code holding the calls ``level`` names the receiver of ``switch``: the
    receiver itself for a switch among them; for one in a function they call, the argument
    every such call passes for it (a global or ``self`` path: its own name); None where
    that cannot be told."""
    level = list(level)
    if switch in level:
        return receiver
    model = sem.model
    function = enclosing_function(model, switch.scope)
    calls = [s for s in level if function in sem.graph.targets(s)]
    if not calls or not isinstance(function, cst.FunctionDef):
        return None
    if not (_parameter_of(function, receiver) or receiver.split(".", 1)[0] == model.scopes[function].self_name):
        return receiver
    keys = {caller_key(model, call, function, receiver) for call in calls}
    return keys.pop() if len(keys) == 1 else None


def switching_sites(sem: "Analyses", mode: str) -> list["CallSite"]:
    """The file's calls that switch a model to ``mode`` (``"eval"``/``"train"``: ``switches``),
    in source order; both lists made in one pass over the file's calls, kept."""
    memo = sem.model.memo("switching_sites")
    if not memo:
        memo.update({"eval": [], "train": []})
        for site in sem.model.calls:
            switched = switches(sem, site.node)
            if switched is not None:
                memo[switched].append(site)
    return memo[mode]


def switched_anywhere(sem: "Analyses", mode: str, key: str | None = None) -> bool:
    """Some call of the file switches a model to ``mode`` (``"eval"``/``"train"``); with
    ``key``, one that may reach the model the module or a function names ``key`` (its
    receiver, or what a same-file caller passes for it; any switch whose receiver cannot be
    followed counts)."""
    memo = sem.model.memo("modes_switched")
    if (mode, key) not in memo:
        graph = sem.graph
        found = False
        for site in switching_sites(sem, mode):
            receiver = switch_receiver(site.node)
            function = enclosing_function(sem.model, site.scope)
            if key is None or receiver is None or _related(receiver, key):
                found = True
            elif _parameter_of(function, receiver):
                callers = graph.callers(function)
                found = not callers or any(switch_reaches(sem, site, key, [c]) for c in callers)
            if found:
                break
        memo[(mode, key)] = found
    return memo[(mode, key)]


def never_switched_to_eval(sem: "Analyses", info: "ClassInfo") -> bool:
    """The file builds ``info``'s class and nothing it builds of it can be put in evaluation
    mode here: every construction (``D = Discriminator().to(device)``) is bound to a name or
    ``self.`` attribute, and no switch to eval mode in the file may reach one of them
    (``switched_anywhere``: a switch whose receiver cannot be followed counts). A GAN's
    discriminator that only ever trains. False where the file builds none (its users are
    elsewhere) or hands a construction on unbound (``nn.Sequential(Block())``)."""
    model = sem.model
    keys = []
    for site in model.calls:
        func = site.node.func
        if not isinstance(func, cst.Name) or func.value != info.name:
            continue
        if not any(b.kind == "class" and b.node is info.node for b in model.lookup(func.value, site.scope, site.node)):
            continue
        key = bound_key(sem.ctx, site.node, self_returning=True)
        if key is None:
            return False
        keys.append(key)
    return bool(keys) and not any(switched_anywhere(sem, "eval", key) for key in keys)


def model_call(sem: "Analyses", loop: "Loop") -> "CallSite | None":
    """The first call of a model in the loop (``model_key``), if any."""
    return next((site for site in sem.model.calls if loop in site.loops and model_key(sem, site) is not None), None)


def model_called(sem: "Analyses", loop: "Loop") -> str | None:
    """The key of a model the loop calls (``model(x)``, ``self.net(x)``; not a class or a
    function of the file, ``Net()``), if any."""
    site = model_call(sem, loop)
    return model_key(sem, site) if site is not None else None


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


# The calls that walk a module's submodules.
_SUBMODULE_WALKS = frozenset({"modules", "named_modules", "children", "named_children"})


def selected_submodule(sem: "Analyses", receiver: str, site: "CallSite") -> bool:
    """The switch at ``site`` reaches only some submodules of a model, picked one by one: its
    receiver is the target of a loop of its own scope over a module's submodules
    (``for n, m in model.named_modules():``, ``.modules()``, ``.children()``) and the switch
    runs under a test inside that loop (``if isinstance(m, nn.BatchNorm2d): m.eval()``, or after
    ``if not ...: continue``); or the switch is ``model.apply(fn)`` of a same-file ``fn`` that
    switches its module only under a test (``def set_bn_eval(m): if isinstance(m,
    nn.BatchNorm2d): m.eval()``): frozen batch-norm statistics, the model itself staying in
    training mode. A switch of every submodule walked (no test) is the whole model's."""
    ctx = sem.ctx
    func = site.node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "apply":
        return _picks_modules(sem, site.node)
    for loop in reversed(site.loops):
        node = loop.node
        if not isinstance(node, cst.For) or receiver not in epochs.targets(loop):
            continue
        if not any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _SUBMODULE_WALKS
                   for n in iter_nodes(node.iter)):
            return False
        return _guarded_in(ctx, site.node, node)
    return False


def _picks_modules(sem: "Analyses", call: cst.Call) -> bool:
    """``model.apply(fn)``: ``fn`` is a function of the file whose every mode switch of its
    module parameter runs under a test."""
    if not call.args or not isinstance(call.args[0].value, cst.Name):
        return False
    bound = sem.model.reaching(call.args[0].value.value, call)
    if len(bound) != 1 or bound[0].kind != "def" or bound[0].node not in sem.model.scopes:
        return False
    function = bound[0].node
    params = function.params.params
    if not params:
        return False
    param = params[0].name.value
    found = [s for s in sem.graph.sites(function) if switches(sem, s.node) is not None
             and switch_receiver(s.node) == param]
    return bool(found) and all(_guarded_in(sem.ctx, s.node, function) for s in found)


def _guarded_in(ctx, node: cst.CSTNode, block: cst.For | cst.FunctionDef) -> bool:
    """``node`` runs in ``block``'s body only under a test: inside an ``if`` (not its test)
    within it, or after an ``if ...: continue`` (a loop) or ``if ...: return`` (a function)."""
    statement = None
    for up in ctx.ancestors(node):
        if up is block:
            break
        if isinstance(up, cst.If) and not ctx.inside(node, up.test):
            return True
        if ctx.parent(up) is block.body:
            statement = up
    body = block.body.body if isinstance(block.body, cst.IndentedBlock) else ()
    leave = cst.Continue if isinstance(block, cst.For) else cst.Return
    for line in body:
        if line is statement:
            break
        if isinstance(line, cst.If) and isinstance(line.body, cst.IndentedBlock) and any(
                isinstance(small, leave) for stmt in line.body.body
                if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body):
            return True
    return False


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


def rate_off_outside_training(sem: "Analyses", call: cst.Call, rate: cst.BaseExpression | None = None) -> bool:
    """The rate (``p`` of a functional dropout, or ``rate``: ``dropout_p`` of an attention
    call) is zero whenever the module is not training: ``self.p if self.training else 0.0``
    written there, or a variable bound so (``p = self.p if self.training else 0.0``, or
    ``if not training: dropout_p = 0.0`` before the call, as ``nn.MultiheadAttention``'s
    functional form does)."""
    ctx, model = sem.ctx, sem.model
    rate = dropout_rate(call) if rate is None else rate
    if isinstance(rate, cst.IfExp) and _reads_mode(rate.test) and (_zero(rate.body) or _zero(rate.orelse)):
        return True
    if not isinstance(rate, cst.Name):
        return False
    for binding in model.reaching(rate.value, call):
        value = binding.value if binding.kind in ("assign", "ann") else None
        if isinstance(value, cst.IfExp) and _reads_mode(value.test) and (_zero(value.body) or _zero(value.orelse)):
            return True
        if _zero(value) and any(isinstance(anc, cst.If) and _reads_mode(anc.test) for anc in ctx.ancestors(binding.node)):
            return True
    return False


def dropout_rate(call: cst.Call) -> cst.BaseExpression | None:
    """The rate a functional dropout is given (``p``, by keyword or second positional), or the
    one a layer built on the spot is (``nn.Dropout(p)(x)``); None where it is not written."""
    if isinstance(call.func, cst.Call):
        call = call.func
        positional = [a for a in call.args if a.keyword is None and not a.star]
        arg = api.keyword_arg(call, "p") or (positional[0] if positional else None)
        return arg.value if arg is not None else None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    arg = api.keyword_arg(call, "p") or (positional[1] if len(positional) >= 2 else None)
    return arg.value if arg is not None else None


def rate_given_per_call(sem: "Analyses", call: cst.Call, rate: cst.BaseExpression | None = None) -> bool:
    """The rate is a parameter of the module's ``forward`` itself (``def forward(self, x, d)``
    ... ``nn.Dropout(d)(x)``): whoever calls the model chooses the rate at every call (``0.0``
    for evaluation), not the module's mode, so ``model.eval()`` is not how it is turned off."""
    rate = dropout_rate(call) if rate is None else rate
    if not isinstance(rate, cst.Name):
        return False
    bindings = sem.model.reaching(rate.value, call)
    return bool(bindings) and all(
        b.kind == "param" and isinstance(b.scope.node, cst.FunctionDef) and b.scope.node.name.value == "forward"
        for b in bindings)


def rate_always_zero(sem: "Analyses", call: cst.Call, rate: cst.BaseExpression | None = None) -> bool:
    """The rate (as ``rate_off_outside_training`` finds it) is zero in every way the code
    gives it: followed through names, ``self.`` attributes and the constructor's parameters to
    what the file passes (``constructors.origins``), every value is a literal zero, such as a
    ``do_prob=0.0`` default no construction overrides. Where another module may construct
    the class (a ``.py`` file's module-level class), that is not known, so it is False; a
    notebook's classes are constructed in the notebook alone."""
    rate = dropout_rate(call) if rate is None else rate
    if rate is None:
        return False  # the defaults are 0.5
    found = origins(sem, rate, call)
    if found.unknown or not found.values or found.entries and not sem.ctx.path.endswith(".ipynb"):
        return False
    return all(_zero(value) for value, _ in found.values)


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


def attention_dropout(call: cst.Call) -> cst.BaseExpression | None:
    """The ``dropout_p`` of ``F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p)``
    when it is given and is no literal zero; None otherwise."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    arg = api.keyword_arg(call, "dropout_p") or (positional[4] if len(positional) >= 5 else None)
    if arg is None or _zero(arg.value):
        return None
    return arg.value


def fresh_dropout(model: "SemanticModel", call: cst.Call) -> str | None:
    """``nn.Dropout(p)(x)``: a dropout layer built and called on the spot (the name of its
    class), a module no ``model.eval()`` reaches since nothing registers it; None otherwise."""
    inner = call.func
    if not isinstance(inner, cst.Call):
        return None
    qualified = model.qualified_name(inner.func) or ""
    last = qualified.rsplit(".", 1)[-1]
    return last if qualified.startswith(_NN) and "Dropout" in last and mode_layer(qualified) else None
