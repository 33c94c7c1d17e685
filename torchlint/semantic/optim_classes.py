"""torch.optim classes: which classes are optimizers and where their hyperparameters sit.

* ``OPTIMIZER_POSITIONS`` / ``SCHEDULER_POSITIONS``: the positional parameters of library
  optimizers (index 0 is ``params``) and schedulers (after the optimizer).
* ``TORCH_DEFAULTS`` / ``is_neutral(qualified, name, value)``: a literal that only restates the
  torch class's own default, or a LinearLR warm-up "from zero" (the tiny start factor it needs).
* ``local_positions(info)``: a class of this file that subclasses a library optimizer
  through classes of this file, with its positional hyperparameters (its nearest
  ``__init__`` decides); ``has_external_base(info)``: only the project can tell.
* ``project_positions(project, qualified, inits)``: the same across files, through
  ``Project.ancestors``; ``project_class(project, record, callee)``: the class a file's
  fact names, resolved in the project.
* ``may_be_optimizer_base(ctx, base, local)``: a class base that may make its class an
  optimizer; ``class_called(model, name, at)``: the class of this file a call constructs.
* ``constructed_optimizer(semantic, key, at)``: the library optimizer class a variable holds
  where it is used: built there (``opt = torch.optim.LBFGS(...)``) or returned by a same-file
  factory (``opt = make_optimizer(img)``).
"""

from __future__ import annotations

import math
from typing import Callable

import libcst as cst

from torchlint.libraries import is_library
from torchlint.semantic.model import ClassInfo
from torchlint.torch_api import is_optimizer_class
from torchlint.tree import iter_nodes

# The hyperparameters an optimizer takes by position (and by keyword).
OPTIMIZER_HYPERPARAMETERS = ("lr", "momentum", "weight_decay")
# Positional parameters of torch.optim constructors (index 0 is ``params``).
OPTIMIZER_POSITIONS: dict[str, dict[int, str]] = {
    "SGD": {1: "lr", 2: "momentum", 4: "weight_decay"},
    "Adam": {1: "lr", 4: "weight_decay"},
    "AdamW": {1: "lr", 4: "weight_decay"},
    "Adamax": {1: "lr", 4: "weight_decay"},
    "NAdam": {1: "lr", 4: "weight_decay"},
    "RAdam": {1: "lr", 4: "weight_decay"},
    "Adagrad": {1: "lr", 3: "weight_decay"},
    "Adadelta": {1: "lr", 4: "weight_decay"},
    "RMSprop": {1: "lr", 4: "weight_decay", 5: "momentum"},
    "ASGD": {1: "lr", 5: "weight_decay"},
}
# The documented defaults of torch.optim classes (checked against torch 2.13's signatures) for
# the hyperparameters they take, zeros and None left out. A literal equal to one changes nothing:
# removing it is the same code. Learning rates are left out too: a default lr is a placeholder
# every run replaces, so a written one is the run's choice -- except L-BFGS's 1, the full
# quasi-Newton step the method is built on (with a line search, only its first trial step).
TORCH_DEFAULTS: dict[str, dict[str, float]] = {
    "LBFGS": {"lr": 1.0},
    "AdamW": {"weight_decay": 0.01},
    "StepLR": {"gamma": 0.1},
    "MultiStepLR": {"gamma": 0.1},
    "CosineAnnealingWarmRestarts": {"T_mult": 1},
    "OneCycleLR": {"pct_start": 0.3, "base_momentum": 0.85, "max_momentum": 0.95, "div_factor": 25.0,
                   "final_div_factor": 1e4},
    "CyclicLR": {"step_size_up": 2000, "gamma": 1.0, "base_momentum": 0.8, "max_momentum": 0.9},
    "LinearLR": {"start_factor": 1 / 3, "end_factor": 1.0, "total_iters": 5},
    "ConstantLR": {"factor": 1 / 3, "total_iters": 5},
    "PolynomialLR": {"total_iters": 5, "power": 1.0},
    "ReduceLROnPlateau": {"factor": 0.1, "patience": 10},
}
# The largest LinearLR start_factor read as "from zero" (1% of the learning rate).
_ZERO_START = 0.01
# Optimizers whose second positional parameter is not the learning rate.
_NO_POSITIONAL_LR = {"ZeroRedundancyOptimizer", "DistributedOptimizer"}

# torch.optim.lr_scheduler and Hugging Face schedule factories: positional parameters after
# the optimizer.
SCHEDULER_POSITIONS: dict[str, tuple[str, ...]] = {
    "StepLR": ("step_size", "gamma"),
    "MultiStepLR": ("milestones", "gamma"),
    "ExponentialLR": ("gamma",),
    "CosineAnnealingLR": ("T_max", "eta_min"),
    "CosineAnnealingWarmRestarts": ("T_0", "T_mult", "eta_min"),
    "OneCycleLR": ("max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start"),
    "CyclicLR": ("base_lr", "max_lr", "step_size_up", "step_size_down"),
    "LinearLR": ("start_factor", "end_factor", "total_iters"),
    "ConstantLR": ("factor", "total_iters"),
    "PolynomialLR": ("total_iters", "power"),
    "ReduceLROnPlateau": ("mode", "factor", "patience"),
    "SequentialLR": ("schedulers", "milestones"),
    "get_linear_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_cosine_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_cosine_with_hard_restarts_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_polynomial_decay_schedule_with_warmup": ("num_warmup_steps", "num_training_steps"),
    "get_constant_schedule_with_warmup": ("num_warmup_steps",),
    "get_inverse_sqrt_schedule": ("num_warmup_steps",),
    "get_scheduler": ("optimizer", "num_warmup_steps", "num_training_steps"),  # (name, optimizer, ...)
}
_MAX_DEPTH = 8


def library_positions(qualified: str) -> dict[int, str]:
    """A library optimizer's positional hyperparameters (index 0 is ``params``)."""
    last = qualified.rsplit(".", 1)[-1]
    if last in _NO_POSITIONAL_LR or qualified.startswith("torch.distributed.optim."):
        return {}
    return OPTIMIZER_POSITIONS.get(last, {1: "lr"})


def is_library_optimizer(qualified: str) -> bool:
    """A qualified class name (imports expanded) that is a library optimizer."""
    return is_optimizer_class(qualified, lambda: "." in qualified)  # dotted: an import, expanded


def init_params(init: cst.FunctionDef) -> list[str]:
    """``__init__``'s positional parameter names after ``self``."""
    return [p.name.value for p in [*init.params.posonly_params, *init.params.params]][1:]


def _from_init(init: list[str] | None, inherited: dict[int, str]) -> dict[int, str]:
    if init is None:
        return inherited
    return {i: n for i, n in enumerate(init) if n in OPTIMIZER_HYPERPARAMETERS}


def is_neutral(qualified: str, name: str, value) -> bool:
    """``value`` (a number) sets nothing of its own for ``name`` of the torch.optim class
    ``qualified``: it is the class's default (``LinearLR(opt, end_factor=1.0)``), or a warm-up's
    ``start_factor`` of at most ``_ZERO_START`` -- LinearLR refuses 0, so "warm up from zero"
    can only be written as a tiny factor (zero values already mean "off")."""
    if not qualified.startswith("torch.optim.") or not isinstance(value, (int, float)):
        return False
    cls = qualified.rsplit(".", 1)[-1]
    if cls == "LinearLR" and name == "start_factor" and value <= _ZERO_START:
        return True
    default = TORCH_DEFAULTS.get(cls, {}).get(name)
    return default is not None and math.isclose(value, default, rel_tol=1e-6)


def local_positions(info: ClassInfo, depth: int = 0) -> dict[int, str] | None:
    """For a class of this file that subclasses a library optimizer through classes of this
    file, its positional hyperparameters; None if it is not known to be one here."""
    if depth > _MAX_DEPTH:
        return None
    for base in info.bases:
        local = next((c for c in info.local_bases if c.name == base), None)
        if local is not None:
            inherited = local_positions(local, depth + 1)
        else:
            inherited = library_positions(base) if is_library_optimizer(base) else None
        if inherited is not None:
            init = info.methods.get("__init__")
            return _from_init(init_params(init) if init is not None else None, inherited)
    return None


def has_external_base(info: ClassInfo, depth: int = 0) -> bool:
    """A base (or a same-file base's base) imported from outside the libraries: only the
    project can say whether it is an optimizer."""
    if depth > _MAX_DEPTH:
        return False
    for base in info.bases:
        local = next((c for c in info.local_bases if c.name == base), None)
        if local is not None:
            if has_external_base(local, depth + 1):
                return True
        elif "." in base and not is_library(base):
            return True
    return False


def project_positions(project, qualified: str, inits: Callable[[object, dict], list[str]]) -> dict[int, str] | None:
    """Positional hyperparameters of a project class (canonical name) whose ancestors reach a
    library optimizer: the nearest ``__init__`` of a project class decides (``inits(record,
    class fact)`` gives its parameters; keywords only when unknown), else the optimizer's."""
    init = None
    for name in [qualified, *project.ancestors(qualified)]:
        found = project.class_fact(name)
        if found is not None:
            record, fact = found
            if init is None and "__init__" in fact["methods"]:
                init = inits(record, fact)
        elif is_library_optimizer(name):
            return _from_init(init, library_positions(name))
    return None


def project_class(project, record, callee: list[str]) -> str | None:
    """The canonical name of the class a file's fact names: ``["local", qualname]`` for a
    class of the file (``record``) itself, ``["ext", name]`` for an imported one that
    ``Project.resolve_symbol`` finds; None where the project holds none."""
    kind, name = callee
    if kind == "local":
        return record.qualified(name)
    hit = project.resolve_symbol(name, record)
    return None if hit is None else hit[0].qualified(hit[1])


def may_be_optimizer_base(ctx, base: cst.BaseExpression, local: set[str] | frozenset[str]) -> bool:
    """A class base that may make its class an optimizer: a library optimizer, a class of this
    file named in ``local`` (the earlier ones that may be optimizers), or a class imported from
    outside the libraries (not ``nn.Module``): only the project can tell what that is."""
    if isinstance(base, cst.Name) and not ctx.is_imported(base):
        return base.value in local
    qualified = ctx.qualified_name(base) or ""
    return is_library_optimizer(qualified) or not is_library(qualified)


def class_called(model, name: str, at: cst.CSTNode) -> ClassInfo | None:
    """The class of this file that a call of ``name`` at ``at`` constructs: the class
    statement of the last binding of ``name`` reaching there; None when none is a class."""
    return next((model.classes[b.node] for b in reversed(model.reaching(name, at)) if b.kind == "class"), None)


def constructed_optimizer(semantic, key: str, at: cst.CSTNode) -> str | None:
    """The qualified library optimizer class ``key`` holds at ``at``: every reaching binding
    (or, for ``self.x``, every binding in the file) is a constructor call, or a call of a
    same-file function whose returns are; None when unknown or mixed."""
    model = semantic.model
    bindings = model.reaching(key, at) if "." not in key else \
        [b for scope in model.scopes.values() for b in scope.bindings.get(key, ())]
    found = {_built_class(semantic, b.value, b.scope, b.node) for b in bindings if b.kind in ("assign", "ann")}
    if len(found) == 1 and len(bindings) > 0 and None not in found:
        return found.pop()
    return None


def _built_class(semantic, value: cst.BaseExpression | None, scope, at: cst.CSTNode, depth: int = 0) -> str | None:
    if not isinstance(value, cst.Call) or depth > 2:
        return None
    qualified = semantic.model.qualified_name(value.func) or ""
    if semantic.model.is_imported(value.func) and is_library_optimizer(qualified):
        return qualified
    returned = set()
    for fn in semantic.graph.resolve(value.func, scope, at):
        if not isinstance(fn, cst.FunctionDef):
            return None
        fn_scope = semantic.model.scopes[fn]
        for node in iter_nodes(fn.body, into_scopes=False):
            if isinstance(node, cst.Return):
                returned.add(_built_class(semantic, node.value, fn_scope, node, depth + 1))
    return returned.pop() if len(returned) == 1 else None
