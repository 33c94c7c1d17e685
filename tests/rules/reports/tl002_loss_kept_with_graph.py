"""TL002's cases adapted from public reports: a loss or model output kept with its autograd
graph across iterations (``BUGS``), and the fixed or similar code that keeps numbers or
detached tensors (``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

from tests.rules.reports import Report

BUGS = [
    # running_loss sums loss tensors over the epoch (the FAQ's total_loss += loss)
    """
    import torch

    def fit(model, loader, optimizer, criterion, epochs):
        for epoch in range(epochs):
            running_loss = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                running_loss += loss
            print(epoch, running_loss / len(loader))
    # https://github.com/BatsResearch/labelmodels/issues/4
    """,
    """
    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters())
    total_loss = 0
    for i in range(10000):
        opt.zero_grad()
        output = net(torch.randn(16, 8))
        loss = (output ** 2).mean()
        loss.backward()
        opt.step()
        total_loss += loss
    # https://github.com/google/brax/pull/152
    """,
    # each step's loss appended to a history list
    """
    import torch

    def reconstruct(cores, target, steps=1000):
        optimizer = torch.optim.Adam(cores, lr=1e-2)
        loss_history = []
        for step in range(steps):
            optimizer.zero_grad()
            approx = cores[0] @ cores[1]
            loss = torch.norm(approx - target)
            loss.backward()
            optimizer.step()
            loss_history.append(loss)
        return loss_history
    # https://github.com/rballester/tntorch/pull/19
    """,
    # the model's output dict (holding the loss) appended to the epoch's outputs
    """
    import torch

    class Trainer:
        def train_epoch(self, model, dataloader, optimizer):
            outputs = []
            for batch in dataloader:
                optimizer.zero_grad()
                output = model(batch)
                output["loss"].backward()
                optimizer.step()
                outputs.append(output)
            return outputs
    # https://github.com/TRI-ML/packnet-sfm/issues/47
    """,
    # several losses summed with += in the training loop
    """
    import torch
    import torch.nn.functional as F

    def train(model, loader, optimizer):
        model.train()
        running_loss = running_mse = running_ce = 0.0
        for images, depth, labels in loader:
            optimizer.zero_grad()
            pred_depth, logits = model(images)
            mse = F.mse_loss(pred_depth, depth)
            ce = F.cross_entropy(logits, labels)
            loss = mse + ce
            loss.backward()
            optimizer.step()
            running_loss += loss
            running_mse += mse
            running_ce += ce
        return running_loss / len(loader)
    # https://github.com/samuelyu2002/ImVisible/issues/2
    """,
    """
    import torch

    def fit_one_epoch(net, yolo_loss, optimizer, gen, epoch_size):
        total_loss = 0
        for iteration, (images, targets) in enumerate(gen):
            if iteration >= epoch_size:
                break
            optimizer.zero_grad()
            outputs = net(images)
            loss = yolo_loss(outputs, targets)
            loss.backward()
            optimizer.step()
            total_loss += loss
        return total_loss / epoch_size
    # https://github.com/bubbliiiing/yolo3-pytorch/issues/3
    """,
    # a Hugging Face model's output.loss summed over the epoch
    """
    import torch

    def train(model, train_loader, optimizer, scheduler):
        model.train()
        train_loss = 0
        for batch in train_loader:
            output = model(input_ids=batch["input_ids"], labels=batch["labels"])
            output.loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            train_loss += output.loss
        return train_loss / len(train_loader)
    # https://github.com/pai4451/ML2021/issues/2
    """,
    """
    import torch

    def training_function(model, train_dataloader, optimizer, accelerator):
        for epoch in range(3):
            loss_sum = torch.tensor(0.0)
            for step, batch in enumerate(train_dataloader):
                outputs = model(**batch)
                loss = outputs.loss
                loss_sum += loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            print(epoch, loss_sum / (step + 1))
    # https://github.com/ray-project/ray/pull/40940
    """,
    # a Trainer's running tr_loss
    """
    import torch

    class Trainer:
        def train(self, model, epoch_iterator, optimizer):
            tr_loss = 0.0
            for step, inputs in enumerate(epoch_iterator):
                model.train()
                outputs = model(**inputs)
                loss = outputs[0]
                loss.backward()
                tr_loss += loss
                optimizer.step()
                model.zero_grad()
            return tr_loss / (step + 1)
    # https://github.com/huggingface/transformers/pull/6999
    """,
    # an AverageMeter fed the loss tensor: update() keeps self.sum += val * n
    """
    import torch

    class AverageMeter:
        def __init__(self):
            self.reset()

        def reset(self):
            self.val = 0
            self.avg = 0
            self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.val = val
            self.sum += val * n
            self.count += n
            self.avg = self.sum / self.count

    def train_one_epoch(model, criterion, train_loader, optimizer):
        loss_meter = AverageMeter()
        for images, targets in train_loader:
            out = model(images)
            out_criterion = criterion(out, targets)
            optimizer.zero_grad()
            out_criterion["loss"].backward()
            optimizer.step()
            loss_meter.update(out_criterion["loss"])
        return loss_meter.avg
    # https://github.com/lyq133/LIC-HPCM/issues/4
    """,
    # the meter in another file of the project
    Report(files={
        "utils.py": """
            class AverageMeter(object):
                def __init__(self):
                    self.val = self.avg = self.sum = self.count = 0

                def update(self, val, n=1):
                    self.val = val
                    self.sum += val * n
                    self.count += n
                    self.avg = self.sum / self.count
            """,
        "train.py": """
            import torch
            from utils import AverageMeter

            def train(train_loader, model, criterion, optimizer):
                losses = AverageMeter()
                model.train()
                for i, (input, target) in enumerate(train_loader):
                    output = model(input)
                    loss = criterion(output, target)
                    losses.update(loss, input.size(0))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                return losses.avg
            # https://github.com/rabbityl/lepard/issues/12
            """,
    }),
    # a trainer's statistics: self.stats[name].update(val) with the loss tensor
    """
    import torch

    class AverageMeter:
        def __init__(self):
            self.sum, self.count = 0, 0

        def update(self, val, n=1):
            self.sum += val * n
            self.count += n

    class LTRTrainer:
        def __init__(self, actor, loader, optimizer):
            self.actor, self.loader, self.optimizer = actor, loader, optimizer
            self.stats = {"loss": AverageMeter()}

        def cycle_dataset(self):
            for data in self.loader:
                loss = self.actor(data)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.stats["loss"].update(loss, data.size(0))
    # https://github.com/visionml/pytracking/pull/313
    """,
    # the model's predictions kept every batch of training
    """
    import torch
    import torch.nn as nn

    def train(model, loader, optimizer, epochs):
        criterion = nn.CrossEntropyLoss()
        all_preds = []
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                logits = model(x)
                loss = criterion(logits, y)
                loss.backward()
                optimizer.step()
                all_preds.append(logits)
        return torch.cat(all_preds)
    # https://github.com/sktime/pytorch-forecasting/pull/1924
    """,
    # samples generated every epoch from a fixed noise, kept with the generator's graph
    """
    import torch

    def train_gan(netG, netD, dataloader, optimizerG, optimizerD, criterion, epochs):
        fixed_noise = torch.randn(64, 100, 1, 1)
        img_list = []
        for epoch in range(epochs):
            for real, _ in dataloader:
                optimizerD.zero_grad()
                fake = netG(torch.randn(real.size(0), 100, 1, 1))
                lossD = criterion(netD(real), torch.ones(real.size(0))) + \\
                    criterion(netD(fake.detach()), torch.zeros(real.size(0)))
                lossD.backward()
                optimizerD.step()
                optimizerG.zero_grad()
                lossG = criterion(netD(fake), torch.ones(real.size(0)))
                lossG.backward()
                optimizerG.step()
            img_list.append(netG(fixed_noise))
        return img_list
    # https://github.com/akanimax/msg-gan-v1/issues/2
    """,
    # a distributed average metric whose update() sums the all-reduced loss tensor
    """
    import torch
    import horovod.torch as hvd

    class Metric(object):
        def __init__(self, name):
            self.name = name
            self.sum = torch.tensor(0.)
            self.n = torch.tensor(0.)

        def update(self, val):
            self.sum += hvd.allreduce(val.cpu(), name=self.name)
            self.n += 1

    def train(model, train_loader, optimizer, epoch):
        model.train()
        train_loss = Metric("train_loss")
        for data, target in train_loader:
            optimizer.zero_grad()
            output = model(data)
            loss = torch.nn.functional.cross_entropy(output, target)
            train_loss.update(loss)
            loss.backward()
            optimizer.step()
        return train_loss.sum / train_loss.n
    # https://github.com/horovod/horovod/pull/641
    """,
]

LOOKALIKES = [
    # the fix: .item()
    """
    import torch

    def fit(model, loader, optimizer, criterion, epochs):
        for epoch in range(epochs):
            running_loss = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            print(epoch, running_loss / len(loader))
    # https://github.com/BatsResearch/labelmodels/issues/4
    """,
    # float(loss), as the FAQ says
    """
    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters())
    total_loss = 0
    for i in range(10000):
        opt.zero_grad()
        output = net(torch.randn(16, 8))
        loss = (output ** 2).mean()
        loss.backward()
        opt.step()
        total_loss += float(loss)
    # https://github.com/google/brax/pull/152
    """,
    # an RNN's loss summed over the time steps of one sequence, then backward-ed
    """
    import torch

    def train(decoder, decoder_optimizer, criterion, inp, target, chunk_len):
        hidden = decoder.init_hidden()
        decoder.zero_grad()
        loss = 0
        for c in range(chunk_len):
            output, hidden = decoder(inp[c], hidden)
            loss += criterion(output, target[c])
        loss.backward()
        decoder_optimizer.step()
        return loss.item() / chunk_len
    # https://github.com/spro/practical-pytorch/pull/29
    """,
    # the fixed logger: a detached slice, moved to the CPU
    """
    import torch

    def train(model, loader, optimizer, criterion, logs):
        for x in loader:
            optimizer.zero_grad()
            z, x_hat = model(x)
            loss = criterion(x, x_hat, z)
            loss.backward()
            optimizer.step()
            logs["z"].append(z.detach().cpu()[::10])
            logs["loss"].append(loss.item())
    # https://github.com/KempnerInstitute/overcomplete/issues/5
    """,
    # inference: predictions collected as numpy arrays under no_grad
    """
    import torch
    import torchvision

    model = torchvision.models.resnet50()
    model.eval()
    result = []
    with torch.no_grad():
        for inputs in torch.utils.data.DataLoader(torch.randn(64, 3, 224, 224), batch_size=8):
            output = model(inputs)
            result.append(output.cpu().numpy())
    # https://github.com/pytorch/pytorch/issues/13613
    """,
    # per-loss totals kept as floats
    """
    from collections import defaultdict

    import torch

    def train_one_epoch(model, loss_fn, dataloader, optimizer):
        total_loss = defaultdict(float)
        for images, targets in dataloader:
            optimizer.zero_grad()
            loss, loss_items = loss_fn(model(images), targets)
            loss.backward()
            optimizer.step()
            for loss_name, loss_val in loss_items.items():
                total_loss[loss_name] += loss_val.item() * images.size(0)
        return total_loss
    # https://github.com/MultimediaTechLab/YOLO/pull/83
    """,
    # the loss detached before it is summed
    """
    import torch

    def train(model, train_loader, optimizer):
        model.train()
        train_loss = 0
        for batch in train_loader:
            output = model(input_ids=batch["input_ids"], labels=batch["labels"])
            output.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            train_loss += output.loss.detach()
        return train_loss / len(train_loader)
    # https://github.com/pai4451/ML2021/issues/2
    """,
    # a metric computed during training under no_grad
    """
    import torch

    def loss_epoch(model, loss_func, dataset_dl, opt):
        running_loss = 0.0
        running_metric = 0.0
        for xb, yb in dataset_dl:
            output = model(xb)
            loss = loss_func(output, yb)
            with torch.no_grad():
                pred = torch.sigmoid(output)
                metric_b = (pred > 0.5).float().eq(yb).float().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            running_loss += loss.item()
            running_metric += metric_b
        return running_loss, running_metric
    # https://github.com/PacktPublishing/PyTorch-Computer-Vision-Cookbook/issues/11
    """,
    # the AverageMeter fed loss.item()
    """
    import torch

    class AverageMeter(object):
        def __init__(self):
            self.val = self.avg = self.sum = self.count = 0

        def update(self, val, n=1):
            self.val = val
            self.sum += val * n
            self.count += n
            self.avg = self.sum / self.count

    def train(train_loader, model, criterion, optimizer):
        losses = AverageMeter()
        for i, (input, target) in enumerate(train_loader):
            output = model(input)
            loss = criterion(output, target)
            losses.update(loss.item(), input.size(0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return losses.avg
    # https://github.com/pytorch/pytorch/issues/1509
    """,
    # the meter detaches what it is given
    """
    import torch

    class AverageMeter:
        def __init__(self):
            self.sum, self.count = 0.0, 0

        def update(self, val, n=1):
            if torch.is_tensor(val):
                val = val.detach().item()
            self.sum += val * n
            self.count += n

    def cycle_dataset(actor, loader, optimizer, stats):
        for data in loader:
            loss = actor(data)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            stats["loss"].update(loss, data.size(0))
    # https://github.com/visionml/pytracking/pull/313
    """,
    # the fix: each loss turned into a number before the meters get it
    """
    import torch

    def update_meter(meter_update_dict, reduced_loss_dict, report):
        for key in reduced_loss_dict:
            meter_update_dict[key] = reduced_loss_dict[key].item()
        report.update(meter_update_dict)

    def train(model, loader, optimizer, report):
        for batch in loader:
            optimizer.zero_grad()
            losses = model(batch)
            total = sum(losses.values())
            total.backward()
            optimizer.step()
            update_meter({}, losses, report)
    # https://github.com/facebookresearch/mmf/pull/560
    """,
    # the losses of several tasks summed into one total that is backward-ed
    """
    import torch

    def train(model, loader, optimizer, criteria):
        for x, targets in loader:
            optimizer.zero_grad()
            outputs = model(x)
            total = 0
            for name, criterion in criteria.items():
                total = total + criterion(outputs[name], targets[name])
            total.backward()
            optimizer.step()
    # https://github.com/pytorch/pytorch/pull/5251
    """,
    # the epoch's samples generated under no_grad and moved to the CPU
    """
    import torch

    def train_gan(netG, netD, dataloader, optimizerG, optimizerD, criterion, epochs):
        fixed_noise = torch.randn(64, 100, 1, 1)
        img_list = []
        for epoch in range(epochs):
            for real, _ in dataloader:
                optimizerG.zero_grad()
                lossG = criterion(netD(netG(torch.randn(real.size(0), 100, 1, 1))), torch.ones(real.size(0)))
                lossG.backward()
                optimizerG.step()
            with torch.no_grad():
                fake = netG(fixed_noise).detach().cpu()
            img_list.append(fake)
        return img_list
    # https://github.com/akanimax/msg-gan-v1/issues/2
    """,
    # the fixed logging output: loss.data
    """
    import torch

    def train(model, criterion, itr, optimizer):
        logging_outputs = []
        for sample in itr:
            optimizer.zero_grad()
            loss = criterion(model(sample["net_input"]), sample["target"])
            loss.backward()
            optimizer.step()
            logging_outputs.append({"loss": loss.data, "ntokens": sample["ntokens"]})
        return logging_outputs
    # https://github.com/facebookresearch/fairseq/issues/2255
    """,
]
