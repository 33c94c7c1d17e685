"""TL007 unregistered-module: layers and tensors an ``nn.Module`` keeps where it does not
register them.

From the semantic model (``self.<attr>`` bindings of each class's methods, read sites
``ClassInfo.self_sites``), four shapes are reported:

* ``self.x = [nn.Linear(...), ...]`` / a comprehension / a tuple / a dict of layers (also
  ``dict(<generator>)``, and through a local not handed on elsewhere) (``torch.nn``
  layers with parameters or a train/eval mode, or same-file ``nn.Module`` classes that hold
  such state: ``semantic.modules.holds_state``);
* ``self.x.append(nn.Linear(...))`` (``extend``/``insert``) where every binding of ``self.x``
  is a plain list (``[]``, ``list()``);
* ``self.w = torch.randn(..., requires_grad=True)`` (or ``.requires_grad_()``:
  ``semantic.layers.requires_grad_tensor``; through a local too);
* ``self.m = torch.ones(...)`` (no ``device=``, not 0-dim; through locals and methods that keep
  it a plain tensor: ``semantic.layers.tensor_made_by``) assigned once, in ``__init__``,
  and read in code ``forward`` runs other than to move it (``self.m.to(x.device)``), to refill
  it in place, to compare one element in a condition or to iterate for flags it only tests
  (``semantic.dataflow.stays_on_host``: a scratch or control-flow tensor that never meets the
  input).

Left alone: an attribute read anywhere as a call argument or a container element (later
wrapped: ``nn.ModuleList(self.layers)``, ``nn.Sequential(*self.layers)``, handed to an
optimizer), a class calling ``add_module``/``register_module``/``register_parameter``/
``register_buffer``/``setattr`` on a list attribute's elements, a private single-element list
(``self._teacher = [teacher]``: kept out of ``.parameters()`` on purpose), lists of
non-modules or of layers without parameters, buffers or a mode (``nn.ReLU``, an unweighted
``nn.MSELoss()``), locals, classes overriding
``_apply``/``to``. Whether the class is an ``nn.Module`` is settled by the project pass, which
also keeps a container no code of its file reads (``semantic.modules.attribute_never_read``) only
where another linted file imports that file (``semantic.packages.imported_by_another``): alone,
the layers in it compute nothing (a textbook's demonstration of what is not registered).
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from torchlint.finding import Finding, Severity
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.dataflow import stays_on_host
from torchlint.semantic.layers import requires_grad_tensor, tensor_made_by
from torchlint.semantic.packages import imported_by_another
from torchlint.semantic.modules import (REGISTERING, attribute_never_read, built_by, forward_code, holds_state, is_module_here, pending, runs_in,
                                        self_attr_bindings, settle, stateless, torch_nn_alias)
from torchlint.torch_api import has_star_kwargs, is_false_literal, keyword_arg, tensor_factory
from torchlint.tree import iter_nodes

_CONTAINER_FIX = {"list": "nn.ModuleList", "tuple": "nn.ModuleList", "dict": "nn.ModuleDict"}
_MOVING = {"to", "cuda", "type_as", "cpu", "device", "shape", "size", "dtype"}
_APPENDS = {"append", "extend", "insert"}
# Builtins that iterate or measure a container without keeping it.
_ITERATING = {"zip", "enumerate", "len", "reversed", "iter", "sorted", "range", "print", "isinstance"}


def container_message(attr: str, kind: str) -> str:
    return (f"`self.{attr}` keeps layers in a plain {kind}, which nn.Module does not register: .parameters(), "
            f"state_dict(), .to() and .train()/.eval() skip them; use {_CONTAINER_FIX[kind]}")


def append_message(attr: str) -> str:
    return (f"`self.{attr}` is a plain list, so the layer added here is not registered: .parameters(), "
            f"state_dict(), .to() and .train()/.eval() skip it; make `self.{attr}` an nn.ModuleList")


def parameter_message(attr: str) -> str:
    return (f"`self.{attr}` is a tensor with requires_grad=True, not an nn.Parameter: .parameters() and "
            f"state_dict() miss it and .to() does not move it; wrap it in nn.Parameter(...)")


def buffer_message(attr: str) -> str:
    return (f"`self.{attr}` is a plain tensor attribute used in forward: model.to(device) leaves it on the CPU "
            f"and state_dict() does not save it; use self.register_buffer(\"{attr}\", ...)")


class UnregisteredModule(Rule):
    code = "TL007"
    name = "unregistered-module"
    severity = Severity.WARNING
    default_enabled = True
    summary = "a layer or tensor kept where nn.Module does not register it (plain list/dict, requires_grad tensor, plain tensor attribute)"
    options: dict[str, Option] = {}
    requires_text = ("self.",)
    fixable = (UNSAFE,)


    def finish(self) -> None:
        sem = self.ctx.semantic
        model = sem.model
        found, unread = [], []
        for info in model.classes.values():
            check = _ClassCheck(self.ctx, sem, info)
            found.extend(check.findings())
            unread.extend(check.unread)
        if found or unread:
            self.ctx.facts[self.code] = {"pending": found, "unread": unread}

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        """The pending findings of ``nn.Module`` classes; those of a container no code of its
        file reads, only where another file imports that file (and may read it)."""
        yield from settle(cls, project)
        yield from settle(cls, project, "unread", imported_by_another)


class _ClassCheck:
    """One class's ``self.<attr>`` bindings and reads, judged."""

    def __init__(self, ctx, sem, info):
        self.ctx = ctx
        self.sem = sem
        self.model = sem.model
        self.info = info
        self.reads: dict[str, list[cst.Attribute]] = {}
        self.unread: list[list] = []  # findings of containers no code of the file reads
        self.registers = False
        for node, scope in info.self_sites:
            self.reads.setdefault(node.attr.value, []).append(node)
            if node.attr.value in REGISTERING:
                self.registers = True
        self.registers = self.registers or any(
            isinstance(s.node.func, cst.Name) and s.node.func.value == "setattr" for m in info.methods.values()
            for s in sem.graph.sites(m))

    def findings(self) -> list[list]:
        info = self.info
        if not info.node.bases or {"_apply", "to", "cuda"} & set(info.methods):
            return []
        out = []
        for attr in sorted(info.self_assigned):
            bindings = self_attr_bindings(self.model, info, attr)
            if not bindings or self._escapes(attr):
                continue
            out.extend(self._judge(attr, bindings))
        out.sort(key=lambda f: (f[1], f[2]))
        return out

    def _judge(self, attr: str, bindings: list) -> list[list]:
        values = [b.value for b in bindings if b.kind in ("assign", "ann")]
        if len(values) != len(bindings):
            return []
        values = [self._local_value(v) for v in values]  # ``layers = [...]; self.layers = layers``
        kinds = [_container(v) for v in values]
        if all(k is not None for k in kinds):
            if len(values) == 1 and not self.registers and self._holds_layers(values[0], attr):
                if attribute_never_read(self.ctx, self.info, attr):  # computes nothing, unless another file reads it
                    self.unread.append(pending(self.ctx, self.info, bindings[0].node, container_message(attr, kinds[0]),
                                               self._wrap_fix(values[0], kinds[0])))
                    return []
                return [pending(self.ctx, self.info, bindings[0].node, container_message(attr, kinds[0]),
                                self._wrap_fix(values[0], kinds[0]))]
            if all(_empty_list(v) for v in values) and not self.registers:
                return [pending(self.ctx, self.info, call, append_message(attr)) for call in self._appends(attr)]
            return []
        if len(values) != 1 or not isinstance(values[0], (cst.Call, cst.Subscript)):
            return []
        value = values[0]
        made = tensor_made_by(self.model, value)  # ``pe = torch.zeros(n, d); ...; self.pe = pe.unsqueeze(0)``
        if isinstance(value, cst.Call) and requires_grad_tensor(self.model, value) or made is not None and self._grad_switched_on(attr) and \
                tensor_factory(self.model.qualified_name(made.func)) is not None:
            return [pending(self.ctx, self.info, bindings[0].node, parameter_message(attr))]  # ``pe = torch.zeros(n, d); ...; self.pe = pe.unsqueeze(0)``
        if made is not None and self._plain_tensor(made, bindings[0]) and self._used_in_forward(attr):
            return [pending(self.ctx, self.info, bindings[0].node, buffer_message(attr))]
        return []

    def _grad_switched_on(self, attr: str) -> bool:
        """``self.<attr>.requires_grad = True`` somewhere in the class (a tensor made to
        require grad after it was stored)."""
        for node in self.reads.get(attr, ()):
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "requires_grad":
                target = self.ctx.parent(parent)
                assign = self.ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
                if isinstance(assign, cst.Assign) and not is_false_literal(assign.value):
                    return True
        return False

    def _local_value(self, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """What a local name assigned to ``self`` holds: the value of its one assignment, when
        the local is not also handed on (``nn.Sequential(*layers)``, ``nn.ModuleList(layers)``,
        a call's argument: registered, or wrapped, there). Anything else as it is."""
        if not isinstance(value, cst.Name):
            return value
        bindings = self.model.reaching(value.value, value)
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
            return value
        scope = self.model.scope_of(value)
        for node in iter_nodes(scope.node, into_scopes=False):
            if isinstance(node, cst.Name) and node.value == value.value and node is not value and \
                    isinstance(self.ctx.parent(node), (cst.Arg, cst.Element, cst.StarredElement, cst.DictElement)):
                return value
        return bindings[0].value

    def _wrap_fix(self, value: cst.BaseExpression, kind: str) -> Fix | None:
        """``nn.ModuleList(<the list>)`` / ``nn.ModuleDict(<the dict>)``, where every item is
        a layer construction (anything else would make the container raise), a dict's keys are
        string literals, and the file imports ``torch.nn`` (or ``torch``) at its top level.
        Unsafe: ``state_dict()`` gains the layers' keys (older checkpoints no longer load
        strictly), and code treating the attribute as a plain list or tuple may break."""
        items = _items(value)
        if isinstance(value, (cst.List, cst.Tuple, cst.Dict)) and len(items) != len(value.elements):
            return None  # a starred element or ``**mapping``
        if isinstance(value, cst.Dict) and not all(isinstance(el.key, cst.SimpleString) for el in value.elements):
            return None
        if not items or isinstance(value, (cst.DictComp, cst.Call)) or not all(self._registered_layer(i) for i in items):
            return None
        nn = torch_nn_alias(self.model)
        if nn is None:
            return None
        container = _CONTAINER_FIX[kind].removeprefix("nn.")
        wrapped = cst.Call(func=cst.parse_expression(f"{nn}.{container}"), args=[cst.Arg(value)])
        return Fix.unsafe(f"Wrap it in {nn}.{container}", replace_node(self.ctx, value, wrapped))

    def _escapes(self, attr: str) -> bool:
        """``self.<attr>`` read as a call argument or a container element (wrapped later,
        handed over), or as a starred element (``nn.Sequential(*self.layers)``)."""
        for node in self.reads.get(attr, ()):
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.Arg) and self._iterated(parent):
                continue  # ``zip(self.x2h, self.h2h)``, ``enumerate(self.heads)``: read, not handed on
            if isinstance(parent, (cst.Arg, cst.Element, cst.StarredElement, cst.DictElement)):
                return True
        return False

    def _iterated(self, arg: cst.Arg) -> bool:
        """``arg`` is given to a builtin that only iterates or measures it (``zip``,
        ``enumerate``, ``len``, ``reversed``), not shadowed in the file."""
        call = self.ctx.parent(arg)
        func = call.func if isinstance(call, cst.Call) else None
        return isinstance(func, cst.Name) and func.value in _ITERATING and not arg.star and \
            not self.model.reaching(func.value, func)

    def _holds_layers(self, value: cst.BaseExpression, attr: str) -> bool:
        items = _items(value)
        if attr.startswith("_") and isinstance(value, (cst.List, cst.Tuple)) and len(items) == 1:
            return False  # ``self._teacher = [teacher]``: kept out of .parameters() on purpose
        return bool(items) and any(self._registered_layer(item) for item in items)

    def _registered_layer(self, expr: cst.BaseExpression | None) -> bool:
        """A construction of a layer registering would change something for: a ``torch.nn``
        layer with parameters, buffers or a mode (not ``nn.ReLU``, ``nn.MSELoss()``), or a
        same-file ``nn.Module`` class known to hold such state (``holds_state``: not one that
        only wraps a class from elsewhere, whose state cannot be told)."""
        if isinstance(expr, cst.Name):
            found = self.model.reaching(expr.value, expr)
            expr = found[0].value if len(found) == 1 and found[0].kind == "assign" else None
        built = built_by(self.model, expr) if isinstance(expr, cst.Call) else None
        if built is None:
            return False
        if built.kind == "nn":
            return not stateless(self.model, built)
        return built.info is not None and is_module_here(self.model, built.info) and bool(holds_state(self.sem, built.info))

    def _appends(self, attr: str) -> list[cst.Call]:
        out = []
        for node in self.reads.get(attr, ()):
            method = self.ctx.parent(node)
            call = self.ctx.parent(method) if isinstance(method, cst.Attribute) else None
            if not isinstance(call, cst.Call) or call.func is not method or method.attr.value not in _APPENDS:
                continue
            args = [a.value for a in call.args if a.keyword is None]
            added = args[-1] if args else None
            if method.attr.value == "extend":
                items = _items(added) if added is not None and _container(added) else []
                if any(self._registered_layer(item) for item in items):
                    out.append(call)
            elif self._registered_layer(added):
                out.append(call)
        return out

    def _plain_tensor(self, value: cst.Call, binding) -> bool:
        """A tensor made in ``__init__`` on the default device, not 0-dim."""
        factory = tensor_factory(self.model.qualified_name(value.func))
        if factory is None or keyword_arg(value, "device") is not None or has_star_kwargs(value):
            return False
        if binding.scope.node is not self.info.methods.get("__init__"):
            return False
        first = value.args[0].value if value.args and value.args[0].keyword is None else None
        if factory == "tensor":
            return isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
        return first is not None and not (isinstance(first, (cst.Tuple, cst.List)) and not first.elements)

    def _used_in_forward(self, attr: str) -> bool:
        """Read in code forward runs other than to be moved or measured (``self.m.to(x.device)``),
        refilled in place or compared element by element in a condition (``stays_on_host``)."""
        code = forward_code(self.sem, self.info)
        for node in self.reads.get(attr, ()):
            if not runs_in(self.model, node, code):
                continue
            cur = node
            parent = self.ctx.parent(cur)
            while isinstance(parent, cst.Subscript) and parent.value is cur:
                cur, parent = parent, self.ctx.parent(parent)
            if isinstance(parent, cst.Attribute) and parent.value is cur and parent.attr.value in _MOVING:
                continue
            if stays_on_host(self.ctx, self.model, node) or self._moved_through_local(cur):
                continue
            return True
        return False

    def _seen_by(self, name: str, read: cst.Name) -> list:
        """The bindings a read of ``name`` sees; for a read in the value of an assignment to
        ``name`` (``t = t.to(d)``), those its statement sees."""
        bindings = self.model.reaching(name, read)
        own = [b for b in bindings if isinstance(b.node, cst.Assign) and any(n is read for n in iter_nodes(b.node.value))]
        return self.model.reaching(name, own[0].node) if own else bindings

    def _moved_through_local(self, read: cst.BaseExpression) -> bool:
        """``t = self.t if t is None else t`` (or ``t = self.t``), every read of ``t`` that
        sees it then moving it: ``t = t.to(x.device)``."""
        node, parent = read, self.ctx.parent(read)
        while isinstance(parent, cst.IfExp) and node is not parent.test:
            node, parent = parent, self.ctx.parent(parent)
        if not isinstance(parent, cst.Assign) or parent.value is not node or len(parent.targets) != 1 \
                or not isinstance(parent.targets[0].target, cst.Name):
            return False
        name = parent.targets[0].target.value
        scope = self.model.scope_of(parent)
        reads = []
        for n in iter_nodes(scope.node, into_scopes=False):
            if isinstance(n, cst.Name) and n.value == name and n is not parent.targets[0].target and \
                    any(b.node is parent for b in self._seen_by(name, n)):
                reads.append(n)
        return bool(reads) and all(isinstance(p := self.ctx.parent(n), cst.Attribute) and p.value is n
                                   and p.attr.value in _MOVING for n in reads)


def _container(value: cst.BaseExpression) -> str | None:
    """``list``/``tuple``/``dict`` for a plain container display or comprehension (or
    ``list()``/``dict()``), else None."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(value, cst.Tuple):
        return "tuple"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "dict") \
            and (not value.args or len(value.args) == 1 and isinstance(value.args[0].value, (cst.GeneratorExp,
                                                                                               cst.ListComp))):
        return value.func.value  # ``list()``, ``dict((k, nn.Linear(...)) for k in names)``
    return None


def _empty_list(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.List) and not value.elements or \
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list" and not value.args


def _items(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a container display or comprehension holds (a dict's values)."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return [el.value for el in value.elements if isinstance(el, cst.Element)]
    if isinstance(value, cst.Dict):
        return [el.value for el in value.elements if isinstance(el, cst.DictElement)]
    if isinstance(value, cst.ListComp):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    if isinstance(value, cst.Call) and len(value.args) == 1 and isinstance(value.args[0].value, (cst.GeneratorExp,
                                                                                                 cst.ListComp)):
        elt = value.args[0].value.elt  # ``list(g)``; ``dict(g)``: the pairs' values
        if value.func.value == "list":
            return [elt]
        return [elt.elements[1].value] if isinstance(elt, cst.Tuple) and len(elt.elements) == 2 else []
    return []

