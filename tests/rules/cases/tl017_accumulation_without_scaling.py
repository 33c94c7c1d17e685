"""TL017's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl017_accumulation_without_scaling import message
from torchlint.rule import Invalid


VALID = [
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


INVALID = [
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
    # No comment switches a finding off (issue 39): a sum "on purpose", "deliberately",
    # "intentionally", a TODO/FIXME/BUG naming the missing division: reduction="sum" says it in code.
    Invalid(
        """
            import torch
            import torch.nn as nn
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
            for i, (x, y) in enumerate(loader):
                # TODO: divide the loss by accum_steps (deliberately not scaled for now)
                loss = criterion(model(x), y)
                loss.backward()  # BUG: intentionally not divided, FIXME
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        lines=(11, 18),
        messages=(
            '`loss.backward()` adds up the gradients of `accum_steps` micro-batches per '
            '`optimizer.step()` without dividing the loss by `accum_steps`: the gradient is '
            '`accum_steps`× the batch mean (a larger SGD step, a tighter clipping threshold); backward '
            'the loss divided by `accum_steps`',
            '`loss.backward()` adds up the gradients of `accum_steps` micro-batches per '
            '`optimizer.step()` without dividing the loss by `accum_steps`: the gradient is '
            '`accum_steps`× the batch mean (a larger SGD step, a tighter clipping threshold); backward '
            'the loss divided by `accum_steps`',
        ),
        fixed="""
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accum_steps = 4
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                # gradients are summed over micro-batches on purpose (the lr is tuned for it)
                (loss / accum_steps).backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            for i, (x, y) in enumerate(loader):
                # TODO: divide the loss by accum_steps (deliberately not scaled for now)
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()  # BUG: intentionally not divided, FIXME
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
    ),
    # Accumulation as an inner micro-step loop with one step after it (nanoGPT's train.py with its
    # `loss = loss / gradient_accumulation_steps` missing), with a GradScaler and clipping (issue 40).
    Invalid(
        """
            import torch
            import torch.nn.functional as F
            model = GPT(config)
            optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
            scaler = torch.cuda.amp.GradScaler(enabled=True)
            gradient_accumulation_steps = 40
            while True:
                for micro_step in range(gradient_accumulation_steps):
                    with torch.autocast("cuda", dtype=torch.float16):
                        logits, loss = model(X, Y)
                    X, Y = get_batch("train")
                    scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
            """,
        lines=(13,),
        messages=(
            '`scaler.scale(loss).backward()` adds up the gradients of '
            '`gradient_accumulation_steps` micro-batches per `scaler.step(optimizer)` without '
            'dividing the loss by `gradient_accumulation_steps`: the gradient is '
            '`gradient_accumulation_steps`× the batch mean (a larger SGD step, a tighter clipping'
            ' threshold); backward the loss divided by `gradient_accumulation_steps`',
        ),
        fixed="""
            import torch
            import torch.nn.functional as F
            model = GPT(config)
            optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
            scaler = torch.cuda.amp.GradScaler(enabled=True)
            gradient_accumulation_steps = 40
            while True:
                for micro_step in range(gradient_accumulation_steps):
                    with torch.autocast("cuda", dtype=torch.float16):
                        logits, loss = model(X, Y)
                    X, Y = get_batch("train")
                    scaler.scale(loss / gradient_accumulation_steps).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
            """,
    ),
    # ... without a scaler, in a once-per-batch function, over the chunks of one batch.
    Invalid(
        """
            import torch.nn.functional as F
            def train_step(model, optimizer, batch, n_chunks):
                for chunk in batch.chunk(n_chunks):
                    loss = F.cross_entropy(model(chunk[:, :-1]), chunk[:, 1:])
                    loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            """,
        lines=(6,),
        messages=(
            '`loss.backward()` adds up the gradients of `n_chunks` micro-batches per '
            '`optimizer.step()` without dividing the loss by `n_chunks`: the gradient is '
            '`n_chunks`× the batch mean (a larger SGD step, a tighter clipping threshold); '
            'backward the loss divided by `n_chunks`',
        ),
        fixed="""
            import torch.nn.functional as F
            def train_step(model, optimizer, batch, n_chunks):
                for chunk in batch.chunk(n_chunks):
                    loss = F.cross_entropy(model(chunk[:, :-1]), chunk[:, 1:])
                    (loss / n_chunks).backward()
                optimizer.step()
                optimizer.zero_grad()
            """,
    ),
    # The `(i + 1) % N` test written as a `continue` that skips the clipping and the step (issue 40).
    Invalid(
        """
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            def train(model, loader, optimizer, accumulation_steps):
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y)
                    loss.backward()
                    if (i + 1) % accumulation_steps != 0:
                        continue
                    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        lines=(7,),
        messages=(
            '`loss.backward()` adds up the gradients of `accumulation_steps` micro-batches per '
            '`optimizer.step()` without dividing the loss by `accumulation_steps`: the gradient '
            'is `accumulation_steps`× the batch mean (a larger SGD step, a tighter clipping '
            'threshold); backward the loss divided by `accumulation_steps`',
        ),
        fixed="""
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            def train(model, loader, optimizer, accumulation_steps):
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y)
                    (loss / accumulation_steps).backward()
                    if (i + 1) % accumulation_steps != 0:
                        continue
                    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
    ),
    # A loss unpacked from a criterion returning more (torchtune's DPO recipes without their
    # `loss = loss / self._gradient_accumulation_steps`), clipping in the accumulation branch.
    Invalid(
        """
            import torch
            class Recipe:
                def __init__(self, model, optimizer, loss_fn, steps):
                    self._model, self._optimizer, self._loss_fn = model, optimizer, loss_fn
                    self._gradient_accumulation_steps = steps
                def train(self, dataloader):
                    for idx, batch in enumerate(dataloader):
                        chosen, rejected = self._model(batch)
                        loss, chosen_rewards, rejected_rewards = self._loss_fn(chosen, rejected)
                        loss = loss.mean()
                        loss.backward()
                        if (idx + 1) % self._gradient_accumulation_steps == 0:
                            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 1.0)
                            self._optimizer.step()
                            self._optimizer.zero_grad(set_to_none=True)
            """,
        lines=(12,),
        messages=(
            '`loss.backward()` adds up the gradients of `self._gradient_accumulation_steps` '
            'micro-batches per `self._optimizer.step()` without dividing the loss by '
            '`self._gradient_accumulation_steps`: the gradient is '
            '`self._gradient_accumulation_steps`× the batch mean (a larger SGD step, a tighter '
            'clipping threshold); backward the loss divided by '
            '`self._gradient_accumulation_steps`',
        ),
        fixed="""
            import torch
            class Recipe:
                def __init__(self, model, optimizer, loss_fn, steps):
                    self._model, self._optimizer, self._loss_fn = model, optimizer, loss_fn
                    self._gradient_accumulation_steps = steps
                def train(self, dataloader):
                    for idx, batch in enumerate(dataloader):
                        chosen, rejected = self._model(batch)
                        loss, chosen_rewards, rejected_rewards = self._loss_fn(chosen, rejected)
                        loss = loss.mean()
                        (loss / self._gradient_accumulation_steps).backward()
                        if (idx + 1) % self._gradient_accumulation_steps == 0:
                            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 1.0)
                            self._optimizer.step()
                            self._optimizer.zero_grad(set_to_none=True)
            """,
    ),
    # The loss taken from `model.forward(...)` (GPT2-Chinese before its fix), clipping between the
    # backward and the accumulation `if`.
    Invalid(
        """
            import torch
            for step, batch_inputs in enumerate(batches):
                outputs = model.forward(input_ids=batch_inputs, labels=batch_inputs)
                loss = outputs[0]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                if (step + 1) % gradient_accumulation == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        lines=(6,),
        messages=(
            '`loss.backward()` adds up the gradients of `gradient_accumulation` micro-batches per'
            ' `optimizer.step()` without dividing the loss by `gradient_accumulation`: the '
            'gradient is `gradient_accumulation`× the batch mean (a larger SGD step, a tighter '
            'clipping threshold); backward the loss divided by `gradient_accumulation`',
        ),
        fixed="""
            import torch
            for step, batch_inputs in enumerate(batches):
                outputs = model.forward(input_ids=batch_inputs, labels=batch_inputs)
                loss = outputs[0]
                (loss / gradient_accumulation).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                if (step + 1) % gradient_accumulation == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
    ),
    # A sum of the terms a loss module returns (open_clip's accumulation, issue 761), in an inner
    # loop over `accum_freq` micro-batches.
    Invalid(
        """
            import torch
            def train_one_epoch(model, data, loss, optimizer, scaler, args):
                for i, batch in enumerate(data):
                    for j in range(args.accum_freq):
                        losses = loss(**model(batch[j]), output_dict=True)
                        total_loss = sum(losses.values())
                        scaler.scale(total_loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
        lines=(8,),
        messages=(
            '`scaler.scale(total_loss).backward()` adds up the gradients of `args.accum_freq` '
            'micro-batches per `scaler.step(optimizer)` without dividing the loss by '
            '`args.accum_freq`: the gradient is `args.accum_freq`× the batch mean (a larger SGD '
            'step, a tighter clipping threshold); backward the loss divided by `args.accum_freq`',
        ),
        fixed="""
            import torch
            def train_one_epoch(model, data, loss, optimizer, scaler, args):
                for i, batch in enumerate(data):
                    for j in range(args.accum_freq):
                        losses = loss(**model(batch[j]), output_dict=True)
                        total_loss = sum(losses.values())
                        scaler.scale(total_loss / args.accum_freq).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
    ),
]
