"""TL004 hard-coded-hyperparameter beyond the embedded cases: fixtures, messages, options,
optimizer subclasses in other project files, the file filters and the recognisers it adds
to torch_api. The embedded VALID/INVALID cases run in tests/test_rule_cases.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchlint.checks.tl004_hard_coded_hyperparameter import is_config_file, is_test_file, numeric_value
from torchlint.context import FileContext
from torchlint.imports import ImportTable
from torchlint.testing import lint_snippet, lint_tree, notebook
from torchlint.torch_api import is_optimizer_constructor, scheduler_kind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


# What makes a file take its settings from outside its code (``settings.takes_configuration``):
# appended to the snippets below, which test what TL004 recognises once a literal counts. Where
# a literal counts is tested under "where a literal is hard-coded".
CONFIGURED = '\nimport argparse\nargs = argparse.ArgumentParser().parse_args()\n'


def tl004(code: str, path: str = "train.py", configured: bool = True, **options):
    code = textwrap.dedent(code) + (CONFIGURED if configured else "")
    return lint_snippet(code, select=["TL004"], path=path, options={"TL004": options} if options else None)


def lines(findings) -> list[int]:
    return sorted(f.line for f in findings)


# -- fixtures ------------------------------------------------------------------------------

def test_buggy_fixture_reports_lr_momentum_batch_size_and_epochs():
    findings = lint_tree(_project("buggy_project"), select=["TL004"], dedent=False)
    got = sorted((f.path, f.line, f.message.split(" is hard-coded")[0]) for f in findings)
    assert got == [
        ("train.py", 17, "batch size 64"),
        ("train.py", 31, "learning rate 0.01"),
        ("train.py", 31, "momentum 0.9"),
        ("train.py", 33, "epoch count 30"),
    ]


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL004"], dedent=False) == []


def test_clean_fixture_is_clean_for_every_rule():
    assert lint_tree(_project("clean_project"), dedent=False) == []


# -- messages ------------------------------------------------------------------------------

def test_message_of_a_keyword_literal():
    (finding,) = tl004(
        """
        import torch
        def train(model):
            return torch.optim.SGD(model.parameters(), lr=0.01)
        """
    )
    assert finding.message == (
        "learning rate 0.01 is hard-coded in `torch.optim.SGD(...)`, so it cannot be swept, logged or "
        "reproduced; read it from a config or a command-line argument"
    )
    assert (finding.line, finding.column, finding.end_column) == (4, 51, 55)


def test_local_variable_is_reported_once_at_its_literal():
    findings = tl004(
        """
        import torch
        def train(model):
            lr = 3e-4
            opt = torch.optim.Adam(model.parameters(), lr=lr)
            sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=1000)
        """
    )
    assert [(f.line, f.column) for f in findings] == [(4, 10), (6, 77)]
    assert findings[0].message.startswith(
        "learning rate 3e-4 is hard-coded: `lr` is assigned only this literal and passed to `torch.optim.Adam(...)`"
    )
    assert findings[1].message.startswith("`total_steps` 1000 is hard-coded in `torch.optim.lr_scheduler.OneCycleLR(...)`")


def test_epoch_loop_messages():
    findings = tl004(
        """
        def fit(model, loader, opt):
            epochs = 12
            for epoch in range(epochs):
                train_one_epoch(model, loader, opt)
        """
    )
    assert lines(findings) == [3]
    assert "`epochs` is assigned only this literal and bounds the epoch loop" in findings[0].message


def test_long_literal_is_shortened_in_the_message():
    (finding,) = tl004(
        """
        from torch.optim.lr_scheduler import MultiStepLR
        def sched(opt):
            return MultiStepLR(opt, milestones=[10, 20, 30, 40, 50, 60, 70, 80, 90])
        """
    )
    assert "`milestones` [10, 20, 30, 40, 50, 60, 70..." in finding.message


# -- what counts -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("source", "expected"),
    [("3", 3), ("1e-3", 1e-3), ("-1", -1), ("0.1 * 2", 0.2), ("10 ** -4", 1e-4), ("[30, 80]", [30, 80]),
     ("(0.1)", 0.1), ("x", None), ("[1, x]", None), ("2 ** 1000", None), ("1 / 0", None), ("'3'", None)],
)
def test_numeric_value(source, expected):
    value = numeric_value(cst.parse_expression(source))
    if isinstance(expected, float):
        assert value == pytest.approx(expected)
    else:
        assert value == expected


def test_positional_arguments_follow_each_signature():
    findings = tl004(
        """
        import torch
        from torch.optim import lr_scheduler
        from torch.utils.data import DataLoader
        def build(model, ds, p):
            a = torch.optim.SGD(p, 0.1, 0.9)
            b = torch.optim.RMSprop(p, 0.01, 0.99, 1e-8, 1e-4, 0.5)
            c = torch.optim.Adam(p, 1e-3, (0.9, 0.99), 1e-8)
            d = lr_scheduler.CosineAnnealingLR(a, 200, 1e-6)
            e = lr_scheduler.ExponentialLR(a, 0.95)
            f = DataLoader(ds, 64, shuffle=True)
            g = torch.optim.lr_scheduler.ReduceLROnPlateau(a, "min", 0.5, 3)
        """
    )
    got = sorted((f.line, f.message.split(" is hard-coded")[0]) for f in findings)
    assert got == [
        (6, "learning rate 0.1"), (6, "momentum 0.9"),
        (7, "learning rate 0.01"), (7, "momentum 0.5"), (7, "weight decay 1e-4"),
        (8, "learning rate 1e-3"),
        (9, "`T_max` 200"), (9, "`eta_min` 1e-6"),
        (10, "`gamma` 0.95"),
        (11, "batch size 64"),
        (12, "`factor` 0.5"), (12, "`patience` 3"),
    ]


def test_hf_schedules_and_scheduler_positionals():
    findings = tl004(
        """
        import transformers
        from transformers.optimization import get_scheduler, get_cosine_schedule_with_warmup
        def build(opt, n):
            a = get_scheduler("linear", opt, 100, n)
            b = get_cosine_schedule_with_warmup(opt, 500, 10000)
            c = transformers.get_constant_schedule_with_warmup(opt, num_warmup_steps=50)
        """
    )
    assert sorted((f.line, f.message.split(" is hard-coded")[0]) for f in findings) == [
        (5, "warmup length 100"), (6, "`num_training_steps` 10000"), (6, "warmup length 500"), (7, "warmup length 50"),
    ]


def test_gradient_clipping_forms():
    findings = tl004(
        """
        from torch.nn.utils import clip_grad_norm_, clip_grad_value_
        def step(model, accelerator, fsdp_model, opt):
            clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2)
            clip_grad_value_(model.parameters(), 0.5)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            fsdp_model.clip_grad_norm_(5.0)
            clip_grad_norm_(model.parameters(), model.max_norm)
        """
    )
    assert lines(findings) == [4, 5, 6, 7]
    assert all("gradient-clipping" in f.message for f in findings)


def test_module_level_names_are_settings_in_plain_sight_but_a_literal_in_a_call_is_not():
    findings = tl004(
        """
        import torch
        BATCH = 32
        model = torch.nn.Linear(4, 2)
        lr = 0.05
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.8)
        for epoch in range(BATCH):
            model(torch.ones(4)).sum().backward()
            opt.step()
        """
    )
    # ``lr`` is a name the script sets, wherever it stands; the momentum is written in the call
    # of a script that takes its settings from the command line.
    assert [f.message.split(" is ")[0] for f in findings] == ["momentum 0.8"]


def test_epoch_loop_needs_training_and_an_epoch_like_shape():
    findings = tl004(
        """
        def fit(model, loader, opt, data):
            for epoch in range(5):
                evaluate(model, loader)
            for step in range(1000):
                model(next(data)).backward()
                opt.step()
            for i in range(3):
                for x in range(4):
                    model(x).backward()
            for run in range(3):
                trainer.train()
            for k in range(7):
                trainer.run_epoch(loader)
        """
    )
    assert lines(findings) == [13]


def test_values_that_mean_off_or_unlimited_are_not_reported():
    findings = tl004(
        """
        import torch
        import lightning as L
        def build(p):
            torch.optim.SGD(p, lr=0.1, momentum=0, weight_decay=0.0)
            L.Trainer(max_epochs=-1)
        """
    )
    assert lines(findings) == [5]


def test_calls_in_class_bodies_and_parameter_defaults_are_not_reported():
    assert tl004(
        """
        import torch
        from torch.utils.data import DataLoader
        class Recipe:
            loader = DataLoader(ds, batch_size=64, shuffle=True)
            make_opt = staticmethod(lambda p: torch.optim.SGD(p, lr=0.1))
        def train(model, opt=torch.optim.SGD([], lr=0.1)):
            pass
        """
    ) == []


def test_a_local_used_inside_a_lambda_is_resolved_in_the_enclosing_function():
    findings = tl004(
        """
        import torch
        def build():
            lr = 0.02
            return lambda params: torch.optim.SGD(params, lr=lr)
        def shadowed():
            lr = 0.02
            return lambda lr: torch.optim.SGD([], lr=lr)
        """
    )
    assert lines(findings) == [4]


# -- where a literal is hard-coded (``gate``) ---------------------------------------------------

TRAIN_FUNCTION = """
    import torch
    def train(model, loader):
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(30):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
    """


def shown(findings) -> list[tuple[str, int, str]]:
    return sorted((f.path, f.line, f.message.split(" is hard-coded")[0]) for f in findings)


def test_a_script_with_every_value_in_view_is_not_reported_until_it_takes_a_command_line():
    assert tl004(TRAIN_FUNCTION, configured=False) == []
    assert shown(tl004(TRAIN_FUNCTION)) == [("train.py", 4, "learning rate 0.01"), ("train.py", 5, "epoch count 30")]


def test_a_package_function_is_reported_where_the_project_takes_its_settings_from_outside_its_code():
    package = {"pkg/__init__.py": "", "pkg/train.py": TRAIN_FUNCTION}
    assert lint_tree(package, select=["TL004"]) == []
    for settings_from in ({"main.py": CONFIGURED}, {"configs/base.py": "lr = 0.1\nbatch_size = 32\n"}):
        assert shown(lint_tree({**package, **settings_from}, select=["TL004"])) == [
            ("pkg/train.py", 4, "learning rate 0.01"), ("pkg/train.py", 5, "epoch count 30")]
    # A folder of scripts (no __init__.py) beside a configured one: each script is its own.
    assert lint_tree({"scripts/train.py": TRAIN_FUNCTION, "main.py": CONFIGURED}, select=["TL004"]) == []
    # Module-level code of a package module is in view like a script's.
    top = "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
    assert lint_tree({"pkg/__init__.py": "", "pkg/demo.py": top, "main.py": CONFIGURED}, select=["TL004"]) == []
    # A package's demos/ (lightning.pytorch.demos' BoringModel) ship fixed example values.
    demos = {"pkg/__init__.py": "", "pkg/demos/__init__.py": "", "pkg/demos/boring.py": TRAIN_FUNCTION,
             "main.py": CONFIGURED}
    assert lint_tree(demos, select=["TL004"]) == []


def test_a_function_that_takes_other_hyperparameters_from_its_caller_bypasses_its_interface():
    code = """
        import torch
        def train(model, loader, epochs, lr=1e-3):
            opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=0.01)
            for epoch in range(epochs):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                    opt.step()
        """
    assert shown(tl004(code, configured=False)) == [
        ("train.py", 4, "weight decay 0.01"), ("train.py", 9, "gradient-clipping max_norm 5.0")]


def test_a_notebook_reports_only_what_bypasses_its_own_settings():
    settings_cell = """
        import torch
        batch_size = 64
        learning_rate = 0.01
        epochs = 5
        """
    training_cell = """
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loader = torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True)
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
        """
    findings = lint_tree({"nb.ipynb": notebook(settings_cell, training_cell)}, select=["TL004"], dedent=False)
    assert [(f.line, f.message) for f in findings] == [(
        6, "learning rate 0.1 is hard-coded in `torch.optim.SGD(...)`, although `learning_rate` (cell 1, line 3) "
           "sets it: changing `learning_rate` changes nothing; use `learning_rate` here")]
    used = training_cell.replace("lr=0.1", "lr=learning_rate")
    assert lint_tree({"nb.ipynb": notebook(settings_cell, used)}, select=["TL004"], dedent=False) == []
    # A notebook whose values are all written where they are used: its cells are its settings.
    inline = training_cell.replace("batch_size=batch_size", "batch_size=32").replace("range(epochs)", "range(5)")
    assert lint_tree({"nb.ipynb": notebook("import torch\n", inline)}, select=["TL004"], dedent=False) == []


def test_a_setting_only_printed_or_logged_is_bypassed_and_one_handed_on_is_not():
    code = """
        import argparse
        import torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--batch-size", type=int, default=32)
        args = parser.parse_args()
        print("batch size", args.batch_size)
        loader = torch.utils.data.DataLoader(ds, batch_size=128, shuffle=True)
        for x, y in loader:
            model(x).sum().backward()
        """
    (finding,) = tl004(code, configured=False)
    assert finding.message == (
        "batch size 128 is hard-coded in `torch.utils.data.DataLoader(...)`, although `--batch-size` (line 5) "
        "sets it: changing `--batch-size` changes nothing; use the parsed `--batch-size` here")
    handed_on = code.replace('print("batch size", args.batch_size)', "report(args)")
    assert "so it cannot be swept" in tl004(handed_on, configured=False)[0].message


# -- options ---------------------------------------------------------------------------------

def test_ignore_names_covers_positional_and_epoch_loops():
    code = """
        import torch
        def train(model, loader):
            opt = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9)
            for epoch in range(10):
                train_one_epoch(model, loader, opt)
        """
    assert lines(tl004(code)) == [4, 4, 5]
    assert lines(tl004(code, **{"ignore-names": ["lr", "epochs"]})) == [4]
    assert tl004(code, **{"ignore-names": ["lr", "epochs", "momentum"]}) == []


def test_extend_names_watch_any_call_but_not_argparse():
    code = """
        import argparse
        def build(parser: argparse.ArgumentParser, cfg):
            parser.add_argument("--warmup-epochs", type=int, default=5)
            parser.set_defaults(warmup_epochs=5)
            loss = LabelSmoothingLoss(label_smoothing=0.1)
            return make_schedule(cfg, warmup_epochs=5)
        """
    assert tl004(code) == []
    findings = tl004(code, **{"extend-names": ["warmup_epochs", "label_smoothing"]})
    assert lines(findings) == [6, 7]
    assert "`label_smoothing` 0.1 is hard-coded in `LabelSmoothingLoss(...)`" in findings[0].message


def test_skip_tests_and_skip_config_files_options():
    code = """
        import torch
        def make(p):
            return torch.optim.Adam(p, lr=1e-3)
        """
    for path in ("tests/test_a.py", "pkg/test/helpers.py", "a_test.py", "conftest.py", "src/pkg/testing/utils.py"):
        assert tl004(code, path=path) == [], path
        assert lines(tl004(code, path=path, **{"skip-tests": False})) == [4], path
    for path in ("configs/base.py", "config.py", "model_config.py", "hparams.py", "settings.py"):
        assert tl004(code, path=path) == [], path
        assert lines(tl004(code, path=path, **{"skip-config-files": False})) == [4], path
    assert lines(tl004(code, path="src/contest.py")) == [4]
    assert lines(tl004(code, path="latest_results.py")) == [4]


@pytest.mark.parametrize(
    ("path", "test", "config"),
    [("tests/x.py", True, False), ("a/test/b.py", True, False), ("test_train.py", True, False),
     ("train_test.py", True, False), ("conftest.py", True, False), ("testing.py", False, False),
     ("attest/train.py", False, False), ("config/a.py", False, True), ("my_config.py", False, True),
     ("configuration.py", False, False), ("train.py", False, False), ("C:\\proj\\tests\\t.py", True, False)],
)
def test_file_filters(path, test, config):
    assert is_test_file(path) is test
    assert is_config_file(path) is config


def test_options_from_a_config_file(tmp_path, monkeypatch):
    from torchlint.cli import main

    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nselect = ["TL004"]\n'
        '[tool.torchlint.hard-coded-hyperparameter]\nignore-names = ["batch_size"]\nskip-tests = false\n'
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def test_x(ds, p):\n    DataLoader(ds, batch_size=8, shuffle=True)\n    torch.optim.SGD(p, lr=0.5)\n" + CONFIGURED
    )
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.txt"
    assert main(["check", "--no-cache", "--format", "concise", "-o", str(out), "tests"]) == 1
    text = out.read_text()
    assert "tests/test_x.py:5:" in text and "batch size" not in text


# -- optimizer subclasses --------------------------------------------------------------------

# A package of a project that takes its settings from the command line: its functions' literals
# bypass them (``gate``).
PACKAGE = {"pkg/__init__.py": "", "pkg/cli.py": CONFIGURED}
ROOT_PACKAGE = {"__init__.py": "", "cli.py": CONFIGURED}

OPTIM_MODULE = """
    import torch

    class ScaledAdam(torch.optim.Adam):
        def __init__(self, params, lr=1e-3, scale=1.0, weight_decay=0.0):
            super().__init__(params, lr=lr * scale, weight_decay=weight_decay)

    class Plain(torch.optim.SGD):
        pass

    class NotAnOptimizer:
        def __init__(self, params, lr):
            self.lr = lr
"""


def test_project_subclass_in_another_file_is_resolved():
    train = """
        from .optim import ScaledAdam, Plain, NotAnOptimizer
        from . import optim as O

        def train(model):
            a = ScaledAdam(model.parameters(), 0.01, 2.0, 0.1)
            b = Plain(model.parameters(), 0.2, momentum=0.5)
            c = NotAnOptimizer(model.parameters(), 0.3)
            d = O.ScaledAdam(model.parameters(), lr=0.04)
        """
    findings = lint_tree({**PACKAGE, "pkg/optim.py": OPTIM_MODULE, "pkg/train.py": train}, select=["TL004"])
    got = sorted((f.path, f.line, f.message.split(" is hard-coded")[0]) for f in findings)
    assert got == [
        ("pkg/train.py", 6, "learning rate 0.01"), ("pkg/train.py", 6, "weight decay 0.1"),
        ("pkg/train.py", 7, "learning rate 0.2"), ("pkg/train.py", 7, "momentum 0.5"),
        ("pkg/train.py", 9, "learning rate 0.04"),
    ]
    assert "in `ScaledAdam(...)`" in findings[0].message
    # Linting train.py alone: nothing says these are optimizers, nothing is reported.
    assert lint_tree({**PACKAGE, "pkg/train.py": train}, select=["TL004"]) == []


def test_project_subclass_as_a_parameter_fallback_is_not_reported():
    """composer Trainer.__init__: ``if optimizers is None: try: optimizers = DecoupledSGDW(...,
    lr=0.1)``: a fallback for a parameter, like a library optimizer's; the unguarded call in the
    same file is still reported."""
    train = """
        import warnings
        from pkg.optim import ScaledAdam

        class Trainer:
            def __init__(self, model, optimizers=None):
                if optimizers is None:
                    try:
                        optimizers = ScaledAdam(model.parameters(), lr=0.1)
                    except ValueError:
                        warnings.warn("no parameters")
                self.optimizers = optimizers
                self.probe = ScaledAdam(model.parameters(), lr=0.2)
        """
    findings = lint_tree({**PACKAGE, "pkg/optim.py": OPTIM_MODULE, "pkg/train.py": train}, select=["TL004"])
    assert [(f.path, f.line, f.message.split(" is hard-coded")[0]) for f in findings] == [
        ("pkg/train.py", 13, "learning rate 0.2")]


def test_subclass_chain_through_files_and_same_file_subclass_of_an_imported_one():
    base = """
        import torch.optim as optim
        class Base(optim.AdamW):
            pass
    """
    middle = """
        from proj.base import Base
        class Middle(Base):
            def __init__(self, params, momentum=0.9, lr=1e-3):
                super().__init__(params, lr=lr)
        class Local(Middle):
            pass
        def build(p):
            lr = 5e-4
            return Local(p, 0.95, lr)
    """
    user = """
        from proj.middle import Middle
        def build(p):
            return Middle(p, lr=0.3)
    """
    findings = lint_tree({"proj/__init__.py": "", "proj/cli.py": CONFIGURED, "proj/base.py": base,
                          "proj/middle.py": middle, "proj/user.py": user}, select=["TL004"])
    got = sorted((f.path, f.line, f.message.split(" is hard-coded")[0]) for f in findings)
    assert got == [
        ("proj/middle.py", 9, "learning rate 5e-4"),
        ("proj/middle.py", 10, "momentum 0.95"),
        ("proj/user.py", 4, "learning rate 0.3"),
    ]


def test_project_findings_honour_noqa_and_ignore_names():
    train = """
        from pkg.optim import ScaledAdam
        def train(p):
            a = ScaledAdam(p, lr=0.01)  # noqa: TL004
            b = ScaledAdam(p, 0.02, weight_decay=0.1)
        """
    files = {**PACKAGE, "pkg/optim.py": OPTIM_MODULE, "pkg/train.py": train}
    assert lines(lint_tree(files, select=["TL004"])) == [5, 5]
    only_wd = lint_tree(files, select=["TL004"], options={"TL004": {"ignore-names": ["lr"]}})
    assert [f.message.split(" is")[0] for f in only_wd] == ["weight decay 0.1"]


# -- torch_api -------------------------------------------------------------------------------

def _ctx(code: str) -> tuple[FileContext, list[cst.Call]]:
    module = cst.parse_module(textwrap.dedent(code))
    imports = ImportTable("m", False)
    for stmt in module.body:
        for small in getattr(stmt, "body", ()):
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                imports.add_cst(small)
    ctx = FileContext("m.py", module, module.code, imports)
    calls = [s.body[0].value for s in module.body if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)]
    return ctx, calls


def test_hf_schedule_factories_are_schedulers_not_optimizers():
    ctx, calls = _ctx(
        """
        import transformers
        from transformers.optimization import get_linear_schedule_with_warmup, AdamW, Adafactor, AdafactorSchedule
        from torch.optim import lr_scheduler
        get_linear_schedule_with_warmup(opt, 1, 2)
        transformers.optimization.get_scheduler("linear", opt)
        AdafactorSchedule(opt)
        AdamW(p)
        Adafactor(p)
        lr_scheduler.StepLR(opt, 1)
        lr_scheduler.LRScheduler(opt)
        StepLR(opt, 1)
        """
    )
    optim = [is_optimizer_constructor(ctx, c.func) for c in calls]
    kinds = [scheduler_kind(ctx, c.func) for c in calls]
    assert optim == [False, False, False, True, True, False, False, False]
    assert kinds == ["get_linear_schedule_with_warmup", "get_scheduler", None, None, None, "StepLR", "LRScheduler", None]


def test_batch_size_one_is_never_reported():
    # batch_size=1 restates DataLoader's default: neither a name with "train" in it nor a
    # shuffling loader bypasses the exemption (issue 12); an evaluation loader's batch size is
    # never a training hyperparameter; a shuffling loader's larger batch size is.
    findings = tl004(
        """
        import torch
        from torch.utils.data import DataLoader
        def loaders(ds, model):
            train_loader = DataLoader(ds, batch_size=1)
            shuffled = DataLoader(ds, batch_size=1, shuffle=True)
            eval_loader = DataLoader(ds, batch_size=1)
            test_loader = DataLoader(ds, batch_size=2)
            other = DataLoader(ds, batch_size=2)
            shuffled_pairs = DataLoader(ds, batch_size=2, shuffle=True)
            one = 1
            shuffled_local = DataLoader(ds, batch_size=one, shuffle=True)
            return torch.optim.SGD(model.parameters(), lr=model.lr)
        """
    )
    assert lines(findings) == [9, 10]


# -- which files are parsed ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [("import os\nprint(os.getcwd())\n", False),
     ("for epoch in range (3):\n    run(epoch)\n", True),
     ("for i in range(3):\n    loss.backward()\n", True),
     ("make(p, lr\n= 0.1)\n", True),
     ("from torch.utils.data import DataLoader\n", True),
     ("from mylib import Lion\n", True),
     ("x = Fancy(p, momentum=0.9)\n", True)],
)
def test_might_apply(text, expected):
    from torchlint.checks.tl004_hard_coded_hyperparameter import HardCodedHyperparameter

    assert HardCodedHyperparameter.might_apply(text) is expected


def test_extend_names_do_not_hide_optimizer_subclasses():
    code = """
        import torch
        class MyAdam(torch.optim.Adam):
            pass
        def build(p):
            return MyAdam(p, 1e-3, warmup_epochs=3)
        """
    assert [f.message.split(" is")[0] for f in tl004(code)] == ["learning rate 1e-3"]
    both = tl004(code, **{"extend-names": ["warmup_epochs"]})
    assert sorted(f.message.split(" is")[0] for f in both) == ["`warmup_epochs` 3", "learning rate 1e-3"]


LR_MODEL = """
    import torch

    class TinyLM(torch.nn.Module):
        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=3e-4)
"""
LR_TRAINER = """
    from model import TinyLM

    def train(loader, schedule):
        model = TinyLM()
        optimizer = model.configure_optimizers()
        for step, x in enumerate(loader):
            for group in optimizer.param_groups:
                group["lr"] = schedule(step)
            model(x).sum().backward()
            optimizer.step()
"""


def test_lr_of_an_optimizer_returned_to_a_file_whose_loop_overwrites_it_is_not_reported():
    # nano_gpt: model.configure_optimizers() returns AdamW(lr=3e-4); trainer.py sets every
    # group's lr before each step, so the literal never takes effect.
    assert lint_tree({**ROOT_PACKAGE, "model.py": LR_MODEL, "trainer.py": LR_TRAINER}, select=["TL004"]) == []
    message = ("learning rate 3e-4 is hard-coded in `torch.optim.AdamW(...)`, so it cannot be swept, logged or "
               "reproduced; read it from a config or a command-line argument")
    # Alone, or driven by a loop that keeps the lr, it is a finding.
    alone = lint_tree({**ROOT_PACKAGE, "model.py": LR_MODEL}, select=["TL004"])
    assert [(f.path, f.line, f.column, f.message) for f in alone] == [("model.py", 6, 56, message)]
    kept = LR_TRAINER.replace('group["lr"] = schedule(step)', 'print(group["lr"])')
    assert [(f.path, f.line) for f in lint_tree({**ROOT_PACKAGE, "model.py": LR_MODEL, "trainer.py": kept}, select=["TL004"])] == [
        ("model.py", 6)]


def test_lr_of_a_returned_optimizer_when_the_loop_overwrites_the_lr_of_the_optimizer_it_is_handed():
    # The real nano_gpt layout: tool/train.py builds it, trainer.train(model, optimizer, ...) schedules it.
    trainer = """
        def train(model, optimizer, loader, schedule):
            for step, x in enumerate(loader):
                for group in optimizer.param_groups:
                    group["lr"] = schedule(step)
                model(x).sum().backward()
                optimizer.step()
    """
    tool = "from model import TinyLM\nfrom trainer import train\n\nmodel = TinyLM()\ntrain(model, model.configure_optimizers(), [], abs)\n"
    assert lint_tree({**ROOT_PACKAGE, "model.py": LR_MODEL, "trainer.py": trainer, "tool.py": tool}, select=["TL004"]) == []
    kept = trainer.replace('group["lr"] = schedule(step)', 'print(group["lr"])')
    assert [(f.path, f.line) for f in lint_tree({**ROOT_PACKAGE, "model.py": LR_MODEL, "trainer.py": kept, "tool.py": tool},
                                                select=["TL004"])] == [("model.py", 6)]


def test_scripts_of_a_package_folder_keep_their_values_in_view():
    """An ``examples/`` package of scripts in a project configured elsewhere: a script with a
    ``__main__`` guard and no options, or with run settings alone (``--cuda``), is its own
    configuration; a library module of the same package is still reported (package rule)."""
    files = {
        "pkg/__init__.py": "",
        "pkg/train.py": "import argparse\nargs = argparse.ArgumentParser().parse_args()\n",
        "pkg/plugins.py": ("import torch\n"
                           "def make_optimizer(model):\n"
                           "    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"),
        "pkg/examples/__init__.py": "",
        "pkg/examples/naive.py": ("import torch\n"
                                  "def main():\n"
                                  "    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
                                  "if __name__ == '__main__':\n"
                                  "    main()\n"),
        "pkg/examples/on_gpu.py": ("import argparse\nimport torch\n"
                                   "def main(args):\n"
                                   "    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)\n"
                                   "if __name__ == '__main__':\n"
                                   "    parser = argparse.ArgumentParser()\n"
                                   "    parser.add_argument('--cuda', type=int, default=0)\n"
                                   "    main(parser.parse_args())\n"),
    }
    findings = lint_tree(files, select=["TL004"], dedent=False)
    assert sorted((f.path, f.line) for f in findings) == [("pkg/plugins.py", 3), ("pkg/plugins.py", 3)]


def test_a_scripts_interface_counts_where_another_file_imports_the_script():
    """A function of a script of its own (a ``__main__`` guard, no configuration) that takes the
    epochs from its caller: its literal batch size is in view while the script alone calls it,
    and hard-coded once another linted file imports the function (avalanche's
    updatable_objects.py; lightning-bolts' retinanet_module.py, whose package imports it)."""
    script = ("import torch\n"
              "from torch.utils.data import DataLoader\n"
              "def train_experience(model, opt, data, epochs=10):\n"
              "    for ep in range(epochs):\n"
              "        for x, y in DataLoader(data, batch_size=32, shuffle=True):\n"
              "            opt.zero_grad()\n"
              "            torch.nn.functional.cross_entropy(model(x), y).backward()\n"
              "            opt.step()\n"
              "if __name__ == '__main__':\n"
              "    train_experience(build(), opt, load(), epochs=2)\n")
    alone = {"examples/__init__.py": "", "examples/updatable.py": script}
    assert lint_tree(alone, select=["TL004"], dedent=False) == []
    imported = {**alone, "examples/online.py": "from examples.updatable import train_experience\n"
                                                "train_experience(build(), opt, load(), epochs=5)\n"}
    findings = lint_tree(imported, select=["TL004"], dedent=False)
    assert [(f.path, f.line, f.message) for f in findings] == [
        ("examples/updatable.py", 5, "batch size 32 is hard-coded in `torch.utils.data.DataLoader(...)`, so it cannot "
                                     "be swept, logged or reproduced; read it from a config or a command-line argument")]
