"""TL022's cases adapted from public reports: a loss given what it does not take -- logits (a
Linear/conv layer's raw output) to ``NLLLoss`` or ``BCELoss``, one-hot targets to
``NLLLoss``/``CrossEntropyLoss``, class indices (argmax) as a loss's input, integer labels as a
BCE target (``BUGS``); and the fixed code, or code that looks the same and is right:
``log_softmax`` with ``NLLLoss``, logits with ``CrossEntropyLoss``/``BCEWithLogitsLoss``, float
one-hot (probability) targets, argmax pseudo-labels as a target (``LOOKALIKES``). See
``tests/rules/reports/__init__.py``."""

BUGS = [
    # the NLLLoss docstring's 2-D example: a convolution's output straight into NLLLoss
    """
    import torch
    import torch.nn as nn

    N, C = 5, 4
    loss = nn.NLLLoss()
    data = torch.randn(N, 16, 10, 10)
    conv = nn.Conv2d(16, C, (3, 3))
    target = torch.empty(N, 8, 8, dtype=torch.long).random_(0, C)
    output = loss(conv(data), target)
    output.backward()
    # https://github.com/pytorch/pytorch/pull/12703
    """,
    # an FCN whose classifier is a 1x1 convolution, trained with BCELoss without a sigmoid
    """
    import torch.nn as nn
    import torch.optim as optim

    class FCNs(nn.Module):
        def __init__(self, pretrained_net, n_class):
            super().__init__()
            self.pretrained_net = pretrained_net
            self.relu = nn.ReLU(inplace=True)
            self.deconv1 = nn.ConvTranspose2d(512, 32, kernel_size=3, stride=2, padding=1, output_padding=1)
            self.bn1 = nn.BatchNorm2d(32)
            self.classifier = nn.Conv2d(32, n_class, kernel_size=1)

        def forward(self, x):
            x5 = self.pretrained_net(x)["x5"]
            score = self.bn1(self.relu(self.deconv1(x5)))
            score = self.classifier(score)
            return score

    fcn_model = FCNs(pretrained_net=vgg_model, n_class=2)
    criterion = nn.BCELoss()
    optimizer = optim.SGD(fcn_model.parameters(), lr=1e-2, momentum=0.7)
    for item in train_loader:
        optimizer.zero_grad()
        output = fcn_model(item["A"])
        loss = criterion(output, item["B"])
        loss.backward()
        optimizer.step()
    # https://github.com/yunlongdong/FCN-pytorch/issues/7
    """,
    # an MLP trained with BCELoss on its last Linear layer's output (changed to BCEWithLogitsLoss)
    """
    import torch
    import torch.nn as nn

    class MLP(nn.Module):
        def __init__(self, in_features):
            super().__init__()
            self.fc1 = nn.Linear(in_features, 64)
            self.fc2 = nn.Linear(64, 1)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    model = MLP(20)
    loss_fn = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x).squeeze(1), y)
        loss.backward()
        optimizer.step()
    # https://github.com/HewlettPackard/cmf/pull/77
    """,
    # question answering: argmax of the start/end scores passed to BCEWithLogitsLoss
    """
    import torch

    def loss_fn(preds, labels):
        return torch.nn.BCEWithLogitsLoss()(preds, labels)

    def train_fn(dataloader, model, optimizer, device):
        for token_ids, attention_mask, token_type_ids, label in dataloader:
            pred = model(token_ids=token_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            start_scores = torch.argmax(pred[0], dim=1)
            end_scores = torch.argmax(pred[1], dim=1)
            pred = torch.stack([start_scores, end_scores], dim=1).to(device, dtype=torch.float)
            batch_loss = loss_fn(pred, label)
            batch_loss.backward()
            optimizer.step()
    # https://github.com/pytorch/pytorch/issues/40357
    """,
    # coordinates decoded with argmax, then the regression loss: backward() has no graph
    """
    import torch
    import torch.nn.functional as F

    def train_step(model, optimizer, inputs, target_coor, coor_bin):
        output_coor_x_, output_coor_y_, output_coor_z_ = model(inputs)
        output_coor_ = torch.stack([torch.argmax(output_coor_x_.squeeze(), axis=0),
                                    torch.argmax(output_coor_y_.squeeze(), axis=0),
                                    torch.argmax(output_coor_z_.squeeze(), axis=0)], axis=2)
        output_coor_ = 2.0 * output_coor_.float() / (63.0 - 1.0) - 1.0
        loss = F.l1_loss(output_coor_, target_coor)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
    """,
    # a one-hot encoded target given to CrossEntropyLoss: "multi-target not supported"
    """
    import torch.nn as nn
    import torch.nn.functional as F

    criterion = nn.CrossEntropyLoss(size_average=False)
    for images, labels in train_loader:
        y_pred = model(images)
        targets = F.one_hot(labels, num_classes=7)
        loss = criterion(y_pred, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/issues/3670
    """,
    # edge labels one-hot encoded (integer), the validation loss of CrossEntropyLoss raises
    """
    import torch
    import torch.nn.functional as F

    loss_fn = torch.nn.CrossEntropyLoss()

    def predict_(model, label, batch_edges, features):
        batch_output = model(features, batch_edges)
        target = F.one_hot(label[batch_edges], num_classes=5)
        batch_loss = loss_fn(batch_output, target)
        return batch_loss.item()
    # https://github.com/George730/E-ResGAT/issues/5
    """,
    # a sequence model's per-frame labels one-hot encoded for CrossEntropyLoss
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class SequenceLoss(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.num_classes = num_classes
            self.ce = nn.CrossEntropyLoss()

        def forward(self, outputs, labels):
            onehot = F.one_hot(labels, self.num_classes).permute(0, 2, 1)
            return self.ce(outputs, onehot)
    # https://github.com/jbohnslav/deepethogram/issues/91
    """,
    # one-hot targets into the NLL criterion: "multi target not supported"
    """
    import torch.nn.functional as F

    def step(net, optimizer, inputs, labels, num_classes):
        log_probs = F.log_softmax(net(inputs), dim=1)
        one_hot_t = F.one_hot(labels, num_classes)
        loss = F.nll_loss(log_probs, one_hot_t)
        loss.backward()
        optimizer.step()
    # https://github.com/torch/cutorch/issues/227
    """,
    # BCELoss given integer (LongTensor) targets for a binary classifier
    """
    import torch
    import torch.nn as nn

    criterion = nn.BCELoss()
    for inputs, labels in loader:
        probs = torch.sigmoid(model(inputs)).squeeze(1)
        loss = criterion(probs, labels.long())
        loss.backward()
    # https://github.com/pytorch/pytorch/issues/2220
    """,
    # BCEWithLogitsLoss on a Linear layer's output with 0/1 targets kept as a LongTensor
    """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(128, 1)

        def forward(self, x):
            return self.fc(x)

    net = Net().cuda()
    criterion = nn.BCEWithLogitsLoss()
    for x, y in loader:
        output = net(x.cuda()).view(-1)
        loss = criterion(output, y.cuda().long())
        loss.backward()
    # https://github.com/pytorch/pytorch/issues/2272
    """,
    # F.binary_cross_entropy with a LongTensor target
    """
    import torch
    import torch.nn.functional as F

    input = torch.randn(3, requires_grad=True)
    target = torch.empty(3).random_(2).long()
    loss = F.binary_cross_entropy(torch.sigmoid(input), target)
    loss.backward()
    # https://github.com/pytorch/pytorch/issues/3608
    """,
]

LOOKALIKES = [
    # the fixed NLLLoss example: LogSoftmax after the convolution
    """
    import torch
    import torch.nn as nn

    N, C = 5, 4
    loss = nn.NLLLoss()
    data = torch.randn(N, 16, 10, 10)
    conv = nn.Conv2d(16, C, (3, 3))
    m = nn.LogSoftmax(dim=1)
    target = torch.empty(N, 8, 8, dtype=torch.long).random_(0, C)
    output = loss(m(conv(data)), target)
    output.backward()
    # https://github.com/pytorch/pytorch/pull/12703
    """,
    # the MLP's fix: BCEWithLogitsLoss on the Linear layer's output
    """
    import torch
    import torch.nn as nn

    class MLP(nn.Module):
        def __init__(self, in_features):
            super().__init__()
            self.fc1 = nn.Linear(in_features, 64)
            self.fc2 = nn.Linear(64, 1)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    model = MLP(20)
    loss_fn = nn.BCEWithLogitsLoss()
    for x, y in loader:
        loss = loss_fn(model(x).squeeze(1), y)
        loss.backward()
    # https://github.com/HewlettPackard/cmf/pull/77
    """,
    # a seq2seq decoder returning log_softmax, trained with nll_loss
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Decoder(nn.Module):
        def __init__(self, hidden_size, output_size):
            super().__init__()
            self.gru = nn.GRU(hidden_size, hidden_size)
            self.out = nn.Linear(hidden_size, output_size)

        def forward(self, x, hidden):
            output, hidden = self.gru(x, hidden)
            output = F.log_softmax(self.out(output.squeeze(0)), dim=1)
            return output, hidden

    decoder = Decoder(256, 1000)
    def step(x, hidden, trg):
        output, hidden = decoder(x, hidden)
        return F.nll_loss(output, trg)
    # https://github.com/keon/seq2seq/pull/5
    """,
    # the Transformer tutorial: the final Linear layer's logits go to CrossEntropyLoss
    """
    import torch.nn as nn

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, d_model)
            self.transformer = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, 2), 2)
            self.decoder = nn.Linear(d_model, ntoken)

        def forward(self, src):
            return self.decoder(self.transformer(self.encoder(src)))

    model = TransformerModel(1000, 200)
    criterion = nn.CrossEntropyLoss()
    for data, targets in batches:
        output = model(data)
        loss = criterion(output.view(-1, 1000), targets)
    # https://github.com/pytorch/tutorials/issues/977
    """,
    # float one-hot masks to CrossEntropyLoss: class probabilities, valid since torch 1.10
    """
    import torch.nn as nn
    import torch.nn.functional as F

    criterion = nn.CrossEntropyLoss()
    def training_step(model, batch):
        images, labels = batch
        targets = F.one_hot(labels, num_classes=13).permute(0, 3, 1, 2).float()
        logits = model(images)
        return criterion(logits, targets)
    # https://github.com/IGNF/FLAIR-1/issues/9
    """,
    # the one-hot target turned back into class indices with argmax
    """
    import torch.nn.functional as F

    def step(net, inputs, one_hot):
        log_probs = F.log_softmax(net(inputs), dim=1)
        return F.nll_loss(log_probs, one_hot.argmax(dim=1))
    # https://github.com/torch/cutorch/issues/227
    """,
    # BCEWithLogitsLoss on the network's raw output; BCELoss on its sigmoid
    """
    import torch
    import torch.nn as nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1280, 1)

        def forward(self, x):
            return self.fc(x)

    net = Head()
    criterion = nn.BCEWithLogitsLoss()
    bce = nn.BCELoss()
    for batch_data, batch_labels in loader:
        out = net(batch_data)
        pred = torch.sigmoid(out)
        loss = criterion(out, batch_labels) + bce(pred, batch_labels)
    # https://github.com/polimi-ispl/icpr2020dfdc/issues/16
    """,
    # BCELoss after a convolution stack whose last layer is a Sigmoid
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class OnsetStack(nn.Module):
        def __init__(self, input_features, output_features):
            super().__init__()
            self.stack = nn.Sequential(
                nn.Conv1d(input_features, 48, 3, padding=1),
                nn.ReLU(),
                nn.Linear(48, output_features),
                nn.Sigmoid(),
            )

        def forward(self, x):
            return self.stack(x)

    onset_stack = OnsetStack(229, 88)
    def run_on_batch(audio, onset_label):
        onset_pred = onset_stack(audio)
        return F.binary_cross_entropy(onset_pred, onset_label)
    # https://github.com/jongwook/onsets-and-frames/issues/35
    """,
    # BCELoss on a cosine similarity of ReLU-activated embeddings: in [0, 1], not logits
    """
    import torch.nn as nn

    logloss = nn.BCELoss()

    def cosine_loss(a, v, y):
        d = nn.functional.cosine_similarity(a, v)
        loss = logloss(d.unsqueeze(1), y)
        return loss
    # https://github.com/Rudrabha/Wav2Lip/issues/227
    """,
    # an auxiliary classifier ending in LogSoftmax, trained with NLLLoss
    """
    import torch.nn as nn

    class Discriminator(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.fc_aux = nn.Linear(512, num_classes)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, features):
            return self.softmax(self.fc_aux(features))

    netD = Discriminator()
    aux_criterion = nn.NLLLoss()
    def step(features, aux_label):
        aux_output = netD(features)
        return aux_criterion(aux_output, aux_label)
    # https://github.com/clvrai/ACGAN-PyTorch/pull/4
    """,
    # logistic regression returning log_softmax of its Linear layer, with NLLLoss
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class LogisticRegression(nn.Module):
        def __init__(self, input_size, num_classes):
            super().__init__()
            self.linear = nn.Linear(input_size, num_classes)

        def forward(self, x):
            return F.log_softmax(self.linear(x), dim=1)

    model = LogisticRegression(784, 10)
    criterion = nn.NLLLoss()
    for images, labels in train_loader:
        loss = criterion(model(images.view(-1, 784)), labels)
    # https://github.com/yunjey/pytorch-tutorial/issues/17
    """,
    # pseudo-labels from torch.max's indices as the CrossEntropyLoss target (no gradient wanted)
    """
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss(ignore_index=255)
    def unsupervised_loss(pred_l, pred_r):
        _, max_l = torch.max(pred_l, dim=1)
        _, max_r = torch.max(pred_r, dim=1)
        return criterion(pred_l, max_r) + criterion(pred_r, max_l)
    # https://github.com/charlesCXK/TorchSemiSeg/issues/45
    """,
    # argmax selects proposals; the loss is computed on the objectness logits
    """
    import torch
    import torch.nn.functional as F

    def compute_losses(objectness_scores, objectness_label, features):
        objectness_loss = F.cross_entropy(objectness_scores.transpose(2, 1), objectness_label)
        idx_obj = torch.argmax(objectness_scores[:, :, 1], dim=1)
        selected = features[torch.arange(features.shape[0]), idx_obj]
        return objectness_loss, selected
    # https://github.com/lanlan96/ARM3D/issues/1
    """,
    # float labels for BCELoss in a GAN's discriminator step
    """
    import torch
    import torch.nn as nn

    criterionD = nn.BCELoss()
    real_label = 1.0
    for real_data in dataloader:
        label = torch.full((real_data.size(0),), real_label)
        probs_real = discriminator(real_data).view(-1)
        loss_real = criterionD(probs_real, label)
    # https://github.com/Natsu6767/InfoGAN-PyTorch/pull/8
    """,
    # a predictor's Linear output trained with MSE (a regression on accuracies)
    """
    import torch.nn as nn

    class NeuralPredictor(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.gcn = nn.Linear(7, hidden)
            self.fc = nn.Linear(hidden, 1)

        def forward(self, x):
            return self.fc(self.gcn(x).relu()).view(-1)

    net = NeuralPredictor(144)
    criterion = nn.MSELoss()
    for batch, target in loader:
        loss = criterion(net(batch), target)
    # https://github.com/ultmaster/neuralpredictor.pytorch/issues/2
    """,
]
