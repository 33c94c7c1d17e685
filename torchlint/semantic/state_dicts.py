"""State-dict loads and saves: what a load's strictness and missing/unexpected keys are checked
by, whose state dict it is.

For a ``<receiver>.load_state_dict(state, strict=...)`` call, as one file shows:

* its arguments: ``state_argument(call)`` (the dict, a ``deepcopy`` of it unwrapped),
  ``non_strict(call)`` (``strict=False`` as written, by keyword or second positional);
* whether the caller chooses the strictness: ``strict_chosen_by_caller`` (a branch of a test
  on the function's ``strict`` parameter, or one whose other branch loads strictly:
  ``strict_load_in``, ``same_value``);
* whose state dict it is, so the keys cannot mismatch: ``keys_match`` (an EMA/averaged copy,
  ``averaged_copy``; the receiver's own ``state_dict()``, ``own_state_dict``; a snapshot
  attribute, ``snapshot_attribute``; an entry built from one, ``entry_built_from_state_dict``;
  a literal naming the receiver's attributes, ``own_keys_literal``; a dict keyed by the names
  the receiver's ``named_parameters()`` yields, ``keyed_by_own_names``; a filtered part the class
  saves itself, ``saved_by_own_class``; its own dict round-tripped through a temporary file the
  class writes, ``round_trip_through_temporary_file``; a dict filtered against the target's keys whose size is
  read, ``filtered_by_own_keys``/``size_read``);
* whether a mismatch is seen another way: ``mismatch_seen`` (a key difference computed and
  read, ``differences_read``; a warning fallback after a strict try, ``strict_fallback``; a test
  of the dict's key names around it, ``key_guarded``/``tests_key_names``; key names read after
  it, ``keys_indexed_after``; a file the same function saved from the receiver, ``saved_here``);
* whether the receiver returns itself rather than keys (a tensordict): ``returns_itself``.

``assigned_values(model, name)`` (every value a name may hold, None when one is not a plain
assignment) and ``stored_value(ctx, target)`` (the value an assignment stores) are the value
lookups these share. Queries that take ``ctx`` use its parent links: ask from ``finish()``.
"""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.dataflow import Flow
from torchlint.statements import dotted_name
from torchlint.torch_api import is_false_literal, keyword_arg, strip_self_returning
from torchlint.tree import iter_nodes


def strict_chosen_by_caller(ctx, model, call: cst.Call) -> bool:
    """The call is a branch of a test on a parameter of its function named like ``strict``
    (``if strict: ... else: m.load_state_dict(sd, strict=False)``), or on any parameter when
    the other branch loads the same receiver strictly (``if disable_check: ... else:
    m.load_state_dict(sd)``): ``strict=strict`` written as two calls, the caller's choice."""
    function = ctx.enclosing_function(call)
    if function is None:
        return False
    for up in ctx.ancestors(call):
        if up is function:
            return False
        if not isinstance(up, cst.If):
            continue
        params = [n for n in iter_nodes(up.test) if isinstance(n, cst.Name) and n.value != model.self_name(function)
                  and any(b.kind == "param" for b in model.reaching(n.value, n))]
        if any("strict" in n.value.lower() for n in params):
            return True
        other = up.body if up.orelse is not None and ctx.inside(call, up.orelse) else up.orelse
        if params and strict_load_in(model, other, call):
            return True  # ``if disable_check: m.load(sd, strict=False) else: m.load(sd)``
    return False


def strict_load_in(model, branch: cst.CSTNode | None, call: cst.Call) -> bool:
    """``branch`` loads the same dict into the same receiver strictly (``strict`` left out or
    ``True``): the strictness is all the test chooses."""
    state = state_argument(call)
    if branch is None or state is None:
        return False
    receiver = dotted_name(call.func.value)
    return receiver is not None and any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "load_state_dict"
        and dotted_name(n.func.value) == receiver and _strict(n) and (other := state_argument(n)) is not None
        and same_value(model, other, state) for n in iter_nodes(branch))


def same_value(model, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same expression, each name in it seeing the same bindings (``torch.load(path)`` in
    both branches; not a ``state_dict`` bound anew in one of them)."""
    code = model.ctx.module.code_for_node
    if code(a) != code(b):
        return False
    names_a = [n for n in iter_nodes(a) if isinstance(n, cst.Name)]
    names_b = [n for n in iter_nodes(b) if isinstance(n, cst.Name)]
    return all({id(x) for x in model.reaching(m.value, m)} == {id(x) for x in model.reaching(n.value, n)}
               for m, n in zip(names_a, names_b))


def _strict_argument(call: cst.Call) -> cst.Arg | None:
    """``load_state_dict``'s ``strict``: by keyword or as the second positional argument."""
    strict = keyword_arg(call, "strict")
    if strict is None:
        positional = [a for a in call.args if a.keyword is None]
        strict = positional[1] if len(positional) > 1 and not positional[1].star else None
    return strict


def _strict(call: cst.Call) -> bool:
    """``strict`` left out or ``True``."""
    strict = _strict_argument(call)
    return strict is None or isinstance(strict.value, cst.Name) and strict.value.value == "True"


def non_strict(call: cst.Call) -> bool:
    """``load_state_dict``'s ``strict`` is a false literal as written (``strict=False``, ``0``)."""
    strict = _strict_argument(call)
    return strict is not None and is_false_literal(strict.value)


def keys_match(ctx, call: cst.Call) -> bool:
    """The keys cannot mismatch unnoticed: the target is an EMA/averaged copy, the dict comes
    from a live module (its ``state_dict()``, or an entry built from one), or it was filtered
    against one and the size of what is left is read afterwards."""
    state = state_argument(call)
    if state is None:
        return False
    model = ctx.semantic.model
    receiver = call.func.value
    if averaged_copy(ctx, model, receiver) or saved_by_own_class(ctx, model, receiver) \
            or round_trip_through_temporary_file(ctx, model, call):
        return True
    if own_state_dict(model, state) or snapshot_attribute(ctx, model, state) \
            or entry_built_from_state_dict(ctx, state) or own_keys_literal(model, receiver, state) \
            or keyed_by_own_names(ctx, model, receiver, state):
        return True
    return isinstance(state, cst.Name) and filtered_by_own_keys(model, state) and size_read(model, state)


# Calls that build an averaged or EMA copy of a live module (its keys are the source's own).
_COPIES = frozenset({"deepcopy", "AveragedModel"})


def averaged_copy(ctx, model, receiver: cst.BaseExpression) -> bool:
    """``self.<attr>`` (or its ``.module``) where every store to ``attr`` in the class is a
    ``copy.deepcopy(...)``/``AveragedModel(...)`` of a module (``None``, ``.to(...)`` of itself
    aside): an EMA/averaged copy swapping weights with its source."""
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "module":
        receiver = receiver.value
    if not (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name)
            and receiver.value.value == "self"):
        return False
    info = model.class_of(receiver)
    targets = info.self_assigned.get(receiver.attr.value, []) if info is not None else []
    values = [stored_value(ctx, target) for target in targets]
    copies = [v for v in values if isinstance(v, cst.Call)
              and (dotted_name(v.func) or "").rsplit(".", 1)[-1] in _COPIES]
    return bool(copies) and all(v in copies or _keeps_copy(v, receiver.attr.value) for v in values)


def stored_value(ctx, target: cst.CSTNode) -> cst.BaseExpression | None:
    """The value the assignment storing to ``target`` assigns (None for any other store)."""
    store = ctx.parent(target)
    if isinstance(store, cst.AssignTarget):
        store = ctx.parent(store)
    return store.value if isinstance(store, (cst.Assign, cst.AnnAssign)) else None


def _keeps_copy(value: cst.BaseExpression | None, attr: str) -> bool:
    """``None`` (not built yet) or ``self.<attr>.to(...)`` (the same copy moved)."""
    if value is None or isinstance(value, cst.Name) and value.value == "None":
        return True
    return isinstance(value, cst.Call) and dotted_name(strip_self_returning(value)) == f"self.{attr}"


def state_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The dict passed to ``load_state_dict`` (a ``deepcopy(...)`` of it unwrapped)."""
    arg = keyword_arg(call, "state_dict") or next((a for a in call.args if a.keyword is None and not a.star), None)
    return _unwrap_deepcopy(arg.value) if arg is not None else None


def is_state_dict_call(expr: cst.BaseExpression) -> bool:
    """``m.state_dict()`` (``keep_vars=`` aside: the same keys)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value == "state_dict" and all(_keyword(a) == "keep_vars" for a in expr.args)


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def assigned_values(model, name: cst.Name) -> list[cst.BaseExpression] | None:
    """The values of every binding of ``name`` reaching it; None when one is not a plain
    assignment (a parameter, a loop variable) and so may hold anything."""
    values = []
    for binding in model.reaching(name.value, name):
        if binding.kind not in ("assign", "ann", "walrus") or binding.value is None:
            return None
        values.append(binding.value)
    return values or None


def own_state_dict(model, expr: cst.BaseExpression) -> bool:
    """``m.state_dict()``, a comprehension filtering one (``{k: v for k, v in
    m.state_dict().items() if ...}``: the keys are its own, some left out), or a name only
    ever bound to one of these (filled in place afterwards)."""
    if is_state_dict_call(expr) or _filters_state_dict(expr):
        return True
    if isinstance(expr, cst.Name):
        values = assigned_values(model, expr)
        return values is not None and all(is_state_dict_call(v) or _filters_state_dict(v) for v in values)
    return False


def _filters_state_dict(expr: cst.BaseExpression) -> bool:
    """``{k: v for k, v in m.state_dict().items() if ...}`` (``.items()`` of the call itself)."""
    if not isinstance(expr, cst.DictComp) or expr.for_in.inner_for_in is not None:
        return False
    source = expr.for_in.iter
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and source.func.attr.value == "items" \
            and not source.args:
        source = source.func.value
    return is_state_dict_call(source)


def entry_built_from_state_dict(ctx, state: cst.BaseExpression) -> bool:
    """``state["ranges"]`` where this file builds the ``"ranges"`` entry from a module's
    ``state_dict()`` (``{"ranges": {k: v for k, v in model.state_dict().items() if ...}}``):
    a subset of the model's own keys, saved and restored by design."""
    if not (isinstance(state, cst.Subscript) and len(state.slice) == 1 and isinstance(state.slice[0].slice, cst.Index)
            and isinstance(state.slice[0].slice.value, cst.SimpleString)):
        return False
    key = state.slice[0].slice.value.evaluated_value
    return any(isinstance(node, cst.DictElement) and isinstance(node.key, cst.SimpleString)
               and node.key.evaluated_value == key
               and any(is_state_dict_call(sub) for sub in iter_nodes(node.value) if isinstance(sub, cst.BaseExpression))
               for node in iter_nodes(ctx.module))


def filtered_by_own_keys(model, name: cst.Name) -> bool:
    """Every value ``name`` holds was filtered against a module's ``state_dict()``:
    ``intersect_dicts(ckpt, model.state_dict())`` or ``{k: v ... if k in model.state_dict()}``."""
    values = assigned_values(model, name)
    return values is not None and all(mentions_own_state_dict(model, v) for v in values)


def mentions_own_state_dict(model, value: cst.BaseExpression) -> bool:
    """A call given a module's ``state_dict()`` (in an argument), or a dict comprehension whose
    conditions consult one."""
    if isinstance(value, cst.Call):
        candidates = [a.value for a in value.args]
    elif isinstance(value, cst.DictComp):
        candidates = [cond.test for comp in _comp_fors(value.for_in) for cond in comp.ifs]
    else:
        return False
    return any(own_state_dict(model, sub) for candidate in candidates for sub in iter_nodes(candidate)
               if isinstance(sub, cst.BaseExpression))


def _comp_fors(comp: cst.CompFor | None):
    while comp is not None:
        yield comp
        comp = comp.inner_for_in


def size_read(model, name: cst.Name) -> bool:
    """``len(name)`` is read in ``name``'s scope (a logged or compared transfer count)."""
    scope = model.scope_of(name)
    return any(isinstance(node, cst.Call) and dotted_name(node.func) == "len" and len(node.args) == 1
               and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == name.value
               for node in iter_nodes(scope.node, into_scopes=False))


def _unwrap_deepcopy(value: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "deepcopy" \
            and len(value.args) == 1:
        value = value.args[0].value
    return value


def snapshot_attribute(ctx, model, state: cst.BaseExpression) -> bool:
    """``self.<attr>`` that the class only ever sets to a module's ``state_dict()`` (or a
    ``deepcopy`` of one, or ``None``): a snapshot taken to reload the weights later (espnet's
    ``reload_pretrained_parameters``, torchrl's ``EnvCreator``), not a file's keys."""
    if not (isinstance(state, cst.Attribute) and isinstance(state.value, cst.Name) and state.value.value == "self"):
        return False
    info = model.class_of(state)
    targets = info.self_assigned.get(state.attr.value, []) if info is not None else []
    values = [stored_value(ctx, target) for target in targets]
    snapshots = [v for v in values if v is not None and own_state_dict(model, _unwrap_deepcopy(v))]
    return bool(snapshots) and all(v in snapshots or isinstance(v, cst.Name) and v.value == "None" for v in values)


def own_keys_literal(model, receiver: cst.BaseExpression, state: cst.BaseExpression) -> bool:
    """``self.load_state_dict({"embedding.weight": w}, strict=False)``: a dict literal (directly
    or through a name only bound to such literals) whose every key is a string naming an
    attribute the class uses on ``self``: the keys are written for this module."""
    if not (isinstance(receiver, cst.Name) and receiver.value == "self"):
        return False
    info = model.class_of(receiver)
    values = assigned_values(model, state) if isinstance(state, cst.Name) else [state]
    if info is None or not values or not all(isinstance(v, cst.Dict) and v.elements for v in values):
        return False
    own = set(info.self_assigned) | info.self_read
    return all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
               and e.key.evaluated_value.split(".", 1)[0] in own for v in values for e in v.elements)


# A module's methods that yield its own names first: (name, value) pairs, or its state dict.
_OWN_NAMES = frozenset({"named_parameters", "named_buffers", "state_dict"})


def _own_names_loop(iterable: cst.BaseExpression, receiver: str) -> bool:
    """``receiver.named_parameters()``, ``receiver.named_buffers()``, ``receiver.state_dict()``
    (``.items()``/``.keys()`` of it too): what yields the receiver's own names."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value in ("items", "keys") and not iterable.args:
        iterable = iterable.func.value
    return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
        and iterable.func.attr.value in _OWN_NAMES and dotted_name(iterable.func.value) == receiver


def _loop_key(target: cst.BaseExpression) -> str | None:
    """The name a loop binds to each key: ``name`` of ``for name, p in ...`` or ``for name in ...``."""
    if isinstance(target, cst.Tuple) and target.elements:
        target = target.elements[0].value
    return target.value if isinstance(target, cst.Name) else None


def keyed_by_own_names(ctx, model, receiver: cst.BaseExpression, state: cst.BaseExpression) -> bool:
    """The dict's keys are the receiver's own names, whatever its values: a comprehension over
    ``receiver.named_parameters()`` (or its ``named_buffers()``, ``state_dict().items()``)
    keyed by the loop's name, or a name bound only to ``{}`` and filled only by
    ``d[name] = ...`` in such a loop (avalanche's MER: the Reptile update interpolates the
    model's own weights, ``load_dict[name] = w_bef[name] + ...`` for ``name, param in
    self.model.named_parameters()``, and loads them back non-strictly, buffers left as they are)."""
    owner = dotted_name(receiver)
    if owner is None:
        return False
    if isinstance(state, cst.DictComp):
        return state.for_in.inner_for_in is None and _own_names_loop(state.for_in.iter, owner) \
            and isinstance(state.key, cst.Name) and state.key.value == _loop_key(state.for_in.target)
    if not isinstance(state, cst.Name):
        return False
    values = assigned_values(model, state)
    if not values or not all(isinstance(v, cst.Dict) and not v.elements for v in values):
        return False
    scope = model.scope_of(state).node
    stores = [t.target for t in iter_nodes(scope, into_scopes=False) if isinstance(t, cst.AssignTarget)
              and isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name)
              and t.target.value.value == state.value]
    if not stores:
        return False
    for target in stores:
        index = target.slice[0].slice if len(target.slice) == 1 else None
        key = index.value.value if isinstance(index, cst.Index) and isinstance(index.value, cst.Name) else None
        loop = next((a for a in ctx.ancestors(target) if isinstance(a, cst.For)), None)
        if key is None or loop is None or _loop_key(loop.target) != key or not _own_names_loop(loop.iter, owner):
            return False
    return True


def saved_by_own_class(ctx, model, receiver: cst.BaseExpression) -> bool:
    """The class ``torch.save``s a filtered part of the same receiver's ``state_dict()``
    (``{n: p for n, p in self.state_dict().items() if p.requires_grad}``): loading only those
    keys back is the point of the non-strict load (speechbrain's adapter saver/loader pair)."""
    text = dotted_name(receiver)
    info = model.class_of(receiver)
    if text is None or not (text == "self" or text.startswith("self.")) or info is None:
        return False
    for site in model.calls:
        if model.class_of(site.node) is not info or model.qualified_name(site.node.func) != "torch.save" \
                or not site.node.args:
            continue
        saved = site.node.args[0].value
        values = assigned_values(model, saved) if isinstance(saved, cst.Name) else [saved]
        if any(_filtered_state_dict(v, text) for v in values or ()):
            return True
    return False


def round_trip_through_temporary_file(ctx, model, call: cst.Call) -> bool:
    """The dict is read back (``torch.load(P)``, ``<io>.load_checkpoint(P)``) from a temporary
    file that code of the same class (or module) wrote with the matching saver (``torch.save``,
    ``<io>.save_checkpoint``) from the same receiver's ``state_dict()``: the path is made with
    ``tempfile`` (``os.path.join(tempfile.mkdtemp(), ".temp.ckpt")``), so nothing but that dict
    can be in it, and the load reads a path of the same name (``weights_path`` saved in one
    method, ``output.weights_path`` loaded in another: Lightning's spawn launcher handing the
    worker's weights back to the main process)."""
    state = state_argument(call)
    receiver = dotted_name(call.func.value)
    if state is None or receiver is None:
        return False
    values = assigned_values(model, state) if isinstance(state, cst.Name) else [state]
    loads = [v for v in values or () if isinstance(v, cst.Call) and v.args and v.args[0].keyword is None]
    if not loads or len(loads) != len(values):
        return False
    info = model.class_of(call)
    for load in loads:
        saver = _saver_of(model, load.func)
        read = _last_name(load.args[0].value)
        if saver is None or read is None or not any(
                _writes_own_state(ctx, model, site.node, saver, receiver, read) for site in model.calls
                if model.class_of(site.node) is info):
            return False
    return True


def _saver_of(model, func: cst.BaseExpression) -> str | None:
    """The saver matching a loader: ``torch.save`` for ``torch.load``, ``<io>.save_x`` for
    ``<io>.load_x``."""
    if model.qualified_name(func) == "torch.load":
        return "torch.save"
    text = dotted_name(func)
    if text is None or "." not in text:
        return None
    owner, _, name = text.rpartition(".")
    return f"{owner}.save{name[4:]}" if name.startswith("load") else None


def _last_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _writes_own_state(ctx, model, node: cst.Call, saver: str, receiver: str, path_name: str) -> bool:
    """``node`` is ``saver(<receiver>.state_dict(), path)`` (the dict through a name bound to
    it), with ``path`` a name ``path_name`` every binding of which makes a ``tempfile`` path."""
    name = "torch.save" if model.qualified_name(node.func) == "torch.save" else dotted_name(node.func)
    if name != saver or len(node.args) < 2:
        return False
    saved, path = node.args[0].value, node.args[1].value
    dicts = assigned_values(model, saved) if isinstance(saved, cst.Name) else [saved]
    if not dicts or not all(is_state_dict_call(d) and dotted_name(d.func.value) == receiver for d in dicts):
        return False
    if not (isinstance(path, cst.Name) and path.value == path_name):
        return False
    paths = assigned_values(model, path)
    return bool(paths) and all(any(isinstance(n, (cst.Name, cst.Attribute)) and
                                   (model.qualified_name(n) or "").startswith("tempfile.")
                                   for n in iter_nodes(p)) for p in paths)


def _filtered_state_dict(value: cst.BaseExpression, receiver: str) -> bool:
    """``{k: v for k, v in <receiver>.state_dict().items() if ...}``."""
    return isinstance(value, cst.DictComp) and any(
        comp.ifs and any(is_state_dict_call(sub) and dotted_name(sub.func.value) == receiver
                         for sub in iter_nodes(comp.iter) if isinstance(sub, cst.Call))
        for comp in _comp_fors(value.for_in))


def mismatch_seen(ctx, call: cst.Call) -> bool:
    """A mismatch cannot pass unnoticed: the keys that differ are computed by hand and read,
    a strict load was tried first and this fallback says so, or the load is guarded by a test
    of the checkpoint's key names."""
    model = ctx.semantic.model
    return differences_read(ctx, model, call) or strict_fallback(ctx, call) or key_guarded(ctx, call) \
        or keys_indexed_after(ctx, model, call) or saved_here(ctx, model, call)


def keys_indexed_after(ctx, model, call: cst.Call) -> bool:
    """After the load the function reads the same dict by key names written in strings
    (``sd["head.weight"]``, ``sd[f"blocks.{i}.bias"]``): the weights left out are copied by
    hand, and a checkpoint with other key names raises ``KeyError`` there."""
    state = state_argument(call)
    function = ctx.enclosing_function(call)
    if not isinstance(state, cst.Name) or function is None:
        return False
    after = model.order.get(call, 0)
    return any(isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == state.value
               and model.order.get(n, 0) > after and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index)
               and isinstance(n.slice[0].slice.value, (cst.SimpleString, cst.FormattedString))
               for n in iter_nodes(function.body))


def saved_here(ctx, model, call: cst.Call) -> bool:
    """The dict is ``torch.load(P)`` of a file the same function writes with
    ``torch.save(<receiver>.state_dict(), P)``: the receiver's own keys (a converted
    checkpoint cached on first use)."""
    state = state_argument(call)
    receiver = dotted_name(call.func.value)
    function = ctx.enclosing_function(call)
    if state is None or receiver is None or function is None:
        return False
    values = assigned_values(model, state) if isinstance(state, cst.Name) else [state]
    loaded = {ctx.module.code_for_node(v.args[0].value) for v in values or ()
              if isinstance(v, cst.Call) and model.qualified_name(v.func) == "torch.load" and v.args}
    if not loaded:
        return False
    for n in iter_nodes(function.body):
        if isinstance(n, cst.Call) and model.qualified_name(n.func) == "torch.save" and len(n.args) >= 2 \
                and is_state_dict_call(n.args[0].value) and dotted_name(n.args[0].value.func.value) == receiver \
                and ctx.module.code_for_node(n.args[1].value) in loaded:
            return True
    return False


def differences_read(ctx, model, call: cst.Call) -> bool:
    """The function consults the receiver's own ``state_dict()`` and reads a key difference it
    computes, ``[k for k in A if k not in B]`` (raised, logged or returned): the missing and
    unexpected keys are checked by hand (peft, lavis)."""
    receiver = dotted_name(call.func.value)
    function = ctx.enclosing_function(call)
    if receiver is None or function is None:
        return False
    nodes = list(iter_nodes(function.body))
    if not any(is_state_dict_call(n) and dotted_name(n.func.value) == receiver for n in nodes if isinstance(n, cst.Call)):
        return False
    flow = Flow(ctx, model)
    return any(isinstance(n, (cst.ListComp, cst.SetComp)) and _key_difference(n) and flow.reads(n) for n in nodes)


def _key_difference(comp: cst.ListComp | cst.SetComp) -> bool:
    """``[k for k in A if k not in B]``."""
    target = comp.for_in.target
    return isinstance(comp.elt, cst.Name) and isinstance(target, cst.Name) and comp.elt.value == target.value \
        and comp.for_in.inner_for_in is None and any(
            isinstance(cond.test, cst.Comparison) and isinstance(cond.test.left, cst.Name)
            and cond.test.left.value == target.value and len(cond.test.comparisons) == 1
            and isinstance(cond.test.comparisons[0].operator, cst.NotIn) for cond in comp.for_in.ifs)


# Calls that say something to the user (a warning, a log line, a print).
_SPEAKS = frozenset({"warn", "warning", "info", "error", "exception", "print", "log"})


def strict_fallback(ctx, call: cst.Call) -> bool:
    """In an ``except`` handler that warns, after the ``try`` body loaded the same receiver
    strictly (lavis: strict first; on failure a warning, then the non-strict load)."""
    receiver = dotted_name(call.func.value)
    handler = ctx.enclosing(call, cst.ExceptHandler, stop_at_scope=True)
    attempt = ctx.parent(handler) if handler is not None else None
    if receiver is None or not isinstance(attempt, cst.Try):
        return False
    strict_first = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                       and n.func.attr.value == "load_state_dict" and dotted_name(n.func.value) == receiver
                       and not non_strict(n) for n in iter_nodes(attempt.body))
    return strict_first and any(isinstance(n, cst.Call) and (dotted_name(n.func) or "").rsplit(".", 1)[-1] in _SPEAKS
                                for n in iter_nodes(handler.body))


def key_guarded(ctx, call: cst.Call) -> bool:
    """In the body of an ``if`` that tests the loaded dict's key names
    (``if any("postdecoder" in k for k in state.keys())``, ``if "head.weight" in state``):
    the author knows which keys the checkpoint carries (espnet's compatibility path)."""
    state = state_argument(call)
    if state is None:
        return False
    text = ctx.module.code_for_node(state)
    child: cst.CSTNode = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(anc, cst.If) and child is anc.body and tests_key_names(ctx, anc.test, text):
            return True
        child = anc
    return False


def tests_key_names(ctx, test: cst.BaseExpression, state: str) -> bool:
    """``"lit" in <state>`` / ``"lit" in <state>.keys()``, or a comprehension over those keys
    testing ``"lit" in k``."""
    def names_keys(expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "keys" \
                and not expr.args:
            expr = expr.func.value
        return ctx.module.code_for_node(expr) == state

    for node in iter_nodes(test):
        if isinstance(node, cst.Comparison) and isinstance(node.left, cst.SimpleString) \
                and len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, cst.In) \
                and names_keys(node.comparisons[0].comparator):
            return True
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and names_keys(node.for_in.iter) \
                and any(isinstance(sub, cst.Comparison) and isinstance(sub.left, cst.SimpleString)
                        for sub in iter_nodes(node.elt)):
            return True
    return False


# Receivers whose ``load_state_dict`` returns the receiver itself, not missing/unexpected keys.
_SELF_RETURNING = frozenset({"TensorDict", "TensorDictBase", "TensorDictParams", "LazyStackedTensorDict"})


def returns_itself(ctx, receiver: cst.BaseExpression) -> bool:
    """The receiver is a tensordict (``if is_tensor_collection(x):`` / ``isinstance(x,
    TensorDictBase)`` around the call): its ``load_state_dict`` returns itself, with no keys to check."""
    text = dotted_name(receiver)
    if text is None:
        return False
    child: cst.CSTNode = receiver
    for anc in ctx.ancestors(receiver):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(anc, cst.If) and child is anc.body and any(
                isinstance(n, cst.Call) and n.args and dotted_name(n.args[0].value) == text
                and _narrows_to_tensordict(n) for n in iter_nodes(anc.test)):
            return True
        child = anc
    return False


def _narrows_to_tensordict(call: cst.Call) -> bool:
    name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
    if name == "is_tensor_collection":
        return len(call.args) == 1
    if name != "isinstance" or len(call.args) != 2:
        return False
    kinds = call.args[1].value
    names = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    return any((dotted_name(n) or "").rsplit(".", 1)[-1] in _SELF_RETURNING for n in names)
