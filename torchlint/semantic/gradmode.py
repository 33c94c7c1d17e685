"""Grad-mode choices: what decides whether autograd records around a node, and which
functions this file only ever runs with such a choice made (TL002, TL003).

A *choice* is any grad-mode ``with`` item or decorator whose name says so (torch's
``no_grad``, ``inference_mode``, ``set_grad_enabled(flag)``, ``enable_grad``, and project
wrappers named so: ``utils.no_grad_if(cond)``, ``@inference_mode_eval``), a Lightning
evaluation hook, or a plain ``torch.set_grad_enabled(...)`` statement earlier in the function.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter

import libcst as cst

from torchlint.libraries import is_library
from torchlint.semantic.index import index_name
from torchlint.semantic.training import grad_mode_exprs_of
from torchlint.statements import dotted_name
from torchlint.textscan import contains_lowered
from torchlint.torch_api import is_false_literal, is_grad_mode_call, is_lightning_eval_hook
from torchlint.tree import iter_nodes

# ``no_backprop``: chainer's ``no_backprop_mode()``, the same choice in a project's other backend.
_GRADISH_NAMES = ("no_grad", "inference_mode", "grad_enabled", "enable_grad", "no_backprop")
_MAX_DEPTH = 8  # how far ``_instance_classes`` follows values (a loop over a list built in ``__init__``: 5)
_BUILTIN_TYPES = frozenset({"str", "bytes", "int", "float", "list", "dict", "tuple", "set", "frozenset"})
# Words one of which every Lightning evaluation hook's name holds
# (``torch_api.is_lightning_eval_hook``). Not a bare ``test_``: every test file's ``def
# test_...`` would make ``choice_sites`` ask each of its calls for a choice it cannot find.
HOOK_WORDS = ("validation_", "test_step", "test_epoch", "on_test_", "predict_")


class GradModes:
    """One file's grad-mode queries (build one per rule run; memoised)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.model = ctx.semantic.model
        self._memo: dict[cst.CSTNode, bool] = {}
        self._mentions: dict[cst.CSTNode, bool] = {}
        self._set_grad: dict[cst.CSTNode, list[int]] = {}
        self._referenced: set[cst.CSTNode] | None = None
        self._anchors: dict[cst.CSTNode, bool] = {}

    def chosen(self, node: cst.CSTNode) -> bool:
        """Under a grad-mode ``with`` or decorator (any enclosing scope), or in a Lightning
        evaluation hook (``training.grad_mode_exprs_of`` of each enclosing node), answered once
        per enclosing ``with`` or function (the calls of a file share a few of them)."""
        return self._chosen_above(node)

    def _chosen_above(self, node: cst.CSTNode) -> bool:
        parent = self.ctx.parent
        anchor = parent(node)
        while anchor is not None and type(anchor) is not cst.With and type(anchor) is not cst.FunctionDef:
            anchor = parent(anchor)
        if anchor is None:
            return False
        found = self._anchors.get(anchor)
        if found is None:
            found = (type(anchor) is cst.FunctionDef and is_lightning_eval_hook(anchor.name.value)
                     and self._is_method(anchor)) \
                or any(self._mentions_grad_mode(e) for e in grad_mode_exprs_of(self.model, anchor)) \
                or self._chosen_above(anchor)
            self._anchors[anchor] = found
        return found

    def _is_method(self, function: cst.FunctionDef) -> bool:
        """A method of a class with a base (Lightning's hooks are, on a ``LightningModule``
        subclass): a free ``validation_step(engine, batch)`` (an ignite process function), or a
        method of a plain class (skorch's ``NeuralNet.validation_step``), is not one."""
        block = self.ctx.parent(function)
        cls = self.ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
        return isinstance(cls, cst.ClassDef) and any(
            not (isinstance(b.value, cst.Name) and b.value.value == "object") for b in cls.bases if b.keyword is None)

    def _mentions_grad_mode(self, expr: cst.CSTNode) -> bool:
        found = self._mentions.get(expr)
        if found is None:
            found = self._mentions[expr] = any(
                isinstance(node, (cst.Name, cst.Attribute)) and (name := self.ctx.qualified_name(node)) is not None
                and any(part in name.rsplit(".", 1)[-1].lower() for part in _GRADISH_NAMES)
                for node in iter_nodes(expr))
        return found

    def set_grad_before(self, function: cst.CSTNode, order: int) -> bool:
        """A plain ``torch.set_grad_enabled(...)`` statement in ``function`` before ``order``."""
        orders = self._set_grad.get(function)
        if orders is None:
            orders = self._set_grad[function] = [
                site.order for site in self.ctx.semantic.graph.sites(function)
                if is_grad_mode_call(self.ctx, site.node) == "set_grad_enabled"
                and not isinstance(self.ctx.parent(site.node), cst.WithItem)]
        return any(o < order for o in orders)

    def _handed_on(self, function: cst.CSTNode) -> bool:
        """``function`` is passed as an argument somewhere in the file (a callback)."""
        if self._referenced is None:
            graph = self.ctx.semantic.loose_graph
            self._referenced = {f for s in self.model.calls for f in graph.references(s)}
        return function in self._referenced

    def module_grad_off(self) -> bool:
        """A plain ``torch.set_grad_enabled(False)`` at module level (a script): every
        function then runs without autograd."""
        for site in self.ctx.semantic.graph.sites(self.model.module.node):
            call = site.node
            if (dotted_name(call.func) or "").endswith("set_grad_enabled") and call.args \
                    and is_false_literal(call.args[0].value) and is_grad_mode_call(self.ctx, call) == "set_grad_enabled":
                return True
        return False

    def only_called_with_choice(self, function: cst.CSTNode) -> bool:
        """Every same-file call site of ``function`` runs under a grad-mode choice (itself, or
        every call site of its caller does), and it is never passed on as a callback. False
        for a function with no call site here (its callers elsewhere are unknown)."""
        return self._only_chosen(function, set())

    def _only_chosen(self, function: cst.CSTNode, seen: set) -> bool:
        memo = self._memo
        if function in memo:
            return memo[function]
        if function in seen:
            return False
        graph = self.ctx.semantic.loose_graph
        sites = graph.callers(function)
        if not sites or self._handed_on(function):
            memo[function] = False
            return False
        seen.add(function)
        result = all(self._site_chosen(site, seen) for site in sites)
        seen.discard(function)
        memo[function] = result
        return result

    def call_chosen(self, call: cst.Call) -> bool:
        """The call runs under a grad-mode choice: its own, a plain ``set_grad_enabled``
        before it in its function, or one made at every same-file call of its function."""
        site = self.model.call_site(call)
        return site is not None and self._site_chosen(site, set())

    def _site_chosen(self, site, seen: set) -> bool:
        if self.chosen(site.node):
            return True
        outer = site.scope.function()
        return outer is not None and (self.set_grad_before(outer.node, site.order) or self._only_chosen(outer.node, seen))


def function_key(model, node: cst.CSTNode) -> str | None:
    """The name a function goes by in its file: ``fn``, ``Class.method``, ``outer.inner``
    (None for a lambda or the module). Memoised on the model (``choice_sites`` asks per call)."""
    memo = model.memo("function_key")
    if node in memo:
        return memo[node]
    scope = model.scopes.get(node)
    found = memo[node] = index_name(scope) if scope is not None and isinstance(node, cst.FunctionDef) else None
    return found


def choice_sites(ctx, modes: GradModes) -> list[list]:
    """Every call or hand-over in this file of a function the project may define, as
    ``[callee, caller, chosen, shape]``, for a project pass that decides which functions the linted
    project only ever runs under a grad-mode choice (``crossfile.CalledUnderChoice``).

    ``callee``: ``"=Class.method"`` (a same-file function the call graph resolves),
    ``"@pkg.mod.fn"`` (an imported name, as ``Project.resolve_symbol`` takes it) or
    ``"^pkg.mod.Cls.name"`` (a method called on an instance of a known class: that class's, its
    ancestors' or its subclasses' method so named) or ``".name"`` (a method of an object of
    unknown class: any project method so named).
    ``caller``: the ``function_key`` of the function making an unchosen call (None at module
    level, and for a function handed on as a callback: it may run anywhere). ``chosen``: the
    call runs under a grad-mode choice (its own, or one made at every same-file call of its
    function, or a module-level ``set_grad_enabled(False)``); ``shape``: what the call passes
    (``_call_shape``; None for a hand-over). Library calls are left out."""
    model, graph = modes.model, ctx.semantic.graph
    # without these words, in any case, no call makes a choice
    may_choose = any(contains_lowered(ctx.text, name) for name in _GRADISH_NAMES + HOOK_WORDS)
    grad_off = may_choose and modes.module_grad_off()
    found: set[tuple] = set()
    for site in model.calls:
        call = site.node
        callees = _callees(ctx, graph, site)
        if not callees:
            continue
        chosen = grad_off or may_choose and modes.call_chosen(call)
        outer = site.scope.function()
        caller = None if chosen or outer is None else function_key(model, outer.node)
        shape = _call_shape(call)
        found.update((callee, caller, chosen, shape) for callee in callees)
        for target in graph.references(site):  # a function handed on may run anywhere
            if (key := function_key(model, target)) is not None:
                found.add(("=" + key, None, False, None))
        for arg in call.args:  # ``submit(agent.act, x)``: a bound method handed on
            if isinstance(arg.value, cst.Attribute) and not ctx.is_imported(arg.value):
                found.add(("." + arg.value.attr.value, None, False, None))
    found.update(("@" + q, None, False, None) for q in _handed_on_imports(ctx, model))
    return [list(item) for item in sorted(found, key=lambda t: (t[0], t[1] or "", t[2], t[3] or ""))]


_VALUE = attrgetter("value")


def called_names(ctx, modes: GradModes) -> list[str]:
    """The last part of every name this file's ``choice_sites`` could give a callee, without
    resolving any: each call's callee as written (``f``, ``x.method``) and as imported
    (``g`` from ``from m import f as g`` gives ``f``), each name or attribute passed to a call,
    and each imported project name handed on. A file whose list lacks a function's name
    cannot call it or hand it on (``crossfile.CalledUnderChoice`` asks such files only)."""
    imports = ctx.imports
    found: set[str] = set()
    for site in modes.model.calls:
        call = site.node
        for expr in chain((call.func,), map(_VALUE, call.args)):  # (iterators in C: asked of every call)
            kind = type(expr)
            if kind is cst.Name:
                found.add(expr.value)
                qualified = imports.get(expr.value)
                if qualified is not None:
                    found.add(qualified.rpartition(".")[2])
            elif kind is cst.Attribute:
                found.add(expr.attr.value)
    found.update(q.rpartition(".")[2] for q in _handed_on_imports(ctx, modes.model))
    return sorted(found)


def imported_callees(ctx, modes: GradModes) -> list[str]:
    """What this file's ``choice_sites`` could name ``@<qualified>``, without resolving any:
    the qualified name of each imported callee and of each imported project name handed on
    (a superset: a call the call graph resolves in the file is ``=`` there). Another file's
    module-level function can be run from this file only through one of them (``choice_sites``
    names no other call of it), so a file none of whose names resolves to that function
    need not be asked for its sites (``crossfile.CalledUnderChoice``)."""
    found = set(_handed_on_imports(ctx, modes.model))
    for site in modes.model.calls:
        func = site.node.func
        if ctx.is_imported(func):
            qualified = ctx.qualified_name(func)
            if qualified is not None and not is_library(qualified):
                found.add(qualified)
    return sorted(found)


def _handed_on_imports(ctx, model) -> set[str]:
    """Imported project names used other than by calling them (``run = infer.predict``,
    ``engine.add_handler(predict)``): they may run anywhere. Once per file (``called_names``
    and, on demand, ``choice_sites`` ask; it reads every node)."""
    memo = model.memo("handed_on_imports")
    if None not in memo:
        memo[None] = _scan_handed_on_imports(ctx, model)
    return memo[None]


def _scan_handed_on_imports(ctx, model) -> set[str]:
    imports, parent, out = ctx.imports, ctx.parent, set()
    # Only names bound to a project module or name can qualify to one (``torch``'s never do).
    local = {name for name, qualified in imports.items() if not is_library(qualified)}
    if not local:
        return out
    name = cst.Name
    for node in [n for n in model.nodes_of(name) if n.value in local]:
        expr: cst.BaseExpression = node
        while type(above := parent(expr)) is cst.Attribute and above.value is expr:
            expr = above
        above = parent(expr)
        if type(above) in _IN_IMPORTS or type(above) is cst.AssignTarget \
                or type(above) is cst.Call and above.func is expr:
            continue
        qualified = ctx.qualified_name(expr)
        if qualified is not None and not is_library(qualified):
            out.add(qualified)
    return out


# Where a name chain stands inside an import statement (its module, a name, an alias).
_IN_IMPORTS = (cst.Import, cst.ImportFrom, cst.ImportAlias, cst.AsName)


def _callees(ctx, graph, site) -> list[str]:
    """How ``choice_sites`` names what one call runs (empty: nothing the project defines)."""
    targets = [t for t in graph.targets(site) if isinstance(t, cst.FunctionDef)]
    if targets:
        return ["=" + key for t in targets if (key := function_key(graph.model, t)) is not None]
    func = site.node.func
    if ctx.is_imported(func):
        qualified = ctx.qualified_name(func)
        return [] if qualified is None or is_library(qualified) else ["@" + qualified]
    if not isinstance(func, cst.Attribute) or isinstance(func.value, (cst.SimpleString, cst.FormattedString,
                                                                      cst.ConcatenatedString)):
        return []
    receiver = func.value
    classes = _instance_classes(ctx, graph.model, receiver, site.scope, 0)
    if classes is not None:  # ``self.generator.encode(x)`` with ``self.generator = Generator(...)``
        return ["^" + q + "." + func.attr.value for q in classes if not is_library(q)]
    while isinstance(receiver, (cst.Call, cst.Attribute, cst.Subscript)):
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    if isinstance(receiver, cst.Name) and ctx.is_imported(receiver):
        qualified = ctx.qualified_name(receiver)
        if qualified is not None and is_library(qualified):
            return []  # ``json.dumps(...).encode()``, ``np.asarray(x).sum()``
    return ["." + func.attr.value]


def instance_classes(ctx, expr: cst.BaseExpression) -> list[str] | None:
    """The classes (qualified; same-file ones under the file's module) one of whose instances
    ``expr`` holds where it is written, where every value it may have says (see
    ``_instance_classes``); None when unknown (a property, a parameter without annotation)."""
    model = ctx.semantic.model
    return _instance_classes(ctx, model, expr, model.scope_of(expr), 0)


def _instance_classes(ctx, model, expr: cst.BaseExpression, scope, depth: int) -> list[str] | None:
    """The classes (qualified; same-file ones under the file's module) whose instance
    ``expr`` holds, where every value it may have says: a constructor call ``Cls(...)`` or
    ``Cls.from_...(...)``, ``self`` (its class), a parameter annotated with a class
    (``Union`` of classes too), the loop variable over a list or ``nn.ModuleList`` of such
    values, or a name or ``self.<attr>`` bound only to such values. None when unknown."""
    if depth > _MAX_DEPTH or scope is None:
        return None
    if isinstance(expr, cst.Call):
        return _constructed(ctx, model, expr.func)
    if isinstance(expr, cst.Name) and expr.value == scope.self_name and scope.cls is not None:
        qualname = scope.cls.qualname
        return [f"{ctx.module_name}.{qualname}" if ctx.module_name else qualname]
    values = _values(ctx, model, expr, scope)
    return None if values is None else _union(ctx, model, values, depth, _instance_classes)


def _element_classes(ctx, model, expr: cst.BaseExpression, scope, depth: int) -> list[str] | None:
    """The classes of what iterating ``expr`` gives: ``[A(), B()]``, ``[A() for _ in ...]``,
    ``nn.ModuleList(...)``/``nn.Sequential(...)``/``list(...)`` of those, a slice of one, or a
    name or ``self.<attr>`` bound only to such values. None when unknown."""
    if depth > _MAX_DEPTH or scope is None:
        return None
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, (cst.List, cst.Tuple)):
        return _union(ctx, model, [(e.value, scope) for e in expr.elements], depth, _instance_classes)
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        return _instance_classes(ctx, model, expr.elt, model.scope_of(expr.elt), depth + 1)
    if isinstance(expr, cst.Call):
        name = (dotted_name(expr.func) or "").rsplit(".", 1)[-1]
        if name in ("ModuleList", "Sequential", "list", "tuple") and len(expr.args) == 1 and not expr.args[0].star:
            return _element_classes(ctx, model, expr.args[0].value, scope, depth + 1)
        return None
    values = _values(ctx, model, expr, scope)
    return None if values is None else _union(ctx, model, values, depth, _element_classes)


def _values(ctx, model, expr: cst.BaseExpression, scope) -> list | None:
    """``(value, its scope)`` for every binding of a name or ``self.<attr>`` (an annotation
    stands for a parameter's value; a loop variable's value is ``("for", iterable)``)."""
    values: list = []
    if isinstance(expr, cst.Name):
        for b in scope.bindings.get(expr.value, ()):
            if b.kind == "param" and isinstance(b.node, cst.Param) and b.node.annotation is not None:
                values.append((b.node.annotation.annotation, b.scope))
            elif b.kind == "for" and isinstance(b.node, cst.For) and isinstance(b.node.target, cst.Name):
                values.append((("for", b.node.iter), b.scope))
            else:
                values.append((b.value if b.kind == "assign" else None, b.scope))
        return values or None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            and expr.value.value == scope.self_name and scope.cls is not None:
        for target in scope.cls.self_assigned.get(expr.attr.value, ()):
            parent = ctx.parent(target)
            holder = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
            value = holder.value if isinstance(holder, cst.Assign) and len(holder.targets) == 1 \
                else holder.annotation.annotation if isinstance(holder, cst.AnnAssign) else None
            values.append((value, model.scope_of(target)))
        return values or None
    return None


def _union(ctx, model, values: list, depth: int, classes_of) -> list[str] | None:
    """The classes of every value (``classes_of`` for plain values), or None if one is unknown."""
    found: list[str] = []
    for value, where in values:
        if value is None:
            return None
        if isinstance(value, tuple):
            classes = _element_classes(ctx, model, value[1], where, depth + 1) if classes_of is _instance_classes \
                else None
        elif _is_annotation(ctx, value):
            classes = _annotated(ctx, model, value) if classes_of is _instance_classes else None
        else:
            classes = classes_of(ctx, model, value, where, depth + 1)
        if not classes:
            return None
        found.extend(q for q in classes if q not in found)
    return found


def _is_annotation(ctx, node: cst.CSTNode) -> bool:
    return isinstance(ctx.parent(node), cst.Annotation)


def _annotated(ctx, model, node: cst.BaseExpression) -> list[str] | None:
    """``Cls``, ``mod.Cls``, ``Union[A, B]``, ``Optional[A]`` as classes (None otherwise)."""
    if isinstance(node, cst.Subscript):
        head = (ctx.qualified_name(node.value) or "").rsplit(".", 1)[-1]
        if head not in ("Union", "Optional"):
            return None
        out: list[str] = []
        for element in node.slice:
            inner = element.slice.value if isinstance(element.slice, cst.Index) else None
            classes = _annotated(ctx, model, inner) if inner is not None else None
            if classes is None:
                return None
            out.extend(classes)
        return out
    if isinstance(node, cst.Name) and node.value == "None":
        return []
    return _class_named(ctx, model, node)


def _constructed(ctx, model, func: cst.BaseExpression) -> list[str] | None:
    """``Cls(...)`` or ``Cls.from_pretrained(...)``: the class built."""
    if isinstance(func, cst.Attribute) and func.attr.value.startswith("from_"):
        func = func.value
    return _class_named(ctx, model, func)


def _class_named(ctx, model, node: cst.BaseExpression) -> list[str] | None:
    """A Name/Attribute naming a class: a same-file class (under the file's module) or an
    imported capitalised name."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    if dotted in _BUILTIN_TYPES and not model.scopes[ctx.module].bindings.get(dotted):
        return ["builtins." + dotted]
    if "." not in dotted and model.class_named(dotted) is not None:
        return [f"{ctx.module_name}.{dotted}" if ctx.module_name else dotted]
    if ctx.is_imported(node) and dotted.rsplit(".", 1)[-1][:1].isupper():
        qualified = ctx.qualified_name(node)
        return [qualified] if qualified is not None else None
    return None


def _call_shape(call: cst.Call) -> str | None:
    """``"2:name,other"``: how many positional arguments a call passes and the keywords it
    names (None with ``*args``/``**kwargs``: it may fit any signature)."""
    if any(arg.star for arg in call.args):
        return None
    positional = sum(1 for arg in call.args if arg.keyword is None)
    return f"{positional}:" + ",".join(arg.keyword.value for arg in call.args if arg.keyword is not None)


def bound_signatures(model) -> dict[str, str]:
    """``{"Class.method": signature}`` for every method called on an instance (``self``
    left out): ``"min:max:names"`` (``max`` -1 with ``*args``; ``names``: keywords it takes,
    ``*`` first with ``**kwargs``). ``fits`` tells whether a call's shape can call it."""
    out: dict[str, str] = {}
    for scope in model.functions():
        node = scope.node
        if not isinstance(node, cst.FunctionDef) or scope.method_kind not in ("method", "classmethod"):
            continue
        key = function_key(model, node)
        params = node.params
        positional = [*params.posonly_params, *params.params][1:]
        required = sum(1 for p in positional if p.default is None)
        keywordable = [*params.params, *params.kwonly_params][0 if params.posonly_params else 1:]
        names = [p.name.value for p in keywordable]
        required_kw = [p.name.value for p in params.kwonly_params if p.default is None]
        most = -1 if isinstance(params.star_arg, cst.Param) else len(positional)
        star = "*" if isinstance(params.star_kwarg, cst.Param) else ""
        if key is not None:
            out[key] = f"{required}:{most}:{star}{','.join(names)}:{','.join(required_kw)}"
    return out


def fits(shape: str | None, signature: str | None) -> bool:
    """Whether a call of that shape may run a function of that signature (unknown: yes)."""
    if shape is None or signature is None:
        return True
    count, _, keywords = shape.partition(":")
    passed, given = int(count), [k for k in keywords.split(",") if k]
    required, most, names, required_kw = signature.split(":")
    takes_any = names.startswith("*")
    accepted = set(names.lstrip("*").split(",")) - {""}
    if int(most) >= 0 and passed > int(most):
        return False
    if not takes_any and any(k not in accepted for k in given):
        return False
    return passed + sum(1 for k in given if k in accepted) >= int(required) and set(required_kw) - {""} <= set(given)


# ``torch.autograd.Variable`` as its qualified names.
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def volatile_arguments(model) -> list[cst.Arg]:
    """Every ``volatile=`` argument (not a literal ``False``) of a ``torch.autograd.Variable``
    call in the file: the pre-0.4 way to turn autograd off, ignored since 0.4 (TL018 reports
    each). A forward on such inputs still records its graph on torch >= 0.4, so TL003 reports
    it too (read true on the learners' corpus 11 times). Memoised."""
    memo = model.memo("volatile_arguments")
    if "" not in memo:
        found = []
        for site in model.calls:
            call = site.node
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "volatile" and not (
                        isinstance(arg.value, cst.Name) and arg.value.value == "False") \
                        and model.qualified_name(call.func) in VARIABLE:
                    found.append(arg)
        memo[""] = found
    return memo[""]
