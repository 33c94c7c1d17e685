"""TL002 loss-kept-with-graph: a tensor that carries an autograd graph is stored, every
iteration, in something that outlives the iteration.

How it works (one walk, then ``finish``):

* While the tree is walked, each function (and the module body, and each class body) records
  its assignments (with the order in which they complete), its backwards, and its *stores*:
  ``C.append(v)`` / ``C.extend(v)`` / ``C.insert(i, v)``, ``C += v`` and ``C = C + v``.
* A store is judged in its *iteration*: the innermost enclosing loop of its function that
  is a data loop (it does a backward or an optimizer step, or iterates over something named
  like a data loader), or, with no such loop, a per-step method (``training_step`` and the
  ``step-methods`` option), whose iteration is one call.
* The container must outlive that iteration: not (re)assigned, cleared or popped inside the
  data loop (for a per-step method: an attribute of ``self`` or a global, not reset in the
  method), and not a bounded ``deque(maxlen=...)``.
* The stored value must carry a graph: a name whose reaching assignment is ``.backward()``-ed
  in the same function, or the result of a loss function, a criterion or a model call, also
  through arithmetic, attribute/index access, graph-keeping methods (``.mean()``, ``.cpu()``)
  and tuple/list/dict displays; never through ``.item()``, ``.detach()``, ``float()``,
  ``.data``, ``.tolist()``, or anything computed under ``no_grad``/``inference_mode``.
* Not reported: containers whose contents are backward-ed later in the function (multi-task
  loss sums, micro-batch accumulation), Lightning evaluation hooks, and, when the evidence is
  only a model or criterion call, a function that neither backwards nor steps an optimizer
  unless this file calls it outside no-grad (its callers elsewhere may disable autograd).
  Files that import another framework (TensorFlow, JAX, scikit-learn, ...) and no torch
  library are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchlint.context import dotted_name, iter_nodes, referenced_names, unpack_targets
from torchlint.finding import Severity
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.torch_api import (
    backward_target,
    expr_key,
    in_no_grad,
    is_detached,
    is_grad_mode_call,
    is_lightning_eval_hook,
    is_loss_constructor,
    is_loss_function,
    is_model_constructor,
    looks_like_criterion_name,
    looks_like_model_name,
    step_optimizer,
)

_STORE_METHODS = {"append": 0, "extend": 0, "appendleft": 0, "insert": 1}
# Calls that shrink or empty a container: it does not grow without bound.
_BOUNDING_METHODS = {"clear", "pop", "popleft", "popitem", "remove"}
# Methods whose result keeps the receiver's graph.
_GRAPH_METHODS = {
    "mean", "sum", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "view", "reshape", "squeeze",
    "unsqueeze", "clone", "contiguous", "abs", "pow", "sqrt", "exp", "log", "flatten", "permute", "transpose",
    "sigmoid", "softmax", "log_softmax", "tanh", "relu", "mul", "div", "add", "sub", "neg", "norm", "prod",
    "expand", "repeat", "chunk", "split", "unbind", "type_as", "masked_fill", "narrow", "t",
}
# torch functions (first argument) whose result keeps the argument's graph.
_GRAPH_FUNCTIONS = {
    "sigmoid", "softmax", "log_softmax", "exp", "log", "tanh", "abs", "mean", "sum", "squeeze", "flatten",
    "relu", "stack", "cat", "clone", "sqrt", "square", "neg",
}
# Attributes that are not tensors sharing the graph (``.data`` is detached).
_NON_GRAPH_ATTRIBUTES = {
    "shape", "dtype", "device", "ndim", "data", "grad", "requires_grad", "is_cuda", "is_leaf", "names", "layout",
    "grad_fn", "itemsize", "nbytes",
}
_DATA_ITERABLE = re.compile(r"loader|batches|dataset|^dl$|_dl$|data_?iter|train_?iter", re.IGNORECASE)
_FOREIGN_FRAMEWORKS = {"tensorflow", "keras", "jax", "flax", "sklearn", "mxnet", "paddle", "onnxruntime", "xgboost",
                       "lightgbm", "catboost"}
_TORCH_LIBRARIES = {"torch", "lightning", "pytorch_lightning", "transformers", "timm", "torchvision", "accelerate",
                    "lightning_fabric", "torchtune", "ignite", "skorch", "diffusers", "peft"}
_FOREIGN_MODEL_CALLS = {"pipeline", "InferenceSession", "load_model"}
# Text one of which a file needs for any value in it to count as carrying a graph.
_EVIDENCE_TEXT = ("backward", "autograd", "scaler", "oss", "kl_div", "criteri", "model", "net", "Net", "Module",
                  "generator", "discriminator", "self(", "forward")
_SCALER_CALL = re.compile(r"scaler$", re.IGNORECASE)
_MAX_DEPTH = 12


@dataclass(eq=False)
class _Def:
    key: str
    start: int
    end: int
    value: cst.BaseExpression | None
    node: cst.CSTNode
    kind: str  # "assign" | "aug" | "unpack" | "bind"


@dataclass(eq=False)
class _Store:
    kind: str  # "call" | "aug" | "add"
    node: cst.CSTNode  # the Call / AugAssign / Assign reported
    container: cst.BaseExpression
    key: str
    value: cst.BaseExpression
    order: int
    verb: str = ""


@dataclass(eq=False)
class _Scope:
    node: cst.CSTNode
    params: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    defs: dict[str, list[_Def]] = field(default_factory=dict)
    stores: list[_Store] = field(default_factory=list)
    # (target expression, call node, order) for every backward
    backwards: list[tuple[cst.BaseExpression, cst.CSTNode, int]] = field(default_factory=list)
    steps: list[cst.CSTNode] = field(default_factory=list)
    bounding: list[tuple[str, cst.CSTNode]] = field(default_factory=list)
    grad_off: list[int] = field(default_factory=list)
    pending: list = field(default_factory=list)  # open Assign/AugAssign/... awaiting their end order


def _root_chain(expr: cst.BaseExpression) -> list[str]:
    """Keys of ``expr`` and of every container it hangs from: ``self.hist["a"]`` gives
    ``['self.hist["a"]', 'self.hist', 'self']`` (simple keys only)."""
    out = []
    node = expr
    while True:
        key = expr_key(node)
        if key is not None:
            out.append(key)
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            break
    return out


def _root_name(expr: cst.BaseExpression) -> str | None:
    node = expr
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class LossKeptWithGraph(Rule):
    code = "TL002"
    name = "loss-kept-with-graph"
    severity = Severity.WARNING
    default_enabled = True
    summary = "A loss or model output with its autograd graph is stored across iterations: memory grows every step"
    options = {
        "step-methods": Option(
            ["training_step", "train_step", "train_batch"],
            list,
            "methods and functions that run once per training batch with autograd on; what they store in "
            "`self` attributes or globals outlives the step",
            item_kind=str,
        ),
    }
    requires_text = ("append", "extend", "insert", "+")

    VALID = [
        # The fixed loop: store the number.
        """
        import torch
        import torch.nn as nn
        def train(model, loader, optimizer):
            criterion = nn.CrossEntropyLoss()
            losses = []
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
        """,
        # .detach(), float(), .tolist(), .cpu().numpy(), .detach().cpu(), .data, .item() * n.
        """
        import torch.nn.functional as F
        def train(model, loader, opt, history):
            total = 0.0
            seen = 0
            for x, y in loader:
                logits = model(x)
                loss = F.cross_entropy(logits, y)
                loss.backward()
                opt.step()
                history["loss"].append(loss.detach())
                history["f"].append(float(loss))
                history["l"].append(logits.tolist())
                history["np"].append(logits.cpu().numpy())
                history["cpu"].append(loss.detach().cpu())
                total += loss.data
                seen += loss.item() * x.size(0)
        """,
        # Computed under no_grad / inference_mode, or in a decorated function.
        """
        import torch
        @torch.no_grad()
        def predict(model, loader):
            outs = []
            for x in loader:
                outs.append(model(x))
            return outs
        def evaluate(model, loader, criterion):
            total = 0
            with torch.inference_mode():
                for x, y in loader:
                    total += criterion(model(x), y)
            preds = []
            for x, y in loader:
                with torch.no_grad():
                    out = model(x)
                preds.append(out)
            return total, preds
        """,
        # Multi-task loss sum backward-ed afterwards; micro-batch accumulation.
        """
        def train(model, loader, heads, criterion, opt):
            for x, y in loader:
                total = 0
                for head in heads:
                    total = total + criterion(head(model(x)), y)
                total.backward()
                opt.step()
            acc = 0
            for i, (x, y) in enumerate(loader):
                acc += criterion(model(x), y)
            (acc / len(loader)).backward()
        """,
        # torchtune-style accumulation window: reset in the same loop after the step.
        """
        class Recipe:
            def train(self, loader, accum):
                running_loss = 0
                for idx, batch in enumerate(loader):
                    current_loss = self._loss_fn(self._model(batch), batch["labels"])
                    running_loss += current_loss
                    if (idx + 1) % accum == 0:
                        self._optimizer.step()
                        self._optimizer.zero_grad()
                        running_loss = 0
        """,
        # A list created inside the loop body each iteration does not outlive it.
        """
        def train(model, loader, criterion, opt):
            for x, y in loader:
                parts = []
                for chunk in x.split(4):
                    parts.append(model(chunk))
                loss = criterion(sum(parts), y)
                loss.backward()
                opt.step()
        """,
        # Lightning: self.log, validation_step (runs under no_grad), stored detached.
        """
        import lightning as L
        import torch.nn.functional as F
        class Model(L.LightningModule):
            def training_step(self, batch, batch_idx):
                x, y = batch
                loss = F.cross_entropy(self(x), y)
                self.log("train_loss", loss)
                self.log_dict({"loss": loss})
                self.train_losses.append(loss.detach())
                return loss
            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.val_outputs.append(F.cross_entropy(self(x), y))
        """,
        # Plain Python numbers; comparisons and argmax carry no graph.
        """
        def train(model, loader, opt, criterion):
            correct = 0
            steps = []
            for i, (x, y) in enumerate(loader):
                logits = model(x)
                loss = criterion(logits, y)
                loss.backward()
                opt.step()
                correct += (logits.argmax(1) == y).sum()
                steps.append(i)
                steps.append(logits.argmax(dim=1))
        """,
        # The name was rebound to a number before being stored.
        """
        def train(model, loader, opt, criterion):
            losses = []
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                opt.step()
                loss = loss.item()
                losses.append(loss)
        """,
        # A forward over layers: not a data loop, the list is returned to the caller.
        """
        import torch
        class Net(torch.nn.Module):
            def forward(self, x):
                feats = []
                for block in self.blocks:
                    x = self.model(x)
                    feats.append(x)
                return torch.cat(feats)
        """,
        # A bounded window: the list is popped in the loop.
        """
        def train(model, loader, opt, criterion):
            window = []
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                opt.step()
                window.append(loss)
                if len(window) > 10:
                    window.pop(0)
        """,
        # An inference helper nobody here calls (its caller may disable autograd), and one
        # this file only calls under no_grad.
        """
        import torch
        def collect_outputs(model, loader, criterion):
            outs, total = [], 0
            for x, y in loader:
                out = model(x)
                outs.append(out)
                total += criterion(out, y)
            return outs, total
        def run_eval(model, loader):
            outs = []
            for x in loader:
                outs.append(model(x))
            return outs
        def main(model, loader):
            with torch.no_grad():
                run_eval(model, loader)
        """,
        # A frozen feature extractor and an EMA/teacher model carry no graph.
        """
        def extract(model, teacher, ema_model, loader):
            model.requires_grad_(False)
            feats, soft, smooth = [], [], []
            for x in loader:
                feats.append(model(x))
                soft.append(teacher(x))
                smooth.append(ema_model(x))
        """,
        # A collected list of losses backward-ed together later.
        """
        import torch
        def train(model, loader, criterion, opt):
            losses = []
            for x, y in loader:
                losses.append(criterion(model(x), y))
            torch.stack(losses).mean().backward()
            opt.step()
        """,
        # An accumulator backward-ed through a scaler and a training_step that resets it.
        """
        class Trainer:
            def training_step(self, batch):
                self.outputs = []
                self.outputs.append(self.model(batch))
                loss = self.criterion(self.outputs[0], batch)
                return loss
        def fit(model, loader, criterion, scaler, opt):
            total = 0
            for x, y in loader:
                total = total + criterion(model(x), y)
            scaler.scale(total).backward()
            scaler.step(opt)
        """,
        # Not torch models: a Hugging Face pipeline (runs without autograd) and a Keras file.
        """
        from transformers import pipeline
        model = pipeline("text-classification")
        results = []
        for text in dataset:
            results.append(model(text))
        """,
        """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        loss_fn = tf.keras.losses.MeanSquaredError()
        outs = []
        for x, y in dataset:
            outs.append(model(x))
            outs.append(loss_fn(y, model(x)))
        """,
    ]

    INVALID = [
        # Lightning manual optimization: training_step runs once per batch.
        Invalid(
            """
            import lightning as L
            class GAN(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False
                    self.g_losses = []
                def training_step(self, batch, batch_idx):
                    opt_g, opt_d = self.optimizers()
                    g_loss = self.generator_loss(batch)
                    opt_g.zero_grad()
                    self.manual_backward(g_loss)
                    opt_g.step()
                    self.g_losses.append(g_loss)
            """,
            lines=(14,),
            messages=(
                "`self.g_losses.append(g_loss)` keeps each training step's autograd graph alive, so memory "
                "grows every step; store `g_loss.item()` (or `g_loss.detach()`) instead",
            ),
        ),
        # The fixture's bug.
        Invalid(
            """
            import torch.nn as nn
            def train(model, loader, optimizer):
                criterion = nn.CrossEntropyLoss()
                losses = []
                for x, y in loader:
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    losses.append(loss)
                return losses
            """,
            lines=(11,),
            messages=(
                "`losses.append(loss)` keeps each iteration's autograd graph alive, so memory grows every "
                "step; store `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # total += loss with the accumulator reset only per epoch.
        Invalid(
            """
            def train(model, loader, opt, loss_fn, epochs):
                for epoch in range(epochs):
                    running_loss = 0.0
                    for x, y in loader:
                        opt.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        opt.step()
                        running_loss += loss
                    print(running_loss / len(loader))
            """,
            lines=(10,),
            messages=(
                "`running_loss += loss` keeps each iteration's autograd graph alive, so memory grows every "
                "step; accumulate `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # total = total + loss.
        Invalid(
            """
            def train(model, loader, opt):
                total = 0
                for x in loader:
                    loss = model(x).mean()
                    loss.backward()
                    opt.step()
                    total = total + loss
                return total
            """,
            lines=(8,),
            messages=(
                "`total = total + loss` keeps each iteration's autograd graph alive, so memory grows every "
                "step; accumulate `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # Logits kept in a dict of lists; a functional loss value.
        Invalid(
            """
            import torch.nn.functional as F
            from collections import defaultdict
            def train(net, loader, opt):
                d = defaultdict(list)
                for x, y in loader:
                    logits = net(x)
                    loss = F.cross_entropy(logits, y)
                    loss.backward()
                    opt.step()
                    d["k"].append(logits)
                    d["loss"].append(F.mse_loss(logits, y))
            """,
            lines=(11, 12),
            messages=(
                '`d["k"].append(logits)` keeps each iteration\'s autograd graph alive, so memory grows every '
                "step; store `logits.detach()` instead",
                '`d["loss"].append(F.mse_loss(logits, y))` keeps each iteration\'s autograd graph alive, so '
                "memory grows every step; store `F.mse_loss(logits, y).item()` (or "
                "`F.mse_loss(logits, y).detach()`) instead",
            ),
        ),
        # A history attribute in a trainer method.
        Invalid(
            """
            class Trainer:
                def fit(self, loader):
                    for batch in loader:
                        self.optimizer.zero_grad()
                        loss = self.compute_loss(batch)
                        loss.backward()
                        self.optimizer.step()
                        self.history.append(loss)
            """,
            lines=(9,),
            messages=(
                "`self.history.append(loss)` keeps each iteration's autograd graph alive, so memory grows "
                "every step; store `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # Lightning training_step storing its loss in an attribute (runs once per batch).
        Invalid(
            """
            import lightning as L
            import torch.nn.functional as F
            class Model(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    loss = F.cross_entropy(self(x), y)
                    self.training_step_outputs.append(loss)
                    return loss
            """,
            lines=(8,),
            messages=(
                "`self.training_step_outputs.append(loss)` keeps each training step's autograd graph alive, "
                "so memory grows every step; store `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # Model outputs collected in an inference loop outside no_grad; .cpu() keeps the graph.
        Invalid(
            """
            def predict(model, loader):
                model.eval()
                preds = []
                for x in loader:
                    preds.append(model(x).cpu())
                return preds
            def main(model, loader):
                predict(model, loader)
            """,
            lines=(6,),
            messages=(
                "`preds.append(model(x).cpu())` keeps each iteration's autograd graph alive, so memory grows "
                "every step; store `model(x).detach().cpu()` instead",
            ),
        ),
        # Manual optimization with accelerate-style backward; tuple with the loss.
        Invalid(
            """
            def train(accelerator, model, loader, opt):
                log = []
                step = 0
                while step < 1000:
                    batch = next(loader)
                    out = model(**batch)
                    accelerator.backward(out.loss)
                    opt.step()
                    log.append((step, out.loss))
                    step += 1
            """,
            lines=(10,),
            messages=(
                "`log.append((step, out.loss))` keeps each iteration's autograd graph alive, so memory grows "
                "every step; store detached values (`.detach()`, or `.item()` for scalars)",
            ),
        ),
        # A nn.*Loss built in __init__, called in a per-step method and summed into an attribute.
        Invalid(
            """
            import torch.nn as nn
            class Learner:
                def __init__(self):
                    self.crit = nn.MSELoss()
                    self.total = 0
                def train_step(self, x, y):
                    loss = self.crit(self.net(x), y) * 2
                    self.total += loss
                    return loss
            """,
            lines=(9,),
            messages=(
                "`self.total += loss` keeps each training step's autograd graph alive, so memory grows every "
                "step; accumulate `loss.item()` (or `loss.detach()`) instead",
            ),
        ),
        # Module-level script loop; scaler backward; extend with a tensor.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(4, 2)
            scaler = torch.amp.GradScaler()
            seen = []
            for x, y in data_loader:
                loss = torch.nn.functional.mse_loss(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                seen.extend(loss.unsqueeze(0))
            """,
            lines=(10,),
            messages=(
                "`seen.extend(loss.unsqueeze(0))` keeps each iteration's autograd graph alive, so memory "
                "grows every step; store `loss.detach().unsqueeze(0)` instead",
            ),
        ),
        # A step-methods option names the per-step method.
        Invalid(
            """
            class Algo:
                def update(self, batch):
                    loss = self.loss_fn(self.model(batch), batch)
                    loss.backward()
                    self.losses.append(loss)
            """,
            lines=(6,),
            messages=(
                "`self.losses.append(loss)` keeps each training step's autograd graph alive, so memory grows "
                "every step; store `loss.item()` (or `loss.detach()`) instead",
            ),
            options={"step-methods": ["update"]},
        ),
    ]

    # -- the walk ----------------------------------------------------------------------
    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        # A store, and some evidence of a graph: a backward (also through a scaler or
        # autograd.grad), a loss, a criterion, or a model call.
        return any(t in text for t in cls.requires_text) and any(t in text for t in _EVIDENCE_TEXT)

    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._order = 0
        module_scope = _Scope(ctx.module)
        self._stack: list[_Scope] = [module_scope]
        self._scopes: list[_Scope] = [module_scope]
        self._step_methods = set(options.get("step-methods", ()))
        self._criteria: set[str] = set()  # keys assigned a loss constructor
        self._model_assigns: list[tuple[str, cst.BaseExpression]] = []  # key, constructor
        self._models: set[str] | None = None
        self._frozen: set[str] = set()
        self._not_models: set[str] = set()  # keys assigned a pipeline, an ONNX session, ...
        # A file of another framework (and no torch): its "models" are not torch modules.
        roots = {q.split(".")[0] for q in ctx.imports.values()}
        self._foreign = bool(roots & _FOREIGN_FRAMEWORKS) and not roots & _TORCH_LIBRARIES
        self._bounded: set[str] = set()  # keys assigned deque(maxlen=...)
        self._module_classes: set[str] = set()
        self._class_bases: dict[str, list[str]] = {}
        self._calls: dict[str, list[cst.Call]] = {}
        self._data_loops: dict[cst.CSTNode, bool] = {}
        self._graph_cache: dict = {}

    def _tick(self) -> int:
        self._order += 1
        return self._order

    @property
    def _scope(self) -> _Scope:
        return self._stack[-1]

    # scopes
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._tick()
        scope = _Scope(node)
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.params.add(p.name.value)
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                scope.params.add(p.name.value)
        self._stack.append(scope)
        self._scopes.append(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._tick()
        self._stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._tick()
        bases = [dotted_name(b.value) or "" for b in node.bases]
        self._class_bases[node.name.value] = bases
        scope = _Scope(node)
        self._stack.append(scope)
        self._scopes.append(scope)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._tick()
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        scope = _Scope(node)
        self._stack.append(scope)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._stack.pop()

    def visit_Global(self, node: cst.Global) -> None:
        self._scope.globals.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._scope.globals.update(n.name.value for n in node.names)

    # definitions
    def _add_def(self, target: cst.BaseExpression, value, node, kind: str, start: int, end: int) -> None:
        key = expr_key(target)
        if key is None:
            return
        self._scope.defs.setdefault(key, []).append(_Def(key, start, end, value, node, kind))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._scope.pending.append((node, self._tick()))
        value = node.value
        if isinstance(value, cst.Call):
            for t in node.targets:
                key = expr_key(t.target)
                if key is None:
                    continue
                if is_loss_constructor(self.ctx, value.func):
                    self._criteria.add(key)
                elif _is_foreign_model(self.ctx, value.func):
                    self._not_models.add(key)
                else:
                    self._model_assigns.append((key, value.func))
                    if (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "deque" and any(
                        a.keyword is not None and a.keyword.value == "maxlen" for a in value.args
                    ):
                        self._bounded.add(key)

    def leave_Assign(self, node: cst.Assign) -> None:
        end = self._tick()
        _, start = self._scope.pending.pop()
        for t in node.targets:
            target = t.target
            if isinstance(target, (cst.Tuple, cst.List)):
                for el in unpack_targets(target):
                    self._add_def(el, node.value, node, "unpack", start, end)
            else:
                self._add_def(target, node.value, node, "assign", start, end)
        # total = total + v
        if len(node.targets) == 1 and isinstance(node.value, cst.BinaryOperation) and isinstance(node.value.operator, cst.Add):
            key = expr_key(node.targets[0].target)
            if key is not None:
                left, right = node.value.left, node.value.right
                if expr_key(left) == key:
                    self._scope.stores.append(_Store("add", node, node.targets[0].target, key, right, start))
                elif expr_key(right) == key:
                    self._scope.stores.append(_Store("add", node, node.targets[0].target, key, left, start))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._scope.pending.append((node, self._tick()))

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        end = self._tick()
        _, start = self._scope.pending.pop()
        if node.value is not None:
            self._add_def(node.target, node.value, node, "assign", start, end)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._scope.pending.append((node, self._tick()))

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        end = self._tick()
        _, start = self._scope.pending.pop()
        self._add_def(node.target, node.value, node, "aug", start, end)
        if isinstance(node.operator, cst.AddAssign):
            key = expr_key(node.target) or dotted_name(node.target)
            if key is None:
                root = _root_name(node.target)
                key = root
            if key is not None:
                self._scope.stores.append(_Store("aug", node, node.target, key, node.value, start))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        order = self._tick()
        self._add_def(node.target, node.value, node, "assign", order, order)

    def visit_For(self, node: cst.For) -> None:
        order = self._tick()
        for el in unpack_targets(node.target):
            self._add_def(el, None, node, "bind", order, order)
        # for p in model.parameters(): p.requires_grad = False  (a frozen model)
        it = node.iter
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("parameters", "named_parameters"):
            owner = expr_key(it.func.value)
            if owner is not None:
                for stmt in iter_nodes(node.body, into_scopes=False):
                    if isinstance(stmt, cst.Assign) and isinstance(stmt.targets[0].target, cst.Attribute) and stmt.targets[0].target.attr.value == "requires_grad" and isinstance(stmt.value, cst.Name) and stmt.value.value == "False":
                        self._frozen.add(owner)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            order = self._tick()
            for el in unpack_targets(node.asname.name):
                self._add_def(el, None, node, "bind", order, order)

    def visit_Del(self, node: cst.Del) -> None:
        for el in unpack_targets(node.target):
            for key in _root_chain(el):
                self._scope.bounding.append((key, node))

    # calls
    def visit_Call(self, node: cst.Call) -> None:
        order = self._tick()
        scope = self._scope
        ctx = self.ctx
        func = node.func
        if isinstance(func, cst.Name):
            self._calls.setdefault(func.value, []).append(node)
        target = self._backward_of(node)
        if target is not None:
            scope.backwards.append((target, node, order))
            return
        if not isinstance(func, cst.Attribute):
            return
        attr = func.attr.value
        if isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            self._calls.setdefault(attr, []).append(node)
        if attr in _STORE_METHODS:
            index = _STORE_METHODS[attr]
            positional = [a for a in node.args if a.keyword is None and not a.star]
            if len(positional) == index + 1:
                key = expr_key(func.value)
                if key is not None:
                    scope.stores.append(_Store("call", node, func.value, key, positional[index].value, order, attr))
        elif attr in _BOUNDING_METHODS:
            for key in _root_chain(func.value):
                scope.bounding.append((key, node))
        elif attr == "step":
            if step_optimizer(ctx, node) is not None:
                scope.steps.append(node)
        elif attr == "requires_grad_":
            if node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False":
                key = expr_key(func.value)
                if key is not None:
                    self._frozen.add(key)
        if is_grad_mode_call(ctx, node) == "set_grad_enabled" and node.args:
            arg = node.args[0].value
            if isinstance(arg, cst.Name) and arg.value == "False" and isinstance(ctx.parent(node), cst.Expr):
                scope.grad_off.append(order)

    def _backward_of(self, call: cst.Call) -> cst.BaseExpression | None:
        """What a backward-like call differentiates: a backward, ``torch.autograd.grad(X, ...)``
        or a timm-style ``loss_scaler(X, optimizer)``."""
        target = backward_target(self.ctx, call)
        if target is not None:
            return target
        if not call.args:
            return None
        name = self.ctx.qualified_name(call.func)
        if name == "torch.autograd.grad":
            return call.args[0].value
        key = expr_key(call.func)
        if key is not None and _SCALER_CALL.search(key.rsplit(".", 1)[-1]):
            return call.args[0].value
        return None

    # -- the judgement -----------------------------------------------------------------
    def finish(self) -> None:
        if self._foreign:
            return
        for scope in self._scopes:
            if scope.stores:
                self._analyze(scope)

    def _analyze(self, scope: _Scope) -> None:
        fn = scope.node if isinstance(scope.node, cst.FunctionDef) else None
        if fn is not None and is_lightning_eval_hook(fn.name.value):
            return
        step_method = fn is not None and fn.name.value in self._step_methods
        reported: set = set()
        for store in scope.stores:
            if store.node in reported:
                continue
            loop = self._data_loop(scope, store.node)
            if loop is None:
                if not step_method or not self._outlives_call(scope, store):
                    continue
            elif self._reset_in(scope, store, loop):
                continue
            if store.key in self._bounded:
                continue
            if in_no_grad(self.ctx, store.node) or any(o < store.order for o in scope.grad_off):
                continue
            evidence = self._graph(scope, store.value, store.order, 0)
            if evidence is None:
                continue
            if evidence != "backward" and not step_method and not (scope.backwards or scope.steps) and fn is not None:
                # Only a model or criterion call, in a function that does not train: it may
                # well run under its caller's no_grad, unless this file calls it with grad on.
                if not self._called_with_grad(fn):
                    continue
            if self._consumed(scope, store):
                continue
            reported.add(store.node)
            self.report(store.node, self._message(store, evidence, loop is None))

    # where the store's iteration is
    def _data_loop(self, scope: _Scope, node: cst.CSTNode) -> cst.CSTNode | None:
        for loop in self.ctx.enclosing_loops(node):
            if self._is_data_loop(scope, loop):
                return loop
        return None

    def _is_data_loop(self, scope: _Scope, loop: cst.CSTNode) -> bool:
        known = self._data_loops.get(loop)
        if known is not None:
            return known
        result = False
        if isinstance(loop, cst.For):
            for node in iter_nodes(loop.iter):
                if isinstance(node, cst.Name) and _DATA_ITERABLE.search(node.value):
                    result = True
                    break
                if isinstance(node, cst.Attribute) and _DATA_ITERABLE.search(node.attr.value):
                    result = True
                    break
        if not result:
            for _, call, _ in scope.backwards:
                if loop in self.ctx.enclosing_loops(call):
                    result = True
                    break
        if not result:
            result = any(loop in self.ctx.enclosing_loops(s) for s in scope.steps)
        self._data_loops[loop] = result
        return result

    def _inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return any(anc is container for anc in self.ctx.ancestors(node))

    def _reset_in(self, scope: _Scope, store: _Store, loop: cst.CSTNode) -> bool:
        """Is the container (re)assigned, cleared or shrunk inside ``loop``?"""
        chain = _root_chain(store.container)
        for key in chain:
            for d in scope.defs.get(key, ()):
                if d.node is store.node or (d.kind == "aug" and key == store.key):
                    continue
                if self._inside(d.node, loop):
                    return True
        for key, node in scope.bounding:
            if key in chain and self._inside(node, loop):
                return True
        return False

    def _outlives_call(self, scope: _Scope, store: _Store) -> bool:
        """In a per-step method: a ``self`` attribute or a global, not reset in the method."""
        root = _root_name(store.container)
        if root is None:
            return False
        fn = scope.node
        is_self = False
        if isinstance(fn, cst.FunctionDef) and (fn.params.params or fn.params.posonly_params):
            first = (fn.params.posonly_params or fn.params.params)[0].name.value
            is_self = root == first and first in ("self", "cls") and root != store.key
        if not is_self:
            if root in scope.params or (root in scope.defs and root not in scope.globals):
                return False
        chain = _root_chain(store.container)
        for key in chain:
            if is_self and key == root:
                continue
            for d in scope.defs.get(key, ()):
                if d.node is store.node or (d.kind == "aug" and key == store.key):
                    continue
                return False
        return not any(key in chain for key, _ in scope.bounding)

    # does the value carry a graph?
    def _graph(self, scope: _Scope, expr: cst.BaseExpression, order: int, depth: int) -> str | None:
        """"backward", "loss" or "model" when ``expr`` (read at ``order``) carries an
        autograd graph, else None."""
        if depth > _MAX_DEPTH:
            return None
        ctx = self.ctx
        if isinstance(expr, cst.Name):
            return self._name_graph(scope, expr.value, order, depth)
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            if isinstance(expr, cst.Attribute) and expr.attr.value in _NON_GRAPH_ATTRIBUTES:
                return None
            key = expr_key(expr)
            if key is not None and self._backwarded(scope, key, order):
                return "backward"
            if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
                return None
            return self._graph(scope, expr.value, order, depth + 1)
        if isinstance(expr, cst.Call):
            if is_detached(ctx, expr):
                return None
            func = expr.func
            if is_loss_function(ctx, func):
                return "loss"
            if isinstance(func, cst.Call) and is_loss_constructor(ctx, func.func):
                return "loss"
            key = expr_key(func)
            if key is not None:
                if key in self._criteria or looks_like_criterion_name(key):
                    return "loss"
                if self._is_model(key, expr):
                    return "model"
            if isinstance(func, cst.Attribute):
                attr = func.attr.value
                if attr == "forward":
                    inner = expr_key(func.value)
                    if inner is not None and self._is_model(inner, expr):
                        return "model"
                if attr in _GRAPH_METHODS:
                    return self._graph(scope, func.value, order, depth + 1)
            name = ctx.qualified_name(func) or ""
            if name.startswith(("torch.", "torch.nn.functional.")) and name.rsplit(".", 1)[-1] in _GRAPH_FUNCTIONS and expr.args:
                first = expr.args[0].value
                if isinstance(first, (cst.List, cst.Tuple)):
                    for el in first.elements:
                        found = self._graph(scope, el.value, order, depth + 1)
                        if found:
                            return found
                    return None
                return self._graph(scope, first, order, depth + 1)
            return None
        if isinstance(expr, cst.BinaryOperation):
            return self._graph(scope, expr.left, order, depth + 1) or self._graph(scope, expr.right, order, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return None
            return self._graph(scope, expr.expression, order, depth + 1)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            for el in expr.elements:
                found = self._graph(scope, el.value, order, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.Dict):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    found = self._graph(scope, el.value, order, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(expr, cst.IfExp):
            return self._graph(scope, expr.body, order, depth + 1) or self._graph(scope, expr.orelse, order, depth + 1)
        return None

    def _reaching(self, scope: _Scope, key: str, order: int) -> list[_Def]:
        """Definitions of ``key`` completed before ``order``, latest first."""
        return [d for d in reversed(scope.defs.get(key, ())) if d.end < order]

    def _name_graph(self, scope: _Scope, name: str, order: int, depth: int) -> str | None:
        if self._backwarded(scope, name, order):
            return "backward"
        for d in self._reaching(scope, name, order):
            if d.kind in ("unpack", "bind") or d.value is None:
                return None
            if in_no_grad(self.ctx, d.node):
                return None
            found = self._graph(scope, d.value, d.start, depth + 1)
            if d.kind != "aug" or found:
                return found
        return None

    def _backwarded(self, scope: _Scope, key: str, order: int) -> bool:
        """Is ``key``, as defined at ``order``, the target of a backward in this scope?"""
        reaching = self._reaching(scope, key.split(".")[0].split("[")[0], order)
        current = reaching[0] if reaching else None
        for target, _, b_order in scope.backwards:
            for k in _backward_keys(target):
                if k != key:
                    continue
                other = self._reaching(scope, key.split(".")[0].split("[")[0], b_order)
                if (other[0] if other else None) is current:
                    return True
        return False

    def _is_model(self, key: str, call: cst.Call) -> bool:
        if key in self._frozen or key in self._not_models:
            return False
        if key in ("self", "cls"):
            cls = self.ctx.enclosing_class(call)
            return cls is not None and any(b.rsplit(".", 1)[-1].endswith("Module") for b in self._class_bases.get(cls.name.value, ()))
        if self._models is None:
            local = {name for name in self._class_bases if self._is_module_class(name, 0)}
            self._models = {k for k, func in self._model_assigns if is_model_constructor(self.ctx, func, local)}
        return key in self._models or looks_like_model_name(key)

    def _is_module_class(self, name: str, depth: int) -> bool:
        if depth > 8:
            return False
        for base in self._class_bases.get(name, ()):
            last = base.rsplit(".", 1)[-1]
            if last.endswith("Module") or (last != name and self._is_module_class(last, depth + 1)):
                return True
        return False

    # exemptions
    def _called_with_grad(self, fn: cst.FunctionDef) -> bool:
        """Does this file call ``fn`` (by name, or as ``self.fn``) outside any no-grad region?"""
        return any(not in_no_grad(self.ctx, s) for s in self._calls.get(fn.name.value, ()))

    def _consumed(self, scope: _Scope, store: _Store) -> bool:
        """Is the container (or what is computed from it) backward-ed in this function?"""
        if not scope.backwards:
            return False
        derived = set(_root_chain(store.container))
        derived.discard("self")
        derived.discard("cls")
        changed = True
        rounds = 0
        while changed and rounds < 6:
            changed = False
            rounds += 1
            for key, defs in scope.defs.items():
                if key in derived:
                    continue
                for d in defs:
                    if d.value is not None and d.kind != "bind" and referenced_names(d.value) & derived:
                        derived.add(key)
                        changed = True
                        break
        for target, _, _ in scope.backwards:
            if referenced_names(target) & derived:
                return True
        return False

    # reporting
    def _fix(self, value: cst.BaseExpression, short: str | None, evidence: str) -> str:
        """What to store instead: ``loss.item()`` (or ``loss.detach()``), ``out.detach()``,
        ``loss.detach().cpu()``."""
        if short is None or not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return "detached values (`.detach()`, or `.item()` for scalars)"
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _GRAPH_METHODS:
            receiver = self.ctx.module.code_for_node(value.func.value).strip()
            if short.startswith(receiver):
                return f"`{receiver}.detach(){short[len(receiver):]}` instead"
        if evidence == "model":
            return f"`{short}.detach()` instead"
        return f"`{short}.item()` (or `{short}.detach()`) instead"

    def _message(self, store: _Store, evidence: str, per_step: bool) -> str:
        code = self.ctx.module.code_for_node
        value = code(store.value).strip()
        short = value if len(value) <= 40 and "\n" not in value else None
        if store.kind == "call":
            text = f"{code(store.container).strip()}.{store.verb}({short or '...'})"
        elif store.kind == "aug":
            text = f"{code(store.container).strip()} += {short or '...'}"
        else:
            target = code(store.container).strip()
            text = f"{target} = {target} + {short or '...'}"
        if len(text) > 70:
            text = text[:67] + "..."
        span = "each training step's" if per_step else "each iteration's"
        fix_tail = self._fix(store.value, short, evidence)
        verb = "store" if store.kind == "call" else "accumulate"
        return f"`{text}` keeps {span} autograd graph alive, so memory grows every step; {verb} {fix_tail}"


def _is_foreign_model(ctx, func: cst.BaseExpression) -> bool:
    """``pipeline(...)``, ``ort.InferenceSession(...)``, ``joblib.load(...)``: callables whose
    results carry no autograd graph."""
    name = ctx.qualified_name(func) or ""
    root, last = name.split(".")[0], name.rsplit(".", 1)[-1]
    return last in _FOREIGN_MODEL_CALLS or root in _FOREIGN_FRAMEWORKS or root in ("joblib", "pickle")


def _backward_keys(target: cst.BaseExpression) -> list[str]:
    """Keys a backward differentiates: ``loss`` in ``loss.backward()``,
    ``(loss / n).backward()``, ``loss.mean().backward()``; ``out.loss``, ``out["loss"]``."""
    out: list[str] = []
    stack = [target]
    while stack:
        node = stack.pop()
        key = expr_key(node)
        if key is not None:
            out.append(key)
        elif isinstance(node, cst.BinaryOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _GRAPH_METHODS:
            stack.append(node.func.value)
    return out
