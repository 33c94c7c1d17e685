"""Where a file takes a run's settings from, and where a value written in code is a
configurable default rather than a hard-coded one.

* ``takes_configuration(model)``: the file reads its settings from outside its code (a command
  line, a config file, an object named for settings, the ``exec(open("configurator.py")...)``
  idiom: ``configurator_order``).
* ``configured_values(model)``: the hyperparameters the file names (``lr = 1e-3``, an ``--lr``
  option, ``args.lr``) and whether anything but a print or a log reads them.
* ``only_run_settings(model)``: its command line holds run settings alone (``--cuda``,
  ``--dataset_root``: ``run_setting``), no hyperparameter; ``script_in_view(model)``: a script
  of its own whose values are all in view (that, or a ``__main__`` guard and no configuration).
* ``interface_takes_hyperparameters(model, node)``: a function or class around ``node`` takes
  hyperparameters from its caller.
* ``named_settings(model, node)``: the settings block (``EPOCHS = 10``) of the code around
  ``node``.
* ``concept(name)``: the hyperparameter a name stands for (``num_epochs``: ``epochs``).
* ``fills_parameter_default(model, node)``: ``node`` builds the value a parameter of the
  enclosing function takes when the caller passed none (``opt = Adam(...) if opt is None
  else opt``, ``opt or Adam(...)``, ``if opt is None: opt = Adam(...)``).
* Where a literal stands: ``in_code(ctx, node)`` (code that runs as written, not a class body
  or a parameter default), ``literal_place(model, node)`` (``TOP``, ``BURIED``,
  ``INTERFACE``), ``literal_only_local(model, name, at)`` (the literals a local holds there);
  ``file_settings(model)`` (what a file's settings are, JSON-ready), ``bypassed(model, names)``
  and ``name_bypasses_option(model, name, value)`` (a setting a literal bypasses).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from torchlint.filekinds import is_benchmark_file
from torchlint.semantic import timing
from torchlint.semantic.entry import is_main_guard
from torchlint.semantic.literals import is_positive, numeric_value
from torchlint.semantic.model import SemanticModel
from torchlint.textscan import contains, contains_any, is_lowered_word
from torchlint.tree import children

if TYPE_CHECKING:
    from torchlint.context import FileContext


def configurator_order(model: SemanticModel) -> int | None:
    """The order (``Binding.order`` scale) of the last call of the builtin ``exec`` or of
    ``globals().update`` in module-level code (not a function's); None if there is none."""
    found = None
    for site in model.module.calls:
        func = site.node.func
        if isinstance(func, cst.Name) and func.value == "exec" and not model.lookup("exec", site.scope) \
                or isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value in ("globals", "vars") \
                and not func.value.args:
            found = site.order
    return found


def fills_parameter_default(model: SemanticModel, node: cst.CSTNode) -> bool:
    """``node`` computes the fallback of a parameter that is None (or falsy) when the caller
    gives none: the chosen branch of ``p if p is not None else node`` / ``node if p is None
    else p`` / ``p or node``, ``p = node`` under ``if p is None:`` / ``if not p:``, or any code
    of the branch that runs without ``p`` (``if p: <use p> else: <build one>``), where ``p``
    is a parameter of the enclosing function or ``self.<attr>`` the class only ever sets from
    one (``_given_by_caller``)."""
    child = node
    for anc in model.ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        if isinstance(anc, cst.IfExp):
            name = _none_test(anc.test)
            if name is not None and child is (anc.body if name[1] else anc.orelse):
                return _given_by_caller(model, name[0], node)
        elif isinstance(anc, cst.BooleanOperation) and isinstance(anc.operator, cst.Or) and child is anc.right \
                and isinstance(anc.left, cst.Name):
            return _is_parameter(model, anc.left.value, node)
        elif isinstance(anc, cst.Assign) and isinstance(child, cst.BaseExpression) and child is anc.value:
            targets = {t.target.value for t in anc.targets if isinstance(t.target, cst.Name)}
            if any(_guarded_by_none_test(model, anc, name) for name in targets):
                return True
        elif isinstance(anc, cst.If):  # ``if p: <use p> else: <build one>``, ``if p is None: <build one>``
            name = _none_test(anc.test)
            if name is not None and child is (anc.body if name[1] else anc.orelse) \
                    and _given_by_caller(model, name[0], node, none_default=True):
                return True
        child = anc
    return False


def _given_by_caller(model: SemanticModel, name: str, at: cst.CSTNode, *, none_default: bool = False) -> bool:
    """``name`` is a parameter of the enclosing function, or ``self.<attr>`` that the class's
    methods only ever set from a parameter (``self.lr_scheduler = lr_scheduler``); with
    ``none_default``, a parameter whose default is None (an object the caller may give, not a
    flag such as ``warm_start=False``)."""
    if not name.startswith("self."):
        return _is_parameter(model, name, at, none_default)
    cls = model.scope_of(at).cls
    stores = cls.self_assigned.get(name[len("self."):], ()) if cls is not None else ()
    for target in stores:
        assign = model.ctx.parent(model.ctx.parent(target))
        if not isinstance(assign, cst.Assign) or not isinstance(assign.value, cst.Name) \
                or not _is_parameter(model, assign.value.value, assign, none_default):
            return False
    return bool(stores)


def _tested(expr: cst.BaseExpression) -> str | None:
    """``p`` or ``self.p``: what a None test may be about."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def _none_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """(``p``, True) for ``p is None`` / ``not p``; (``p``, False) for ``p is not None`` / ``p``
    (``p`` a name or ``self.<attr>``)."""
    name = _tested(test)
    if name is not None:
        return name, False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name = _tested(test.expression)
        return None if name is None else (name, True)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _tested(test.left) is not None:
        target = test.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
            if isinstance(target.operator, cst.Is):
                return _tested(test.left), True
            if isinstance(target.operator, cst.IsNot):
                return _tested(test.left), False
    return None


def _guarded_by_none_test(model: SemanticModel, assign: cst.Assign, name: str) -> bool:
    """``name = ...`` is in the body of ``if name is None:`` / ``if not name:`` (nothing
    between but plain blocks and ``try:``, whose handlers deal with a failed fallback), and
    ``name`` is a parameter."""
    for anc in model.ctx.ancestors(assign):
        if isinstance(anc, cst.If):
            found = _none_test(anc.test)
            return found is not None and found == (name, True) and _is_parameter(model, name, assign)
        if not isinstance(anc, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Try)):
            return False
    return False


def _is_parameter(model: SemanticModel, name: str, at: cst.CSTNode, none_default: bool = False) -> bool:
    function = model.scope_of(at).function()
    return function is not None and any(
        b.kind == "param" and (not none_default or isinstance(b.node, cst.Param) and isinstance(b.node.default, cst.Name)
                               and b.node.default.value == "None")
        for b in function.bindings.get(name, ()))


# -- where a file takes its settings from ------------------------------------------------------

# Names an object holding a run's settings goes by, in any letter case: ``args.lr``,
# ``cfg["lr"]``, ``self.hparams.lr``, ``FLAGS.lr``, ``CONFIG.lr``.
CONFIG_NAMES = frozenset({"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "hps", "params", "flags",
                          "settings", "options", "hyperparams", "hyperparameters", "hyper_params", "arg",
                          "parsed_args", "cli_args", "train_config", "training_args", "train_cfg", "run_config"})
# Calls that read settings from a command line or a file.
CONFIG_CALLS = frozenset({
    "argparse.ArgumentParser", "click.command", "click.option", "click.group", "typer.Typer", "typer.run",
    "typer.Option", "fire.Fire", "hydra.main", "omegaconf.OmegaConf.load", "omegaconf.OmegaConf.create",
    "omegaconf.OmegaConf.from_cli", "yaml.safe_load", "yaml.load", "yaml.full_load", "toml.load", "tomllib.load",
    "configparser.ConfigParser", "absl.flags.DEFINE_float", "absl.flags.DEFINE_integer", "absl.app.run",
    "jsonargparse.ArgumentParser", "jsonargparse.CLI", "simple_parsing.parse", "transformers.HfArgumentParser",
    "ml_collections.config_flags.DEFINE_config_file", "docopt.docopt", "tyro.cli",
})


# Text without any of these cannot take its settings from outside its code (a cheap test
# before ``takes_configuration`` builds anything).
_CONFIG_MARKERS = ("argv", "exec(", "globals()", *sorted({q.split(".")[0] for q in CONFIG_CALLS}), "ArgumentParser",
                   "OmegaConf", "DEFINE_", *(f"{n}{c}" for n in sorted(CONFIG_NAMES) for c in ".[") ,
                   *(f"{n.upper()}{c}" for n in sorted(CONFIG_NAMES) for c in ".["))


@functools.lru_cache(maxsize=4)
def might_take_configuration(text: str) -> bool:
    """False where ``text`` cannot take its settings from outside its code (no import, call
    or name ``takes_configuration`` looks for is written in it). Remembered for the last few
    texts: TL004's pre-check, its ``finish`` and ``takes_configuration`` each ask of a file,
    and each answer looks for ~100 markers."""
    return contains_any(text, _CONFIG_MARKERS)


def takes_configuration(model: SemanticModel) -> bool:
    """Whether the file reads a run's settings from outside its code: a command line or a
    config file (``CONFIG_CALLS``: argparse, click, typer, fire, hydra, OmegaConf, yaml/toml
    loads, absl flags, ...; ``sys.argv``), or values of an object named for settings (``CONFIG_NAMES``:
    ``args.lr``, ``cfg["lr"]``, ``self.hparams.lr``). A literal hyperparameter in such a file
    bypasses that configuration."""
    memo = model.memo("takes_configuration")
    if "" not in memo:
        memo[""] = might_take_configuration(model.ctx.text) and (
            any(model.ctx.qualified_name(site.node.func) in CONFIG_CALLS for site in model.calls)
            or configurator_order(model) is not None
            or bool(setting_reads(model))
            or contains(model.ctx.text, "argv") and any(_is_argv(model, node) for node in model.nodes_of(cst.Attribute, cst.Name)))
    return memo[""]


# Words of a setting that choose where and how a run executes, or on what, rather than how it
# learns: ``--cuda 0``, ``--dataset_root``, ``--mnist_type permuted``, ``--save``, ``--seed``.
_RUN_WORDS = frozenset({
    "cuda", "gpu", "gpus", "device", "devices", "cpu", "cpus", "tpu", "accelerator", "path", "paths", "dir", "root",
    "file", "folder", "output", "out", "workers", "worker", "debug", "verbose", "quiet", "log", "logs", "logdir",
    "logging", "rank", "port", "host", "backend", "dist", "distributed", "project", "artifacts", "wandb",
    "tensorboard", "save", "resume", "checkpoint", "ckpt", "seed", "data", "dataset", "download", "type", "name",
    "run", "exp", "experiment", "stream", "scenario", "plot", "show", "visualize", "url", "cache", "tag", "mnist",
    "cifar", "only", "dry",
})


def run_setting(name: str) -> bool:
    """A setting that chooses where, how or on what a run executes, not a hyperparameter: a
    word of its name (``_``/``-`` separated) is one of ``_RUN_WORDS`` and ``concept`` names no
    hyperparameter by it (``--cuda``, ``--dataset_root``, ``--mnist_type``; not ``--lr``,
    ``--batch_size``, ``--patience``, ``--hidden``)."""
    if concept(name) is not None:
        return False
    return any(word in _RUN_WORDS for word in name.lower().replace("-", "_").strip("_").split("_"))


def only_run_settings(model: SemanticModel) -> bool:
    """The file takes its settings from an ``argparse`` command line alone, and every option
    it defines (its ``dest``) and every setting it reads (``setting_reads``) is a run setting
    (``run_setting``), or an option that takes no number (a switch, a string:
    ``_takes_no_number``) that no hyperparameter names (``concept``): an example script whose
    only options pick the GPU (``--cuda``) and a scenario (``--scenario``, ``--semseg``) keeps
    its hyperparameters in plain view in its code, as a script with no options does. Another
    way of configuring (a config file, hydra, fire, click, ``sys.argv`` itself, the
    configurator idiom) makes this False: what it configures is not in view."""
    memo = model.memo("only_run_settings")
    if "" not in memo:
        memo[""] = _only_run_settings(model)
    return memo[""]


def script_in_view(model: SemanticModel) -> bool:
    """The file is a script of its own whose values are all in view: a command line of run
    settings alone (``only_run_settings``), or an ``if __name__ == "__main__":`` guard at its top
    level and no configuration from outside (``takes_configuration``). Its literals are its
    configuration even in a package folder (an ``examples/`` package of scripts)."""
    if only_run_settings(model):
        return True
    return not takes_configuration(model) and any(is_main_guard(s) for s in model.ctx.module.body)


def _only_run_settings(model: SemanticModel) -> bool:
    if not takes_configuration(model) or configurator_order(model) is not None:
        return False
    parsers = False
    options: dict[str, bool] = {}  # option -> it takes no number (a switch, a string)
    for site in model.calls:
        call = site.node
        qualified = model.ctx.qualified_name(call.func)
        if qualified in CONFIG_CALLS:
            if qualified != "argparse.ArgumentParser":
                return False
            parsers = True
        option = _option(call)
        if option is not None:
            options[_dest(call) or option.lstrip("-").replace("-", "_")] = _takes_no_number(call)
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in ("add_argument", "add_option"):
            return False  # a positional argument, or a name this cannot read
    if not parsers or not options:
        return False
    if contains(model.ctx.text, "argv") and any(_is_argv(model, node) for node in model.nodes_of(cst.Attribute, cst.Name)):
        return False

    def runs_only(name: str) -> bool:
        return run_setting(name) or options.get(name, False) and concept(name) is None

    return all(runs_only(name) for name in options) and all(runs_only(read) for _, read in setting_reads(model))


def _takes_no_number(call: cst.Call) -> bool:
    """An ``add_argument`` whose value is no number: a switch (``action="store_true"``), or a
    string (``type=str``, a string default, string choices): it picks what or how to run,
    and sets none of the numbers a hyperparameter is."""
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    action = given.get("action")
    if isinstance(action, cst.SimpleString) and action.evaluated_value in ("store_true", "store_false"):
        return True
    kind = given.get("type")
    if isinstance(kind, cst.Name):
        return kind.value == "str"
    default, choices = given.get("default"), given.get("choices")
    if isinstance(default, cst.SimpleString):
        return True
    return isinstance(choices, (cst.List, cst.Tuple)) and bool(choices.elements) \
        and all(isinstance(e.value, cst.SimpleString) for e in choices.elements)


def _is_argv(model: SemanticModel, node: cst.CSTNode) -> bool:
    """``sys.argv`` (however ``sys`` or ``argv`` was imported)."""
    return (isinstance(node, cst.Attribute) and node.attr.value == "argv"
            or isinstance(node, cst.Name) and node.value == "argv") and model.ctx.qualified_name(node) == "sys.argv"


# What an optimizer has: ``opt.param_groups`` reads an optimizer (``opt`` names either).
_OPTIMIZER_ATTRIBUTES = frozenset({"param_groups", "state", "defaults"})


def configured_read(node: cst.CSTNode) -> str | None:
    """The setting ``node`` reads from an object named for settings: ``lr`` for ``args.lr``,
    ``self.hparams.lr``, ``cfg["lr"]``, ``config.optim.lr``; None for anything else, and for
    an optimizer's own attributes (``opt.param_groups[0]["lr"]``: ``opt`` names either)."""
    if isinstance(node, cst.Attribute):
        base, key = node.value, node.attr.value
    elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and isinstance(node.slice[0].slice.value, cst.SimpleString):
        base, key = node.value, node.slice[0].slice.value.value[1:-1]
    else:
        return None
    if key in _OPTIMIZER_ATTRIBUTES:
        return None
    while isinstance(base, (cst.Attribute, cst.Subscript)):  # config.optim.lr, args["train"]["lr"]
        inner = base.attr.value if isinstance(base, cst.Attribute) else None
        if inner in _OPTIMIZER_ATTRIBUTES:
            return None
        if inner is not None and inner.lower() in CONFIG_NAMES and isinstance(base.value, cst.Name) \
                and base.value.value == "self":
            return key
        base = base.value
    return key if isinstance(base, cst.Name) and base.value.lower() in CONFIG_NAMES else None


# Text a setting read needs (``args.lr``, ``cfg["lr"]``, ``self.hparams.lr``): a name of
# ``CONFIG_NAMES``, in any case, then ``.`` or ``[``, where no name character or ``.`` comes
# before it, or ``self.`` does. A file without it has none, and its tree is not walked for
# them (``might_read_settings``).
_READ_TEXT = {name: re.compile(re.escape(name) + r"\s*[.\[]") for name in sorted(CONFIG_NAMES)}
_READ_BEFORE = re.compile(r"(?<![\w.])|(?<=self\.)")
# The characters an ``(?i)`` pattern matches with an ASCII letter that ``str.lower`` does not
# turn into it: folded so that the lowered text matches wherever ``(?i)`` would.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def might_read_settings(text: str) -> bool:
    """Whether ``text`` holds ``_READ_TEXT`` in any case: the text lowered (with ``_FOLD``),
    then each name followed by ``.`` or ``[`` tried for what comes before it. Only the names
    that are words of the lowered text can be there (``is_lowered_word``: a name read is
    one, bounded by what comes before it and by the space, ``.`` or ``[`` after it); one
    pattern per name finds its places with a literal search. (One ``(?i)`` pattern of every
    name with the lookbehind in front tries every position of the file: 1.9 s against 0.13 s
    with the lookbehind tried after, and 0.05 s per name, on torchvision+skorch+accelerate.)"""
    names = [name for name in _READ_TEXT if is_lowered_word(text, name)]
    if not names:
        return False
    folded = (text if text.isascii() else text.translate(_FOLD)).lower()
    return any(_READ_BEFORE.match(folded, found.start()) for name in names for found in _READ_TEXT[name].finditer(folded))


def setting_reads(model: SemanticModel) -> list[tuple[cst.CSTNode, str]]:
    """Every setting the file reads from an object named for settings (``_setting_read``), as
    (node, setting) in source order; one walk per file, shared by ``takes_configuration`` and
    ``configured_values``."""
    memo = model.memo("setting_reads")
    if "" not in memo:
        found = []
        if might_read_settings(model.ctx.text):
            for node in model.nodes_of(cst.Attribute, cst.Subscript):
                read = _setting_read(model, node)
                if read is not None:
                    found.append((node, read))
        memo[""] = found
    return memo[""]


def _setting_read(model: SemanticModel, node: cst.CSTNode) -> str | None:
    """``configured_read``, less a method called on the object (``opt.step()``,
    ``opt.zero_grad()``: an optimizer named ``opt``)."""
    methods = model.memo("called_attributes")
    if "" not in methods:
        methods[""] = {site.node.func for site in model.calls if isinstance(site.node.func, cst.Attribute)}
    read = configured_read(node)
    return None if read is None or node in methods[""] else read


# What a hyperparameter is called, whatever spelling a script uses (``num_epochs``, ``LR``, ``bs``).
_CONCEPTS = {
    "lr": "lr", "learning_rate": "lr", "learningrate": "lr",
    "batch_size": "batch_size", "batchsize": "batch_size", "bs": "batch_size", "batch": "batch_size",
    "epochs": "epochs", "nepochs": "epochs", "nepoch": "epochs",
    "momentum": "momentum", "weight_decay": "weight_decay", "wd": "weight_decay", "l2": "weight_decay",
    "max_norm": "max_norm", "max_grad_norm": "max_norm", "grad_clip": "max_norm", "clip": "max_norm",
    "clip_grad": "max_norm", "gradient_clip_val": "max_norm", "clip_norm": "max_norm", "clip_value": "max_norm",
    "step_size": "step_size", "gamma": "gamma", "lr_gamma": "gamma", "lr_decay": "gamma",
    "warmup_steps": "warmup_steps", "num_warmup_steps": "warmup_steps", "warmup": "warmup_steps",
}
# Words that make a name another value than the run's hyperparameter: ``start_epoch`` (where to
# resume), ``min_lr`` (a scheduler's floor), ``test_batch_size`` (evaluation).
_OTHER = frozenset({"start", "begin", "cur", "current", "last", "best", "resume", "min", "final", "end", "decay",
                    "warmup", "scheduler", "test", "val", "valid", "eval", "evaluation", "inference", "sample", "print",
                    "log", "save", "every", "interval", "freq", "frequency", "per"})


def concept(name: str) -> str | None:
    """The hyperparameter a name stands for: ``lr``, ``LEARNING_RATE``, ``train_lr``,
    ``base_lr`` -> ``lr``; ``num_epochs``, ``EPOCHS``, ``total_epoch``, ``n_epoch`` ->
    ``epochs``; ``BATCH_SIZE``, ``train_batch_size`` -> ``batch_size``; None for another
    value (``start_epoch``, ``min_lr``, ``test_batch_size``, the loop variable ``epoch``)."""
    name = name.lower()
    found = _CONCEPTS.get(name)
    if found is not None or name == "epoch":
        return found
    words = name.split("_")
    if _OTHER.intersection(words):
        return None
    if "lr" in words or "learning_rate" in name or "learningrate" in name:
        return "lr"
    if any(w in ("epochs", "epoch", "nepochs", "nepoch", "epoches") for w in words):
        return "epochs"
    if "batch_size" in name or "batchsize" in name:
        return "batch_size"
    return None


# Parameters that hand a function the run's settings (``train(model, cfg)``); ``opt`` and
# ``params`` are as often an optimizer and a model's parameters.
_SETTINGS_PARAMETERS = CONFIG_NAMES - {"opt", "opts", "params", "options", "arg"}


def interface_takes_hyperparameters(model: SemanticModel, node: cst.CSTNode, settings_object: bool = True) -> bool:
    """Whether a function around ``node``, or the ``__init__`` of the class around it, takes
    a hyperparameter from its caller (a parameter ``concept`` names: ``lr``, ``train_lr``,
    ``epochs``) or the run's settings (``cfg``, ``config``, ``hparams``; unless not
    ``settings_object``: a file whose parsed arguments are run settings alone, ``main(args)``
    with only ``--cuda``, ``only_run_settings``): its interface is where its settings come
    from, and a literal beside them bypasses it."""
    for scope in model.scope_of(node).chain():
        if isinstance(scope.node, cst.FunctionDef):
            function = scope.node
        elif scope.kind == "class" and scope.cls is not None:
            function = scope.cls.methods.get("__init__")
        else:
            continue
        if function is not None and any(concept(p.name.value)
                                        or settings_object and p.name.value.lower() in _SETTINGS_PARAMETERS
                                        for p in _parameters(function)):
            return True
    return False


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    p = function.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


class Configured(NamedTuple):
    """A hyperparameter a file configures: how the code names it (``lr``, ``args.lr``,
    ``--lr``), where, whether any code but a print or a log reads it, and how it is set:
    ``NAME`` (a module-level name), ``OPTION`` (a command-line option) or ``READ`` (read
    from an object named for settings)."""
    shown: str
    node: cst.CSTNode
    used: bool
    kind: str


NAME, OPTION, READ = "name", "option", "read"


def configured_values(model: SemanticModel) -> dict[str, Configured]:
    """Hyperparameter (``concept``) -> ``Configured`` for the ones the file configures: a
    module-level name assigned a number (``batch_size = 64``, ``LR = 1e-3``: a notebook's or
    script's settings), a command-line option (``add_argument("--lr", ...)``, its ``dest=``
    read), or a setting read from an object named for settings (``args.lr``). One that nothing
    but a print or a log reads is bypassed by a literal for the same hyperparameter: changing it
    changes nothing; an option nothing reads wins over a module-level name of the same
    hyperparameter (``lr = 0.01`` beside an unread ``--lr``: the name bypasses it)."""
    memo = model.memo("configured_values")
    if "" in memo:
        return memo[""]

    # What the code reads (``_reads``: a walk of its own) is asked only where some
    # hyperparameter is configured at all.
    read_memo: list = []

    def reads() -> tuple[set[str], set[str], bool]:
        if not read_memo:
            read_memo.append(_reads(model.ctx.module))
        return read_memo[0]

    found: dict[str, Configured] = {}
    for key, bindings in model.module.bindings.items():
        idea = concept(key) if "." not in key and "[" not in key else None
        if idea is not None and idea not in found and any(
                b.kind in ("assign", "ann") and b.value is not None and is_positive(numeric_value(b.value))
                for b in bindings):
            found[idea] = Configured(key, bindings[0].node, key in reads()[0], NAME)
    for site in model.calls:
        option = _option(site.node)
        idea = concept(option[2:].replace("-", "_")) if option else None
        if idea is None:
            continue
        dest = _dest(site.node) or option[2:].replace("-", "_")
        used = dest in reads()[1] or bool(reads()[2])
        # An option nothing reads counts even beside a module-level name for the same value
        # (``lr = 0.01`` under ``--lr``): that name bypasses it.
        if idea not in found or not used and found[idea].kind == NAME:
            found[idea] = Configured(option, site.node, used, OPTION)
    for node, read in setting_reads(model):
        idea = concept(read)
        if idea is not None and idea not in found:
            found[idea] = Configured(model.ctx.module.code_for_node(node).strip(), node, read in reads()[1], READ)
    memo[""] = found
    return found


def named_settings(model: SemanticModel, node: cst.CSTNode) -> tuple[str, cst.CSTNode, str | None] | None:
    """The first hyperparameter the code around ``node`` names (``EPOCHS = 10``,
    ``batch_size = 128``: a name ``concept`` knows, assigned a positive number): in the
    function around it, else at module level; with the function's name (None at module
    level). None where neither names any: then the code keeps no settings block that a
    literal could be left out of."""
    function = model.scope_of(node).function()
    for scope in ((function,) if function is not None else ()) + (model.module,):
        found = [(b.order, key, b.node) for key, bindings in scope.bindings.items()
                 if "." not in key and "[" not in key and concept(key) is not None
                 for b in bindings[:1]
                 if b.kind in ("assign", "ann") and b.value is not None and is_positive(numeric_value(b.value))]
        if found:
            _, key, where = min(found, key=lambda f: f[0])
            return key, where, scope.name if scope is function else None
    return None


def _dest(call: cst.Call) -> str | None:
    """The ``dest=`` of an ``add_argument`` call (``"--lr", dest="learning_rate"``)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dest" and isinstance(arg.value, cst.SimpleString):
            return arg.value.value[1:-1]
    return None


def _option(call: cst.Call) -> str | None:
    """``--lr`` for ``parser.add_argument("--lr", ...)`` (the last long spelling)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("add_argument", "add_option")):
        return None
    spelled = [a.value.value[1:-1] for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    long = [s for s in spelled if s.startswith("--")]
    return long[-1] if long else None


# Calls that only show a value: reading a setting there does not use it.
_SHOWING = frozenset({"print", "log", "info", "debug", "warning", "add_scalar", "add_scalars", "add_hparams",
                      "log_metrics", "log_hyperparams", "set_postfix", "set_description", "write", "format", "pprint"})


def _reads(module: cst.Module) -> tuple[set[str], set[str], bool]:
    """What the code reads outside calls that only show a value (``_SHOWING``): the names
    loaded, the attribute names read (``args.lr`` -> ``lr``; ``getattr(args, "lr")`` too), and
    whether a whole parsed-arguments object goes anywhere (``vars(args)``, ``main(args)``)."""
    names: set[str] = set()
    attributes: set[str] = set()
    whole = False
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            callee = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
                node.func.value if isinstance(node.func, cst.Name) else None
            if callee in _SHOWING:
                continue
            if callee == "getattr" and len(node.args) > 1 and isinstance(node.args[1].value, cst.SimpleString):
                attributes.add(node.args[1].value.value[1:-1])
            whole = whole or any(isinstance(a.value, cst.Name) and a.value.value.lower() in CONFIG_NAMES for a in node.args)
        elif isinstance(node, cst.Arg):  # ``f(lr=0.1)``: the keyword is no read of ``lr``
            stack.append(node.value)
            continue
        elif isinstance(node, cst.Param):  # a parameter's name is not a read of a setting
            stack.extend(n for n in (node.default, node.annotation) if n is not None)
            continue
        elif isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Attribute):
            attributes.add(node.attr.value)
            stack.append(node.value)
            continue
        elif isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            if node.value is not None:
                stack.append(node.value)
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            stack.extend(t.value for t in targets if isinstance(t, (cst.Attribute, cst.Subscript)))
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                names.add(node.target.value)  # lr *= 0.5 reads lr
            continue
        stack.extend(children(node))
    return names, attributes, whole


# -- where a literal stands --------------------------------------------------------------------

def in_code(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` is in a function body or module-level code, which runs as written: not in a
    class body (a class attribute is a default its users override) nor in a parameter default
    (the caller's to change). Asked during the walk too: it reads only the parent links."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.Param):
            return False
        if isinstance(anc, (cst.FunctionDef, cst.Module)):
            return True
        if isinstance(anc, cst.ClassDef):
            return False
    return True


TOP, BURIED, INTERFACE = "top", "buried", "interface"


def literal_place(model: SemanticModel, node: cst.CSTNode) -> str:
    """Where a literal stands: ``INTERFACE`` where a function or class around it takes
    hyperparameters from its caller (``interface_takes_hyperparameters``; a settings object
    counts unless the file's command line holds run settings alone, ``only_run_settings``),
    else ``BURIED`` in a function or class body, else ``TOP`` (module-level code)."""
    if interface_takes_hyperparameters(model, node, settings_object=not only_run_settings(model)):
        return INTERFACE
    scope = model.scope_of(node)
    return BURIED if scope.function() is not None or scope.kind == "class" else TOP


def literal_only_local(model: SemanticModel, name: str, at: cst.CSTNode, *,
                       bypassing: bool = False) -> list[cst.BaseExpression] | None:
    """The literals (``literals.numeric_value``) a lower-case local ``name`` may hold at
    ``at``, when every binding of it reaching there is an assignment of a literal in the scope
    ``at`` is in (its function, or module-level code); else None. A module-level name is a
    script's or notebook's setting in plain view, not a local (None), unless ``bypassing``:
    then an upper-case name counts too, and so does a module-level one read in a function
    (``lr = 0.01`` beside a ``--lr`` option nothing reads: ``name_bypasses_option``)."""
    if name.isupper() and not bypassing:
        return None
    home = model.scope_of(at).function() or model.module
    found = model.reaching(name, at)
    if bypassing and found and all(b.scope is model.module for b in found):
        home = model.module  # a module-level name read in a function
    if not found or any(b.scope is not home or b.kind not in ("assign", "ann") for b in found):
        return None
    if any(numeric_value(b.value) is None for b in found):
        return None
    if home is model.module and not bypassing:
        return None  # a script's or notebook's named value: its configuration, in plain sight
    return [b.value for b in found]


def file_settings(model: SemanticModel) -> dict:
    """What a file's settings are, JSON-ready (a rule's project pass reads them from facts):
    ``notebook``; ``benchmark`` (a timing benchmark, ``filekinds.is_benchmark_file`` and
    ``timing.times_code``: its values are held fixed on purpose); ``configured`` (it takes
    hyperparameters from outside its code: ``takes_configuration``, not ``only_run_settings``);
    ``own_script`` (``script_in_view``); ``unused``: hyperparameter (``concept``) -> [how the
    code names it, line] for each one it configures that nothing but a print or a log reads
    (``configured_values``)."""
    memo = model.memo("file_settings")
    if "" not in memo:
        path = model.ctx.path
        memo[""] = {
            "notebook": path.endswith(".ipynb"),
            "benchmark": is_benchmark_file(path) and timing.times_code(model),
            # an argparse line of run settings alone (``--cuda``) configures no hyperparameter
            "configured": takes_configuration(model) and not only_run_settings(model),
            "own_script": script_in_view(model),
            "unused": {idea: [c.shown, model.ctx.line_of(c.node)]
                       for idea, c in configured_values(model).items() if not c.used}}
    return memo[""]


def bypassed(model: SemanticModel, names) -> set[str]:
    """Of hyperparameter argument ``names`` (``lr``, ``batch_size``), those whose
    hyperparameter (``concept``) the file configures and nothing but a print or a log reads
    (``file_settings``' ``unused``): a literal for one bypasses that setting."""
    unused = file_settings(model)["unused"] if names else None
    return {n for n in names if (concept(n) or n) in unused} if unused else set()


def name_bypasses_option(model: SemanticModel, name: str, value: cst.Name) -> bool:
    """``value``, a name passed for hyperparameter ``name``, is named for the same
    hyperparameter (``lr`` for ``lr=``) as a command-line option nothing reads (``--lr``): the
    name bypasses the option. A notebook's other names (``sample = 5`` for a loader that shows
    a few images) stay its configuration."""
    idea = concept(name) or name
    unused = file_settings(model)["unused"].get(idea)
    return unused is not None and unused[0].startswith("--") and concept(value.value) == idea
