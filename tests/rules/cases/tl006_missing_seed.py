"""TL006's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.rule import Invalid, Valid

_TEST_SCRIPT = (
    "import torch\n\n"
    "if __name__ == '__main__':\n"
    "    model, opt = build()\n"
    "    for x, y in loader:\n"
    "        opt.zero_grad()\n"
    "        model(x).sum().backward()\n"
    "        opt.step()\n"
)


VALID = [
    # The second part of a slide's listing: it imports nothing, has no main guard and reads
    # names bound nowhere (net, optimizer, train_loader, even torch): a fragment of a program
    # whose first part builds the model, where the seed goes.
    Valid(
        "for epoch in range(5):\n"
        "    for i, data in enumerate(train_loader, 0):\n"
        "        inputs, labels = data\n"
        "        optimizer.zero_grad()\n"
        "        loss = criterion(net(inputs), labels)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "\n"
        "with torch.no_grad():\n"
        "    for images, labels in test_loader:\n"
        "        _, predicted = torch.max(net(images).data, 1)\n"
    ),
    # The same piece with only the training loop in it.
    Valid(
        "model.train()\n"
        "for x, y in loader:\n"
        "    opt.zero_grad()\n"
        "    loss_fn(model(x), y).backward()\n"
        "    opt.step()\n"
    ),
    # A test script's entry point: tests seed where they compare runs.
    Valid(
        _TEST_SCRIPT,
        path="tests/test_checkpointing.py",
    ),
    # Seeded with torch.manual_seed in the main block.
    Valid(
        "import torch\n\n"
        "def train(model, loader, opt):\n"
        "    for x, y in loader:\n"
        "        loss = model(x).sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n\n"
        "if __name__ == '__main__':\n"
        "    torch.manual_seed(0)\n"
        "    train(None, [], None)\n"
    ),
    # Seeded through a same-file helper that the main block calls.
    Valid(
        "import torch\n\n"
        "def set_everything(seed):\n"
        "    torch.cuda.manual_seed_all(seed)\n\n"
        "def main():\n"
        "    set_everything(1)\n"
        "    optimizer = torch.optim.SGD([], lr=0.1)\n"
        "    for batch in range(10):\n"
        "        loss = batch\n"
        "        loss.backward()\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    ),
    # Library module: a training loop but no entry point.
    Valid(
        "def fit(model, loader, optimizer):\n"
        "    for x, y in loader:\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n"
    ),
    # Lightning: seed_everything before trainer.fit.
    Valid(
        "import lightning as L\n\n"
        "if __name__ == '__main__':\n"
        "    L.seed_everything(42)\n"
        "    trainer = L.Trainer(max_epochs=3)\n"
        "    trainer.fit(model)\n"
    ),
    # Hugging Face Trainer seeds itself from TrainingArguments.seed.
    Valid(
        "from transformers import Trainer, TrainingArguments\n\n"
        "if __name__ == '__main__':\n"
        "    trainer = Trainer(model=model, args=TrainingArguments('out', seed=0))\n"
        "    trainer.train()\n"
        "    trainer.fit = None\n"
    ),
    # An imported helper from a module outside the linted files, named like a seeder.
    Valid(
        "from utils import set_seed\n\n"
        "if __name__ == '__main__':\n"
        "    set_seed(0)\n"
        "    for x in data:\n"
        "        loss = model(x)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
    ),
    # Accelerate loop seeded with accelerate.utils.set_seed (random + numpy too).
    Valid(
        "import random\n"
        "from accelerate import Accelerator\n"
        "from accelerate.utils import set_seed\n\n"
        "def main():\n"
        "    accelerator = Accelerator()\n"
        "    set_seed(42)\n"
        "    for batch in loader:\n"
        "        random.shuffle(batch)\n"
        "        accelerator.backward(model(batch))\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    ),
    # Entry point that only evaluates: no backward + step in a loop.
    Valid(
        "import torch\n\n"
        "if __name__ == '__main__':\n"
        "    model = torch.load('m.pt')\n"
        "    for x in data:\n"
        "        print(model(x))\n"
    ),
    # A scheduler step is not an optimizer step.
    Valid(
        "if __name__ == '__main__':\n"
        "    for x in data:\n"
        "        model(x).backward()\n"
        "        lr_scheduler.step()\n"
    ),
    # Seeded at module top level; numpy through a default_rng generator.
    Valid(
        "import numpy as np\n"
        "import torch\n"
        "torch.manual_seed(0)\n"
        "rng = np.random.default_rng(0)\n\n"
        "def train():\n"
        "    for x in rng.permutation(10):\n"
        "        model(x).backward()\n"
        "        opt.step()\n\n"
        "if __name__ == '__main__':\n"
        "    train()\n"
    ),
    # random and numpy used and seeded, torch seeded via a training function passed to
    # mp.spawn (referenced, not called).
    Valid(
        "import random\n"
        "import numpy as np\n"
        "import torch\n"
        "import torch.multiprocessing as mp\n\n"
        "def worker(rank):\n"
        "    random.seed(rank)\n"
        "    np.random.seed(rank)\n"
        "    torch.manual_seed(rank)\n"
        "    for x in np.random.permutation(8):\n"
        "        random.shuffle(x)\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    mp.spawn(worker, nprocs=2)\n"
    ),
    # Seeding through a method of a same-file trainer class.
    Valid(
        "import torch\n\n"
        "class Recipe:\n"
        "    def __init__(self, cfg):\n"
        "        torch.manual_seed(cfg.seed)\n"
        "    def train(self):\n"
        "        for batch in self.loader:\n"
        "            self.model(batch).backward()\n"
        "            self.optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    Recipe(cfg).train()\n"
    ),
    # Python's random only picks a free port, a run name and a seed (which is then used).
    Valid(
        "import os\n"
        "import random\n"
        "import torch\n\n"
        "def main(seed=None):\n"
        "    seed = seed or random.randint(0, 10000)\n"
        "    torch.manual_seed(seed)\n"
        "    os.environ['MASTER_PORT'] = str(random.randint(20000, 30000))\n"
        "    run_name = f'run-{random.randint(0, 99)}'\n"
        "    for x in data:\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    ),
    # A unittest file: the main block runs the tests, not the training helper.
    Valid(
        "import unittest\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_train(self):\n"
        "        for x in data:\n"
        "            model(x).backward()\n"
        "            opt.step()\n\n"
        "if __name__ == '__main__':\n"
        "    unittest.main()\n"
    ),
    # An optimizer handed to an imported function not named like training (it may
    # evaluate, export, ...); a run that seeds before handing off to a trainer.
    Valid(
        "import torch\n"
        "from tools import export\n"
        "from mylib import Trainer\n\n"
        "def main():\n"
        "    model = torch.nn.Linear(2, 2)\n"
        "    export(model, torch.optim.SGD(model.parameters(), lr=0.1))\n\n"
        "def run():\n"
        "    torch.manual_seed(0)\n"
        "    loader = torch.utils.data.DataLoader(ds, shuffle=True)\n"
        "    Trainer(model).fit(loader)\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
        "    run()\n"
    ),
    # Adversarial example: the optimizer is over an input tensor of a pretrained, frozen
    # model in eval mode; no model is trained, so its randomness is no training run's.
    Valid(
        "import torch\n"
        "import torchvision\n\n"
        "if __name__ == '__main__':\n"
        "    net = torchvision.models.resnet18(weights='DEFAULT').eval()\n"
        "    for p in net.parameters():\n"
        "        p.requires_grad_(False)\n"
        "    delta = torch.zeros(1, 3, 224, 224, requires_grad=True)\n"
        "    attack = torch.optim.Adam([delta], lr=0.01)\n"
        "    for _ in range(50):\n"
        "        attack.zero_grad()\n"
        "        (-net(image + delta)[0, label]).backward()\n"
        "        attack.step()\n"
    ),
    # Nothing draws from torch's generator (semantic.torch_rng): a zero-initialised tensor fitted
    # full-batch; a linear layer whose weight and bias are zeroed, or set from numpy through a loop
    # over the model's children. Every run gives the same numbers; a seed changes nothing.
    Valid(
        "import torch\n\n"
        "X = torch.tensor([1, 2, 3, 4], dtype=torch.float32)\n"
        "Y = torch.tensor([2, 4, 6, 8], dtype=torch.float32)\n"
        "w = torch.tensor(0.0, requires_grad=True)\n"
        "optimizer = torch.optim.SGD([w], lr=0.01)\n"
        "for epoch in range(100):\n"
        "    loss = ((w * X - Y) ** 2).mean()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
    ),
    Valid(
        "import torch\n\n"
        "class LogisticRegression(torch.nn.Module):\n"
        "    def __init__(self, num_features):\n"
        "        super().__init__()\n"
        "        self.linear = torch.nn.Linear(num_features, 1)\n"
        "        self.linear.weight.detach().zero_()\n"
        "        self.linear.bias.detach().zero_()\n\n"
        "    def forward(self, x):\n"
        "        return torch.sigmoid(self.linear(x))\n\n"
        "x = torch.tensor([[0.0, 1.0], [1.0, 0.0]])\n"
        "y = torch.tensor([[1.0], [0.0]])\n"
        "model = LogisticRegression(2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(10):\n"
        "    cost = torch.nn.functional.binary_cross_entropy(model(x), y)\n"
        "    optimizer.zero_grad()\n"
        "    cost.backward()\n"
        "    optimizer.step()\n"
    ),
    Valid(
        "import numpy as np\n"
        "import torch\n\n"
        "rng = np.random.RandomState(0)\n"
        "x = torch.from_numpy(rng.random((30, 2)).astype('float32'))\n"
        "y = x @ torch.tensor([[2.0], [-3.0]]) + 1.0\n"
        "model = torch.nn.Sequential(torch.nn.Linear(2, 1))\n"
        "for m in model.children():\n"
        "    m.weight.data = torch.from_numpy(rng.randn(1, 2).astype('float32'))\n"
        "    m.bias.data = torch.zeros(1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)\n"
        "for epoch in range(10):\n"
        "    loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    ),
    # The one layer is a single nn.Linear and nothing else draws (no dropout, no shuffling, no
    # random data): linear or logistic regression, a convex fit that ends where it ends
    # whatever the initialisation (semantic.torch_rng.only_starts_a_convex_fit).
    Valid(
        "import torch\n\n"
        "x_train = torch.tensor([[3.3], [4.4], [5.5], [6.71]])\n"
        "y_train = torch.tensor([[1.7], [2.76], [2.09], [3.19]])\n"
        "model = torch.nn.Linear(1, 1)\n"
        "criterion = torch.nn.MSELoss()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.001)\n"
        "for epoch in range(60):\n"
        "    loss = criterion(model(x_train), y_train)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    ),
    Valid(
        "import numpy as np\n"
        "import torch\n\n"
        "class LogisticRegression(torch.nn.Module):\n"
        "    def __init__(self, n_features):\n"
        "        super().__init__()\n"
        "        self.linear = torch.nn.Linear(n_features, 1)\n\n"
        "    def forward(self, x):\n"
        "        return torch.sigmoid(self.linear(x))\n\n"
        "data = np.loadtxt('breast_cancer.csv', delimiter=',', dtype=np.float32)\n"
        "X_train, y_train = torch.from_numpy(data[:, :-1]), torch.from_numpy(data[:, -1:])\n"
        "model = LogisticRegression(30)\n"
        "criterion = torch.nn.BCELoss()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
        "for epoch in range(100):\n"
        "    loss = criterion(model(X_train), y_train)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
    ),
    # Style transfer with the generated image wrapped in an nn.Module of nn.Parameters only: an
    # input being optimised through a pretrained network, no training run.
    Valid(
        "import torch\n"
        "import torchvision\n\n"
        "net = torchvision.models.vgg19(pretrained=True).features.eval()\n\n"
        "class GeneratedImage(torch.nn.Module):\n"
        "    def __init__(self, img_shape):\n"
        "        super().__init__()\n"
        "        self.weight = torch.nn.Parameter(torch.rand(*img_shape))\n\n"
        "    def forward(self):\n"
        "        return self.weight\n\n"
        "gen_img = GeneratedImage(content.shape).to(device)\n"
        "gen_img.weight.data = content.data\n"
        "optimizer = torch.optim.Adam(gen_img.parameters(), lr=0.01)\n"
        "for i in range(500):\n"
        "    loss = style_loss(net(gen_img()), style)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    ),
    # Draws used only for display: a random example to plot or print, plot colours, a fake
    # value for a logging demo (semantic.display.only_shown); nothing the run computes
    # depends on them.
    Valid(
        "import random\n"
        "import numpy as np\n"
        "import matplotlib.pyplot as plt\n"
        "import torch\n\n"
        "torch.manual_seed(0)\n"
        "for x, y in loader:\n"
        "    optimizer.zero_grad()\n"
        "    loss_fn(model(x), y).backward()\n"
        "    optimizer.step()\n"
        "idx = random.randrange(len(test_set))\n"
        "image, label = test_set[idx]\n"
        "plt.imshow(image.squeeze())\n"
        "plt.title(f'label {label}, predicted {model(image[None]).argmax().item()}')\n"
        "for i in np.random.permutation(len(correct))[:5]:\n"
        "    seq, truth, pred = correct[i]\n"
        "    print(f'{seq} -> {truth} was labelled {pred}')\n"
        "viz.scatter(X=points, opts=dict(markercolor=np.random.randint(0, 255, len(points))))\n"
        "writer.add_scalar('demo/loss', np.random.random(), 0)\n"
    ),
    # ignite's ready-made trainer, seeded with ignite's own helper.
    Valid(
        "import torch\n"
        "from torch import nn\n"
        "from ignite.engine import create_supervised_trainer\n"
        "from ignite.utils import manual_seed\n\n"
        "def run(loader, epochs):\n"
        "    manual_seed(0)\n"
        "    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    create_supervised_trainer(model, optimizer, nn.CrossEntropyLoss()).run(loader, max_epochs=epochs)\n\n"
        "if __name__ == '__main__':\n"
        "    run(train_loader, 10)\n"
    ),
    # Only ignite's evaluator: a pretrained model scored, nothing trained.
    Valid(
        "import torch\n"
        "from ignite.engine import create_supervised_evaluator\n"
        "from ignite.metrics import Accuracy\n\n"
        "if __name__ == '__main__':\n"
        "    model = torch.hub.load('pytorch/vision', 'resnet18', pretrained=True)\n"
        "    evaluator = create_supervised_evaluator(model, metrics={'acc': Accuracy()})\n"
        "    evaluator.run(val_loader)\n"
    ),
]

INVALID = [
    # ... unless the option says tests are linted too.
    Invalid(
        _TEST_SCRIPT,
        lines=(3,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
        path="tests/test_checkpointing.py",
        options={"skip-tests": False},
    ),
    # A single linear layer trained on shuffled mini-batches, and a two-layer network on a full
    # batch: the seed matters (the order of the batches; a non-convex fit).
    Invalid(
        "import torch\n\n"
        "model = torch.nn.Linear(784, 10)\n"
        "loader = torch.utils.data.DataLoader(train_set, batch_size=100, shuffle=True)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
        "for x, y in loader:\n"
        "    loss = torch.nn.functional.cross_entropy(model(x.view(-1, 784)), y)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
        lines=(6,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    Invalid(
        "import torch\n\n"
        "x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])\n"
        "y = torch.tensor([[0.0], [1.0], [1.0], [0.0]])\n"
        "model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(1000):\n"
        "    loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
        lines=(7,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # The fixture's shape: loop in train(), called from the main block.
    Invalid(
        "import torch\n\n"
        "def train(model, loader):\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n"
        "        loss = model(x)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    train(model, loader)\n",
        lines=(10,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # Defining a seed helper is not enough: it must be called.
    Invalid(
        "import torch\n\n"
        "def set_seed(seed):\n"
        "    torch.manual_seed(seed)\n\n"
        "if __name__ == '__main__':\n"
        "    for x in data:\n"
        "        model(x).backward()\n"
        "        opt.step()\n",
        lines=(6,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # Seeding only Python's random and numpy does not seed torch.
    Invalid(
        "import random\n"
        "import numpy as np\n\n"
        "if __name__ == '__main__':\n"
        "    random.seed(0)\n"
        "    np.random.seed(0)\n"
        "    for x in data:\n"
        "        model(x).backward()\n"
        "        opt.step()\n",
        lines=(4,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # Top-level script, no main guard: reported at the first training statement.
    Invalid(
        "import torch\n"
        "model = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.Adam(model.parameters())\n"
        "for x in data:\n"
        "    model(x).sum().backward()\n"
        "    opt.step()\n",
        lines=(4,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # Lightning Trainer.fit without seed_everything.
    Invalid(
        "import pytorch_lightning as pl\n\n"
        "def main():\n"
        "    trainer = pl.Trainer(max_epochs=5)\n"
        "    trainer.fit(model, datamodule=dm)\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n",
        lines=(7,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # An unresolved helper not named like a seeder does not count.
    Invalid(
        "from utils import setup\n\n"
        "if __name__ == '__main__':\n"
        "    setup()\n"
        "    for x in data:\n"
        "        accelerator.backward(model(x))\n"
        "        optimizer.step()\n",
        lines=(3,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # torch seeded, Python's random used unseeded: the second message, at the draw it names.
    Invalid(
        "import random\n"
        "import torch\n\n"
        "def loader():\n"
        "    items = list(range(10))\n"
        "    random.shuffle(items)\n"
        "    return items\n\n"
        "if __name__ == '__main__':\n"
        "    torch.manual_seed(0)\n"
        "    for x in loader():\n"
        "        model(x).backward()\n"
        "        opt.step()\n",
        lines=(6,),
        messages=(
            "uses random.shuffle but never seeds Python's random, so shuffling/augmentation/sampling "
            "differs on every run; call random.seed(seed) next to torch.manual_seed(seed)",
        ),
    ),
    # numpy's global generator used unseeded (a default_rng elsewhere does not seed it).
    Invalid(
        "import numpy as np\n"
        "import torch\n\n"
        "if __name__ == '__main__':\n"
        "    torch.manual_seed(0)\n"
        "    rng = np.random.default_rng(0)\n"
        "    for x in np.random.permutation(10):\n"
        "        model(x).backward()\n"
        "        opt.step()\n",
        lines=(7,),
        messages=(
            "uses np.random.permutation but never seeds numpy's global generator, so "
            "shuffling/augmentation/sampling differs on every run; call np.random.seed(seed) next to "
            "torch.manual_seed(seed)",
        ),
    ),
    # A loop that calls a same-file function doing backward + step.
    Invalid(
        "def train_step(batch):\n"
        "    loss = model(batch)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n\n"
        "if __name__ == '__main__':\n"
        "    for batch in loader:\n"
        "        train_step(batch)\n",
        lines=(6,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # A torch.Generator seeded for the DataLoader does not seed model initialisation.
    Invalid(
        "import torch\n\n"
        "def main():\n"
        "    g = torch.Generator()\n"
        "    g.manual_seed(0)\n"
        "    for x in DataLoader(ds, generator=g):\n"
        "        fabric.backward(model(x))\n"
        "        optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n",
        lines=(10,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # A draw that picks training data is not for display, though the same value is also printed.
    Invalid(
        "import numpy as np\n"
        "import torch\n\n"
        "torch.manual_seed(0)\n"
        "idx = np.random.permutation(len(data))\n"
        "print(idx[:10])\n"
        "for x, y in data[idx]:\n"
        "    optimizer.zero_grad()\n"
        "    loss_fn(model(x), y).backward()\n"
        "    optimizer.step()\n",
        lines=(5,),
        messages=(
            "uses np.random.permutation but never seeds numpy's global generator, so "
            "shuffling/augmentation/sampling differs on every run; call np.random.seed(seed) next to "
            "torch.manual_seed(seed)",
        ),
    ),
    # The update runs in an ignite event handler (once per episode), not in the process function.
    Invalid(
        "import torch\n"
        "from ignite.engine import Engine, Events\n\n"
        "def finish_episode(policy, optimizer):\n"
        "    optimizer.zero_grad()\n"
        "    torch.cat(policy.losses).sum().backward()\n"
        "    optimizer.step()\n\n"
        "def main(env, args):\n"
        "    policy = Policy()\n"
        "    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)\n"
        "    trainer = Engine(run_single_timestep)\n\n"
        "    @trainer.on(Events.EPOCH_COMPLETED)\n"
        "    def update_model():\n"
        "        finish_episode(policy, optimizer)\n\n"
        "    trainer.run(range(10000), max_epochs=args.max_episodes)\n\n"
        "if __name__ == '__main__':\n"
        "    main(env, args)\n",
        lines=(20,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # Backward and step inside a callable helper object: timm's loss_scaler(loss, optimizer).
    Invalid(
        "import torch\n\n"
        "class NativeScaler:\n"
        "    def __init__(self):\n"
        "        self._scaler = torch.cuda.amp.GradScaler()\n\n"
        "    def __call__(self, loss, optimizer):\n"
        "        self._scaler.scale(loss).backward()\n"
        "        self._scaler.step(optimizer)\n"
        "        self._scaler.update()\n\n"
        "def train_one_epoch(model, loader, optimizer, loss_scaler):\n"
        "    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n"
        "        optimizer.zero_grad()\n"
        "        loss_scaler(loss, optimizer)\n\n"
        "if __name__ == '__main__':\n"
        "    train_one_epoch(model, loader, optimizer, NativeScaler())\n",
        lines=(18,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # A zeroed layer does not help when the run still draws: dropout masks differ on every run.
    Invalid(
        "import torch\n\n"
        "model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))\n"
        "for m in model.children():\n"
        "    if isinstance(m, torch.nn.Linear):\n"
        "        torch.nn.init.zeros_(m.weight)\n"
        "        torch.nn.init.zeros_(m.bias)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(10):\n"
        "    loss = model(torch.ones(4, 2)).sum()\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
        lines=(9,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # A script that imports what it uses is a program even where a name comes from nowhere (a
    # notebook that %run a helper defining `loader`; an abridged example): it is judged.
    Invalid(
        "import torch\n\n"
        "model = torch.nn.Linear(4, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x, y in loader:\n"
        "    opt.zero_grad()\n"
        "    torch.nn.functional.cross_entropy(model(x), y).backward()\n"
        "    opt.step()\n",
        lines=(5,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # A piece with no import but a main guard says it runs as a script: judged too.
    Invalid(
        "def step(batch):\n"
        "    model(batch).backward()\n"
        "    optimizer.step()\n\n"
        "if __name__ == '__main__':\n"
        "    for batch in loader:\n"
        "        step(batch)\n",
        lines=(5,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # ignite's ready-made trainer: create_supervised_trainer's engine clears, backpropagates and
    # steps once per batch when run (ignite's examples/mnist/mnist.py).
    Invalid(
        "import torch\n"
        "from torch import nn\n"
        "from ignite.engine import create_supervised_trainer\n\n"
        "def run(loader, epochs, lr):\n"
        "    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=lr)\n"
        "    trainer = create_supervised_trainer(model, optimizer, nn.CrossEntropyLoss())\n"
        "    trainer.run(loader, max_epochs=epochs)\n\n"
        "if __name__ == '__main__':\n"
        "    run(train_loader, 10, 0.01)\n",
        lines=(11,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
    # The same through an Engine built on ignite's own training step function.
    Invalid(
        "import torch\n"
        "from torch import nn\n"
        "import ignite.engine as ie\n\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
        "optimizer = torch.optim.Adam(model.parameters())\n"
        "trainer = ie.Engine(ie.supervised_training_step_amp(model, optimizer, nn.MSELoss()))\n"
        "trainer.run(loader, max_epochs=5)\n",
        lines=(7,),
        messages=(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model",
        ),
    ),
]
