"""TL003 eval-without-no-grad: a model put in eval mode, then called with autograd recording.

``model.eval()`` only switches dropout and batch-norm; a later forward of that object outside
``no_grad``/``inference_mode``/``set_grad_enabled`` still saves every activation for a
backward that never comes. Per function / module body (comprehensions belong to theirs):

* an *eval event*: ``k.eval()``, ``k.train(False)``, ``k = <expr>.eval()``, on a statement
  that runs whenever the forward runs;
* a *forward* of ``k`` after it: ``k(...)``, ``k.forward(...)``, a submodule or forward-like
  method (``k.encoder(...)``, ``k.get_action(...)``), or a call of a same-file helper that
  forwards ``k`` itself with no grad-mode choice, eval or backward of its own
  (``self._predict_batch(x)`` for ``self.model``; ``predict(model, x)``);
* in between, no ``k.train()``, rebinding, call that may train it or freezing;
* the forward makes no grad-mode choice (``semantic.gradmode``), its value does not reach a
  backward / ``autograd.grad`` (followed value by value: ``semantic.dataflow``), the body
  asks for no input gradients; Lightning evaluation hooks, submodules in their parent's
  ``forward``, a forward that is a statement of its own in no loop and is only measured
  (FLOP counter, profiler, forward hooks: its graph is freed at once) and functions only called under a grad-mode choice are
  skipped. A forward in a function or method is settled by ``check_project``: skipped
  when every call of that function in the linted project runs under a grad-mode choice,
  directly or through callers only called so (``crossfile.CalledUnderChoice`` over each
  file's ``gradmode.choice_sites``; calls on objects of unknown class matched by name), and
  when some call of it sits in a module's ``forward``, directly or through callers
  (``CalledUnderChoice.reached_from_forward``: that graph is the forward's). In a project
  where a module's ``forward`` returns a gradient it takes with ``torch.autograd.grad``, itself
  or through the functions it calls in any file (each file's ``differentiates`` facts: the
  functions returning one; a force field's forces, not a gradient penalty), no deferred forward
  is reported: the model a function evaluates may be that
  one, which ``no_grad`` would break.

One finding per eval event, at its first unprotected forward.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

import libcst as cst

from torchlint.context import dotted_name, iter_nodes, unpack_targets
from torchlint.finding import Finding, Severity, Span, one_line
from torchlint.fixes import UNSAFE, Fix, insert_statement_before
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.callgraph import argument_name
from torchlint.semantic.dataflow import Flow, gradient_target
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.crossfile import CalledUnderChoice
from torchlint.semantic.gradmode import (
    GradModes, bound_signatures, called_names, choice_sites, function_key, imported_callees,
)
from torchlint.semantic.literals import numeric_value
from torchlint.semantic.model import COMPREHENSION, SemanticModel
from torchlint.semantic.training import freeze_sites
from torchlint.torch_api import expr_key, is_false_literal, is_grad_mode_call, is_parameter_free_layer, mode_switch

# Nodes an eval call may sit under and still run whenever the code after it runs.
_STRAIGHT = (cst.Expr, cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock, cst.With,
             cst.Try, cst.TryStar, cst.Finally, cst.Assign, cst.AnnAssign)
# ``k.<attr>(...)`` that runs (part of) ``k``'s forward: a submodule or a forward-like method.
_FORWARD_ATTR = re.compile(r"^(model|net|network|generator|discriminator|encoder|decoder|backbone|neck|head|"
                           r"classifier|embeddings?|features|stem|trunk|transformer|actor|critic|policy|q_?net|"
                           r"value_?net|forward_\w+|get_action\w*|get_value)$")


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


@dataclass
class _Body:
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


# What a one-shot forward is measured by: a FLOP counter or profiler around it, forward hooks.
_MEASURING = re.compile(r"FlopCounterMode$|profile$|FlopCount")
_HOOKS = {"register_forward_hook", "register_forward_pre_hook"}


def _measuring_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and bool(_MEASURING.match((dotted_name(expr.func) or "").rsplit(".", 1)[-1]))


@dataclass
class _Candidate:
    forward: cst.Call  # the forward, or the helper call that runs one
    eval_call: cst.Call
    key: str  # the object put in eval mode
    shown: str  # what is called: ``model``, ``net.encoder``, ``self._predict_batch``
    inner: tuple | None  # (forward Call, its text) inside the helper, for a helper call
    function: cst.FunctionDef | None
    scope_is_body: bool  # in a function or class body, not at module level
    body: _Body | None = None  # the body it was found in


class EvalWithoutNoGrad(Rule):
    code = "TL003"
    name = "eval-without-no-grad"
    severity = Severity.WARNING
    default_enabled = True
    summary = "Model called after .eval() outside torch.no_grad(): autograd still records every activation"
    # Every file's calls decide which functions the project only runs under a grad-mode choice
    # (``check_project``), a file with no eval event included; a file with no attribute and no
    # import can call no function of another file.
    requires_text = (".", "import")
    uses_semantic_model = True  # every file's finish asks it (``choice_sites``)
    fixable = (UNSAFE,)
    skips_test_files = True
    shared_facts = ("called", "imported", "differentiates")  # a test's calls under no_grad protect a helper
    options = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py): a test's forward checks shapes once, often on the "
                                         "meta device, and wastes nothing worth a finding"),
    }

    VALID = [
        # One forward whose result is dropped at once, in no loop: a FLOP count under
        # FlopCounterMode (through a helper) or forward hooks (review4 TL003_1, TL003_10).
        Valid(
            "import torch\n"
            "from torch.utils.flop_counter import FlopCounterMode\n"
            "def profile_torch(model, batch_size=1):\n"
            "    x = torch.ones(batch_size, 3, 224, 224)\n"
            "    with FlopCounterMode(display=False) as counter:\n"
            "        model(x)\n"
            "    return counter.get_total_flops() / batch_size\n"
            "def profile_text(model, x):\n"
            "    flop_counter = FlopCounterMode()\n"
            "    with flop_counter:\n"
            "        model(x)\n"
            "    return flop_counter.get_total_flops()\n"
            "def profile_model(model, x):\n"
            "    model.eval()\n"
            "    return profile_torch(model) + profile_text(model, x)\n"
            "def compute_model_complexity(model, input_size=(1, 3, 256, 128)):\n"
            "    flops = []\n"
            "    hooks = [m.register_forward_hook(lambda m, i, o: flops.append(o.numel())) for m in model.modules()]\n"
            "    model.eval()\n"
            "    model(torch.rand(input_size))\n"
            "    for h in hooks:\n"
            "        h.remove()\n"
            "    return sum(flops)\n"
        ),
        # A test file: forwards there check shapes once (timm runs them on the meta device).
        Valid(
            "import torch\n"
            "def test_shapes(model_name, cfg_device):\n"
            "    model = create_model(model_name, device=cfg_device).eval()\n"
            "    out = model(torch.randn(1, 3, 224, 224, device=cfg_device))\n"
            "    assert out.shape == (1, 1000)\n",
            path="tests/test_models.py",
        ),
        # Evaluation under no_grad.
        Valid(
            "import torch\n\n"
            "def evaluate(model, loader):\n"
            "    model.eval()\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            out = model(x)\n"
        ),
        # Decorated evaluation function (and inference_mode without the call).
        Valid(
            "import torch\n\n"
            "@torch.no_grad()\n"
            "def evaluate(model, x):\n"
            "    model.eval()\n"
            "    return model(x)\n\n"
            "@torch.inference_mode\n"
            "def predict(model, x):\n"
            "    model.eval()\n"
            "    return model.forward(x)\n"
        ),
        # eval() with no forward after it: export / scripting.
        Valid(
            "import torch\n\n"
            "def export(model, x):\n"
            "    model.eval()\n"
            "    torch.onnx.export(model, x, 'model.onnx')\n"
            "    traced = torch.jit.trace(model, x)\n"
            "    scripted = torch.jit.script(model)\n"
            "    return traced, scripted\n"
        ),
        # Back in training mode before the forward.
        Valid(
            "def step(model, x, opt):\n"
            "    model.eval()\n"
            "    model.train()\n"
            "    loss = model(x).mean()\n"
            "    loss.backward()\n"
            "    opt.step()\n"
        ),
        # eval() in one function, forward in another.
        Valid(
            "def prepare(model):\n"
            "    model.eval()\n\n"
            "def run(model, x):\n"
            "    return model(x)\n"
        ),
        # Forward inside a nested function / lambda: not the same function body.
        Valid(
            "def make_predictor(model):\n"
            "    model.eval()\n"
            "    def predict(x):\n"
            "        return model(x)\n"
            "    scores = lambda x: model(x).softmax(-1)\n"
            "    return predict, scores\n"
        ),
        # Multi-item with: no_grad next to autocast.
        Valid(
            "import torch\n"
            "from torch.cuda.amp import autocast\n\n"
            "def evaluate(model, x):\n"
            "    model.eval()\n"
            "    with torch.no_grad(), autocast():\n"
            "        return model(x)\n"
        ),
        # Plain set_grad_enabled statement earlier in the same function: an explicit choice.
        Valid(
            "import torch\n\n"
            "def evaluate(model, x):\n"
            "    torch.set_grad_enabled(False)\n"
            "    model.eval()\n"
            "    return model(x)\n"
        ),
        # set_grad_enabled as a context, any argument.
        Valid(
            "import torch\n\n"
            "def run(model, x, training):\n"
            "    model.eval()\n"
            "    with torch.set_grad_enabled(training):\n"
            "        return model(x)\n"
        ),
        # Module-level set_grad_enabled(False) in a script.
        Valid(
            "import torch\n\n"
            "def predict(model, x):\n"
            "    model.eval()\n"
            "    return model(x)\n\n"
            "if __name__ == '__main__':\n"
            "    torch.set_grad_enabled(False)\n"
            "    net = torch.hub.load('pytorch/vision', 'resnet18').eval()\n"
            "    print(net(torch.randn(1, 3, 224, 224)))\n"
        ),
        # Distillation: frozen teacher under no_grad, student trains.
        Valid(
            "import torch\n\n"
            "def distill(student, teacher, loader, opt, kd_loss):\n"
            "    teacher.eval()\n"
            "    student.train()\n"
            "    for x, y in loader:\n"
            "        with torch.no_grad():\n"
            "            t = teacher(x)\n"
            "        s = student(x)\n"
            "        loss = kd_loss(s, t)\n"
            "        opt.zero_grad()\n"
            "        loss.backward()\n"
            "        opt.step()\n"
        ),
        # Frozen BatchNorm: eval() on a submodule while the parent trains.
        Valid(
            "import torch.nn as nn\n\n"
            "def train_epoch(model, loader, opt, criterion):\n"
            "    model.train()\n"
            "    for m in model.modules():\n"
            "        if isinstance(m, nn.BatchNorm2d):\n"
            "            m.eval()\n"
            "    model.backbone.eval()\n"
            "    for x, y in loader:\n"
            "        feats = model.backbone(x)\n"
            "        loss = criterion(model.head(feats), y)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
        ),
        # Frozen submodule called in the parent's forward.
        Valid(
            "import torch.nn as nn\n\n"
            "class Net(nn.Module):\n"
            "    def forward(self, x):\n"
            "        self.backbone.eval()\n"
            "        return self.head(self.backbone(x))\n"
        ),
        # Adversarial example: the forward's loss is differentiated w.r.t. the input.
        Valid(
            "import torch\n"
            "import torch.nn.functional as F\n\n"
            "def fgsm(model, x, y, eps):\n"
            "    model.eval()\n"
            "    x = x.clone().requires_grad_(True)\n"
            "    loss = F.cross_entropy(model(x), y)\n"
            "    grad, = torch.autograd.grad(loss, x)\n"
            "    return x + eps * grad.sign()\n"
        ),
        # Saliency: result backward-ed.
        Valid(
            "def saliency(model, x, target):\n"
            "    model.eval()\n"
            "    out = model(x)\n"
            "    score = out[0, target]\n"
            "    score.backward()\n"
            "    return x.grad.abs()\n"
        ),
        # generate() is not a forward (and HF decorates it with no_grad).
        Valid(
            "def sample(model, ids):\n"
            "    model.eval()\n"
            "    return model.generate(ids, max_new_tokens=20)\n"
        ),
        # Lightning evaluation hooks run under no_grad.
        Valid(
            "import lightning as L\n\n"
            "class Lit(L.LightningModule):\n"
            "    def validation_step(self, batch, batch_idx):\n"
            "        self.model.eval()\n"
            "        return self.model(batch[0])\n\n"
            "    def test_step(self, batch, batch_idx):\n"
            "        self.eval()\n"
            "        return self(batch[0])\n\n"
            "    def predict_step(self, batch, batch_idx):\n"
            "        self.eval()\n"
            "        return self(batch)\n"
        ),
        # A helper whose every call site in the file is under no_grad.
        Valid(
            "import torch\n\n"
            "def _predict(model, x):\n"
            "    model.eval()\n"
            "    return model(x)\n\n"
            "def evaluate(model, loader):\n"
            "    with torch.no_grad():\n"
            "        return [_predict(model, x) for x in loader]\n\n"
            "@torch.inference_mode()\n"
            "def report(model, x):\n"
            "    print(_predict(model, x))\n"
        ),
        # eval() only on one branch.
        Valid(
            "def run(model, x, evaluating):\n"
            "    if evaluating:\n"
            "        model.eval()\n"
            "    return model(x)\n"
        ),
        # Reassigned (wrapped) after eval: not known to be the same object any more.
        Valid(
            "def run(model, x, wrap):\n"
            "    model.eval()\n"
            "    model = wrap(model)\n"
            "    return model(x)\n"
        ),
        # Frozen model: requires_grad_(False) means autograd records nothing for its weights.
        Valid(
            "def features(encoder, x):\n"
            "    encoder.eval()\n"
            "    encoder.requires_grad_(False)\n"
            "    return encoder(x)\n"
        ),
        # Handed to a training routine in between (it calls model.train()).
        Valid(
            "def main(model, loader, evaluate, train_one_epoch):\n"
            "    model.eval()\n"
            "    evaluate(model)\n"
            "    train_one_epoch(model, loader)\n"
            "    loss = model(next(iter(loader)))\n"
            "    return loss\n"
        ),
        # enable_grad is an explicit choice to record.
        Valid(
            "import torch\n\n"
            "def attack(model, x):\n"
            "    model.eval()\n"
            "    with torch.enable_grad():\n"
            "        return model(x)\n"
        ),
        # Lightning training_step: the returned loss is backward-ed by the framework.
        Valid(
            "import lightning as L\n\n"
            "class Lit(L.LightningModule):\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        self.backbone.eval()\n"
            "        feats = self.backbone(batch[0])\n"
            "        loss = self.loss(self.head(feats), batch[1])\n"
            "        return loss\n"
        ),
        # A helper that protects its own forward; one that trains; nn.Module methods that run no forward.
        Valid(
            "import torch\n\n"
            "class Trainer:\n"
            "    def validate(self, loader):\n"
            "        self.model.eval()\n"
            "        self.model.to('cuda')\n"
            "        state = self.model.state_dict()\n"
            "        for x, y in loader:\n"
            "            out = self._predict_batch(x)\n"
            "            self._fit_batch(x, y)\n\n"
            "    def _predict_batch(self, x):\n"
            "        with torch.no_grad():\n"
            "            return self.model(x)\n\n"
            "    def _fit_batch(self, x, y):\n"
            "        self.criterion(self.model(x), y).backward()\n"
        ),
        # The eval forward's value (one element of a tuple) reaches autograd.grad.
        Valid(
            "import torch\n\n"
            "def gradients(model, x, y, criterion):\n"
            "    model.eval()\n"
            "    feats, logits = model(x)\n"
            "    loss = criterion(logits, y)\n"
            "    return torch.autograd.grad(loss, list(model.parameters()))\n"
        ),
        # A decoder that retries itself; its one way in runs under no_grad.
        Valid(
            "import torch\n\n"
            "class Decoder:\n"
            "    def decode(self, x, beam):\n"
            "        self.net.eval()\n"
            "        hyps = self.net(x)\n"
            "        if not hyps and beam > 1:\n"
            "            return self.decode(x, beam - 1)\n"
            "        return hyps\n\n"
            "def main(decoder, x):\n"
            "    with torch.no_grad():\n"
            "        return decoder.decode(x, 4)\n"
        ),
        # A model's own inference API reached from another module's forward (BoTorch's
        # ``posterior`` under an acquisition function, differentiated with respect to X by
        # whoever calls it): its graph is that forward's, through a helper too.
        Valid(
            "import torch\n"
            "from torch import nn\n\n"
            "class GP(nn.Module):\n"
            "    def posterior(self, X):\n"
            "        self.eval()\n"
            "        return self(X)\n\n"
            "class Acquisition(nn.Module):\n"
            "    def __init__(self, model):\n"
            "        super().__init__()\n"
            "        self.model = model\n\n"
            "    def _mean(self, X):\n"
            "        return self.model.posterior(X).mean\n\n"
            "    def forward(self, X):\n"
            "        return self._mean(X).sum()\n"
        ),
    ]

    INVALID = [
        # The same inference API reached only from plain functions (one of them merely named
        # ``forward``, outside any class): an evaluation outside no_grad.
        Invalid(
            "import torch\n"
            "from torch import nn\n\n"
            "class GP(nn.Module):\n"
            "    def posterior(self, X):\n"
            "        self.eval()\n"
            "        return self(X)\n\n"
            "def forward(gp, X):\n"
            "    return gp.posterior(X)\n\n"
            "def report(gp, X):\n"
            "    print(forward(gp, X))\n",
            lines=(7,),
            messages=(
                "`self(...)` runs after `self.eval()` (line 6) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that never "
                "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            fixed=("import torch\n"
                   "from torch import nn\n\n"
                   "class GP(nn.Module):\n"
                   "    @torch.no_grad()\n"
                   "    def posterior(self, X):\n"
                   "        self.eval()\n"
                   "        return self(X)\n\n"
                   "def forward(gp, X):\n"
                   "    return gp.posterior(X)\n\n"
                   "def report(gp, X):\n"
                   "    print(forward(gp, X))\n"),
        ),
        # The same decoder with one way in outside no_grad.
        Invalid(
            "import torch\n\n"
            "class Decoder:\n"
            "    def decode(self, x, beam):\n"
            "        self.net.eval()\n"
            "        hyps = self.net(x)\n"
            "        if not hyps and beam > 1:\n"
            "            return self.decode(x, beam - 1)\n"
            "        return hyps\n\n"
            "def main(decoder, x):\n"
            "    with torch.no_grad():\n"
            "        return decoder.decode(x, 4)\n\n"
            "def serve(decoder, x):\n"
            "    return decoder.decode(x, 2)\n",
            fixed=("import torch\n\n"
                   "class Decoder:\n"
                   "    @torch.no_grad()\n"
                   "    def decode(self, x, beam):\n"
                   "        self.net.eval()\n"
                   "        hyps = self.net(x)\n"
                   "        if not hyps and beam > 1:\n"
                   "            return self.decode(x, beam - 1)\n"
                   "        return hyps\n\n"
                   "def main(decoder, x):\n"
                   "    with torch.no_grad():\n"
                   "        return decoder.decode(x, 4)\n\n"
                   "def serve(decoder, x):\n"
                   "    return decoder.decode(x, 2)\n"),
            lines=(6,),
            messages=(
                "`self.net(...)` runs after `self.net.eval()` (line 5) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that never "
                "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # One dropped forward that is not measured: a calibration pass still records a graph
        # (torchvision quantization/utils.py, judged true in the first review).
        Invalid(
            "import torch\n"
            "def quantize(model, x):\n"
            "    model.eval()\n"
            "    torch.ao.quantization.prepare(model, inplace=True)\n"
            "    model(x)\n",
            lines=(5,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            fixed=("import torch\n"
                   "@torch.no_grad()\n"
                   "def quantize(model, x):\n"
                   "    model.eval()\n"
                   "    torch.ao.quantization.prepare(model, inplace=True)\n"
                   "    model(x)\n"),
        ),
        # Results dropped, but one forward per batch: the time is wasted on every batch.
        Invalid(
            "import torch\n"
            "def collect(model, loader):\n"
            "    model.eval()\n"
            "    for x in loader:\n"
            "        model(x)\n",
            lines=(5,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            fixed=("import torch\n"
                   "@torch.no_grad()\n"
                   "def collect(model, loader):\n"
                   "    model.eval()\n"
                   "    for x in loader:\n"
                   "        model(x)\n"),
        ),
        # ... unless the option says tests are linted too.
        Invalid(
            "import torch\n"
            "def test_shapes(model):\n"
            "    model.eval()\n"
            "    out = model(torch.randn(1, 3, 224, 224))\n"
            "    assert out.shape == (1, 1000)\n",
            lines=(4,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            path="tests/test_models.py",
            options={"skip-tests": False},
            fixed="""            import torch
            @torch.no_grad()
            def test_shapes(model):
                model.eval()
                out = model(torch.randn(1, 3, 224, 224))
                assert out.shape == (1, 1000)
            """,
        ),
        # The fixture pattern: evaluate() without no_grad.
        Invalid(
            "import torch\n\n"
            "def evaluate(model, loader):\n"
            "    model.eval()\n"
            "    correct = 0\n"
            "    for images, labels in loader:\n"
            "        logits = model(images)\n"
            "        correct += (logits.argmax(1) == labels).sum().item()\n"
            "    return correct\n",
            lines=(7,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # train(False) counts as eval(); forward() counts as a call.
        Invalid(
            "def predict(net, x):\n"
            "    net.train(False)\n"
            "    return net.forward(x)\n",
            lines=(3,),
            messages=(
                "`net(...)` runs after `net.train(False)` (line 2) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # self.eval() in a module method, then self(x).
        Invalid(
            "import torch.nn as nn\n\n"
            "class Net(nn.Module):\n"
            "    def predict(self, x):\n"
            "        self.eval()\n"
            "        return self(x).argmax(-1)\n",
            lines=(6,),
            messages=(
                "`self(...)` runs after `self.eval()` (line 5) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # Distillation: teacher called outside no_grad, its output not backward-ed.
        Invalid(
            "import torch\n\n"
            "def distill(student, teacher, loader, opt, kd_loss):\n"
            "    teacher.eval()\n"
            "    for x, y in loader:\n"
            "        t = teacher(x).softmax(-1).detach()\n"
            "        with torch.no_grad():\n"
            "            s = student(x)\n"
            "        log = kd_loss(s, t)\n",
            lines=(6,),
            messages=(
                "`teacher(...)` runs after `teacher.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            fixed="""            import torch

            @torch.no_grad()
            def distill(student, teacher, loader, opt, kd_loss):
                teacher.eval()
                for x, y in loader:
                    t = teacher(x).softmax(-1).detach()
                    with torch.no_grad():
                        s = student(x)
                    log = kd_loss(s, t)
            """,
        ),
        # eval() then train() then eval() again: the last eval counts.
        Invalid(
            "def run(model, x, y):\n"
            "    model.eval()\n"
            "    model.train()\n"
            "    model.eval()\n"
            "    return model(y)\n",
            lines=(5,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # Module-level script; set_grad_enabled only after the forward.
        Invalid(
            "import torch\n"
            "import torchvision\n\n"
            "model = torchvision.models.resnet18(weights='DEFAULT')\n"
            "model.eval()\n"
            "pred = model(torch.randn(1, 3, 224, 224)).argmax()\n"
            "torch.set_grad_enabled(False)\n",
            lines=(6,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 5) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # Assignment form `m = Net().eval()`, self.attribute key, and no_grad() as a no-op statement.
        Invalid(
            "import torch\n\n"
            "class Predictor:\n"
            "    def __init__(self, build):\n"
            "        self.model = build().to('cuda').eval()\n"
            "        torch.no_grad()\n"
            "        self.warm = self.model(torch.zeros(1, 3))\n",
            lines=(7,),
            messages=(
                "`self.model(...)` runs after `self.model.eval()` (line 5) outside `torch.no_grad()`: evaluation mode "
                "only switches dropout/batch-norm, autograd still records every activation for a backward "
                "that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` "
                "(or `torch.inference_mode()`)",
            ),
        ),
        # Forward under a with that is not a grad mode (autocast only).
        Invalid(
            "import torch\n\n"
            "def evaluate(model, x):\n"
            "    model.eval()\n"
            "    with torch.autocast('cuda'):\n"
            "        return model(x)\n",
            lines=(6,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # A helper with one call site under no_grad and one outside.
        Invalid(
            "import torch\n\n"
            "def predict(model, x):\n"
            "    model.eval()\n"
            "    return model(x)\n\n"
            "def evaluate(model, loader):\n"
            "    with torch.no_grad():\n"
            "        a = [predict(model, x) for x in loader]\n"
            "    b = predict(model, loader[0])\n"
            "    return a, b\n",
            lines=(5,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
            fixed="""            import torch

            @torch.no_grad()
            def predict(model, x):
                model.eval()
                return model(x)

            def evaluate(model, loader):
                with torch.no_grad():
                    a = [predict(model, x) for x in loader]
                b = predict(model, loader[0])
                return a, b
            """,
        ),
        # eval() inside a with block dominates the code after the block; one finding per eval.
        Invalid(
            "import contextlib\n\n"
            "def evaluate(models, x):\n"
            "    with contextlib.suppress(AttributeError):\n"
            "        models[0].eval()\n"
            "    a = models[0](x)\n"
            "    b = models[0](x + 1)\n"
            "    return a, b\n",
            lines=(6,),
            messages=(
                "`models[0](...)` runs after `models[0].eval()` (line 5) outside `torch.no_grad()`: evaluation mode "
                "only switches dropout/batch-norm, autograd still records every activation for a backward "
                "that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` "
                "(or `torch.inference_mode()`)",
            ),
        ),
        # The forward's result goes to a loss that is only logged, never backward-ed.
        Invalid(
            "def validate(model, loader, criterion, log):\n"
            "    model.eval()\n"
            "    for x, y in loader:\n"
            "        out = model(x)\n"
            "        loss = criterion(out, y)\n"
            "        log(loss.item())\n"
            "    other.backward()\n",
            lines=(4,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 2) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # The same name reused for an eval forward and a training forward: the value is followed.
        Invalid(
            "def run(model, loader, opt, criterion, x0):\n"
            "    model.eval()\n"
            "    pred = model(x0)\n"
            "    print(pred.argmax())\n"
            "    model.train()\n"
            "    for x, y in loader:\n"
            "        pred = model(x)\n"
            "        loss = criterion(pred, y)\n"
            "        loss.backward()\n"
            "        opt.step()\n",
            lines=(3,),
            messages=(
                "`model(...)` runs after `model.eval()` (line 2) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # Submodules after the parent's eval() (a seq2seq decoder loop).
        Invalid(
            "import torch\n\n"
            "def translate(net, src, steps):\n"
            "    net.eval()\n"
            "    state = net.encoder(src)\n"
            "    tokens = []\n"
            "    for _ in range(steps):\n"
            "        logits, state = net.decoder(src, state)\n"
            "        tokens.append(logits.argmax(-1).item())\n"
            "    return tokens\n",
            lines=(5,),
            messages=(
                "`net.encoder(...)` runs after `net.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # A forward through a model method (an RL policy's action).
        Invalid(
            "def rollout(model, env, episodes):\n"
            "    model.eval()\n"
            "    obs, returns = env.reset(), []\n"
            "    while len(returns) < episodes:\n"
            "        action = model.get_action(obs)\n"
            "        obs, reward, done, _ = env.step(action)\n"
            "        if done:\n"
            "            returns.append(reward)\n"
            "    return returns\n",
            lines=(5,),
            messages=(
                "`model.get_action(...)` runs after `model.eval()` (line 2) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # eval() in one method, the forward in a helper method it calls.
        Invalid(
            "class Trainer:\n"
            "    def validate(self, loader):\n"
            "        self.model.eval()\n"
            "        for x, y in loader:\n"
            "            out = self._predict_batch(x)\n\n"
            "    def _predict_batch(self, x):\n"
            "        return self.model(x)\n",
            lines=(5,),
            messages=(
                "`self._predict_batch(...)` runs `self.model(...)` (line 8) after `self.model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # ... or in a free function the model is passed to.
        Invalid(
            "def run_batch(net, x):\n"
            "    return net(x).softmax(-1)\n\n"
            "def evaluate(model, loader):\n"
            "    model.eval()\n"
            "    return [run_batch(model, x) for x in loader]\n",
            lines=(6,),
            messages=(
                "`run_batch(...)` runs `net(...)` (line 2) after `model.eval()` (line 5) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
        # A forward inside a list comprehension.
        Invalid(
            "import torch\n\n"
            "def embed_all(encoder, batches):\n"
            "    encoder.eval()\n"
            "    return torch.cat([encoder(b) for b in batches])\n",
            lines=(5,),
            messages=(
                "`encoder(...)` runs after `encoder.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
                "switches dropout/batch-norm, autograd still records every activation for a backward that "
                "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
                "`torch.inference_mode()`)",
            ),
        ),
    ]


    def __init__(self, ctx, options):
        super().__init__(ctx, options)
        self._evals: list[cst.Call] = []
        self._model: SemanticModel | None = None
        self._helper_memo: dict[tuple[cst.CSTNode, str], tuple | None] = {}

    # -- the walk only notes eval events; everything else is asked in finish() -----------
    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("eval", "train") \
                and mode_switch(node) is False:
            self._evals.append(node)

    def finish(self) -> None:
        self._model = self.ctx.semantic.model
        self._modes = GradModes(self.ctx)
        deferred = self._candidates_to_report() if self._evals and self.reports else []
        differentiating = _differentiating_functions(self._model) if "autograd" in self.ctx.text else []
        # Every analysed file has facts: a file without them is one nobody could read
        # (``CalledUnderChoice``: its uses are unknown).
        self.ctx.facts[self.code] = {"called": called_names(self.ctx, self._modes),
                                     "imported": imported_callees(self.ctx, self._modes), "deferred": deferred,
                                     "differentiates": differentiating}

    def demanded_facts(self) -> dict:
        """Every call in this file of a function the project may define, and the signatures of
        its methods (``gradmode.choice_sites``, ``bound_signatures``): what
        ``crossfile.CalledUnderChoice`` asks of the files that may call a function it decides
        on. Costly on every file, and only needed in a project with deferred forwards."""
        return {"sites": choice_sites(self.ctx, self._modes), "signatures": bound_signatures(self._model)}

    def _candidates_to_report(self) -> list[dict]:
        """Report the unprotected forwards outside named functions; return the others, as
        facts for ``check_project`` (which knows whether every call of it, in any file, is
        under a grad-mode choice)."""
        self._flow = Flow(self.ctx, self._model)
        candidates = [c for body in self._bodies() for c in self._analyze(body)]
        deferred: list[dict] = []
        if not candidates:
            return deferred
        frozen = {(self._owner(key, node), key) for key, node in freeze_sites(self._model)}
        module_no_grad = self._modes.module_grad_off()
        for cand in candidates:
            if module_no_grad and cand.scope_is_body:
                continue  # module-level torch.set_grad_enabled(False): functions run without grad
            owner = self._owner(cand.key, cand.forward)
            if (owner, cand.key) in frozen or (owner, cand.shown) in frozen:
                continue
            if cand.function is not None and self._modes.only_called_with_choice(cand.function):
                continue
            fix = self._decorator_fix(cand)
            key = function_key(self._model, cand.function) if cand.function is not None else None
            if key is not None:  # its callers, in any linted file, decide (``check_project``)
                deferred.append({"function": key, "span": self.ctx.span(cand.forward).to_json(),
                                 "message": one_line(self._message(cand)), "fix": fix.to_json() if fix else None})
                continue
            self.report(cand.forward, self._message(cand), fix=fix)
        return deferred

    def _results_may_train(self, function: cst.FunctionDef) -> bool:
        """Whether what ``function`` computes may reach a backward elsewhere: it returns a
        value or stores one in an attribute or item, and some caller may differentiate it (a
        caller this file does not show, a reference handed on, or a caller that runs a
        backward itself or through its callees)."""
        escapes = any(isinstance(n, cst.Return) and n.value is not None
                      or isinstance(n, cst.AssignTarget) and isinstance(n.target, (cst.Attribute, cst.Subscript))
                      for n in iter_nodes(function.body, into_scopes=False))
        if not escapes:
            return False
        graph = self.ctx.semantic.loose_graph
        if self._called_only_elsewhere(function) or any(function in graph.references(s) for s in self._model.calls):
            return True
        backward = self.ctx.semantic.training.closure("backward")
        callers = graph.callers(function)
        return not callers or any(enclosing_function(self._model, site.scope) in backward for site in callers)

    def _decorator_fix(self, cand: _Candidate) -> Fix | None:
        """``@torch.no_grad()`` right above the ``def`` of the function holding the eval and
        the forward, where that function only evaluates: nothing in it (or in what it calls)
        does a backward, a step or ``autograd.grad``, chooses a grad mode, wants input
        gradients, or puts a model back in training mode (nor a constructor: what it builds
        would lose its gradients), and what it returns or stores reaches no backward
        (``_results_may_train``). Unsafe: its results no longer carry gradients, which code
        this file does not show (another file, a callback) may want."""
        function, body = cand.function, cand.body
        if function is None or body is None or body.node is not function or function.asynchronous is not None \
                or function.name.value == "__init__" \
                or body.grad_exprs or body.set_grad_at is not None or body.wants_input_grad \
                or any(isinstance(n, cst.Call) and mode_switch(n) is True for n in iter_nodes(function.body)):
            return None
        training = self.ctx.semantic.training
        if function in training.closure("backward") or function in training.closure("step") \
                or function in training.closure("fit"):
            return None
        if self._results_may_train(function):
            return None
        module_scope = self._model.scopes[self.ctx.module]
        torch = module_scope.bindings.get("torch", ())
        if len(torch) != 1 or torch[0].kind != "import" or torch[0].qualified != "torch":
            return None
        edit = insert_statement_before(self.ctx, function, "@torch.no_grad()", at=function.name)
        return Fix.unsafe("Decorate the evaluation function with @torch.no_grad()", edit) if edit else None

    def _message(self, cand: _Candidate) -> str:
        e_call = cand.eval_call
        text = "train(False)" if e_call.func.attr.value == "train" else "eval()"
        position = self.ctx.position
        runs = "runs" if cand.inner is None else f"runs `{cand.inner[1]}(...)` (line {position(cand.inner[0]).start.line})"
        return (
            f"`{cand.shown}(...)` {runs} after `{cand.key}.{text}` (line {position(e_call).start.line}) outside "
            "`torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every "
            "activation for a backward that never comes, wasting memory and time; wrap the evaluation in "
            "`with torch.no_grad():` (or `torch.inference_mode()`)"
        )

    # -- across files: helpers only other files call -----------------------------------------
    def _called_only_elsewhere(self, function: cst.FunctionDef | None) -> bool:
        """A module-level function this file never calls nor passes on: only the files
        importing it decide whether it runs under no_grad."""
        if function is None or not isinstance(self.ctx.parent(function), cst.Module):
            return False
        graph = self.ctx.semantic.loose_graph
        return not graph.callers(function) and not any(function in graph.references(s) for s in self._model.calls)

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        """The deferred forwards of functions the linted project does not only call under a
        grad-mode choice (``crossfile.CalledUnderChoice``: every call, in any file, makes one
        or sits in such a function; a function no file calls is reported), nor calls from a
        module's ``forward`` (``reached_from_forward``: its graph is that forward's, which the
        forward's caller may differentiate). None in a project whose models differentiate in
        their own methods (``_models_differentiate``)."""
        deferred = [(record, fact) for record in project.records
                    for fact in (record.facts.get(cls.code) or {}).get("deferred", ())]
        if not deferred:
            return []
        choices = CalledUnderChoice(project, cls.code)
        if _models_differentiate(project, cls.code, choices):
            return []
        return [Finding.at(cls, record.path, Span.from_json(fact["span"]), fact["message"],
                           fix=Fix.from_json(fact["fix"]) if fact["fix"] else None)
                for record, fact in deferred if not choices.protected(record.path, fact["function"])
                and not choices.reached_from_forward(record.path, fact["function"])]

    # -- step 1: the bodies holding an eval event ------------------------------------------
    def _bodies(self) -> list[cst.CSTNode]:
        """Function, lambda, class and module bodies (comprehensions belong to theirs),
        innermost first, as the old scope stack left them."""
        model = self._model
        found: dict[cst.CSTNode, int] = {}
        for call in self._evals:
            site = model.call_site(call)
            scope = site.scope if site is not None else model.scope_of(call)
            while scope.kind == COMPREHENSION and scope.parent is not None:
                scope = scope.parent
            found[scope.node] = scope.order
        return sorted(found, key=lambda n: -found[n])

    # -- step 2: one body's events, in order -------------------------------------------
    def _analyze(self, node: cst.CSTNode) -> list[_Candidate]:
        function = node if isinstance(node, cst.FunctionDef) else None
        if function is not None and self._modes.chosen(function.body):
            return []  # decorated with a grad mode, or a Lightning evaluation hook
        body = self._scan(node, function)
        if not body.evals or body.wants_input_grad:
            return []
        return self._unprotected_forwards(body)

    def _scan(self, node: cst.CSTNode, function: cst.FunctionDef | None, keys: set[str] | None = None) -> _Body:
        """The events of one body; ``keys``: forwards of these count without an eval (a helper)."""
        body = _Body(node, function, eval_keys=set(keys or ()))
        returns_loss = function is not None and function.name.value == "training_step"
        for index, item in enumerate(iter_nodes(node, into_scopes=False)):
            if isinstance(item, cst.Call):
                self._scan_call(body, index, item)
            elif isinstance(item, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                self._scan_assign(body, index, item)
            elif isinstance(item, (cst.For, cst.Del)):
                self._rebind(body, index, item.target)
            elif isinstance(item, cst.WithItem) and item.asname is not None:
                self._rebind(body, index, item.asname.name)
            elif isinstance(item, cst.NamedExpr):
                self._rebind(body, index, item.target)
            elif isinstance(item, cst.Return) and returns_loss and item.value is not None:
                body.grad_exprs.append(item.value)  # Lightning backward-s training_step's loss
        return body

    def _scan_call(self, body: _Body, index: int, node: cst.Call) -> None:
        """One call: input gradients asked for, an eval or train switch, a backward, a
        forward of an eval'd key, or a call that may train, choose the grad mode or forward."""
        func = node.func
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "requires_grad" and not is_false_literal(arg.value):
                body.wants_input_grad = True  # torch.randn(..., requires_grad=True)
        mode = mode_switch(node)
        if mode is not None:
            self._scan_mode_switch(body, index, node, mode)
            return
        target = gradient_target(self.ctx, node)
        if target is not None:
            body.grad_exprs.append(target)
            return
        if isinstance(func, cst.Attribute):
            attr, owner = func.attr.value, expr_key(func.value)
            if owner in body.eval_keys and (attr == "forward" or _FORWARD_ATTR.match(attr)):
                body.forwards.append((index, owner, node, owner if attr == "forward" else f"{owner}.{attr}"))
                return
            self._scan_method(body, index, node, attr)
        key = expr_key(func)
        if key is None:
            return
        if key in body.eval_keys:
            body.forwards.append((index, key, node, key))
            return
        self._scan_other_call(body, index, node, key)

    def _scan_mode_switch(self, body: _Body, index: int, node: cst.Call, mode: bool) -> None:
        """``k.eval()``/``k.train(False)`` (also ``k = Net().eval()``): an eval event;
        ``k.train()``: ``k`` back in training mode."""
        key = expr_key(node.func.value)
        if mode is False:
            key = key if key is not None else self._assigned_key(node)
            if key is not None:
                body.evals.append((index, key, node))
                body.eval_keys.add(key)
        elif key is not None:
            body.reset(key, index)

    def _scan_other_call(self, body: _Body, index: int, node: cst.Call, key: str) -> None:
        """A plain ``torch.set_grad_enabled(...)`` statement, a call that may train what it
        is passed (``train_one_epoch(model)``, ``trainer.fit(model)``), or a helper that may
        forward an eval'd key itself."""
        ctx = self.ctx
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

    @staticmethod
    def _scan_method(body: _Body, index: int, node: cst.Call, attr: str) -> None:
        """``x.requires_grad_()``, ``m.set_grad_checkpointing()``, ``m.train_epoch()``, ``m.freeze()``."""
        receiver = node.func.value
        if attr == "requires_grad_" and not (node.args and is_false_literal(node.args[0].value)):
            body.wants_input_grad = True
        if "checkpointing" in attr:  # set_grad_checkpointing(), gradient_checkpointing_enable()
            key = expr_key(receiver)
            if key is not None:
                body.grad_wanted.add(key)
        if attr.startswith(("train", "fit")) or "freeze" in attr or attr == "requires_grad_":
            key = expr_key(receiver)
            if key is not None:
                body.reset(key, index)

    def _scan_assign(self, body: _Body, index: int, node: cst.Assign | cst.AnnAssign | cst.AugAssign) -> None:
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
        param_free = self._builds_parameter_free_layer(value)
        for key in keys:
            if key != root:
                body.reset(key, index)
                body.built.setdefault(key, []).append((index, param_free))

    @staticmethod
    def _rebind(body: _Body, index: int, target: cst.BaseExpression) -> None:
        for key in _target_keys(target, set()):
            body.reset(key, index)

    def _builds_parameter_free_layer(self, expr: cst.BaseExpression) -> bool:
        """``nn.Dropout(0.5)``, ``DropPath(0.1).eval()``, ``nn.ReLU().to(dev)``."""
        while isinstance(expr, cst.Call):
            if is_parameter_free_layer(self.ctx, expr.func):
                return True
            if not isinstance(expr.func, cst.Attribute):
                return False
            expr = expr.func.value
        return False

    def _assigned_key(self, call: cst.Call) -> str | None:
        """``model`` for ``model = Net().to(dev).eval()``."""
        node: cst.CSTNode = call
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, cst.Attribute) and anc.value is node or isinstance(anc, cst.Call) and anc.func is node:
                node = anc
                continue
            if isinstance(anc, cst.Assign) and anc.value is node and len(anc.targets) == 1:
                return expr_key(anc.targets[0].target)
            if isinstance(anc, cst.AnnAssign) and anc.value is node:
                return expr_key(anc.target)
            return None
        return None

    # -- step 3: forwards (direct or through a helper) after a dominating eval, unprotected --
    def _unprotected_forwards(self, body: _Body) -> list[_Candidate]:
        events = [(i, key, call, shown, None) for i, key, call, shown in body.forwards] + self._helper_forwards(body)
        reported: set[int] = set()
        out: list[_Candidate] = []
        for f_index, key, call, shown, inner in sorted(events, key=lambda e: e[0]):
            if not self._exposed(body, f_index, key, shown, call):
                continue
            chosen = self._dominating_eval(body, key, shown, f_index, call)
            if chosen is None or chosen[0] in reported:
                continue
            reported.add(chosen[0])
            out.append(_Candidate(call, chosen[1], key, shown, inner, body.function, not isinstance(body.node, cst.Module),
                                  body))
        return out

    def _exposed(self, body: _Body, f_index: int, key: str, shown: str, call: cst.Call) -> bool:
        """The forward records a graph nobody asked for: not a submodule in its parent's
        forward, not checkpointed or parameter-free, no grad-mode choice, its value never
        reaches a backward."""
        function = body.function
        if function is not None and function.name.value in ("forward", "__call__") and shown.startswith("self."):
            return False  # a submodule inside its parent's forward: the caller decides
        if key in body.grad_wanted or self._parameter_free(body, shown, f_index) or self._one_shot(call):
            return False
        if body.set_grad_at is not None and body.set_grad_at < f_index or self._modes.chosen(call):
            return False
        return not self._flow.reaches(call, set(body.grad_exprs))

    def _one_shot(self, call: cst.Call) -> bool:
        """``model(x)`` as a statement of its own, in no loop of its function, run only to be
        measured (under ``FlopCounterMode``/a profiler, or in a function that registers forward
        hooks): its graph is freed as soon as the call returns. A calibration pass
        (``prepare(model); model(x)``) is still reported."""
        if not isinstance(self.ctx.parent(call), cst.Expr) or self.ctx.enclosing_loops(call):
            return False
        function = next((a for a in self.ctx.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if function is None:
            return False
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, cst.With) and any(self._measures(item.item, function) for item in anc.items):
                return True
        return any(isinstance(n, cst.Attribute) and n.attr.value in _HOOKS for n in iter_nodes(function.body))

    @staticmethod
    def _measures(expr: cst.BaseExpression, function: cst.FunctionDef) -> bool:
        """``FlopCounterMode(...)``/``profile(...)``, or a name ``function`` binds to one."""
        if isinstance(expr, cst.Name):
            values = [n.value for n in iter_nodes(function.body) if isinstance(n, cst.Assign)
                      and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in n.targets)]
            return len(values) == 1 and _measuring_call(values[0])
        return _measuring_call(expr)

    def _helper_forwards(self, body: _Body) -> list[tuple]:
        """Calls of same-file helpers that forward an eval'd key themselves:
        (index, key, call, callee text, (inner forward, its text))."""
        graph, model = self.ctx.semantic.graph, self._model
        out = []
        for index, call in body.helpers:
            site = model.call_site(call)
            targets = graph.targets(site) if site is not None else []
            if len(targets) != 1 or not isinstance(targets[0], cst.FunctionDef):
                continue
            for key in sorted(body.eval_keys):
                inner_key = argument_name(model, site, targets[0], key)
                inner = self._helper_forward(targets[0], inner_key) if inner_key is not None else None
                if inner is not None:
                    out.append((index, key, call, dotted_name(call.func), inner))
                    break
        return out

    def _helper_forward(self, helper: cst.FunctionDef, key: str) -> tuple | None:
        """The first forward of ``key`` in ``helper`` that records a graph: the helper makes
        no grad-mode choice, does no backward, and does not switch or rebind ``key`` first."""
        memo_key = (helper, key)
        if memo_key not in self._helper_memo:
            found = None
            if not self._modes.chosen(helper.body):
                body = self._scan(helper, helper, {key})
                if not body.grad_exprs and not body.wants_input_grad and not body.evals:
                    for f_index, k, call, shown in body.forwards:
                        if any(r < f_index for r in body.resets.get(k, []) + body.resets.get(shown, [])):
                            break
                        if self._exposed(body, f_index, k, shown, call):
                            found = (call, shown)
                            break
            self._helper_memo[memo_key] = found
        return self._helper_memo[memo_key]

    @staticmethod
    def _parameter_free(body: _Body, key: str, f_index: int) -> bool:
        """Last built as nn.Dropout / DropPath / pooling: no parameters, nothing recorded."""
        made = [free for at, free in body.built.get(key, ()) if at < f_index]
        return bool(made) and made[-1]

    def _dominating_eval(self, body: _Body, key: str, shown: str, f_index: int,
                         call: cst.Call) -> tuple[int, cst.Call] | None:
        """The last eval of ``key`` before the forward that always runs on the way to it,
        with no reset of ``key`` (or of the submodule called) in between."""
        f_ancestors = None
        key_resets = body.resets.get(key, []) + (body.resets.get(shown, []) if shown != key else [])
        for e_index, e_key, e_call in reversed(body.evals):
            if e_key != key or e_index >= f_index:
                continue
            if any(e_index < r < f_index for r in key_resets):
                return None  # back in training mode (or maybe): earlier evals are moot too
            if f_ancestors is None:
                f_ancestors = set(self.ctx.ancestors(call))
            if e_call in f_ancestors:
                continue
            if self._dominates(e_call, f_ancestors):
                return e_index, e_call
        return None

    def _dominates(self, e_call: cst.Call, f_ancestors: set[cst.CSTNode]) -> bool:
        """Whether the statement holding ``e_call`` runs whenever the forward runs: every
        node between it and the closest common ancestor is straight-line code."""
        node: cst.CSTNode = e_call
        for anc in self.ctx.ancestors(e_call):
            if anc in f_ancestors:
                return True
            if isinstance(anc, cst.Attribute) and anc.value is node or isinstance(anc, cst.Call) and anc.func is node:
                pass
            elif not isinstance(anc, _STRAIGHT):
                return False
            node = anc
        return False

    # -- step 4: file-wide exemptions -----------------------------------------------------
    def _owner(self, key: str, node: cst.CSTNode) -> cst.CSTNode | None:
        """Where a key means one object: the class for ``self...``, else the function."""
        model = self._model
        if key == "self" or key.startswith("self."):
            info = model.class_of(node)
            return info.node if info is not None else None
        scope = model.scope_of(node).function()
        return scope.node if scope is not None else None


def _differentiating_functions(model: SemanticModel) -> list[str]:
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
            if key is not None and _returned_as_output(ctx, function, site.node):
                found.add(key)
    return sorted(found)


def _output_position(ctx, expr: cst.BaseExpression) -> cst.CSTNode | None:
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


def _returned_as_output(ctx, function: cst.CSTNode, call: cst.Call) -> bool:
    holder = _output_position(ctx, call)
    if isinstance(holder, cst.Return):
        return True
    if not (isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name)):
        return False
    name = holder.targets[0].target.value
    return any(isinstance(node, cst.Name) and node.value == name and isinstance(_output_position(ctx, node), cst.Return)
               for node in iter_nodes(function, into_scopes=False))


# Calls that return a derivative (``semantic.dataflow`` has its own table: calls whose first argument is differentiated).
_GRADIENT_CALLS = frozenset(("torch.autograd.grad", "torch.autograd.functional.jacobian",
                            "torch.autograd.functional.hessian", "torch.func.grad"))


def _models_differentiate(project, code: str, choices: CalledUnderChoice) -> bool:
    """Some module of the linted project differentiates in its own ``forward`` (a force field
    computing forces as ``-dE/dx`` with ``torch.autograd.grad``), itself or through the functions
    it calls in any file (``CalledUnderChoice.reached_from_forward``): a function evaluating a
    model of a class it does not name may be running one, which ``no_grad`` would break, so its
    forwards are not reported."""
    for record in project.records:
        for key in (record.facts.get(code) or {}).get("differentiates", ()):
            owner, _, name = key.rpartition(".")
            if name == "forward" and owner:
                if project.is_nn_module(record.qualified(owner)):
                    return True
            elif choices.reached_from_forward(record.path, key):
                return True
    return False
