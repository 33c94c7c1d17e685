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
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from torchlint import torch_api as api
from torchlint.semantic.index import index_name

if TYPE_CHECKING:
    from torchlint.project import FileRecord, Project
    from torchlint.semantic import Analyses

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
    from torchlint.torch_api import strip_self_returning

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
