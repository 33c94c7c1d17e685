"""What a function does that decides whether an evaluation records autograd: ``eval()``
switches, forward calls, resets, what is differentiated.

* ``scan_body(ctx, node, function, keys=None)``: ``BodyEvents``, the events of one function /
  module body in walk order (comprehensions belong to theirs, nested scopes are not entered):
  eval events (``k.eval()``, ``k.train(False)``, ``k = Net().eval()``), forwards of an eval'd
  key (``k(...)``, ``k.forward(...)``, a submodule or forward-like method), calls of same-file
  helpers that may forward one, resets (``k.train()``, rebinding, a call that may train or
  freeze ``k``), what builds each key (and whether it is a parameter-free layer), what
  backward / ``autograd.grad`` differentiate, gradient checkpointing switched on, the first
  plain ``torch.set_grad_enabled(...)`` statement, and whether input gradients are asked for.
* ``module_evals(ctx, model)``: models put in eval mode by a statement of the module body
  (a script's or notebook's ``model.eval()``) and never put back in training mode or rebound
  after it anywhere in the file: every function the module calls after it evaluates them.
* ``few_examples(expr)``: an input that is one example or a handful picked by a literal
  (``x[0, None]``, ``x[3].unsqueeze(0)``, ``x[:8]``, through ``.to(dev)``): a forward of it
  records a graph too small to matter; ``few_examples_made_at`` says where that handful was
  made, and ``fixed_few_examples(expr, loops, model)`` whether a loop forwards the same
  handful, made before it, on every pass (an equivariance check: ``net(x.transform(g))``).
* ``runs_without_grad_in_eval(ctx, function)``: a method that, called on its module in
  evaluation mode, runs everything it does with the module under a grad-mode choice that is
  off then (``grad_state.grad_mode_at(..., training=False)``): ``@torch.no_grad()``, a ``with
  torch.no_grad():`` around its whole body, ``torch.enable_grad() if (self.fine_tune and
  self.training) else torch.no_grad()``; ``eval_no_grad_methods(ctx)`` lists the file's such
  methods (``function_key``), a fact the project pass matches a forward's callee against.
* ``is_test_function(function)`` and ``checked_by_assertion(ctx, flow, call)``: a test by its
  name (``test_*``, ``*_test``, as pytest collects them) whose forward's value reaches an
  assertion (``assert``, ``torch.testing.assert_close``, ``np.testing.assert_allclose``,
  ``self.assertEqual``): a check run once on the sample it is given, like a test file's.
* ``differentiating_functions(model)``: the file's functions returning, as an output, a
  gradient they take with ``torch.autograd.grad`` (a force field's forces, not a gradient
  penalty); ``output_position(ctx, expr)`` and ``returned_as_output(ctx, function, call)``
  are the two steps of that test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.constructors import bound_key
from torchlint.semantic.dataflow import gradient_target, single_value
from torchlint.semantic.epochs import range_arguments
from torchlint.semantic.grad_state import Grad, grad_mode_at
from torchlint.semantic.gradmode import function_key
from torchlint.semantic.training import grad_mode_exprs_of
from torchlint.semantic.literals import numeric_value
from torchlint.statements import dotted_name
from torchlint.torch_api import (expr_key, is_false_literal, is_grad_mode_call, is_parameter_free_layer, keyword_arg,
                                 mode_switch)
from torchlint.tree import iter_nodes, unpack_targets

# ``k.<attr>(...)`` that runs (part of) ``k``'s forward: a submodule or a forward-like method.
_FORWARD_ATTR = re.compile(r"^(model|net|network|generator|discriminator|encoder|decoder|backbone|neck|head|"
                           r"classifier|embeddings?|features|stem|trunk|transformer|actor|critic|policy|q_?net|"
                           r"value_?net|forward_\w+|get_action\w*|get_value|"
                           # layers by their usual names (torchvision's ResNet: conv1, bn1, layer1, fc)
                           r"conv\d*|bn\d*|fc\d*|layer\d+|linear\d*|lstm|gru|rnn|avgpool|maxpool|"
                           r"(?:pos_|tok_|word_)?embed(?:ding)?s?)$")
# Calls that return a derivative (``semantic.dataflow`` has its own table: calls whose first argument is differentiated).
_GRADIENT_CALLS = frozenset(("torch.autograd.grad", "torch.autograd.functional.jacobian",
                            "torch.autograd.functional.hessian", "torch.func.grad"))


@dataclass
class BodyEvents:
    """What one function / module body does, in walk order (``index``)."""

    node: cst.CSTNode
    function: cst.FunctionDef | None
    evals: list = field(default_factory=list)  # (index, key, eval Call)
    eval_keys: set = field(default_factory=set)
    forwards: list = field(default_factory=list)  # (index, key, forward Call, what is called)
    helpers: list = field(default_factory=list)  # (index, Call) of plain and ``self.`` calls
    resets: dict = field(default_factory=dict)  # key -> [index]: back in (maybe) training mode, rebound
    built: dict = field(default_factory=dict)  # key -> [(index, is a parameter-free layer)]
    grad_exprs: list = field(default_factory=list)  # what backward / autograd.grad differentiate
    grad_wanted: set = field(default_factory=set)  # keys with gradient checkpointing switched on
    set_grad_at: int | None = None  # first plain torch.set_grad_enabled(...) statement
    wants_input_grad: bool = False  # x.requires_grad_(), randn(..., requires_grad=True)

    def reset(self, key: str, index: int) -> None:
        self.resets.setdefault(key, []).append(index)

    def parameter_free(self, key: str, before: int) -> bool:
        """Whether ``key`` was last built, before event ``before``, as nn.Dropout / DropPath /
        pooling: no parameters, nothing recorded."""
        made = [free for at, free in self.built.get(key, ()) if at < before]
        return bool(made) and made[-1]


def scan_body(ctx, node: cst.CSTNode, function: cst.FunctionDef | None, keys: set[str] | None = None) -> BodyEvents:
    """The events of one body (``node``; ``function``: the def it is, if any); ``keys``:
    forwards of these count without an eval (a helper handed an eval'd model)."""
    body = BodyEvents(node, function, eval_keys=set(keys or ()))
    returns_loss = function is not None and function.name.value == "training_step"
    for index, item in enumerate(iter_nodes(node, into_scopes=False)):
        if isinstance(item, cst.Call):
            _scan_call(ctx, body, index, item)
        elif isinstance(item, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            _scan_assign(ctx, body, index, item)
        elif isinstance(item, (cst.For, cst.Del)):
            _rebind(body, index, item.target)
        elif isinstance(item, cst.WithItem) and item.asname is not None:
            _rebind(body, index, item.asname.name)
        elif isinstance(item, cst.NamedExpr):
            _rebind(body, index, item.target)
        elif isinstance(item, cst.Return) and returns_loss and item.value is not None:
            body.grad_exprs.append(item.value)  # Lightning backward-s training_step's loss
    return body


def _scan_call(ctx, body: BodyEvents, index: int, node: cst.Call) -> None:
    """One call: input gradients asked for, an eval or train switch, a backward, a
    forward of an eval'd key, or a call that may train, choose the grad mode or forward."""
    func = node.func
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad" and not is_false_literal(arg.value):
            body.wants_input_grad = True  # torch.randn(..., requires_grad=True)
    mode = mode_switch(node)
    if mode is not None:
        _scan_mode_switch(ctx, body, index, node, mode)
        return
    target = gradient_target(ctx, node)
    if target is not None:
        body.grad_exprs.append(target)
        return
    if isinstance(func, cst.Attribute):
        attr, owner = func.attr.value, expr_key(func.value)
        if owner in body.eval_keys and (attr == "forward" or _FORWARD_ATTR.match(attr)):
            body.forwards.append((index, owner, node, owner if attr == "forward" else f"{owner}.{attr}"))
            return
        _scan_method(ctx, body, index, node, attr)
    key = expr_key(func)
    if key is None:
        return
    if key in body.eval_keys:
        body.forwards.append((index, key, node, key))
        return
    _scan_other_call(ctx, body, index, node, key)


def _scan_mode_switch(ctx, body: BodyEvents, index: int, node: cst.Call, mode: bool) -> None:
    """``k.eval()``/``k.train(False)`` (also ``k = Net().eval()``): an eval event;
    ``k.train()``: ``k`` back in training mode."""
    key = expr_key(node.func.value)
    if mode is False:
        key = key if key is not None else bound_key(ctx, node, chained=True)  # ``k = Net().to(dev).eval()``
        if key is not None:
            body.evals.append((index, key, node))
            body.eval_keys.add(key)
    elif key is not None:
        body.reset(key, index)


def _scan_other_call(ctx, body: BodyEvents, index: int, node: cst.Call, key: str) -> None:
    """A plain ``torch.set_grad_enabled(...)`` statement, a call that may train what it
    is passed (``train_one_epoch(model)``, ``trainer.fit(model)``), or a helper that may
    forward an eval'd key itself."""
    qualified = ctx.qualified_name(node.func) or key
    if qualified.rsplit(".", 1)[-1] == "set_grad_enabled" and is_grad_mode_call(ctx, node):
        if not isinstance(ctx.parent(node), cst.WithItem) and body.set_grad_at is None:
            body.set_grad_at = index
        return
    last = key.rsplit(".", 1)[-1].lower()
    if ("train" in last or "fit" in last or "freeze" in last) and not qualified.startswith("torch."):
        for arg in node.args:
            arg_key = expr_key(arg.value)
            if arg_key is not None:
                body.reset(arg_key, index)
    elif isinstance(node.func, cst.Name) or key.count(".") == 1:
        body.helpers.append((index, node))


def _scan_method(ctx, body: BodyEvents, index: int, node: cst.Call, attr: str) -> None:
    """``x.requires_grad_()``, ``m.set_grad_checkpointing()``, ``m.train_epoch()``, ``m.freeze()``."""
    receiver = node.func.value
    if attr == "requires_grad_" and not (node.args and is_false_literal(node.args[0].value)) \
            and not _over_parameters(ctx, receiver):
        body.wants_input_grad = True
    if "checkpointing" in attr:  # set_grad_checkpointing(), gradient_checkpointing_enable()
        key = expr_key(receiver)
        if key is not None:
            body.grad_wanted.add(key)
    if attr.startswith(("train", "fit")) or "freeze" in attr or attr == "requires_grad_":
        key = expr_key(receiver)
        if key is not None:
            body.reset(key, index)


def _over_parameters(ctx, receiver: cst.BaseExpression) -> bool:
    """``p`` of ``for p in model.layer4.parameters():``: a parameter unfrozen, not an input
    asking for its gradient."""
    if not isinstance(receiver, cst.Name):
        return False
    for anc in ctx.ancestors(receiver):
        if isinstance(anc, (cst.For, cst.CompFor)) and receiver.value in {
                n.value for n in iter_nodes(anc.target) if isinstance(n, cst.Name)}:
            return any(isinstance(n, cst.Attribute) and n.attr.value in ("parameters", "named_parameters")
                       for n in iter_nodes(anc.iter))
    return False


def _scan_assign(ctx, body: BodyEvents, index: int, node: cst.Assign | cst.AnnAssign | cst.AugAssign) -> None:
    value = node.value
    if value is None:
        return
    keys: set[str] = set()
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    for t in targets:
        _target_keys(t, keys)
        if isinstance(t, cst.Attribute) and t.attr.value == "requires_grad" and not is_false_literal(value):
            body.wants_input_grad = True
    root = expr_key(_chain_root(value))
    param_free = _builds_parameter_free_layer(ctx, value)
    for key in keys:
        if key != root:
            body.reset(key, index)
            body.built.setdefault(key, []).append((index, param_free))


def _rebind(body: BodyEvents, index: int, target: cst.BaseExpression) -> None:
    for key in _target_keys(target, set()):
        body.reset(key, index)


def _target_keys(target: cst.BaseExpression, out: set[str]) -> set[str]:
    """Keys of what an assignment rebinds; ``xs[i] = ...`` counts as rebinding ``xs``."""
    for leaf in unpack_targets(target):
        while isinstance(leaf, cst.Subscript):
            leaf = leaf.value
        key = dotted_name(leaf)
        if key is not None:
            out.add(key)
    return out


def _chain_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``model`` for ``model.to(dev).eval()``: the receiver under a chain of method calls."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        expr = expr.func.value
    return expr


def _builds_parameter_free_layer(ctx, expr: cst.BaseExpression) -> bool:
    """``nn.Dropout(0.5)``, ``DropPath(0.1).eval()``, ``nn.ReLU().to(dev)``."""
    while isinstance(expr, cst.Call):
        if is_parameter_free_layer(ctx, expr.func):
            return True
        if not isinstance(expr.func, cst.Attribute):
            return False
        expr = expr.func.value
    return False


# Words without one of which no grad-mode choice is written (``grad_state.decides``).
_CHOICE_WORDS = ("no_grad", "inference_mode", "grad_enabled", "enable_grad")


def runs_without_grad_in_eval(ctx, function: cst.FunctionDef) -> bool:
    """Whether ``function``, a method called on its module while that is in evaluation mode
    (``self.training`` False: after ``model.eval()``), records no graph of that module: every
    call it makes and every read of ``self`` (nested functions not entered) runs where autograd
    is off then (``grad_state.grad_mode_at(ctx, node, training=False)``: a ``@torch.no_grad()``
    decorator, a ``with torch.no_grad():`` around the whole body, a context chosen on
    ``self.training``: ``torch.enable_grad() if (self.fine_tune and self.training) else
    torch.no_grad()``), apart from what makes the choice itself (the ``with`` items and the
    values of the names they enter). A method that calls anything or reads ``self`` outside
    such a choice (``tensors = self.prepare(x)`` before the ``with``) may record: False."""
    model = ctx.semantic.model
    scope = model.scopes.get(function)
    if scope is None or scope.self_name is None:
        return False
    memo = model.memo("runs_without_grad_in_eval")
    if function in memo:
        return memo[function]
    written = model.memo("grad_choice_written")  # the file's text, read once (not once per method)
    if "" not in written:
        written[""] = any(word in ctx.text for word in _CHOICE_WORDS)
    if not written[""]:
        return False
    choosing: set[cst.CSTNode] = set()
    for node in _withs_in(model).get(function, ()):
        for expr in grad_mode_exprs_of(model, node):
            choosing.update(iter_nodes(expr))
    found = False
    result = True
    for node in iter_nodes(function.body, into_scopes=False):
        if node in choosing or not (isinstance(node, cst.Call) or isinstance(node, cst.Name)
                                    and node.value == scope.self_name):
            continue
        if grad_mode_at(ctx, node, training=False).state is not Grad.DISABLED:
            result = False
            break
        found = True
    memo[function] = answer = result and found
    return answer


def _withs_in(model) -> dict[cst.CSTNode, list[cst.With]]:
    """The file's ``with`` statements by the function (class, module) whose own code holds
    them, nested functions and classes not entered: what ``iter_nodes(function.body,
    into_scopes=False)`` finds of them, for every function at once (``memo``)."""
    memo = model.memo("withs_in")
    table = memo.get(None)
    if table is None:
        table = memo[None] = {}
        for node in model.nodes_of(cst.With):
            table.setdefault(model.scope_of(node).node, []).append(node)
    return table


def eval_no_grad_methods(ctx) -> list[str]:
    """The methods of the file (``function_key``: ``Class.method``) that record no graph of
    their module while it is in evaluation mode: ``runs_without_grad_in_eval``, and an abstract
    stub a subclass overrides (a body of a docstring, ``pass``, ``...`` or ``raise`` alone: an
    instance that runs it records nothing)."""
    model = ctx.semantic.model
    found = set()
    for scope in model.functions():
        node = scope.node
        if isinstance(node, cst.FunctionDef) and scope.cls is not None \
                and (_stub(node) or runs_without_grad_in_eval(ctx, node)):
            key = function_key(model, node)
            if key is not None:
                found.add(key)
    return sorted(found)


# Assertion calls: what they are given is checked (``checked_by_assertion``).
_ASSERTIONS = frozenset(("assert_close", "assert_allclose", "assert_equal", "assert_array_equal",
                         "assert_almost_equal", "assert_array_almost_equal", "assertEqual", "assertTrue",
                         "assertAlmostEqual", "assertAllClose"))


def is_test_function(function: cst.FunctionDef) -> bool:
    """A test by its name, as pytest collects one: ``test_*`` or ``*_test`` (not ``test`` alone,
    nor ``test_model``-style names without an assertion: ``checked_by_assertion`` is asked too)."""
    name = function.name.value
    return name.startswith("test_") or name.endswith("_test") and name != "_test"


def checked_by_assertion(ctx, flow, call: cst.Call) -> bool:
    """The value ``call`` computes reaches, in its function (``flow``: a ``dataflow.Flow``), the
    test of an ``assert`` statement or an assertion call (``torch.testing.assert_close(scripted,
    output)``, ``np.testing.assert_allclose``, ``self.assertEqual``): what it computes is
    checked, not used."""
    function = next((a for a in ctx.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    if function is None:
        return False
    sinks: set[cst.CSTNode] = set()
    for node in iter_nodes(function.body, into_scopes=False):
        if isinstance(node, cst.Assert):
            sinks.add(node.test)
        elif isinstance(node, cst.Call) and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in _ASSERTIONS:
            sinks.add(node)
    return flow.reaches(call, sinks)


def _stub(function: cst.FunctionDef) -> bool:
    """A body of a docstring, ``pass``, ``...`` and ``raise`` statements alone."""
    body = function.body
    lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for line in lines:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        for small in line.body:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString,
                                                                        cst.Ellipsis)):
                continue
            return False
    return True


def differentiating_functions(model) -> list[str]:
    """The functions and methods of the file (``function_key``) that return a gradient they take
    with ``torch.autograd.grad`` as one of their outputs (``return -1 * grad(e, pos)[0]``, also
    through a local): a model's output, such as a force field's forces, not a loss term (a
    gradient penalty reduced to a number, a detached adaptive weight)."""
    found = set()
    ctx = model.ctx
    for site in model.calls:
        if ctx.qualified_name(site.node.func) in _GRADIENT_CALLS:
            function = enclosing_function(model, site.scope)
            key = function_key(model, function)
            if key is not None and returned_as_output(ctx, function, site.node):
                found.add(key)
    return sorted(found)


def output_position(ctx, expr: cst.BaseExpression) -> cst.CSTNode | None:
    """What holds ``expr`` once it is indexed, negated, scaled by a number or put in a tuple."""
    node = expr
    while True:
        up = ctx.parent(node)
        if isinstance(up, cst.Subscript) and up.value is node or isinstance(up, cst.UnaryOperation) \
                or isinstance(up, cst.BinaryOperation) and isinstance(up.operator, (cst.Multiply, cst.Divide)) \
                and numeric_value(up.right if up.left is node else up.left) is not None:
            node = up
        elif isinstance(up, cst.Element) and isinstance(ctx.parent(up), (cst.Tuple, cst.List)):
            node = ctx.parent(up)
        else:
            return up


def returned_as_output(ctx, function: cst.CSTNode, call: cst.Call) -> bool:
    """Whether ``function`` returns what ``call`` computes as an output (``output_position``):
    directly, or through the one local name it is assigned to, returned as an output."""
    holder = output_position(ctx, call)
    if isinstance(holder, cst.Return):
        return True
    if not (isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name)):
        return False
    name = holder.targets[0].target.value
    return any(isinstance(node, cst.Name) and node.value == name and isinstance(output_position(ctx, node), cst.Return)
               for node in iter_nodes(function, into_scopes=False))


# Statements between a module-level eval call and the module: it runs whenever the module does.
_MODULE_STRAIGHT = (cst.Expr, cst.SimpleStatementLine, cst.Assign, cst.AnnAssign, cst.Attribute, cst.Call)


def module_evals(ctx, model) -> dict[str, cst.Call]:
    """``{key: eval call}``: what a statement of the module body puts in eval mode
    (``model.eval()``, ``model = Net().eval()``) that no code of the file puts back in training
    mode (``key.train()``, a ``train``/``fit``/``freeze`` call on it) and the module body does not
    rebind after it. The last such eval per key."""
    module = ctx.module
    body = scan_body(ctx, module, None)
    found: dict[str, cst.Call] = {}
    for index, key, call in body.evals:
        if key.startswith("self."):
            continue
        if not all(isinstance(a, _MODULE_STRAIGHT) or a is module for a in _ancestors_to(ctx, call, module)):
            continue  # under an if, in a loop: not always run
        if any(r > index for r in body.resets.get(key, ())):
            found.pop(key, None)
            continue
        found[key] = call
    if not found:
        return found
    for site in model.calls:  # back in training mode anywhere in the file
        call = site.node
        if mode_switch(call) is True and expr_key(call.func.value) in found:
            found.pop(expr_key(call.func.value), None)
    return found


def _ancestors_to(ctx, node: cst.CSTNode, stop: cst.CSTNode) -> list[cst.CSTNode]:
    out = []
    for anc in ctx.ancestors(node):
        out.append(anc)
        if anc is stop:
            break
    return out


_FEW = 16  # examples a literal slice may pick and still be "a handful"
_MOVES = frozenset(("to", "cuda", "cpu", "float", "half", "double", "contiguous", "unsqueeze", "view", "reshape"))
_DEPTH = 10  # names, wrappers and methods followed to the handful
# Attributes that hold the same examples (a geometric tensor's ``.tensor``).
_VIEWS = frozenset(("tensor", "data", "T", "mT"))
# Operators that keep the examples of their left operand (a mask, a scale, a shift).
_ELEMENTWISE = (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)
# Methods that make more examples of the ones they are given.
_GROWS = frozenset(("repeat", "expand", "expand_as", "repeat_interleave", "tile", "cat", "stack"))


def few_examples(expr: cst.BaseExpression, model=None, depth: int = 0) -> bool:
    """``expr`` is one example, or at most a few picked or written by literals: ``x[0, None]``,
    ``x[i][None]``, ``x[0].unsqueeze(0)``, ``x[:8]``, ``x[2:4]``, a batch of one made with
    ``.unsqueeze(0)`` or ``[None]`` (``transform(image).unsqueeze(0)``), a tensor written out
    in the code (``torch.tensor([[0, 2, 1]])``) or made with a literal shape of a handful of
    rows (``torch.randn(1, 1, 17, 17)``, ``torch.rand(size=(2, 20))``), also behind
    ``.to(device)``, ``.cuda()``, ``.float()`` (either side of the indexing) and ``Variable(...)``.
    Only the forms picked by literals count without the semantic ``model`` (a function may be
    called for every image of a folder: ``predict(image.unsqueeze(0))``); with it (code that
    runs once: a script's or notebook's module-level code), the others count too and a name is
    followed to the one value it holds (``dataflow.single_value``): ``x = torch.randn(1, 3, 8,
    8)`` then ``net(x)``, also wrapped by a call of one argument (``net(feat_type(x))``) or
    transformed by a method of its own that does not grow it (``x.transform(g)``, ``x.flip(-1)``;
    not ``x.repeat(64, 1)``). ``few_examples_made_at`` says where the handful was made."""
    return few_examples_made_at(expr, model, depth) is not None


def few_examples_made_at(expr: cst.BaseExpression, model=None, depth: int = 0) -> cst.CSTNode | None:
    """The node that makes ``expr`` a handful of examples (``few_examples``): the literal
    pick, the batch of one, or the tensor written out, after following names and wrappers
    (``x = torch.randn(1, 1, 17, 17)`` for ``net(x.transform(g))``); None when it is not
    one. A loop that forwards ``expr`` on each pass forwards the same handful each time when
    that node sits outside the loop (``fixed_few_examples``)."""
    node = _unwrapped(expr) if model is not None else expr
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES:
        if node.func.attr.value == "unsqueeze" and node.args and numeric_value(node.args[0].value) == 0:
            return node if model is not None or _indexed_by_literal(node.func.value, single=True) else None
        node = _unwrapped(node.func.value) if model is not None else node.func.value
    if _indexed_by_literal(node, single=False):
        return node
    if model is None:
        return None
    if _batch_of_one(node) or _written_out(node, model):
        return node
    if isinstance(node, cst.Subscript) and depth < _DEPTH:  # indexing a handful keeps a handful
        return few_examples_made_at(node.value, model, depth + 1)
    if isinstance(node, cst.Call) and depth < _DEPTH and len(node.args) == 1 and node.args[0].keyword is None \
            and not node.args[0].star and not (dotted_name(node.func) or "torch.").startswith("torch."):
        # wrapped: ``feat_type(x)``, ``transform(img)``
        found = few_examples_made_at(node.args[0].value, model, depth + 1)
        if found is not None:
            return found
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and depth < _DEPTH \
            and node.func.attr.value not in _GROWS and not (dotted_name(node.func) or "").startswith("torch."):
        return few_examples_made_at(node.func.value, model, depth + 1)  # ``x.transform(g)``: the same examples
    if isinstance(node, cst.BinaryOperation) and depth < _DEPTH and isinstance(node.operator, _ELEMENTWISE):
        return few_examples_made_at(node.left, model, depth + 1)  # ``x * mask``: masked, scaled, shifted
    if isinstance(node, cst.Attribute) and depth < _DEPTH and node.attr.value in _VIEWS:
        return few_examples_made_at(node.value, model, depth + 1)  # ``x.tensor``, ``x.data``: the same examples
    if depth < _DEPTH and isinstance(node, cst.Name):
        value = single_value(model, node)
        return few_examples_made_at(value, model, depth + 1) if value is not None else None
    return None


def made_up_examples(expr: cst.BaseExpression, model) -> bool:
    """``expr`` is a handful of examples the code writes out itself, whatever a caller hands
    in: a tensor of literal data or of a literal shape of a handful of rows (``_written_out``:
    ``torch.rand(1, 3, 299, 299)``), directly, behind ``.to(device)``-style calls or through a
    name holding only that (``x = torch.rand(1, 3, 299, 299)`` then ``model(x)``). A function
    forwarding one forwards the same made-up input on every call (a calibration or shape check
    on a dummy input), unlike ``predict(image.unsqueeze(0))``, whose examples its caller chooses."""
    node, depth = expr, 0
    while depth < _DEPTH:
        node = _unwrapped(node)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES \
                and node.func.attr.value not in ("view", "reshape"):
            node = node.func.value
        elif isinstance(node, cst.Name):
            value = single_value(model, node)
            if value is None:
                return False
            node = value
        else:
            return _written_out(node, model)
        depth += 1
    return False


def fixed_few_examples(expr: cst.BaseExpression, loops, model) -> bool:
    """In code that runs once (``model``: a script's or notebook's module-level code), ``expr``
    is a handful of examples (``few_examples``) made before ``loops``, outside every one of
    them: each pass forwards the same toy input, transformed at most (an equivariance check:
    ``x = torch.randn(1, 1, 17, 17)``, then ``for g in G.elements: net(x.transform(g))``). A
    handful made in the loop is not (``for img in folder: net(img.unsqueeze(0))`` forwards
    every image of the folder)."""
    made = few_examples_made_at(expr, model)
    if made is None:
        return False
    return not any(_inside(made, loop) for loop in loops)


def _inside(node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    return any(n is node for n in iter_nodes(loop))


def few_iterations(loops) -> bool:
    """Every loop of ``loops`` is a ``for`` over ``range`` of a handful of literal steps at most
    (``for k in range(10)``): code in them runs a handful of times."""
    for loop in loops:
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or dotted_name(loop.iter.func) != "range":
            return False
        bounds = range_arguments(loop.iter)
        if bounds is None or bounds[2] is not None:
            return False
        start, stop = (0 if bounds[0] is None else numeric_value(bounds[0])), numeric_value(bounds[1])
        if start is None or stop is None or not 0 <= stop - start <= _FEW:
            return False
    return True


# Wrappers that hand their argument on unchanged in size.
_WRAPPERS = frozenset(("Variable", "autograd.Variable", "torch.autograd.Variable"))
# torch functions that make a tensor of a literal shape, and those that take literal data.
_SHAPED = frozenset(("randn", "rand", "zeros", "ones", "empty", "randint", "full", "normal"))
_FROM_DATA = frozenset(("tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor",
                        "BoolTensor", "ByteTensor"))


def _unwrapped(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, cst.Call) and dotted_name(node.func) in _WRAPPERS and node.args:
        node = node.args[0].value
    return node


def _batch_of_one(node: cst.BaseExpression) -> bool:
    """``x[None]``, ``x[None, ...]``: a batch dimension of one added."""
    if not isinstance(node, cst.Subscript) or not node.slice:
        return False
    first = node.slice[0].slice
    return isinstance(first, cst.Index) and isinstance(first.value, cst.Name) and first.value.value == "None"


def _torch_last(node: cst.BaseExpression) -> str | None:
    name = dotted_name(node.func) if isinstance(node, cst.Call) else None
    if not name or not name.startswith("torch."):
        return None
    return name.rsplit(".", 1)[-1]


def _written_out(node: cst.BaseExpression, model) -> bool:
    """A torch tensor whose data is a literal list in the code, or whose literal shape has a
    handful of rows at most (a name holding one literal counts: ``bs = 2``)."""
    last = _torch_last(node)
    if last is None or not node.args:
        return False
    first = node.args[0].value
    if last in _FROM_DATA:
        return isinstance(first, (cst.List, cst.Tuple)) and 0 < len(first.elements) <= _FEW and all(
            not isinstance(e, cst.StarredElement) for e in first.elements)
    if last not in _SHAPED:
        return False
    given = keyword_arg(node, "size")
    if given is not None:
        size = given.value
    elif last in ("randint", "normal"):  # their first positionals are bounds or a mean, not the size
        size = None
    else:
        size = first if node.args[0].keyword is None else None
    if isinstance(size, (cst.Tuple, cst.List)):
        size = size.elements[0].value if size.elements else None
    if isinstance(size, cst.Name):
        size = single_value(model, size)
    rows = numeric_value(size) if size is not None else None
    return rows is not None and 0 < rows <= _FEW


def _indexed_by_literal(node: cst.BaseExpression, single: bool) -> bool:
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES:
        node = node.func.value
    if not isinstance(node, cst.Subscript) or not node.slice:
        return False
    first = node.slice[0].slice
    if isinstance(first, cst.Index):
        value = first.value
        if len(node.slice) > 1 or single:  # x[0, None], x[0].unsqueeze(0): one example
            return numeric_value(value) is not None or isinstance(value, cst.Name) and value.value != "None"
        if isinstance(value, cst.Name) and value.value == "None":
            return False
        # x[i][None]: one example of an indexed tensor
        return False
    if isinstance(first, cst.Slice) and first.step is None and first.upper is not None:
        upper, lower = numeric_value(first.upper), numeric_value(first.lower) if first.lower is not None else 0
        return upper is not None and lower is not None and 0 <= upper - lower <= _FEW
    return False
