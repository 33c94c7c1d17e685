"""TL011 model-mode: cases adapted from public reports (see ``tests/rules/reports``)."""

BUGS = [
    # Point-cloud classifier with BatchNorm and Dropout; the test loop never calls eval().
    """
    import torch
    import torch.nn as nn

    class PointNetCls(nn.Module):
        def __init__(self, k=40):
            super().__init__()
            self.fc1 = nn.Linear(1024, 512)
            self.bn1 = nn.BatchNorm1d(512)
            self.drop = nn.Dropout(0.4)
            self.fc2 = nn.Linear(512, k)

        def forward(self, x):
            return self.fc2(self.drop(torch.relu(self.bn1(self.fc1(x)))))

    def test(model, loader):
        correct = 0
        for points, target in loader:
            pred = model(points).argmax(1)
            correct += (pred == target).sum().item()
        return correct

    model = PointNetCls()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(200):
        model.train()
        for points, target in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(points), target).backward()
            optimizer.step()
        acc = test(model, test_loader)
    # https://github.com/yanx27/GACNet/issues/8
    """,
    # Validation every val_step inside the step loop switches to eval; train() only at the next epoch.
    """
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2048, 1024)
            self.bn = nn.BatchNorm1d(1024)
            self.drop = nn.Dropout(0.2)

        def forward(self, x):
            return self.drop(self.bn(self.fc(x)))

    def validate(model, val_loader):
        model.eval()
        with torch.no_grad():
            return sum(model(x).norm().item() for x, _ in val_loader)

    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters())
    iters = 0
    for epoch in range(30):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
            iters += 1
            if iters % 500 == 0:
                validate(model, val_loader)
    # https://github.com/fartashf/vsepp/issues/4
    """,
    # A trainer class whose validate() forgets self.model.eval() (the model has dropout).
    """
    import torch
    import torch.nn as nn

    class UNet3D(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3d(1, 8, 3, padding=1)
            self.drop = nn.Dropout3d(0.1)
            self.out = nn.Conv3d(8, 2, 1)

        def forward(self, x):
            return self.out(self.drop(torch.relu(self.conv(x))))

    class Trainer:
        def __init__(self, loaders):
            self.model = UNet3D()
            self.optimizer = torch.optim.Adam(self.model.parameters())
            self.loaders = loaders

        def train(self, epochs):
            for epoch in range(epochs):
                self.model.train()
                for x, y in self.loaders["train"]:
                    self.optimizer.zero_grad()
                    nn.functional.cross_entropy(self.model(x), y).backward()
                    self.optimizer.step()
                self.validate()

        def validate(self):
            losses = []
            with torch.no_grad():
                for x, y in self.loaders["val"]:
                    losses.append(nn.functional.cross_entropy(self.model(x), y).item())
            return sum(losses) / len(losses)
    # https://github.com/wolny/pytorch-3dunet/issues/53
    """,
    # Hyperspectral classification: val() runs the network with its dropout on.
    """
    import torch
    import torch.nn as nn

    class HuEtAl(nn.Module):
        def __init__(self, bands, classes):
            super().__init__()
            self.conv = nn.Conv1d(1, 20, 11)
            self.fc1 = nn.Linear(20 * (bands - 10), 100)
            self.drop = nn.Dropout(0.5)
            self.fc2 = nn.Linear(100, classes)

        def forward(self, x):
            x = torch.tanh(self.conv(x)).flatten(1)
            return self.fc2(self.drop(torch.tanh(self.fc1(x))))

    def val(net, data_loader):
        accuracy, total = 0.0, 0
        for data, target in data_loader:
            output = net(data)
            accuracy += (output.argmax(1) == target).sum().item()
            total += target.numel()
        return accuracy / total

    def train(net, optimizer, criterion, data_loader, val_loader, epochs):
        for e in range(epochs):
            net.train()
            for data, target in data_loader:
                optimizer.zero_grad()
                criterion(net(data), target).backward()
                optimizer.step()
            val_acc = val(net, val_loader)

    net = HuEtAl(200, 16)
    train(net, torch.optim.SGD(net.parameters(), lr=0.01), nn.CrossEntropyLoss(), train_loader, val_loader, 100)
    # https://github.com/nshaud/DeepHyperX/issues/51
    """,
    # The test accuracy computed during training has no model.eval(): batch norm uses test batches.
    """
    import torch
    import torch.nn as nn
    import torchvision

    def get_test_accuracy(model, loader):
        correct, total = 0, 0
        with torch.no_grad():
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
                total += y.size(0)
        return correct / total

    model = torchvision.models.densenet121(num_classes=2)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(25):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(get_test_accuracy(model, test_loader))
    # https://github.com/microsoft/robustdg/issues/30
    """,
    # Validation in the middle of an epoch sets eval mode and nothing brings training mode back.
    """
    import torch
    import torch.nn as nn

    class FCN8s(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 3, padding=1)
            self.drop = nn.Dropout2d()
            self.score = nn.Conv2d(64, 21, 1)

        def forward(self, x):
            return self.score(self.drop(torch.relu(self.conv(x))))

    class Trainer:
        def __init__(self, model, optimizer, train_loader, val_loader, interval):
            self.model, self.optim = model, optimizer
            self.train_loader, self.val_loader, self.interval = train_loader, val_loader, interval
            self.iteration = 0

        def validate(self):
            self.model.eval()
            with torch.no_grad():
                for x, t in self.val_loader:
                    self.model(x)

        def train_epoch(self):
            self.model.train()
            for x, t in self.train_loader:
                if self.iteration % self.interval == 0:
                    self.validate()
                self.optim.zero_grad()
                nn.functional.cross_entropy(self.model(x), t).backward()
                self.optim.step()
                self.iteration += 1

    model = FCN8s()
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=1e-10), train_loader, val_loader, 4000)
    for epoch in range(10):
        trainer.train_epoch()
    # https://github.com/wkentaro/pytorch-fcn/pull/56
    """,
    # An OCR fine-tuning loop whose validate() runs the transformer with dropout on.
    """
    import torch
    import torch.nn as nn

    class OCRModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 8, dropout=0.1), 4)
            self.head = nn.Linear(256, 100)

        def forward(self, x):
            return self.head(self.encoder(x))

    def validate(model, loader):
        total = 0.0
        with torch.no_grad():
            for batch, labels in loader:
                total += nn.functional.cross_entropy(model(batch).flatten(0, 1), labels.flatten()).item()
        return total

    def train(model, loader, val_loader, epochs):
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
        for epoch in range(epochs):
            model.train()
            for batch, labels in loader:
                loss = nn.functional.cross_entropy(model(batch).flatten(0, 1), labels.flatten())
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            print(validate(model, val_loader))

    train(OCRModel(), train_loader, val_loader, 8)
    # https://github.com/rsommerfeld/trocr/issues/9
    """,
    # An MLP with dropout validated every epoch without eval() (course notebook).
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(28 * 28, 512)
            self.fc2 = nn.Linear(512, 10)
            self.dropout = nn.Dropout(0.2)

        def forward(self, x):
            x = self.dropout(F.relu(self.fc1(x.view(-1, 28 * 28))))
            return self.fc2(x)

    model = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(50):
        train_loss, valid_loss = 0.0, 0.0
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        for data, target in valid_loader:
            valid_loss += criterion(model(data), target).item()
    # https://github.com/udacity/deep-learning-v2-pytorch/issues/3
    """,
    # A seq2seq evaluator that runs the model over the data with its dropout on.
    """
    import torch
    import torch.nn as nn

    class Seq2seq(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embedding = nn.Embedding(vocab, hidden)
            self.rnn = nn.LSTM(hidden, hidden, num_layers=2, dropout=0.25)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, src):
            output, _ = self.rnn(self.embedding(src))
            return self.out(output)

    class Evaluator:
        def __init__(self, loss):
            self.loss = loss

        def evaluate(self, model, data):
            total = 0.0
            with torch.no_grad():
                for src, tgt in data:
                    total += self.loss(model(src).flatten(0, 1), tgt.flatten()).item()
            return total

    model = Seq2seq(1000, 256)
    optimizer = torch.optim.Adam(model.parameters())
    evaluator = Evaluator(nn.CrossEntropyLoss())
    for epoch in range(10):
        model.train()
        for src, tgt in train_data:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(src).flatten(0, 1), tgt.flatten()).backward()
            optimizer.step()
        print(evaluator.evaluate(model, dev_data))
    # https://github.com/IBM/pytorch-seq2seq/issues/33
    """,
    # No model.eval() anywhere: the loss estimate under inference_mode runs with dropout on.
    """
    import torch
    import torch.nn as nn

    class Transformer(nn.Module):
        def __init__(self, vocab=512, d=128):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.drop = nn.Dropout(0.1)
            self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, batch_first=True), 2)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx, targets):
            logits = self.head(self.blocks(self.drop(self.emb(idx))))
            return logits, nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    model = Transformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)

    @torch.inference_mode()
    def estimate_loss(eval_iters=20):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch("val")
            _, loss = model(X, Y)
            losses[k] = loss.item()
        return losses.mean()

    for it in range(10000):
        if it % 1000 == 0:
            print(estimate_loss())
        X, Y = get_batch("train")
        _, loss = model(X, Y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/ipolharvard/ethos-ares/issues/20
    """,
    # A tracker's test script runs the regression network with nn.Dropout still active.
    """
    import torch
    import torch.nn as nn

    class GoNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.classifier = nn.Sequential(
                nn.Linear(256 * 6 * 6 * 2, 4096), nn.ReLU(inplace=True), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(),
                nn.Linear(4096, 4))

        def forward(self, x, y):
            return self.classifier(torch.cat((x.flatten(1), y.flatten(1)), 1))

    model = GoNet()
    model.load_state_dict(torch.load("model.pth", weights_only=True))
    with torch.no_grad():
        for prev, curr in test_loader:
            box = model(prev, curr)
            print(box)
    # https://github.com/amoudgl/pygoturn/issues/14
    """,
    # Speech recognition: the test pass runs the network without eval().
    """
    import torch
    import torch.nn as nn

    class DeepSpeech(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 32, (41, 11), stride=(2, 2)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20))
            self.rnn = nn.GRU(32 * 41, 400, num_layers=3)
            self.fc = nn.Linear(400, 29)

        def forward(self, x):
            x = self.conv(x).flatten(1, 2).permute(2, 0, 1)
            return self.fc(self.rnn(x)[0])

    model = DeepSpeech()
    optimizer = torch.optim.SGD(model.parameters(), lr=3e-4)
    for epoch in range(70):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            criterion(model(inputs), targets).backward()
            optimizer.step()
        total_wer = 0.0
        for inputs, targets in test_loader:
            total_wer += wer(model(inputs), targets)
    # https://github.com/SeanNaren/deepspeech.pytorch/pull/22
    """,
]

LOOKALIKES = [
    # A U-Net with neither dropout nor batch norm: validating under no_grad alone changes nothing.
    """
    import torch
    import torch.nn as nn

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU())
            self.out = nn.Conv2d(64, 2, 1)

        def forward(self, x):
            return self.out(self.down(x))

    def validate_model(model, data_val, criterion):
        total = 0.0
        with torch.no_grad():
            for images, masks in data_val:
                total += criterion(model(images), masks).item()
        return total

    model = UNet()
    optimizer = torch.optim.Adam(model.parameters())
    criterion = nn.CrossEntropyLoss()
    for epoch in range(100):
        for images, masks in train_loader:
            optimizer.zero_grad()
            criterion(model(images), masks).backward()
            optimizer.step()
        validate_model(model, val_loader, criterion)
    # https://github.com/ugent-korea/pytorch-unet-segmentation/issues/18
    """,
    # A recurrent model with no dropout or batch norm: eval() without train() again changes nothing.
    """
    import torch
    import torch.nn as nn

    class coRNN(nn.Module):
        def __init__(self, n_inp, n_hid, n_out):
            super().__init__()
            self.i2h = nn.Linear(n_inp + n_hid + n_hid, n_hid)
            self.h2o = nn.Linear(n_hid, n_out)

        def forward(self, x):
            hy = hz = torch.zeros(x.size(1), self.h2o.in_features)
            for t in range(x.size(0)):
                hz = hz + 0.042 * (torch.tanh(self.i2h(torch.cat((x[t], hz, hy), 1))) - hy)
                hy = hy + 0.042 * hz
            return self.h2o(hy)

    model = coRNN(2, 128, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0021)

    def test():
        model.eval()
        with torch.no_grad():
            data, label = get_batch(1000)
            return nn.functional.mse_loss(model(data), label).item()

    for i in range(100000):
        data, label = get_batch(50)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(data), label).backward()
        optimizer.step()
        if i % 100 == 0:
            print(test())
    # https://github.com/tk-rusch/coRNN/issues/1
    """,
    # The quick-start tutorial: test() calls eval() and train() never comes back, but the
    # network is Linear and ReLU only.
    """
    import torch
    from torch import nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    def train(dataloader, model, loss_fn, optimizer):
        for X, y in dataloader:
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    def test(dataloader, model, loss_fn):
        model.eval()
        with torch.no_grad():
            return sum(loss_fn(model(X), y).item() for X, y in dataloader)

    model = NeuralNetwork()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for t in range(5):
        train(train_dataloader, model, loss_fn, optimizer)
        test(test_dataloader, model, loss_fn)
    # https://github.com/pytorch/tutorials/issues/1624
    """,
    # val() puts the model in eval mode and back in training mode before returning.
    """
    import torch
    import torch.nn as nn
    import torchvision

    def val(model, dataloader):
        model.eval()
        correct = 0
        with torch.no_grad():
            for data, label in dataloader:
                correct += (model(data).argmax(1) == label).sum().item()
        model.train()
        return correct

    model = torchvision.models.resnet34(num_classes=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    model.train()
    for epoch in range(10):
        for data, label in train_dataloader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(data), label).backward()
            optimizer.step()
        val(model, val_dataloader)
    # https://github.com/chenyuntc/pytorch-best-practice/issues/7
    """,
    # The fixed point-cloud test: eval() before the test loop, train() at each epoch.
    """
    import torch
    import torch.nn as nn

    class PointNetCls(nn.Module):
        def __init__(self, k=40):
            super().__init__()
            self.fc1 = nn.Linear(1024, 512)
            self.bn1 = nn.BatchNorm1d(512)
            self.drop = nn.Dropout(0.4)
            self.fc2 = nn.Linear(512, k)

        def forward(self, x):
            return self.fc2(self.drop(torch.relu(self.bn1(self.fc1(x)))))

    def test(model, loader):
        model.eval()
        correct = 0
        with torch.no_grad():
            for points, target in loader:
                correct += (model(points).argmax(1) == target).sum().item()
        return correct

    model = PointNetCls()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(200):
        model.train()
        for points, target in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(points), target).backward()
            optimizer.step()
        acc = test(model, test_loader)
    # https://github.com/yanx27/GACNet/issues/8
    """,
    # The fixed mid-epoch validation: training mode restored right after validate().
    """
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2048, 1024)
            self.bn = nn.BatchNorm1d(1024)
            self.drop = nn.Dropout(0.2)

        def forward(self, x):
            return self.drop(self.bn(self.fc(x)))

    def validate(model, val_loader):
        model.eval()
        with torch.no_grad():
            return sum(model(x).norm().item() for x, _ in val_loader)

    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters())
    iters = 0
    for epoch in range(30):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
            iters += 1
            if iters % 500 == 0:
                validate(model, val_loader)
                model.train()
    # https://github.com/fartashf/vsepp/issues/4
    """,
    # The fixed FCN trainer: validate() returns the model to training mode.
    """
    import torch
    import torch.nn as nn

    class FCN8s(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 3, padding=1)
            self.drop = nn.Dropout2d()
            self.score = nn.Conv2d(64, 21, 1)

        def forward(self, x):
            return self.score(self.drop(torch.relu(self.conv(x))))

    class Trainer:
        def __init__(self, model, optimizer, train_loader, val_loader, interval):
            self.model, self.optim = model, optimizer
            self.train_loader, self.val_loader, self.interval = train_loader, val_loader, interval
            self.iteration = 0

        def validate(self):
            training = self.model.training
            self.model.eval()
            with torch.no_grad():
                for x, t in self.val_loader:
                    self.model(x)
            if training:
                self.model.train()

        def train_epoch(self):
            self.model.train()
            for x, t in self.train_loader:
                if self.iteration % self.interval == 0:
                    self.validate()
                self.optim.zero_grad()
                nn.functional.cross_entropy(self.model(x), t).backward()
                self.optim.step()
                self.iteration += 1

    model = FCN8s()
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=1e-10), train_loader, val_loader, 4000)
    for epoch in range(10):
        trainer.train_epoch()
    # https://github.com/wkentaro/pytorch-fcn/pull/56
    """,
    # The fixed OCR validate(): eval() first.
    """
    import torch
    import torch.nn as nn

    class OCRModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 8, dropout=0.1), 4)
            self.head = nn.Linear(256, 100)

        def forward(self, x):
            return self.head(self.encoder(x))

    def validate(model, loader):
        model.eval()
        total = 0.0
        with torch.no_grad():
            for batch, labels in loader:
                total += nn.functional.cross_entropy(model(batch).flatten(0, 1), labels.flatten()).item()
        return total

    def train(model, loader, val_loader, epochs):
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
        for epoch in range(epochs):
            model.train()
            for batch, labels in loader:
                loss = nn.functional.cross_entropy(model(batch).flatten(0, 1), labels.flatten())
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            print(validate(model, val_loader))

    train(OCRModel(), train_loader, val_loader, 8)
    # https://github.com/rsommerfeld/trocr/issues/9
    """,
    # The fixed course notebook: train() and eval() around each phase.
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(28 * 28, 512)
            self.fc2 = nn.Linear(512, 10)
            self.dropout = nn.Dropout(0.2)

        def forward(self, x):
            x = self.dropout(F.relu(self.fc1(x.view(-1, 28 * 28))))
            return self.fc2(x)

    model = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(50):
        train_loss, valid_loss = 0.0, 0.0
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        model.eval()
        for data, target in valid_loader:
            valid_loss += criterion(model(data), target).item()
    # https://github.com/udacity/deep-learning-v2-pytorch/issues/3
    """,
    # The validation that was fixed by dropping its stray model.train(): eval() only.
    """
    import torch
    import torch.nn as nn

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(64, 32)
            self.drop = nn.Dropout(0.1)
            self.head = nn.Linear(32, 2)

        def forward(self, x):
            return self.head(self.drop(torch.relu(self.fc(x))))

    model = Fusion()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(20):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            for x, y in valid_loader:
                pred = model(x).argmax(1)
    # https://github.com/pliang279/MultiBench/issues/26
    """,
    # The fixed loss estimate: eval() before, train() after.
    """
    import torch
    import torch.nn as nn

    class Transformer(nn.Module):
        def __init__(self, vocab=512, d=128):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.drop = nn.Dropout(0.1)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx, targets):
            logits = self.head(self.drop(self.emb(idx)))
            return logits, nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    model = Transformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)

    @torch.inference_mode()
    def estimate_loss(eval_iters=20):
        model.eval()
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch("val")
            _, loss = model(X, Y)
            losses[k] = loss.item()
        model.train()
        return losses.mean()

    for it in range(10000):
        if it % 1000 == 0:
            print(estimate_loss())
        X, Y = get_batch("train")
        _, loss = model(X, Y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/ipolharvard/ethos-ares/issues/20
    """,
    # The fixed tracker test: eval() after loading the weights.
    """
    import torch
    import torch.nn as nn

    class GoNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.classifier = nn.Sequential(
                nn.Linear(256 * 6 * 6 * 2, 4096), nn.ReLU(inplace=True), nn.Dropout(),
                nn.Linear(4096, 4))

        def forward(self, x, y):
            return self.classifier(torch.cat((x.flatten(1), y.flatten(1)), 1))

    model = GoNet()
    model.load_state_dict(torch.load("model.pth", weights_only=True))
    model.eval()
    with torch.no_grad():
        for prev, curr in test_loader:
            print(model(prev, curr))
    # https://github.com/amoudgl/pygoturn/issues/14
    """,
]
