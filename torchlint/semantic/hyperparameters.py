"""Which calls take a training run's hyperparameters, and which of their arguments are them.

``watched(ctx, call, extra, ignore)`` answers for one call: an optimizer (``torch.optim``,
bitsandbytes, apex, timm, ``transformers``: its learning rate, momentum and weight decay, also
positional through each class's signature, ``semantic.optim_classes``), a learning-rate
scheduler or a Hugging Face schedule factory, a ``DataLoader`` (its batch size), gradient
clipping (``clip_grad_norm_``/``clip_grad_value_`` of torch, Accelerate, FSDP; Fabric's and
Lightning's ``clip_gradients``), ``TrainingArguments`` and a Lightning ``Trainer``: the call's
kind and (hyperparameter name, argument value) for each watched argument. A capitalised call
that may build a project's optimizer subclass is ``MAYBE_OPTIMIZER``; ``argparse`` methods
watch nothing. ``candidate_arguments(call, ignore)``: the arguments of such a capitalised call
that would be hyperparameters if it built an optimizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.libraries import LIGHTNING_ROOTS
from torchlint.semantic import epochs
from torchlint.semantic.optim_classes import OPTIMIZER_HYPERPARAMETERS, SCHEDULER_POSITIONS, library_positions
from torchlint.torch_api import is_optimizer_constructor, scheduler_kind

if TYPE_CHECKING:
    from torchlint.context import FileContext

OPTIMIZER, SCHEDULER, LOADER, OTHER, MAYBE_OPTIMIZER = "optimizer", "scheduler", "loader", "other", "maybe-optimizer"

SCHEDULER_KEYWORDS = frozenset({
    "step_size", "gamma", "milestones", "T_max", "T_0", "T_mult", "eta_min", "max_lr", "base_lr",
    "total_steps", "epochs", "steps_per_epoch", "pct_start", "div_factor", "final_div_factor",
    "step_size_up", "step_size_down", "start_factor", "end_factor", "total_iters", "factor",
    "patience", "power", "min_lr", "base_momentum", "max_momentum", "num_warmup_steps",
    "num_training_steps",
})
DATALOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
_CLIP_NORM_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm",
}
_CLIP_NAMES = ("max_norm", "clip_value", "clip_val")  # of the clipping calls, not of a trainer's config
_CLIP_VALUE_FUNCTIONS = {"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"}
TRAINING_ARGUMENTS_KEYWORDS = ("learning_rate", "per_device_train_batch_size", "num_train_epochs", "weight_decay",
                               "warmup_steps", "warmup_ratio", "max_grad_norm")
LIGHTNING_TRAINER_KEYWORDS = ("max_epochs", "gradient_clip_val")
CLIP_NAMES = ("max_norm", "clip_value", "clip_val")  # of the clipping calls, not of a trainer's config
# Calls whose keywords configure a command line, never a hyperparameter in use.
_ARGPARSE_METHODS = {"add_argument", "set_defaults", "add_option"}

Watched = list[tuple[str, cst.BaseExpression]]


def watched(ctx: "FileContext", call: cst.Call, extra: frozenset = frozenset(),
            ignore: frozenset = frozenset()) -> tuple[str, Watched | None]:
    """The call's kind and (hyperparameter name, argument value) for each watched argument
    (``extra``: keyword names watched in any call; ``ignore``: names never watched); None
    when the call is none of the watched kinds (an empty list when it is one, with nothing
    watched in it)."""
    def args(positions: dict[int, str], keywords) -> Watched:
        return arguments(call, positions, keywords, extra, ignore)

    func = call.func
    qualified = ctx.qualified_name(func)
    last = qualified.rsplit(".", 1)[-1] if qualified else epochs.call_name(call)
    imported = ctx.is_imported(func)
    if imported and qualified:
        if is_optimizer_constructor(ctx, func):
            return OPTIMIZER, args(library_positions(qualified), OPTIMIZER_HYPERPARAMETERS)
        kind = scheduler_kind(ctx, func)
        if kind is not None:
            names = SCHEDULER_POSITIONS.get(kind, ())
            return SCHEDULER, args({i + 1: n for i, n in enumerate(names) if n in SCHEDULER_KEYWORDS},
                                   SCHEDULER_KEYWORDS)
        if qualified in DATALOADERS:
            return LOADER, args({1: "batch_size"}, ("batch_size",))
        if qualified in _CLIP_NORM_FUNCTIONS:
            return OTHER, args({1: "max_norm"}, ("max_norm",))
        if qualified in _CLIP_VALUE_FUNCTIONS:
            return OTHER, args({1: "clip_value"}, ("clip_value",))
        root = qualified.split(".", 1)[0]
        if root == "transformers" and last.endswith("TrainingArguments"):
            return OTHER, args({}, TRAINING_ARGUMENTS_KEYWORDS)
        if root in LIGHTNING_ROOTS and last == "Trainer":
            return OTHER, args({}, LIGHTNING_TRAINER_KEYWORDS)
    elif isinstance(func, cst.Attribute):
        if last in ("clip_grad_norm_", "clip_grad_value_"):
            # accelerator.clip_grad_norm_(params, max_norm); FSDP's model.clip_grad_norm_(max_norm)
            name = "max_norm" if last == "clip_grad_norm_" else "clip_value"
            positional = [a for a in call.args if a.keyword is None and not a.star]
            return OTHER, args({1 if len(positional) >= 2 else 0: name}, (name,))
        if last == "clip_gradients":  # Fabric / LightningModule
            return OTHER, args({}, ("max_norm", "clip_val", "gradient_clip_val"))
        if last in _ARGPARSE_METHODS:
            return OTHER, []
    last = epochs.call_name(call)
    kind = MAYBE_OPTIMIZER if last[:1].isupper() and (isinstance(func, cst.Name) or imported) else OTHER
    return kind, args({}, ()) if extra else None


def arguments(call: cst.Call, positions: dict[int, str], keywords, extra: frozenset = frozenset(),
              ignore: frozenset = frozenset()) -> Watched:
    """(name, value) of the call's arguments at ``positions`` (index -> name, until a
    ``*args`` unpacking) and with a keyword in ``keywords`` or ``extra``, less ``ignore``."""
    out = []
    index = 0
    for arg in call.args:
        if arg.star:
            if arg.star == "*":
                positions = {}  # later positionals no longer line up
            continue
        if arg.keyword is None:
            name = positions.get(index)
            index += 1
        else:
            name = arg.keyword.value
            if name not in keywords and name not in extra:
                continue
        if name is not None and name not in ignore:
            out.append((name, arg.value))
    return out


# Positions a project optimizer's hyperparameters may take (0 is its params).
_CANDIDATE_POSITIONS = range(1, 7)


def candidate_arguments(call: cst.Call, ignore: frozenset = frozenset()) -> list[tuple[str | int, cst.BaseExpression]]:
    """(keyword or position, value) of the arguments of a call that may build a project's
    optimizer subclass (``MAYBE_OPTIMIZER``), which would be hyperparameters if it does: the
    positionals at 1 to 6 (until a ``*args`` unpacking; the class's ``__init__`` names them,
    ``optim_classes.project_positions``) and the keywords of ``OPTIMIZER_HYPERPARAMETERS``,
    less ``ignore``."""
    out: list[tuple[str | int, cst.BaseExpression]] = []
    index = 0
    for arg in call.args:
        if arg.star:
            break
        if arg.keyword is None:
            key: str | int = index
            index += 1
            if key not in _CANDIDATE_POSITIONS:
                continue
        else:
            key = arg.keyword.value
            if key not in OPTIMIZER_HYPERPARAMETERS or key in ignore:
                continue
        out.append((key, arg.value))
    return out
