"""Activations and what reaches a loss: what a tensor is the output of (an activation, a
model's forward, an element of what a forward or helper returns), what a model object holds
(an ``nn.Sequential`` ending in an activation, however it was built; a class's instance; a
parameter, across the project), and which loss a loss call computes.

A tensor's *sources* (``Source``) are what it may come out of:

* ``act``: an activation's output (``softmax``/``log_softmax``/``sigmoid``), applied right there
  (``F.softmax(h)``, ``h.softmax(1)``, ``nn.Softmax(1)(h)``, ``self.act(h)``), or as the last
  layer of an ``nn.Sequential`` (a literal one, ``nn.Sequential(*layers)`` of a list built by
  appending, one filled with ``add_module``/``append``, an ``OrderedDict`` of layers), or as
  what a same-file helper or ``forward`` returns on every path;
* ``cls``: the output of an instance of a project class (its ``forward``, which may be in
  another file: the project pass reads each class's ``ending``), ``element`` the index taken
  of what it returns (``logits, probs = model(x)``, ``model(x)[1]``);
* ``arg``: the output of whatever a parameter of a project function or constructor holds
  (``def train(model, ...)``, ``Trainer.__init__(self, model)`` kept as ``self.model``) when
  no caller in the file says: the project pass asks the files calling it (``calls_made``).

Through names, shape-only methods (``.view``, ``.squeeze``, ``.to``...), unpacking and
subscripts, ``model.forward(x)``, ``self(x)`` in a module's methods, parameters (every caller in
the file: each is a path that runs), ``.to(device)``/``nn.DataParallel(...)`` of a model and
functions building one (``model = build_model()``; a ``return`` in a branch the call's literal
argument rules out, ``build("training")`` past ``if mode == "inference":``, does not count:
``semantic.branches.ruled_out``).

Library models: a torchvision classifier (``library_classifier``: ``resnet18``, ``vgg16``...) gives
logits, its own Linear head's, unless the code replaces the head where the model is read
(``model.fc = nn.Linear(n, 2)``: that layer's; ``model.classifier[6] = nn.Sequential(...,
nn.LogSoftmax(1))``: log-probabilities; ``nn.Identity()`` or layers added in place: unknown).
Buffers: a new tensor of zeros filled element by element (``outputs[t] = out`` in a decoding
loop; ``element_stores``) is what every value stored into it is. Logits stay logits with a number
or an ``nn.Parameter`` bias added, scaled by a number, and as element 0 of
``pack_padded_sequence``.

A local name bound differently on different paths is the output of something only when every
binding agrees (``if flag: p = F.softmax(h) else: p = h`` is neither); a model may be any of the
models a name or parameter is given (each is one configuration that runs).

* ``Outputs(ctx)``: ``sources(expr)`` (what a tensor comes out of), ``held(expr)`` (what
  calling the module ``expr`` holds gives), ``ending(function)`` (what it returns on every
  path: a ``Source`` or a tuple of them), ``loss_of(call)`` (what a loss call wants as input,
  or the parameter its loss comes from), ``calls_made()`` (the arguments this file passes to
  project functions and constructors, for the project pass); ``outputs_of(expr)`` (the calls
  a tensor is the output of: the same value wherever it is read), ``model_object(call)``
  (which model object a call runs), ``losses_given(expr)`` (the losses the same value or model
  output is given to in the file), ``callers_binding(call)``/``for_caller(function, site)``
  (a loss handed in by callers passing different losses: the same questions per caller).
* ``ProjectOutputs(project, code)``: the project pass's view: the activations a source stands
  for across files (endings of classes, arguments passed from other files).
* ``values_of``/``single_value``/``activation_of``/``activation_call``/``returns_activation``:
  the simple questions over one file; ``probabilities_from``: the softmax or sigmoid whose
  output a tensor is value for value (not clamped, nothing added), for what is done to it
  next (TL026: its log).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterator, Union

import libcst as cst

from torchlint.libraries import is_library, torch_nn_class
from torchlint.semantic.branches import ruled_out
from torchlint.semantic.callgraph import bound_argument
from torchlint.semantic.dataflow import single_value, values_of
from torchlint.semantic.index import index_name
from torchlint.semantic.modules import built_by, class_key, is_parameter, self_attr_bindings
from torchlint.torch_api import (activation_function, activation_layer, activation_method, expr_key, keyword_arg,
                                 logits_layer, loss_wants, strip_self_returning)
from torchlint.tree import iter_nodes, unpack_targets

if TYPE_CHECKING:
    from torchlint.context import FileContext
    from torchlint.semantic.model import Binding, CallSite, ClassInfo, SemanticModel

_MAX_DEPTH = 32
# Tensor methods and functions whose output is the input, reshaped or moved: the
# probabilities stay probabilities.
SHAPE_METHODS = frozenset({"view", "reshape", "view_as", "reshape_as", "squeeze", "unsqueeze", "flatten", "contiguous",
                           "permute", "transpose", "t", "float", "double", "half", "to", "cuda", "cpu", "type",
                           "clamp", "clip", "squeeze_", "unsqueeze_", "clamp_", "movedim"})
SHAPE_FUNCTIONS = frozenset({"torch.flatten", "torch.squeeze", "torch.unsqueeze", "torch.reshape", "torch.transpose",
                             "torch.permute", "torch.clamp", "torch.clip", "torch.movedim"})
# Wrappers whose forward is the wrapped module's.
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel", "compile"})
_CONTAINER_FILLERS = ("add_module", "append")
# What an ``act`` source names besides an activation: the last operation that gives the tensor
# its meaning. LOGITS: the raw output of a Linear/conv layer (no activation after it);
# ONE_HOT: ``F.one_hot``'s integer output, ONE_HOT_FLOAT: the same cast to floats;
# INDICES: class indices (``argmax``, the indices ``max(x, dim)`` returns, ``.long()``),
# INDICES_FLOAT: the same cast to floats.
LOGITS, ONE_HOT, ONE_HOT_FLOAT = "logits", "one_hot", "one_hot_float"
INDICES, INDICES_FLOAT = "indices", "indices_float"
NOT_ACTIVATIONS = frozenset({LOGITS, ONE_HOT, ONE_HOT_FLOAT, INDICES, INDICES_FLOAT})
_AS_FLOAT = {ONE_HOT: ONE_HOT_FLOAT, INDICES: INDICES_FLOAT}
_FLOAT_CASTS = frozenset({"float", "double", "half", "bfloat16"})
_INTEGER_CASTS = frozenset({"long", "int"})
_MAX_FUNCTIONS = frozenset({"torch.max", "torch.topk"})
# Functions packing a padded batch: element 0 of what they return (``.data``) is the values packed.
_PACKING = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})
# Functions joining tensors: the result is what the tensors are.
_JOINS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate"})
# Methods that give the same values (reshaped, moved, detached, as numpy or Python numbers).
_SAME_VALUE_METHODS = SHAPE_METHODS | {"detach", "numpy", "item", "tolist", "clone", "detach_"}
_LIST_FILLERS = ("append", "extend")
# torchvision's classification models (a factory, ``resnet18``, or the class, ``ResNet``): the
# attribute holding the last layer, an nn.Linear, so that the model's output is logits, and,
# where that attribute is an nn.Sequential, how its last layer is reached (``[6]``, ``.head``).
# Not inception_v3/googlenet (a tuple in training mode), squeezenet (ends in ReLU and pooling),
# nor detection or segmentation models (dicts).
_TORCHVISION_HEADS = (
    (re.compile(r"(resnet\d+|resnext\d+_\w+|wide_resnet\d+_\d+|regnet_[xy]_\w+|shufflenet_v2_x\d_\d|r3d_18|mc3_18|"
                r"r2plus1d_18|ResNet|RegNet|ShuffleNetV2|VideoResNet)"), "fc", None),
    (re.compile(r"(vgg\d+(_bn)?|alexnet|VGG|AlexNet)"), "classifier", "[6]"),
    (re.compile(r"(densenet\d+|DenseNet)"), "classifier", None),
    (re.compile(r"(mobilenet_v2|efficientnet_b\d|efficientnet_v2_[sml]|mnasnet\d_\d+|MobileNetV2|EfficientNet|MNASNet)"),
     "classifier", "[1]"),
    (re.compile(r"(mobilenet_v3_(large|small)|MobileNetV3)"), "classifier", "[3]"),
    (re.compile(r"(convnext_(tiny|small|base|large)|ConvNeXt)"), "classifier", "[2]"),
    (re.compile(r"(swin_(v2_)?[tsb]|SwinTransformer)"), "head", None),
    (re.compile(r"(vit_[bhl]_\d+|VisionTransformer)"), "heads", ".head"),
)
# Calls adding layers to a model's head in place.
_HEAD_EDITS = frozenset({"add_module", "append", "extend", "insert", "register_module"})
_NOT_CLASSIFIERS = ("torchvision.models.detection.", "torchvision.models.segmentation.",
                    "torchvision.models.optical_flow.", "torchvision.models.quantization.")
# Calls giving a new tensor of zeros (or ones, or uninitialised values): a buffer a loop fills.
_FRESH_TENSORS = frozenset({"torch.zeros", "torch.empty", "torch.ones", "torch.full", "torch.zeros_like",
                            "torch.empty_like", "torch.ones_like", "torch.full_like", "torch.Tensor",
                            "torch.FloatTensor", "torch.cuda.FloatTensor"})
_FRESH_METHODS = frozenset({"new_zeros", "new_empty", "new_ones", "new_full"})


def library_classifier(qualified: str | None) -> tuple[str, str, str | None] | None:
    """(the model's name, the attribute holding its last layer, how the last layer is reached
    in it) for a torchvision classification model's factory or class
    (``torchvision.models.resnet18`` -> ``("resnet18", "fc", None)``, ``vgg16`` ->
    ``("vgg16", "classifier", "[6]")``): its output is that layer's, an nn.Linear's (logits),
    unless the code replaces it. None for anything else."""
    if not qualified or not qualified.startswith("torchvision.models.") or qualified.startswith(_NOT_CLASSIFIERS):
        return None
    name = qualified.rsplit(".", 1)[-1]
    for pattern, attr, last in _TORCHVISION_HEADS:
        if pattern.fullmatch(name):
            return name, attr, last
    return None


def element_stores(model: "SemanticModel", binding: "Binding") -> list[tuple[cst.Subscript, cst.BaseExpression]] | None:
    """The stores into the elements of what ``binding`` binds (``outputs[t] = out``,
    ``logits[:, :, i] = attention``, ``model.classifier[-1] = layer``): (target, value) for
    each assignment in the binding's scope, after it, whose subscripted name (or dotted
    path) the binding reaches. None where an element is also updated in place
    (``outputs[t] += out``) or stored through unpacking: what it holds cannot be told."""
    memo = model.memo("element_stores")
    scope_node = binding.scope.node
    table = memo.get(scope_node)
    if table is None:
        table = memo[scope_node] = _stores_in(model, scope_node)
    out = []
    for target, value, base in table.get(binding.key, ()):
        if base is None and model.order.get(target, -1) > binding.order:
            return None  # updated in place, or unpacked into
        if model.order.get(target, -1) > binding.order and binding in model.reaching(binding.key, base):
            out.append((target, value))
    return out


def _stores_in(model: "SemanticModel", root: cst.CSTNode) -> dict:
    """key -> [(Subscript target, value, the name or attribute subscripted)] of a scope's
    element stores (``value`` and the base None for an augmented or unpacked one)."""
    table: dict = {}
    for node in iter_nodes(root, into_scopes=False):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                target = t.target
                if isinstance(target, cst.Subscript):
                    key = expr_key(target.value)
                    if key is not None:
                        table.setdefault(key, []).append((target, node.value, target.value))
                elif isinstance(target, (cst.Tuple, cst.List)):
                    for leaf in unpack_targets(target):
                        if isinstance(leaf, cst.Subscript) and (key := expr_key(leaf.value)) is not None:
                            table.setdefault(key, []).append((leaf, None, None))
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Subscript):
            key = expr_key(node.target.value)
            if key is not None:
                table.setdefault(key, []).append((node.target, None, None))
    return table


@dataclass(frozen=True)
class Source:
    """What a tensor may come out of (see the module docstring). ``origin`` (not compared):
    how an ``act`` source was reached, for messages: ``""`` (an activation applied),
    ``"sequential"`` (an ``nn.Sequential``'s last layer) or ``"function NAME"`` (what a helper
    returns)."""

    kind: str  # "act" | "cls" | "arg"
    name: str  # the activation; the class's project name; the function's name in its file
    element: int | None = None  # cls/arg: the index taken of what the forward returns
    param: str | None = None  # arg: the parameter's name
    index: int | None = None  # arg: its position among the positional parameters (self left out)
    origin: str = ""

    def key(self) -> tuple:
        return self.kind, self.name, self.element, self.param, self.index

    def at(self, element: int | None) -> "Source":
        """The source of ``element`` of this output: an activation's output indexed is still
        one; a model's output indexed is that element of what its forward returns."""
        if element is None or self.kind == "act" or self.element is not None:
            return self
        return replace(self, element=element)

    def to_json(self) -> list:
        return [self.kind, self.name, self.element, self.param, self.index, self.origin]

    @classmethod
    def from_json(cls, data: list) -> "Source":
        return cls(*data)


# What a function returns on every path: one source, or a tuple of them (None: unknown).
Ending = Union[Source, tuple]


def ending_json(ending: Ending | None):
    if ending is None:
        return None
    if isinstance(ending, Source):
        return ["one", ending.to_json()]
    return ["tuple", [s.to_json() if s is not None else None for s in ending]]


def ending_from_json(data) -> Ending | None:
    if not data:
        return None
    if data[0] == "one":
        return Source.from_json(data[1])
    return tuple(Source.from_json(s) if s is not None else None for s in data[1])


def element_of(ending: Ending | None, element: int | None) -> Source | None:
    """The source of ``element`` (None: the whole value) of what returns ``ending``."""
    if ending is None:
        return None
    if isinstance(ending, Source):
        return ending if element is None or ending.kind == "act" else ending.at(element)
    if element is None or not -len(ending) <= element < len(ending):
        return None
    return ending[element]


def _unique(sources: list[Source]) -> Source | None:
    keys = {s.key() for s in sources}
    return sources[0] if len(keys) == 1 else None


def _int_index(node: cst.Subscript) -> int | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
    if negative:
        value = value.expression
    if isinstance(value, cst.Integer):
        return -int(value.value) if negative else int(value.value)
    return None


def unpacked_element(binding: "Binding") -> tuple[int, cst.BaseExpression] | None:
    """(position, value) of a name unpacked by ``a, b = value`` (one level, no star)."""
    node = binding.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    for i, element in enumerate(target.elements):
        if isinstance(element, cst.StarredElement):
            return None
        if isinstance(element.value, cst.Name) and element.value.value == binding.key:
            return i, node.value
    return None


def _params_of(function: cst.FunctionDef) -> list[cst.Param]:
    return [*function.params.posonly_params, *function.params.params]


class Outputs:
    """What tensors, models and losses are in one file (see the module docstring)."""

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx
        self.sem = ctx.semantic
        self.model: "SemanticModel" = ctx.semantic.model
        self._endings: dict[cst.CSTNode, Ending | None] = {}
        self._open: set[cst.CSTNode] = set()
        self._memo: dict[tuple, list] = {}
        # Answers that hold whatever was asked before (``_settled``): the memos keep for good only
        # an answer no guard cut short (a question asked while it is being answered, a chain too
        # deep, a function's returns already being read); the others (with the questions still
        # being answered) are ``_unsettled`` (key -> its table): kept while the question asked from
        # outside is answered, dropped before the next (``_ask``).
        self._asking = 0  # memoised questions being answered now
        self._cuts = 0  # times a guard cut an answer short, or one used an unsettled answer
        self._unsettled: dict = {}
        self._given: dict | None = None
        self._losses: dict[cst.Call, tuple | None] = {}
        self._calls_made: list | None = None
        self._only: tuple | None = None  # (function, call site): its parameters as that caller binds them
        self._self_names: frozenset[str] | None = None  # every name ``self`` goes by in the file

    def for_caller(self, function: cst.FunctionDef, site: "CallSite") -> "Outputs":
        """The same questions asked as if ``function`` were called only at ``site``: its
        parameters hold what that caller passes (``train(model, nn.NLLLoss())`` and
        ``train(model_conv, nn.CrossEntropyLoss())``: each caller's loss meets each caller's
        model, not the other's). Answers are kept apart from this one's."""
        sub = Outputs(self.ctx)
        sub._only = (function, site)
        return sub

    def callers_binding(self, call: cst.Call) -> list[tuple[cst.FunctionDef, "CallSite"]]:
        """(function, caller) for each caller in the file of the function whose parameter the
        loss ``call`` computes (``criterion(out, y)`` in ``def train(model, criterion)``) when
        those callers pass different losses (``loss_of`` then knows none): ask each
        ``for_caller`` which loss and which input meet."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        if type(func) is not cst.Name or self.loss_of(call) is not None:
            return []
        bindings = self.model.reaching(func.value, func)
        if len(bindings) != 1 or bindings[0].kind != "param" or not isinstance(bindings[0].scope.node, cst.FunctionDef):
            return []
        function = bindings[0].scope.node
        sites = list(self.sem.graph.callers(function))
        return [(function, site) for site in sites] if len(sites) > 1 else []

    @classmethod
    def of(cls, ctx: "FileContext") -> "Outputs":
        """The file's one ``Outputs``, shared by every rule that asks (TL009, TL022, TL023,
        TL026): what a tensor, model or loss is is answered once per file."""
        memo = ctx.semantic.model.memo("outputs")
        if "" not in memo:
            memo[""] = cls(ctx)
        return memo[""]

    # -- tensors --------------------------------------------------------------------------
    def sources(self, expr: cst.BaseExpression, element: int | None = None, depth: int = 0) -> list[Source]:
        """What the tensor ``expr`` may be the output of (empty: nothing known)."""
        return self._memoised(("sources", expr, element), self._sources, expr, element, depth)

    def _memoised(self, key: tuple, compute, *args, unknown: tuple = ()) -> list:
        """``compute(*args)`` (the last argument the depth), once per key; asked again while
        it is being computed (a cycle through parameters or helpers), or too deep:
        ``unknown`` (nothing)."""
        if not self._asking and self._unsettled:
            self._forget_unsettled()
        found = self._memo.get(key)
        if found is not None:
            if key in self._unsettled:
                self._cuts += 1
            return found
        if args[-1] > _MAX_DEPTH:
            self._cuts += 1
            return list(unknown)
        memo = self._memo
        memo[key] = list(unknown)
        self._unsettled[key] = memo
        cuts = self._cuts
        self._asking += 1
        try:
            found = memo[key] = list(dict.fromkeys(compute(*args)))  # once each: paths multiply
        finally:
            self._asking -= 1
        if self._cuts == cuts:
            del self._unsettled[key]
        return found

    # An answer of ``_memoised`` (``sources``, ``losses_held``, ...) or ``ending`` a guard cut short
    # depends on what was being answered when it was asked: ``sources(x)`` for a parameter ``x`` a
    # recursive call passes on (``f(x[1:])``) knows nothing of that call's argument while ``x`` itself
    # is being answered. Kept, such an answer would make a later question's answer depend on the order
    # questions came in (a rule asking first, another after, or only one of them: the rules that
    # gather their demanded facts after the others, ``Dispatcher.gather``, must find what an analysis
    # on demand finds). So every question asked from outside (none being answered) is answered as on a
    # fresh ``Outputs``: from the answers no guard touched (the same whenever asked), and those it
    # computes itself.
    def _forget_unsettled(self) -> None:
        """Drop the answers a guard cut short (``_unsettled``) before a question from outside."""
        for key, table in self._unsettled.items():
            table.pop(key, None)
        self._unsettled = {}

    def _sources(self, expr: cst.BaseExpression, element: int | None, depth: int) -> list[Source]:
        kind = type(expr)
        if kind is cst.Name:
            return self._name_sources(expr, element, depth)
        if kind is cst.Subscript:
            index = _int_index(expr)
            return self.sources(expr.value, index if element is None else element, depth + 1)
        if kind is cst.BinaryOperation:
            return self._indices_arithmetic(expr, depth) or self._logits_arithmetic(expr, depth)
        if kind is not cst.Call:
            return []
        act = _applied(self.model, expr)
        if act is not None:
            return [Source("act", act)]
        made = _made(self.model, expr, element)
        if made is not None:
            return [Source("act", made)]
        if (self.model.qualified_name(expr.func) or "") in _JOINS and expr.args and not expr.args[0].star:
            return self._joined(expr.args[0].value, element, depth)
        if element == 0 and (self.model.qualified_name(expr.func) or "") in _PACKING and expr.args \
                and expr.args[0].keyword is None and not expr.args[0].star:
            return self.sources(expr.args[0].value, None, depth + 1)  # ``data, _ = pack_padded_sequence(x, n)``
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in SHAPE_METHODS and not self.model.is_imported(func):
            inner = self.sources(func.value, element, depth + 1)
            if func.attr.value in _FLOAT_CASTS or func.attr.value in ("to", "type") and _float_dtype(self.model, expr):
                inner = [Source("act", _AS_FLOAT[s.name]) if s.kind == "act" and s.name in _AS_FLOAT else s
                         for s in inner]
            return inner
        if (self.model.qualified_name(func) or "") in SHAPE_FUNCTIONS and expr.args and expr.args[0].keyword is None:
            return self.sources(expr.args[0].value, element, depth + 1)
        return self.called(expr, element, depth + 1)

    def _joined(self, items: cst.BaseExpression, element: int | None, depth: int) -> list[Source]:
        """What ``torch.cat``/``torch.stack`` of ``items`` gives: what every item is (a list or
        tuple written there, a comprehension's element, a name bound once to one of them);
        class indices joined stay indices."""
        parts = _items(self.model, items)
        if parts is None:
            return []
        found = self._indices_of(parts, False, depth)
        if found:
            return found
        groups = [self.sources(part, element, depth + 1) for part in parts]
        keys = {tuple(sorted(s.key() for s in g)) for g in groups}
        return groups[0] if len(keys) == 1 and groups[0] else []

    def _indices_arithmetic(self, expr: cst.BinaryOperation, depth: int) -> list[Source]:
        """Class indices stay indices (without a gradient) through arithmetic with numbers and
        with other indices (``2.0 * idx.float() / 63 - 1``); anything else is unknown."""
        numbers = [side for side in (expr.left, expr.right) if _number(side)]
        others = [side for side in (expr.left, expr.right) if not _number(side)]
        floats = isinstance(expr.operator, cst.Divide) or any(_number(n) == "float" for n in numbers)
        return self._indices_of(others, floats, depth)

    def _logits_arithmetic(self, expr: cst.BinaryOperation, depth: int) -> list[Source]:
        """Logits stay logits with a bias added (a number, or a module's ``nn.Parameter``:
        ``self.decoder(h) + self.decoder_bias``) or scaled by a number (``logits / 0.7``);
        anything else (``x - x.logsumexp(1, keepdim=True)``: log-probabilities) is unknown."""
        operator = type(expr.operator)
        if operator in (cst.Add, cst.Subtract):
            pairs = [(expr.left, expr.right)] + ([(expr.right, expr.left)] if operator is cst.Add else [])
            constant = self._bias
        elif operator in (cst.Multiply, cst.Divide):
            pairs = [(expr.left, expr.right)] + ([(expr.right, expr.left)] if operator is cst.Multiply else [])
            constant = _number
        else:
            return []
        for side, other in pairs:
            if constant(other):
                found = self.sources(side, None, depth + 1)
                if found and all(s.kind == "act" and s.name == LOGITS for s in found):
                    return found
        return []

    def _bias(self, expr: cst.BaseExpression) -> bool:
        """A number, or a module's ``nn.Parameter`` (``self.bias``, bound to one in the class)."""
        if _number(expr):
            return True
        return isinstance(expr, cst.Attribute) and self._is_self(expr.value) and \
            is_parameter(self.model, single_value(self.model, expr))

    def _indices_of(self, parts: list, floats: bool, depth: int) -> list[Source]:
        """INDICES (INDICES_FLOAT where ``floats`` or a part is) when every part is class indices."""
        if not parts or any(isinstance(p, cst.StarredElement) for p in parts):
            return []
        for part in parts:
            found = self.sources(part, None, depth + 1)
            if not found or any(s.kind != "act" or s.name not in (INDICES, INDICES_FLOAT) for s in found):
                return []
            floats = floats or any(s.name == INDICES_FLOAT for s in found)
        return [Source("act", INDICES_FLOAT if floats else INDICES)]

    def _name_sources(self, name: cst.Name, element: int | None, depth: int) -> list[Source]:
        found: list[list[Source]] = []
        passed_in: list[Source] = []
        for b in self.model.reaching(name.value, name):
            if b.kind in ("assign", "ann") and b.value is not None:
                filled = self._filled(b, depth)
                found.append(filled if filled is not None else self.sources(b.value, element, depth + 1))
            elif b.kind == "unpack" and element is None and (unpacked := unpacked_element(b)) is not None:
                found.append(self.sources(unpacked[1], unpacked[0], depth + 1))
            elif b.kind == "param":
                for arg in self._arguments(b):
                    passed_in.extend(self.sources(arg, element, depth + 1))
            else:
                return []
        if len(found) > 1:  # bound on several paths: every one must give the same
            one = _unique([s for group in found for s in group]) if all(len(g) == 1 for g in found) else None
            found = [[one]] if one is not None else [[]]
        return [*(found[0] if found else ()), *passed_in]

    def _filled(self, b: "Binding", depth: int) -> list[Source] | None:
        """What a buffer holds that a new tensor of zeros was bound to and code then fills
        (``outputs = torch.zeros(T, B, V)`` ... ``outputs[t] = out`` in a decoding loop): what
        every value stored into it is, when they agree (nothing known where they do not).
        None for a binding of anything else, or of a new tensor nothing is stored into."""
        value = b.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in SHAPE_METHODS:
            value = value.func.value
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        if (self.model.qualified_name(func) or "") not in _FRESH_TENSORS and not (
                isinstance(func, cst.Attribute) and func.attr.value in _FRESH_METHODS and not self.model.is_imported(func)):
            return None
        stores = element_stores(self.model, b)
        if stores is None:
            return []
        if not stores:
            return None
        groups = [self.sources(stored, None, depth + 1) for _, stored in stores]
        one = _unique([s for g in groups for s in g]) if all(len(g) == 1 for g in groups) else None
        return [one] if one is not None else []

    def called(self, call: cst.Call, element: int | None = None, depth: int = 0) -> list[Source]:
        """What calling ``call.func`` gives (``element`` of it): a module's output (``m(x)``,
        ``m.forward(x)``, ``self(x)``) or what a same-file function returns on every path."""
        func = call.func
        explicit = type(func) is cst.Attribute and func.attr.value == "forward"
        receiver = func.value if explicit else func  # type: ignore[union-attr]
        if type(receiver) not in (cst.Name, cst.Attribute):
            return []
        if not explicit and not self._is_self(receiver):
            site = self.model.call_site(call)
            functions = [t for t in (self.sem.graph.targets(site) if site is not None else ())
                         if isinstance(t, cst.FunctionDef) and t.name.value not in ("__init__", "__new__")]
            if functions:
                out = []
                for function in functions:
                    got = element_of(self.ending(function, depth + 1), element)
                    if got is not None:
                        out.append(got if got.kind != "act" else replace(got, origin=f"function {function.name.value}"))
                return out
        return [s.at(element) for s in self.held(receiver, depth + 1)]

    def _is_self(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is not cst.Name:
            return False
        scope = self.model.scope_of(expr)
        return scope.self_name == expr.value and scope.cls is not None

    # -- models ---------------------------------------------------------------------------
    def held(self, expr: cst.BaseExpression, depth: int = 0) -> list[Source]:
        """What calling the module ``expr`` holds gives (each model it may be)."""
        return self._memoised(("held", expr), self._held, expr, depth)

    def _held(self, expr: cst.BaseExpression, depth: int) -> list[Source]:
        model = self.model
        if type(expr) is cst.Name:
            scope = model.scope_of(expr)
            if scope.self_name == expr.value and scope.cls is not None:
                return [Source("cls", self._class_name(scope.cls))]
            out = []
            for b in model.reaching(expr.value, expr):
                out.extend(self._held_binding(b, depth))
            if any(s.origin.startswith("model ") for s in out):
                out = [r for s in out for r in self._head(expr, s, depth)]
            return out
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            scope = model.scope_of(expr)
            if scope.self_name != expr.value.value or scope.cls is None:
                # ``model.fc(h)`` with ``model.fc = nn.Linear(...)`` assigned in the file
                out = []
                for b in model.reaching(f"{expr.value.value}.{expr.attr.value}", expr):
                    out.extend(self._held_binding(b, depth) if b.kind in ("assign", "ann") else ())
                return out
            out = []
            for info in model.mro(scope.cls):
                for b in self_attr_bindings(model, info, expr.attr.value):
                    out.extend(self._held_binding(b, depth))
            return out
        return []

    def _head(self, expr: cst.Name, source: Source, depth: int) -> list[Source]:
        """What a torchvision classifier (``source``, held by the name ``expr``) gives, its
        head as the code leaves it where ``expr`` is read: its own (logits) unless the code
        replaced it (``model.fc = nn.Linear(n, 2)``, ``model.classifier[6] = ...``,
        ``model.classifier = nn.Sequential(..., nn.LogSoftmax(1))``), then what the new
        head gives (nothing known for an ``nn.Identity()``: features)."""
        if not source.origin.startswith("model "):
            return [source]
        name = source.origin[6:]
        found = library_classifier(f"torchvision.models.{name}")
        if found is None:
            return [source]
        _, attr, last = found
        key = f"{expr.value}.{attr}"
        model = self.model
        replaced = [b for k in (key, key + last if last else None) if k for b in model.reaching(k, expr)
                    if b.kind in ("assign", "ann") and b.value is not None]
        order = model.order.get(expr, 0)
        scope = model.scope_of(expr).node
        table = model.memo("element_stores").get(scope)
        if table is None:
            table = model.memo("element_stores")[scope] = _stores_in(model, scope)
        stored = [value for target, value, _ in table.get(key, ()) if model.order.get(target, order) < order
                  and (last is None or _int_index(target) in (-1, int(last[1:-1]) if last.startswith("[") else None))]
        if table.get(f"{key}._modules") or any(
                type(site.node.func) is cst.Attribute and site.node.func.attr.value in _HEAD_EDITS
                and expr_key(site.node.func.value) == key for site in model.calls):
            return []  # layers added to the head (``classifier._modules["7"] = nn.LogSoftmax(1)``): unknown
        if not replaced and not stored:
            return [source]
        if any(value is None for value in stored):
            return []
        out = []
        for value in [b.value for b in replaced] + stored:
            for s in self._held_value(value, None, depth + 1):
                out.append(replace(s, origin=f"head {name} {attr}") if s.kind == "act" else s)
        return out

    def _held_binding(self, b: "Binding", depth: int) -> list[Source]:
        if b.kind in ("assign", "ann") and b.value is not None:
            return self._held_value(b.value, b, depth + 1)
        if b.kind == "param":
            out = []
            for arg in self._arguments(b):
                out.extend(self._held_value(arg, None, depth + 1))
            deferred = self._deferred(b)
            return out + ([deferred] if deferred is not None else [])
        return []

    def _held_value(self, value: cst.BaseExpression, holder: "Binding | None", depth: int) -> list[Source]:
        if depth > _MAX_DEPTH:
            self._cuts += 1
            return []
        value = strip_self_returning(value)
        if isinstance(value, (cst.Name, cst.Attribute)):
            return self.held(value, depth + 1)
        if isinstance(value, cst.IfExp):
            return self._held_value(value.body, None, depth + 1) + self._held_value(value.orelse, None, depth + 1)
        if not isinstance(value, cst.Call):
            return []
        qualified = self.model.qualified_name(value.func) or ""
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _WRAPPERS and value.args:
            return self._held_value(value.args[0].value, None, depth + 1)
        if torch_nn_class(qualified) == "Sequential":
            got = self.sequential_end(value, holder, depth + 1)
            return [Source("act", got, origin="sequential")] if got is not None else []
        if logits_layer(qualified):
            return [Source("act", LOGITS, origin=f"layer {torch_nn_class(qualified)}")]
        classifier = library_classifier(qualified)
        if classifier is not None:
            return [Source("act", LOGITS, origin=f"model {classifier[0]}")]
        built = built_by(self.model, value)
        if built is not None:
            return [Source("cls", built.name)] if built.kind == "class" else []
        site = self.model.call_site(value)
        out = []
        for function in (self.sem.graph.targets(site) if site is not None else ()):
            scope = self.model.scopes.get(function)
            if isinstance(function, cst.FunctionDef) and scope is not None:
                if function in self._open:
                    self._cuts += 1
                    continue
                self._open.add(function)
                for r in scope.returns:
                    if r.value is not None and not ruled_out(self.ctx, r, function,
                                                             lambda name: passed(self.model, value, function, name)):
                        out.extend(self._held_value(r.value, None, depth + 1))
                self._open.discard(function)
        return out

    def sequential_end(self, call: cst.Call, holder: "Binding | None" = None, depth: int = 0) -> str | None:
        """The activation an ``nn.Sequential(...)`` ends in: its last layer, or, when it is
        filled afterwards (``add_module``/``append`` on the name or ``self.<attr>`` it is bound
        to, ``holder``), the last layer added."""
        added, layer = self._last_filled(holder, _CONTAINER_FILLERS) if holder is not None else (False, None)
        if added and layer is None:
            return None
        if not added:
            if not call.args:
                return None
            last = call.args[-1]
            if last.keyword is not None:
                return None
            if last.star == "*":
                layer = self._list_end(last.value, call)
            elif last.star:
                return None
            elif len(call.args) == 1 and isinstance(last.value, cst.Call) and \
                    (self.model.qualified_name(last.value.func) or "").endswith("OrderedDict"):
                layer = _ordered_last(last.value)
            else:
                layer = last.value
        return self._layer_kind(layer, depth + 1) if layer is not None else None

    def _layer_kind(self, layer: cst.BaseExpression, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            self._cuts += 1
            return None
        if isinstance(layer, cst.Call):
            qualified = self.model.qualified_name(layer.func)
            found = activation_layer(qualified) or (LOGITS if logits_layer(qualified) else None)
            if found is not None:
                return found
            if torch_nn_class(qualified or "") == "Sequential":
                return self.sequential_end(layer, None, depth + 1)
            return None
        if isinstance(layer, (cst.Name, cst.Attribute)):
            kinds = {s.name for s in self.held(layer, depth + 1) if s.kind == "act"}
            value = single_value(self.model, layer)
            if isinstance(value, cst.Call):
                qualified = self.model.qualified_name(value.func)
                kinds.add(activation_layer(qualified) or (LOGITS if logits_layer(qualified) else None))
            kinds.discard(None)
            return kinds.pop() if len(kinds) == 1 else None
        return None

    def _last_filled(self, holder: "Binding", methods: tuple[str, ...],
                     before: int | None = None) -> tuple[bool, cst.BaseExpression | None]:
        """The layer (or item) last added to what ``holder`` binds, after it (and before the
        node numbered ``before``): ``x.add_module(name, layer)``, ``x.append(layer)``,
        ``x.extend([..., layer])`` on the same name in the same scope, or on ``self.<attr>`` in
        the class's methods: (whether anything is added, the item; None when the last
        addition is conditional)."""
        model = self.model
        key = holder.key
        attr = key.split(".", 1)[1] if "." in key else None
        if attr is not None and (holder.scope.cls is None or "." in attr):
            return True, None
        last = None
        for site in (model.calls if attr is not None else model.calls_in(holder.scope.node)):
            func = site.node.func
            if type(func) is not cst.Attribute or func.attr.value not in methods or site.order <= holder.order \
                    or before is not None and site.order >= before:
                continue
            receiver = func.value
            if attr is None:
                if type(receiver) is not cst.Name or receiver.value != key or \
                        holder not in model.reaching(key, receiver):
                    continue
            elif not (type(receiver) is cst.Attribute and type(receiver.value) is cst.Name
                      and receiver.attr.value == attr and site.scope.self_name == receiver.value.value
                      and site.scope.cls is not None and holder.scope.cls in model.mro(site.scope.cls)):
                continue
            if last is None or site.order > last.order:
                last = site
        if last is None:
            return False, None
        return True, None if self._conditional(last.node, holder.node) else _added_item(last.node)

    def _list_end(self, expr: cst.BaseExpression, at: cst.CSTNode) -> cst.BaseExpression | None:
        """The last item of the list ``expr`` names at ``at``: the item last added to it
        (``append``, ``extend``) before ``at``, else its literal's last element (``+=`` and
        ``layers + [...]`` of one included)."""
        if type(expr) is not cst.Name:
            return None
        bindings = self.model.reaching(expr.value, expr)
        if len(bindings) != 1:
            return None
        b = bindings[0]
        added, item = self._last_filled(b, _LIST_FILLERS, self.model.order.get(at))
        if added:
            return item
        if b.kind == "aug" and isinstance(b.node, cst.AugAssign) and isinstance(b.node.operator, cst.AddAssign):
            return _list_last(b.node.value)
        if b.kind in ("assign", "ann") and b.value is not None:
            value = b.value
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                value = value.right
            return _list_last(value)
        return None

    def _conditional(self, node: cst.CSTNode, base: cst.CSTNode) -> bool:
        """``node`` runs under an ``if``/``try``/``match`` (of its function) that ``base`` is not in."""
        around_base = set(id(a) for a in self.ctx.ancestors(base))
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                return False
            if isinstance(anc, (cst.If, cst.Try, cst.TryStar, cst.Match, cst.IfExp)) and id(anc) not in around_base:
                return True
        return False

    # -- what functions return ----------------------------------------------------------
    def ending(self, function: cst.FunctionDef, depth: int = 0) -> Ending | None:
        """What ``function`` returns on every path (its own ``return`` statements): one
        source, or a tuple with a source (or None) per element. None: a bare ``return``, no
        ``return``, or paths that disagree. Where they disagree, the returns a call leaving every
        parameter at its default cannot reach (``if extract_features == 4: return h`` with
        ``extract_features=0``: ``branches.ruled_out``) are left out, and the rest decide."""
        if not self._asking and self._unsettled:
            self._forget_unsettled()
        endings = self._endings
        if function in endings:
            if function in self._unsettled:
                self._cuts += 1
            return endings[function]
        if function in self._open or depth > _MAX_DEPTH:
            self._cuts += 1
            return None
        self._open.add(function)
        cuts = self._cuts
        self._asking += 1
        try:
            found = self._ending(function, depth)
        finally:
            self._open.discard(function)
            self._asking -= 1
        endings[function] = found
        if self._cuts != cuts:
            self._unsettled[function] = endings
        return found

    def _ending(self, function: cst.FunctionDef, depth: int) -> Ending | None:
        scope = self.model.scopes.get(function)
        if scope is None or not scope.returns:
            return None
        found = self._ending_of(scope.returns, depth)
        if found is None:
            # Returns on a path that a call leaving the parameters at their defaults never takes
            # (``if extract_features == 4: return h`` with ``extract_features=0``): a flag's
            # other output; what the ordinary call returns is the rest, when they agree.
            ordinary = [r for r in scope.returns
                        if not ruled_out(self.ctx, r, function, lambda name: _default(function, name))]
            if ordinary and len(ordinary) < len(scope.returns):
                found = self._ending_of(ordinary, depth)
        return found

    def _ending_of(self, returns, depth: int) -> Ending | None:
        endings = []
        for r in returns:
            if r.value is None:
                return None
            value = r.value
            if isinstance(value, cst.Tuple):
                if any(isinstance(e, cst.StarredElement) for e in value.elements):
                    return None
                endings.append(tuple(_unique(self.sources(e.value, None, depth + 1)) for e in value.elements))
            else:
                endings.append(_unique(self.sources(value, None, depth + 1)))
        first = endings[0]
        if isinstance(first, tuple):
            if not all(isinstance(e, tuple) and len(e) == len(first) for e in endings):
                return None
            merged = tuple(_unique([e[i] for e in endings]) if all(e[i] is not None for e in endings) else None
                           for i in range(len(first)))
            return merged if any(m is not None for m in merged) else None
        if first is None or not all(isinstance(e, Source) for e in endings):
            return None
        return _unique(endings)

    # -- parameters -----------------------------------------------------------------------
    def _arguments(self, b: "Binding") -> list[cst.BaseExpression]:
        """What the callers in this file pass for the parameter ``b`` (its default where a
        caller passes nothing)."""
        function = b.scope.node
        if not isinstance(function, cst.FunctionDef):
            return []
        out = []
        if self._only is not None and self._only[0] is function:
            arg = passed(self.model, self._only[1].node, function, b.key)
            return [arg] if arg is not None else []
        for site in self.sem.graph.callers(function):
            arg = passed(self.model, site.node, function, b.key)
            if arg is not None:
                out.append(arg)
        return out

    def _deferred(self, b: "Binding") -> Source | None:
        """The ``arg`` source for a parameter no caller in the file passes: of a module-level
        function, or of the constructor of a module-level class."""
        function = b.scope.node
        if not isinstance(function, cst.FunctionDef) or self.sem.graph.callers(function):
            return None
        scope = b.scope
        parent = scope.parent
        if parent is None:
            return None
        if parent.parent is None and parent.kind == "module":
            key = function.name.value
            params = _params_of(function)
        elif parent.kind == "class" and parent.parent is not None and parent.parent.parent is None \
                and function.name.value == "__init__":
            key = parent.name
            params = _params_of(function)[1:]
        else:
            return None
        names = [p.name.value for p in params]
        index = names.index(b.key) if b.key in names else None
        return Source("arg", key, param=b.key, index=index)

    def _class_name(self, info: "ClassInfo") -> str:
        module = self.ctx.import_table.module_name
        name = index_name(info.scope)
        return f"{module}.{name}" if module else name

    # -- losses ---------------------------------------------------------------------------
    def loss_of(self, call: cst.Call) -> tuple[str | Source, str] | None:
        """(what the loss ``call`` computes wants as input: ``cross_entropy``/``nll``/
        ``bce_logits``, or the ``arg`` source its loss comes from; the loss as written) when
        ``call`` computes one: the functional loss, a constructed loss called, a name,
        ``self.<attr>`` or parameter every value of which is one, its ``.forward``. Once per call."""
        if self._asking:  # (never now) asked while a question is answered: as that one's context has it
            return self._loss_of(call)
        if call not in self._losses:
            self._losses[call] = self._loss_of(call)
        return self._losses[call]

    def _loss_of(self, call: cst.Call) -> tuple[str | Source, str] | None:
        model = self.model
        func = call.func
        qualified = model.qualified_name(func)
        wants = loss_wants(qualified)
        if wants is not None:
            # ``nn.CrossEntropyLoss(weight)`` constructs the loss: it computes nothing yet
            return (wants, _written(func) or wants) if torch_nn_class(qualified or "") is None else None
        if isinstance(func, cst.Call):
            wants = loss_wants(model.qualified_name(func.func))
            return (wants, _written(func.func) or wants) if wants is not None else None
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        if type(func) is cst.Attribute and (type(func.value) is not cst.Name or func.value.value not in self.self_names()):
            return None  # ``losses_held`` knows only ``self.<attr>`` of an attribute (most calls: ``torch.cat``)
        kinds = self.losses_held(func)
        if len({k.key() if isinstance(k, Source) else k for k in kinds}) != 1 or None in kinds:
            return None
        return kinds[0], _written(func) or ""

    def self_names(self) -> frozenset[str]:
        """Every name ``self`` goes by in the file's scopes (``Scope.self_name``)."""
        if self._self_names is None:
            self._self_names = frozenset(s.self_name for s in self.model.scopes.values() if s.self_name is not None)
        return self._self_names

    def losses_held(self, expr: cst.BaseExpression, depth: int = 0) -> list:
        """The losses a name, ``self.<attr>`` or parameter holds: for each value, what it
        wants (None: something else or unknown), or the ``arg`` source of a parameter. Once
        per expression; asked again while it is computed (a cycle): unknown."""
        return self._memoised(("losses", expr), self._losses_held, expr, depth, unknown=(None,))

    def _losses_held(self, expr: cst.BaseExpression, depth: int) -> list:
        model = self.model
        if type(expr) is cst.Name:
            bindings = model.reaching(expr.value, expr)
        elif type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            scope = model.scope_of(expr)
            if scope.self_name != expr.value.value or scope.cls is None:
                return [None]
            bindings = [b for info in model.mro(scope.cls) for b in self_attr_bindings(model, info, expr.attr.value)]
        else:
            return [None]
        if not bindings:
            return [None]
        out: list = []
        for b in bindings:
            if b.kind in ("assign", "ann") and b.value is not None:
                out.extend(self._loss_value(b.value, depth + 1))
            elif b.kind == "param":
                args = self._arguments(b)
                for arg in args:
                    out.extend(self._loss_value(arg, depth + 1))
                if not args:
                    out.append(self._deferred(b))
            else:
                out.append(None)
        return out

    def _loss_value(self, value: cst.BaseExpression, depth: int) -> list:
        value = strip_self_returning(value)
        if isinstance(value, cst.Call):
            return [loss_wants(self.model.qualified_name(value.func))]
        if isinstance(value, (cst.Name, cst.Attribute)):
            wants = loss_wants(self.model.qualified_name(value))
            if wants is not None:
                return [wants]
            return self.losses_held(value, depth + 1)
        return [None]

    # -- the same value, the same model ----------------------------------------------------
    def outputs_of(self, expr: cst.BaseExpression, depth: int = 0,
                   element: int | None = None) -> list[tuple[cst.CSTNode, int | None]]:
        """(call, element) for each call whose output the tensor ``expr`` may be (the same
        value wherever it is read; ``element``: the index taken of what the call returns,
        ``a, b = call`` or ``call[1]``, None for the whole), through names bound once on the
        way, unpacking, subscripts, shape-only methods and functions,
        ``.detach()``/``.numpy()``/``.data``, the items ``torch.cat``/``torch.stack`` join, and
        parameters (what each caller in the file passes; the ``Param`` itself where no caller
        in the file does): ``out = model(x); loss(out.squeeze(1))`` -> ``model(x)``. Empty when
        a name may hold several values."""
        if depth > _MAX_DEPTH:
            return []
        model = self.model
        kind = type(expr)
        if kind is cst.Name:
            bindings = model.reaching(expr.value, expr)
            if len(bindings) != 1:
                return []
            b = bindings[0]
            if b.kind in ("assign", "ann") and b.value is not None:
                return self.outputs_of(b.value, depth + 1, element)
            if b.kind == "param":
                args = self._arguments(b)
                if not args:  # no caller in the file: the parameter itself is the value
                    return [(b.node, element)] if isinstance(b.node, cst.Param) else []
                return [c for arg in args for c in self.outputs_of(arg, depth + 1, element)]
            unpacked = unpacked_element(b) if b.kind == "unpack" else None
            return self.outputs_of(unpacked[1], depth + 1, unpacked[0]) if unpacked is not None else []
        if kind is cst.Subscript:
            index = _int_index(expr)
            return self.outputs_of(expr.value, depth + 1, index if index is not None else element)
        if kind is cst.Attribute and expr.attr.value == "data":
            return self.outputs_of(expr.value, depth + 1, element)
        if kind is not cst.Call:
            return []
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in _SAME_VALUE_METHODS and not model.is_imported(func):
            return self.outputs_of(func.value, depth + 1, element)
        qualified = model.qualified_name(func) or ""
        if qualified in SHAPE_FUNCTIONS and expr.args and expr.args[0].keyword is None:
            return self.outputs_of(expr.args[0].value, depth + 1, element)
        if qualified in _JOINS and expr.args and not expr.args[0].star:
            parts = _items(model, expr.args[0].value)
            return [c for part in parts or () for c in self.outputs_of(part, depth + 1)]
        return [(expr, element)]

    def losses_given(self, expr: cst.BaseExpression) -> dict[str, str]:
        """The losses (what each wants -> the loss as written) the tensor ``expr`` is given to as
        input in this file: the same value (``outputs_of``), or the same element of the output
        of the same model object (``model_object``: ``out = model(x); criterion(out, y)`` and
        ``model(x_val) > 0.5`` elsewhere). Only losses whose kind is known here."""
        if self._given is None:
            self._given = given = {}
            for site in self.model.calls:
                loss = self.loss_of(site.node)
                arg = loss_input(site.node) if loss is not None else None
                if arg is None or not isinstance(loss[0], str):
                    continue
                for call, element in self.outputs_of(arg.value):
                    for key in (call, *self._objects(call)):
                        given.setdefault(key, []).append((element, loss[0], loss[1]))
        found: dict[str, str] = {}
        for call, element in self.outputs_of(expr):
            for key in (call, *self._objects(call)):
                for other, wants, written in self._given.get(key, ()):
                    if other == element or other is None or element is None:
                        found.setdefault(wants, written)
        return found

    def _objects(self, node: cst.CSTNode) -> frozenset:
        return (self.model_object(node) or frozenset()) if isinstance(node, cst.Call) else frozenset()

    def model_object(self, call: cst.Call, depth: int = 0) -> frozenset | None:
        """Which model object the call ``m(x)`` / ``m.forward(x)`` / ``self(x)`` runs, as keys
        two calls share when they run the same object: ``self(x)`` in a module's methods its
        class, ``self.<name>(x)`` that attribute of its class, a name the bindings reaching it
        (a parameter: what the callers in the file pass; a parameter no caller in the file
        passes: its name, so that ``train(model, ...)`` and ``evaluate(model, ...)`` called from
        elsewhere share it). None for anything else (an imported function, a call of a call)."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value
        return self._object(func, depth)

    def _object(self, func: cst.BaseExpression, depth: int) -> frozenset | None:
        model = self.model
        if depth > _MAX_DEPTH:
            return None
        scope = model.scope_of(func)
        if type(func) is cst.Name:
            if scope.cls is not None and scope.self_name == func.value:
                return frozenset({("self", id(scope.cls.node))})
            if model.is_imported(func):
                return None
            keys = set()
            for b in model.reaching(func.value, func):
                if b.kind == "param":
                    args = self._arguments(b)
                    if not args:  # called from elsewhere: the model of that name the callers pass
                        keys.add(("param", b.key))
                        continue
                    held = [self._object(strip_self_returning(a), depth + 1) for a in args]
                    if None in held:
                        return None
                    keys.update(k for h in held for k in h)
                elif b.kind in ("assign", "ann", "unpack", "for", "with"):
                    keys.add(("binding", id(b.node)))
                else:
                    return None
            return frozenset(keys) or None
        if type(func) is cst.Attribute and type(func.value) is cst.Name and scope.cls is not None \
                and scope.self_name == func.value.value:
            return frozenset({("attr", id(scope.cls.node), func.attr.value)})
        return None

    # -- for the project pass -------------------------------------------------------------
    def calls_made(self) -> list:
        """The calls of imported project functions and classes in this file, with what each
        argument holds: ``[callee (qualified), [[position or keyword, [model sources], loss
        wanted], ...]]``, only arguments with something to say. Once per file (the rules that
        keep it as a fact share it: do not change the list)."""
        if self._calls_made is None:
            self._calls_made = self._find_calls_made()
        return self._calls_made

    def _find_calls_made(self) -> list:
        model = self.model
        out = []
        for site in model.calls:
            func = site.node.func
            if not isinstance(func, (cst.Name, cst.Attribute)) or not model.is_imported(func):
                continue
            qualified = model.qualified_name(func)
            if not qualified or is_library(qualified):
                continue
            args = []
            for i, arg in enumerate(site.node.args):
                if arg.star:
                    break
                where = arg.keyword.value if arg.keyword is not None else i
                held = [s.to_json() for s in self._held_value(arg.value, None, 1) if s.kind != "arg"]
                losses = self._loss_value(arg.value, 1)
                wants = losses[0] if len(set(map(str, losses))) == 1 and isinstance(losses[0], str) else None
                if held or wants:
                    args.append([where, held, wants])
            if args:
                out.append([qualified, args])
        return out


def _default(function: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
    """The default value of ``function``'s parameter ``param`` (None: it has none)."""
    for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        if p.name.value == param:
            return p.default
    return None


def passed(model: "SemanticModel", call: cst.Call, function: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
    """The expression ``call`` binds to ``function``'s parameter ``param``: by keyword or by
    position (``self`` left out of a method called on an object and of a constructor called
    through its class), else the parameter's default. None when it cannot be told
    (``*args``/``**kwargs`` before it)."""
    params = _params_of(function)
    scope = model.scopes.get(function)
    if scope is not None and scope.self_name is not None and params:
        params = params[1:]
    found = bound_argument(call, [p.name.value for p in params], param)
    if found is ...:
        return None
    return found if found is not None else _default(function, param)


def _written(func: cst.BaseExpression) -> str | None:
    from torchlint.statements import dotted_name

    return dotted_name(func)


def _added_item(call: cst.Call) -> cst.BaseExpression | None:
    """What ``x.add_module(name, layer)``, ``x.append(layer)`` or ``x.extend([..., layer])`` adds last."""
    method = call.func.attr.value  # type: ignore[union-attr]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if method == "add_module":
        module = keyword_arg(call, "module")
        return module.value if module is not None else positional[1] if len(positional) > 1 else None
    if method == "append":
        return positional[0] if positional else None
    return _list_last(positional[0]) if positional else None


def _list_last(value: cst.BaseExpression) -> cst.BaseExpression | None:
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        last = value.elements[-1]
        return None if isinstance(last, cst.StarredElement) else last.value
    return None


def _ordered_last(call: cst.Call) -> cst.BaseExpression | None:
    """The last layer of ``OrderedDict([("a", layer), ...])`` or ``OrderedDict({"a": layer})``."""
    if len(call.args) != 1:
        return None
    items = call.args[0].value
    if isinstance(items, cst.Dict) and items.elements:
        last = items.elements[-1]
        return last.value if isinstance(last, cst.DictElement) else None
    pair = _list_last(items)
    if isinstance(pair, cst.Tuple) and len(pair.elements) == 2:
        return pair.elements[1].value
    return None


def _tensor_method(model: "SemanticModel", func: cst.Attribute) -> bool:
    """``h.softmax`` may be a tensor's method: not a module's function (``F.softmax``) nor an
    attribute of ``self`` (``self.softmax = nn.LogSoftmax()``: a layer the module holds)."""
    if model.is_imported(func):
        return False
    if isinstance(func.value, cst.Name):
        scope = model.scope_of(func)
        if scope.cls is not None and scope.self_name == func.value.value:
            return False
    return True


def _applied(model: "SemanticModel", expr: cst.Call) -> str | None:
    """The activation a call applies right there: ``F.softmax(h)``, ``h.softmax(1)``,
    ``nn.Softmax(1)(h)``, ``self.act(h)`` with ``self.act = nn.Softmax(1)``."""
    func = expr.func
    found = activation_function(model.qualified_name(func))
    if found is not None:
        return found
    if isinstance(func, cst.Call):  # nn.Softmax(dim=1)(h)
        return activation_layer(model.qualified_name(func.func))
    if isinstance(func, (cst.Attribute, cst.Name)):
        if isinstance(func, cst.Attribute) and _tensor_method(model, func):
            found = activation_method(func.attr.value)
            if found is not None and (expr.args or found == "sigmoid"):
                return found
        value = single_value(model, func)  # self.act(h) with self.act = nn.Softmax(1)
        if isinstance(value, cst.Call):
            return activation_layer(model.qualified_name(value.func))
    return None


def _made(model: "SemanticModel", expr: cst.Call, element: int | None) -> str | None:
    """ONE_HOT for ``F.one_hot(y, n)``; INDICES for ``x.argmax(1)``/``torch.argmax(x, 1)``,
    element 1 of ``torch.max(x, 1)``/``x.max(dim=1)`` (the indices), ``.long()``/``.int()``."""
    func = expr.func
    qualified = model.qualified_name(func) or ""
    if qualified == "torch.nn.functional.one_hot":
        return ONE_HOT
    if qualified == "torch.argmax":
        return INDICES
    method = func.attr.value if type(func) is cst.Attribute and not model.is_imported(func) else None
    if method == "argmax" or method in _INTEGER_CASTS and not expr.args:
        return INDICES
    if element == 1 and (qualified in _MAX_FUNCTIONS and _reduces(expr.args[1:])
                         or method in ("max", "topk") and _reduces(expr.args)):
        return INDICES
    return None


def _reduces(args) -> bool:
    """``max``/``topk``'s arguments after the tensor name a dimension (``1``, ``dim=-1``): it
    returns (values, indices), not the elementwise maximum of two tensors."""
    if any(a.keyword is not None and a.keyword.value in ("dim", "k") for a in args):
        return True
    first = args[0].value if args and args[0].keyword is None else None
    return _number(first) == "int" if first is not None else False


def _items(model: "SemanticModel", items: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The tensors a list holds: the elements of a list or tuple written there, the element of a
    list comprehension or generator, through a name bound once; None when it cannot be told."""
    if isinstance(items, cst.Name):
        items = single_value(model, items)
    if isinstance(items, (cst.List, cst.Tuple)) and items.elements:
        if any(isinstance(e, cst.StarredElement) for e in items.elements):
            return None
        return [e.value for e in items.elements]
    if isinstance(items, (cst.ListComp, cst.GeneratorExp)):
        return [items.elt]
    return None


def _number(node: cst.BaseExpression) -> str | None:
    """``"int"``/``"float"`` for a numeric literal or arithmetic of them (``63.0 - 1``, ``-1``)."""
    if isinstance(node, cst.Integer):
        return "int"
    if isinstance(node, cst.Float):
        return "float"
    if isinstance(node, cst.UnaryOperation):
        return _number(node.expression)
    if isinstance(node, cst.BinaryOperation):
        left, right = _number(node.left), _number(node.right)
        if left and right:
            return "float" if "float" in (left, right) or isinstance(node.operator, cst.Divide) else "int"
    return None


def _float_dtype(model: "SemanticModel", call: cst.Call) -> bool:
    """``x.to(torch.float32)``, ``x.type(torch.FloatTensor)``, ``x.to(dtype=torch.float)``."""
    for arg in call.args:
        name = model.qualified_name(arg.value) or ""
        if name.startswith("torch.") and ("float" in name.lower() or name.endswith(("double", "half"))):
            return True
    return False


# -- the simple questions ---------------------------------------------------------------------

def activation_of(ctx: "FileContext", expr: cst.BaseExpression) -> str | None:
    """``softmax``/``log_softmax``/``sigmoid`` when ``expr`` is such an activation's output,
    applied in this function (through names and shape-only methods), not a model's."""
    found = {s.name for s in Outputs.of(ctx).sources(expr) if s.kind == "act" and not s.origin}
    return found.pop() if len(found) == 1 and not found & NOT_ACTIVATIONS else None


def activation_call(model, expr: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """(``"function"``/``"method"``/``"layer"``, the activation's input) for an activation
    applied right here: ``F.softmax(h, dim=1)``, ``h.softmax(1)``, ``nn.Softmax(1)(h)``."""
    if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
        return None
    func = expr.func
    positional = [a for a in expr.args if a.keyword is None]
    if activation_function(model.qualified_name(func)) is not None:
        first = positional[0] if positional else keyword_arg(expr, "input")
        return ("function", first.value) if first is not None else None
    if isinstance(func, cst.Call) and activation_layer(model.qualified_name(func.func)) is not None:
        return ("layer", expr.args[0].value) if len(expr.args) == 1 and positional else None
    if isinstance(func, cst.Attribute) and _tensor_method(model, func) and activation_method(func.attr.value):
        return "method", func.value
    return None


# Methods that change a tensor's values, not its shape: a clamped probability is kept off 0.
_CLAMPING = frozenset({"clamp", "clip", "clamp_", "clip_", "clamp_min", "clamp_min_"})


# Selections that keep the values they pick: a probability picked is still one.
_PICKING = frozenset({"gather", "index_select", "masked_select", "take", "take_along_dim"})


def probabilities_from(model, expr: cst.BaseExpression, depth: int = 0,
                       outputs: "Outputs | None" = None) -> tuple[str, cst.Call | None] | None:
    """(``"softmax"``/``"sigmoid"``, the activation's call) when ``expr`` is, value for value,
    the output of a softmax or a sigmoid applied in this function (``activation_call``'s
    shapes, ``self.act(h)`` with ``self.act = nn.Softmax(1)``): the call itself, through
    shape-only methods and functions (``.view``, ``.squeeze``, ``.to``; not the clamping ones,
    which keep a probability off 0), through selections of its values (an index, ``.gather``)
    and through names every binding of which holds the same activation
    (``probs = F.softmax(h, 1)``). With ``outputs`` (``Outputs(ctx)``), also what a call gives
    on every path where this file shows it (the call is then None): a same-file helper or
    method returning one (``self.pi(s)`` returning ``F.softmax(x, dim)``), an ``nn.Sequential``
    ending in one (``D(x)`` with ``D = nn.Sequential(..., nn.Sigmoid())``), a same-file
    module's ``forward`` returning one. None for anything else: a sum or product with it
    (``p + eps``), a parameter, a model whose last activation is not in this file."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        if clamped_in_place(model, expr):
            return None
        found = [probabilities_from(model, value, depth + 1, outputs) for value in values_of(model, expr)]
        if not found or any(got is None for got in found) or len({got[0] for got in found}) != 1:
            return None
        return found[0]
    if isinstance(expr, cst.Subscript):
        return probabilities_from(model, expr.value, depth + 1, outputs)
    if not isinstance(expr, cst.Call):
        return None
    act = _applied(model, expr)
    if act is not None:
        return (act, expr) if act in ("softmax", "sigmoid") else None
    func = expr.func
    if isinstance(func, cst.Attribute) and not model.is_imported(func) and (
            func.attr.value in SHAPE_METHODS - _CLAMPING or func.attr.value in _PICKING):
        return probabilities_from(model, func.value, depth + 1, outputs)
    qualified = model.qualified_name(func) or ""
    if (qualified in SHAPE_FUNCTIONS - {"torch.clamp", "torch.clip"} or qualified in {"torch.gather", "torch.index_select"}) \
            and expr.args and expr.args[0].keyword is None:
        return probabilities_from(model, expr.args[0].value, depth + 1, outputs)
    return _called_activation(model, outputs, expr) if outputs is not None else None


def clamped_in_place(model, name: cst.Name) -> bool:
    """``name.clamp_(...)`` or ``name.data.clamp_(...)`` (``clip_``, ``clamp_min_``) anywhere in
    the scope reading ``name``: its values are kept off 0 in place (C51's ``dist.data.clamp_(0.01,
    0.99)`` before ``dist.log()``)."""
    scope = model.scope_of(name)
    for method in ("clamp_", "clip_", "clamp_min_"):
        for site in model.calls_to(method):
            receiver = site.node.func.value if isinstance(site.node.func, cst.Attribute) else None
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
                receiver = receiver.value
            if site.scope is scope and isinstance(receiver, cst.Name) and receiver.value == name.value:
                return True
    return False


def _called_activation(model, outputs: "Outputs", call: cst.Call) -> tuple[str, None] | None:
    """The softmax or sigmoid every output ``call`` may give ends in, as this file shows it."""
    names = set()
    for source in outputs.called(call):
        if source.kind == "cls" and source.element is None:
            info = model.class_named(source.name.rsplit(".", 1)[-1])
            forward = info.methods.get("forward") if info is not None else None
            ending = outputs.ending(forward) if forward is not None else None
            source = ending if isinstance(ending, Source) else None
        if source is None or source.kind != "act":
            return None
        names.add(source.name)
    if len(names) == 1 and (name := names.pop()) in ("softmax", "sigmoid"):
        return name, None
    return None


def returns_activation(ctx: "FileContext", forward: cst.FunctionDef) -> str | None:
    """The activation every ``return`` of ``forward`` gives as its whole value (not its
    nested functions'): an activation's output, or an ``nn.Sequential``'s ending in one."""
    ending = Outputs.of(ctx).ending(forward)
    found = ending.name if isinstance(ending, Source) and ending.kind == "act" else None
    return found if found not in NOT_ACTIVATIONS else None


def loss_input(call: cst.Call) -> cst.Arg | None:
    """The argument a loss call takes its input from: the first positional one, or ``input=``."""
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0]
    return keyword_arg(call, "input")


def loss_target(call: cst.Call) -> cst.Arg | None:
    """The argument a loss call takes its target from: the second positional one, or ``target=``."""
    if len(call.args) > 1 and all(a.keyword is None and not a.star for a in call.args[:2]):
        return call.args[1]
    return keyword_arg(call, "target")


def class_endings(outputs: Outputs) -> dict:
    """The file's classes with a ``forward`` whose ending is known: class key -> ``ending_json``
    (the ``ends`` facts a rule keeps for ``ProjectOutputs``)."""
    ends = {}
    for info in outputs.model.classes.values():
        forward = info.methods.get("forward")
        ending = outputs.ending(forward) if forward is not None else None
        if ending is not None:
            ends[class_key(info)] = ending_json(ending)
    return ends


# -- the project pass ------------------------------------------------------------------------

class ProjectOutputs:
    """What sources stand for across the project, from the facts each file keeps under
    ``code`` (``ends``: class name in the file -> ``ending_json`` of its ``forward``; ``uses``;
    ``calls``: ``Outputs.calls_made``). A file the rule did not run on (its text showed no
    activation or loss) has them on demand (``Project.demand``), asked where they matter: of a
    file another one calls with a model or loss (``with_uses``), and of the files importing a
    function or class one of whose parameters holds one (``arguments``)."""

    def __init__(self, project, code: str, endings_on_demand: bool = False):
        """``endings_on_demand``: read the ending of a class defined in a file the rule did not
        run on from that file's facts on demand (a rule whose text pre-check a model's file may
        not pass: one ending in a Linear layer names no loss or activation)."""
        self.project, self.code = project, code
        self.endings_on_demand = endings_on_demand
        self._calls: dict[tuple[str, str], list] = {}
        self._ends: dict[str, Ending | None] | None = None

    def facts(self, record) -> dict:
        """The file's facts: those of the ordinary pass (kept even when empty, so a file the
        rule ran on is never analysed again for them), else those on demand."""
        found = record.facts.get(self.code)
        if found is None and record.parsed:
            found = self.project.demand(self.code, record.path)
        return found if isinstance(found, dict) else {}

    def with_uses(self) -> list:
        """The records whose loss calls are to be judged: every file the rule ran on, and the
        project files called from them with a model or loss."""
        out = {r.path: r for r in self.project.records if self.code in r.facts}
        for record in list(out.values()):
            for callee, _ in record.facts[self.code].get("calls", ()):
                hit = self.project.resolve_symbol(callee, record)
                if hit is not None and hit[0].path not in out:
                    out[hit[0].path] = hit[0]
        return [out[path] for path in sorted(out)]

    @property
    def ends(self) -> dict[str, Ending | None]:
        if self._ends is None:
            self._ends = {}
            for record in self.project.records:
                for qual, data in ((record.facts.get(self.code) or {}).get("ends") or {}).items():
                    self._ends[record.qualified(qual)] = ending_from_json(data)
        return self._ends

    def activations(self, source: Source, record, depth: int = 0) -> Iterator[tuple[str, Source]]:
        """(activation, what it came out of: an ``act`` source, or the ``cls`` source naming
        the model whose forward ends in it) for each way ``source`` (of the file ``record``)
        is an activation's output."""
        if depth > _MAX_DEPTH:
            return
        if source.kind == "act":
            yield source.name, source
        elif source.kind == "cls":
            name = self.project.resolve_class(source.name, record)
            if name is None:
                return
            owner, ending = self._ending(name)
            got = element_of(ending, source.element)
            if got is None:
                return
            for kind, _ in self.activations(got, owner, depth + 1):
                yield kind, Source("cls", name, source.element)
        elif source.kind == "arg":
            for caller, held, _ in self.arguments(source, record):
                for s in held:
                    yield from self.activations(s.at(source.element), caller, depth + 1)

    def loss(self, wants, record) -> str | None:
        """What a loss wants (a kind, or the ``arg`` source of the parameter it comes from):
        the one kind every caller's argument wants."""
        if isinstance(wants, str):
            return wants
        found = {w for _, _, w in self.arguments(wants, record)}
        return found.pop() if len(found) == 1 and None not in found else None

    def _ending(self, name: str):
        """(the record defining it, the ending) of the forward class ``name`` runs: its own
        or the nearest ancestor's (with ``endings_on_demand``, from the defining file's facts on
        demand where the rule did not run on it)."""
        for cls in [name, *self.project.ancestors(name)]:
            found = self.project.class_fact(cls)
            if found is None:
                return None, None  # an external base: its forward is unknown
            if "forward" in found[1]["methods"]:
                ending = self.ends.get(cls)
                if ending is None and self.endings_on_demand and self.code not in found[0].facts:
                    # the rule did not run on that file (its text showed nothing to report there)
                    for qual, data in (self.facts(found[0]).get("ends") or {}).items():
                        if found[0].qualified(qual) == cls:
                            ending = ending_from_json(data)
                return found[0], ending
        return None, None

    def arguments(self, source: Source, record) -> Iterator[tuple[object, list[Source], str | None]]:
        """(calling record, model sources, loss wanted) of what each call in another file of
        the function or class ``source`` names (defined in ``record``) passes for its parameter."""
        for caller, args in self._callers(record, source.name):
            for where, held, wants in args:
                if where == source.param or where == source.index:
                    yield caller, [Source.from_json(s) for s in held], wants

    def _callers(self, record, name: str) -> list:
        key = (record.path, name)
        found = self._calls.get(key)
        if found is not None:
            return found
        found = self._calls[key] = []
        project = self.project
        for other in self.project.importers(record):
            for callee, args in self.facts(other).get("calls", ()):
                hit = project.resolve_symbol(callee, other)
                if hit is not None and hit[0] is record and hit[1] == name:
                    found.append((other, args))
        return found

