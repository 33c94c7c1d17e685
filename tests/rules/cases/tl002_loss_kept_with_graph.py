"""TL002's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid


VALID = [
    # A test file: a numerics test keeps its few losses to compare them (review4 TL002_1).
    Valid(
        "import torch\n"
        "def run(model, inputs, labels, lr, epoch=20):\n"
        "    optim = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    losses = []\n"
        "    for _ in range(epoch):\n"
        "        optim.zero_grad()\n"
        "        loss = torch.nn.functional.mse_loss(model(inputs), labels)\n"
        "        loss.backward()\n"
        "        optim.step()\n"
        "        losses.append(loss)\n"
        "    return losses\n",
        path="tests/test_numerics.py",
    ),
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
    # torchtune-style accumulation window: each loss is backward-ed (its graph freed) and
    # the total is reset after the step.
    """
        class Recipe:
            def train(self, loader, accum):
                running_loss = 0
                for idx, batch in enumerate(loader):
                    current_loss = self._loss_fn(self._model(batch), batch["labels"])
                    running_loss += current_loss
                    current_loss.backward()
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
    # Plain numbers in the backward expression are not graph carriers.
    """
        def train(model, loader, opt, criterion, accum_steps, scale):
            running, history = 0.0, []
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()
                running += loss.item() / accum_steps
                (loss * scale).backward()
                history.append(scale)
                opt.step()
        """,
    # Only the backward-ed element of a loss function's tuple is known to carry a graph
    # (the others are often logged numbers); an evaluation routine run under no_grad.
    """
        import torch
        def train(model, loader, opt, loss_fn):
            history = []
            for x, y in loader:
                total, parts = loss_fn(model(x), y)
                total.backward()
                opt.step()
                history.append(parts)
        def evaluate(model, loader):
            model.eval()
            outs = []
            for x in loader:
                outs.append(model(x))
            return outs
        def main(model, loader):
            with torch.no_grad():
                evaluate(model, loader)
        """,
    # A chunked loss: on the branch that backward-s each chunk, the chunk is detached before it
    # is kept; otherwise the kept chunks' sum is the loss the caller backward-s.
    """
        import torch.nn.functional as F
        def chunk_losses(model, x, y, size, backward_now):
            kept = []
            for start in range(0, len(x), size):
                part = F.cross_entropy(model(x[start:start + size]), y[start:start + size])
                if backward_now:
                    part.backward()
                    part = part.detach()
                kept.append(part)
            return sum(kept)
        """,
    # A per-batch method (backward + step) storing numbers, and a local list.
    """
        class Agent:
            def update(self, batch):
                losses = []
                loss = self.criterion(self.model(batch), batch)
                losses.append(loss)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.history["loss"].append(loss.item())
        """,
    # An element of what a same-file helper returns is what that element holds there,
    # whatever the helper is called: ``acc`` is an accuracy, not the backward-ed loss
    # (torchfactor's ``_run_network``, issue 12's review).
    Valid(
        "import torch\n"
        "\n"
        "\n"
        "class Trainer:\n"
        "    def _run_network(self, x, y):\n"
        "        out = self.model(x)\n"
        "        loss = self.criterion(out, y)\n"
        "        acc = self.accuracy(out, y)\n"
        "        return loss, acc\n"
        "\n"
        "    def train(self, loader):\n"
        "        running_loss, running_acc = 0.0, 0.0\n"
        "        for x, y in loader:\n"
        "            loss, acc = self._run_network(x, y)\n"
        "            self.opt.zero_grad()\n"
        "            loss.backward()\n"
        "            self.opt.step()\n"
        "            running_loss += loss.item()\n"
        "            running_acc += acc\n"
        "        return running_loss, running_acc\n"
    ),
    # Gradient accumulation divides the loss before backward; the inputs kept are data.
    # Whether ``loss`` is a factor with a graph of its own asks what it was made of, whose
    # names ask again what this backward differentiates (once recursed without end: the
    # whole file was TL000 "nested too deeply"; gigagan-pytorch's discriminator step).
    Valid(
        "def train(model, opt, loader, accum):\n"
        "    seen = []\n"
        "    for x in loader:\n"
        "        seen.append(x)\n"
        "        out = model(x)\n"
        "        loss = out.mean()\n"
        "        (loss / accum).backward()\n"
        "        opt.step()\n"
        "        opt.zero_grad()\n"
        "    return seen\n"
    ),
    # Gradient accumulation over micro-batches: the loop's iterations are one optimizer
    # step's parts (the step comes after it), and the total is made anew at every call,
    # which is once per step: it holds at most one step's losses (big-sleep, deep-daze).
    Valid(
        "class Trainer:\n"
        "    def train_step(self):\n"
        "        total_loss = 0\n"
        "        for _ in range(self.accumulate_every):\n"
        "            loss = self.model(self.batch()).mean() / self.accumulate_every\n"
        "            total_loss += loss\n"
        "            loss.backward()\n"
        "        self.optimizer.step()\n"
        "        self.optimizer.zero_grad()\n"
        "        return total_loss.item()\n"
    ),
    # Nothing in the file requires grad: a from-scratch MLP of plain tensors with a
    # backward method of its own (learners' rasbt mlp-fromscratch), a notebook-style numpy
    # model whose .backward()/.step() are user methods (dataflowr 02_backprop).
    """
        import torch
        class MLP:
            def __init__(self):
                self.w = torch.zeros(4, 2).normal_(0.0, 0.1)
            def forward(self, x):
                return torch.sigmoid(x @ self.w)
            def backward(self, x, a, y):
                return x.t() @ (a - y)
        model = MLP()
        cost = []
        for epoch in range(50):
            for x, y in [(torch.rand(8, 4), torch.rand(8, 2))]:
                a = model.forward(x)
                model.w -= 0.1 * model.backward(x, a, y)
                loss = ((a - y) ** 2).mean()
                cost.append(loss)
        """,
    """
        import numpy as np
        class add_bias:
            def __init__(self, b):
                self.b = b
            def forward(self, x):
                return x + self.b
            def backward(self, grad):
                self.grad_b = grad.sum()
            def step(self, lr):
                self.b -= lr * self.grad_b
        model = add_bias(1.0)
        losses = []
        for epoch in range(20):
            for x, y in zip(np.random.randn(10), np.random.randn(10)):
                out = model.forward(x)
                loss = (out - y) ** 2
                model.backward(2 * (out - y))
                model.step(0.01)
                losses.append(loss)
        """,
    # An accumulator given numbers: `.item()` passed, or a method that keeps `float(val)`.
    """
        import torch
        class AverageMeter:
            def __init__(self):
                self.sum, self.count = 0, 0
            def update(self, val, n=1):
                self.sum += float(val) * n
                self.count += n
        class Meter:
            def __init__(self):
                self.total = 0
            def update(self, val, n=1):
                self.total += val * n
        def train(model, loader, opt, criterion):
            losses, meter = AverageMeter(), Meter()
            for x, y in loader:
                loss = criterion(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.update(loss, x.size(0))
                meter.update(loss.item(), x.size(0))
        """,
    # A loss of values computed under no_grad, taken after the block (learners' makeabhishek CNN);
    # a same-file evaluation function returning an accuracy (phlippe's test_model).
    """
        import torch
        def test_model(net, loader):
            true_preds, count = 0.0, 0
            with torch.no_grad():
                for x, y in loader:
                    true_preds += (net(x).argmax(dim=-1) == y).sum()
                    count += y.shape[0]
            return true_preds / count
        def train(model, loader, test_loader, criterion, optimizer, epochs):
            test_losses, val_scores = [], []
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    for x_test, y_test in test_loader:
                        y_val = model(x_test)
                loss = criterion(y_val, y_test)
                test_losses.append(loss)
                val_scores.append(test_model(model, test_loader))
        """,
    # A train() given only instances of a plain class of plain tensors (learners' rasbt Adaline1).
    """
        import torch
        class Adaline1:
            def __init__(self, n):
                self.weight = torch.zeros(n, 1)
            def forward(self, x):
                return torch.mm(x, self.weight).view(-1)
        def loss_func(yhat, y):
            return torch.mean((yhat - y) ** 2)
        def train(model, x, y, num_epochs):
            cost = []
            for e in range(num_epochs):
                for idx in torch.split(torch.randperm(y.size(0)), 10):
                    yhat = model.forward(x[idx])
                    model.weight += 0.01 * torch.mm(x[idx].t(), (y[idx] - yhat).view(-1, 1))
                yhat = model.forward(x)
                curr_loss = loss_func(yhat, y)
                cost.append(curr_loss)
            return cost
        cost = train(Adaline1(3), torch.rand(20, 3), torch.rand(20), 5)
        w = torch.zeros(3, requires_grad=True)
        """,
    # A same-file metric of the model's output: its return is a count of comparisons, whatever
    # it is given (learners' MehdiJmlkh `corrects += correct(output, labels)`).
    """
        import torch
        def correct(output, labels):
            return (output.argmax(dim=1) == labels).sum()
        def train(model, loader, criterion, optimizer):
            corrects = 0
            for x, y in loader:
                output = model(x)
                loss = criterion(output, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                corrects += correct(output, y)
            return corrects
        """,
    # A backward-ed loss kept once an epoch (its activations freed by the backward), and a
    # backward-ed loss summed over a window reset every 100 steps: the look-alikes of the
    # retain_graph=True cases below (mutation benchmark, learners' clustergan and 16_tensorboard).
    """
        import torch
        def train(generator, discriminator, loader, opt_g, opt_d, epochs, bce):
            d_l, running = [], 0.0
            for epoch in range(epochs):
                for i, real in enumerate(loader):
                    fake = generator(torch.randn(8, 16))
                    d_loss = bce(discriminator(real), 1) + bce(discriminator(fake.detach()), 0)
                    opt_d.zero_grad()
                    d_loss.backward()
                    opt_d.step()
                    running += d_loss
                    if (i + 1) % 100 == 0:
                        print(running / 100)
                        running = 0.0
                d_l.append(d_loss)
            return d_l
        """,
    # retain_graph given as a flag that is not the literal True: not known to keep the graph.
    """
        import torch
        def train(model, loader, opt, epochs, retain):
            history = []
            for epoch in range(epochs):
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward(retain_graph=retain)
                    opt.step()
                history.append(loss)
            return history
        """,
]





INVALID = [
    # Micro-batches inside a data loop: the total is made once, before the data loop, so it
    # holds every step's losses (the micro-batch loop is not the one that counts).
    Invalid(
        "def train(model, opt, loader, accum):\n"
        "    total = 0\n"
        "    for batch in loader:\n"
        "        for chunk in batch.split(accum):\n"
        "            loss = model(chunk).mean()\n"
        "            total += loss\n"
        "            loss.backward()\n"
        "        opt.step()\n"
        "        opt.zero_grad()\n"
        "    return total\n",
        lines=(6,),
        messages=("`total += loss` keeps each iteration's autograd graph alive, so memory grows every step; "
                  "accumulate `loss.item()` (or `loss.detach()`) instead",),
        fixed=("def train(model, opt, loader, accum):\n"
               "    total = 0\n"
               "    for batch in loader:\n"
               "        for chunk in batch.split(accum):\n"
               "            loss = model(chunk).mean()\n"
               "            total += loss.detach()\n"
               "            loss.backward()\n"
               "        opt.step()\n"
               "        opt.zero_grad()\n"
               "    return total\n"),
    ),
    # Accumulation with the step inside the loop, every ``accum`` iterations: the loop's
    # iterations are the steps, and the total made before it holds all of them.
    Invalid(
        "def train(model, opt, batches, accum):\n"
        "    total = 0\n"
        "    for i in range(len(batches)):\n"
        "        loss = model(batches[i]).mean()\n"
        "        total += loss\n"
        "        (loss / accum).backward()\n"
        "        if (i + 1) % accum == 0:\n"
        "            opt.step()\n"
        "            opt.zero_grad()\n"
        "    return total\n",
        lines=(5,),
        messages=("`total += loss` keeps each iteration's autograd graph alive, so memory grows every step; "
                  "accumulate `loss.item()` (or `loss.detach()`) instead",),
        fixed=("def train(model, opt, batches, accum):\n"
               "    total = 0\n"
               "    for i in range(len(batches)):\n"
               "        loss = model(batches[i]).mean()\n"
               "        total += loss.detach()\n"
               "        (loss / accum).backward()\n"
               "        if (i + 1) % accum == 0:\n"
               "            opt.step()\n"
               "            opt.zero_grad()\n"
               "    return total\n"),
    ),
    # The same accumulation loop keeping the model's outputs: they carry the graph.
    Invalid(
        "def train(model, opt, loader, accum):\n"
        "    outs = []\n"
        "    for x in loader:\n"
        "        out = model(x)\n"
        "        outs.append(out)\n"
        "        loss = out.mean()\n"
        "        (loss / accum).backward()\n"
        "        opt.step()\n"
        "        opt.zero_grad()\n"
        "    return outs\n",
        lines=(5,),
        messages=(
            "`outs.append(out)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `out.detach()` instead",
        ),
    ),
    # The model output a helper returns beside the loss, kept every iteration: the element
    # carries a graph in the helper too (the valid case above is its accuracy).
    Invalid(
        "import torch\n"
        "\n"
        "\n"
        "class Trainer:\n"
        "    def _run_network(self, x, y):\n"
        "        out = self.model(x)\n"
        "        loss = self.criterion(out, y)\n"
        "        return loss, out\n"
        "\n"
        "    def train(self, loader):\n"
        "        outputs = []\n"
        "        for x, y in loader:\n"
        "            loss, out = self._run_network(x, y)\n"
        "            self.opt.zero_grad()\n"
        "            loss.backward()\n"
        "            self.opt.step()\n"
        "            outputs.append(out)\n"
        "        return outputs\n",
        lines=(17,),
        messages=(
            "`outputs.append(out)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `out.detach()` instead",
        ),
    ),
    # Chunks kept with their graphs after a backward on one branch; on the other branch their
    # sum, returned, is the caller's loss: detaching them would break that, so no fix.
    Invalid(
        "import torch.nn.functional as F\n"
        "def chunk_losses(model, x, y, size, backward_now):\n"
        "    kept = []\n"
        "    for start in range(0, len(x), size):\n"
        "        part = F.cross_entropy(model(x[start:start + size]), y[start:start + size])\n"
        "        if backward_now:\n"
        "            part.backward()\n"
        "        kept.append(part)\n"
        "    return sum(kept)\n",
        lines=(8,),
        messages=("`kept.append(part)` keeps each iteration's autograd graph alive, so memory grows every step; "
                  "store `part.item()` (or `part.detach()`) instead",),
    ),
    # The same test, with skip-tests off.
    Invalid(
        "import torch\n"
        "def run(model, inputs, labels, lr, epoch=20):\n"
        "    optim = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    losses = []\n"
        "    for _ in range(epoch):\n"
        "        optim.zero_grad()\n"
        "        loss = torch.nn.functional.mse_loss(model(inputs), labels)\n"
        "        loss.backward()\n"
        "        optim.step()\n"
        "        losses.append(loss)\n"
        "    return losses\n",
        path="tests/test_numerics.py",
        options={"skip-tests": False},
        fixed=("import torch\n"
               "def run(model, inputs, labels, lr, epoch=20):\n"
               "    optim = torch.optim.SGD(model.parameters(), lr=lr)\n"
               "    losses = []\n"
               "    for _ in range(epoch):\n"
               "        optim.zero_grad()\n"
               "        loss = torch.nn.functional.mse_loss(model(inputs), labels)\n"
               "        loss.backward()\n"
               "        optim.step()\n"
               "        losses.append(loss.detach())\n"
               "    return losses\n"),
        lines=(10,),
        messages=("`losses.append(loss)` keeps each iteration's autograd graph alive, so memory grows every step; "
                  "store `loss.item()` (or `loss.detach()`) instead",),
    ),
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
        fixed="""
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
                    self.g_losses.append(g_loss.detach())
            """,
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
        fixed="""
            import torch.nn as nn
            def train(model, loader, optimizer):
                criterion = nn.CrossEntropyLoss()
                losses = []
                for x, y in loader:
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    losses.append(loss.detach())
                return losses
            """,
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
        fixed="""
            def train(model, loader, opt, loss_fn, epochs):
                for epoch in range(epochs):
                    running_loss = 0.0
                    for x, y in loader:
                        opt.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        opt.step()
                        running_loss += loss.detach()
                    print(running_loss / len(loader))
            """,
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
        fixed="""
            def train(model, loader, opt):
                total = 0
                for x in loader:
                    loss = model(x).mean()
                    loss.backward()
                    opt.step()
                    total = total + loss.detach()
                return total
            """,
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
        fixed="""
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
                    d["loss"].append(F.mse_loss(logits, y).detach())
            """,
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
        fixed="""
            class Trainer:
                def fit(self, loader):
                    for batch in loader:
                        self.optimizer.zero_grad()
                        loss = self.compute_loss(batch)
                        loss.backward()
                        self.optimizer.step()
                        self.history.append(loss.detach())
            """,
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
        fixed="""
            import lightning as L
            import torch.nn.functional as F
            class Model(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    loss = F.cross_entropy(self(x), y)
                    self.training_step_outputs.append(loss.detach())
                    return loss
            """,
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
        fixed="""
            import torch.nn as nn
            class Learner:
                def __init__(self):
                    self.crit = nn.MSELoss()
                    self.total = 0
                def train_step(self, x, y):
                    loss = self.crit(self.net(x), y) * 2
                    self.total += loss.detach()
                    return loss
            """,
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
        fixed="""
            class Algo:
                def update(self, batch):
                    loss = self.loss_fn(self.model(batch), batch)
                    loss.backward()
                    self.losses.append(loss.detach())
            """,
    ),
    # Whatever its name, a method that does backward and an optimizer step runs once per batch.
    Invalid(
        """
            class Agent:
                def update(self, batch):
                    loss = self.criterion(self.model(batch), batch)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    self.history["loss"].append(loss)
            """,
        lines=(8,),
        messages=(
            '`self.history["loss"].append(loss)` keeps each training step\'s autograd graph alive, so memory '
            "grows every step; store `loss.item()` (or `loss.detach()`) instead",
        ),
        fixed="""
            class Agent:
                def update(self, batch):
                    loss = self.criterion(self.model(batch), batch)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    self.history["loss"].append(loss.detach())
            """,
    ),
    # A function a data loop calls once per iteration runs once per batch.
    Invalid(
        """
            class Runner:
                def run_batch(self, batch):
                    loss = self.criterion(self.model(batch), batch)
                    self.batch_losses.append(loss)
                    return loss
                def fit(self, loader):
                    for batch in loader:
                        self.run_batch(batch).backward()
                        self.optimizer.step()
            """,
        lines=(5,),
        messages=(
            "`self.batch_losses.append(loss)` keeps each training step's autograd graph alive, so memory grows "
            "every step; store `loss.item()` (or `loss.detach()`) instead",
        ),
        fixed="""
            class Runner:
                def run_batch(self, batch):
                    loss = self.criterion(self.model(batch), batch)
                    self.batch_losses.append(loss.detach())
                    return loss
                def fit(self, loader):
                    for batch in loader:
                        self.run_batch(batch).backward()
                        self.optimizer.step()
            """,
    ),
    # A running metric reset every N iterations but never backward-ed holds N graphs.
    Invalid(
        """
            import torch.nn.functional as F
            def train(model, loader, opt, criterion, log_every):
                running_l1 = 0
                for i, (x, y) in enumerate(loader):
                    out = model(x)
                    loss = criterion(out, y)
                    loss.backward()
                    opt.step()
                    running_l1 += F.l1_loss(out, y)
                    if i % log_every == 0:
                        print(running_l1 / log_every)
                        running_l1 = 0
            """,
        lines=(10,),
        messages=(
            "`running_l1 += F.l1_loss(out, y)` keeps every iteration's autograd graph alive until it is reset, "
            "so memory grows with every step in between; accumulate `F.l1_loss(out, y).item()` (or "
            "`F.l1_loss(out, y).detach()`) instead",
        ),
        fixed="""
            import torch.nn.functional as F
            def train(model, loader, opt, criterion, log_every):
                running_l1 = 0
                for i, (x, y) in enumerate(loader):
                    out = model(x)
                    loss = criterion(out, y)
                    loss.backward()
                    opt.step()
                    running_l1 += F.l1_loss(out, y).detach()
                    if i % log_every == 0:
                        print(running_l1 / log_every)
                        running_l1 = 0
            """,
    ),
    # An evaluation loop outside no_grad (nothing here calls it under no_grad).
    Invalid(
        """
            def evaluate(model, val_loader, criterion):
                model.eval()
                total, preds = 0, []
                for x, y in val_loader:
                    logits = model(x)
                    total += criterion(logits, y)
                    preds.append(logits)
                return total, preds
            """,
        lines=(7, 8),
        messages=(
            "`total += criterion(logits, y)` keeps each iteration's autograd graph alive, so memory grows every "
            "step; accumulate `criterion(logits, y).item()` (or `criterion(logits, y).detach()`) instead",
            "`preds.append(logits)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `logits.detach()` instead",
        ),
        fixed="""
            def evaluate(model, val_loader, criterion):
                model.eval()
                total, preds = 0, []
                for x, y in val_loader:
                    logits = model(x)
                    total += criterion(logits, y).detach()
                    preds.append(logits)
                return total, preds
            """,
    ),
    # Tuple unpacking: each element of a model's output carries the graph.
    Invalid(
        """
            def train(model, loader, opt, criterion):
                kept = []
                for x, y in loader:
                    logits, aux = model(x)
                    loss = criterion(logits, y) + 0.4 * criterion(aux, y)
                    loss.backward()
                    opt.step()
                    kept.append(logits)
            """,
        lines=(9,),
        messages=(
            "`kept.append(logits)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `logits.detach()` instead",
        ),
    ),
    # An accumulator's method keeps the loss: AverageMeter.update does self.sum += val * n.
    Invalid(
        """
            import torch
            class AverageMeter:
                def __init__(self):
                    self.sum, self.count = 0, 0
                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n
            def train(model, loader, opt, criterion):
                losses = AverageMeter()
                for x, y in loader:
                    loss = criterion(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.update(loss, x.size(0))
            """,
        lines=(16,),
        messages=(
            "`losses.update(loss, x.size(0))` keeps each iteration's autograd graph alive (`AverageMeter.update` "
            "keeps what it is given), so memory grows every step; pass `loss.item()` (or `loss.detach()`) instead",
        ),
        fixed="""
            import torch
            class AverageMeter:
                def __init__(self):
                    self.sum, self.count = 0, 0
                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n
            def train(model, loader, opt, criterion):
                losses = AverageMeter()
                for x, y in loader:
                    loss = criterion(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.update(loss.detach(), x.size(0))
            """,
    ),
    # A sample generated once an epoch with autograd on, kept in a list: never backward-ed,
    # it holds its whole forward's activations.
    Invalid(
        """
            import torch
            def train(generator, discriminator, loader, opt, epochs, z):
                samples = []
                for epoch in range(epochs):
                    for real in loader:
                        loss = -discriminator(generator(torch.randn(8, 16))).mean()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                    fake = generator(z)
                    samples.append(fake)
            """,
        lines=(12,),
        messages=(
            "`samples.append(fake)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `fake.detach()` instead",
        ),
    ),
    # A loss computed on a full-data forward once an epoch, never backward-ed (learners' d2l
    # fit_and_plot): each epoch keeps that forward's graph; the same through a same-file loss function.
    Invalid(
        """
            import torch
            def loss_func(yhat, y):
                return torch.mean((yhat - y) ** 2)
            def fit(model, loader, features, labels, criterion, optimizer, epochs):
                train_ls, mse = [], []
                for ep in range(epochs):
                    for xb, yb in loader:
                        loss = criterion(model(xb), yb)
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    train_ls.append(criterion(model(features), labels).mean())
                    mse.append(loss_func(model(features), labels))
                return train_ls, mse
            """,
        lines=(13, 14),
        messages=(
            "`train_ls.append(...)` keeps each iteration's autograd graph alive, so memory grows every step; store "
            "detached values (`.detach()`, or `.item()` for scalars)",
            "`mse.append(loss_func(model(features), labels))` keeps each iteration's autograd graph alive, so memory "
            "grows every step; store `loss_func(model(features), labels).detach()` instead",
        ),
        fixed="""
            import torch
            def loss_func(yhat, y):
                return torch.mean((yhat - y) ** 2)
            def fit(model, loader, features, labels, criterion, optimizer, epochs):
                train_ls, mse = [], []
                for ep in range(epochs):
                    for xb, yb in loader:
                        loss = criterion(model(xb), yb)
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    train_ls.append(criterion(model(features), labels).mean().detach())
                    mse.append(loss_func(model(features), labels))
                return train_ls, mse
            """,
    ),
    # A loss backward-ed with retain_graph=True keeps its saved activations: kept once an epoch
    # (learners' PyTorch-GAN clustergan `ge_l.append(ge_loss)`, mutation benchmark) or summed
    # over a window of 100 steps, it holds one forward's activations per epoch or per step.
    Invalid(
        """
            import torch
            def train(generator, encoder, discriminator, loader, opt, epochs, mse):
                ge_l, running = [], 0.0
                for epoch in range(epochs):
                    for i, real in enumerate(loader):
                        z = torch.randn(8, 16)
                        fake = generator(z)
                        ge_loss = mse(encoder(fake), z) - discriminator(fake).mean()
                        opt.zero_grad()
                        ge_loss.backward(retain_graph=True)
                        opt.step()
                        running += ge_loss
                        if (i + 1) % 100 == 0:
                            running = 0.0
                    ge_l.append(ge_loss)
                return ge_l
            """,
        lines=(13, 16),
        messages=(
            "`running += ge_loss` keeps every iteration's autograd graph alive until it is reset, so memory grows "
            "with every step in between; accumulate `ge_loss.item()` (or `ge_loss.detach()`) instead",
            "`ge_l.append(ge_loss)` keeps each iteration's autograd graph alive, so memory grows every step; "
            "store `ge_loss.item()` (or `ge_loss.detach()`) instead",
        ),
        fixed="""
            import torch
            def train(generator, encoder, discriminator, loader, opt, epochs, mse):
                ge_l, running = [], 0.0
                for epoch in range(epochs):
                    for i, real in enumerate(loader):
                        z = torch.randn(8, 16)
                        fake = generator(z)
                        ge_loss = mse(encoder(fake), z) - discriminator(fake).mean()
                        opt.zero_grad()
                        ge_loss.backward(retain_graph=True)
                        opt.step()
                        running += ge_loss.detach()
                        if (i + 1) % 100 == 0:
                            running = 0.0
                    ge_l.append(ge_loss.detach())
                return ge_l
            """,
    ),
]
