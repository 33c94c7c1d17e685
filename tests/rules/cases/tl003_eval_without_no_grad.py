"""TL003's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid


VALID = [
    # A test by its name (test_*, *_test) in a library module whose forward's value is checked
    # by an assertion: a check run once on the sample it is given, as a test file's forward is
    # (review packages, tsai models/layers.py:57 test_module_to_torchscript).
    Valid(
        "import torch\n"
        "def test_module_to_torchscript(m, inputs, serialize=True):\n"
        "    m = m.eval()\n"
        "    output = m(*inputs) if isinstance(inputs, tuple) else m(inputs)\n"
        "    print(output.shape)\n"
        "    scripted = torch.jit.script(m)\n"
        "    scripted_output = scripted(inputs)\n"
        "    torch.testing.assert_close(scripted_output, output)\n"
        "    return True\n"
        "def export_test(model, x, path):\n"
        "    model.eval()\n"
        "    y = model(x)\n"
        "    torch.onnx.export(model, x, path)\n"
        "    assert torch.allclose(run_onnx(path, x), y, atol=1e-5)\n"
    ),
    # The callee turns autograd off itself while its module is in evaluation mode: a context
    # chosen on self.training (flair's TransformerBaseEmbeddings: review packages, flair
    # tars_model.py:139), a `with torch.no_grad()` around a frozen extractor's whole forward,
    # `@torch.no_grad()` on the method, `set_grad_enabled(self.training)`.
    Valid(
        "import torch\n"
        "from torch import nn\n"
        "class Embedder(nn.Module):\n"
        "    def __init__(self, fine_tune=True):\n"
        "        super().__init__()\n"
        "        self.encoder = nn.Linear(4, 4)\n"
        "        self.fine_tune = fine_tune\n"
        "    def embed(self, x):\n"
        "        gradient_context = torch.enable_grad() if (self.fine_tune and self.training) else torch.no_grad()\n"
        "        with gradient_context:\n"
        "            return self.encoder(x)\n"
        "class Frozen(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        with torch.no_grad():\n"
        "            return self.net(x)\n"
        "    @torch.no_grad()\n"
        "    def features(self, x):\n"
        "        return self.net(x)\n"
        "class Switched(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        with torch.set_grad_enabled(self.training):\n"
        "            return self.net(x)\n"
        "class Classifier:\n"
        "    def __init__(self):\n"
        "        self.embedder = Embedder()\n"
        "        self.frozen = Frozen()\n"
        "    def label_similarity(self, sentences):\n"
        "        self.embedder.eval()\n"
        "        vectors = self.embedder.embed(sentences)\n"
        "        self.embedder.train()\n"
        "        return vectors.cpu().detach().numpy()\n"
        "    def features(self, x):\n"
        "        self.frozen.eval()\n"
        "        return self.frozen(x), self.frozen.features(x)\n"
        "model = Switched()\n"
        "model.eval()\n"
        "for x in loader:\n"
        "    print(model(x))\n"
    ),
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
    # Module-level eval, then functions that choose no_grad, train the model again, or run before the eval.
    "import torch\n"
    "model = Net()\n"
    "model.eval()\n"
    "def predict(x):\n"
    "    with torch.no_grad():\n"
    "        return model(x)\n"
    "def test(loader):\n"
    "    return [model(x) for x in loader]\n"
    "with torch.no_grad():\n"
    "    test(loader)\n"
    "print(predict(x))\n",
    "import torch\n"
    "model = Net()\n"
    "model.eval()\n"
    "def train(loader):\n"
    "    model.train()\n"
    "    for x in loader:\n"
    "        model(x).sum().backward()\n"
    "def test(loader):\n"
    "    return [model(x) for x in loader]\n"
    "train(loader)\n"
    "test(loader)\n",
    "import torch\n"
    "def test(loader):\n"
    "    return [model(x) for x in loader]\n"
    "model = Net()\n"
    "test(loader)\n"
    "model.eval()\n",
    # One example (or a handful picked by a literal) forwarded once to show a prediction.
    "def show(model, features, device):\n"
    "    model.eval()\n"
    "    logits, probas = model(features.to(device)[0, None])\n"
    "    _, predictions = model.forward(features[:8].to(device))\n"
    "    print(probas, predictions)\n",
    # A notebook's module-level code runs once: a batch of one, or a tensor written out in the
    # code, forwarded to look at the output records too little to report.
    "import torch\n"
    "net = Net()\n"
    "net = net.eval()\n"
    "test = make_sequence('Everybody ate the apple'.split(), word_to_idx).unsqueeze(0)\n"
    "out = net(test)\n",
    "import torch\n"
    "from torch.autograd import Variable\n"
    "model = GPT(config)\n"
    "model.eval()\n"
    "inp = torch.tensor([[0, 0, 2, 1, 0, 1, 2]], dtype=torch.long)\n"
    "logits, _ = model(Variable(inp[:, [0]]))\n",
    "import torch\n"
    "clone = MLP()\n"
    "clone.load_state_dict(torch.load('mlp.params'))\n"
    "clone.eval()\n"
    "x = torch.randn(size=(2, 20))\n"
    "yclone = clone(x)\n",
    # A handful of literal steps over a toy input built from a literal size (a KV-cache check).
    "import torch\n"
    "bs = 6\n"
    "x = torch.randn(bs, 16, 48)\n"
    "csa = CausalSelfAttention(config)\n"
    "csa.eval()\n"
    "for k in range(10):\n"
    "    out_kv, cache = csa(x[:, -k:, :])\n",
    "import torch\n"
    "import torchvision\n\n"
    "model = torchvision.models.resnet18(weights='DEFAULT')\n"
    "model.eval()\n"
    "pred = model(torch.randn(1, 3, 224, 224)).argmax()\n"
    "torch.set_grad_enabled(False)\n",
    # Module-level loops that forward the same toy input made before them, transformed,
    # masked or unwrapped at most: an equivariance check (uvadlc's steerable CNNs).
    "import torch\n"
    "model = nn.SequentialModule(nn.R2Conv(feat_in, feat_out, kernel_size=3)).eval()\n"
    "W = 37\n"
    "x = torch.randn(1, 1, W, W)\n"
    "x = x * input_center_mask\n"
    "x = feat_in(x)\n"
    "y = model(x)\n"
    "for g in G.elements:\n"
    "    x_transformed = x.transform(g)\n"
    "    assert torch.allclose(model(x_transformed).tensor, y.transform(g).tensor)\n"
    "for i in range(N + 1):\n"
    "    x_rot = x.transform(G.element(i / N * 2 * np.pi))\n"
    "    err = torch.norm(conv_model(x_rot.tensor) - y.tensor).item()\n",
    # In a function, a dummy input the function makes up itself, forwarded once: the same
    # handful on every call, whoever calls it (torchvision's quantize_model calibrates on one
    # random image; read debatable in the library corpus), directly or through a name.
    "import torch\n"
    "def quantize_model(model, backend):\n"
    "    _dummy_input_data = torch.rand(1, 3, 299, 299)\n"
    "    model.eval()\n"
    "    torch.ao.quantization.prepare(model, inplace=True)\n"
    "    model(_dummy_input_data)\n"
    "    torch.ao.quantization.convert(model, inplace=True)\n",
    "import torch\n"
    "def output_size(net, device):\n"
    "    net.eval()\n"
    "    return net(torch.zeros(2, 3, 32, 32).to(device)).shape[1]\n",
]


INVALID = [
    # A test-named function whose forward's value no assertion checks (an evaluation over the
    # test set), a function that asserts but is no test by its name, and a test's forward
    # whose value goes elsewhere than the assertion: still reported.
    Invalid(
        "import torch\n"
        "def test_model(model, loader):\n"
        "    model.eval()\n"
        "    correct = 0\n"
        "    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n"
        "    return correct\n"
        "def compare(model, x, reference):\n"
        "    model.eval()\n"
        "    out = model(x)\n"
        "    torch.testing.assert_close(out, reference)\n"
        "def test_export(model, x):\n"
        "    model.eval()\n"
        "    preds = model(x)\n"
        "    save(preds)\n"
        "    assert x.shape[0] == 1\n",
        lines=(6, 10, 14),
        messages=(
            '`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
            '`model(...)` runs after `model.eval()` (line 9) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
            '`model(...)` runs after `model.eval()` (line 13) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
        ),
        fixed=(
            "import torch\n"
            "def test_model(model, loader):\n"
            "    model.eval()\n"
            "    correct = 0\n"
            "    for x, y in loader:\n"
            "        correct += (model(x).argmax(1) == y).sum().item()\n"
            "    return correct\n"
            "@torch.no_grad()\n"
            "def compare(model, x, reference):\n"
            "    model.eval()\n"
            "    out = model(x)\n"
            "    torch.testing.assert_close(out, reference)\n"
            "@torch.no_grad()\n"
            "def test_export(model, x):\n"
            "    model.eval()\n"
            "    preds = model(x)\n"
            "    save(preds)\n"
            "    assert x.shape[0] == 1\n"
        ),
    ),
    # The callee's own choice does not hold in evaluation mode (fine_tune alone decides), it calls
    # the module outside its choice, a subclass the object may be overrides it without one, or
    # the object's class is not known (a property): still reported.
    Invalid(
        "import torch\n"
        "from torch import nn\n"
        "class Tuned(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.encoder = nn.Linear(4, 4)\n"
        "    def embed(self, x):\n"
        "        gradient_context = torch.enable_grad() if self.fine_tune else torch.no_grad()\n"
        "        with gradient_context:\n"
        "            return self.encoder(x)\n"
        "class Prepared(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        x = self.net(x)\n"
        "        with torch.no_grad():\n"
        "            return self.net(x)\n"
        "class Frozen(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        with torch.no_grad():\n"
        "            return self.net(x)\n"
        "class Unfrozen(Frozen):\n"
        "    def forward(self, x):\n"
        "        return self.net(x)\n"
        "class User:\n"
        "    def __init__(self):\n"
        "        self.tuned = Tuned()\n"
        "        self.prepared = Prepared()\n"
        "        self.frozen = Frozen()\n"
        "    @property\n"
        "    def embeddings(self):\n"
        "        return self.tuned\n"
        "    def a(self, x):\n"
        "        self.tuned.eval()\n"
        "        return self.tuned.embed(x)\n"
        "    def b(self, x):\n"
        "        self.prepared.eval()\n"
        "        return self.prepared(x)\n"
        "    def c(self, x):\n"
        "        self.frozen.eval()\n"
        "        return self.frozen(x)\n"
        "    def d(self, x):\n"
        "        self.embeddings.eval()\n"
        "        return self.embeddings.embed(x)\n",
        lines=(39, 42, 45, 48),
        messages=(
            '`self.tuned.embed(...)` runs after `self.tuned.eval()` (line 38) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
            '`self.prepared(...)` runs after `self.prepared.eval()` (line 41) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
            '`self.frozen(...)` runs after `self.frozen.eval()` (line 44) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
            '`self.embeddings.embed(...)` runs after `self.embeddings.eval()` (line 47) outside `torch.no_grad()`: evaluation mode only switches dropout/batch-norm, autograd still records every activation for a backward that never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or `torch.inference_mode()`)',
        ),
    ),
    # In a function, a made-up input of a real batch's size is no handful, and a made-up input
    # forwarded in a loop of the function is forwarded on every pass.
    Invalid(
        "import torch\n"
        "def benchmark(model):\n"
        "    model.eval()\n"
        "    x = torch.randn(256, 3, 224, 224)\n"
        "    return model(x)\n",
        lines=(5,),
        messages=(
            "`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that never "
            "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
    ),
    # At module level, a loop over the data is no handful: every image of a folder made a batch
    # of one in the loop, every batch of a loader (a loop that breaks only on a condition), the
    # toy input rebuilt and forwarded growing (generation).
    Invalid(
        "import torch\n"
        "net = Net()\n"
        "net.eval()\n"
        "for path in paths:\n"
        "    out = net(load(path).unsqueeze(0))\n"
        "cnn = Net()\n"
        "cnn.eval()\n"
        "for x, y in test_loader:\n"
        "    pred = cnn(x)\n"
        "    if pred.argmax() != y:\n"
        "        break\n"
        "lm = LM()\n"
        "lm.eval()\n"
        "tokens = torch.tensor([[0]])\n"
        "for t in range(200):\n"
        "    logits = lm(tokens)\n"
        "    tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)\n",
        lines=(5, 9, 16),
        messages=tuple(
            f"`{k}(...)` runs after `{k}.eval()` (line {n}) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that never "
            "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)" for k, n in (("net", 3), ("cnn", 7), ("lm", 13))),
    ),
    # In a function, a batch of one may be every image of a folder (``predict`` in a loop
    # elsewhere); at module level, a whole dataset or a batch of 64 written out is no handful.
    Invalid(
        "import torch\n"
        "def infer(net, X):\n"
        "    net.eval()\n"
        "    anchors, cls, bb = net(X.unsqueeze(0))\n"
        "    return bb.detach()\n"
        "net = SSD()\n"
        "net.eval()\n"
        "x = torch.randn(64, 3, 224, 224)\n"
        "out = net(x)\n"
        "data = torch.from_numpy(data_X.reshape(-1, 1, 2))\n"
        "pred = net(data)\n",
        lines=(4, 9),
        messages=(
            "`net(...)` runs after `net.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that never "
            "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
            "`net(...)` runs after `net.eval()` (line 7) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that never "
            "comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
    ),
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
        "def test_shapes(model, images):\n"
        "    model.eval()\n"
        "    out = model(images)\n"
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
            def test_shapes(model, images):
                model.eval()
                out = model(images)
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
    # Module-level script; set_grad_enabled only after the forward (of a real batch: one
    # made-up image forwarded once is a look-alike, in VALID).
    Invalid(
        "import torch\n"
        "import torchvision\n\n"
        "model = torchvision.models.resnet18(weights='DEFAULT')\n"
        "model.eval()\n"
        "pred = model(next(iter(loader))[0]).argmax()\n"
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
        "    def __init__(self, build, example):\n"
        "        self.model = build().to('cuda').eval()\n"
        "        torch.no_grad()\n"
        "        self.warm = self.model(example)\n",
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
    # A script's module-level eval(), then evaluation in a function it calls, outside no_grad.
    Invalid(
        "import torch\n"
        "model = Net()\n"
        "model.load_state_dict(torch.load('m.pt'))\n"
        "model.eval()\n"
        "def test(loader):\n"
        "    correct = 0\n"
        "    for x, y in loader:\n"
        "        out = model(x)\n"
        "        correct += (out.argmax(1) == y).sum().item()\n"
        "    return correct\n"
        "print(test(test_loader))\n",
        lines=(8,),
        messages=(
            "`model(...)` runs after `model.eval()` (line 4) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that "
            "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
        fixed="import torch\n"
        "model = Net()\n"
        "model.load_state_dict(torch.load('m.pt'))\n"
        "model.eval()\n"
        "@torch.no_grad()\n"
        "def test(loader):\n"
        "    correct = 0\n"
        "    for x, y in loader:\n"
        "        out = model(x)\n"
        "        correct += (out.argmax(1) == y).sum().item()\n"
        "    return correct\n"
        "print(test(test_loader))\n",
    ),
    # An ignite process function named like a Lightning hook is no Lightning hook: nothing disables grad.
    Invalid(
        "from ignite.engine import Engine\n"
        "def validation_step(engine, batch):\n"
        "    model.eval()\n"
        "    x, y = batch\n"
        "    y_pred = model(x)\n"
        "    return y_pred, y\n"
        "evaluator = Engine(validation_step)\n",
        lines=(5,),
        messages=(
            "`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that "
            "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
    ),
    # A model run layer by layer (torchvision ResNet's conv1, bn1, layer1, fc) after eval().
    Invalid(
        "def features(model, x):\n"
        "    model.eval()\n"
        "    h = model.conv1(x)\n"
        "    h = model.layer1(model.bn1(h))\n"
        "    return model.fc(h.flatten(1))\n",
        lines=(3,),
        messages=(
            "`model.conv1(...)` runs after `model.eval()` (line 2) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that "
            "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
    ),
    # Fine-tuning: everything frozen, then layer4 and fc unfrozen: not a frozen model.
    Invalid(
        "import torchvision\n"
        "model = torchvision.models.resnet18()\n"
        "for param in model.parameters():\n"
        "    param.requires_grad_(False)\n"
        "for param in model.layer4.parameters():\n"
        "    param.requires_grad_(True)\n"
        "def test(loader):\n"
        "    model.eval()\n"
        "    return [model(x).argmax(1) for x in loader]\n",
        lines=(9,),
        messages=(
            "`model(...)` runs after `model.eval()` (line 8) outside `torch.no_grad()`: evaluation mode only "
            "switches dropout/batch-norm, autograd still records every activation for a backward that "
            "never comes, wasting memory and time; wrap the evaluation in `with torch.no_grad():` (or "
            "`torch.inference_mode()`)",
        ),
    ),
]
