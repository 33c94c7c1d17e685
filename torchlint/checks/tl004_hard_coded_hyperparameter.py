"""TL004 hard-coded-hyperparameter: a training hyperparameter written as a numeric literal in
a function body or a script's top-level code.

The walk notes the watched calls and the range loops; everything is settled in ``finish``
with the shared layer (``ctx.semantic`` and the ``torchlint.semantic`` modules named below):

* ``visit_Call`` recognises the watched calls -- optimizers, learning-rate schedulers,
  ``DataLoader``, gradient clipping, Hugging Face ``TrainingArguments``, Lightning
  ``Trainer`` -- and maps their arguments (keywords, and positionals through each callee's
  signature, ``semantic.optim_classes``) to hyperparameter names. A watched argument is a
  finding when it is a numeric literal (``semantic.literals``: ``0.1``, ``1e-3``, ``0.1 * 2``,
  ``[30, 80]``) or a lower-case local whose reaching assignments are all such literals;
  the latter is reported at the literal.
* Range loops that are epoch loops (``semantic.epochs``) report their count, also
  ``range(start, start + 200)``.
* Calls to classes that may subclass an optimizer are settled when the class chain stays in
  this file; otherwise their literal arguments go into ``ctx.facts["TL004"]`` and
  ``check_project`` follows ``Project.ancestors``.
* A DataLoader's batch size counts when it feeds training (``semantic.loaders``: it
  shuffles, or a ``train_dataloader`` hook builds it), or when the file trains and the loader
  is not an evaluation one; either way only when it takes more than one sample at a time
  (``batch_size=1`` restates DataLoader's own default).
* A literal that bypasses a setting the file makes and nothing reads (``settings.bypassed``) is
  reported whatever its value: zero, a default restated, ``batch_size=1``.
* Not hard-coded: class bodies, parameter defaults and what fills them in
  (``opt = opt or Adam(...)``, ``if opt is None:`` also around a ``try:``), a literal that
  restates a torch.optim class's own default or a LinearLR warm-up from zero
  (``semantic.optim_classes.is_neutral``), module-level settings (UPPER_CASE, the leading block of
  constants, any under a configurator: ``semantic.settings``), ``argparse``, test and
  config files, zero and negative values ("off" / "unlimited"). Not a training run
  (``semantic.runs``): a file that optimises an input tensor, a function that solves for a
  value it returns (an optimizer over a copy of it), an optimizer stepped once with no loop (in a
  function the file never calls, on made-up tensors only: ``runs.single_demo_step``), one
  whose settings a checkpoint replaces right away (``runs.state_restored``); nor is an ``lr`` that the stepping loop overwrites in every param group (in another
  project file too: an optimizer a function returns to no same-file caller is settled in
  ``check_project``), nor a clipping literal where every optimizer takes its lr from a config.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from torchlint.filekinds import CONFIG_FILES_DESCRIPTION, is_config_file, is_demo_module, is_test_file
from torchlint.finding import Finding, Severity, Span
from torchlint.libraries import is_library
from torchlint.rule import Option, Rule
from torchlint.semantic import epochs, hyperparameters, loaders, optim_classes, runs, settings
from torchlint.semantic.branches import exclusive
from torchlint.semantic.hyperparameters import CLIP_NAMES, LOADER, OPTIMIZER, OTHER
from torchlint.semantic.literals import is_positive, numeric_value
from torchlint.semantic.optim_classes import OPTIMIZER_HYPERPARAMETERS
from torchlint.semantic.packages import imported_by_another
from torchlint.semantic.settings import BURIED, INTERFACE, TOP
from torchlint.statements import dotted_name
from torchlint.torch_api import OPTIMIZER_CLASSES
from torchlint.tree import node_text

__all__ = ["HardCodedHyperparameter", "is_config_file", "is_test_file", "numeric_value"]

# -- what is watched ---------------------------------------------------------------------

EPOCHS = "epochs"  # the name an epoch loop's bound goes by (for ignore-names)

DESCRIPTIONS = {
    "lr": "learning rate", "learning_rate": "learning rate", "max_lr": "maximum learning rate",
    "base_lr": "base learning rate", "momentum": "momentum", "weight_decay": "weight decay",
    "batch_size": "batch size", "per_device_train_batch_size": "batch size", "num_train_epochs": "epoch count",
    "max_epochs": "epoch count", EPOCHS: "epoch count", "max_norm": "gradient-clipping max_norm",
    "max_grad_norm": "gradient-clipping max_norm", "clip_value": "gradient-clipping value",
    "gradient_clip_val": "gradient-clipping value", "warmup_steps": "warmup length",
    "num_warmup_steps": "warmup length", "warmup_ratio": "warmup ratio",
}
_WHY = "so it cannot be swept, logged or reproduced; read it from a config or a command-line argument"
# reported by the file's pass; settled by the project pass: in a package of a configured project,
# in a script that another linted file imports
_NOW, _PACKAGE, _IMPORTED = "now", "package", "imported"


class HardCodedHyperparameter(Rule):
    code = "TL004"
    name = "hard-coded-hyperparameter"
    severity = Severity.WARNING
    default_enabled = True
    summary = "Training hyperparameter (lr, batch size, epochs, ...) hard-coded as a literal in code"
    options = {
        "extend-names": Option([], list, "extra keyword names to watch, in any call (e.g. warmup_epochs)", item_kind=str),
        "ignore-names": Option([], list, "hyperparameter names never to report (e.g. batch_size, epochs)", item_kind=str),
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, *_test.py, tests.py, conftest.py)"),
        "skip-config-files": Option(True, bool, f"skip config files ({CONFIG_FILES_DESCRIPTION})"),
    }
    # A finding needs one of: an optimizer (its module says "optim", or its class name), a
    # scheduler ("optim"/"schedule"), a DataLoader, clipping ("clip"), a Trainer or
    # TrainingArguments, an optimizer keyword on a project class (lr, momentum,
    # weight_decay), or a range loop; or a keyword the options add.
    # The commonest first: ``any`` stops at the first present, and each absent one is a scan
    # of the whole text.
    requires_text = ("range", "lr", "optim", "schedule", "DataLoader", "clip", "Trainer", "TrainingArguments",
                     "momentum", "weight_decay", *sorted(OPTIMIZER_CLASSES))
    skips_test_files = True
    # The __init__ of an optimizer subclass another file constructs; the functions that
    # overwrite a learning rate they are handed.
    shared_facts = ("inits", "lr_overwritten")

    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        extra = (options or {}).get("extend-names") or ()
        return any(t in text for t in cls.requires_text) or any(name in text for name in extra) \
            or settings.might_take_configuration(text)  # the project pass asks whether it does


    def __init__(self, ctx, options: dict[str, Any]):
        super().__init__(ctx, options)
        path = ctx.path
        self._skip = bool(options.get("skip-config-files", True) and is_config_file(path))
        self._ignore = frozenset(options.get("ignore-names") or ())
        self._extra = frozenset(options.get("extend-names") or ()) - self._ignore
        self._reported: set[int] = set()
        self._shown: list[tuple[str, str, cst.CSTNode]] = []  # (name, value as written, literal) reported
        # Noted during the walk, settled in ``finish`` (the shared models answer then):
        self._calls: list[tuple[cst.Call, str, list]] = []  # watched call, its kind, (name, value) pairs
        self._loops: list[tuple[cst.For, cst.BaseExpression]] = []  # range loops that may be epoch loops
        self._class_calls: list[cst.Call] = []  # calls that may construct an optimizer subclass
        self._subclasses: set[str] = set()  # names of this file's classes that may subclass an optimizer
        # Cheap necessary conditions, so the shared models are built only where they can
        # change the answer:
        self._trainish = False  # a call named train/fit/epoch/backward/step somewhere
        self._builds_optimizer = False  # a library optimizer is constructed
        self._literal_names: set[str] = set()  # names assigned a numeric literal somewhere
        self._inits: dict[str, list[str]] = {}  # qualified class name -> __init__ parameters
        # [the function returning it to another file or None, span, message, gate's kind]:
        # settled in check_project (``_report``)
        self._deferred: list[list] = []

    # -- visits ---------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """Note a class that may subclass an optimizer, and its ``__init__`` parameters (for
        ``check_project``, when the class is called from another file)."""
        if self._skip or not node.bases or not any(
                optim_classes.may_be_optimizer_base(self.ctx, b.value, self._subclasses) for b in node.bases):
            return
        self._subclasses.add(node.name.value)
        init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None:
            return
        outer = [a for a in self.ctx.ancestors(node) if isinstance(a, (cst.ClassDef, cst.FunctionDef))]
        if all(isinstance(a, cst.ClassDef) for a in outer):  # the project index keeps these (``Outer.Inner``)
            self._inits[".".join([*(a.name.value for a in reversed(outer)), node.name.value])] = \
                optim_classes.init_params(init)

    def visit_Assign(self, node: cst.Assign) -> None:
        if numeric_value(node.value) is not None:
            self._literal_names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name) and numeric_value(node.value) is not None:
            self._literal_names.add(node.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._trainish and epochs.TRAINISH_CALL.search(epochs.call_name(node)):
            self._trainish = True
        if not self.reports:
            return  # where only shared facts are kept, ``_share_facts`` looks for optimizers itself
        noted = self._noted(node)
        if noted is not None:
            self._builds_optimizer = self._builds_optimizer or noted[0] == OPTIMIZER
            self._calls.append((node, *noted))

    def _noted(self, call: cst.Call) -> tuple[str, list] | None:
        """The call's kind and watched arguments, where the walk notes the call: a watched
        call in code (not in a config file)."""
        if self._skip or not call.args:
            return None
        kind, watched = self._watched(call)
        return (kind, watched) if watched and settings.in_code(self.ctx, call) else None

    def visit_For(self, node: cst.For) -> None:
        if self._skip or EPOCHS in self._ignore:
            return
        stop = epochs.range_stop(self.ctx, node.iter)
        if stop is not None and (numeric_value(stop) is not None or isinstance(stop, cst.Name)) and settings.in_code(self.ctx, node):
            self._loops.append((node, stop))

    # -- the analysis -----------------------------------------------------------------------
    def finish(self) -> None:
        if not self.reports:
            self._share_facts()
            return
        if self._builds_optimizer and runs.optimises_inputs(self.ctx.semantic):
            return  # style transfer, adversarial examples: not a training run
        self._check_file()
        self._lr_overwritten()

    def _lr_overwritten(self) -> None:
        if self._trainish and "param_groups" in self.ctx.text:
            overwritten = runs.lr_overwritten_callees(self.ctx.semantic)
            if overwritten:
                self.ctx.facts.setdefault(self.code, {})["lr_overwritten"] = sorted(overwritten)

    def _share_facts(self) -> None:
        """Only the facts other files read (``shared_facts``), as ``finish`` stores them: none
        in a file that optimises its inputs. Whether it builds an optimizer (which the walk
        did not note) is asked only where there is something to store."""
        if self._inits:
            self.ctx.facts.setdefault(self.code, {})["inits"] = self._inits
        self._lr_overwritten()
        if self.code in self.ctx.facts and self._optimizer_built() and runs.optimises_inputs(self.ctx.semantic):
            del self.ctx.facts[self.code]

    def _optimizer_built(self) -> bool:
        """What the walk's ``visit_Call`` notes in ``_builds_optimizer``: a library optimizer
        constructed, with a watched argument, in code."""
        return any((noted := self._noted(site.node)) is not None and noted[0] == OPTIMIZER
                   for site in self.ctx.semantic.model.calls)

    def _check_file(self) -> None:
        """This file's findings, and the facts of those settled with the other files."""
        for call, kind, watched in self._calls:
            self._check_call(call, kind, watched)
        if self._trainish:
            training = self.ctx.semantic.training if self._loops else None
            for loop, stop in self._loops:
                if epochs.is_epoch_loop(training, loop):
                    self._check(EPOCHS, stop, loop, "in the epoch loop's `range(...)`", "bounds the epoch loop")
        if self._class_calls or self._inits:
            self._check_class_calls()
        if self._deferred:
            self.ctx.facts.setdefault(self.code, {})["deferred"] = self._deferred
        # The project's settings come from outside its code: this file reads them, or it is a
        # config file that sets some (``check_project``).
        if settings.might_take_configuration(self.ctx.text) and self._settings()["configured"] \
                or is_config_file(self.ctx.path) and settings.configured_values(self.ctx.semantic.model):
            self.ctx.facts.setdefault(self.code, {})["configured"] = True
        if "calls" in self.ctx.facts.get(self.code, {}):
            self.ctx.facts[self.code]["settings"] = self._settings()

    def _check_call(self, call: cst.Call, kind: str, watched: list) -> None:
        """Report the watched arguments of one call, unless the call is not part of a
        training run's configuration."""
        callee = self.ctx.qualified_name(call.func) or "the call"
        bypassed = settings.bypassed(self.ctx.semantic.model, [n for n, _ in watched])  # ``gate``'s first case
        # A literal that bypasses a setting the file makes for the same hyperparameter is reported
        # whatever its value: zero (``weight_decay=0``), a default restated (``batch_size=1``)
        # or a tuned one, changing the setting changes nothing.
        watched = [(n, v) for n, v in watched if isinstance(v, cst.Name) or n in bypassed and numeric_value(v) is not None
                   or is_positive(numeric_value(v)) and not optim_classes.is_neutral(callee, n, numeric_value(v))]
        if not watched:
            return
        semantic = self.ctx.semantic
        floor, later = 0, None
        if kind == LOADER and loaders.feeds_evaluation(semantic, call):
            return  # ``valloader = DataLoader(valset, ..., shuffle=True)``: shuffled, still for evaluation
        if kind == LOADER:
            if not runs.file_trains(semantic) and (not loaders.feeds_training(self.ctx, call)
                                                   or self._where(call) == TOP):
                return  # a script that never trains iterates its loaders to show them (a shuffling one too)
            # batch_size=1 is DataLoader's own default: one sample at a time, nothing tuned (unless
            # a --batch_size that nothing reads says otherwise)
            floor = 1 if "batch_size" not in bypassed else -1
        if settings.fills_parameter_default(semantic.model, call) or kind == OPTIMIZER and runs.makes_no_run(self.ctx.semantic, call):
            return
        if kind == OPTIMIZER:
            if any(n == "lr" for n, _ in watched):
                if runs.lr_set_every_step(semantic, call) or any(
                        n == "lr" and numeric_value(v) == 1 for n, v in watched) and runs.lr_given_by_lambda(semantic, call):
                    watched = [(n, v) for n, v in watched if n != "lr"]
                else:
                    later = runs.returned_by(semantic, call)  # another file's loop may overwrite it
        elif any(n in CLIP_NAMES for n, _ in watched) and runs.optimizer_from_config(semantic):
            watched = [(n, v) for n, v in watched if n not in CLIP_NAMES]  # a fixed guard beside configured ones
        for name, value in watched:
            self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`",
                        -1 if name in bypassed else floor, later if name == "lr" else None, callee)

    # -- what a call watches --------------------------------------------------------------
    def _watched(self, call: cst.Call) -> tuple[str, list[tuple[str, cst.BaseExpression]] | None]:
        """``hyperparameters.watched``, noting the calls that may build an optimizer subclass."""
        kind, watched = hyperparameters.watched(self.ctx, call, self._extra, self._ignore)
        if kind == hyperparameters.MAYBE_OPTIMIZER:
            self._class_calls.append(call)  # maybe an optimizer subclass of this or another project file (finish)
            kind = OTHER
        return kind, watched

    # -- values --------------------------------------------------------------------------
    def _check(self, name: str, value: cst.BaseExpression, anchor: cst.CSTNode, where: str, used: str,
               floor: float = 0, later: str | None = None, qualified: str = "") -> None:
        """Report ``value`` when it is a literal above ``floor``, or a literal-only local
        (``qualified``: the callee it is passed to, for ``optim_classes.is_neutral``)."""
        number = numeric_value(value)
        if number is not None:
            if is_positive(number, floor):
                self._report(name, value, f"is hard-coded {where}", later)
        elif isinstance(value, cst.Name):
            bypassing = floor < 0 and settings.name_bypasses_option(self.ctx.semantic.model, name, value)
            for literal in self._literal_local(value, anchor, bypassing) or ():
                number = numeric_value(literal)
                if is_positive(number, floor) and (floor < 0 or not optim_classes.is_neutral(qualified, name, number)):
                    self._report(name, literal,
                                 f"is hard-coded: `{value.value}` is assigned only this literal and {used}", later,
                                 named=True)

    def _report(self, name: str, literal: cst.BaseExpression, what: str, later: str | None = None,
                named: bool = False) -> None:
        """Report now, or, with ``later`` (the function returning the optimizer to another
        file), in ``check_project`` unless a project file's loop overwrites that optimizer's
        lr; where the literal is hard-coded at all (``_gate``; ``named``: it reaches the call
        through a name of its own)."""
        if id(literal) in self._reported:
            return
        self._reported.add(id(literal))
        text = node_text(self.ctx.module, literal, 30)
        if any(n == name and t == text and exclusive(self.ctx, other, literal) for n, t, other in self._shown):
            return  # the same value in the other branch of one ``if`` (an NPU and a CUDA call): one finding
        gate = self._gate(name, literal, named)
        if gate is None:
            return
        self._shown.append((name, text, literal))
        kind, tail = gate
        message = f"{DESCRIPTIONS.get(name, f'`{name}`')} {text} {what}{tail}"
        if kind == _NOW and later is None:
            self.report(literal, message)
        else:
            self._deferred.append([later, self.ctx.span(literal).to_json(), message, kind])

    def _gate(self, name: str, literal: cst.BaseExpression, named: bool = False) -> tuple[str, str] | None:
        """``gate`` for a literal of this file."""
        return gate(name, self._settings(), self._where(literal), None if named else self._block(literal))

    def _block(self, literal: cst.BaseExpression) -> list | None:
        """``gate``'s ``block``: the settings block of the code around ``literal``."""
        found = settings.named_settings(self.ctx.semantic.model, literal)
        if found is None:
            return None
        var, node, function = found
        return [var, self.ctx.line_of(node), f"`{function}`" if function else "the script"]

    def _settings(self) -> dict:
        """What ``gate`` reads of the file (``settings.file_settings``)."""
        return settings.file_settings(self.ctx.semantic.model)

    def _where(self, literal: cst.BaseExpression) -> str:
        """``gate``'s ``where`` of a literal of this file (``settings.literal_place``)."""
        return settings.literal_place(self.ctx.semantic.model, literal)

    def _literal_local(self, name: cst.Name, anchor: cst.CSTNode, bypassing: bool = False) -> list | None:
        """``settings.literal_only_local`` of a name some statement assigns a literal."""
        if name.value not in self._literal_names:
            return None
        return settings.literal_only_local(self.ctx.semantic.model, name.value, anchor, bypassing=bypassing)

    # -- optimizer subclasses (this file, and other project files through facts) ------------
    def _check_class_calls(self) -> None:
        """Calls to a class of this file that subclasses an optimizer are checked here; calls
        to one whose chain leaves the file go to ``check_project`` (``ctx.facts``)."""
        candidates = []
        for call in self._class_calls:
            func = call.func
            if isinstance(func, cst.Name) and not self.ctx.is_imported(func):
                if func.value not in self._subclasses:
                    continue
                info = optim_classes.class_called(self.ctx.semantic.model, func.value, call)
                if info is None:
                    continue
                positions = optim_classes.local_positions(info)
                target = ["local", info.qualname]
            else:
                qualified = self.ctx.qualified_name(func) or ""
                if is_library(qualified):
                    continue
                info, positions, target = None, None, ["ext", qualified]
            if not settings.in_code(self.ctx, call) or settings.fills_parameter_default(self.ctx.semantic.model, call) \
                    or runs.makes_no_run(self.ctx.semantic, call):
                continue
            callee = dotted_name(func)
            if positions is not None:
                qualified = self.ctx.qualified_name(func) or ""
                for name, value in hyperparameters.arguments(call, positions, OPTIMIZER_HYPERPARAMETERS, self._extra, self._ignore):
                    self._check(name, value, call, f"in `{callee}(...)`", f"passed to `{callee}(...)`", qualified=qualified)
            elif info is None or optim_classes.has_external_base(info):
                args = self._candidate_args(call)
                if args:
                    candidates.append({"callee": target, "shown": callee, "args": args})
        facts: dict[str, Any] = {}
        if candidates:
            facts["calls"] = candidates
        if self._inits:
            facts["inits"] = self._inits
        if facts:
            self.ctx.facts.setdefault(self.code, {}).update(facts)

    def _candidate_args(self, call: cst.Call) -> list[list]:
        """The literals of ``hyperparameters.candidate_arguments``, for ``check_project``:
        [keyword or position, shown text, span (``Span.to_json``), variable or "", where, block]."""
        return [[key, node_text(self.ctx.module, literal, 30), self.ctx.span(literal).to_json(), var,
                 self._where(literal), None if var else self._block(literal)]
                for key, value in hyperparameters.candidate_arguments(call, self._ignore)
                for literal, var in self._literals(value, call)]

    def _literals(self, value: cst.BaseExpression, anchor: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
        number = numeric_value(value)
        if number is not None:
            return [(value, "")] if is_positive(number) else []
        if isinstance(value, cst.Name):
            return [(lit, value.value) for lit in self._literal_local(value, anchor) or () if is_positive(numeric_value(lit))]
        return []

    @classmethod
    def check_project(cls, project, options: dict[str, Any]):
        ignore = set(options.get("ignore-names") or ())

        def inits(record, fact) -> list[str]:
            return ((record.facts.get(cls.code) or {}).get("inits") or {}).get(fact["name"], [])

        out = []
        overwritten = {n for r in project.records for n in (r.facts.get(cls.code) or {}).get("lr_overwritten", ())}
        # A literal buried in a function of a package is hard-coded where the project takes its
        # settings from a command line or a config somewhere (``gate``).
        packages = {r.path.rsplit("/", 1)[0] if "/" in r.path else "" for r in project.records
                    if r.path.endswith("__init__.py")}
        configured = any((r.facts.get(cls.code) or {}).get("configured") for r in project.records)

        def in_package(path: str) -> bool:  # (a package's demos/ ship fixed example values)
            return configured and (path.rsplit("/", 1)[0] if "/" in path else "") in packages \
                and not is_demo_module(path)

        imported: dict[str, bool] = {}

        def settled(kind: str, record) -> bool:  # a finding ``gate`` left to the project pass stands
            if kind == _PACKAGE:
                return in_package(record.path)
            if kind == _IMPORTED:  # a script's function is a library's once another file imports it
                if record.path not in imported:
                    imported[record.path] = imported_by_another(project, record)
                return imported[record.path]
            return True

        for record in project.records:
            facts = record.facts.get(cls.code) or {}
            out.extend(Finding.at(cls, record.path, Span.from_json(span), message)
                       for function, span, message, kind in facts.get("deferred", ())
                       if settled(kind, record)
                       and not (function is not None and (function in overwritten or runs.HANDED_IN in overwritten)))
            for call in facts.get("calls", ()):
                qualified = optim_classes.project_class(project, record, call["callee"])
                positions = None if qualified is None else optim_classes.project_positions(project, qualified, inits)
                if positions is None:
                    continue
                for key, text, span, var, where, block in call["args"]:
                    name = key if isinstance(key, str) else positions.get(key)
                    if name is None or name in ignore:
                        continue
                    verdict = gate(name, facts["settings"], where, block)
                    if verdict is None or not settled(verdict[0], record):
                        continue
                    desc = DESCRIPTIONS.get(name, f"`{name}`")
                    callee = call["shown"]
                    if var:
                        what = f"is hard-coded: `{var}` is assigned only this literal and passed to `{callee}(...)`"
                    else:
                        what = f"is hard-coded in `{callee}(...)`"
                    out.append(Finding.at(cls, record.path, Span.from_json(span), f"{desc} {text} {what}{verdict[1]}"))
        # One literal passed twice (a local used by two calls) is one finding.
        return list({(f.path, f.line, f.column): f for f in out}.values())


def gate(name: str, file: dict, where: str, block: list | None) -> tuple[str, str] | None:
    """Whether a watched literal for hyperparameter ``name`` is hard-coded where the user
    cannot see or change it, with the end of its message: ``_NOW`` (report it),
    ``_PACKAGE`` (report it where its file is in a package of a project that takes its
    settings from outside its code: ``check_project``) or ``_IMPORTED`` (where another linted
    file imports its file); None where it is configuration in
    plain sight. ``file``: what the file's pass read of its file (``_settings``); ``where``: the
    literal is in module-level code (``TOP``), in a function or class (``BURIED``) whose
    interface takes other hyperparameters from its caller (``INTERFACE``); ``block``: the
    settings the code around it names ([name, line, whose]; ``settings.named_settings``), None
    where it names none or the literal reaches its call through a name of its own.

    * It bypasses a value the file configures for the same hyperparameter and reads nowhere
      else but in a print or a log (a notebook's or script's ``batch_size = 64``, an
      ``--lr`` option, ``args.lr``; ``settings.configured_values``): reported anywhere,
      naming that value.
    * Else never in a notebook (its cells are its configuration), nor in a timing benchmark
      (``filekinds.is_benchmark_file`` and ``semantic.timing.times_code``: it holds its values
      fixed on purpose, so that only what it measures varies).
    * Else in a file that takes its settings from a command line or a config
      (``settings.takes_configuration``): it bypasses them.
    * Else in a function or class whose interface takes other hyperparameters
      (``settings.interface_takes_hyperparameters``): it bypasses them; in a script of its own
      (``settings.script_in_view``) that names no settings block around it, only where another
      linted file imports the script (``_IMPORTED``: ``semantic.packages.imported_by_another``),
      whose function is then a library's: otherwise its only caller is the script itself,
      whose values are all in view (avalanche's ``train_experience(agent, exp, epochs=10)``
      beside a loader's ``batch_size=32``, called as ``train_experience(agent, exp, epochs=2)``).
    * Else where the function around it or the script names hyperparameters
      (``EPOCHS = 10``): its settings are that block, and this one is not in it.
    * Else not in a script of its own (``settings.script_in_view``: a ``__main__`` guard and
      no configuration, or a command line of run settings alone: ``--cuda``), even in a
      package folder (avalanche's ``examples/``): its values are in view.
    * Else, buried in a function or class, in a package: ``_PACKAGE``.
    * Else (a script whose values are all in view) not."""
    bypassed = file["unused"].get(settings.concept(name) or name)
    if bypassed is not None:
        var, line = bypassed
        use = f"the parsed `{var}`" if var.startswith("--") else f"`{var}`"
        return _NOW, f", although `{var}` (line {line}) sets it: changing `{var}` changes nothing; use {use} here"
    if file["notebook"] or file.get("benchmark"):
        return None
    if file["configured"] or where == INTERFACE and (not file.get("own_script") or block is not None):
        return _NOW, f", {_WHY}"
    if block is not None and where != TOP:
        var, line, whose = block
        return _NOW, f", while {whose} names its other settings (`{var}`, line {line}): name this one with them"
    if where == INTERFACE:
        # a function of a script of its own: its callers are the script, whose values are in view,
        # unless another linted file imports it (then the function is a library's)
        return _IMPORTED, f", {_WHY}"
    if file.get("own_script"):
        return None  # a script of its own, its command line (if any) picking a GPU or a data set: values in view
    return (_PACKAGE, f", {_WHY}") if where == BURIED else None
