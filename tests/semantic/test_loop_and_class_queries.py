"""Shared-layer queries added for TL004's migration: calls in a loop body, what a loop's
iterations run, optimizer classes by qualified name, a project class's index entry, and the
file kinds (torchlint.filekinds)."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.engine import analyze_source
from torchlint.filekinds import CONFIG_FILES_DESCRIPTION, is_config_file, is_test_file
from torchlint.imports import ImportTable
from torchlint.project import Project
from torchlint.statements import dotted_name
from torchlint.torch_api import is_optimizer_class


def analyses(src: str, path: str = "m.py"):
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def loops_by_iter(sem) -> dict[str, object]:
    return {sem.model.ctx.module.code_for_node(lp.node.iter): lp for lp in sem.model.loops.values()}


def test_calls_in_loop_cover_the_body_and_comprehensions_not_the_iterable_else_or_lambdas():
    ctx, sem = analyses(
        "for x in make(loader):\n"
        "    a(x)\n"
        "    ys = [b(y) for y in x]\n"
        "    f = lambda: c()\n"
        "    def g():\n        d()\n"
        "    for z in x:\n        e(z)\n"
        "else:\n    done()\n")
    outer = loops_by_iter(sem)["make(loader)"]
    assert [dotted_name(s.node.func) for s in sem.model.calls_in_loop(outer)] == ["a", "b", "e"]
    inner = loops_by_iter(sem)["x"]
    assert [dotted_name(s.node.func) for s in sem.model.calls_in_loop(inner)] == ["e"]


def test_loop_runs_backward_and_step_directly_or_through_callees():
    ctx, sem = analyses(
        "def update(model, x, opt):\n    model(x).backward()\n    opt.step()\n"
        "def fit(model, loader, opt, sched):\n"
        "    for epoch in range(3):\n        for x in loader:\n            update(model, x, opt)\n"
        "    for x in loader:\n        model(x).backward()\n"
        "    for i in range(3):\n        sched.step()\n")
    training = sem.training
    loops = sorted(sem.model.loops.values(), key=lambda lp: lp.order)
    assert [training.loop_runs(lp) for lp in loops] == [{"backward", "step"}, {"backward", "step"}, {"backward"}, set()]


@pytest.mark.parametrize(
    ("name", "expected"),
    [("torch.optim.SGD", True), ("torch.optim.adamw.AdamW", True), ("bitsandbytes.optim.Adam8bit", True),
     ("lion_pytorch.Lion", True), ("torch.optim.lr_scheduler.StepLR", False),
     ("transformers.optimization.get_linear_schedule_with_warmup", False), ("torch.nn.Module", False)],
)
def test_is_optimizer_class(name, expected):
    assert is_optimizer_class(name) is expected


def test_is_optimizer_class_needs_an_import_for_a_bare_known_name():
    assert not is_optimizer_class("mymod.Lion", lambda: False)


def test_project_class_fact():
    files = {
        "pkg/opt.py": "import torch\nclass Mine(torch.optim.Adam):\n    def __init__(self, params, lr=1e-3):\n"
                      "        super().__init__(params, lr=lr)\n    class Inner:\n        pass\n",
    }
    records = [analyze_source(p, t.encode(), frozenset({"TL004"})).record for p, t in files.items()]
    project = Project(records)
    record, fact = project.class_fact("pkg.opt.Mine")
    assert record.path == "pkg/opt.py" and fact["bases"] == ["torch.optim.Adam"] and "__init__" in fact["methods"]
    assert project.class_fact("pkg.opt.Mine.Inner")[1]["name"] == "Mine.Inner"
    assert project.class_fact("torch.optim.Adam") is None


def test_file_kinds():
    assert is_test_file("pkg/tests/x.py") and is_test_file("conftest.py") and not is_test_file("attest/x.py")
    # unittest's module of tests; a research repository's ``test.py`` evaluates the model
    assert is_test_file("monotonicnetworks/tests.py") and not is_test_file("test.py")
    assert is_config_file("configs/a.py") and is_config_file("model_config.py")
    assert not is_config_file("configuration.py")
    assert "configs/" in CONFIG_FILES_DESCRIPTION and "hparams.py" in CONFIG_FILES_DESCRIPTION
    from torchlint import files

    assert files.is_test_file is is_test_file  # the old home still answers
