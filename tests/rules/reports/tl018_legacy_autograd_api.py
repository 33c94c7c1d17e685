"""TL018's cases from public reports: code written for PyTorch 0.3 that indexes a 0-dim loss
(``loss.data[0]``) or passes ``volatile=True``; and the fixes and shapes that look like them."""

BUGS = [
    """
    def train_epoch(model, loader, criterion, optimizer):
        for frames, captions in loader:
            optimizer.zero_grad()
            loss = criterion(model(frames, captions), captions)
            loss.backward()
            optimizer.step()
            train_loss = loss.data[0]
            print(train_loss)
    # https://github.com/Sundrops/video-caption.pytorch/issues/5
    """,
    """
    import torch.nn as nn
    criterion = nn.MSELoss()
    def step(encoder, decoder, optimizer, batch):
        loss = criterion(decoder(encoder(batch)), batch)
        loss.backward()
        optimizer.step()
        return loss.data[0]
    # https://github.com/chaoyuaw/pytorch-vcii/pull/5
    """,
    """
    import torch.nn as nn
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(10):
        y = net(x)
        loss = loss_fn(y, labels)
        loss.backward()
        optimizer.step()
        loss_train = loss.data[0]
    # https://github.com/xbresson/spectral_graph_convnets/issues/6
    """,
    """
    import torch.nn as nn
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.loss = nn.CrossEntropyLoss()

        def train_one_step(self, logits, label, optimizer):
            loss = self.loss(logits, label)
            loss.backward()
            optimizer.step()
            return loss.data[0]
    # https://github.com/ShulinCao/OpenNRE-PyTorch/issues/11
    """,
    """
    import torch.nn.functional as F
    def fit_batch(model, optimizer, inputs, targets):
        optimizer.zero_grad()
        loss = F.nll_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.data[0]
    # https://github.com/nitrain/nitrain/pull/118
    """,
    """
    train_loss = []
    for batch_id, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        adam.zero_grad()
        loss.backward()
        adam.step()
        train_loss.append(loss.data[0])
    # https://github.com/higgsfield/np-hard-deep-reinforcement-learning/issues/5
    """,
    """
    import torch.nn.functional as F
    def train(model, loader, optimizer):
        for data, target in loader:
            output = model(data)
            loss = F.cross_entropy(output, target) + model.regularization()
            loss.backward()
            optimizer.step()
            print("loss: {:.4f}".format(loss.data[0]))
    # https://github.com/AMLab-Amsterdam/L0_regularization/issues/4
    """,
    """
    import torch.nn as nn
    criterion = nn.CrossEntropyLoss()
    for i, (images, labels) in enumerate(train_loader):
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        print('Iter [%d] Loss: %.4f' % (i + 1, loss.data[0]))
    # https://github.com/YirongMao/softmax_variants/issues/5
    """,
    """
    import torch.nn as nn
    criterion = nn.MarginRankingLoss(margin=0.2)
    def train(tnet, loader, optimizer, losses):
        for data1, data2, data3 in loader:
            dista, distb, target = tnet(data1, data2, data3)
            loss_triplet = criterion(dista, distb, target)
            loss_triplet.backward()
            optimizer.step()
            losses.update(loss_triplet.data[0], data1.size(0))
    # https://github.com/andreasveit/triplet-network-pytorch/issues/8
    """,
    """
    import torch
    def train(model, loader, optimizer):
        for data_a, data_p in loader:
            out_a, out_p = model(data_a), model(data_p)
            loss = torch.mean(torch.clamp(1.0 + (out_a - out_p).pow(2).sum(1), min=0.0))
            loss.backward()
            optimizer.step()
            print(loss.data[0])
    # https://github.com/DagnyT/hardnet/issues/40
    """,
    """
    import torch
    from torch.autograd import Variable
    def encode(model, sentences, bsize):
        embeddings = []
        for stidx in range(0, len(sentences), bsize):
            batch = Variable(torch.FloatTensor(sentences[stidx:stidx + bsize]), volatile=True)
            embeddings.append(model(batch))
        return embeddings
    # https://github.com/facebookresearch/InferSent/issues/87
    """,
    """
    from torch.autograd import Variable
    def test(net, testloader):
        for inputs, targets in testloader:
            inputs, targets = Variable(inputs, volatile=True), Variable(targets)
            outputs = net(inputs)
    # https://github.com/WuJie1010/Facial-Expression-Recognition.Pytorch/issues/87
    """,
    """
    import torch as t
    def predict(self, img):
        img = t.autograd.Variable(img.float()[None], volatile=True)
        return self(img)
    # https://github.com/chenyuntc/simple-faster-rcnn-pytorch/issues/43
    """,
]

LOOKALIKES = [
    """
    def train_epoch(model, loader, criterion, optimizer):
        for frames, captions in loader:
            optimizer.zero_grad()
            loss = criterion(model(frames, captions), captions)
            loss.backward()
            optimizer.step()
            train_loss = loss.item()
            print(train_loss)
    # https://github.com/Sundrops/video-caption.pytorch/issues/5
    """,
    """
    import torch.nn as nn
    criterion = nn.MSELoss()
    def step(encoder, decoder, optimizer, batch):
        loss = criterion(decoder(encoder(batch)), batch)
        loss.backward()
        optimizer.step()
        return loss.item()
    # https://github.com/chaoyuaw/pytorch-vcii/pull/5
    """,
    """
    import torch.nn.functional as F
    def fit_batch(model, optimizer, inputs, targets):
        optimizer.zero_grad()
        loss = F.nll_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.data.item()
    # https://github.com/nitrain/nitrain/pull/118
    """,
    """
    import torch.nn as nn
    criterion = nn.MarginRankingLoss(margin=0.2)
    def train(tnet, loader, optimizer, losses):
        for data1, data2, data3 in loader:
            dista, distb, target = tnet(data1, data2, data3)
            loss_triplet = criterion(dista, distb, target)
            loss_triplet.backward()
            optimizer.step()
            losses.update(loss_triplet.data, data1.size(0))
    # https://github.com/andreasveit/triplet-network-pytorch/issues/8
    """,
    """
    import torch
    def test(net, testloader):
        with torch.no_grad():
            for inputs, targets in testloader:
                outputs = net(inputs)
    # https://github.com/WuJie1010/Facial-Expression-Recognition.Pytorch/issues/87
    """,
    """
    import torch
    def encode(model, sentences, bsize):
        embeddings = []
        with torch.no_grad():
            for stidx in range(0, len(sentences), bsize):
                embeddings.append(model(torch.FloatTensor(sentences[stidx:stidx + bsize])))
        return embeddings
    # https://github.com/facebookresearch/InferSent/issues/87
    """,
    """
    def accuracy(output, target, topk=(1,)):
        _, pred = output.topk(max(topk), 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]

    prec1 = accuracy(output, target)[0]
    print(prec1.item())
    # https://github.com/pytorch/pytorch/issues/15585
    """,
    """
    def finish_episode(policy, rewards, saved_actions):
        for (log_prob, value), r in zip(saved_actions, rewards):
            reward = r - value.data[0]
            policy.loss_terms.append(-log_prob * reward)
    # https://github.com/higgsfield/np-hard-deep-reinforcement-learning/issues/5
    """,
    """
    from torchvision import datasets
    mnist_train = datasets.MNIST("data", train=True, download=True)
    image = mnist_train.data[0].numpy()
    label = mnist_train.targets[0]
    # https://github.com/xbresson/spectral_graph_convnets/issues/6
    """,
    """
    import torch.nn as nn
    criterion = nn.CrossEntropyLoss(reduction="none")
    def hardest(model, images, labels):
        losses = criterion(model(images), labels)
        order = losses.argsort(descending=True)
        return losses[order][0]
    # https://github.com/YirongMao/softmax_variants/issues/5
    """,
    """
    import torch
    def predict(self, img):
        with torch.no_grad():
            img = img.float()[None]
            return self(img)
    # https://github.com/chenyuntc/simple-faster-rcnn-pytorch/issues/43
    """,
]
