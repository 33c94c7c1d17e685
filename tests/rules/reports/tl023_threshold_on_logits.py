"""TL023's cases adapted from public reports: a probability threshold (0.5) or ``round`` applied
to a model's logits -- a network ending in a Linear/conv layer, or trained with
``BCEWithLogitsLoss`` (``BUGS``); and the fixed code, or code that looks the same and is right:
sigmoid before the threshold, logits compared with 0, a model ending in sigmoid, a
regression-trained head (``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

BUGS = [
    # BCEWithLogitsLoss training; the accuracy thresholds the raw outputs at .5
    """
    import torch as th

    class NCC_model(th.nn.Module):
        def __init__(self, n_hiddens=100, kernel_size=3):
            super().__init__()
            self.conv = th.nn.Sequential(th.nn.Conv1d(2, n_hiddens, kernel_size), th.nn.ReLU(),
                                         th.nn.Conv1d(n_hiddens, n_hiddens, kernel_size), th.nn.ReLU())
            self.dense = th.nn.Sequential(th.nn.Linear(n_hiddens, n_hiddens), th.nn.ReLU(),
                                          th.nn.Linear(n_hiddens, 1))

        def forward(self, x):
            return self.dense(self.conv(x).sum(dim=2))

    model = NCC_model()
    criterion = th.nn.BCEWithLogitsLoss()
    for batch, labels in loader:
        output = [model(m.t().unsqueeze(0)) for m in batch]
        loss = criterion(th.cat(output, 0), labels)
        acc = th.where(th.cat(output, 0).data.cpu() > .5, th.ones(len(output)), th.zeros(len(output)))
    # https://github.com/FenTechSolutions/CausalDiscoveryToolbox/issues/38
    """,
    # a proposed change: mask accuracy with a 0.5 threshold on the mask logits (rejected)
    """
    import torch.nn.functional as F

    def mask_rcnn_loss(pred_mask_logits, gt_masks):
        mask_loss = F.binary_cross_entropy_with_logits(pred_mask_logits, gt_masks, reduction="mean")
        mask_incorrect = (pred_mask_logits > 0.5) != (gt_masks > 0.5)
        return mask_loss, mask_incorrect.sum().item()
    # https://github.com/facebookresearch/detectron2/pull/4913
    """,
    # MNIST 3s vs 7s with a linear model: the proposed threshold 0.5 on the linear outputs
    """
    import torch.nn as nn

    linear1 = nn.Linear(28 * 28, 1)

    def batch_accuracy(xb, yb):
        preds = linear1(xb)
        return ((preds > 0.5).float() == yb).float().mean().item()
    # https://github.com/fastai/fastbook/pull/427
    """,
    # the book text before its fix: the same linear outputs thresholded at 0.5
    """
    import torch
    import torch.nn as nn

    linear1 = nn.Linear(28 * 28, 1)
    train_x = torch.cat([stacked_threes, stacked_sevens]).view(-1, 28 * 28)
    preds = linear1(train_x)
    corrects = (preds > 0.5).float() == train_y
    print(corrects.float().mean().item())
    # https://github.com/fastai/fastbook/pull/461
    """,
    # sound event detection: metrics threshold the Linear classifier's outputs at 0.5
    """
    import torch.nn as nn

    class DNDSED(nn.Module):
        def __init__(self, nb_classes):
            super().__init__()
            self.rnn = nn.GRU(128, 64, batch_first=True)
            self.classifier = nn.Linear(64, nb_classes)

        def forward(self, x):
            h, _ = self.rnn(x)
            return self.classifier(h)

    model = DNDSED(6)
    def f1_per_frame(x, y_true):
        y_hat = model(x)
        y_pred = (y_hat > 0.5).float()
        tp = (y_pred * y_true).sum()
        return tp
    # https://github.com/dr-costas/dnd-sed/issues/1
    """,
    # GAT on PPI: BCEWithLogitsLoss, the F1 evaluation thresholds the logits at 0.5
    """
    import numpy as np
    import torch
    from sklearn.metrics import f1_score

    loss_fcn = torch.nn.BCEWithLogitsLoss()
    def train_epoch(model, g, feats, labels, optimizer):
        logits = model(g, feats)
        loss = loss_fcn(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def evaluate(model, g, feats, labels):
        with torch.no_grad():
            output = model(g, feats)
            predict = np.where(output.data.cpu().numpy() >= 0.5, 1, 0)
            return f1_score(labels.cpu().numpy(), predict, average="micro")
    # https://github.com/dmlc/dgl/pull/1534
    """,
    # crack segmentation trained with BCEWithLogitsLoss; the accuracy uses the raw output
    """
    import torch.nn as nn

    class DeepCrackTrainer(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.mask_loss = nn.BCEWithLogitsLoss()

        def train_op(self, input, target):
            pred_output = self.model(input)
            loss = self.mask_loss(pred_output.view(-1, 1), target.view(-1, 1))
            acc = ((pred_output > 0.5) == target.bool()).float().mean()
            return loss, acc
    # https://github.com/qinnzou/DeepCrack/issues/21
    """,
    # single-class segmentation evaluated by thresholding the outputs without a sigmoid
    """
    import torch.nn as nn

    def train(train_loader, model, criterion, optimizer):
        for data in train_loader:
            outputs = model(data["sat_img"])
            loss = criterion(outputs, data["map_img"].unsqueeze(1).float())
            loss.backward()
            optimizer.step()

    def evaluate(eval_loader, model):
        for data in eval_loader:
            outputs = model(data["sat_img"])
            output_arr = outputs.detach().cpu().numpy()
            pred = output_arr > 0.5
            yield pred

    def main(params):
        model = build_model(params)
        criterion = nn.BCEWithLogitsLoss()
        for epoch in range(params["num_epochs"]):
            train(train_loader, model, criterion, optimizer)
            for pred in evaluate(val_loader, model):
                save(pred)
    # https://github.com/NRCan/geo-deep-learning/issues/394
    """,
    # a binary segmentation task's plot: predictions are the logits thresholded at 0.5
    """
    import torch.nn as nn

    class SemanticSegmentationTask(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.criterion = nn.BCEWithLogitsLoss()

        def forward(self, x):
            return self.model(x)

        def training_step(self, batch, batch_idx):
            y_hat = self(batch["image"])
            return self.criterion(y_hat, batch["mask"].float())

        def validation_step(self, batch, batch_idx):
            y_hat = self(batch["image"])
            batch["prediction"] = (y_hat >= 0.5).long()
            return batch
    # https://github.com/torchgeo/torchgeo/pull/2793
    """,
    # binary accuracy computed on BCE-with-logits outputs with a 0.5 threshold
    """
    import torch.nn.functional as F

    def compute_binary_loss(model, batch):
        logits = model.classification_head(model(batch))
        loss = F.binary_cross_entropy_with_logits(logits, batch["target"].float())
        preds = (logits >= 0.5).long()
        acc = (preds == batch["target"]).float().mean()
        return loss, acc
    # https://github.com/hspark1212/MOFTransformer/pull/176
    """,
    # an attention RNN's accuracy rounds the logits
    """
    import torch
    import torch.nn as nn

    class AttentionRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(100, 150, batch_first=True)
            self.fc = nn.Linear(150, 1)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.fc(out[:, -1]).squeeze(1)

    model = AttentionRNN()
    loss_fn = nn.BCEWithLogitsLoss()
    for x, target in loader:
        y_hat = model(x)
        loss = loss_fn(y_hat, target)
        accuracy = torch.mean(torch.eq(torch.round(y_hat), target).float())
    # https://github.com/ilivans/tf-rnn-attention/issues/3
    """,
]

LOOKALIKES = [
    # mask accuracy with the logits compared with 0.0
    """
    import torch.nn.functional as F

    def mask_rcnn_loss(pred_mask_logits, gt_masks):
        mask_loss = F.binary_cross_entropy_with_logits(pred_mask_logits, gt_masks, reduction="mean")
        mask_incorrect = (pred_mask_logits > 0.0) != (gt_masks > 0.5)
        return mask_loss, mask_incorrect.sum().item()
    # https://github.com/facebookresearch/detectron2/issues/1121
    """,
    # the book's fix: 0.0 on the linear outputs, 0.5 only after the sigmoid
    """
    import torch
    import torch.nn as nn

    linear1 = nn.Linear(28 * 28, 1)

    def batch_accuracy(xb, yb):
        preds = linear1(xb)
        raw = ((preds > 0.0).float() == yb).float().mean()
        prob = ((preds.sigmoid() > 0.5).float() == yb).float().mean()
        return raw, prob
    # https://github.com/fastai/fastbook/pull/461
    """,
    # logits -> prediction probabilities -> labels
    """
    import torch
    import torch.nn as nn

    model_0 = nn.Sequential(nn.Linear(2, 5), nn.Linear(5, 1))
    loss_fn = nn.BCEWithLogitsLoss()
    y_logits = model_0(X_test)[:5]
    y_pred_probs = torch.sigmoid(y_logits)
    y_preds = torch.round(y_pred_probs)
    y_pred_labels = torch.round(torch.sigmoid(model_0(X_test)[:5]))
    # https://github.com/mrdbourke/pytorch-deep-learning/issues/262
    """,
    # sentiment analysis: rounded_preds = torch.round(torch.sigmoid(preds))
    """
    import torch
    import torch.nn as nn

    def binary_accuracy(preds, y):
        rounded_preds = torch.round(torch.sigmoid(preds))
        correct = (rounded_preds == y).float()
        return correct.sum() / len(correct)

    criterion = nn.BCEWithLogitsLoss()
    for batch in iterator:
        predictions = model(batch.text).squeeze(1)
        loss = criterion(predictions, batch.label)
        acc = binary_accuracy(predictions, batch.label)
    # https://github.com/bentrevett/pytorch-sentiment-analysis/issues/75
    """,
    # the same model with a sigmoid inside: rounding its output is right
    """
    import torch
    import torch.nn as nn

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(100, 256)
            self.fc = nn.Linear(256, 1)
            self.sigmoid = nn.Sigmoid()

        def forward(self, text):
            output, (hidden, cell) = self.rnn(text)
            return self.sigmoid(self.fc(hidden[-1]))

    model = RNN()
    criterion = nn.BCELoss()
    for text, label in iterator:
        preds = model(text).squeeze(1)
        loss = criterion(preds, label)
        rounded_preds = torch.round(preds)
    # https://github.com/bentrevett/pytorch-sentiment-analysis/issues/75
    """,
    # a Siamese network without a final sigmoid: the accuracy applies it
    """
    import torch
    import torch.nn as nn

    class Siamese(nn.Module):
        def __init__(self):
            super().__init__()
            self.fully_connect1 = nn.Linear(512, 512)
            self.fully_connect2 = nn.Linear(512, 1)

        def forward(self, x1, x2):
            x = torch.abs(x1 - x2)
            return self.fully_connect2(self.fully_connect1(x))

    model = Siamese()
    loss = nn.BCEWithLogitsLoss()
    for x1, x2, targets in gen:
        outputs = model(x1, x2)
        output = loss(outputs, targets)
        equal = torch.eq(torch.round(nn.Sigmoid()(outputs)), targets)
    # https://github.com/bubbliiiing/Siamese-pytorch/issues/58
    """,
    # relativistic GAN accuracy: sigmoid of the logit difference against 0.5
    """
    import torch

    def accuracies(real_logits, fake_logits):
        real_accuracy = torch.sigmoid(real_logits - torch.mean(fake_logits)) >= 0.5
        fake_accuracy = torch.sigmoid(fake_logits - torch.mean(real_logits)) < 0.5
        return real_accuracy.float().mean(), fake_accuracy.float().mean()
    # https://github.com/AlexiaJM/RelativisticGAN/issues/21
    """,
    # binary test predictions: round(sigmoid(logits)); multi-class: softmax then argmax
    """
    import torch
    import torch.nn as nn

    model_0 = nn.Sequential(nn.Linear(2, 10), nn.ReLU(), nn.Linear(10, 1))
    loss_fn = nn.BCEWithLogitsLoss()
    test_logits = model_0(X_test).squeeze()
    test_pred = torch.round(torch.sigmoid(test_logits))
    test_loss = loss_fn(test_logits, y_test)
    # https://github.com/mrdbourke/pytorch-deep-learning/issues/609
    """,
    # UNet: logits to the loss, sigmoid then 0.5 for the logged masks
    """
    import torch
    import torch.nn as nn

    criterion = nn.BCEWithLogitsLoss()
    for imgs, true_masks in train_loader:
        masks_pred = net(imgs)
        loss = criterion(masks_pred, true_masks)
        writer.add_images("masks/pred", torch.sigmoid(masks_pred) > 0.5, global_step)
    # https://github.com/milesial/Pytorch-UNet/issues/197
    """,
    # UNet prediction: sigmoid on one output channel, then the threshold
    """
    import torch
    import torch.nn.functional as F

    def predict_img(net, img, threshold=0.5):
        with torch.no_grad():
            pre_img = net(img)
            if net.n_classes > 1:
                probs = F.softmax(pre_img, dim=1)
            else:
                probs = torch.sigmoid(pre_img)
            full_mask = probs.squeeze().cpu().numpy()
        return full_mask > 0.5
    # https://github.com/milesial/Pytorch-UNet/issues/200
    """,
    # sigmoid embedded at the end of the convolution stack; predictions thresholded at 0.5
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class OnsetsAndFrames(nn.Module):
        def __init__(self, input_features, output_features):
            super().__init__()
            self.onset_stack = nn.Sequential(nn.Conv2d(1, 48, 3, padding=1), nn.ReLU(),
                                             nn.Conv2d(48, output_features, 1), nn.Sigmoid())

        def forward(self, mel):
            return self.onset_stack(mel)

    model = OnsetsAndFrames(229, 88)
    def run_on_batch(mel, onset_label):
        onset_pred = model(mel)
        loss = F.binary_cross_entropy(onset_pred, onset_label)
        onsets = onset_pred > 0.5
        return loss, onsets
    # https://github.com/jongwook/onsets-and-frames/issues/35
    """,
    # BCEWithLogitsLoss in training, sigmoid only at test time before thresholding
    """
    import torch
    import torch.nn as nn

    class R3Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.predict = nn.Conv2d(64, 1, kernel_size=1)

        def forward(self, x):
            return self.predict(x)

    net = R3Net()
    criterion = nn.BCEWithLogitsLoss()
    for inputs, labels in train_loader:
        loss = criterion(net(inputs), labels)
    def test(img):
        prediction = torch.sigmoid(net(img))
        return (prediction > 0.5).float()
    # https://github.com/zijundeng/R3Net/issues/3
    """,
    # an LSGAN discriminator trained with MSE towards 0/1: its 0.5 threshold is right
    """
    import torch.nn as nn

    disc = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
    MSE_loss = nn.MSELoss()
    for real_A, fake_A in batches:
        real_logit = disc(real_A)
        fake_logit = disc(fake_A)
        D_ad_loss = MSE_loss(real_logit, torch.ones_like(real_logit))
        D_ad_loss += MSE_loss(fake_logit, torch.zeros_like(fake_logit))
        real_acc = (disc(real_A) > 0.5).float().mean()
    # https://github.com/znxlwm/UGATIT-pytorch/issues/50
    """,
    # an occupancy MLP without a final sigmoid trained with BCEWithLogitsLoss, no threshold
    """
    import torch.nn as nn

    class MLP(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc1 = nn.Linear(dim, 64)
            self.fc2 = nn.Linear(64, 1)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

    occup_net = MLP(2)
    loss_fn = nn.BCEWithLogitsLoss()
    def step(points, gt):
        occp_prob = occup_net(points)
        return loss_fn(occp_prob, gt)
    # https://github.com/ai4ce/DeepMapping/issues/7
    """,
]
