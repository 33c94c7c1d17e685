"""Where a literal stands relative to a file's settings (``semantic.settings``: ``in_code``,
``literal_place``, ``literal_only_local``, ``file_settings``, ``bypassed``,
``name_bypasses_option``), which calls make no run (``runs.makes_no_run``), which classes
may be optimizers (``optim_classes.may_be_optimizer_base``, ``class_called``,
``project_class``) and the arguments of a call that may build one
(``hyperparameters.candidate_arguments``): the facts TL004 judges over."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import hyperparameters, optim_classes, runs, settings
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path.rsplit(".", 1)[0].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def nodes(ctx, kind, text: str) -> list[cst.CSTNode]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, kind) and ctx.module.code_for_node(n) == text]


def calls_named(ctx, name: str) -> list[cst.Call]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
            and ctx.module.code_for_node(n.func).endswith(name)]


def test_in_code_leaves_class_bodies_and_parameter_defaults():
    ctx, _ = analyses("""
        import torch
        opt = torch.optim.SGD(p, lr=0.1)
        def fit(model, lr=0.2, opt=torch.optim.SGD(p, lr=0.3)):
            return torch.optim.SGD(p, lr=0.4)
        class Config:
            lr = 0.5
            opt = torch.optim.SGD(p, lr=0.6)
            def build(self):
                return torch.optim.SGD(p, lr=0.7)
        """)
    found = {ctx.module.code_for_node(n): settings.in_code(ctx, n) for n in iter_nodes(ctx.module)
             if isinstance(n, cst.Float)}
    assert found == {"0.1": True, "0.2": False, "0.3": False, "0.4": True, "0.5": False, "0.6": False, "0.7": True}


def test_literal_place():
    ctx, sem = analyses("""
        import torch
        opt = torch.optim.SGD(p, lr=0.1)
        def build(model):
            return torch.optim.SGD(model.parameters(), lr=0.2)
        def fit(model, epochs):
            return torch.optim.SGD(model.parameters(), lr=0.3)
        def main(cfg):
            return torch.optim.SGD(p, lr=0.4)
        class Trainer:
            def __init__(self, model, lr):
                self.model = model
            def sched(self):
                return torch.optim.lr_scheduler.StepLR(self.opt, 10, gamma=0.5)
        """)
    place = {t: settings.literal_place(sem.model, nodes(ctx, cst.Float, t)[0]) for t in ("0.1", "0.2", "0.3", "0.4", "0.5")}
    assert place == {"0.1": settings.TOP, "0.2": settings.BURIED, "0.3": settings.INTERFACE,
                     "0.4": settings.INTERFACE, "0.5": settings.INTERFACE}


def test_literal_place_of_a_settings_object_of_run_settings_alone():
    """``main(args)`` of a command line that only picks the GPU hands no hyperparameter in."""
    ctx, sem = analyses("""
        import argparse, torch
        def main(args):
            return torch.optim.SGD(p, lr=0.1)
        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--cuda", type=int, default=0)
            main(parser.parse_args())
        """)
    assert settings.literal_place(sem.model, nodes(ctx, cst.Float, "0.1")[0]) == settings.BURIED


def test_literal_only_local():
    ctx, sem = analyses("""
        import torch
        lr = 0.01
        LR = 0.02
        def fit(model, flag):
            rate = 0.1
            mixed = 0.2
            if flag:
                mixed = compute()
            torch.optim.SGD(model.parameters(), lr=rate)
            torch.optim.SGD(model.parameters(), lr=mixed)
            torch.optim.SGD(model.parameters(), lr=lr)
            torch.optim.SGD(model.parameters(), lr=LR)
        torch.optim.SGD(net.parameters(), lr=lr)
        """)
    model = sem.model
    sgd = calls_named(ctx, "SGD")

    def shown(name, call, **kw):
        found = settings.literal_only_local(model, name, call, **kw)
        return None if found is None else [ctx.module.code_for_node(v) for v in found]

    assert shown("rate", sgd[0]) == ["0.1"]
    assert shown("mixed", sgd[1]) is None  # one binding is no literal
    assert shown("lr", sgd[2]) is None  # a module-level setting, in plain view
    assert shown("lr", sgd[4]) is None
    assert shown("LR", sgd[3]) is None
    # where a setting nothing reads says otherwise, the module-level names count
    assert shown("lr", sgd[2], bypassing=True) == ["0.01"]
    assert shown("lr", sgd[4], bypassing=True) == ["0.01"]
    assert shown("LR", sgd[3], bypassing=True) == ["0.02"]


def test_file_settings_bypassed_and_name_bypasses_option():
    ctx, sem = analyses("""
        import argparse, torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.1)
        parser.add_argument("--epochs", type=int, default=10)
        args = parser.parse_args()
        print(args.lr)
        lr = 0.01
        for epoch in range(args.epochs):
            opt = torch.optim.SGD(p, lr=lr, momentum=0.9)
        """, path="train.py")
    model = sem.model
    found = settings.file_settings(model)
    assert found == {"notebook": False, "benchmark": False, "configured": True, "own_script": False,
                     "unused": {"lr": ["--lr", 4]}}
    assert settings.file_settings(model) is found  # once per file
    assert settings.bypassed(model, ["lr", "momentum", "learning_rate"]) == {"lr", "learning_rate"}
    assert settings.bypassed(model, []) == set()
    name = nodes(ctx, cst.Name, "lr")[-1]
    assert settings.name_bypasses_option(model, "lr", name)
    assert not settings.name_bypasses_option(model, "momentum", name)


def test_file_settings_of_a_notebook_and_a_script_in_view():
    _, sem = analyses("""
        import torch
        def main():
            opt = torch.optim.SGD(p, lr=0.1)
        if __name__ == "__main__":
            main()
        """)
    found = settings.file_settings(sem.model)
    assert (found["configured"], found["own_script"], found["unused"]) == (False, True, {})
    _, sem = analyses("import torch\nbatch_size = 64\nloader = torch.utils.data.DataLoader(ds, batch_size=32)\n",
                      path="nb.ipynb")
    found = settings.file_settings(sem.model)
    assert found["notebook"] and found["unused"] == {"batch_size": ["batch_size", 2]}


def test_makes_no_run():
    ctx, sem = analyses("""
        import torch
        def train(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x).backward()
                opt.step()
        def resume(model, loader, ckpt):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            opt.load_state_dict(ckpt["optimizer"])
            for x in loader:
                model(x).backward()
                opt.step()
        def mode(x):
            m = torch.nn.Parameter(x.detach().clone())
            opt = torch.optim.Adam([m], lr=0.1)
            for _ in range(100):
                (-log_prob(m)).backward()
                opt.step()
            return m.detach()
        """)
    sgd_train, sgd_resume = calls_named(ctx, "SGD")
    adam = calls_named(ctx, "Adam")[0]
    assert [runs.makes_no_run(sem, c) for c in (sgd_train, sgd_resume, adam)] == [False, True, True]


def test_may_be_optimizer_base_and_class_called():
    ctx, sem = analyses("""
        import torch
        from torch import nn
        from mypkg.optim import Base
        class A(torch.optim.SGD):
            pass
        class B(A):
            def __init__(self, params, lr, momentum=0.9):
                super().__init__(params, lr, momentum)
        class C(nn.Module):
            pass
        class D(Base):
            pass
        opt = B(net.parameters(), 0.1)
        """)
    classes = {n.name.value: n for n in iter_nodes(ctx.module) if isinstance(n, cst.ClassDef)}
    base = {name: optim_classes.may_be_optimizer_base(ctx, node.bases[0].value, {"A"}) for name, node in classes.items()}
    assert base == {"A": True, "B": True, "C": False, "D": True}
    assert not optim_classes.may_be_optimizer_base(ctx, classes["B"].bases[0].value, set())  # A not (yet) one
    call = calls_named(ctx, "B")[0]
    info = optim_classes.class_called(sem.model, "B", call)
    assert info is not None and info.node is classes["B"]
    assert optim_classes.local_positions(info) == {1: "lr", 2: "momentum"}
    assert optim_classes.class_called(sem.model, "torch", call) is None  # an import, no class


def test_project_class():
    class Record:
        def qualified(self, name):
            return f"pkg.mod.{name}"

    class Project:
        def resolve_symbol(self, name, record):
            return (Record(), "Found") if name == "pkg.other.Found" else None

    record, project = Record(), Project()
    assert optim_classes.project_class(project, record, ["local", "Mine"]) == "pkg.mod.Mine"
    assert optim_classes.project_class(project, record, ["ext", "pkg.other.Found"]) == "pkg.mod.Found"
    assert optim_classes.project_class(project, record, ["ext", "elsewhere.Gone"]) is None


def test_candidate_arguments():
    ctx, _ = analyses("""
        opt = MyOpt(params, 0.1, 0.9, 1, 2, 3, 4, 5, lr=0.2, weight_decay=1e-4, name="x", momentum=0.8)
        other = MyOpt(params, 0.1, *rest, 0.3)
        """)
    first, second = calls_named(ctx, "MyOpt")

    def shown(call, **kw):
        return [(k, ctx.module.code_for_node(v)) for k, v in hyperparameters.candidate_arguments(call, **kw)]

    assert shown(first) == [(1, "0.1"), (2, "0.9"), (3, "1"), (4, "2"), (5, "3"), (6, "4"), ("lr", "0.2"),
                            ("weight_decay", "1e-4"), ("momentum", "0.8")]
    assert shown(first, ignore=frozenset({"momentum", "lr"})) == [(1, "0.1"), (2, "0.9"), (3, "1"), (4, "2"),
                                                                  (5, "3"), (6, "4"), ("weight_decay", "1e-4")]
    assert shown(second) == [(1, "0.1")]  # positions after ``*rest`` no longer line up
