"""Training loops in the shared training model: ``loop_runs`` follows functions a call passes
on, ``training_loops`` / ``runs_training_loop`` / ``starts_training_loop`` tell a run from a
single step, optionally over the loose call graph (TL006 asks them)."""

from __future__ import annotations

import libcst as cst

from tests.semantic.test_semantic import analyses, call, fn


def loop_over(sem, name: str):
    return next(lp for lp in sem.model.loops.values()
                if isinstance(lp.node, cst.For) and getattr(lp.node.iter, "value", None) == name)


def test_loop_runs_follows_a_closure_passed_to_the_step():
    ctx, sem = analyses(
        "def fit(model, x, opt, data):\n"
        "    def closure():\n        opt.zero_grad()\n        loss = model(x)\n        loss.backward()\n        return loss\n"
        "    for _ in data:\n        opt.step(closure)\n")
    training = sem.training
    loop = loop_over(sem, "data")
    assert training.loop_runs(loop) == {"backward", "step"}
    assert loop in training.training_loops()
    assert "training" in training.loop_kinds(loop)


def test_a_single_step_trains_but_runs_no_training_loop():
    ctx, sem = analyses(
        "def demo(model, x, opt):\n    model(x).backward()\n    opt.step()\n"
        "def train(model, loader, opt):\n    for x in loader:\n        demo(model, x, opt)\n"
        "if __name__ == '__main__':\n    demo(m, x, o)\n    train(m, loader, o)\n")
    training = sem.training
    runs = training.runs_training_loop()
    assert training.trains(fn(ctx, "demo")) and fn(ctx, "demo") not in runs
    assert fn(ctx, "train") in runs and ctx.module in runs
    demo_call, train_call = call(ctx, "demo")[1], call(ctx, "train")[0]
    model = sem.model
    assert not training.starts_training_loop(model.call_site(demo_call))
    assert training.starts_training_loop(model.call_site(train_call))
    # The call inside the loop runs in a training loop.
    assert training.starts_training_loop(model.call_site(call(ctx, "demo")[0]))


def test_fit_engines_and_the_loose_graph_start_training_loops():
    ctx, sem = analyses(
        "import lightning as L\nfrom ignite.engine import Engine\n"
        "def step(engine, batch):\n    model(batch).backward()\n    opt.step()\n"
        "class Recipe:\n    def train(self):\n        for b in self.loader:\n"
        "            self.model(b).backward()\n            self.opt.step()\n"
        "if __name__ == '__main__':\n"
        "    L.Trainer().fit(model)\n    Engine(step)\n    Recipe().train()\n")
    training, model = sem.training, sem.model
    fit_call = next(c for c in call(ctx, None) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "fit")
    assert training.starts_training_loop(model.call_site(fit_call))
    assert training.starts_training_loop(model.call_site(call(ctx, "Engine")[0]))
    recipe = next(c for c in call(ctx, None) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "train")
    # ``Recipe().train()``: only the loose graph (by-name methods) resolves the method.
    assert not training.starts_training_loop(model.call_site(recipe))
    assert training.starts_training_loop(model.call_site(recipe), sem.loose_graph)
