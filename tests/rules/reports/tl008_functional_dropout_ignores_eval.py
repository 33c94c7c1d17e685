"""TL008 functional-dropout-ignores-eval: cases adapted from public reports (see ``tests/rules/reports``)."""

BUGS = [
    # Embedding dropout through the functional form, on at inference.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class SentEncoder(nn.Module):
        def __init__(self, args, embedder):
            super().__init__()
            self.args = args
            self.embedder = embedder
            self.rnn = nn.LSTM(300, 512, batch_first=True)

        def forward(self, words):
            out = self.embedder(words)
            out = F.dropout(out, p=self.args.emb_dropout)
            return self.rnn(out)[0]
    # https://github.com/facebookresearch/DME/issues/3
    """,
    # A table-structure model whose GNN layers drop features through F.dropout.
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Attention(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.linear = nn.Linear(size, size)

        def forward(self, x, y):
            score = torch.softmax(self.linear(x) @ y.transpose(-1, -2), -1)
            return F.dropout(score, p=0.1) @ y
    # https://github.com/Academic-Hammer/SciTSR/pull/16
    """,
    # The report to PyTorch: a model's forward uses F.dropout, eval() leaves it on.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(100, 50)
            self.fc2 = nn.Linear(50, 1)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = F.dropout(x, 0.25)
            return self.fc2(x)
    # https://github.com/pytorch/pytorch/issues/11999
    """,
    # The documentation issue's example.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()

        def forward(self, x):
            x = F.dropout(x)
            return x
    # https://github.com/pytorch/pytorch/issues/26338
    """,
    # Attention scores dropped in a factorisation-machine model (AFM).
    """
    import torch
    import torch.nn.functional as F

    class AttentionalFactorizationMachine(torch.nn.Module):
        def __init__(self, embed_dim, attn_size, dropouts):
            super().__init__()
            self.attention = torch.nn.Linear(embed_dim, attn_size)
            self.projection = torch.nn.Linear(attn_size, 1)
            self.fc = torch.nn.Linear(embed_dim, 1)
            self.dropouts = dropouts

        def forward(self, inner_product):
            attn_scores = F.relu(self.attention(inner_product))
            attn_scores = F.softmax(self.projection(attn_scores), dim=1)
            attn_scores = F.dropout(attn_scores, p=self.dropouts[0])
            attn_output = torch.sum(attn_scores * inner_product, dim=1)
            attn_output = F.dropout(attn_output, p=self.dropouts[1])
            return self.fc(attn_output)
    # https://github.com/rixwew/pytorch-fm/issues/21
    """,
    # dropout2d imported from torch.nn.functional, switched by a constructor flag, not the mode.
    """
    import torch.nn as nn
    from torch.nn.functional import dropout2d

    class SalEMA(nn.Module):
        def __init__(self, dropout=True):
            super().__init__()
            self.dropout = dropout
            self.encoder = nn.Conv2d(3, 64, 3, padding=1)
            self.decoder = nn.Conv2d(64, 1, 1)

        def forward(self, x):
            x = self.encoder(x)
            if self.dropout is True:
                x = dropout2d(x)
            return self.decoder(x)
    # https://github.com/Linardos/SalEMA/issues/6
    """,
    # A domain-adaptation classifier head with an in-place functional dropout.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Class_classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(48 * 4 * 4, 100)
            self.fc2 = nn.Linear(100, 100)
            self.fc3 = nn.Linear(100, 10)

        def forward(self, x):
            logits = F.relu(self.fc1(x))
            logits = self.fc2(F.dropout(logits))
            return self.fc3(F.relu(logits))
    # https://github.com/CuthbertCai/pytorch_DANN/issues/14
    """,
    # A dropout layer built and called inside forward: eval() never reaches it.
    """
    import torch.nn as nn

    class ResNet(nn.Module):
        def __init__(self, block_expansion=4, num_classes=200):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512 * block_expansion, num_classes)

        def forward(self, x):
            x = self.avgpool(x).flatten(1)
            x = nn.Dropout(p=0.5)(x)
            return self.fc(x)
    # https://github.com/yangze0930/NTS-Net/issues/14
    """,
    # Rotary attention passes its dropout rate to SDPA whatever the mode.
    """
    import torch
    import torch.nn as nn

    class RoPEMHA(nn.Module):
        def __init__(self, embed_dim, num_heads, dropout=0.1):
            super().__init__()
            self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
            self.num_heads = num_heads
            self.dropout = dropout

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout)
    # https://github.com/speechbrain/speechbrain/issues/2888
    """,
    # A face-attribute model whose last dropout is functional.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class FaceAttrModel(nn.Module):
        def __init__(self, backbone, n_attrs=40):
            super().__init__()
            self.backbone = backbone
            self.classifier = nn.Linear(512, n_attrs)

        def forward(self, x):
            feat = self.backbone(x)
            feat = F.dropout(feat, p=0.5)
            return self.classifier(feat)
    # https://github.com/ewrfcas/face_attribute_classification_pytorch/issues/1
    """,
]

LOOKALIKES = [
    # The fixed embedding dropout: training=self.training.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class SentEncoder(nn.Module):
        def __init__(self, args, embedder):
            super().__init__()
            self.args = args
            self.embedder = embedder
            self.rnn = nn.LSTM(300, 512, batch_first=True)

        def forward(self, words):
            out = self.embedder(words)
            out = F.dropout(out, p=self.args.emb_dropout, training=self.training)
            return self.rnn(out)[0]
    # https://github.com/facebookresearch/DME/issues/3
    """,
    # The fix: an nn.Dropout module built in __init__.
    """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.linear = nn.Linear(size, size)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x, y):
            score = torch.softmax(self.linear(x) @ y.transpose(-1, -2), -1)
            return self.dropout(score) @ y
    # https://github.com/Academic-Hammer/SciTSR/pull/16
    """,
    # The fixed AFM: the flag passed through.
    """
    import torch
    import torch.nn.functional as F

    class AttentionalFactorizationMachine(torch.nn.Module):
        def __init__(self, embed_dim, attn_size, dropouts):
            super().__init__()
            self.attention = torch.nn.Linear(embed_dim, attn_size)
            self.projection = torch.nn.Linear(attn_size, 1)
            self.fc = torch.nn.Linear(embed_dim, 1)
            self.dropouts = dropouts

        def forward(self, inner_product):
            attn_scores = F.relu(self.attention(inner_product))
            attn_scores = F.softmax(self.projection(attn_scores), dim=1)
            attn_scores = F.dropout(attn_scores, p=self.dropouts[0], training=self.training)
            attn_output = torch.sum(attn_scores * inner_product, dim=1)
            attn_output = F.dropout(attn_output, p=self.dropouts[1], training=self.training)
            return self.fc(attn_output)
    # https://github.com/rixwew/pytorch-fm/issues/21
    """,
    # The fixed DANN head: self.dropout = nn.Dropout() in __init__.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Class_classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(48 * 4 * 4, 100)
            self.fc2 = nn.Linear(100, 100)
            self.fc3 = nn.Linear(100, 10)
            self.dropout = nn.Dropout()

        def forward(self, x):
            logits = F.relu(self.fc1(x))
            logits = self.fc2(self.dropout(logits))
            return self.fc3(F.relu(logits))
    # https://github.com/CuthbertCai/pytorch_DANN/issues/14
    """,
    # The fixed ResNet: the dropout layer registered once.
    """
    import torch.nn as nn

    class ResNet(nn.Module):
        def __init__(self, block_expansion=4, num_classes=200):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.dropout = nn.Dropout(p=0.5)
            self.fc = nn.Linear(512 * block_expansion, num_classes)

        def forward(self, x):
            x = self.avgpool(x).flatten(1)
            return self.fc(self.dropout(x))
    # https://github.com/yangze0930/NTS-Net/issues/14
    """,
    # The fixed rotary attention: no dropout outside training.
    """
    import torch
    import torch.nn as nn

    class RoPEMHA(nn.Module):
        def __init__(self, embed_dim, num_heads, dropout=0.1):
            super().__init__()
            self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
            self.num_heads = num_heads
            self.dropout = dropout

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout if self.training else 0.0)
    # https://github.com/speechbrain/speechbrain/issues/2888
    """,
    # The encoder's last dropout already takes the training flag.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Encoder(nn.Module):
        def __init__(self, dropout=0.1):
            super().__init__()
            self.proj = nn.Linear(512, 512)
            self.dropout = dropout

        def forward(self, x):
            x = self.proj(x)
            return F.dropout(x, p=self.dropout, training=self.training)
    # https://github.com/wenwenyu/PICK-pytorch/issues/77
    """,
    # Tacotron 2's prenet keeps dropout on at inference on purpose, written as training=True.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class Prenet(nn.Module):
        def __init__(self, in_dim, sizes):
            super().__init__()
            in_sizes = [in_dim] + sizes[:-1]
            self.layers = nn.ModuleList([nn.Linear(i, o, bias=False) for i, o in zip(in_sizes, sizes)])

        def forward(self, x):
            for linear in self.layers:
                x = F.dropout(F.relu(linear(x)), p=0.5, training=True)
            return x
    # https://github.com/BogiHsu/Tacotron2-PyTorch/issues/8
    """,
    # The fixed SimpleNet: nn.Dropout2d defined in __init__.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class SimpleNet(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
            self.drp = nn.Dropout2d(0.1)
            self.classifier = nn.Linear(64, classes)

        def forward(self, x):
            out = self.features(x)
            out = F.max_pool2d(out, kernel_size=out.size()[2:])
            out = self.drp(out)
            return self.classifier(out.view(out.size(0), -1))
    # https://github.com/Coderx7/SimpleNet/issues/2
    """,
    # The documentation issue's advice: nn.Dropout disables itself in eval mode.
    """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self, p=0.2):
            super(Net, self).__init__()
            self.dropout = nn.Dropout(p)

        def forward(self, x):
            return self.dropout(x)
    # https://github.com/pytorch/pytorch/issues/26338
    """,
    # The SalEMA fix: the functional dropout follows the module's mode.
    """
    import torch.nn as nn
    from torch.nn.functional import dropout2d

    class SalEMA(nn.Module):
        def __init__(self, dropout=True):
            super().__init__()
            self.dropout = dropout
            self.encoder = nn.Conv2d(3, 64, 3, padding=1)
            self.decoder = nn.Conv2d(64, 1, 1)

        def forward(self, x):
            x = self.encoder(x)
            if self.dropout is True:
                x = dropout2d(x, training=self.training)
            return self.decoder(x)
    # https://github.com/Linardos/SalEMA/issues/6
    """,
]
