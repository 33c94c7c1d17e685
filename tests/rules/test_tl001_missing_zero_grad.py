"""TL001 missing-zero-grad: fixtures, message texts, several files, and the recognisers it
relies on. The embedded VALID/INVALID cases run in tests/test_rule_cases.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.testing import lint_snippet, lint_tree
from torchlint.torch_api import looks_like_optimizer_name

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def tl001(code: str, path: str = "train.py"):
    return lint_snippet(code, select=["TL001"], path=path)


def test_buggy_fixture_has_exactly_the_inner_loop_finding():
    findings = lint_tree(_project("buggy_project"), select=["TL001"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("train.py", 39)]
    assert findings[0].message == (
        "optimizer.step() in this loop applies gradients that were never cleared, so they add up across "
        "iterations; call optimizer.zero_grad() once per iteration"
    )


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL001"], dedent=False) == []


def test_clearing_only_before_the_loop_is_explained():
    (finding,) = tl001(
        """
        def fit(model, loader, optimizer):
            optimizer.zero_grad()
            for x in loader:
                model(x).backward()
                optimizer.step()
        """
    )
    assert finding.line == 6
    assert "the zero_grad() outside does not run every iteration" in finding.message


def test_helper_step_names_the_calling_loop_and_is_reported_once():
    findings = tl001(
        """
        def train_step(model, batch, opt):
            model(batch).backward()
            opt.step()

        def main(model, loader, opt):
            for batch in loader:
                train_step(model, batch, opt)
            for batch in loader:
                train_step(model, batch, opt)
        """
    )
    assert [f.line for f in findings] == [4]
    assert "in the loop calling train_step() at line 8" in findings[0].message


def test_helper_called_from_a_clearing_loop_and_a_bare_one():
    findings = tl001(
        """
        def train_step(model, batch, opt):
            model(batch).backward()
            opt.step()

        def good(model, loader, opt):
            for batch in loader:
                opt.zero_grad()
                train_step(model, batch, opt)

        def bad(model, loader, opt):
            for batch in loader:
                train_step(model, batch, opt)
        """
    )
    assert [f.line for f in findings] == [4]
    assert "at line 13" in findings[0].message


def test_step_function_in_another_file_is_not_guessed():
    files = {
        "steps.py": """
            def train_step(model, batch, opt):
                model(batch).backward()
                opt.step()
            """,
        "main.py": """
            from steps import train_step
            def main(model, loader, opt):
                for batch in loader:
                    train_step(model, batch, opt)
            """,
    }
    assert lint_tree(files, select=["TL001"]) == []


def test_training_step_called_from_an_in_file_loop_is_judged_at_the_loop():
    clean = """
        class Module:
            def training_step(self, batch):
                self.manual_backward(self.model(batch))
                self.opt.step()
            def fit(self, loader):
                for batch in loader:
                    self.opt.zero_grad()
                    self.training_step(batch)
        """
    assert tl001(clean) == []
    buggy = clean.replace("self.opt.zero_grad()", "pass")
    (finding,) = tl001(buggy)
    assert finding.line == 5
    assert "in the loop calling self.training_step()" in finding.message


def test_methods_of_a_base_class_in_the_same_file_count():
    code = """
        class Base:
            def clear(self):
                for p in self.model.parameters():
                    p.grad = None
        class Trainer(Base):
            def fit(self, loader):
                for batch in loader:
                    self.model(batch).backward()
                    self.optimizer.step()
                    self.clear()
        """
    assert tl001(code) == []
    assert [f.line for f in tl001(code.replace("self.clear()", "self.log()"))] == [10]


def test_lbfgs_closure_without_clearing_outside_a_loop():
    (finding,) = tl001(
        """
        import torch
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.LBFGS(model.parameters(), max_iter=20)
        def closure():
            loss = model(torch.ones(2)).sum()
            loss.backward()
            return loss
        optimizer.step(closure)
        """
    )
    assert finding.line == 9
    assert "LBFGS evaluates it several times per step" in finding.message
    assert "call optimizer.zero_grad() at the start of the closure" in finding.message


def test_lbfgs_closure_is_reported_even_if_the_loop_clears():
    (finding,) = tl001(
        """
        import torch
        def fit(model, loader):
            optimizer = torch.optim.LBFGS(model.parameters())
            for x in loader:
                optimizer.zero_grad()
                optimizer.step(lambda: model(x).backward())
        """
    )
    assert finding.line == 7 and "closure" in finding.message


def test_sgd_closure_outside_a_loop_and_a_partial_closure_that_clears_are_fine():
    assert tl001(
        """
        import functools
        import torch
        def step_once(model, x, optimizer):
            def closure():
                loss = model(x)
                loss.backward()
                return loss
            optimizer.step(closure)

        def fit(model, loader, optimizer):
            def fn_base(opt, x):
                opt.zero_grad()
                loss = model(x)
                loss.backward()
                return loss
            for x in loader:
                optimizer.step(functools.partial(fn_base, optimizer, x))
                fn = functools.partial(fn_base, optimizer, x)
                optimizer.step(fn)
        """
    ) == []


def test_partial_closure_without_clearing_is_reported():
    (finding,) = tl001(
        """
        import functools
        def fit(model, loader, optimizer):
            def fn_base(x):
                loss = model(x)
                loss.backward()
                return loss
            for x in loader:
                fn = functools.partial(fn_base, x)
                optimizer.step(fn)
        """
    )
    assert finding.line == 10


def test_wiping_message_says_why_and_what_instead():
    (finding,) = tl001(
        """
        def fit(model, loader, optimizer, scaler):
            for x in loader:
                scaler.scale(model(x)).backward()
                optimizer.zero_grad()
                scaler.step(optimizer)
                scaler.update()
        """
    )
    assert finding.line == 5
    assert finding.message == (
        "optimizer.zero_grad() runs between the backward and scaler.step(optimizer), wiping the gradients before "
        "they are applied; clear before the backward or after the step"
    )


def test_accumulation_message_says_why_and_what_instead():
    (finding,) = tl001(
        """
        def fit(accelerator, model, loader, optimizer):
            for step, x in enumerate(loader):
                optimizer.zero_grad()
                accelerator.backward(model(x))
                if accelerator.sync_gradients:
                    optimizer.step()
        """
    )
    assert finding.line == 4
    assert "runs on every iteration but optimizer.step() only under an accumulation `if`" in finding.message
    assert "move optimizer.zero_grad() into that `if`, after the step" in finding.message


def test_step_in_both_branches_is_not_gated():
    assert tl001(
        """
        def fit(model, loader, optimizer, scaler, k):
            for i, x in enumerate(loader):
                optimizer.zero_grad()
                model(x).backward()
                if i % k == 0:
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    optimizer.step()
        """
    ) == []


def test_each_stepping_optimizer_needs_its_own_clearing():
    findings = tl001(
        """
        def fit(model, loader, opt_a, opt_b, opt_c):
            for x in loader:
                opt_a.zero_grad()
                opt_c.zero_grad()
                model(x).backward()
                opt_a.step()
                opt_b.step()
                opt_c.step()
        """
    )
    assert [f.line for f in findings] == [8]
    assert findings[0].message.startswith("opt_b.step() in this loop")


def test_recursion_and_inheritance_cycles_do_not_break_the_rule():
    assert tl001(
        """
        class A(B):
            def run(self, loader):
                for x in loader:
                    self.optimizer.zero_grad()
                    self.run(loader)
                    self.go()
        class B(A):
            def go(self):
                self.model(1).backward()
                self.optimizer.step()
                self.go()
        def f(loader, optimizer):
            for x in loader:
                f(loader, optimizer)
                x.backward()
                optimizer.step()
                optimizer.zero_grad()
        """
    ) == []


@pytest.mark.parametrize(
    "name",
    ["opt", "optimizer", "opt_d", "g_optim", "self.optimizer", "self._optimizer", "optimizer_", "opt1", "optimizerG", "optD"],
)
def test_optimizer_names(name):
    assert looks_like_optimizer_name(name)


@pytest.mark.parametrize("name", ["optional", "options", "optimum", "optimal", "lr_scheduler", "opt_sched", "self.option"])
def test_not_optimizer_names(name):
    assert not looks_like_optimizer_name(name)
