"""TL003 eval-without-no-grad: fixtures, message text, multi-file behaviour and file-wide
exemptions beyond the rule's embedded cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.testing import lint_each_alone, lint_snippet, lint_tree, make_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def tl003(code: str, path: str = "example.py"):
    return lint_snippet(code, select=["TL003"], path=path)


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(FIXTURES).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_evaluate_forward():
    findings = lint_tree(_project("buggy_project"), select=["TL003"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("buggy_project/train.py", 24)]
    assert "`model.eval()` (line 21)" in findings[0].message


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL003"], dedent=False) == []


def test_message_is_one_line_and_says_what_to_do():
    (finding,) = tl003(
        """
        def evaluate(model, x):
            model.eval()
            return model(x)
        """
    )
    msg = finding.message
    assert "\n" not in msg
    assert msg.startswith("`model(...)` runs after `model.eval()` (line 3)")
    assert "autograd still records every activation" in msg
    assert "with torch.no_grad():" in msg and "torch.inference_mode()" in msg
    assert finding.rule == "TL003" and finding.name == "eval-without-no-grad"
    assert (finding.line, finding.column) == (4, 12)


def test_a_helper_evaluated_only_under_no_grad_from_another_file():
    """Issue 13 item 1: the helper in utils.py is called only inside ``torch.no_grad()`` in
    train.py (lint_tree also lints each file alone, as pre-commit does)."""
    texts = {
        "utils.py": "def evaluate(model, x):\n    model.eval()\n    return model(x)\n",
        "train.py": "import torch\nfrom utils import evaluate\n\nwith torch.no_grad():\n    evaluate(net, batch)\n",
    }
    assert lint_tree(texts, select=["TL003"]) == []
    assert lint_each_alone(texts, make_settings(["TL003"])) == {"utils.py": [], "train.py": []}


PREDICT = """
    def predict(model, x):
        model.eval()
        return model(x)
    """


@pytest.mark.parametrize("caller", [
    # a module import, and a function decorated with no_grad
    "import torch\nimport pkg.infer\n\ndef main(model, x):\n    with torch.inference_mode():\n"
    "        return pkg.infer.predict(model, x)\n",
    "import torch\nfrom pkg.infer import predict\n\n@torch.no_grad()\ndef main(model, x):\n    return predict(model, x)\n",
    "import torch\nfrom pkg.infer import predict\n\ndef _run(model, x):\n    return predict(model, x)\n\n"
    "def main(model, x):\n    with torch.no_grad():\n        return _run(model, x)\n",
])
def test_every_call_of_the_helper_in_the_project_under_no_grad(caller):
    assert lint_tree({"pkg/infer.py": PREDICT, "pkg/run.py": caller}, select=["TL003"]) == []


@pytest.mark.parametrize("other", [
    # one unprotected call, in a file that mentions no grad mode at all
    "from pkg.infer import predict\n\ndef serve(model, x):\n    return predict(model, x)\n",
    # one unprotected call beside a protected one
    "import torch\nfrom pkg.infer import predict\n\ndef serve(model, x):\n    with torch.no_grad():\n"
    "        predict(model, x)\n    return predict(model, x)\n",
    # passed on as a callback: it may run anywhere
    "import torch\nfrom pkg.infer import predict\n\ndef serve(engine):\n    with torch.no_grad():\n"
    "        engine.add_handler(predict)\n",
    # the module imported by a file where TL003 has nothing to say
    "import pkg.infer as infer\n\nrun = infer.predict\n",
])
def test_the_helper_is_reported_when_one_use_elsewhere_is_unprotected(other):
    files = {
        "pkg/infer.py": PREDICT,
        "pkg/run.py": "import torch\nfrom pkg.infer import predict\n\ndef main(model, x):\n    with torch.no_grad():\n"
                      "        return predict(model, x)\n",
        "pkg/serve.py": other,
    }
    findings = lint_tree(files, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("pkg/infer.py", 4)]
    assert findings[0].message.startswith("`model(...)` runs after `model.eval()` (line 3) outside `torch.no_grad()`")


REEXPORTED_CALLER = ("import torch\nfrom {package} import {name}\n\ndef main(model, x):\n    with {mode}:\n"
                     "        return {name}(model, x)\n")


@pytest.mark.parametrize("exports, package, name", [
    ({"pkg/__init__.py": "from .infer import predict\n"}, "pkg", "predict"),
    # re-exported under another name, then renamed again by a second package
    ({"pkg/__init__.py": "from .infer import predict as run_predict\n"}, "pkg", "run_predict"),
    ({"pkg/__init__.py": "from .infer import predict as run_predict\n",
      "api/__init__.py": "from pkg import run_predict as serve_predict\n"}, "api", "serve_predict"),
])
def test_a_helper_re_exported_by_its_package_is_judged_by_its_callers(exports, package, name):
    files = {"pkg/infer.py": PREDICT, **exports,
             "app/main.py": REEXPORTED_CALLER.format(package=package, name=name, mode="torch.no_grad()")}
    assert lint_tree(files, select=["TL003"]) == []
    files["app/main.py"] = REEXPORTED_CALLER.format(package=package, name=name, mode="open('log.txt')")
    assert [(f.path, f.line) for f in lint_tree(files, select=["TL003"])] == [("pkg/infer.py", 4)]


FORCE_FIELD = (
    "import torch\nimport torch.nn as nn\n\n"
    "class Potential(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(3, 1)\n\n"
    "    def forward(self, positions):\n"
    "        positions.requires_grad_(True)\n"
    "        energy = self.net(positions).sum()\n"
    "        return energy, -torch.autograd.grad(energy, positions)[0]\n"
)
EVALUATE = "def evaluate(model, loader):\n    model.eval()\n    return [model(batch) for batch in loader]\n"


FORCE_FIELD_THROUGH_HELPERS = (
    "import torch.nn as nn\nfrom pkg import utils\n\n"
    "class Potential(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(3, 1)\n\n"
    "    def forward(self, positions):\n"
    "        energy = self.net(positions).sum()\n"
    "        return self._outputs(energy, positions)\n\n"
    "    def _outputs(self, energy, positions):\n"
    "        return utils.get_outputs(energy, positions)\n"
)
UTILS = (
    "import torch\n\n"
    "def compute_forces(energy, positions):\n"
    "    return -torch.autograd.grad(energy, positions, create_graph=True)[0]\n\n"
    "def get_outputs(energy, positions):\n"
    "    return energy, compute_forces(energy, positions)\n"
)


def test_no_evaluation_is_reported_where_a_model_differentiates_in_forward():
    """so3krates-torch: the potential computes its forces with ``torch.autograd.grad`` inside
    ``forward`` (there, through a method and helpers of another file), so evaluating a model of
    unknown class must keep autograd on."""
    files = {"pkg/__init__.py": "", "pkg/model.py": FORCE_FIELD, "pkg/evaluate.py": EVALUATE}
    assert lint_tree(files, select=["TL003"]) == []
    files = {"pkg/__init__.py": "", "pkg/model.py": FORCE_FIELD_THROUGH_HELPERS, "pkg/utils.py": UTILS,
             "pkg/evaluate.py": EVALUATE}
    assert lint_tree(files, select=["TL003"]) == []


@pytest.mark.parametrize("model", [
    FORCE_FIELD.replace("-torch.autograd.grad(energy, positions)[0]", "self.net(positions)"),  # no gradient taken
    FORCE_FIELD.replace("(nn.Module)", "").replace("super().__init__()\n        ", ""),  # not a module
    FORCE_FIELD.replace("class Potential(nn.Module):\n    def __init__(self)", "def helper():\n    pass\n\n"
                        "class Potential(nn.Module):\n    def __init__(self)").replace(
        "        return energy, -torch.autograd.grad(energy, positions)[0]\n", "        return energy\n")
    + "\ndef forces(energy, positions):\n    return torch.autograd.grad(energy, positions)\n",  # called by no forward
    FORCE_FIELD.replace("def forward(self", "def energy_and_forces(self"),  # a method no forward calls
    # a loss term, not an output (muse-maskgit-pytorch's VQ-GAN): a gradient penalty reduced to a
    # number, an adaptive weight detached
    "import torch\nimport torch.nn as nn\n\n"
    "def gradient_penalty(images, output, weight=10):\n"
    "    gradients = torch.autograd.grad(output, images, create_graph=True)[0]\n"
    "    return weight * ((gradients.norm(2, dim=1) - 1) ** 2).mean()\n\n"
    "def grad_layer_wrt_loss(loss, layer):\n"
    "    return torch.autograd.grad(loss, layer, retain_graph=True)[0].detach()\n\n"
    "class VAE(nn.Module):\n"
    "    def forward(self, img, return_loss=False):\n"
    "        out = self.decode(img)\n"
    "        if not return_loss:\n            return out\n"
    "        gp = gradient_penalty(img, out)\n"
    "        weight = grad_layer_wrt_loss(out.sum(), self.last)\n"
    "        return out.sum() * weight + gp\n",
])
def test_evaluation_is_reported_where_no_module_differentiates_in_its_methods(model):
    files = {"pkg/__init__.py": "", "pkg/model.py": model, "pkg/evaluate.py": EVALUATE}
    findings = lint_tree(files, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("pkg/evaluate.py", 3)]


POSTERIOR = """
    from torch import nn

    class GP(nn.Module):
        def posterior(self, X):
            self.eval()
            return self(X)
    """


@pytest.mark.parametrize("caller, reported", [
    # an acquisition module's forward, through a helper of its own: the posterior's graph is
    # that forward's, which its caller differentiates with respect to X
    ("from torch import nn\n\nclass Acq(nn.Module):\n    def _mean(self, X):\n"
     "        return self.model.posterior(X).mean\n\n    def forward(self, X):\n        return self._mean(X).sum()\n",
     False),
    # a module-level helper a forward in a third file calls
    ("def mean_of(model, X):\n    return model.posterior(X).mean\n", False),
    # only plain functions: an evaluation outside no_grad
    ("def report(model, X):\n    print(model.posterior(X).mean)\n", True),
    # a module holding the model calls it from forward: no caller here settles the grad mode
    # (modules run forward without naming it), and the graph is the forward's. This was reported
    # before issue 12's review (BoTorch's posteriors, kornia's descriptor).
    ("from torch import nn\nfrom pkg.models import GP\n\nclass Head(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self.gp = GP()\n\n    def forward(self, X):\n        return self.gp.posterior(X)\n",
     False),
])
def test_a_method_reached_from_another_modules_forward_in_another_file(caller, reported):
    files = {
        "pkg/models.py": POSTERIOR,
        "pkg/acq.py": caller,
        "pkg/net.py": "from torch import nn\nfrom pkg.acq import mean_of\n\nclass Net(nn.Module):\n"
                      "    def forward(self, X):\n        return mean_of(self.gp, X)\n" if "mean_of" in caller else "x = 1\n",
    }
    findings = lint_tree(files, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == ([("pkg/models.py", 7)] if reported else [])


def test_helper_passed_as_callback_is_still_reported():
    findings = tl003(
        """
        import torch

        def predict(model, x):
            model.eval()
            return model(x)

        def main(model, x, engine):
            with torch.no_grad():
                predict(model, x)
            engine.add_handler(predict)
        """
    )
    assert [f.line for f in findings] == [6]


def test_helper_called_only_from_no_grad_helpers_transitively():
    assert tl003(
        """
        import torch

        def _forward(model, x):
            model.eval()
            return model(x)

        def _batch(model, xs):
            return [_forward(model, x) for x in xs]

        def evaluate(model, xs):
            torch.set_grad_enabled(False)
            return _batch(model, xs)

        class Runner(LightningModule):
            def _step(self, x):
                self.net.eval()
                return self.net(x)

            def validation_step(self, batch, idx):
                return self._step(batch)
        """
    ) == []


def test_every_lightning_evaluation_hook_holds_a_word_of_the_cross_file_text_gate():
    # semantic.gradmode.choice_sites asks whether a call runs under a grad-mode choice only
    # in files whose text holds a grad-mode name or one of HOOK_WORDS.
    from torchlint.semantic.gradmode import HOOK_WORDS
    from torchlint.torch_api import LIGHTNING_EVAL_HOOK_PREFIXES, LIGHTNING_EVAL_HOOKS

    names = [*LIGHTNING_EVAL_HOOKS, *(prefix + "batch_end" for prefix in LIGHTNING_EVAL_HOOK_PREFIXES)]
    assert all(any(word in name.lower() for word in HOOK_WORDS) for name in names)
    assert not any(word in "def test_loader_shapes(self):" for word in HOOK_WORDS)


@pytest.mark.parametrize("hook", ["validation_step", "test_step", "test_epoch_end", "predict_step",
                                  "on_test_batch_end", "on_validation_epoch_end"])
def test_a_helper_called_only_from_a_lightning_evaluation_hook_in_another_file(hook):
    caller = ("import lightning as L\nfrom pkg.infer import predict\n\nclass Lit(L.LightningModule):\n"
              f"    def {hook}(self, batch, batch_idx):\n        return predict(self.model, batch)\n")
    assert lint_tree({"pkg/infer.py": PREDICT, "pkg/lit.py": caller}, select=["TL003"]) == []
    # the same call from a method Lightning does not run under no_grad
    plain = caller.replace(hook, "training_step")
    assert [f.path for f in lint_tree({"pkg/infer.py": PREDICT, "pkg/lit.py": plain}, select=["TL003"])] \
        == ["pkg/infer.py"]


def test_module_level_set_grad_enabled_is_per_file():
    files = {
        "script.py": """
            import torch

            def predict(model, x):
                model.eval()
                return model(x)

            torch.set_grad_enabled(False)
            """,
        "lib.py": """
            def predict(model, x):
                model.eval()
                return model(x)
            """,
    }
    findings = lint_tree(files, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("lib.py", 4)]


def test_module_level_set_grad_enabled_true_does_not_exempt_functions():
    findings = tl003(
        """
        import torch

        torch.set_grad_enabled(True)

        def predict(model, x):
            model.eval()
            return model(x)
        """
    )
    assert [f.line for f in findings] == [8]


def test_frozen_teacher_in_init_is_not_reported_but_other_class_is():
    findings = tl003(
        """
        import torch.nn as nn

        class Distiller(nn.Module):
            def __init__(self, teacher):
                super().__init__()
                self.teacher = teacher
                for p in self.teacher.parameters():
                    p.requires_grad = False

            def soft_targets(self, x):
                self.teacher.eval()
                return self.teacher(x).softmax(-1)

        class Other(nn.Module):
            def soft_targets(self, x):
                self.teacher.eval()
                return self.teacher(x).softmax(-1)
        """
    )
    assert [f.line for f in findings] == [18]


@pytest.mark.parametrize(
    "freeze",
    [
        "model.requires_grad_(False)",
        "set_requires_grad(model, False)",
        "freeze(model)",
        "model.freeze()",
        "for name, p in model.named_parameters():\n        p.requires_grad_(False)",
    ],
)
def test_frozen_parameters_are_not_reported(freeze):
    code = f"def run(model, x, freeze, set_requires_grad):\n    model.eval()\n    {freeze}\n    return model(x)\n"
    assert tl003(code) == []


def test_unfreeze_is_not_freezing():
    # Lightning's unfreeze() turns gradients back on (and train mode): no file-wide exemption.
    findings = tl003(
        """
        class Wrapper:
            def setup(self):
                self.net.unfreeze()

            def predict(self, x):
                self.net.eval()
                return self.net(x)
        """
    )
    assert [f.line for f in findings] == [8]


def test_frozen_local_in_other_function_does_not_exempt():
    findings = tl003(
        """
        def a(model):
            model.requires_grad_(False)

        def b(model, x):
            model.eval()
            return model(x)
        """
    )
    assert [f.line for f in findings] == [7]


def test_parameter_free_layers_and_grad_checkpointing():
    assert tl003(
        """
        import torch
        import torch.nn as nn
        from timm.layers import DropPath

        def test_dropout_is_identity_in_eval():
            drop = nn.Dropout(0.5)
            drop.eval()
            assert torch.equal(drop(torch.ones(4)), torch.ones(4))
            path = DropPath(0.2).eval()
            assert torch.equal(path(torch.ones(4)), torch.ones(4))

        def test_checkpointing_matches(model, x):
            model.eval()
            a = model(x)
            model.set_grad_checkpointing()
            assert torch.allclose(a, model(x))
        """
    ) == []


def test_parameter_free_name_is_tracked_per_assignment():
    findings = tl003(
        """
        import torch.nn as nn

        def run(x, build):
            m = nn.Identity()
            m = build()
            m.eval()
            return m(x)
        """
    )
    assert [f.line for f in findings] == [8]


def test_input_requiring_grad_is_an_explicit_choice():
    assert tl003(
        """
        import torch

        def input_grad(model):
            model.eval()
            x = torch.randn(1, 3, requires_grad=True)
            out = model(x)
            return out
        """
    ) == []


@pytest.mark.parametrize(
    "branch",
    [
        "if flag:\n        model.eval()",
        "try:\n        pass\n    except Exception:\n        model.eval()",
        "for _ in range(1):\n        model.eval()",
        "while flag:\n        model.eval()",
        "model.eval() if flag else model.train()",
        "print(model.eval())",
    ],
)
def test_eval_that_may_not_run_is_not_reported(branch):
    code = f"def run(model, x, flag):\n    {branch}\n    return model(x)\n"
    assert tl003(code) == []


@pytest.mark.parametrize(
    "straight",
    [
        "with torch.no_grad():\n        model.eval()",
        "try:\n        model.eval()\n    finally:\n        pass",
        "model = model.to('cuda').eval()",
        "model.eval().to('cuda')",
        "model.train(mode=False)",
        "model.train(0)",
    ],
)
def test_eval_on_straight_line_is_reported(straight):
    code = f"import torch\n\ndef run(model, x):\n    {straight}\n    return model(x)\n"
    findings = tl003(code)
    assert len(findings) == 1 and findings[0].message.startswith("`model(...)` runs after")


def test_eval_and_forward_in_same_branch_are_reported():
    findings = tl003(
        """
        def run(model, x, flag):
            if flag:
                model.eval()
                y = model(x)
                return y
        """
    )
    assert [f.line for f in findings] == [5]


def test_forward_before_eval_and_after_train_mode_with_variable():
    assert tl003(
        """
        def loop(model, loader, opt, training):
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                model.eval()
            model.train(training)
            return model(x)
        """
    ) == []


def test_one_finding_per_eval_and_each_eval_reported():
    findings = tl003(
        """
        def run(model, x):
            model.eval()
            a = model(x)
            b = model.forward(x)
            model.train()
            c = model(x)
            model.eval()
            d = model(x)
            return a, b, c, d
        """
    )
    assert [f.line for f in findings] == [4, 9]


def test_grad_context_from_variable_and_conditional():
    assert tl003(
        """
        import contextlib
        import torch

        def run(model, x, training):
            model.eval()
            ctx = torch.enable_grad if training else torch.no_grad
            with ctx():
                a = model(x)
            with contextlib.nullcontext() if training else torch.inference_mode():
                b = model(x)
            return a, b
        """
    ) == []


def test_project_grad_mode_wrappers_are_trusted():
    assert tl003(
        """
        from utils import maybe_no_grad, inference_mode_eval

        def a(model, x, train):
            model.eval()
            with maybe_no_grad(not train):
                return model(x)

        @inference_mode_eval
        def b(model, x):
            model.eval()
            return model(x)
        """
    ) == []


def test_torch_no_grad_imported_by_name_and_alias():
    assert tl003(
        """
        from torch import no_grad
        from torch import inference_mode as im

        def a(model, x):
            model.eval()
            with no_grad():
                return model(x)

        @im()
        def b(model, x):
            model.eval()
            return model(x)
        """
    ) == []


def test_backward_through_wrappers_counts_as_gradient_use():
    assert tl003(
        """
        import torch

        def attack(model, x, y, scaler, accelerator, criterion):
            model.eval()
            out = model(x)
            losses = []
            losses.append(criterion(out, y))
            scaler.scale(sum(losses)).backward()
            model.eval()
            accelerator.backward(criterion(model(x), y))
            model.eval()
            torch.autograd.backward(model.forward(x).sum())
        """
    ) == []


def test_module_body_forward_under_no_grad_and_noqa():
    assert tl003(
        """
        import torch
        import torchvision

        model = torchvision.models.resnet18().eval()
        with torch.inference_mode():
            print(model(torch.randn(1, 3, 224, 224)))
        other = torchvision.models.resnet18().eval()
        print(other(torch.randn(1, 3, 224, 224)))  # noqa: TL003
        """
    ) == []


def test_class_body_and_odd_code_do_not_raise():
    # lint_snippet raises if the rule raised; only the class-body forward is a finding.
    findings = tl003(
        """
        class A:
            m = make()
            m.eval()
            y = m(1)

        x = eval("1 + 1")
        f = model.eval
        (lambda: model.eval())()
        getattr(model, "eval")()
        model.eval()(x)
        a.b().eval()
        """
    )
    assert [f.line for f in findings] == [5]


def test_methods_named_like_models_are_not_forwards():
    # torchvision's quantization helper: `fuse_model` after eval() is not a forward; the
    # real forward two lines later is the one reported.
    findings = lint_snippet(
        """
        def quantize(model, x):
            model.eval()
            model.fuse_model(is_qat=False)
            model.save_model("ckpt")
            return model(x)
        """,
        select=["TL003"],
    )
    assert [f.line for f in findings] == [6]


# -- methods: their callers in other files, matched by class or by name ------------------
SCORER = """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2), nn.Linear(8, 1))

    def forward(self, x):
        return self.body(x)

    def score(self, x):
        self.eval()
        return self.forward(x)
"""


@pytest.mark.parametrize("caller", [
    # through a delegating method of another class, whose own caller chooses no_grad
    "import torch\nfrom pkg.scorer import Scorer\n\nclass Agent:\n    def __init__(self):\n"
    "        self.scorer = Scorer()\n\n    def value(self, x):\n        return self.scorer.score(x)\n\n"
    "    def values(self, x):\n        with torch.no_grad():\n            return self.value(x)\n",
    # on an object of unknown class (a loaded model), under inference_mode
    "import torch\n\ndef decode(model, feats):\n    with torch.inference_mode():\n"
    "        return [model.score(f) for f in feats]\n",
    # a retry that calls itself adds no way in
    "import torch\n\ndef rank(model, x, tries=2):\n    out = model.score(x)\n    if tries and out.isnan().any():\n"
    "        return rank(model, x, tries - 1)\n    return out\n\n"
    "def main(model, x):\n    with torch.no_grad():\n        return rank(model, x)\n",
])
def test_method_only_called_under_no_grad_in_other_files(caller):
    assert lint_tree({"pkg/scorer.py": SCORER, "pkg/agent.py": caller}, select=["TL003"]) == []


@pytest.mark.parametrize("caller", [
    # the delegating method is also called without a grad-mode choice
    "import torch\nfrom pkg.scorer import Scorer\n\nclass Agent:\n    def __init__(self):\n"
    "        self.scorer = Scorer()\n\n    def value(self, x):\n        return self.scorer.score(x)\n\n"
    "    def values(self, x):\n        with torch.no_grad():\n            return self.value(x)\n\n"
    "def act(agent, x):\n    return agent.value(x)\n",
    # any object's `score` may be this one: an unprotected call of that name counts
    "import torch\n\ndef decode(model, feats):\n    with torch.no_grad():\n        first = model.score(feats[0])\n"
    "    return first, model.score(feats[1])\n",
    # called from a module's method other than forward, itself called with no choice
    "from torch import nn\nfrom pkg.scorer import Scorer\n\nclass Head(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.scorer = Scorer()\n\n    def rank(self, x):\n"
    "        return self.scorer.score(x)\n\ndef serve(head, x):\n    return head.rank(x)\n",
    # nobody calls it: callers this project does not show decide
    "import torch\n",
])
def test_method_still_reported_when_one_caller_is_unprotected(caller):
    findings = lint_tree({"pkg/scorer.py": SCORER, "pkg/agent.py": caller}, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("pkg/scorer.py", 16)]


def test_a_call_on_an_instance_of_another_class_is_not_a_caller():
    other = (
        "import torch\nfrom torch import nn\n\nclass Codec(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.gen = Generator()\n\n    def encode(self, x):\n"
        "        return self.score(x)\n\n    def score(self, x):\n"
        "        return self.gen.score(x)\n\nclass Generator(nn.Module):\n    def score(self, x):\n"
        "        return x\n\ndef main(model, x):\n    with torch.no_grad():\n        return model.score(x)\n\n"
        "def serve(codec, x):\n    return codec.encode(x)\n"
    )
    # Codec.score runs unprotected (from Codec.encode, from serve); its call goes to Generator.score
    # (the class it built), not to Scorer's. (Reached from a forward it would be left alone either
    # way: test_a_method_reached_from_another_modules_forward_in_another_file.)
    findings = lint_tree({"pkg/scorer.py": SCORER, "pkg/codec.py": other}, select=["TL003"])
    assert findings == []
    # without the constructor the receiver may be a Scorer: reported
    untyped = other.replace("self.gen = Generator()", "self.gen = make()")
    findings = lint_tree({"pkg/scorer.py": SCORER, "pkg/codec.py": untyped}, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("pkg/scorer.py", 16)]


def test_another_backends_no_backprop_mode_is_a_choice():
    caller = ("import chainer\n\ndef recog(model, feats):\n    with chainer.no_backprop_mode():\n"
              "        return [model.score(f) for f in feats]\n")
    assert lint_tree({"pkg/scorer.py": SCORER, "pkg/chainer_recog.py": caller}, select=["TL003"]) == []


@pytest.mark.parametrize("unrelated", [
    # arguments that cannot fit `score(self, x)`: another object's method
    "def show(stats, a, b):\n    return stats.score(), stats.score(a, b)\n",
    # the elements of a ModuleList (or list) of another class
    "from torch import nn\n\nclass Gen(nn.Module):\n    def score(self, x):\n        return x\n\n"
    "class Stack(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
    "        self.layers = nn.ModuleList([Gen() for _ in range(n)])\n\n    def forward(self, x):\n"
    "        for layer in self.layers[:2]:\n            x = layer.score(x)\n        return x\n",
    # a built-in value's method
    "def key(text):\n    name = str(text)\n    return name.score(0)\n",
])
def test_calls_that_cannot_run_the_method_are_not_callers(unrelated):
    caller = "import torch\n\ndef decode(model, x):\n    with torch.no_grad():\n        return model.score(x)\n"
    files = {"pkg/scorer.py": SCORER, "pkg/run.py": caller, "pkg/other.py": unrelated}
    assert lint_tree(files, select=["TL003"]) == []
    # the same calls on an object of unknown class, with fitting arguments, count
    files["pkg/other.py"] = "def show(stats, a):\n    return stats.score(a)\n"
    assert [f.line for f in lint_tree(files, select=["TL003"])] == [16]


def test_a_method_handed_on_as_a_callback_is_unprotected():
    caller = ("import torch\n\ndef decode(model, x, pool):\n    with torch.no_grad():\n        first = model.score(x)\n"
              "    return first, pool.submit(model.score, x)\n")
    findings = lint_tree({"pkg/scorer.py": SCORER, "pkg/run.py": caller}, select=["TL003"])
    assert [(f.path, f.line) for f in findings] == [("pkg/scorer.py", 16)]


def test_a_force_field_in_another_package_of_the_run_exempts_nothing_here():
    """Two unrelated packages linted together: one's model differentiates in ``forward``; the
    other's evaluation is reported as it is when that package is linted alone (the exemption
    reaches its own package and what imports connect to it, ``crossfile.reached_by``)."""
    alone = lint_tree({"cls/__init__.py": "", "cls/evaluate.py": EVALUATE}, select=["TL003"])
    assert [(f.path, f.line) for f in alone] == [("cls/evaluate.py", 3)]
    together = lint_tree({"ff/__init__.py": "", "ff/model.py": FORCE_FIELD,
                          "cls/__init__.py": "", "cls/evaluate.py": EVALUATE}, select=["TL003"])
    assert [(f.path, f.line) for f in together] == [("cls/evaluate.py", 3)]
    # A script importing the force field is reached by its exemption.
    linked = lint_tree({"ff/__init__.py": "", "ff/model.py": FORCE_FIELD,
                        "run.py": "from ff.model import Potential\n" + EVALUATE}, select=["TL003"])
    assert linked == []


EMBEDDINGS = """
import torch
from torch import nn

class Embeddings(nn.Module):
    def embed(self, x):
        raise NotImplementedError

class TransformerEmbeddings(Embeddings):
    def __init__(self, fine_tune=True):
        super().__init__()
        self.model = nn.Linear(4, 4)
        self.fine_tune = fine_tune

    def embed(self, x):
        gradient_context = torch.enable_grad() if (self.fine_tune and self.training) else torch.no_grad()
        with gradient_context:
            return self.model(x)
"""

POOLED = """
from pkg.embeddings import TransformerEmbeddings

class PooledEmbeddings(TransformerEmbeddings):
    def embed(self, x):
        return self.model(x).mean(0)
"""

USER = """
from pkg.embeddings import TransformerEmbeddings

class Classifier:
    def __init__(self):
        self.embeddings = TransformerEmbeddings()

    def label_similarity(self, sentences):
        self.embeddings.eval()
        vectors = self.embeddings.embed(sentences)
        self.embeddings.train()
        return vectors.detach().cpu().numpy()
"""


def test_a_callee_in_another_file_that_turns_autograd_off_in_eval_mode():
    """flair's shape (review packages, tars_model.py:139): the method the forward runs, defined
    in another file, chooses ``torch.no_grad()`` itself when its module is not training."""
    assert lint_tree({"pkg/__init__.py": "", "pkg/embeddings.py": EMBEDDINGS, "pkg/user.py": USER},
                     select=["TL003"]) == []


def test_a_subclass_in_the_project_that_records_keeps_the_finding():
    """The object may be any subclass of the class it is built as: one overriding the method
    without a choice of its own records a graph."""
    files = {"pkg/__init__.py": "", "pkg/embeddings.py": EMBEDDINGS, "pkg/pooled.py": POOLED, "pkg/user.py": USER}
    assert [(f.path, f.line) for f in lint_tree(files, select=["TL003"])] == [("pkg/user.py", 10)]


TORCHSCRIPT_TEST = """
import torch

def test_module_to_torchscript(m, inputs):
    m = m.eval()
    output = m(inputs)
    scripted = torch.jit.script(m)
    torch.testing.assert_close(scripted(inputs), output)
    return True
"""


def test_a_test_function_in_a_library_module_follows_skip_tests():
    """tsai's ``test_module_to_torchscript`` (review packages, models/layers.py:57): a test by its
    name whose forward's value an assertion checks is skipped as test files are, and reported
    with ``skip-tests`` off."""
    assert tl003(TORCHSCRIPT_TEST, path="tsai/models/layers.py") == []
    findings = lint_snippet(TORCHSCRIPT_TEST, select=["TL003"], path="tsai/models/layers.py",
                            options={"TL003": {"skip-tests": False}})
    assert [f.line for f in findings] == [6]
