"""What PyTorch code looks like to the rules: shared recognisers, so every rule agrees on
what a backward, an optimizer step, a no-grad region or a loss call is.

Each function takes the file's ``FileContext`` (for import-aware qualified names) and a
LibCST node. None of this imports torch.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.libraries import torch_nn_class
from torchlint.statements import dotted_name

if TYPE_CHECKING:
    from torchlint.context import FileContext

# -- optimizers --------------------------------------------------------------------------

OPTIMIZER_MODULES = ("torch.optim.", "torch.optim.optimizer.", "bitsandbytes.optim.", "apex.optimizers.",
                     "transformers.optimization.", "timm.optim.", "torch.distributed.optim.")
OPTIMIZER_CLASSES = {
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam",
    "SparseAdam", "LBFGS", "ASGD", "Adafactor", "LAMB", "Lamb", "Lion", "FusedAdam", "FusedLAMB",
    "Adam8bit", "AdamW8bit", "ZeroRedundancyOptimizer",
}
SCHEDULER_MODULE = "torch.optim.lr_scheduler."
# Variable names that mean "an optimizer" when we cannot see its construction.
_OPTIMIZER_NAME = re.compile(r"^(opt|optim|optimizer|optimiser)(_[a-z0-9]+|[0-9]+)?$|^[a-z0-9]+_(opt|optim|optimizer|optimiser|solver)$|^(optimizers?|optimisers?)$")
# ``optimizerG``, ``optD``: one capital letter naming the network.
_OPTIMIZER_NAME_CASED = re.compile(r"^(opt|optim|optimizer|optimiser)[A-Z]$")
_SCHEDULER_NAME = re.compile(r"sched|lr_", re.IGNORECASE)


def is_optimizer_constructor(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """``torch.optim.SGD``, ``optim.AdamW``, ``bnb.optim.Adam8bit``, ... (not schedulers)."""
    name = ctx.qualified_name(func)
    if name is None:
        return False
    kind = _optimizer_class_kind(name)
    return kind is _OPTIMIZER or kind is _OPTIMIZER_IF_IMPORTED and ctx.is_imported(func)


def is_optimizer_class(name: str, imported=lambda: True) -> bool:
    """A qualified name that is a library optimizer class: in an optimizer module
    (``torch.optim.SGD``), or an imported name (``imported()``) of a known optimizer class
    (``lion_pytorch.Lion``); never a scheduler."""
    kind = _optimizer_class_kind(name)
    return kind is _OPTIMIZER or kind is _OPTIMIZER_IF_IMPORTED and imported()


_OPTIMIZER, _OPTIMIZER_IF_IMPORTED, _NO_OPTIMIZER = "optimizer", "optimizer if imported", "no optimizer"


@lru_cache(maxsize=8192)
def _optimizer_class_kind(name: str) -> str:
    """``is_optimizer_class``'s answer by the name alone: an optimizer class, one if the name is
    imported, none. Kept per name (asked ~60,000 times on torchvision+skorch+accelerate)."""
    if name.startswith(SCHEDULER_MODULE):
        return _NO_OPTIMIZER
    if name.startswith("transformers.optimization.") and _is_hf_schedule_name(name.rsplit(".", 1)[-1]):
        return _NO_OPTIMIZER  # get_linear_schedule_with_warmup, get_scheduler, AdafactorSchedule: schedules
    if name.startswith(OPTIMIZER_MODULES):
        return _OPTIMIZER
    return _OPTIMIZER_IF_IMPORTED if name.rsplit(".", 1)[-1] in OPTIMIZER_CLASSES else _NO_OPTIMIZER


def looks_like_optimizer_name(expr_text: str) -> bool:
    """``opt``, ``optimizer``, ``opt_d``, ``g_optim``, ``self.optimizer`` (the last part);
    also ``self._optimizer``, ``opt1`` and ``optimizerG``."""
    raw = expr_text.rsplit(".", 1)[-1].strip("_")
    last = raw.lower()
    return bool(_OPTIMIZER_NAME.match(last) or _OPTIMIZER_NAME_CASED.match(raw)) and not _SCHEDULER_NAME.search(last)


def looks_like_scheduler_name(expr_text: str) -> bool:
    """``scheduler``, ``lr_scheduler``, ``self.sched`` (the last part): named like a
    learning-rate scheduler."""
    return bool(_SCHEDULER_NAME.search(expr_text.rsplit(".", 1)[-1]))


def expr_key(node: cst.BaseExpression) -> str | None:
    """A stable textual key for a simple target/receiver: ``opt``, ``self.optimizer``,
    ``optimizers[0]`` (subscript with a simple index), else None."""
    dotted = dotted_name(node)
    if dotted is not None:
        return dotted
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        base = expr_key(node.value)
        index = node.slice[0].slice
        if base is not None and isinstance(index, cst.Index):
            inner = index.value
            if isinstance(inner, (cst.Integer, cst.SimpleString)):
                return f"{base}[{inner.value}]"
            inner_key = dotted_name(inner)
            if inner_key is not None:
                return f"{base}[{inner_key}]"
    return None


# -- backward ----------------------------------------------------------------------------

def backward_target(ctx: FileContext, call: cst.Call) -> cst.BaseExpression | None:
    """If ``call`` is a backward, the expression whose gradient it computes, else None.

    ``X.backward()``, ``torch.autograd.backward(X)``, ``scaler.scale(X).backward()``,
    ``accelerator.backward(X)``, ``fabric.backward(X)``, ``self.manual_backward(X)``.
    For ``scaler.scale(X).backward()`` the target is ``X``.
    """
    func = call.func
    kind = type(func)
    # Only a name (an alias: ``from torch.autograd import backward as bw``) or an attribute
    # named ``backward`` can be ``torch.autograd.backward``: a qualified name expands the head.
    if (kind is cst.Name or kind is cst.Attribute and func.attr.value == "backward") \
            and ctx.qualified_name(func) == "torch.autograd.backward":
        return call.args[0].value if call.args else None
    if kind is not cst.Attribute or func.attr.value not in ("backward", "manual_backward"):
        return None
    receiver = func.value
    if func.attr.value == "manual_backward":
        return call.args[0].value if call.args else None
    # accelerator.backward(loss), fabric.backward(loss), self.accelerator.backward(loss)
    if call.args and not call.args[0].keyword:
        first = call.args[0].value
        recv = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        if recv in ("accelerator", "fabric", "engine", "deepspeed", "model_engine", "trainer", "strategy") or (
            ctx.qualified_name(receiver) or ""
        ).startswith(("accelerate.", "lightning.", "lightning_fabric.", "pytorch_lightning.")):
            return first
    # scaler.scale(X).backward()
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "scale" and receiver.args:
        return receiver.args[0].value
    return receiver


# -- optimizer steps ---------------------------------------------------------------------

def step_optimizer(ctx: FileContext, call: cst.Call, optimizers: set[str] | None = None) -> str | None:
    """If ``call`` steps an optimizer, the optimizer's key (``opt``, ``self.optimizer``).

    ``opt.step()``, ``opt.step(closure)``, ``scaler.step(opt)``; ``opt`` must be known as an
    optimizer (in ``optimizers``, keys of variables assigned an optimizer construction) or be
    named like one. Schedulers' ``.step()`` never counts.
    """
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "step":
        return None
    receiver = func.value
    key = expr_key(receiver)
    # scaler.step(opt) / self.scaler.step(self.optimizer)
    if key is not None and key.rsplit(".", 1)[-1].strip("_").lower() in ("scaler", "grad_scaler", "amp_scaler", "loss_scaler") and call.args:
        inner = expr_key(call.args[0].value)
        return inner
    if key is None:
        return None
    if optimizers is not None and key in optimizers:
        return key
    if looks_like_optimizer_name(key.split("[")[0]):
        return key
    return None


# -- no-grad regions ---------------------------------------------------------------------

NO_GRAD_CONTEXTS = {
    "torch.no_grad", "torch.inference_mode", "torch.set_grad_enabled", "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
    "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled", "torch.enable_grad",
}


def is_grad_mode_call(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """For ``torch.no_grad()``/``inference_mode()``/``set_grad_enabled(...)`` (with or without
    the call), the short name (``no_grad``, ...), else None."""
    target = expr.func if isinstance(expr, cst.Call) else expr
    name = ctx.qualified_name(target)
    if name in NO_GRAD_CONTEXTS:
        return name.rsplit(".", 1)[-1]
    return None


def _disables_grad(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    kind = is_grad_mode_call(ctx, expr)
    if kind in ("no_grad", "inference_mode"):
        if kind == "inference_mode" and isinstance(expr, cst.Call) and expr.args:
            arg = expr.args[0].value
            return not (isinstance(arg, cst.Name) and arg.value == "False")
        return True
    if kind == "set_grad_enabled":
        return True  # an explicit choice either way
    return False


def function_disables_grad(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """``@torch.no_grad()`` / ``@torch.inference_mode()`` decorated."""
    return any(_disables_grad(ctx, d.decorator) for d in func.decorators)


def grad_choice_above(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Some grad-mode choice is made around ``node``: a ``with torch.no_grad()``,
    ``inference_mode()`` or ``set_grad_enabled(...)`` (either way) holds it, or a function
    decorated so does, in any enclosing scope (a ``def`` written inside such a block too).
    Not whether autograd records there: ``semantic.grad_state.grad_mode_at`` answers that."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.With,)):
            if any(_disables_grad(ctx, item.item) for item in anc.items):
                return True
        elif isinstance(anc, cst.FunctionDef) and function_disables_grad(ctx, anc):
            return True
    return False


# -- detaching ---------------------------------------------------------------------------

DETACHING_METHODS = {"item", "detach", "tolist", "numpy", "cpu_numpy", "detach_"}
DETACHING_FUNCTIONS = {"float", "int", "bool", "str", "len", "repr", "round"}


def is_detached(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """``x.item()``, ``x.detach()``, ``x.tolist()``, ``x.cpu().numpy()``, ``float(x)``, ..."""
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in DETACHING_METHODS:
            return True
        if isinstance(func, cst.Name) and func.value in DETACHING_FUNCTIONS and not ctx.is_imported(func):
            return True
    return False


# -- module train/eval mode --------------------------------------------------------------

def mode_switch(call: cst.Call) -> bool | None:
    """For ``m.eval()`` / ``m.train(False)`` / ``m.train(mode=False)``: False (to eval mode);
    for ``m.train()`` / ``m.train(True)`` / ``m.train(flag)``: True (to training mode, or a
    mode we cannot tell, which a rule should treat as "maybe training"); else None."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    attr = func.attr.value
    if attr == "eval":
        return False if not call.args else None
    if attr != "train" or len(call.args) > 1:
        return None
    if not call.args:
        return True
    arg = call.args[0]
    if arg.keyword is not None and arg.keyword.value != "mode":
        return None
    return not is_false_literal(arg.value)


def is_false_literal(expr: cst.BaseExpression) -> bool:
    """``False`` or ``0`` as written: how code turns a mode or a gradient flag off."""
    return isinstance(expr, cst.Name) and expr.value == "False" or isinstance(expr, cst.Integer) and expr.value == "0"


# ``torch.nn`` names that are not module classes.
# Layers without parameters: with inputs that do not require grad, autograd records nothing.
PARAMETER_FREE_LAYERS = {
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
    "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "Softmax", "Softmax2d", "LogSoftmax", "Softmin",
    "Threshold", "Tanhshrink", "Softshrink", "Hardshrink", "LogSigmoid", "GLU", "RReLU", "Identity", "Flatten",
    "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
    "ChannelShuffle", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "CosineSimilarity", "PairwiseDistance",
}
_DROP_LAYER = re.compile(r"^Drop[A-Z]|Dropout$|^DropPath")
# ``torch.nn`` losses without parameters (not ``AdaptiveLogSoftmaxWithLoss`` nor
# ``LinearCrossEntropyLoss``, which hold a linear layer). Those in ``WEIGHTED_LOSSES`` register
# their ``weight``/``pos_weight`` argument as a buffer.
PARAMETER_FREE_LOSSES = {
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "CTCLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss",
    "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "SoftMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss",
}
WEIGHTED_LOSSES = {"CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MultiLabelSoftMarginLoss",
                   "MultiMarginLoss"}


def is_parameter_free_layer(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """A constructor of a layer without parameters: ``nn.ReLU``, ``nn.Dropout``,
    ``nn.MaxPool2d``, ``nn.Identity`` (from ``torch.nn``), or any ``Drop*``/``*Dropout`` class
    (``DropPath``, ``DropBlock2d``), which by convention only zero activations."""
    name = ctx.qualified_name(func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1]
    if _DROP_LAYER.search(last):
        return True
    return last in PARAMETER_FREE_LAYERS and name.startswith(("torch.nn.", "nn."))


# -- Lightning evaluation hooks ----------------------------------------------------------

# Lightning runs these under no_grad/inference_mode itself.
LIGHTNING_EVAL_HOOKS = {"validation_step", "test_step", "predict_step", "validation_step_end", "test_step_end",
                        "validation_epoch_end", "test_epoch_end"}
LIGHTNING_EVAL_HOOK_PREFIXES = ("on_validation_", "on_test_", "on_predict_")


def is_lightning_eval_hook(name: str) -> bool:
    """``validation_step``, ``test_step``, ``predict_step``, ``on_validation_epoch_end``, ...:
    Lightning calls them with autograd off."""
    return name in LIGHTNING_EVAL_HOOKS or name.startswith(LIGHTNING_EVAL_HOOK_PREFIXES)


# -- losses, criteria and models ---------------------------------------------------------

FUNCTIONAL_LOSSES = {
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "ctc_loss", "cosine_embedding_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
    "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
    "gaussian_nll_loss",
}
_CRITERION_NAME = re.compile(
    r"^(criterion|criteria|criterions|loss_?fn|loss_?func|loss_?function|loss_?module|loss_?funcs?)$"
    r"|^[a-z0-9_]+_(criterion|loss_?fn|loss_?func|loss_?function)$|^criterion_?[a-z0-9_]+$"
)
_MODEL_NAME = re.compile(
    r"^(model|net|network|generator|discriminator)$|^(model|net)_?[a-z0-9]+$|^[a-z0-9]+_(model|net|network)$"
)
_MODEL_NAME_CASED = re.compile(r"^(net|model)[A-Z]$")
# Models that usually do not train (their outputs carry no graph): EMA copies, teachers,
# target/reference/reward networks, frozen backbones.
_FROZEN_MODEL_NAME = re.compile(r"ema|teacher|target|ref|reward|frozen|swa|avg|average|old|prev|pretrained|without")
_NOT_MODELS = {"Module", "ModuleList", "ModuleDict", "Parameter", "ParameterList", "ParameterDict", "Identity",
               "Buffer", "UninitializedParameter"}


def is_loss_function(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """``F.cross_entropy``, ``torch.nn.functional.mse_loss``, any ``torch.nn.functional.*_loss``."""
    name = ctx.qualified_name(func)
    if name is None or not name.startswith("torch.nn.functional.") or not ctx.is_imported(func):
        return False
    last = name.rsplit(".", 1)[-1]
    return last in FUNCTIONAL_LOSSES or last.endswith("_loss")


def is_loss_constructor(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """``nn.CrossEntropyLoss``, ``torch.nn.MSELoss``, or any class named ``*Loss``
    (``FocalLoss``, ``LabelSmoothingLoss``): calling what it builds gives a loss."""
    name = ctx.qualified_name(func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1]
    return len(last) > 4 and last.endswith("Loss") and last[0].isupper()


def looks_like_criterion_name(expr_text: str) -> bool:
    """``criterion``, ``loss_fn``, ``loss_func``, ``self._loss_fn``, ``ce_loss_fn``,
    ``criterion_cls`` (the last part, leading underscores ignored)."""
    last = expr_text.rsplit(".", 1)[-1].lstrip("_")
    return bool(_CRITERION_NAME.match(last))


def looks_like_frozen_copy(expr_text: str) -> bool:
    """``ema_model``, ``teacher``, ``self.model_ema``, ``target_net`` (the last part): a copy
    that is not the model being trained."""
    return bool(_FROZEN_MODEL_NAME.search(expr_text.rsplit(".", 1)[-1].lstrip("_").lower()))


def looks_like_model_name(expr_text: str) -> bool:
    """``model``, ``net``, ``self.model``, ``ddp_model``, ``model_g``, ``netG``,
    ``generator`` (the last part); not EMA, teacher, target, reference or frozen copies."""
    raw = expr_text.rsplit(".", 1)[-1].lstrip("_")
    last = raw.lower()
    if _FROZEN_MODEL_NAME.search(last):
        return False
    return bool(_MODEL_NAME.match(last) or _MODEL_NAME_CASED.match(raw))


def is_model_constructor(ctx: FileContext, func: cst.BaseExpression, local_modules: frozenset[str] | set[str] = frozenset()) -> bool:
    """``torchvision.models.resnet18``, ``timm.create_model``, ``AutoModel*.from_pretrained``,
    ``nn.Linear``/``nn.Sequential`` (layers with parameters), or a class of this file in
    ``local_modules`` (subclasses of ``nn.Module``)."""
    name = ctx.qualified_name(func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1]
    if "." not in name and name in local_modules:
        return True
    if not ctx.is_imported(func):
        return False
    if name.startswith(("torchvision.models.", "timm.models.")) or name in ("timm.create_model", "torch.hub.load"):
        return True
    if name.startswith("transformers.") and (last == "from_pretrained" or last == "from_config"):
        return ".AutoModel" in name or "Model" in name.rsplit(".", 2)[-2]
    if name.startswith("torch.nn.") and name.count(".") == 2 and last[:1].isupper():
        return not last.endswith("Loss") and last not in _NOT_MODELS and last not in PARAMETER_FREE_LAYERS and not _DROP_LAYER.search(last)
    return False


# -- learning-rate schedulers ------------------------------------------------------------

_HF_SCHEDULE_ROOTS = ("transformers", "diffusers")


def _is_hf_schedule_name(last: str) -> bool:
    """``get_linear_schedule_with_warmup``, ``get_scheduler``, ``AdafactorSchedule``."""
    return (last.startswith("get_") and "schedule" in last) or last.endswith("Schedule")


def scheduler_kind(ctx: FileContext, func: cst.BaseExpression) -> str | None:
    """For a learning-rate scheduler constructor, its short name, else None:
    ``torch.optim.lr_scheduler.StepLR`` -> ``StepLR``; Hugging Face schedule factories
    (``transformers.get_cosine_schedule_with_warmup``, ``transformers.optimization.get_scheduler``,
    ``diffusers.optimization.get_scheduler``) -> their function name."""
    name = ctx.qualified_name(func)
    if name is None or not ctx.is_imported(func):
        return None
    last = name.rsplit(".", 1)[-1]
    if name.startswith(SCHEDULER_MODULE):
        return last if last[:1].isupper() and "." not in name[len(SCHEDULER_MODULE):] else None
    if name.split(".", 1)[0] in _HF_SCHEDULE_ROOTS and last.startswith("get_") and "schedule" in last:
        return last
    return None


# -- functions whose behaviour depends on a mode or a device -----------------------------

# ``torch.nn.functional`` dropouts: ``training`` defaults to True (ignores ``model.eval()``).
FUNCTIONAL_DROPOUTS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                 "feature_alpha_dropout"})


def functional_dropout(qualified: str | None) -> str | None:
    """``torch.nn.functional.dropout2d`` -> ``dropout2d``; None for anything else."""
    if qualified is None or not qualified.startswith("torch.nn.functional."):
        return None
    last = qualified[len("torch.nn.functional."):]
    return last if last in FUNCTIONAL_DROPOUTS else None


# ``torch.<factory>(...)`` makes a tensor on the default device (the CPU) unless given ``device=``.
TENSOR_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "arange", "randn", "rand", "randint", "eye",
                              "tensor", "linspace", "logspace", "randperm", "as_tensor", "FloatTensor",
                              "LongTensor"})


def tensor_factory(qualified: str | None) -> str | None:
    """``torch.zeros`` -> ``zeros`` (the factories of ``TENSOR_FACTORIES``); None otherwise."""
    if qualified is None or not qualified.startswith("torch."):
        return None
    last = qualified[len("torch."):]
    return last if last in TENSOR_FACTORIES else None


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    """The argument passed as ``name=`` (None also when ``**kwargs`` may hold it: see
    ``has_star_kwargs``)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def has_star_kwargs(call: cst.Call) -> bool:
    """``f(**kwargs)``: any keyword may be in there."""
    return any(arg.star == "**" for arg in call.args)


# -- activations and the losses that apply their own -------------------------------------

_ACTIVATION_FUNCTIONS = {
    "torch.softmax": "softmax", "torch.nn.functional.softmax": "softmax", "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax", "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
    "torch.sigmoid": "sigmoid", "torch.nn.functional.sigmoid": "sigmoid", "torch.special.expit": "sigmoid",
}
_ACTIVATION_LAYERS = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Sigmoid": "sigmoid"}
_ACTIVATION_METHODS = {"softmax": "softmax", "log_softmax": "log_softmax", "sigmoid": "sigmoid"}


def activation_function(qualified: str | None) -> str | None:
    """``torch.softmax``/``F.softmax`` -> ``softmax``; ``log_softmax``; ``torch.sigmoid`` ->
    ``sigmoid``: a function applying a final activation to its first argument."""
    return _ACTIVATION_FUNCTIONS.get(qualified or "")


def activation_layer(qualified: str | None) -> str | None:
    """``torch.nn.Softmax`` -> ``softmax`` (``LogSoftmax``, ``Sigmoid``): the layer classes."""
    name = torch_nn_class(qualified or "")
    return _ACTIVATION_LAYERS.get(name or "")


def activation_method(name: str) -> str | None:
    """``x.softmax(dim)`` / ``x.log_softmax(dim)`` / ``x.sigmoid()``: the tensor methods."""
    return _ACTIVATION_METHODS.get(name)


# What each loss wants as its input: ``cross_entropy`` (logits: it applies log_softmax), ``nll``
# (log-probabilities), ``bce_logits`` (logits: it applies sigmoid), ``bce`` (probabilities),
# ``regression`` (any real values: MSE, L1, smooth L1, Huber).
_LOSS_INPUTS = {
    "torch.nn.functional.cross_entropy": "cross_entropy", "torch.nn.CrossEntropyLoss": "cross_entropy",
    "torch.nn.modules.loss.CrossEntropyLoss": "cross_entropy",
    "torch.nn.functional.nll_loss": "nll", "torch.nn.NLLLoss": "nll", "torch.nn.modules.loss.NLLLoss": "nll",
    "torch.nn.functional.binary_cross_entropy_with_logits": "bce_logits",
    "torch.nn.BCEWithLogitsLoss": "bce_logits", "torch.nn.modules.loss.BCEWithLogitsLoss": "bce_logits",
    "torch.nn.functional.binary_cross_entropy": "bce", "torch.nn.BCELoss": "bce",
    "torch.nn.modules.loss.BCELoss": "bce",
    **{f"torch.nn.functional.{f}": "regression" for f in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")},
    **{f"torch.nn{m}.{c}": "regression" for m in ("", ".modules.loss")
       for c in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss")},
}
# The losses whose input is logits: a model trained with one outputs logits.
LOGITS_LOSSES = frozenset({"cross_entropy", "bce_logits"})


def loss_wants(qualified: str | None) -> str | None:
    """What a loss function or loss class wants as input: ``cross_entropy``, ``nll``,
    ``bce_logits``, ``bce`` or ``regression`` (see ``_LOSS_INPUTS``); None for other losses."""
    return _LOSS_INPUTS.get(qualified or "")


# Layers whose output, with no activation after it, is logits (unbounded scores).
_LOGIT_LAYERS = frozenset({"Linear", "LazyLinear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "LazyConv1d",
                           "LazyConv2d", "LazyConv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})


def logits_layer(qualified: str | None) -> bool:
    """``torch.nn.Linear`` / ``Conv2d`` / ``Bilinear``...: a layer whose raw output is logits."""
    return torch_nn_class(qualified or "") in _LOGIT_LAYERS


# -- calls that return the module or tensor they are called on --------------------------------

# ``model.to(device)``, ``model.eval()``: the same module back.
SELF_RETURNING = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "type", "train", "eval",
                            "requires_grad_", "share_memory", "to_empty", "xpu", "mps"})


def strip_self_returning(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``model`` of ``model.eval()``, ``model.to(device).cuda()``: what the calls return."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in SELF_RETURNING:
        expr = expr.func.value
    return expr
