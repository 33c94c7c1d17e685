"""TL028's cases from public reports: an optimizer stepped with no backward since its
gradients were cleared (the backward deleted, commented out or misspelled, or run after the
step), and the correct shapes that look like them (clearing after the step, a step at the top
of an accumulation window, a backward run by a helper or a scaler)."""

BUGS = [
    """
    import torch

    def train(net, optimizer, criterion, data_loader, epochs):
        net.train()
        for epoch in range(epochs):
            for images, targets in data_loader:
                out = net(images)
                optimizer.zero_grad()
                loss_l, loss_c = criterion(out, targets)
                loss = loss_l + loss_c
                optimizer.step()
                print(loss.item())
    # https://github.com/Goingqs/PyramidBox/issues/7
    """,
    """
    import torch

    def train_epoch(model, loader, optimizer, loss_fn):
        model.train()
        running = 0.0
        for anchor, positive, negative in loader:
            optimizer.zero_grad()
            out_a, out_p, out_n = model(anchor), model(positive), model(negative)
            loss = loss_fn(out_a, out_p, out_n)
            optimizer.step()
            running += loss.item()
        return running / len(loader)
    # https://github.com/aalto-intelligent-robotics/sivl/issues/2
    """,
    """
    import torch
    import torch.nn as nn

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(10):
        for x, y in train_loader:
            optimizer.zero_grad()
            y_pred = model(x)
            loss = loss_fn(y_pred, y)
            optimizer.step()
    # https://github.com/darksigma/Fundamentals-of-Deep-Learning-Book/issues/9
    """,
    """
    import torch

    class Solver:
        def reset_grad(self):
            self.opt_g.zero_grad()
            self.opt_c1.zero_grad()
            self.opt_c2.zero_grad()

        def train_onestep(self, img_s, img_t):
            self.reset_grad()
            feat_t = self.G(img_t)
            output_t1, output_t2 = self.C1(feat_t), self.C2(feat_t)
            loss_dis = self.discrepancy(output_t1, output_t2)
            # loss_dis.backward()
            self.opt_g.step()
            self.reset_grad()
    # https://github.com/mil-tokyo/MCD_DA/issues/8
    """,
    """
    import torch
    import torch.nn as nn

    model = SentimentLSTM(vocab_size, embedding_dim, hidden_dim)
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(epochs):
        for inputs, labels in train_loader:
            model.zero_grad()
            output = model(inputs)
            loss = criterion(output.squeeze(), labels.float())
            loss.backwards()
            optimizer.step()
    # https://github.com/theartificialguy/NLP-with-Deep-Learning/issues/2
    """,
    """
    import torch

    optimizer = SPlus(model.parameters(), lr=0.1)
    for batch in loader:
        optimizer.train()
        model.train()
        loss = model(batch)
        loss.backwards()
        optimizer.step()
        optimizer.zero_grad()
    # https://github.com/kvfrans/splus/issues/5
    """,
    """
    import torch

    for inputs, targets in dataloader:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        optimizer.step()
        loss.backward()
    # https://errorcanon.top/errors/pytorch/optimizer-step-without-loss-backward/index.md
    """,
    """
    import torch

    for epoch in range(100):
        optimizer.zero_grad()
        output = model(X)
        loss = criterion(output, y)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        loss.backward()
    # https://theneuralbase.com/pytorch/learn/beginner/forward-pass-loss-backward-step/
    """,
    """
    import torch.nn.functional as F

    data, target = data.to(device), target.to(device)
    model.train()
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    optimizer.step()
    print(loss.item())
    # https://github.com/hughplay/memo/blob/9cd8cd89977d7d21d4ff530031f8eeef9674cab1/code/snippet/pytorch.py
    """,
    """
    import torch

    def train(opt, tr_dataloader, model, optim, lr_scheduler):
        for epoch in range(opt.epochs):
            model.train()
            for x, y in tr_dataloader:
                optim.zero_grad()
                model_output = model(x)
                loss, acc = prototypical_loss(model_output, target=y, n_support=opt.num_support_tr)
                optim.step()
            lr_scheduler.step()
    # https://github.com/orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch/issues/20
    """,
]

LOOKALIKES = [
    """
    import torch

    def executor_train(model, optimizer, data_loader, criterion, clip):
        model.train()
        for feats, target in data_loader:
            optimizer.zero_grad()
            logits = model(feats)
            loss = criterion(logits, target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
    # https://github.com/wenet-e2e/wekws/pull/73
    """,
    """
    import torch.nn.functional as F

    def train_epoch(model, train_loader, optimizer):
        model.train()
        for data in train_loader:
            out = model(data)
            loss = F.nll_loss(out, data.y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/inyeoplee77/SAGPool/issues/15
    """,
    """
    def train(model, train_loader, optimizer):
        model.train()
        for x in train_loader:
            x = x.float()
            loss = model.nll(x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/rll/deepul/issues/12
    """,
    """
    class Trainer:
        def train_step(self, batch):
            loss = self.model(batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.item()
    # https://github.com/LeiaLi/SRDiff/issues/15
    """,
    """
    def run_epoch(model, optimizer, data_loader, loss_func):
        for inputs, labels in data_loader:
            y_hat = model(inputs)
            loss = loss_func(y_hat, labels)
            if model.training:
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/EdwardRaff/Inside-Deep-Learning/issues/20
    """,
    """
    for epoch in range(num_epochs):
        for images, labels in train_loader:
            outputs = model(images)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/yunjey/pytorch-tutorial/issues/238
    """,
    """
    def train_seg(model, dataset_loader, optimizer, criterion):
        model.train()
        for inputs, target in dataset_loader:
            outputs = model(inputs)
            loss = criterion(outputs, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/sacmehta/EdgeNets/issues/14
    """,
    """
    import torch

    scaler = torch.cuda.amp.GradScaler()
    for udata, masks_enc, masks_pred in unsupervised_loader:
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            loss = forward_context(udata, masks_enc, masks_pred)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    # https://github.com/facebookresearch/ijepa/issues/64
    """,
    """
    import pytorch_lightning as pl

    class Model(pl.LightningModule):
        def training_step(self, batch, batch_idx):
            x, y = batch
            opt = self.optimizers()
            opt.zero_grad()
            loss = self.loss(self.net(x), y)
            self.manual_backward(loss)
            opt.step()
    # https://github.com/Lightning-AI/pytorch-lightning/issues/7128
    """,
    """
    def train_epoch(model, loader, model_optim, scaler, max_norm, acc_it):
        for i, (batch_x, batch_y) in enumerate(loader):
            loss = criterion(model(batch_x), batch_y)
            norm_value = scaler(loss, model_optim, clip_grad=max_norm, parameters=model.parameters(),
                                update_grad=((i + 1) % acc_it == 0))
            if (i + 1) % acc_it == 0:
                model_optim.zero_grad()
    # https://github.com/mims-harvard/UniTS/issues/13
    """,
    """
    for epoch in range(epochs):
        for batch in loader:
            loss = compute_loss(generator, batch)
            if epoch > 0:
                opt.zero_grad()
                loss.backward()
                opt.step()
    # https://github.com/DulyHao/AlphaForge/issues/13
    """,
    """
    def train(dataloader, model, loss_fn, optimizer):
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/pytorch/tutorials/issues/2799
    """,
]
