"""Where tensors are made and which device they end on: tensor factories called without
``device=`` (``factories_without_device``: ``torch.zeros(n)``, not the 0-dim ones PyTorch lets
meet a GPU tensor), files that set a default device (``sets_default_device``), files whose code
moves anything to an accelerator (``moves_to_accelerator``), and where a created tensor reaches
the model's tensors (``Devices.reach`` -> ``Meeting``): followed through the methods and torch
functions that keep its device, tuples, the local names it is assigned to, the helpers it is
passed to and the calls of a helper returning it, to the expression it is combined with that
carries the model's device (a tensor parameter, a layer's output, an ``nn.Parameter``
attribute; not a host value: a size, a shape, a number, a host-built tensor), or the submodule
it is handed to (``self.lstm(x, (h0, c0))``), or the initial state a method returns for the
class's recurrent layer (``init_hidden``); in training code, the model it meets and the device
that model runs on (``Devices.moved_model``: built and moved there, a ``self`` attribute built
and moved in ``__init__``, or a model-like name fed inputs moved there: ``fed_device``); for
a plain function, the device some same-file call gives a parameter (``caller_device``); and the
arguments torch takes on the CPU whatever device the others are on (``Devices.host_argument``:
a CTC loss's targets and lengths), where a CPU tensor meets nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, NamedTuple

import libcst as cst

from torchlint.semantic.callgraph import passed_argument
from torchlint.semantic.modules import constructions, is_parameter, self_attr_bindings
from torchlint.statements import dotted_name
from torchlint.textscan import contains_any
from torchlint.torch_api import (has_star_kwargs, keyword_arg, looks_like_criterion_name,
                                 looks_like_model_name, tensor_factory)
from torchlint.tree import iter_nodes

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.semantic.model import CallSite, ClassInfo, SemanticModel

# Methods whose result is on another device (or the host), or no tensor at all.
_MOVING = {"to", "type", "cuda", "type_as", "cpu", "numpy", "tolist", "item", "size", "dim", "numel", "nelement",
           "stride", "data_ptr", "get_device", "is_contiguous", "pin_memory", "to_dense", "new_zeros",
           "new_ones", "new_empty", "new_full", "new_tensor", "any", "all"}
_MAX_HOST_DEPTH = 4  # locals followed back to what they were assigned (``a = b``, ``b = x.shape[0]``)
# ``x.<attr>`` that is no tensor on x's device.
_HOST_ATTRS = {"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad", "training", "grad_fn"}
_HOST_FUNCTIONS = {"len", "int", "float", "bool", "str", "range", "min", "max", "sum", "round", "abs", "isinstance",
                   "getattr", "hasattr", "list", "tuple", "print"}
# torch functions combining their tensor arguments (device mismatch if one is on the CPU).
_COMBINING = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "matmul", "mm", "bmm",
              "einsum", "where", "add", "sub", "mul", "div", "maximum", "minimum", "bilinear", "addmm", "baddbmm"}
_COMBINING_METHODS = {"masked_fill", "masked_fill_", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_",
                      "matmul", "mm", "bmm", "copy_", "addcmul_", "lerp"}
_TENSOR_ATTRS = {"T", "mT", "H", "data", "real", "imag"}
# In-place methods taking an index (and source) tensor that must be on the receiver's device.
_INDEXED_METHODS = {"scatter_", "scatter_add_", "scatter_reduce_", "index_add_", "index_copy_", "index_fill_",
                    "index_put_", "masked_scatter_", "put_"}
_LOSS_FUNCTIONS = ("cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
                   "smooth_l1_loss", "mse_loss", "l1_loss", "nll_loss", "huber_loss")
_DEVICE_MOVES = {"to", "cuda", "type_as", "type"}
_RECURRENT = {"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"}
# torch functions whose result is not a tensor on their first argument's device.
_NOT_KEEPING = {"device", "is_tensor", "numel", "from_numpy", "save", "load", "manual_seed", "no_grad", "tensor",
                "as_tensor", "is_floating_point", "result_type", "promote_types", "broadcast_shapes", "Size"}
# Parameter names that hold sizes, counts and flags rather than tensors.
_SIZE_NAME = re.compile(r"^(n|k|i|j|t_?max|num_\w+|n_\w+|\w+_(len|length|size|dim|num|count|idx|index|steps?|shape)|"
                        r"(len|length|size|dim|steps?|offset|start|end|idx|index|count|device|dtype|mode|shape)\w*)$")
# Factories whose positional arguments are sizes or bounds: Python numbers (``torch.randint(lo, hi, ...)``).
_NUMBER_ARGUMENTS = {"zeros", "ones", "empty", "randn", "rand", "randint", "eye", "arange", "randperm"}
# Annotations of host values: numbers, strings, and containers of them (``Tuple[int, int]``, ``torch.Size``).
_HOST_TYPES = {"int", "float", "bool", "str", "torch.Size", "Size"}
# Calls that take some of their tensors on the CPU whatever device the others are on, with their
# parameters in order and those taken on the host: the CTC loss's targets and lengths (the native
# kernel moves CPU targets to the log-probs' device, cuDNN's wants them on the CPU, and lengths
# given as tensors are read on the host).
_CTC = (("log_probs", "targets", "input_lengths", "target_lengths"), {"targets", "input_lengths", "target_lengths"})
_HOST_ARGUMENTS = {"torch.nn.functional.ctc_loss": _CTC, "torch.ctc_loss": _CTC}
_HOST_ARGUMENT_LAYERS = {"CTCLoss": _CTC}  # ``nn.CTCLoss()(log_probs, targets, ...)``
_HOST_CONTAINERS = {"Tuple", "tuple", "List", "list", "Sequence", "Optional", "typing.Tuple", "typing.List",
                    "typing.Sequence", "typing.Optional"}

# Calls that make later factories' tensors land on a device other than the CPU.
_DEFAULT_DEVICE = ("set_default_device", "set_default_tensor_type", "set_default_dtype_and_device")


def moves_to_accelerator(model: "SemanticModel") -> bool:
    """Whether the file's code (not its comments) moves anything to an accelerator or names a
    device: ``.cuda()``, ``.to(<not a dtype>)``, a ``device=`` argument, a name or attribute
    with ``device`` in it (``device = torch.device(...)``, ``args.device``), or uses Lightning
    or Accelerate (which move the model themselves)."""
    text = model.ctx.text
    if not contains_any(text, ("cuda", ".to(", "device", "ccelerat", "lightning")):
        return False
    for site in model.calls:
        call = site.node
        func = call.func
        if isinstance(func, cst.Attribute) and (func.attr.value == "cuda" or
                                                func.attr.value == "to" and not _dtype_only(call)):
            return True
        if keyword_arg(call, "device") is not None:
            return True
    for node in model.nodes_of(cst.Name, cst.Import, cst.ImportFrom):
        if isinstance(node, cst.Name) and ("device" in node.value.lower() or "accelerat" in node.value.lower()):
            return True
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            code = model.ctx.module.code_for_node(node)
            if "lightning" in code or "accelerate" in code:
                return True
    return False


def sets_default_device(ctx: "FileContext") -> bool:
    """Whether the file sets a default device or tensor type (``torch.set_default_device``, ...)
    anywhere in its text: then a factory without ``device=`` need not make a CPU tensor."""
    return contains_any(ctx.text, _DEFAULT_DEVICE)


def factories_without_device(model: "SemanticModel") -> Iterator[tuple["CallSite", str]]:
    """Each call of a tensor factory (``torch_api.tensor_factory``) with no ``device=`` and no
    ``**kwargs``, that makes a tensor with dimensions (not ``_scalar``), with the factory's name:
    a tensor made on the CPU (unless a default device is set)."""
    for site in model.calls:
        call = site.node
        factory = tensor_factory(model.qualified_name(call.func))
        if factory is None or keyword_arg(call, "device") is not None or has_star_kwargs(call) or _scalar(call, factory):
            continue
        yield site, factory


def _scalar(call: cst.Call, factory: str) -> bool:
    """A 0-dim tensor (or one whose shape cannot be told): ``torch.tensor(2.0)``,
    ``torch.tensor(values)``, ``torch.zeros(())``, ``torch.full((), v)``."""
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if factory in ("tensor", "as_tensor", "FloatTensor", "LongTensor"):
        return not isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
    return isinstance(first, (cst.Tuple, cst.List)) and not first.elements


class Meeting(NamedTuple):
    """Where a CPU-made tensor meets the model's tensors: ``other``, the expression (as written)
    carrying the model's device it is combined with (a tensor, or the submodule it is passed to
    when nothing else names the device); ``module``, that submodule (``self.lstm``, ``self``),
    when it is handed to one."""

    other: str
    module: str | None = None
    returned: bool = False  # returned by a method no code of the file calls (``init_hidden``)
    device: str | None = None  # handed to a model the code moved there (``model = Net().to(device)``)


class Devices:
    """Where a tensor created in a method of the class ``info`` goes (``meets``: the
    device-carrying expression it is combined with), and which expressions carry the model's
    device (``carrier``)."""

    def __init__(self, ctx: "FileContext", model: "SemanticModel", info: "ClassInfo | None"):
        self.ctx = ctx
        self.model = model
        self.info = info
        self._bound: dict = {}  # parameter -> the argument the call being followed passes it
        self._calls: dict = {}  # callee -> the call it was followed into from

    def meets(self, expr: cst.BaseExpression, names: int = 4) -> str | None:
        """The device-carrying expression (as written) the tensor ``expr`` makes is combined
        with or handed to (``reach``), else None."""
        found = self.reach(expr, names)
        return found.other if found is not None else None

    def reach(self, expr: cst.BaseExpression, names: int = 4) -> "Meeting | None":
        """Where the tensor ``expr`` makes meets the model's tensors: followed through
        device-keeping methods and functions (``.float()``, ``torch.triu(...)``,
        ``Variable(...)``), arithmetic with host values, tuples and lists, up to ``names`` local
        names it is assigned to and the calls of a helper that returns it, to an expression
        carrying the model's device it is combined with, or a submodule (``self.lstm(x, (h0,
        c0))``, ``self.wpe(pos)``) or the module itself (``self(x, hidden)``) it is passed to."""
        end = self._chain_end(expr)
        if end is None:
            return None
        parent = self.ctx.parent(end)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            if names == 0:
                return None
            name = parent.targets[0].target.value
            if self._moved_elsewhere(parent, name):
                return None  # ``if cuda: h = zeros(...).cuda() else: h = zeros(...)``: the CPU branch
            reads = self._reads_of(parent, name)
            if any(self._moved(read) for read in reads):
                return None  # ``if use_cuda: return h.cuda()``: the author puts it on the GPU where there is one
            for read in reads:
                found = self.reach(read, names - 1)
                if found is not None:
                    return found
            return None
        if isinstance(parent, cst.Return) and names > 0:
            return self._returned(end, names - 1)
        if isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is end else parent.left
            found = self.carrier(other, parent)
            return Meeting(found) if found is not None else self.reach(parent, names)
        return self._consumer(end, names)

    def _returned(self, expr: cst.BaseExpression, names: int) -> "Meeting | None":
        """Where the value ``return expr`` gives meets the model's tensors at the same-file
        calls of the function (``H = self._set_hidden_state(X, H)``, ``self.init_hidden(n)``)."""
        scope = self.model.scope_of(expr)
        function = scope.function() if scope is not None else None
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return None
        if function.node in self._calls:  # followed into the helper from this call
            return self.reach(self._calls[function.node], names)
        sites = self.ctx.semantic.graph.callers(function.node)
        for site in sites:
            found = self.reach(site.node, names)
            if found is not None:
                return found
        if not sites and self.info is not None and self.info.methods.get(function.node.name.value) is function.node:
            # ``def init_hidden(self, n): return torch.zeros(...)``, called by the training code:
            # the initial state of the class's recurrent layer
            layer = self.recurrent_layer()
            if layer is not None:
                return Meeting(layer, layer, returned=True)
        return None

    def recurrent_layer(self) -> str | None:
        """``self.<attr>`` (as written in the class) of a recurrent layer the class builds
        (``nn.LSTM``, ``nn.GRU``, ``nn.RNN`` and their cells), else None."""
        for attr in sorted(self.info.self_assigned):
            bindings = self_attr_bindings(self.model, self.info, attr)
            if any(c.kind == "nn" and c.name in _RECURRENT for b in bindings if b.value is not None
                   for c in constructions(self.model, b.value)):
                return f"self.{attr}"
        return None

    def _into_callee(self, call: cst.Call, arg: cst.Arg, names: int) -> "Meeting | None":
        """Where the tensor passed as ``arg`` to a same-file function or method meets the
        model's tensors inside it (``self._update_gate(X, edge_index, H)``)."""
        site = next((s for s in self.model.calls if s.node is call), None)
        if site is None or names <= 0:
            return None
        for callee in self.ctx.semantic.graph.targets(site):
            if not isinstance(callee, cst.FunctionDef) or callee.name.value in ("__init__", "forward"):
                continue
            bound = self.model.scopes[callee].self_name is not None and isinstance(call.func, cst.Attribute)
            param = _parameter_of(call, arg, callee, bound)
            if param is None:
                continue
            # the callee's other parameters hold what this call passes (``inv_freq`` built on the host)
            passed = {b.node: passed_argument(self.model, site, callee, key)
                      for key, bs in self.model.scopes[callee].bindings.items() for b in bs if b.kind == "param"}
            reads = [read for read in _names_in(callee.body, param) if not is_store(self.ctx, read)
                     and any(b.kind == "param" for b in self.model.reaching(param, read))]
            if any(self._moved(read) for read in reads):
                continue  # ``def cuda_variable(t): ... t.cuda()``: the helper puts it on the GPU
            saved, saved_calls = dict(self._bound), dict(self._calls)
            self._bound.update(passed)
            self._calls[callee] = call  # what the callee returns comes back here, not to every caller
            try:
                for read in reads:
                    met = self.reach(read, names - 1)
                    if met is not None:
                        return met
            finally:
                self._bound, self._calls = saved, saved_calls
        return None

    def _chain_end(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """Follow ``expr.float().unsqueeze(0)...``: the last expression with the same device, or
        None when the chain moves it (``.to(device)``, ``.cuda()``, ``.type_as(x)``, ``.tolist()``)."""
        parent = self.ctx.parent
        while True:
            attr = parent(expr)
            if isinstance(attr, cst.Arg) and attr.keyword is None and attr.star == "":
                call = parent(attr)
                if isinstance(call, cst.Call) and call.args and call.args[0] is attr and self._keeps_device(call):
                    expr = call  # ``torch.triu(torch.ones(T, T))``, ``Variable(torch.zeros(n))``
                    continue
                return expr
            if not (isinstance(attr, cst.Attribute) and attr.value is expr):
                return expr
            call = parent(attr)
            if not (isinstance(call, cst.Call) and call.func is attr):
                return None if attr.attr.value not in _TENSOR_ATTRS else self._chain_end(attr)
            method = attr.attr.value
            if method in _COMBINING_METHODS or method in _INDEXED_METHODS:
                return expr  # the tensor is the receiver of a combination: judged there
            if _moves(method, call):
                return None
            expr = call

    def _moved_elsewhere(self, assign: cst.Assign, name: str) -> bool:
        """Another assignment of ``name`` in the same function moves its value to a device
        (``hidden = torch.zeros(n).cuda()`` on the GPU branch of the one at hand)."""
        scope = self.model.scope_of(assign)
        return any(b.node is not assign and b.kind == "assign" and b.value is not None
                   and _moved_to(self.ctx, b.value) is not None for b in scope.bindings.get(name, ()))

    def _moved(self, read: cst.Name) -> bool:
        """``read.to(device)``, ``read.cuda()``, ``read.type_as(x)`` (not a dtype-only ``.to``)."""
        attr = self.ctx.parent(read)
        call = self.ctx.parent(attr) if isinstance(attr, cst.Attribute) and attr.value is read else None
        return isinstance(call, cst.Call) and call.func is attr and attr.attr.value in _DEVICE_MOVES \
            and _moves(attr.attr.value, call)

    def _keeps_device(self, call: cst.Call) -> bool:
        """``call`` gives a tensor on its first argument's device: a ``torch`` function that
        neither combines tensors nor makes one (``torch.triu``, ``torch.unsqueeze``,
        ``F.pad``), or the deprecated ``Variable`` wrapper."""
        name = self.model.qualified_name(call.func) or ""
        last = name.rsplit(".", 1)[-1]
        if last == "Variable":
            return True
        return name.startswith("torch.") and last not in _COMBINING and last not in _NOT_KEEPING \
            and tensor_factory(name) is None and not last[:1].isupper()

    def _reads_of(self, assign: cst.Assign, name: str) -> list[cst.Name]:
        """The reads of ``name`` in the same function that ``assign`` reaches, unless another
        binding reaching them derives from the name itself (``h = h.to(device)`` on a branch)."""
        model = self.model
        scope = model.scope_of(assign)
        out = []
        for node in _names_in(scope.node, name):
            if model.order.get(node, 0) <= model.order.get(assign, 0) or is_store(self.ctx, node):
                continue
            found = model.reaching(name, node)
            for b in found:
                if b.node in self.ctx.ancestors(node):  # ``out, h = self.rnn(x, h)``: what reached the statement
                    found = model.reaching(name, b.node)
                    break
            if not any(b.node is assign for b in found):
                continue
            if any(b.node is not assign and b.kind != "param" and _moves_name(b.node, name) for b in found):
                continue
            out.append(node)
        return out

    def _consumer(self, expr: cst.BaseExpression, names: int = 4) -> "Meeting | None":
        """If ``expr`` is combined with a device-carrying expression or passed to a submodule,
        where."""
        ctx = self.ctx
        parent = ctx.parent(expr)
        if isinstance(parent, cst.AugAssign) and parent.value is expr:
            found = self.carrier(parent.target, parent)
            return Meeting(found) if found is not None else None
        if isinstance(parent, cst.Attribute) and parent.value is expr:  # mask.masked_fill(...) on the tensor itself
            call = ctx.parent(parent)
            if parent.attr.value in _INDEXED_METHODS and isinstance(call, cst.Call) and call.func is parent:
                # ``res.scatter_(1, x.view(-1, 1), 1)``: the index (and source) must be on its device
                for arg in call.args:
                    found = self.carrier(arg.value, call) if arg.keyword is None else None
                    if found is not None:
                        return Meeting(found)
            return None
        if isinstance(parent, cst.Subscript) and parent.value is expr:
            # ``values[mask] = target_net(s).max(1)[0]``: indexed assignment of a tensor on the model's device
            target = ctx.parent(parent)
            assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign) and not self._basic_index(parent):
                moved = self._moved_output(assign.value)
                if moved is not None:
                    return Meeting(moved[0], moved[0], device=moved[1])
                found = self.carrier(assign.value, assign)
                return Meeting(found) if found is not None else None
            return None
        if isinstance(parent, cst.Element):
            container = ctx.parent(parent)
            arg = ctx.parent(container) if isinstance(container, (cst.List, cst.Tuple)) else None
            call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and self._combining_function(call):
                for el in container.elements:
                    if el is not parent:
                        found = self.carrier(el.value, call)
                        if found is not None:
                            return Meeting(found)
                return None
            if isinstance(container, (cst.List, cst.Tuple)):
                return self.reach(container, names)  # ``self.lstm(x, (h0, c0))``, ``return (h, c)``
            return None
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if not isinstance(call, cst.Call):
                return None
            if self.host_argument(call, parent):
                return None  # ``self.ctc_loss(log_probs, targets, ...)``: CTC takes its targets on the CPU
            if self._loss_call(call):  # training code: ``criterion(netD(x), real_labels)``
                for arg in call.args:
                    moved = self._moved_output(arg.value) if arg is not parent else None
                    if moved is not None:
                        return Meeting(moved[0], moved[0], device=moved[1])
            if self._combining_function(call):
                for arg in call.args:
                    if arg is not parent and arg.keyword is None:
                        found = self.carrier(arg.value, call)
                        if found is not None:
                            return Meeting(found)
                return self.reach(call, names)  # combined with host values only: the result is on the CPU
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _COMBINING_METHODS:
                found = self.carrier(func.value, call)
                return Meeting(found) if found is not None else None
            moved = self.moved_model(func)
            if moved is not None:  # training code: ``out = model(x, h0)`` with ``model = Net().to(device)``
                if _lengths(expr, parent):
                    return None  # ``model(text, lengths)``: pack_padded_sequence takes the lengths on the CPU
                return Meeting(moved[0], moved[0], device=moved[1])
            module = self.submodule(func)
            if module is not None:
                for arg in call.args:
                    if arg is not parent:
                        found = self.carrier(arg.value, call)
                        if found is not None:
                            return Meeting(found, module)
                return Meeting(module, module)
            return self._into_callee(call, parent, names)
        return None

    def host_argument(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether ``arg`` is an argument that ``call`` takes on the CPU whatever device its
        other tensors are on: the targets and the lengths of a CTC loss (``F.ctc_loss(log_probs,
        targets, input_lengths, target_lengths)``, or an ``nn.CTCLoss`` built inline, bound to
        a local name or kept by the class as ``self.<attr>``). The native kernel moves CPU
        targets to the log-probs' device and cuDNN's kernel wants them on the CPU, so a
        ``torch.arange(1, n + 1)`` target meets no device there."""
        table = self._host_table(call.func)
        if table is None or arg.star:
            return False
        params, host = table
        if arg.keyword is not None:
            return arg.keyword.value in host
        positional = [a for a in call.args if a.keyword is None and not a.star]
        index = next((i for i, a in enumerate(positional) if a is arg), None)
        return index is not None and index < len(params) and params[index] in host

    def _host_table(self, func: cst.BaseExpression) -> tuple | None:
        """``_HOST_ARGUMENTS``' entry for the function or the ``torch.nn`` layer ``func`` calls
        (every binding of a name or a ``self`` attribute building the same layer), else None."""
        found = _HOST_ARGUMENTS.get(self.model.qualified_name(func) or "")
        if found is not None:
            return found
        if isinstance(func, cst.Call):
            built = constructions(self.model, func)
        elif isinstance(func, cst.Name):
            bindings = self.model.reaching(func.value, func)
            if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
                return None
            built = [c for b in bindings for c in constructions(self.model, b.value)]
        else:
            scope = self.model.scope_of(func)
            self_name = scope.self_name if scope is not None else None
            if not (self_name is not None and self.info is not None and isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Name) and func.value.value == self_name):
                return None
            built = [c for b in self_attr_bindings(self.model, self.info, func.attr.value) if b.value is not None
                     for c in constructions(self.model, b.value)]
        names = {c.name if c.kind == "nn" else None for c in built}
        return _HOST_ARGUMENT_LAYERS.get(names.pop()) if len(names) == 1 else None

    def _basic_index(self, subscript: cst.Subscript) -> bool:
        """``t[i, j]``, ``t[0]``, ``t[:, 1:]``: integers and slices (``integer_index``), whose
        assignment is select + ``copy_`` and so copies across devices; not a mask or an index
        tensor (``t[mask] = v`` is ``index_put_``, which wants both on one device)."""
        for element in subscript.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            if not integer_index(self.model, index.value):
                return False
        return True

    def moved_model(self, func: cst.BaseExpression) -> tuple[str, str] | None:
        """``(name, device)`` when ``func`` (``model``, ``model.forward``) names a module every
        binding of which builds one (``nn.LSTM(...)``, ``Net(...)``) and the code moves it to a
        device (``Net().to(device)``, ``model = model.cuda()``, ``model.to(device)``), with that
        device as written (``"cuda"`` for ``.cuda()``); else None."""
        if isinstance(func, cst.Attribute) and _forward_like(func.attr.value):
            func = func.value  # ``model.forward``, ``model.discriminator_forward``
        if isinstance(func, cst.Attribute):
            return self._moved_attribute(func)
        if not isinstance(func, cst.Name):
            return None
        built = self._moved_binding(func)
        return built if built is not None else self.fed_device(func)

    def _moved_binding(self, func: cst.Name) -> tuple[str, str] | None:
        """``moved_model`` through the bindings of ``func``: each builds a module the code moves."""
        name = func.value
        pending, seen = list(self.model.reaching(name, func)), set()
        if not pending:
            return None
        order = self.model.order
        devices = []  # per binding reaching the call: the device it was moved to, or None
        while pending:
            b = pending.pop()
            if id(b) in seen:
                continue
            seen.add(id(b))
            if b.kind not in ("assign", "ann") or b.value is None:
                return None
            value = b.value
            moved = _moved_to(self.ctx, value)
            inner = _unmoved(value)
            if isinstance(inner, cst.Name) and inner.value == name:  # ``model = model.to(device)``
                if moved is not None:
                    devices.append(moved)
                else:
                    pending.extend(self.model.reaching(name, b.node))
                continue
            built = constructions(self.model, value)
            if not built or any(c.kind not in ("nn", "class") for c in built):
                return None
            if moved is None:  # ``model.to(device)`` as a statement between the binding and the call
                for site in self.model.calls:
                    f = site.node.func
                    if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == name \
                            and isinstance(self.ctx.parent(site.node), cst.Expr) \
                            and self.model.scope_of(site.node) is self.model.scope_of(b.node) \
                            and order.get(b.node, 0) < order.get(site.node, 0) < order.get(func, 0):
                        moved = moved or _moved_to(self.ctx, site.node)
            devices.append(moved)
        return (name, devices[0]) if devices and all(d is not None for d in devices) else None

    def _moved_attribute(self, func: cst.Attribute) -> tuple[str, str] | None:
        """``(self.<attr>, device)`` when every ``self.<attr> = ...`` of the class builds a module
        moved to one device (``self.q_func = Model.Net(...).to(device)`` in ``__init__``)."""
        scope = self.model.scope_of(func)
        self_name = scope.self_name if scope is not None else None
        if self.info is None or self_name is None or not isinstance(func.value, cst.Name) \
                or func.value.value != self_name:
            return None
        bindings = self_attr_bindings(self.model, self.info, func.attr.value)
        devices = set()
        for b in bindings:
            built = constructions(self.model, b.value) if b.value is not None else []
            moved = _moved_to(self.ctx, b.value) if built else None
            if moved is None or any(c.kind not in ("nn", "class") for c in built):
                return None
            devices.add(moved)
        return (f"{self_name}.{func.attr.value}", devices.pop()) if len(devices) == 1 else None

    def fed_device(self, func: cst.Name) -> tuple[str, str] | None:
        """``(name, device)`` for a model-like name (``model``, ``netD``: a parameter, say) that the
        code around ``func`` (its function, or the module) calls, or calls a forward of
        (``model.discriminator_forward(x)``), while the same bindings of the name reach that call
        (not a model the name held before or after a rebinding), with an input it moved to a device
        (``model(x.to(device))``, or ``x`` assigned only ``features.to(device)``): the model must
        be on that device, or that call would fail."""
        name = func.value
        if not looks_like_model_name(name):
            return None
        scope = self.model.scope_of(func)
        held = {id(b) for b in self.model.reaching(name, func)}  # the same model: the same bindings reach the call
        if not held:
            return None
        for site in self.model.calls:
            if site.scope is not scope:
                continue
            called = site.node.func
            if isinstance(called, cst.Attribute) and _forward_like(called.attr.value):
                called = called.value
            if not (isinstance(called, cst.Name) and called.value == name) \
                    or {id(b) for b in self.model.reaching(name, called)} != held:
                continue
            for arg in site.node.args:
                if arg.keyword is None and not arg.star:
                    device = self._moved_input(arg.value)
                    if device is not None:
                        return name, device
        return None

    def caller_device(self, function: cst.CSTNode, param: str, depth: int = 0) -> tuple[str, str] | None:
        """``(device, how)`` when some same-file call of ``function`` passes its parameter
        ``param`` a tensor on a device: one moved there (``x.to(device)``, ``x.cuda()``), one
        made there (``torch.tensor([[i]], device=device)``), or, through indexing and
        device-keeping methods (``X[:, i]``), a parameter of the calling function that one of
        its own callers passes such a tensor (d2l's ``one_hot`` <- ``to_onehot`` <-
        ``predict_rnn``); ``how`` is the call as written. A call on a device is enough: there the
        function meets that device."""
        if not isinstance(function, cst.FunctionDef) or depth > 3:
            return None
        for site in self.ctx.semantic.graph.callers(function):
            passed = passed_argument(self.model, site, function, param)
            if passed is None:
                continue
            written = self.ctx.module.code_for_node(site.node)
            device = self._moved_input(passed) or _made_on(self.ctx, passed)
            if device is not None:
                return device, written
            root = passed
            while True:
                if isinstance(root, cst.Subscript):
                    root = root.value
                elif isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) \
                        and not _moves(root.func.attr.value, root):
                    root = root.func.value
                else:
                    break
            if not isinstance(root, cst.Name):
                continue
            bindings = self.model.reaching(root.value, root)
            if len(bindings) != 1 or bindings[0].kind != "param":
                continue
            caller = self.model.scope_of(bindings[0].node)
            found = self.caller_device(caller.node if caller is not None else None, root.value, depth + 1)
            if found is not None:
                return found
        return None

    def _moved_input(self, expr: cst.BaseExpression) -> str | None:
        """The device ``expr`` was moved to (``x.to(device)``, ``x.cuda()``, or a name every binding
        reaching it assigns such a move), else None."""
        moved = _moved_to(self.ctx, expr) if isinstance(expr, cst.Call) else None
        if moved is not None or not isinstance(expr, cst.Name):
            return moved
        bindings = self.model.reaching(expr.value, expr)
        devices = {_moved_to(self.ctx, b.value) if b.kind == "assign" and isinstance(b.value, cst.Call) else None
                   for b in bindings}
        return devices.pop() if len(devices) == 1 and None not in devices else None

    def _loss_call(self, call: cst.Call) -> bool:
        """A loss: ``F.cross_entropy(...)``-like, or a name bound to a ``torch.nn`` loss
        (``criterion = nn.BCELoss()``)."""
        if _functional_loss(self.model.qualified_name(call.func) or ""):
            return True
        if isinstance(call.func, cst.Name):
            # ``criterion = nn.BCELoss()``; ``loss_fn = F.binary_cross_entropy_with_logits``, also
            # as the fallback of a ``loss_fn=None`` parameter
            bindings = self.model.reaching(call.func.value, call.func)
            losses = [b for b in bindings if b.kind == "assign" and b.value is not None and (any(
                c.kind == "nn" and c.name.endswith("Loss") for c in constructions(self.model, b.value))
                or _functional_loss(self.model.qualified_name(b.value) or ""))]
            return bool(losses) and all(b in losses or b.kind == "param" and looks_like_criterion_name(call.func.value)
                                        for b in bindings)
        return False

    def _moved_output(self, expr: cst.BaseExpression, depth: int = 0) -> tuple[str, str] | None:
        """``(model, device)`` when ``expr`` is what a moved model returns (``netD(x)``,
        ``output`` assigned one, ``netD(x).view(-1)``)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and not _moves(expr.func.attr.value, expr) and not _forward_like(expr.func.attr.value):
            found = self._moved_attribute(expr.func)  # ``self.target_net(x).detach()``
            if found is not None:
                return found
            expr = expr.func.value
        if isinstance(expr, cst.Subscript):
            return self._moved_output(expr.value, depth)
        if isinstance(expr, cst.Call):
            return self.moved_model(expr.func)
        if isinstance(expr, cst.Name) and depth < 3:
            bindings = self.model.reaching(expr.value, expr)
            if bindings and all(b.kind in ("assign", "unpack") and isinstance(b.node, cst.Assign) for b in bindings):
                found = [self._moved_output(b.node.value, depth + 1) for b in bindings]
                return found[0] if all(found) else None
        return None

    def input_carrier(self, function: cst.CSTNode) -> str | None:
        """The first parameter of ``function`` (``self`` left out) holding a tensor on the model's
        device (``idx`` of ``forward(self, idx)``), else None."""
        if not isinstance(function, cst.FunctionDef):
            return None
        for param in [*function.params.posonly_params, *function.params.params]:
            if self._param_carries(param):
                return param.name.value
        return None

    def submodule(self, func: cst.BaseExpression) -> str | None:
        """``self``, ``self.<attr>`` or ``self.<attr>.<name>`` (as written) where the attribute
        holds a module the class builds (``self.lstm = nn.LSTM(...)``, ``self.transformer =
        nn.ModuleDict(...)`` then ``self.transformer.wpe``): calling it runs on the model's
        parameters."""
        scope = self.model.scope_of(func)
        self_name = scope.self_name if scope is not None else None
        if self_name is None or self.info is None:
            return None
        if isinstance(func, cst.Name):
            return self_name if func.value == self_name else None
        written = dotted_name(func)
        while isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
            func = func.value
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name):
            return None
        bindings = self_attr_bindings(self.model, self.info, func.attr.value)
        built = [c for b in bindings if b.value is not None for c in constructions(self.model, b.value)]
        if built and all(c.kind in ("nn", "class") for c in built):
            return written
        return None

    def _combining_function(self, call: cst.Call) -> bool:
        name = self.model.qualified_name(call.func) or ""
        return name.startswith("torch.") and name.rsplit(".", 1)[-1] in _COMBINING and name.count(".") <= 2

    def carrier(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> str | None:
        """The name (or ``self.<attr>``) through which ``expr`` holds a tensor on the model's
        device, else None."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Name):
            return expr.value if self._name_carries(expr, depth) else None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in _HOST_ATTRS:
                return None
            dotted = dotted_name(expr)
            if dotted is not None and self._is_parameter_attr(dotted):
                return dotted
            if expr.attr.value in _TENSOR_ATTRS:
                return self.carrier(expr.value, at, depth + 1)
            return None
        if isinstance(expr, cst.Subscript):
            return self.carrier(expr.value, at, depth + 1)
        if isinstance(expr, (cst.Tuple, cst.List)):  # ``q, k = self.q(x), self.k(x)``
            for element in expr.elements:
                found = self.carrier(element.value, at, depth + 1)
                if found is not None:
                    return found
            return None
        if isinstance(expr, (cst.UnaryOperation,)):
            return self.carrier(expr.expression, at, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self.carrier(expr.left, at, depth + 1) or self.carrier(expr.right, at, depth + 1)
        if isinstance(expr, cst.Call):
            return self._call_carrier(expr, at, depth)
        return None

    def _call_carrier(self, call: cst.Call, at: cst.CSTNode, depth: int) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if _moves(func.attr.value, call):
                return None
            self_name = self.model.scope_of(call).self_name
            if isinstance(receiver, cst.Name) and receiver.value == self_name:
                # a layer's output: its first tensor argument names it
                for arg in call.args:
                    found = self.carrier(arg.value, at, depth + 1)
                    if found is not None:
                        return found
                return None
            name = self.model.qualified_name(func) or ""
            if not name.startswith("torch."):
                return self.carrier(receiver, at, depth + 1)
        name = self.model.qualified_name(func) or ""
        if tensor_factory(name) is not None:
            # ``torch.zeros(n, device=x.device)``: made where ``x`` is
            device = keyword_arg(call, "device")
            value = device.value if device is not None else None
            if isinstance(value, cst.Attribute) and value.attr.value == "device":
                return self.carrier(value.value, at, depth + 1)
            return None
        if name in _HOST_FUNCTIONS or not name.startswith("torch."):
            return None
        for arg in call.args:
            if arg.keyword is None:
                found = self.carrier(arg.value, at, depth + 1)
                if found is not None:
                    return found
        return None

    def _name_carries(self, node: cst.Name, depth: int) -> bool:
        found = self.model.reaching(node.value, node)
        for b in found:
            if b.node in self.ctx.ancestors(node):
                # ``s = s.masked_fill(...)``: the read sees what reached the statement
                found = self.model.reaching(node.value, b.node)
                break
        if not found:
            return False
        found, seen = list(found), set()
        while found:
            b = found.pop()
            if id(b) in seen:
                continue
            seen.add(id(b))
            if b.kind == "param" and b.node in self._bound:
                passed = self._bound[b.node]
                if passed is None or self.carrier(passed, passed, depth + 1) is None:
                    return False
            elif b.kind == "param":
                if not self._param_carries(b.node):
                    return False
            elif b.kind == "aug":
                # ``base *= factor``: a tensor only if what reached it was one
                before = self.model.reaching(node.value, b.node)
                if not before:
                    return False
                found.extend(before)
            elif b.kind == "for" and isinstance(b.node, cst.For):
                # ``for X in inputs``: each item is where the sequence is
                if self.carrier(b.node.iter, b.node, depth + 1) is None:
                    return False
            elif b.kind in ("assign", "ann", "unpack") and isinstance(b.node, (cst.Assign, cst.AnnAssign)) \
                    and b.node.value is not None:
                # ``q, k, v = self.qkv(x).chunk(3)``: each part is where the whole is
                if self.carrier(b.node.value, b.node, depth + 1) is None:
                    return False
            else:
                return False
        return True

    def _param_carries(self, param: cst.Param) -> bool:
        """A parameter that holds a tensor on the model's device: no literal default, not
        ``self``, not a host value (named for a size, annotated ``int``, used as a factory's
        size, given host values at every call)."""
        return not (param.default is not None or _SIZE_NAME.match(param.name.value) or
                    param.name.value == self.model.scope_of(param).self_name or _host_annotation(param)
                    or self._number_argument(param) or self._host_built_at_every_call(param))

    def _number_argument(self, param: cst.Param) -> bool:
        """The function passes ``param`` (or arithmetic on it) as a size or bound of a tensor
        factory (``torch.randint(s, e - n, ...)``, ``torch.arange(n)``): it holds a Python number."""
        function = self.model.scope_of(param).node
        for read in _names_in(function, param.name.value):
            value = read
            while isinstance(self.ctx.parent(value), (cst.BinaryOperation, cst.UnaryOperation)):
                value = self.ctx.parent(value)
            arg = self.ctx.parent(value)
            call = self.ctx.parent(arg) if isinstance(arg, cst.Arg) and arg.value is value and arg.keyword is None \
                else None
            if isinstance(call, cst.Call) and tensor_factory(self.model.qualified_name(call.func)) in _NUMBER_ARGUMENTS:
                return True
        return False

    def _host_built_at_every_call(self, param: cst.Param) -> bool:
        """Whether every same-file call of the helper ``param`` belongs to passes a tensor built on
        the host (``self._pad(torch.LongTensor(words))``) or a Python number (``0.65``,
        ``x.shape[:2]``): then the parameter is on the CPU too."""
        function = self.model.scope_of(param).node
        sites = self.ctx.semantic.graph.callers(function)
        return bool(sites) and all(
            self._host_value(passed_argument(self.model, site, function, param.name.value)) for site in sites)

    def _host_value(self, expr: cst.BaseExpression | None, depth: int = 0) -> bool:
        """A host-built tensor, a number or string literal, ``x.shape`` / ``x.size()`` (or part
        of one), a tuple of those, or a local every binding the read sees assigns one of those
        (``width = out.shape[-1]`` before ``self.sample_sizes(width)``; deep-daze)."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return self._host_value(expr.expression, depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return all(self._host_value(e.value, depth) for e in expr.elements)
        if isinstance(expr, cst.Subscript):
            return self._host_value(expr.value, depth)
        if isinstance(expr, cst.Name) and depth < _MAX_HOST_DEPTH:
            bindings = self.model.reaching(expr.value, expr)
            return bool(bindings) and all(b.kind == "assign" and b.value is not None
                                          and self._host_value(b.value, depth + 1) for b in bindings)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _HOST_ATTRS
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
            return True
        return self._host_built(expr)

    def _host_built(self, expr: cst.BaseExpression | None) -> bool:
        """A device-less factory call: a legacy ``torch.LongTensor(...)``, ``torch.tensor`` of a
        Python list, or ``torch.zeros(...)``-like (``torch.tensor(x)`` of a tensor keeps x's device)."""
        if not isinstance(expr, cst.Call):
            return False
        factory = tensor_factory(self.model.qualified_name(expr.func))
        if factory is None or keyword_arg(expr, "device") is not None or has_star_kwargs(expr):
            return False
        first = expr.args[0].value if expr.args else None
        return factory not in ("tensor", "as_tensor") or isinstance(first, (cst.List, cst.Tuple, cst.ListComp))

    def _is_parameter_attr(self, dotted: str) -> bool:
        """``self.w`` where every ``self.w = ...`` of the class is an ``nn.Parameter(...)``."""
        head, _, attr = dotted.partition(".")
        if not attr or "." in attr or self.info is None:
            return False
        bindings = self_attr_bindings(self.model, self.info, attr)
        return bool(bindings) and all(is_parameter(self.model, b.value) for b in bindings)


def integer_index(model: "SemanticModel", value: cst.BaseExpression) -> bool:
    """Whether ``value``, written as a subscript index, is one integer, so that ``t[value] = v``
    selects and copies (``select`` + ``copy_``, which copies across devices) instead of an
    ``index_put_`` (which wants ``t``, the index and ``v`` on one device): an integer literal, or
    a name every binding reaching it gives one integer: the loop variable of ``for i in
    range(...)``, of ``for i in torch.arange(...)`` (each element is a 0-dim integer tensor,
    which PyTorch's indexing turns into a plain integer: ``applySelect(..., t.item())``), or
    the counter of ``for i, x in enumerate(...)``."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if isinstance(value, cst.Integer):
        return True
    if not isinstance(value, cst.Name):
        return False
    bindings = model.reaching(value.value, value)
    return bool(bindings) and all(b.kind == "for" and isinstance(b.node, cst.For)
                                  and _counts(model, b.node, value.value) for b in bindings)


def _counts(model: "SemanticModel", loop: cst.For, name: str) -> bool:
    """``name`` is bound by ``loop`` to one integer per iteration (``integer_index``)."""
    call = loop.iter
    if not isinstance(call, cst.Call):
        return False
    called = model.qualified_name(call.func) or dotted_name(call.func)
    target = loop.target
    if isinstance(target, cst.Name):
        return target.value == name and called in ("range", "torch.arange")
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements and called == "enumerate":
        first = target.elements[0].value
        return isinstance(first, cst.Name) and first.value == name
    return False


def _made_on(ctx: "FileContext", expr: cst.BaseExpression) -> str | None:
    """The device a tensor factory call is given, as written (``torch.tensor(v, device=d)`` -> ``d``)."""
    if not isinstance(expr, cst.Call):
        return None
    device = keyword_arg(expr, "device")
    if device is None or tensor_factory(ctx.semantic.model.qualified_name(expr.func)) is None:
        return None
    return ctx.module.code_for_node(device.value)


def _lengths(expr: cst.BaseExpression, arg: cst.Arg) -> bool:
    """A tensor handed to a model as sequence lengths: a name, or a keyword, for a size or a
    length (``length``, ``text_lengths``, ``lengths=``): the model packs its input with them
    (``pack_padded_sequence``), which wants them on the CPU."""
    names = [arg.keyword.value] if arg.keyword is not None else []
    if isinstance(expr, cst.Name):
        names.append(expr.value)
    return any(_SIZE_NAME.match(name) or name.endswith("lengths") or name.endswith("lens") for name in names)


def _forward_like(method: str) -> bool:
    """``forward`` or a method named for one (``generator_forward``, ``forward_features``)."""
    return method == "forward" or method.endswith("_forward") or method.startswith("forward_")


def _functional_loss(name: str) -> bool:
    """``torch.nn.functional.cross_entropy``, any ``torch.nn.functional.*loss*``."""
    return name.startswith("torch.nn.functional.") and ("loss" in name or name.endswith(_LOSS_FUNCTIONS))


def _dtype_only(call: cst.Call) -> bool:
    """``.to(torch.float32)`` / ``.to(x.dtype)`` / ``.to(dtype=...)``: a dtype change, no move."""
    if not call.args:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value != "dtype":
                return False
            continue
        dotted = dotted_name(arg.value) or ""
        if not (dotted.endswith(".dtype") or re.match(r"^torch\.(u?int\d*|float\d*|bfloat16|half|double|long|bool|complex\d*)$", dotted)):
            return False
    return True


def _moves(method: str, call: cst.Call) -> bool:
    """``x.<method>(...)`` gives a tensor on another device, or no tensor: ``.to(device)``,
    ``.type(y.type())`` (the type string names the device), ``.cuda()``, ``.tolist()``; not a
    dtype-only ``.to(torch.float16)`` / ``.type(torch.long)``."""
    return method in _MOVING and not (method in ("to", "type") and call.args and _dtype_only(call))


def _host_annotation(param: cst.Param) -> bool:
    ann = param.annotation
    return ann is not None and _host_type(ann.annotation)


def _host_type(expr: cst.BaseExpression) -> bool:
    """``int``, ``str``, ``torch.Size``, ``Tuple[int, int]``, ``Optional[List[float]]``, ``tuple[int, ...]``."""
    if isinstance(expr, cst.Subscript):
        if dotted_name(expr.value) not in _HOST_CONTAINERS:
            return False
        items = [e.slice.value for e in expr.slice if isinstance(e.slice, cst.Index)]
        return bool(items) and all(isinstance(i, cst.Ellipsis) or _host_type(i) for i in items)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):  # int | None
        return _host_type(expr.left) and _host_type(expr.right)
    return dotted_name(expr) in _HOST_TYPES or isinstance(expr, cst.Name) and expr.value == "None"


def _moved_to(ctx: "FileContext", value: cst.BaseExpression) -> str | None:
    """The device ``value`` moves a module to, as written: ``x.to(device)`` -> ``device``,
    ``x.cuda()`` -> ``"cuda"`` (through a chain: ``Net().to(device).train()``); else None."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        if method == "cuda":
            return '"cuda"'
        if method == "to" and value.args and not _dtype_only(value):
            first = value.args[0]
            return ctx.module.code_for_node(first.value)
        value = value.func.value
    return None


def _unmoved(value: cst.BaseExpression) -> cst.BaseExpression:
    """``model`` of ``model.to(device).train()``: the receiver under a chain of method calls."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        value = value.func.value
    return value


def _moves_name(node: cst.CSTNode, name: str) -> bool:
    """``node`` moves ``name`` to a device (``h = h.to(device)``, ``h = h.cuda()``)."""
    for call in iter_nodes(node):
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and _moves(call.func.attr.value, call):
            root = call.func.value
            while isinstance(root, (cst.Call, cst.Attribute, cst.Subscript)):
                root = root.func if isinstance(root, cst.Call) else root.value
            if isinstance(root, cst.Name) and root.value == name:
                return True
    return False


def _parameter_of(call: cst.Call, arg: cst.Arg, callee: cst.FunctionDef, bound: bool) -> str | None:
    """The parameter of ``callee`` that ``arg`` of ``call`` binds (``bound``: ``self``
    skipped), None through ``*args``/``**kwargs``."""
    if arg.star:
        return None
    params = [*callee.params.posonly_params, *callee.params.params]
    if bound:
        params = params[1:]
    names = [p.name.value for p in [*params, *callee.params.kwonly_params]]
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in names else None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:positional.index(arg)]):
        return None
    index = positional.index(arg)
    return params[index].name.value if index < len(params) else None


def _names_in(root: cst.CSTNode, name: str) -> list[cst.Name]:
    return [n for n in iter_nodes(root) if isinstance(n, cst.Name) and n.value == name]


def is_store(ctx: "FileContext", node: cst.Name) -> bool:
    """Whether ``node`` is the name an assignment stores to (``name = ...``, ``name += ...``,
    ``name: T = ...``), not a read."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        return True
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node