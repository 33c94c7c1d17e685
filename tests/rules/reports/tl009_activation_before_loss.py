"""TL009's cases adapted from public reports: probabilities handed to a loss that computes them
itself -- a softmax at the end of a classifier's ``forward`` (or of its ``nn.Sequential``, or
of a helper) fed to ``CrossEntropyLoss``/``F.cross_entropy``, softmax into ``NLLLoss``, a
sigmoid into ``BCEWithLogitsLoss`` (``BUGS``); and the fixed code, or code that looks the same
and is right: probabilities for metrics or inference only, ``log_softmax`` with ``NLLLoss``,
``sigmoid`` with ``BCELoss``, softmax in attention (``LOOKALIKES``). See
``tests/rules/reports/__init__.py``."""

from tests.rules.reports import Report

BUGS = [
    # a BERT classifier's forward ends in out.softmax(dim=1); the training loop's CrossEntropyLoss
    """
    import torch
    from transformers import BertModel

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertModel.from_pretrained("bert-base-chinese")
            self.fc = torch.nn.Linear(768, 2)

        def forward(self, input_ids, attention_mask):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
            out = self.fc(out.last_hidden_state[:, 0])
            out = out.softmax(dim=1)
            return out

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Model().to(device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for input_ids, attention_mask, labels in loader:
        out = model(input_ids=input_ids, attention_mask=attention_mask)
        loss = criterion(out, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    # https://github.com/lansinuote/Huggingface_Toturials/issues/6
    """,
    # a sequential model filled with add_module, its last module a Softmax
    """
    import torch
    from torch import optim

    def build_model(input_dim, output_dim):
        model = torch.nn.Sequential()
        model.add_module("linear", torch.nn.Linear(input_dim, output_dim, bias=False))
        model.add_module("softmax", torch.nn.Softmax(dim=1))
        return model

    def train(model, loss, optimizer, x, y):
        optimizer.zero_grad()
        output = model.forward(x)
        cost = loss.forward(output, y)
        cost.backward()
        optimizer.step()
        return cost.item()

    model = build_model(784, 10)
    loss = torch.nn.CrossEntropyLoss(reduction="mean")
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for x, y in batches:
        train(model, loss, optimizer, x, y)
    # https://github.com/vinhkhuc/PyTorch-Mini-Tutorials/issues/1
    """,
    # a CNN whose forward returns F.softmax(logits), trained with CrossEntropyLoss
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class CNN(nn.Module):
        def __init__(self, n_classes):
            super().__init__()
            self.conv = nn.Conv1d(21, 64, 5, padding=2)
            self.fc = nn.Linear(64, n_classes)

        def forward(self, x):
            h = F.relu(self.conv(x)).mean(dim=2)
            logits = self.fc(h)
            output = F.softmax(logits, dim=1)
            return output

    model = CNN(3).to("cuda")
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters())
    for seqs, labels in train_loader:
        loss = loss_fn(model(seqs.cuda()), labels.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
    # https://github.com/Graylab/DL4Proteins-notebooks/issues/13
    """,
    # the model returns (logits, softmax); training takes the softmaxed element into CrossEntropyLoss
    Report(files={
        "model.py": """
        import torch.nn as nn
        import torch.nn.functional as F

        class SegNet(nn.Module):
            def __init__(self, input_channels, output_channels):
                super().__init__()
                self.encoder = nn.Conv2d(input_channels, 64, 3, padding=1)
                self.decoder = nn.Conv2d(64, output_channels, 3, padding=1)

            def forward(self, x):
                x_00d = self.decoder(F.relu(self.encoder(x)))
                x_softmax = F.softmax(x_00d, dim=1)
                return x_00d, x_softmax
        """,
        "train.py": """
        import torch
        from model import SegNet

        model = SegNet(input_channels=3, output_channels=21).cuda(0)
        criterion = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adadelta(model.parameters(), lr=0.3)

        def train():
            model.train()
            for batch in train_dataloader:
                predicted_tensor, softmaxed_tensor = model(batch["image"].cuda(0))
                loss = criterion(softmaxed_tensor, batch["mask"].cuda(0))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        # https://github.com/say4n/pytorch-segnet/issues/5
        """,
    }),
    # the attention classifier's forward ends in softmax; the matching network computes F.cross_entropy on it
    Report(files={
        "models/AttentionalClassify.py": """
        import torch.nn as nn
        import torch.nn.functional as F

        class AttentionalClassify(nn.Module):
            def forward(self, similarities, support_set_y):
                softmax_similarities = F.softmax(similarities, dim=1)
                preds = softmax_similarities.unsqueeze(1).bmm(support_set_y).squeeze()
                return preds
        """,
        "models/MatchingNetwork.py": """
        import torch.nn as nn
        import torch.nn.functional as F
        from models.AttentionalClassify import AttentionalClassify

        class MatchingNetwork(nn.Module):
            def __init__(self):
                super().__init__()
                self.classify = AttentionalClassify()

            def forward(self, similarities, support_set_y, target_y):
                preds = self.classify(similarities, support_set_y)
                return F.cross_entropy(preds, target_y)
        # https://github.com/gitabcworld/MatchingNetworks/issues/5
        """,
    }),
    # the semantic similarity model's forward returns a softmax over documents; CrossEntropyLoss trains it
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class CDSSM(nn.Module):
        def __init__(self):
            super().__init__()
            self.query_sem = nn.Linear(300, 128)
            self.doc_sem = nn.Linear(300, 128)
            self.learn_gamma = nn.Conv1d(5, 1, 1)

        def forward(self, q, pos, negs):
            q_s = torch.tanh(self.query_sem(q))
            docs = [torch.tanh(self.doc_sem(d)) for d in [pos, *negs]]
            dots = torch.stack([(q_s * d).sum(1) for d in docs], dim=1)
            with_gamma = self.learn_gamma(dots.unsqueeze(2)).squeeze()
            prob = F.softmax(with_gamma, dim=1)
            return prob

    model = CDSSM()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters())
    y_pred = model(q, pos, negs)
    loss = criterion(y_pred, y)
    loss.backward()
    # https://github.com/nishnik/Deep-Semantic-Similarity-Model-PyTorch/issues/2
    """,
    # a classifier ending in nn.Softmax handed to a training function with NLLLoss
    """
    import torch
    import torch.nn as nn

    class RCNN(nn.Module):
        def __init__(self, config, vocab_size):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, config.embed_size)
            self.fc = nn.Linear(config.embed_size, config.output_size)
            self.softmax = nn.Softmax(dim=1)

        def forward(self, x):
            h = self.embeddings(x).max(dim=1)[0]
            return self.softmax(self.fc(h))

    def run_epoch(model, train_iterator, loss_op, optimizer):
        for batch in train_iterator:
            optimizer.zero_grad()
            y_pred = model(batch.text.cuda())
            loss = loss_op(y_pred, batch.label.cuda())
            loss.backward()
            optimizer.step()

    model = RCNN(config, len(vocab)).cuda()
    run_epoch(model, train_iterator, nn.NLLLoss(), torch.optim.SGD(model.parameters(), lr=0.1))
    # https://github.com/AnubhavGupta3377/Text-Classification-Models-Pytorch/issues/9
    """,
    # a Lightning logistic regression: forward applies softmax, training_step calls self(x)
    """
    import torch
    import torch.nn.functional as F
    from pytorch_lightning import LightningModule
    from torch import nn
    from torch.nn.functional import softmax

    class LogisticRegression(LightningModule):
        def __init__(self, input_dim, num_classes, learning_rate=1e-4):
            super().__init__()
            self.linear = nn.Linear(input_dim, num_classes)
            self.learning_rate = learning_rate

        def forward(self, x):
            x = self.linear(x)
            y_hat = softmax(x, dim=-1)
            return y_hat

        def training_step(self, batch, batch_idx):
            x, y = batch
            x = x.view(x.size(0), -1)
            y_hat = self(x)
            loss = F.cross_entropy(y_hat, y, reduction="sum")
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
    # https://github.com/Lightning-Universe/lightning-bolts/pull/655
    """,
    # softmax then F.cross_entropy in the same forward, through .view
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class SimpleBrokenModel(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.embedding = nn.Embedding(config["vocab_size"], config["d_model"])
            self.linear = nn.Sequential(nn.Linear(config["d_model"], config["d_model"]), nn.ReLU(),
                                        nn.Linear(config["d_model"], config["vocab_size"]))

        def forward(self, idx, targets=None):
            a = self.linear(self.embedding(idx))
            logits = F.softmax(a, dim=-1)
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
                return logits, loss
            return logits
    # https://github.com/bkitano/llama-from-scratch/issues/5
    """,
    # a recommender's prediction passes through sigmoid, then BCEWithLogitsLoss
    """
    import torch
    import torch.nn as nn

    class PointMF(nn.Module):
        def __init__(self, user_num, item_num, factors):
            super().__init__()
            self.embed_user = nn.Embedding(user_num, factors)
            self.embed_item = nn.Embedding(item_num, factors)

        def forward(self, user, item):
            pred = (self.embed_user(user) * self.embed_item(item)).sum(dim=-1)
            return torch.sigmoid(pred)

    model = PointMF(100, 200, 32).cuda()
    criterion = nn.BCEWithLogitsLoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for user, item, label in train_loader:
        model.zero_grad()
        prediction = model(user.cuda(), item.cuda())
        loss = criterion(prediction, label.cuda().float())
        loss.backward()
        optimizer.step()
    # https://github.com/yudi-mars/daisyRec/pull/15
    """,
    # the head in one module ends in sigmoid; a trainer class in another computes BCEWithLogitsLoss
    Report(files={
        "heads.py": """
        import torch
        import torch.nn as nn

        class ExistHead(nn.Module):
            def __init__(self, in_features, num_lanes):
                super().__init__()
                self.fc9 = nn.Linear(in_features, 128)
                self.fc10 = nn.Linear(128, num_lanes)

            def forward(self, x):
                x = torch.relu(self.fc9(x))
                return torch.sigmoid(self.fc10(x))
        """,
        "trainer.py": """
        import torch.nn as nn

        class Trainer:
            def __init__(self, head, loader, optimizer):
                self.head = head
                self.loader = loader
                self.optimizer = optimizer
                self.bce = nn.BCEWithLogitsLoss()

            def train_epoch(self):
                for feats, exist in self.loader:
                    loss = self.bce(self.head(feats), exist.float())
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
        """,
        "main.py": """
        import torch
        from heads import ExistHead
        from trainer import Trainer

        head = ExistHead(4500, 4).cuda()
        Trainer(head, loader, torch.optim.SGD(head.parameters(), lr=0.01)).train_epoch()
        # https://github.com/Turoad/lanedet/issues/32
        """,
    }),
    # the classifier head is an nn.Sequential built from a list ending in Softmax
    """
    import torch.nn as nn
    from torch import optim

    layers = [nn.Linear(784, 128), nn.ReLU()]
    layers.append(nn.Linear(128, 10))
    layers.append(nn.Softmax(dim=1))
    model = nn.Sequential(*layers)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.003)
    for images, labels in trainloader:
        optimizer.zero_grad()
        output = model(images.view(images.shape[0], -1))
        loss = criterion(output, labels)
        loss.backward()
        optimizer.step()
    # https://github.com/MicrosoftDocs/ml-basics/issues/48
    """,
    # the training loop takes softmax of the BERT classifier's logits before CrossEntropyLoss
    """
    import torch
    import torch.nn.functional as F

    def train_model(model, criterion, optimizer, dataloaders, device, num_epochs=10):
        for epoch in range(num_epochs):
            model.train()
            for inputs, labels in dataloaders["train"]:
                inputs, labels = inputs.to(device), labels.to(device)
                optimizer.zero_grad()
                outputs = model(inputs)
                outputs = F.softmax(outputs, dim=1)
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
        return model

    model = train_model(bert_classifier, torch.nn.CrossEntropyLoss(), optimizer, dataloaders, "cuda")
    # https://github.com/sugi-chan/custom_bert_pipeline/issues/1
    """,
    # a focal loss applies sigmoid to its inputs, then binary_cross_entropy_with_logits on the result
    """
    import torch
    import torch.nn.functional as F

    def focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
        p = torch.sigmoid(inputs)
        ce_loss = F.binary_cross_entropy_with_logits(p, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce_loss * ((1 - p_t) ** gamma)
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        return (alpha_t * loss).mean()
    # https://github.com/itakurah/focal-loss-pytorch/pull/5
    """,
]

LOOKALIKES = [
    # the fix: forward returns logits, the class probabilities are computed outside the loss
    """
    import torch
    from transformers import BertModel

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertModel.from_pretrained("bert-base-chinese")
            self.fc = torch.nn.Linear(768, 2)

        def forward(self, input_ids, attention_mask):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
            return self.fc(out.last_hidden_state[:, 0])

    model = Model().to("cuda")
    criterion = torch.nn.CrossEntropyLoss()
    for input_ids, attention_mask, labels in loader:
        logits = model(input_ids=input_ids, attention_mask=attention_mask)
        loss = criterion(logits, labels)
        probs = torch.softmax(logits, dim=1)
        accuracy = (probs.argmax(dim=1) == labels).float().mean()
    # https://github.com/lansinuote/Huggingface_Toturials/issues/6
    """,
    # the segmentation model returns (logits, softmax) and the loss takes the logits
    Report(files={
        "model.py": """
        import torch.nn as nn
        import torch.nn.functional as F

        class SegNet(nn.Module):
            def __init__(self, input_channels, output_channels):
                super().__init__()
                self.encoder = nn.Conv2d(input_channels, 64, 3, padding=1)
                self.decoder = nn.Conv2d(64, output_channels, 3, padding=1)

            def forward(self, x):
                x_00d = self.decoder(F.relu(self.encoder(x)))
                x_softmax = F.softmax(x_00d, dim=1)
                return x_00d, x_softmax
        """,
        "train.py": """
        import torch
        from model import SegNet

        model = SegNet(input_channels=3, output_channels=21).cuda(0)
        criterion = torch.nn.CrossEntropyLoss()
        for batch in train_dataloader:
            predicted_tensor, softmaxed_tensor = model(batch["image"].cuda(0))
            loss = criterion(predicted_tensor, batch["mask"].cuda(0))
            loss.backward()
        # https://github.com/say4n/pytorch-segnet/issues/5
        """,
    }),
    # log_softmax at the end of forward with NLLLoss: the pair CrossEntropyLoss splits into
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 512)
            self.fc2 = nn.Linear(512, 10)

        def forward(self, x):
            x = F.relu(self.fc1(x.view(-1, 784)))
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net().cuda()
    criterion = nn.NLLLoss()
    for data, target in train_loader:
        loss = criterion(model(data.cuda()), target.cuda())
        loss.backward()
    # https://discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814/16
    """,
    # a token-confidence head: Sequential(Linear, Sigmoid), but the loss is fed its Linear alone
    """
    import torch.nn as nn

    class TokenConfidence(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.token = nn.Sequential(nn.Linear(dim, 1), nn.Sigmoid())
            self.loss_fn = nn.BCEWithLogitsLoss(reduction="none")

        def forward(self, desc0, desc1):
            return self.token(desc0.detach()).squeeze(-1), self.token(desc1.detach()).squeeze(-1)

        def loss(self, desc0, correct0):
            logit0 = self.token[0](desc0.detach()).squeeze(-1)
            return self.loss_fn(logit0, correct0.float()).mean(-1)
    # https://github.com/cvg/glue-factory/issues/89
    """,
    # sigmoid for the reported scores, the logits into binary_cross_entropy_with_logits
    """
    import torch
    import torch.nn.functional as F
    from pytorch_lightning import LightningModule

    class TransferLearningModel(LightningModule):
        def __init__(self, backbone, fc):
            super().__init__()
            self.feature_extractor = backbone
            self.fc = fc

        def forward(self, x):
            return self.fc(self.feature_extractor(x).squeeze(-1).squeeze(-1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            y_logits = self.forward(x)
            y_scores = torch.sigmoid(y_logits)
            y_true = y.view((-1, 1)).type_as(x)
            self.log("train_acc", ((y_scores > 0.5) == y_true).float().mean())
            return F.binary_cross_entropy_with_logits(y_logits, y_true)
    # https://github.com/Lightning-AI/pytorch-lightning/issues/18272
    """,
    # a focal loss: probabilities for the modulating factor, the logits into the BCE
    """
    import torch
    import torch.nn as nn

    class FocalLossV1(nn.Module):
        def __init__(self, alpha=0.25, gamma=2):
            super().__init__()
            self.alpha, self.gamma = alpha, gamma
            self.crit = nn.BCEWithLogitsLoss(reduction="none")

        def forward(self, logits, label):
            probs = torch.sigmoid(logits)
            pt = torch.where(label == 1, probs, 1 - probs)
            ce_loss = self.crit(logits, label.float())
            return (torch.pow(1 - pt, self.gamma) * ce_loss).mean()
    # https://github.com/CoinCheung/pytorch-loss/issues/10
    """,
    # sigmoid only at test time; training feeds the raw maps to BCEWithLogitsLoss
    """
    import torch
    import torch.nn as nn

    class R3Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.predict = nn.Conv2d(64, 1, 1)

        def forward(self, x):
            predict = self.predict(x)
            if self.training:
                return predict
            return torch.sigmoid(predict)

    net = R3Net().cuda().train()
    criterion = nn.BCEWithLogitsLoss().cuda()
    for inputs, labels in train_loader:
        loss = criterion(net(inputs.cuda()), labels.cuda())
        loss.backward()
    # https://github.com/zijundeng/R3Net/issues/3
    """,
    # a sigmoid output trained with BCELoss, which wants probabilities
    """
    import torch
    import torch.nn as nn

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1), nn.Sigmoid())

        def forward(self, img):
            return self.model(img.view(img.size(0), -1))

    discriminator = Discriminator().cuda()
    adversarial_loss = nn.BCELoss()
    d_loss = adversarial_loss(discriminator(real_imgs), valid)
    # https://github.com/GeoZcx/A-deeply-supervised-image-fusion-network-for-change-detection-in-remote-sensing-images/issues/1
    """,
    # softmax inside attention (the weights of a weighted sum), the logits into CrossEntropyLoss
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Attention(nn.Module):
        def __init__(self, hid_dim):
            super().__init__()
            self.attn = nn.Linear(hid_dim * 2, hid_dim)
            self.v = nn.Linear(hid_dim, 1, bias=False)

        def forward(self, hidden, encoder_outputs):
            energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
            return F.softmax(self.v(energy).squeeze(2), dim=1)

    class Decoder(nn.Module):
        def __init__(self, output_dim, hid_dim):
            super().__init__()
            self.attention = Attention(hid_dim)
            self.fc_out = nn.Linear(hid_dim, output_dim)

        def forward(self, hidden, encoder_outputs):
            a = self.attention(hidden, encoder_outputs)
            weighted = torch.bmm(a.unsqueeze(1), encoder_outputs).squeeze(1)
            return self.fc_out(weighted)

    decoder = Decoder(1000, 256).cuda()
    criterion = nn.CrossEntropyLoss(ignore_index=0)
    loss = criterion(decoder(hidden, encoder_outputs), trg)
    # https://github.com/bentrevett/pytorch-seq2seq/issues/127
    """,
    # logits to F.cross_entropy in training, softmax only in the inference path
    """
    import torch
    import torch.nn.functional as F

    class Net(torch.nn.Module):
        def __init__(self, n_feature, n_hidden, n_output):
            super().__init__()
            self.hidden = torch.nn.Linear(n_feature, n_hidden)
            self.out = torch.nn.Linear(n_hidden, n_output)

        def forward(self, x):
            return self.out(F.relu(self.hidden(x)))

    net = Net(n_feature=2, n_hidden=10, n_output=2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.02)
    loss_func = torch.nn.CrossEntropyLoss()
    for t in range(100):
        out = net(x)
        loss = loss_func(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        prediction = torch.max(F.softmax(out, dim=1), 1)[1]
    # https://github.com/MorvanZhou/PyTorch-Tutorial/issues/16
    """,
    # a model returning log_softmax trained with CrossEntropyLoss: log-softmax is idempotent, harmless
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class PETransformerModel(nn.Module):
        def __init__(self, d_model, num_classes):
            super().__init__()
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, 8), 2)
            self.outlinear = nn.Linear(d_model, num_classes)

        def forward(self, x):
            x = self.encoder(x).max(1)[0]
            return F.log_softmax(self.outlinear(x), dim=-1)

    model = PETransformerModel(64, 9).cuda()
    criterion = nn.CrossEntropyLoss(reduction="mean")
    loss = criterion(model(x.cuda()), y.cuda())
    # https://github.com/dl4sits/BreizhCrops/issues/35
    """,
    # inference wraps the logits model in softmax; training still passes the logits
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def get_kernel(mode):
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
        if mode == "inference":
            return nn.Sequential(net, nn.Softmax(dim=1))
        return net

    net = get_kernel("training")
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in loader:
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
    # https://github.com/undertherain/benchmarker/issues/31
    """,
    # the focal loss as fixed: sigmoid for p_t only, the logits into binary_cross_entropy_with_logits
    """
    import torch
    import torch.nn.functional as F

    def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
        p = torch.sigmoid(inputs)
        ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce_loss * ((1 - p_t) ** gamma)
        return loss.mean()
    # https://github.com/facebookresearch/fvcore/issues/126
    """,
]
