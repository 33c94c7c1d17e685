"""TL005 unused-layer: a layer built in ``__init__`` that ``forward`` never runs, from public
reports (DDP's "Expected to have finished reduction" error, a head or a block silently left
out of the network), and their fixes or correct shapes: the layer used in forward, deleted, or
read by another method."""

from tests.rules.reports import Report

BUGS = [
    # FCOS head: a convolution defined and not used breaks distributed training.
    """
    import torch.nn as nn

    class FCOSHead(nn.Module):
        def __init__(self, in_channels, num_classes):
            super().__init__()
            self.cls_tower = nn.Conv2d(in_channels, in_channels, 3, padding=1)
            self.cls_logits = nn.Conv2d(in_channels, num_classes, 3, padding=1)
            self.extra_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)

        def forward(self, x):
            return [self.cls_logits(self.cls_tower(f)) for f in x]
    # https://github.com/tianzhi0549/FCOS/issues/217
    """,
    # MiSiCNet: layer2 defined but not used in forward.
    """
    import torch
    import torch.nn as nn

    class MiSiCNet(nn.Module):
        def __init__(self, L, p):
            super().__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(L, 256, 3, padding=1), nn.BatchNorm2d(256), nn.LeakyReLU(0.1))
            self.layer2 = nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.BatchNorm2d(256), nn.LeakyReLU(0.1))
            self.layer3 = nn.Sequential(nn.Conv2d(256 + L, 256, 3, padding=1), nn.BatchNorm2d(256))
            self.layer4 = nn.Conv2d(256, p, 1)

        def forward(self, x):
            x1 = self.layer1(x)
            x3 = self.layer3(torch.cat([x1, x], 1))
            return torch.softmax(self.layer4(x3), 1)
    # https://github.com/inria-thoth/HySUPP/issues/3
    """,
    # A batch norm for the cell state built and never applied.
    """
    import torch.nn as nn

    class NormLSTMCell(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.weight_ih = nn.Linear(input_size, 4 * hidden_size)
            self.weight_hh = nn.Linear(hidden_size, 4 * hidden_size)
            self.batchnorm_h = nn.BatchNorm1d(4 * hidden_size)
            self.batchnorm_c = nn.BatchNorm1d(hidden_size)

        def forward(self, x, state):
            h, c = state
            gates = self.batchnorm_h(self.weight_ih(x) + self.weight_hh(h))
            i, f, g, o = gates.chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            return o.sigmoid() * c.tanh(), c
    # https://github.com/houlu369/Normalized-Quantized-LSTM/issues/1
    """,
    # The example in SpeechBrain's DP/DDP fix: two convolutions no forward runs.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class MyModelUnused(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3, 1, 1)
            self.conv2 = nn.Conv2d(6, 12, 3, 1, 1)
            self.fc = nn.Linear(12 * 6 * 6, 2)
            self.conv_unused1 = nn.Conv2d(12, 24, 3, 1, 1)
            self.conv_unused2 = nn.Conv2d(24, 12, 3, 1, 1)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc(x.view(x.size(0), -1))
    # https://github.com/speechbrain/speechbrain/pull/713
    """,
    # padertorch's ConvNet kept modules it never ran.
    """
    import torch.nn as nn

    class ConvNet(nn.Module):
        def __init__(self, in_channels, hidden_channels, out_channels):
            super().__init__()
            self.input_conv = nn.Conv1d(in_channels, hidden_channels, 3, padding=1)
            self.output_conv = nn.Conv1d(hidden_channels, out_channels, 1)
            self.norm = nn.BatchNorm1d(hidden_channels)

        def forward(self, x):
            return self.output_conv(self.input_conv(x).relu())
    # https://github.com/fgnt/padertorch/pull/128
    """,
    # GaNDLF's VGG: the final layer from the config built, never used in the forward pass.
    """
    import torch.nn as nn

    class VGG(nn.Module):
        def __init__(self, features, n_classes, final_convolution_layer):
            super().__init__()
            self.features = features
            self.classifier = nn.Sequential(nn.Linear(512, 4096), nn.ReLU(True), nn.Linear(4096, n_classes))
            self.final_convolution_layer = nn.Conv2d(n_classes, n_classes, 1)

        def forward(self, x):
            x = self.features(x)
            return self.classifier(x.flatten(1))
    # https://github.com/mlcommons/GaNDLF/issues/168
    """,
    # AtlasNetV2: a deformation layer defined and not used.
    """
    import torch.nn as nn

    class PointTransLinAdj(nn.Module):
        def __init__(self, dim=3, npoint=2500):
            super().__init__()
            self.conv1 = nn.Conv1d(dim, 64, 1)
            self.conv2 = nn.Conv1d(64, 128, 1)
            self.deformation = nn.Conv1d(128, dim * dim, 1)
            self.linear = nn.Conv1d(128, dim, 1)

        def forward(self, x):
            return self.linear(self.conv2(self.conv1(x).relu()).relu())
    # https://github.com/theodeprelle/AtlasNetV2/issues/13
    """,
    # RLE's regression model: self.fcs created, never used.
    """
    import torch.nn as nn

    class RegressFlow(nn.Module):
        def __init__(self, feature_channel, num_joints):
            super().__init__()
            self.preact = nn.Conv2d(3, feature_channel, 3)
            self.avg_pool = nn.AdaptiveAvgPool2d(1)
            self.fcs = nn.Sequential(nn.Linear(feature_channel, 1024), nn.ReLU())
            self.fc_coord = nn.Linear(feature_channel, num_joints * 2)

        def forward(self, x):
            feat = self.avg_pool(self.preact(x)).flatten(1)
            return self.fc_coord(feat)
    # https://github.com/jeffffffli/res-loglikelihood-regression/issues/27
    """,
    # conformer: the FC layer is built but forward does not call it.
    """
    import torch.nn as nn

    class Conformer(nn.Module):
        def __init__(self, num_classes, input_dim=80, encoder_dim=512):
            super().__init__()
            self.encoder = nn.LSTM(input_dim, encoder_dim, batch_first=True)
            self.fc = nn.Linear(encoder_dim, num_classes, bias=False)

        def forward(self, inputs, input_lengths):
            encoder_outputs, _ = self.encoder(inputs)
            return encoder_outputs.log_softmax(dim=-1), input_lengths
    # https://github.com/sooftware/conformer/issues/44
    """,
    # BLIP VQA modified for another task: a head whose parameters never reach the loss.
    """
    import torch.nn as nn

    class BLIP_VQA(nn.Module):
        def __init__(self, visual_encoder, text_encoder, text_decoder, num_answers):
            super().__init__()
            self.visual_encoder = visual_encoder
            self.text_encoder = text_encoder
            self.text_decoder = text_decoder
            self.cls_head = nn.Linear(768, num_answers)

        def forward(self, image, question, answer):
            image_embeds = self.visual_encoder(image)
            question_output = self.text_encoder(question, image_embeds)
            return self.text_decoder(answer, question_output)
    # https://github.com/salesforce/BLIP/issues/180
    """,
]

LOOKALIKES = [
    # The FCOS head with the extra convolution deleted.
    """
    import torch.nn as nn

    class FCOSHead(nn.Module):
        def __init__(self, in_channels, num_classes):
            super().__init__()
            self.cls_tower = nn.Conv2d(in_channels, in_channels, 3, padding=1)
            self.cls_logits = nn.Conv2d(in_channels, num_classes, 3, padding=1)

        def forward(self, x):
            return [self.cls_logits(self.cls_tower(f)) for f in x]
    # https://github.com/tianzhi0549/FCOS/issues/217
    """,
    # MiSiCNet with layer2 in the forward pass.
    """
    import torch
    import torch.nn as nn

    class MiSiCNet(nn.Module):
        def __init__(self, L, p):
            super().__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(L, 256, 3, padding=1), nn.BatchNorm2d(256), nn.LeakyReLU(0.1))
            self.layer2 = nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.BatchNorm2d(256), nn.LeakyReLU(0.1))
            self.layer3 = nn.Sequential(nn.Conv2d(256 + L, 256, 3, padding=1), nn.BatchNorm2d(256))
            self.layer4 = nn.Conv2d(256, p, 1)

        def forward(self, x):
            x1 = self.layer2(self.layer1(x))
            x3 = self.layer3(torch.cat([x1, x], 1))
            return torch.softmax(self.layer4(x3), 1)
    # https://github.com/inria-thoth/HySUPP/issues/3
    """,
    # The cell with its batch norm applied to the cell state.
    """
    import torch.nn as nn

    class NormLSTMCell(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.weight_ih = nn.Linear(input_size, 4 * hidden_size)
            self.weight_hh = nn.Linear(hidden_size, 4 * hidden_size)
            self.batchnorm_h = nn.BatchNorm1d(4 * hidden_size)
            self.batchnorm_c = nn.BatchNorm1d(hidden_size)

        def forward(self, x, state):
            h, c = state
            gates = self.batchnorm_h(self.weight_ih(x) + self.weight_hh(h))
            i, f, g, o = gates.chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            return o.sigmoid() * self.batchnorm_c(c).tanh(), c
    # https://github.com/houlu369/Normalized-Quantized-LSTM/issues/1
    """,
    # SpeechBrain's MyModel: every layer used.
    """
    import torch.nn as nn
    import torch.nn.functional as F

    class MyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3, 1, 1)
            self.conv2 = nn.Conv2d(6, 12, 3, 1, 1)
            self.fc = nn.Linear(12 * 6 * 6, 2)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc(x.view(x.size(0), -1))
    # https://github.com/speechbrain/speechbrain/pull/713
    """,
    # A layer forward runs only under a branch (jukebox's layers used alternately) is used.
    """
    import torch.nn as nn

    class ConvNet(nn.Module):
        def __init__(self, in_channels, hidden_channels, out_channels, use_norm=True):
            super().__init__()
            self.use_norm = use_norm
            self.input_conv = nn.Conv1d(in_channels, hidden_channels, 3, padding=1)
            self.output_conv = nn.Conv1d(hidden_channels, out_channels, 1)
            self.norm = nn.BatchNorm1d(hidden_channels)

        def forward(self, x):
            h = self.input_conv(x)
            if self.use_norm:
                h = self.norm(h)
            return self.output_conv(h.relu())
    # https://github.com/openai/jukebox/issues/252
    """,
    # GaNDLF's fix: the final layer applied.
    """
    import torch.nn as nn

    class VGG(nn.Module):
        def __init__(self, features, n_classes, final_convolution_layer):
            super().__init__()
            self.features = features
            self.classifier = nn.Sequential(nn.Linear(512, 4096), nn.ReLU(True), nn.Linear(4096, n_classes))
            self.final_convolution_layer = final_convolution_layer

        def forward(self, x):
            x = self.classifier(self.features(x).flatten(1))
            return self.final_convolution_layer(x)
    # https://github.com/mlcommons/GaNDLF/issues/168
    """,
    # A layer used by another method of the model that forward calls.
    """
    import torch.nn as nn

    class PointTransLinAdj(nn.Module):
        def __init__(self, dim=3, npoint=2500):
            super().__init__()
            self.conv1 = nn.Conv1d(dim, 64, 1)
            self.conv2 = nn.Conv1d(64, 128, 1)
            self.deformation = nn.Conv1d(128, dim * dim, 1)
            self.linear = nn.Conv1d(128, dim, 1)

        def deform(self, feat):
            return self.deformation(feat)

        def forward(self, x):
            feat = self.conv2(self.conv1(x).relu()).relu()
            return self.linear(feat), self.deform(feat)
    # https://github.com/theodeprelle/AtlasNetV2/issues/13
    """,
    # RLE with self.fcs deleted, as the maintainer says.
    """
    import torch.nn as nn

    class RegressFlow(nn.Module):
        def __init__(self, feature_channel, num_joints):
            super().__init__()
            self.preact = nn.Conv2d(3, feature_channel, 3)
            self.avg_pool = nn.AdaptiveAvgPool2d(1)
            self.fc_coord = nn.Linear(feature_channel, num_joints * 2)

        def forward(self, x):
            feat = self.avg_pool(self.preact(x)).flatten(1)
            return self.fc_coord(feat)
    # https://github.com/jeffffffli/res-loglikelihood-regression/issues/27
    """,
    # conformer's fix: the FC layer in forward.
    """
    import torch.nn as nn

    class Conformer(nn.Module):
        def __init__(self, num_classes, input_dim=80, encoder_dim=512):
            super().__init__()
            self.encoder = nn.LSTM(input_dim, encoder_dim, batch_first=True)
            self.fc = nn.Linear(encoder_dim, num_classes, bias=False)

        def forward(self, inputs, input_lengths):
            encoder_outputs, _ = self.encoder(inputs)
            return self.fc(encoder_outputs).log_softmax(dim=-1), input_lengths
    # https://github.com/sooftware/conformer/issues/44
    """,
    # A layer read from the training script through the model (`model.cls_head(...)`).
    Report(files={
        "models/blip_vqa.py": '''
            import torch.nn as nn

            class BLIP_VQA(nn.Module):
                def __init__(self, visual_encoder, text_encoder, num_answers):
                    super().__init__()
                    self.visual_encoder = visual_encoder
                    self.text_encoder = text_encoder
                    self.cls_head = nn.Linear(768, num_answers)

                def forward(self, image, question):
                    return self.text_encoder(question, self.visual_encoder(image))
            ''',
        "train_vqa.py": '''
            import torch.nn.functional as F
            from models.blip_vqa import BLIP_VQA

            def train(model, loader, optimizer):
                for image, question, answer in loader:
                    hidden = model(image, question)
                    loss = F.cross_entropy(model.cls_head(hidden[:, 0]), answer)
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
            # https://github.com/salesforce/BLIP/issues/180
            ''',
    }),
    # Only part of a pretrained net used: the rest frozen and never in forward is still unused,
    # so the look-alike is the pruned version that keeps the used part only.
    """
    import torch.nn as nn
    import torchvision

    class C3DFeatures(nn.Module):
        def __init__(self):
            super().__init__()
            backbone = torchvision.models.video.r3d_18(weights=None)
            self.stem = backbone.stem
            self.layer1 = backbone.layer1

        def forward(self, x):
            return self.layer1(self.stem(x))
    # https://github.com/pytorch/pytorch/issues/9976
    """,
]
