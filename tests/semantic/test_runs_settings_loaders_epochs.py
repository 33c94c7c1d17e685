"""Shared-layer queries of TL001 and TL004 (``optimises_inputs`` is for TL006
too): what kind of run a file is (``semantic.runs``), where a value is a configurable
default (``semantic.settings``), what a DataLoader feeds (``semantic.loaders``), epoch-loop
counts (``semantic.epochs``) and the optimizer class a variable holds
(``semantic.optim_classes``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import epochs, loaders, optim_classes, runs, settings
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def calls_named(ctx, name: str) -> list[cst.Call]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
            and ctx.module.code_for_node(n.func).endswith(name)]


STYLE_TRANSFER = """
    import torch
    from torchvision import models
    cnn = models.vgg19(weights="DEFAULT").features.eval()
    img = content.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([img.requires_grad_()])
    """


@pytest.mark.parametrize(("src", "expected"), [
    (STYLE_TRANSFER, True),
    # hand-written regression: tensors, but no frozen or pretrained model
    ("import torch\nw = torch.randn(3, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n", False),
    # an optimizer over a model's parameters next to a frozen one
    ("import torch\nnet.eval()\nopt = torch.optim.SGD([p for p in net.parameters()], lr=0.1)\n", False),
    ("import torch\nteacher.requires_grad_(False)\nopt = torch.optim.Adam(student.parameters())\n", False),
    ("import torch\nnet.eval()\n", False),  # no optimizer at all
])
def test_optimises_inputs(src, expected):
    _, sem = analyses(src)
    assert runs.optimises_inputs(sem) is expected


def test_single_demo_step_and_lr_set_every_step():
    ctx, sem = analyses("""
        import torch
        def make(model):
            return torch.optim.AdamW(model.parameters(), lr=3e-4)
        def train(model, loader, schedule):
            opt = make(model)
            for step, x in enumerate(loader):
                model(x).backward()
                for g in opt.param_groups:
                    g["lr"] = schedule(step)
                opt.step()
        def fixed(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step, x in enumerate(loader):
                model(x).backward()
                for g in opt.param_groups:
                    g["lr"] = 0.01
                opt.step()
        if __name__ == "__main__":
            demo = torch.optim.SGD(net.parameters(), lr=0.1)
            net(x).backward()
            demo.step()
        """)
    adamw, sgd_fixed, sgd_demo = calls_named(ctx, "AdamW") + calls_named(ctx, "SGD")
    assert runs.held_as(sem, adamw) == [("opt", sem.model.module.children[1].node)]
    assert [runs.lr_set_every_step(sem, c) for c in (adamw, sgd_fixed, sgd_demo)] == [True, False, False]
    assert [runs.single_demo_step(sem, c) for c in (adamw, sgd_fixed, sgd_demo)] == [False, False, True]


def test_settings():
    ctx, sem = analyses("""
        '''doc'''
        import torch
        lr = 0.1
        batch_size = 64
        model = Net()
        epochs = 3
        exec(open("configurator.py").read())
        late = 1
        def fit(model, opt=None, sched=None, other=None):
            opt = torch.optim.Adam(model.parameters()) if opt is None else opt
            if sched is None:
                sched = torch.optim.lr_scheduler.StepLR(opt, 1)
            x = other or torch.optim.SGD(model.parameters())
            y = torch.optim.SGD(model.parameters()) if x is None else x
        """)
    model = sem.model
    order = settings.configurator_order(model)
    assert settings.takes_configuration(model)  # the configurator reads the command line
    assert model.module.bindings["epochs"][0].order < order < model.module.bindings["late"][0].order
    adam, step_lr = calls_named(ctx, "Adam") + calls_named(ctx, "StepLR")
    sgd_other, sgd_x = calls_named(ctx, "SGD")
    assert [settings.fills_parameter_default(model, c) for c in (adam, step_lr, sgd_other, sgd_x)] == \
        [True, True, True, False]  # ``x`` is a local, not a parameter


def test_where_a_file_takes_its_settings_from():
    def takes(src: str) -> bool:
        return settings.takes_configuration(analyses(src)[1].model)

    assert takes("import argparse\nargs = argparse.ArgumentParser().parse_args()\n")
    assert takes("from omegaconf import OmegaConf\ncfg = OmegaConf.load('c.yaml')\n")
    assert takes("import sys\nlr = float(sys.argv[1])\n")
    assert takes("from sys import argv\nlr = float(argv[1])\n")
    assert takes("def fit(model, cfg):\n    return cfg.optim.lr\n")
    assert takes("class M:\n    def f(self):\n        return self.hparams.lr\n")
    assert takes("def fit(config):\n    return config['lr']\n")
    # An optimizer named ``opt``: its methods and param groups are no settings.
    assert not takes("def fit(opt, loss):\n    loss.backward()\n    opt.step()\n    opt.param_groups[0]['lr'] = 0.1\n")
    assert not takes("import torch\nlr = 0.1\nopt = torch.optim.SGD(p, lr=lr)\n")
    assert settings.might_take_configuration("args.lr") and not settings.might_take_configuration("x = 1\n")


@pytest.mark.parametrize("text, reads", [
    ("args.lr", True), ("self.ARGS.lr", True), ("self.args .lr", True), ("Args [0]", True), ("args\n[", True),
    ("hparams.x", True), ("\u017fettings.x", True),  # (?i) matches the long s with an s
    ("xargs.lr", False), ("xhparams.x", False), (".args.x", False), ("a.cfg.x", False), ("\u0130args.x", False),
    ("args = 1", False),
])
def test_text_that_may_read_a_setting(text, reads):
    """``might_read_settings``: a name of CONFIG_NAMES in any case, then ``.`` or ``[``,
    with nothing of a name or ``.`` before it but ``self.``: as one ``(?i)`` pattern says."""
    assert settings.might_read_settings(text) is reads


def test_text_that_may_read_a_setting_as_one_pattern_says():
    """Looking for each name on its own (only those that are words of the lowered text)
    answers as one ``(?i)`` pattern of every name with the lookbehind in front, on texts
    built from the names' pieces, in other cases, beside characters that fold to ASCII."""
    import random
    import re

    every = re.compile(r"(?i)(?:(?<![\w.])|(?<=self\.))(?:"
                       + "|".join(sorted(map(re.escape, settings.CONFIG_NAMES), key=len, reverse=True)) + r")\s*[.\[]")
    pieces = ["args", "ARGS", "arg", "hp", "H", "p", "s", "cfg", "self", "x", ".", "[", " ", "\n", "\t", "_", "(",
              "\u017f", "\u0130", "\u212a", "\xe9", "ettings", "params", "h"]
    rng = random.Random(38)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert settings.might_read_settings(text) == (every.search(text) is not None), text


def test_configured_values_and_whether_anything_uses_them():
    ctx, sem = analyses("""
        import argparse
        import torch
        LR = 0.1
        num_epochs = 10
        batch_size = 64
        parser = argparse.ArgumentParser()
        parser.add_argument("--weight-decay", type=float, default=0.0)
        parser.add_argument("--momentum", type=float, default=0.9)
        args = parser.parse_args()
        print(f"lr {LR}, {args.momentum}")
        opt = torch.optim.SGD(p, lr=0.01, momentum=0.5, weight_decay=args.weight_decay)
        loader = torch.utils.data.DataLoader(ds, batch_size=batch_size)
        for epoch in range(num_epochs):
            pass
        """)
    found = {idea: (c.shown, c.used) for idea, c in settings.configured_values(sem.model).items()}
    assert found == {"lr": ("LR", False), "epochs": ("num_epochs", True), "batch_size": ("batch_size", True),
                     "weight_decay": ("--weight-decay", True), "momentum": ("--momentum", False)}
    # The parsed object handed on whole: any option may be read where it goes.
    _, sem = analyses("""
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float)
        main(parser.parse_args())
        args = parser.parse_args()
        train(args)
        """)
    assert settings.configured_values(sem.model)["lr"].used


def test_an_unread_option_wins_over_a_module_level_name_and_dest_is_what_is_read():
    src = """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("-l", "--lr", dest="learning_rate", type=float)
        parser.add_argument("--epochs", type=int)
        args = parser.parse_args()
        lr = {lr}
        epochs = 5
        opt = make(lr, args.epochs, epochs)
        """
    _, sem = analyses(src.format(lr="0.01"))
    found = {idea: (c.shown, c.used) for idea, c in settings.configured_values(sem.model).items()}
    assert found == {"lr": ("--lr", False), "epochs": ("epochs", True)}
    _, sem = analyses(src.format(lr="args.learning_rate"))
    assert settings.configured_values(sem.model)["lr"].used


def test_concepts_and_interfaces():
    assert [settings.concept(n) for n in ("num_epochs", "EPOCHS", "train_lr", "base_lr", "bs", "dropout")] == \
        ["epochs", "epochs", "lr", "lr", "batch_size", None]
    ctx, sem = analyses("""
        import torch
        class Trainer:
            def __init__(self, model, train_lr=1e-4):
                self.opt = torch.optim.Adam(model.parameters(), lr=train_lr)
            def step(self):
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        def fit(model, loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        def tune(model, epochs):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """)
    in_method, in_fit, in_tune = calls_named(ctx, "clip_grad_norm_")
    assert [settings.interface_takes_hyperparameters(sem.model, c) for c in (in_method, in_fit, in_tune)] == \
        [True, False, True]


def test_loaders():
    ctx, sem = analyses("""
        import torch
        from torch.utils.data import DataLoader
        def main(ds, model, root):
            a = DataLoader(ds, batch_size=8, shuffle=True)
            testloader = DataLoader(ds, batch_size=8)
            b = DataLoader(MNIST(root, train=False), batch_size=8)
            c = DataLoader(ds, batch_size=8)
            d = DataLoader(ds, batch_size=8)
            evaluate(model, c)
            fit(model, d)
        """)
    a, test, b, c, d = calls_named(ctx, "DataLoader")
    assert [loaders.feeds_training(ctx, x) for x in (a, test, b, c, d)] == [True, False, False, False, False]
    assert [loaders.feeds_evaluation(sem, x) for x in (test, b, c, d)] == [True, True, True, False]


def test_loaders_a_training_loop_iterates():
    ctx, sem = analyses("""
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from tqdm import tqdm
        train = DataLoader(ds, batch_size=8)
        val = DataLoader(ds, batch_size=8)
        unused = DataLoader(ds, batch_size=8)
        class Trainer:
            def __init__(self, ds):
                self.loader = DataLoader(ds, batch_size=4)
            def epoch(self, model, opt):
                for x, y in self.loader:
                    opt.zero_grad()
                    F.mse_loss(model(x), y).backward()
                    opt.step()
        for epoch in range(3):
            for i, (x, y) in enumerate(tqdm(train)):
                opt.zero_grad()
                F.mse_loss(model(x), y).backward()
                opt.step()
            for x, y in val:
                print(model(x))
        """)
    train, val, unused, own = calls_named(ctx, "DataLoader")
    found = loaders.iterated_by_training(sem)
    assert len(found) == 2 and any(c is train for c in found) and any(c is own for c in found)


def test_range_stop_and_constructed_optimizer():
    ctx, sem = analyses("""
        import torch
        def get(img):
            return torch.optim.LBFGS([img])
        opt = get(x)
        for e in range(start, start + 200):
            opt.step()
        for e in range(1, n + 1):
            pass
        """)
    stops = [ctx.module.code_for_node(epochs.range_stop(ctx, lp.node.iter)) for lp in sem.model.loops.values()]
    assert stops == ["200", "n"]
    step = calls_named(ctx, "opt.step")[0]
    assert optim_classes.constructed_optimizer(sem, "opt", step) == "torch.optim.LBFGS"


@pytest.mark.parametrize("call, parsed", [
    ("range(n)", (None, "n", None)), ("range(1, n + 1)", ("1", "n + 1", None)), ("range(0, n, 2)", ("0", "n", "2")),
    ("trange(n, desc='epochs')", (None, "n", None)), ("range()", None), ("range(a, b, c, d)", None),
    ("range(*bounds)", None),
])
def test_range_arguments(call, parsed):
    node = cst.parse_expression(call)
    found = epochs.range_arguments(node)
    code = cst.Module([]).code_for_node
    assert (None if found is None else tuple(None if e is None else code(e) for e in found)) == parsed


def test_an_image_wrapped_in_a_module_of_parameters_is_an_optimised_input():
    src = """
        import torch
        import torchvision
        net = torchvision.models.vgg19(pretrained=True).features.eval()
        class GeneratedImage(torch.nn.Module):
            def __init__(self, shape):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.rand(*shape))
            def forward(self):
                return self.weight
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 1)
        gen = {cls}(shape).to(device)
        optimizer = torch.optim.Adam(gen.parameters(), lr=0.01)
        """
    _, sem = analyses(src.replace("{cls}", "GeneratedImage"))
    assert runs.optimises_inputs(sem)
    _, sem = analyses(src.replace("{cls}", "Net"))
    assert not runs.optimises_inputs(sem)


def test_run_settings_and_scripts_in_view():
    import libcst as cst
    from torchlint.context import Dispatcher, FileContext
    from torchlint.imports import ImportTable
    from torchlint.semantic.settings import only_run_settings, run_setting, script_in_view

    assert run_setting("cuda") and run_setting("dataset_root") and run_setting("mnist_type") and run_setting("--out")
    assert not run_setting("lr") and not run_setting("batch_size") and not run_setting("patience")
    assert not run_setting("val_size") and not run_setting("hidden")

    def model(src):
        module = cst.parse_module(src)
        ctx = FileContext("m.py", module, src, ImportTable("m", False))
        Dispatcher(ctx, []).run()
        return ctx.semantic.model

    parser = "import argparse\np = argparse.ArgumentParser()\n"
    gpu = model(parser + "p.add_argument('--cuda', type=int)\nargs = p.parse_args()\nprint(args.cuda)\n")
    assert only_run_settings(gpu) and script_in_view(gpu)
    tuned = model(parser + "p.add_argument('--cuda')\np.add_argument('--lr', type=float)\nargs = p.parse_args()\n")
    assert not only_run_settings(tuned) and not script_in_view(tuned)
    read_elsewhere = model(parser + "p.add_argument('--cuda')\nargs = p.parse_args()\nfit(lr=args.lr)\n")
    assert not only_run_settings(read_elsewhere)  # a setting read that the parser shown does not define
    positional = model(parser + "p.add_argument('data')\nargs = p.parse_args()\n")
    assert not only_run_settings(positional)
    switches = model(parser + "p.add_argument('--cuda', type=int)\np.add_argument('--semseg', action='store_true')\n"
                              "p.add_argument('--scenario', choices=['a', 'b'])\np.add_argument('--arch', default='resnet')\n"
                              "args = p.parse_args()\nprint(args.semseg, args.scenario, args.arch)\n")
    assert only_run_settings(switches)
    numbers = model(parser + "p.add_argument('--cuda', type=int)\np.add_argument('--hidden', type=int, default=64)\n"
                             "args = p.parse_args()\n")
    assert not only_run_settings(numbers)  # a number that no run word names: a hyperparameter
    named = model(parser + "p.add_argument('--lr', type=str, default='1e-3')\nargs = p.parse_args()\n")
    assert not only_run_settings(named)  # a hyperparameter written as a string is still one
    hydra = model("import hydra\n@hydra.main(config_path='conf')\ndef main(cfg):\n    print(cfg.device)\n")
    assert not only_run_settings(hydra) and not script_in_view(hydra)
    plain = model("def main():\n    pass\nif __name__ == '__main__':\n    main()\n")
    assert not only_run_settings(plain) and script_in_view(plain)
    module = model("def main():\n    pass\n")
    assert not script_in_view(module)


@pytest.mark.parametrize("src, expected", [
    ("from torch.utils.data import TensorDataset, DataLoader\nimport torch\n"
     "ds = TensorDataset(torch.rand(80, 4), torch.randint(3, (80,)))\nloader = DataLoader(ds, batch_size=8)\n", True),
    ("import torch\nfrom torch.utils.data import TensorDataset, DataLoader\n"
     "x = torch.randn(80, 4)\ny = x.sum(1, keepdim=True) > 0\n"
     "loader = DataLoader(dataset=TensorDataset(x, (x[:, 0] > 0).float()), batch_size=8)\n", True),
    # real data, or random inputs with ordered targets
    ("import torch\nfrom torch.utils.data import TensorDataset, DataLoader\n"
     "ds = TensorDataset(torch.load('x.pt'), torch.load('y.pt'))\nloader = DataLoader(ds, batch_size=8)\n", False),
    ("import torch\nfrom torch.utils.data import TensorDataset, DataLoader\n"
     "ds = TensorDataset(torch.rand(80, 4), torch.arange(80) // 8)\nloader = DataLoader(ds, batch_size=8)\n", False),
    ("import torch\nfrom torch.utils.data import DataLoader\nfrom torchvision.datasets import MNIST\n"
     "loader = DataLoader(MNIST('.', train=True), batch_size=8)\n", False),
    ("import torch\nfrom torch.utils.data import TensorDataset, DataLoader\nloader = DataLoader(TensorDataset(), 8)\n",
     False),
])
def test_random_dataset(src, expected):
    ctx, sem = analyses(src)
    loader = calls_named(ctx, "DataLoader")[0]
    assert loaders.loader_dataset(sem.model, loader) is not None
    assert loaders.random_dataset(sem.model, loader) is expected
