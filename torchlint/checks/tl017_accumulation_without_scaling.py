"""TL017 accumulation-without-scaling: gradient accumulation whose loss is not divided by the
number of accumulated micro-batches.

``semantic.accumulation.accumulation_windows`` finds each backward that runs on every
iteration of a loop (or every call of a once-per-batch function: an ignite process function,
a ``train_step(batch)`` called in the data loop) whose optimizer step (or a same-file helper
that steps) runs only under an accumulation ``if`` there (``if (i + 1) % k == 0:``,
``if engine.state.iteration % k == 0:``, ``if accum_done:``). The rule
reports it when ``loss_scaling`` says the differentiated value is built only from a criterion,
a ``torch.nn.functional`` loss or a model's output with nothing dividing or multiplying it.
Left alone: a loss divided or multiplied anywhere on its way (``loss / k``, ``loss /= k``,
``loss * w``); a sum-reduced loss (``reduction="sum"``: summing over micro-batches is what it
asks for); a loss from a helper or a parameter (unknown); gradients rescaled in the
accumulation branch (``p.grad /= k``); ``accelerator.backward`` (Accelerate divides by its
``gradient_accumulation_steps``); a comment in the loop saying the sum is intended.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.context import dotted_name
from torchlint.finding import Severity, Span
from torchlint.fixes import UNSAFE, Edit, Fix, full_span, insert_after
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.accumulation import UNSCALED, accumulation_windows, gradients_scaled, loss_scaling
from torchlint.semantic.comments import comments_within

# A comment in the loop saying the summed loss is meant: "sum over micro-batches on purpose".
_INTENDED_SUM = re.compile(r"#.*(\bsum(med|s|ming)?\b|intention|on purpose|deliberate|not (divided|averaged|scaled|normali[sz]ed)|"
                           r"no (loss )?(scaling|normali[sz]ation))", re.IGNORECASE)


def message(backward: str, count: str | None, step: str) -> str:
    k = f"`{count}`" if count else "the accumulation count"
    times = f"{k}×" if count else "that many times"
    return (f"`{backward}` adds up the gradients of {k} micro-batches per `{step}` without dividing the loss by {k}: "
            f"the gradient is {times} the batch mean (a larger SGD step, a tighter clipping threshold); "
            f"backward the loss divided by {k}")


class AccumulationWithoutScaling(Rule):
    code = "TL017"
    name = "accumulation-without-scaling"
    severity = Severity.WARNING
    default_enabled = True
    summary = "gradient accumulation that does not divide the loss by the number of accumulated micro-batches"
    # [tool.torchlint.accumulation-without-scaling]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text: tuple[str, ...] = ("backward",)
    fixable = (UNSAFE,)  # backward the loss divided by the count of the gate

    VALID: list[Valid | str] = [
        # The fix: the loss divided by the number of micro-batches.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Divided in place before the backward.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss /= accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Divided inside the scaler call.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        scaler = torch.cuda.amp.GradScaler()
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            scaler.scale(loss / accum_steps).backward()
            if (i + 1) % accum_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """,
        # Intentional sum reduction in the criterion: summing over micro-batches is what it asks for.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        summed = nn.CrossEntropyLoss(reduction="sum")
        for i, (x, y) in enumerate(loader):
            loss = summed(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Intentional sum reduction in a functional loss.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y, reduction="sum")
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Intentional sum documented in a comment.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            # gradients are summed over micro-batches on purpose (the lr is tuned for it)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Accelerate divides the loss by its gradient_accumulation_steps in accelerator.backward.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            accelerator.backward(loss)
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # The gradients are averaged in the accumulation branch instead.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                for p in model.parameters():
                    p.grad /= accum_steps
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A loss from a helper may be scaled there: unknown, left alone.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = compute_loss(model, x, y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # No accumulation: a step every iteration.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # A weighted loss (multiplied by a value) is scaled already.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) * loss_weight
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # nanoGPT: micro-steps in an inner loop, the loss divided, the step after the loop.
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for it in range(max_iters):
            for micro_step in range(accum_steps):
                x, y = get_batch("train")
                loss = model(x, y)
                loss = loss / accum_steps
                loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # ignite's supervised step: divided when accumulating (one of the values reaching the backward).
        """
        from ignite.engine import Engine
        import torch
        def update(engine, batch):
            model.train()
            x, y = batch
            loss = criterion(model(x), y)
            if accum_steps > 1:
                loss = loss / accum_steps
            loss.backward()
            if engine.state.iteration % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        trainer = Engine(update)
        """,
    ]
    INVALID: list[Invalid] = [
        # The plain bug: every update is accum_steps times too large.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(11,),
            messages=(message('loss.backward()', 'accum_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # Hugging Face style: the model's output carries the loss.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss.backward()
            if step % args.gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(12,),
            messages=(message('loss.backward()', 'args.gradient_accumulation_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for step, batch in enumerate(train_dataloader):
                outputs = model(**batch)
                loss = outputs.loss
                (loss / args.gradient_accumulation_steps).backward()
                if step % args.gradient_accumulation_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # With a GradScaler: scaling for fp16 is no accumulation scaling.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        scaler = torch.cuda.amp.GradScaler()
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            if (i + 1) % accum_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """,
            lines=(13,),
            messages=(message('scaler.scale(loss).backward()', 'accum_steps', 'scaler.step(optimizer)'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            scaler = torch.cuda.amp.GradScaler()
            for i, (x, y) in enumerate(loader):
                with torch.autocast("cuda"):
                    loss = criterion(model(x), y)
                scaler.scale(loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
        ),
        # A functional loss, the count from the arguments.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if (step + 1) % args.accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(11,),
            messages=(message('loss.backward()', 'args.accum', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for step, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                (loss / args.accum).backward()
                if (step + 1) % args.accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # A gate named for accumulation, no modulo: the count is not written.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            accum_done = (i + 1) % accum_steps == 0
            if accum_done:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(11,),
            messages=(message('loss.backward()', None, 'optimizer.step()'),),
        ),
        # A sum of two mean losses, neither divided.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        aux = nn.MSELoss()
        for i, (x, y) in enumerate(loader):
            out = model(x)
            loss = criterion(out, y) + aux(out, x[:, :2])
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(13,),
            messages=(message('loss.backward()', 'accum_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            aux = nn.MSELoss()
            for i, (x, y) in enumerate(loader):
                out = model(x)
                loss = criterion(out, y) + aux(out, x[:, :2])
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # The backward under autocast still runs every iteration.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cpu"):
                loss = criterion(model(x), y)
                loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(12,),
            messages=(message('loss.backward()', 'accum_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for i, (x, y) in enumerate(loader):
                with torch.autocast("cpu"):
                    loss = criterion(model(x), y)
                    (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # In a training function: the criterion is a parameter named like one.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        def train(net, loader, criterion, opt, accum):
            for i, (x, y) in enumerate(loader):
                loss = criterion(net(x), y)
                loss.backward()
                if (i + 1) % accum == 0:
                    opt.step()
                    opt.zero_grad()
        """,
            lines=(12,),
            messages=(message('loss.backward()', 'accum', 'opt.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            def train(net, loader, criterion, opt, accum):
                for i, (x, y) in enumerate(loader):
                    loss = criterion(net(x), y)
                    (loss / accum).backward()
                    if (i + 1) % accum == 0:
                        opt.step()
                        opt.zero_grad()
            """,
        ),
        # The step in a helper called under the gate.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        def update():
            optimizer.step()
            optimizer.zero_grad()
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                update()
        """,
            lines=(14,),
            messages=(message('loss.backward()', 'accum_steps', 'update()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            def update():
                optimizer.step()
                optimizer.zero_grad()
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    update()
            """,
        ),
        # A comment that says nothing about the sum is no documentation.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            # backward every micro-batch
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(12,),
            messages=(message('loss.backward()', 'accum_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                # backward every micro-batch
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # The model returns the loss; .mean() keeps its scale.
        Invalid(
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accum_steps = 4
        for i, (x, y) in enumerate(loader):
            loss = model(x, y).mean()
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
            lines=(11,),
            messages=(message('loss.backward()', 'accum_steps', 'optimizer.step()'),),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for i, (x, y) in enumerate(loader):
                loss = model(x, y).mean()
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # A literal count; the loss a sum: divided as a whole.
        Invalid(
            """
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                out = model(x)
                (F.cross_entropy(out, y) + F.mse_loss(out, y)).backward()
                if (i + 1) % 8 == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            lines=(5,),
            messages=(message("(F.cross_entropy(out, y) + F.mse_loss(out, y)).backward()", "8", "optimizer.step()"),),
            fixed="""
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                out = model(x)
                ((F.cross_entropy(out, y) + F.mse_loss(out, y)) / 8).backward()
                if (i + 1) % 8 == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # A loss written over several lines keeps its lines: the division is inserted around it.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            scaler = torch.cuda.amp.GradScaler()
            for i, (x, y) in enumerate(loader):
                out = model(x)
                scaler.scale(
                    F.cross_entropy(out, y)
                    + F.mse_loss(out, y)
                ).backward()
                if (i + 1) % accum_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
            """,
            lines=(7,),
            messages=(message("scaler.scale( F.cross_entropy(out, y) + F.mse_loss(out, y) ).backward()",
                              "accum_steps", "scaler.step(optimizer)"),),
            fixed="""
            import torch
            import torch.nn.functional as F
            scaler = torch.cuda.amp.GradScaler()
            for i, (x, y) in enumerate(loader):
                out = model(x)
                scaler.scale(
                    (F.cross_entropy(out, y)
                    + F.mse_loss(out, y)) / accum_steps
                ).backward()
                if (i + 1) % accum_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
            """,
        ),
        # The count is computed in the gate: no fix (a call may not give the same value twice).
        Invalid(
            """
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                if (i + 1) % accumulation_steps(i) == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            lines=(5,),
            messages=(message("loss.backward()", "accumulation_steps(i)", "optimizer.step()"),),
        ),
        # An ignite process function runs once per batch: the same window without a loop.
        Invalid(
            """
            from ignite.engine import Engine
            def update(engine, batch):
                model.train()
                x, y = batch
                loss = criterion(model(x), y)
                loss.backward()
                if engine.state.iteration % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            trainer = Engine(update)
            """,
            lines=(7,),
            messages=(message("loss.backward()", "accum_steps", "optimizer.step()"),),
            fixed="""
            from ignite.engine import Engine
            def update(engine, batch):
                model.train()
                x, y = batch
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()
                if engine.state.iteration % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            trainer = Engine(update)
            """,
        ),
    ]

    def finish(self) -> None:
        sem = self.ctx.semantic
        for window in accumulation_windows(sem):
            call = window.backward.node
            if self._accelerate(call) or gradients_scaled(window.gate):
                continue
            if loss_scaling(sem, window.loss, call) != UNSCALED or self._sum_documented(window.unit):
                continue
            count = window.count
            self.report(call, message(_code(call), _code(count) if count is not None else None,
                                      _code(window.step.node)), fix=self._divide_fix(window))

    def _divide_fix(self, window) -> Fix | None:
        """The backward's loss divided by the gate's count (``(loss / k).backward()``,
        ``scaler.scale(loss / k)``), where the count is an integer, a name or an attribute
        chain bound nowhere in the loop (or once-per-batch function) other than as its
        parameter, so it is the same value at the backward as at the gate. Only what is
        differentiated changes: a logged ``loss.item()`` keeps its scale."""
        count, loss = window.count, window.loss
        key = dotted_name(count) if count is not None else None
        if not (isinstance(count, cst.Integer) or key is not None):
            return None
        if key is not None:
            scope = self.ctx.semantic.model.scope_of(window.backward.node)
            if any(b.kind != "param" and (b.node is window.unit or self.ctx.inside(b.node, window.unit))
                   for b in scope.bindings.get(key, ())):
                return None
        atom = isinstance(loss, _PRIMARY) or bool(loss.lpar)
        parent = self.ctx.parent(loss)
        receiver = isinstance(parent, cst.Attribute) and parent.value is loss  # (loss / k).backward()
        before = ("(" if receiver else "") + ("" if atom else "(")
        after = ("" if atom else ")") + f" / {_code(count)}" + (")" if receiver else "")
        start = full_span(self.ctx, loss)
        # Text inserted around the loss, which stays as written (its comments and line breaks).
        edits = [insert_after(self.ctx, loss, after)]
        if before:
            edits.insert(0, Edit(Span(start.line, start.column, start.line, start.column), before))
        return Fix.unsafe(f"Backward the loss divided by {_code(count)}", *edits)

    def _accelerate(self, call: cst.Call) -> bool:
        """``accelerator.backward(loss)`` divides by its ``gradient_accumulation_steps``."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "backward" and bool(call.args) \
            and (dotted_name(func.value) or "").rsplit(".", 1)[-1].lower() == "accelerator"

    def _sum_documented(self, unit: cst.CSTNode) -> bool:
        """A comment in the loop (or function) says the summed gradient is intended."""
        return any(_INTENDED_SUM.search(comment) for comment in comments_within(self.ctx, unit))


# Expressions that bind tighter than ``/``: no parentheses needed on its left.
_PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
