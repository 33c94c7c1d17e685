"""TL005 unused-layer: an ``nn.Module`` attribute assigned a layer that nothing ever calls.

Per file (``finish``, from the semantic model: no walk of its own but one cheap hook that
collects ``self.x``/``model.x`` reads), ``semantic.layers.class_layers`` tells, for every
class, which layers it defines (``self.x = nn.Linear(...)``, a container, a call of a class
that may be a project ``nn.Module``), which ``self.<name>`` it reads outside ``__init__``
(inside it only when the module flows somewhere: initialisation is not a use), whether it
accesses its submodules dynamically (``getattr(self, name)``, ``self.children()``,
``self._modules``, a ``__getattr__`` of its own, ...) and whether it defines a ``forward`` (or
Lightning's ``training_step``) that is not abstract; the class's name is ``index.index_name``,
the key of the project index.

Each file also records the attribute names it reads through another object outside
``__init__`` (``self.backbone.fc(x)``, ``model.criterion(out, y)``): a layer can be used by
the module that holds it, so such a name is never reported in the files of that file's package
(``semantic.packages``: the files joined by imports or a directory; another package linted in
the same run is not exempted by it).

Those facts go to ``ctx.facts["TL005"]`` (``bases`` there only records what the class wrote).
The project pass takes the class hierarchy from ``Project`` (``ancestors``,
``direct_subclasses``, ``is_nn_module``, ``resolve_class``) and reports a layer only when the
class is an ``nn.Module`` whose whole family -- its bases, its subclasses anywhere in the
linted files and their other bases -- is known (project classes, ``torch.nn.Module``,
Lightning's ``LightningModule``), none of them reads the attribute or accesses submodules
dynamically, and one of them defines ``forward``. ``del self.x`` (``delattr``) in any of them
removes the layer; ``self.a = self.b = X()`` is one module under two names, used when either is
read, and a container built from modules the class keeps under another attribute
(``self._subs = nn.ModuleList(policies.values())`` next to ``self.policies = policies``) only
registers them: it is used when that attribute is read (also a container of a collection's
elements that another attribute keeps through one call: ``semantic.layers.element_sources``); a layer
named as a stand-in (``dummy``, ``placeholder``: ``_PLACEHOLDER``) is not reported (no comment
switches a finding off: one may name the problem precisely because it is one); an ``nn.ModuleList()``/``ModuleDict()``/
``Sequential()`` built empty that the class never touches again holds nothing. A bare
``nn.Parameter`` nothing reads is reported too (unless the family iterates ``self.parameters()``,
or it is frozen: ``requires_grad=False`` gets no gradient or optimizer state by design). A parameter-free layer is
reported only when it was built to act -- a dropout, or one an ``__init__`` argument builds or
chooses -- and forward does not apply its functional form (``F.softmax``, ``x.softmax``):
otherwise it is a leftover that changes nothing. The message says what holds: a conditional
layer's parameters "whenever it is built with parameters"; in a file that loads weights, keeping a
head for ``load_state_dict`` is offered (``nn.Identity()`` after loading) instead of deleting it. A base from a third-party library or from a
file that was not linted can read anything, so the class is not reported. A subclass in a
file that was not linted cannot be seen: that is accepted (linting a single file reports what
that file shows).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Iterable, NamedTuple

import libcst as cst

from torchlint import codes
from torchlint.finding import Finding, Severity, Span
from torchlint.libraries import is_lightning_module, torch_nn_class
from torchlint.rule import Option, Rule
from torchlint.semantic.index import index_name
from torchlint.semantic.layers import ClassLayers, class_layers, is_model_variable, normalised
from torchlint.semantic.packages import Packages

__all__ = ["UnusedLayer", "message", "torch_nn_class"]

# Bases that read nothing at all.
_NEUTRAL_BASES = {"object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol"}
# Parameter-free layers built only to act (regularisation): never a harmless leftover.
_REGULARISERS = ("dropout", "alphadropout", "featurealphadropout")


class UnusedLayer(Rule):
    code = codes.UNUSED_LAYER
    name = "unused-layer"
    severity = Severity.WARNING
    default_enabled = True
    summary = "nn.Module layer assigned in the model but never used outside __init__"
    options = {
        "ignore-names": Option([], list, "attribute names (or fnmatch patterns) never reported", item_kind=str),
    }
    # Every file with a class: a subclass that reads a base's layer must be seen even when it
    # mentions nothing of torch. Scripts that use a model's layer from outside
    # (``model.criterion(...)``) are read too.
    uses_semantic_model = True
    requires_text = ("class", "model", "net.", "Net.", "module.", "encoder.", "decoder.", "backbone.",
                     "student.", "teacher.", "generator.", "discriminator.", "classifier.", "wrapper.")

    # -- per-file pass: the facts are semantic.layers.class_layers' --------------------
    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._named: list[cst.Attribute] = []  # ``model.x``/``self.x``: maybe read from outside

    def visit_Attribute(self, node: cst.Attribute) -> None:
        value = node.value
        if type(value) is cst.Name and (value.value == "self" or is_model_variable(value.value)):
            self._named.append(node)

    def finish(self) -> None:
        found = class_layers(self.ctx, self._named)
        if not found.classes and not found.outside:
            return
        facts: dict[str, Any] = {"classes": [self._entry(cls) for cls in found.classes]}
        if found.outside:
            facts["outside"] = sorted(found.outside)
        if found.loads:
            facts["loads"] = True
        self.ctx.facts[self.code] = facts

    # -- facts ---------------------------------------------------------------------------
    def _entry(self, cls: ClassLayers) -> dict[str, Any]:
        info = cls.info
        entry: dict[str, Any] = {"name": info.name, "qual": index_name(info.scope),
                                 "bases": [["q", b] for b in info.bases], "reads": sorted(cls.reads)}
        layers = []
        if not cls.dynamic and info.node.bases:
            for attr in sorted(cls.layers):
                if attr in cls.reads or cls.aliases.get(attr, set()) & cls.reads or cls.empty_container(attr):
                    continue
                stmt, kinds, configured = cls.layers[attr]
                if _PLACEHOLDER.search(attr):
                    continue  # ``self.dummy_parameter = nn.Parameter(...)``: there to be held, not run
                layers.append([attr, kinds, self.ctx.span(stmt).to_json(), configured])
        aliases = {attr: sorted(others) for attr, others in cls.aliases.items()}
        for key, value in (("dynamic", cls.dynamic), ("runs", cls.runs), ("pf", cls.pf), ("layers", layers),
                           ("iterates", cls.iterates), ("functional", sorted(cls.functional)),
                           ("aliases", aliases), ("deleted", sorted(cls.deleted))):
            if value:
                entry[key] = value
        return entry

    # -- project pass --------------------------------------------------------------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        return _ProjectPass(project, options, cls).run()


# An attribute named as a stand-in: a module that must have a parameter (for an optimizer, for
# ``next(m.parameters()).device``) or a slot filled later. Its name says it is not meant to run.
_PLACEHOLDER = re.compile(r"dummy|placeholder", re.IGNORECASE)


class _FamilyUse(NamedTuple):
    """What a class, its bases and subclasses do with ``self`` outside ``__init__``."""

    reads: set  # attributes read (or deleted: `del self.x` removes the layer)
    functional: set  # torch functions applied (normalised names)
    iterates: bool  # self.parameters() / named_parameters()


_PARAM, _LAYER, _MAYBE, _FREE = "parameter", "layer", "maybe", "free"
# What an external base (no project class) means for the attributes of its subclasses.
_MODULE, _NEUTRAL, _OPAQUE, _TORCH_NN = "module", "neutral", "opaque", "torch.nn"


def _external_kind(qualified: str) -> str:
    """``torch.nn.Module``/``LightningModule`` read none of them, ``object``/``ABC`` nothing;
    another ``torch.nn`` class (``nn.Sequential``) runs its children; anything else is opaque."""
    torch_name = torch_nn_class(qualified)
    if torch_name == "Module" or is_lightning_module(qualified):
        return _MODULE
    if qualified in _NEUTRAL_BASES:
        return _NEUTRAL
    return _TORCH_NN if torch_name is not None else _OPAQUE


class _ProjectPass:
    """Classes are the project index's names (``Project``); their TL005 facts hang off them."""

    def __init__(self, project, options: dict[str, Any], rule: type[UnusedLayer]):
        self.project = project
        self.rule = rule
        self.ignore = [str(p) for p in options.get("ignore-names") or []]
        self.entries: dict[str, list[tuple[Any, dict]]] = {}  # class -> (record, its facts)
        # package group -> the attribute names its files read through another object
        self.packages = Packages(project)
        self.outside: dict[str, set[str]] = {}
        for record in project.records:
            facts = record.facts.get(rule.code)
            if not facts:
                continue
            self.outside.setdefault(self.packages.group(record.path), set()).update(facts.get("outside", ()))
            module = record.module_name
            for entry in facts["classes"]:
                key = f"{module}.{entry['qual']}" if module else entry["qual"]
                self.entries.setdefault(key, []).append((record, entry))
        self._lineage: dict[str, tuple[set[str], set[str]]] = {}

    def lineage(self, name: str) -> tuple[set[str], set[str]]:
        """The project classes from ``name`` up (itself included) and the kinds of the external
        bases met on the way."""
        found = self._lineage.get(name)
        if found is None:
            members, external = {name}, set()
            for base in self.project.ancestors(name):
                if self.project.is_project_class(base):
                    members.add(base)
                else:
                    external.add(_external_kind(base))
            found = self._lineage[name] = (members, external)
        return found

    def run(self) -> list[Finding]:
        findings = []
        for name, entries in self.entries.items():
            if not any(entry.get("layers") for _, entry in entries):
                continue
            family = self.family(name)
            if family is None:
                continue
            facts = [entry for member in family for _, entry in self.entries[member]]
            seen = _FamilyUse({attr for entry in facts for attr in (*entry["reads"], *entry.get("deleted", ()))},
                              {f for entry in facts for f in entry.get("functional", ())},
                              any(entry.get("iterates") for entry in facts))
            for record, entry in entries:
                findings.extend(self.report(record, entry, seen))
        return findings

    def report(self, record, entry: dict, seen: "_FamilyUse") -> Iterable[Finding]:
        loads = bool((record.facts.get(self.rule.code) or {}).get("loads"))
        aliases = entry.get("aliases", {})
        outside = self.outside.get(self.packages.group(record.path), set())
        for attr, kinds, span, configured in entry.get("layers", ()):
            if attr in seen.reads or seen.reads.intersection(aliases.get(attr, ())) or attr in outside or any(fnmatch.fnmatchcase(attr, p) for p in self.ignore):
                continue
            kind = self.layer(kinds, record)
            if kind is None or (kind == _PARAM and seen.iterates):
                continue
            built = {"nn": lambda k: k[2], "class": lambda k: k[1].rsplit(".", 1)[-1]}.get(kinds[0][0], str)(kinds[0])
            if kind == _FREE and (normalised(built) in seen.functional
                                  or not (configured or normalised(built).startswith(_REGULARISERS))):
                continue  # forward applies the functional form, or a leftover that changes nothing
            yield Finding.at(self.rule, record.path, Span.from_json(span), message(entry["name"], attr, kind, built, loads),
                             extra={"class": entry["name"], "attribute": attr})

    def family(self, name: str) -> set[str] | None:
        """The classes whose methods see ``self`` as an instance of ``name``, or None when it
        must not be reported (not a module, an unknown base, dynamic access, no forward)."""
        members, external = self.lineage(name)
        if _OPAQUE in external or _TORCH_NN in external or _MODULE not in external:
            return None
        family = set(members)
        stack = self.subclasses(name)
        while stack:
            sub = stack.pop()
            if sub in family:
                continue
            up, ext = self.lineage(sub)
            if _OPAQUE in ext or _TORCH_NN in ext:
                return None
            family |= up
            stack.extend(self.subclasses(sub))
        facts = [entry for member in family for _, entry in self.entries.get(member, [(None, None)])]
        if None in facts or any(entry.get("dynamic") for entry in facts):
            return None  # a class without facts (its file failed) may do anything
        if not any(entry.get("runs") for entry in facts):
            return None
        return family

    def subclasses(self, name: str) -> list[str]:
        """The direct subclasses of ``name``: those naming it, and those whose base of the same last
        name could not be followed (``loose``) only in ``name``'s own package
        (``semantic.packages``): a ``class X(Block)`` on timm's ``Block`` in another package
        linted in the same run is no subclass of this project's ``Block``."""
        exact = set(self.project.direct_subclasses(name))
        paths = [record.path for record, _ in self.entries.get(name, ())]
        return sorted(sub for sub in self.project.direct_subclasses(name, loose=True)
                      if sub in exact or not paths or not self.entries.get(sub) or any(
                          self.packages.together(record.path, path)
                          for record, _ in self.entries.get(sub, ()) for path in paths))

    def layer(self, kinds: list, record) -> str | None:
        """What the attribute holds when it is a module or a parameter: a bare parameter,
        a layer with parameters, one that may have them (built conditionally, one choice
        parameter-free) or a parameter-free layer; None when it is neither."""
        choices = []
        for kind, data, *_ in kinds:
            if kind == "param":
                return _PARAM
            if kind == "nn":
                choices.append(data)
                continue
            name = self.project.resolve_class(data, record)
            if name is not None and self.project.is_nn_module(name):
                choices.append(self.class_pf(name))
        if not choices:
            return None
        return _FREE if all(choices) else _MAYBE if any(choices) else _LAYER

    def class_pf(self, name: str) -> bool:
        members, external = self.lineage(name)
        return external <= {_MODULE, _NEUTRAL} and all(
            entry.get("pf") for member in members for _, entry in self.entries.get(member, [(None, {})]))


def message(cls: str, attr: str, kind: str, built: str, loads: bool = False) -> str:
    nobody = f"nothing outside __init__ in {cls}, its bases or subclasses"
    ddp = ("DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
           "unless find_unused_parameters=True")
    fix = ("use it in forward, or, if it is kept so that pretrained weights load, replace it with nn.Identity() "
           "after loading" if loads else "use it in forward or delete it")
    if kind == _FREE:
        return (f"`{cls}.{attr}` is built but never applied: {nobody} uses `self.{attr}`, so the {built} it "
                f"was built for never runs; apply it in forward or delete it")
    if kind == _PARAM:
        return (f"`{cls}.{attr}` is a parameter that is never read: {nobody} reads `self.{attr}`, so it gets no "
                f"gradient, wastes optimizer state and checkpoint space, and {ddp}; use it in forward or "
                f"delete it")
    holds = "whenever it is built with parameters, they get" if kind == _MAYBE else "its parameters get"
    return (f"`{cls}.{attr}` is built but never used: {nobody} reads `self.{attr}`, so {holds} no gradient, "
            f"waste memory and checkpoint space, and {ddp}; {fix}")
