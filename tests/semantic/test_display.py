"""semantic.display: calls that only show a value, and values that are only shown; and the
training model's ignite event handlers and timm-style ``loss_scaler(loss, optimizer)``."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic.dataflow import Flow
from torchlint.semantic.display import only_shown, showing_call
from torchlint.semantic.training import scaler_helper_step
from torchlint.tree import iter_nodes


def analyses(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx


def draws(src: str) -> list[bool]:
    """only_shown of each call to Python's random or numpy.random, in source order."""
    ctx = analyses(src)
    model = ctx.semantic.model
    flow = Flow(ctx, model)
    return [only_shown(ctx, model, flow, n) for n in iter_nodes(ctx.module)
            if isinstance(n, cst.Call) and (model.qualified_name(n.func) or "").startswith(("random.", "numpy.random."))]


@pytest.mark.parametrize("src", [
    "import random\nidx = random.randrange(10)\nplt.imshow(images[idx])\n",
    "import random\nimport matplotlib.pyplot as plt\nplt.title(str(random.random()))\n",
    "import numpy as np\nfor i in np.random.permutation(n)[:4]:\n    a, b = pairs[i]\n    print(f'{a} -> {b}')\n",
    "import numpy as np\nviz.scatter(X=x, opts=dict(markercolor=np.random.randint(0, 255, 10)))\n",
    "import numpy as np\nloss = np.random.random()\nwriter.add_scalar('loss', loss, 0)\n",
    "import random\nx = data[random.randint(0, 9)]\npred = model(x)\nprint(pred.argmax())\n",
    "import random\nk = random.choice(range(9))\nshow_sample(images[k])\nk\n",
    "import random\nfrom IPython.display import Image, display\nfor x in random.sample(paths, 3):\n"
    "    display(Image(filename=x))\n",
])
def test_draws_only_shown(src):
    assert draws(src) == [True]


@pytest.mark.parametrize("src", [
    "import numpy as np\nidx = np.random.permutation(n)\nprint(idx)\ntrain = data[idx]\nfit(train)\n",
    "import random\nrandom.shuffle(data)\nprint(data)\n",  # only the argument is shown; the call is the draw
    "import random\nif random.random() < 0.5:\n    print('flip')\n",
    "import random\ndef pick():\n    return random.choice(xs)\nprint(pick())\n",
    "import numpy as np\nx = np.log(np.random.rand(3))\nloss = model(x)\nloss.backward()\n",
    "import random\nrandom.random()\n",  # shown nowhere
    "import random\nbatch = []\nbatch.append(random.random())\nmodel(batch).backward()\n",
    "import random\ndata[random.randint(0, 9)] = 0\nprint(data)\n",
])
def test_draws_used(src):
    assert draws(src) == [False]


def test_showing_calls():
    ctx = analyses("import numpy as np\nimport matplotlib.pyplot as plt\n"
                   "print(1)\nplt.plot(x)\nwriter.add_image('a', x)\nnp.log(x)\nmodel(x)\nplot_curve(x)\n")
    calls = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)]
    assert [showing_call(ctx.semantic.model, c) for c in calls] == [True, True, True, False, False, True]


@pytest.mark.parametrize("src, key", [
    ("loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())", "optimizer"),
    ("self.loss_scaler(loss, optimizer=self.opt)", "self.opt"),
    ("scaler(loss, opt)", "opt"),
    ("loss_scaler(loss)", None),
    ("scaler.scale(loss)", None),
    ("min_max_scaler(x, y)", None),
])
def test_scaler_helper_step(src, key):
    call = cst.parse_expression(src)
    assert scaler_helper_step(call) == key


def test_ignite_event_handlers_train_with_the_engine():
    ctx = analyses("""
        import torch
        from ignite.engine import Engine, Events

        def update(policy, optimizer):
            optimizer.zero_grad()
            policy.loss().backward()
            optimizer.step()

        def main():
            optimizer = torch.optim.Adam(policy.parameters())
            trainer = Engine(run_single_timestep)

            @trainer.on(Events.EPOCH_COMPLETED)
            def update_model():
                update(policy, optimizer)

            trainer.run(range(100))

        def other():
            evaluator = Engine(run_single_timestep)
            evaluator.add_event_handler(Events.COMPLETED, log_results)
            evaluator.run(range(100))
    """)
    training = ctx.semantic.training
    graph = ctx.semantic.graph
    (trainer, _), (evaluator, _) = training.sites.engines
    assert [f.name.value for f in training.engine_handlers(trainer, graph)] == ["update_model"]
    assert training.starts_training_loop(trainer) and not training.starts_training_loop(evaluator)


def test_a_helper_that_trains_before_it_plots_is_no_display():
    src = ("import numpy as np\nlabels = base + np.random.normal(0, 0.01, size=n)\n"
           "fit_and_plot(features, labels)\n")
    assert draws(src) == [False]
