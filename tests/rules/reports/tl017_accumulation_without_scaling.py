"""TL017 accumulation-without-scaling: gradients of several micro-batches added up before one
optimizer step with a mean-reduced loss left undivided, from public reports (the gradient is k
times the big batch's mean: a larger SGD step, a clipping threshold k times tighter), and their
fixes or correct shapes: the loss (or the gradients) divided, a sum-reduced loss, Accelerate's
backward, a step on every batch."""

BUGS = [
    # nanoGPT before the fix: inner micro-step loop, GradScaler, clipping, no division.
    """
    import torch
    from model import GPT

    model = GPT(config)
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    while True:
        for micro_step in range(gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
            X, Y = get_batch("train")
            scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    # https://github.com/karpathy/nanoGPT/issues/168
    """,
    # The same loop reported again: backward without normalising by the accumulation steps.
    """
    import torch

    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            logits, loss = model(X, Y)
            X, Y = get_batch("train")
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    # https://github.com/karpathy/nanoGPT/issues/206
    """,
    # neural_sp's ASR trainer: the loss should be divided by accum_grad_n_steps.
    """
    import torch

    def train(model, optimizer, train_set, args):
        accum_n_steps = 0
        for batch_train in train_set:
            loss, observation = model(batch_train)
            loss.backward()
            loss.detach()
            accum_n_steps += 1
            if accum_n_steps >= args.accum_grad_n_steps:
                if args.clip_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
                accum_n_steps = 0
    # https://github.com/hirofumi0810/neural_sp/issues/168
    """,
    # DistillKitPlus: the distillation loss back-propagated every batch, never divided.
    """
    import torch.nn.functional as F

    def train(student, teacher, dataloader, optimizer, scheduler, gradient_accumulation_steps):
        for step, batch in enumerate(dataloader):
            outputs = student(**batch)
            teacher_logits = teacher(**batch).logits.detach()
            loss = F.kl_div(F.log_softmax(outputs.logits, -1), F.softmax(teacher_logits, -1),
                            reduction="batchmean")
            loss.backward()
            if (step + 1) % gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
    # https://github.com/agokrani/distillKitPlus/issues/5
    """,
    # e2e_sae after #68 removed the division: losses include means, so the sum is k times too big.
    """
    import torch

    def train(model, loader, optimizer, n_gradient_accumulation_steps, max_grad_norm):
        for batch_idx, batch in enumerate(loader):
            loss, loss_dict = model(batch)
            loss.backward()
            if (batch_idx + 1) % n_gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/ApolloResearch/e2e_sae/pull/70
    """,
    # GPT2-Chinese before its fix: the accumulated loss not averaged.
    """
    import torch

    for epoch in range(epochs):
        for step, batch_inputs in enumerate(batches):
            outputs = model.forward(input_ids=batch_inputs, labels=batch_inputs)
            loss = outputs[0]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            if (step + 1) % gradient_accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
    # https://github.com/Morizeyao/GPT2-Chinese/pull/101
    """,
    # Practical_DL's notebook: accumulate over several batches, one step, mean loss kept as is.
    """
    import torch.nn.functional as F

    for i, (x_batch, y_batch) in enumerate(train_loader):
        logits = model(x_batch.cuda())
        loss = F.cross_entropy(logits, y_batch.cuda())
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            opt.step()
            opt.zero_grad()
    # https://github.com/yandexdataschool/Practical_DL/pull/87
    """,
    # RAE's trainer with grad accumulation on: the loss not divided before backward.
    """
    import torch

    def train_epoch(model, loader, optimizer, scaler, grad_accum_steps):
        for it, (images, _) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(images).mean()
            scaler.scale(loss).backward()
            if (it + 1) % grad_accum_steps != 0:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    # https://github.com/bytetriper/RAE/pull/78
    """,
    # atlas before "normalise the loss by the number of accumulation steps".
    """
    import torch.nn as nn

    loss_fn = nn.CrossEntropyLoss()
    for i, batch in enumerate(data_loader):
        logits = model(batch["images"].cuda())
        loss = loss_fn(logits, batch["labels"].cuda())
        loss.backward()
        if (i + 1) % args.num_grad_accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/fredzzhang/atlas/pull/26
    """,
    # open_clip's accumulation: an inner loop over the accumulated chunks, total loss undivided.
    """
    import torch

    def train_one_epoch(model, data, loss, optimizer, scaler, args):
        for i, batch in enumerate(data):
            optimizer.zero_grad()
            for j in range(args.accum_freq):
                images, texts = accum_images[j], accum_texts[j]
                with torch.autocast("cuda"):
                    model_out = model(images, texts)
                    losses = loss(**model_out, output_dict=True)
                    total_loss = sum(losses.values())
                scaler.scale(total_loss).backward()
            scaler.step(optimizer)
            scaler.update()
    # https://github.com/mlfoundations/open_clip/issues/761
    """,
]

LOOKALIKES = [
    # nanoGPT after the fix.
    """
    import torch
    from model import GPT

    model = GPT(config)
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    while True:
        for micro_step in range(gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / gradient_accumulation_steps
            X, Y = get_batch("train")
            scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    # https://github.com/karpathy/nanoGPT/issues/168
    """,
    # The question about dividing by micro_step + 1: divided either way.
    """
    import torch

    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
            X, Y = get_batch("train")
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    # https://github.com/karpathy/nanoGPT/issues/605
    """,
    # neural_sp's fix.
    """
    import torch

    def train(model, optimizer, train_set, args):
        accum_n_steps = 0
        for batch_train in train_set:
            loss, observation = model(batch_train)
            loss = loss / args.accum_grad_n_steps
            loss.backward()
            loss.detach()
            accum_n_steps += 1
            if accum_n_steps >= args.accum_grad_n_steps:
                optimizer.step()
                optimizer.zero_grad()
                accum_n_steps = 0
    # https://github.com/hirofumi0810/neural_sp/issues/168
    """,
    # The minimal patch asked for: the loss divided by the accumulation count.
    """
    import torch.nn.functional as F

    def train(student, teacher, dataloader, optimizer, scheduler, gradient_accumulation_steps):
        for step, batch in enumerate(dataloader):
            outputs = student(**batch)
            teacher_logits = teacher(**batch).logits.detach()
            loss = F.kl_div(F.log_softmax(outputs.logits, -1), F.softmax(teacher_logits, -1),
                            reduction="batchmean")
            (loss / gradient_accumulation_steps).backward()
            if (step + 1) % gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
    # https://github.com/agokrani/distillKitPlus/issues/5
    """,
    # e2e_sae's revert: `loss = loss / n_gradient_accumulation_steps` back in.
    """
    import torch

    def train(model, loader, optimizer, n_gradient_accumulation_steps, max_grad_norm):
        for batch_idx, batch in enumerate(loader):
            loss, loss_dict = model(batch)
            loss = loss / n_gradient_accumulation_steps
            loss.backward()
            if (batch_idx + 1) % n_gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/ApolloResearch/e2e_sae/pull/70
    """,
    # GPT2-Chinese's fix: the loss averaged over the accumulation.
    """
    import torch

    for epoch in range(epochs):
        for step, batch_inputs in enumerate(batches):
            outputs = model.forward(input_ids=batch_inputs, labels=batch_inputs)
            loss = outputs[0]
            if gradient_accumulation > 1:
                loss = loss / gradient_accumulation
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            if (step + 1) % gradient_accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
    # https://github.com/Morizeyao/GPT2-Chinese/pull/101
    """,
    # NVIDIA's BERT pretraining: the summed gradients divided instead of the loss.
    """
    def take_optimizer_step(args, optimizer, model, grad_scaler):
        for param in model.parameters():
            if param.grad is not None:
                param.grad.data.div_(args.gradient_accumulation_steps)
        grad_scaler.step(optimizer)
        grad_scaler.update()
        optimizer.zero_grad()

    for step, batch in enumerate(train_dataloader):
        loss = model(**batch)
        grad_scaler.scale(loss).backward()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            take_optimizer_step(args, optimizer, model, grad_scaler)
    # https://github.com/NVIDIA/DeepLearningExamples/issues/1112
    """,
    # Practical_DL's fixed notebook.
    """
    import torch.nn.functional as F

    for i, (x_batch, y_batch) in enumerate(train_loader):
        logits = model(x_batch.cuda())
        loss = F.cross_entropy(logits, y_batch.cuda()) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            opt.step()
            opt.zero_grad()
    # https://github.com/yandexdataschool/Practical_DL/pull/87
    """,
    # A sum-reduced criterion: summing over micro-batches is what the big batch computes.
    """
    import torch.nn as nn

    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    for i, batch in enumerate(data_loader):
        logits = model(batch["images"].cuda())
        loss = loss_fn(logits, batch["labels"].cuda())
        loss.backward()
        if (i + 1) % args.num_grad_accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/fredzzhang/atlas/pull/26
    """,
    # Accelerate: accelerator.backward divides by its gradient_accumulation_steps.
    """
    from accelerate import Accelerator

    accelerator = Accelerator(gradient_accumulation_steps=8)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for step, batch in enumerate(dataloader):
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        if (step + 1) % 8 == 0:
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/huggingface/transformers/pull/35207
    """,
    # open_clip with the total loss divided by accum_freq.
    """
    import torch

    def train_one_epoch(model, data, loss, optimizer, scaler, args):
        for i, batch in enumerate(data):
            optimizer.zero_grad()
            for j in range(args.accum_freq):
                images, texts = accum_images[j], accum_texts[j]
                with torch.autocast("cuda"):
                    model_out = model(images, texts)
                    losses = loss(**model_out, output_dict=True)
                    total_loss = sum(losses.values()) / args.accum_freq
                scaler.scale(total_loss).backward()
            scaler.step(optimizer)
            scaler.update()
    # https://github.com/mlfoundations/open_clip/issues/957
    """,
]
