"""TL025's cases from public reports: losses built with ``size_average=``/``reduce=``
(deprecated since PyTorch 0.4.1) and a PackedSequence unpacked into two names (four fields since
1.1); and the fixes and shapes that look like them."""

BUGS = [
    """
    from torch.nn.utils.rnn import pack_padded_sequence
    def train_step(decoder, imgs, caps, caplens, criterion):
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)
        targets = caps_sorted[:, 1:]
        scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        targets, _ = pack_padded_sequence(targets, decode_lengths, batch_first=True)
        return criterion(scores, targets)
    # https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/161
    """,
    """
    from torch.nn.utils.rnn import pack_padded_sequence
    def validate(decoder, imgs, caps, caplens, criterion):
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)
        scores_copy = scores.clone()
        scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        return criterion(scores, caps_sorted[:, 1:]), scores_copy
    # https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/123
    """,
    """
    import torch.nn as nn
    def loss_of(scores, targets, decode_lengths):
        scores, _ = nn.utils.rnn.pack_padded_sequence(scores, decode_lengths, batch_first=True)
        targets, _ = nn.utils.rnn.pack_padded_sequence(targets, decode_lengths, batch_first=True)
        return nn.functional.cross_entropy(scores, targets)
    # https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/75
    """,
    """
    import torch
    def train(predictions, targets, decode_lengths, criterion):
        packed = torch.nn.utils.rnn.pack_padded_sequence(predictions, decode_lengths, batch_first=True)
        scores, batch_sizes = packed
        return criterion(scores, targets)
    # https://github.com/fawazsammani/knowing-when-to-look-adaptive-attention/issues/12
    """,
    """
    import torch
    import torch.nn.functional as F
    def test(model, test_loader):
        test_loss = 0
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, size_average=False).item()
        return test_loss / len(test_loader.dataset)
    # https://github.com/kymatio/kymatio/issues/180
    """,
    """
    import torch.nn as nn
    loss_fn = nn.MSELoss(size_average=False)
    def step(model, x, y):
        return loss_fn(model(x), y)
    # https://github.com/jessicayung/blog-code-snippets/issues/5
    """,
    """
    import torch.nn as nn
    class Yolo_loss(nn.Module):
        def forward(self, output, target, obj_mask, tgt_mask, tgt_scale):
            bceloss = nn.BCELoss(weight=tgt_scale * tgt_scale, size_average=False)
            return bceloss(output * tgt_mask, target * tgt_mask)
    # https://github.com/Tianxiaomo/pytorch-YOLOv4/pull/192
    """,
    """
    import torch.nn.functional as F
    def segmentation_loss(outputs, targets, weights):
        loss = F.binary_cross_entropy_with_logits(outputs, targets, reduce=False)
        return (loss * weights).mean()
    # https://github.com/neptune-ai/open-solution-mapping-challenge/issues/184
    """,
    """
    import torch.nn as nn
    class Seq2SeqLoss:
        def __init__(self, weight, mask):
            self.criterion = nn.NLLLoss(weight=weight, size_average=True)
            self.mask = mask
    # https://github.com/IBM/pytorch-seq2seq/pull/190
    """,
    """
    import torch.nn as nn
    bce_loss = nn.BCELoss(size_average=True)
    def muti_bce_loss_fusion(d0, d1, labels_v):
        return bce_loss(d0, labels_v) + bce_loss(d1, labels_v)
    # https://github.com/xuebinqin/DIS/issues/35
    """,
    """
    import torch.nn as nn
    class CapsuleLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.reconstruction_loss = nn.MSELoss(size_average=False)
    # https://github.com/cezannec/capsule_net_pytorch/pull/2
    """,
    """
    import torch.nn as nn
    def MSEloss(inputs, targets, size_average=False):
        mask = targets != 0
        num_ratings = mask.sum().float()
        criterion = nn.MSELoss(size_average=size_average)
        return criterion(inputs * mask.float(), targets), num_ratings
    # https://github.com/NVIDIA/DeepRecommender/pull/27
    """,
    """
    import torch.nn as nn
    class SINLLLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.nll = nn.NLLLoss(reduce=False)
    # https://github.com/microsoft/BackwardCompatibilityML/issues/64
    """,
]

LOOKALIKES = [
    """
    from torch.nn.utils.rnn import pack_padded_sequence
    def loss_of(predictions, targets, decode_lengths, criterion):
        scores = pack_padded_sequence(predictions, decode_lengths, batch_first=True)[0]
        targets = pack_padded_sequence(targets, decode_lengths, batch_first=True)[0]
        return criterion(scores, targets)
    # https://github.com/fawazsammani/knowing-when-to-look-adaptive-attention/issues/12
    """,
    """
    from torch.nn.utils.rnn import pack_padded_sequence
    def loss_of(scores, targets, decode_lengths, criterion):
        scores, *_ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        return criterion(scores, targets)
    # https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/123
    """,
    """
    from torch.nn.utils.rnn import pack_padded_sequence
    def loss_of(scores, targets, decode_lengths, criterion):
        scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
        targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data
        return criterion(scores, targets)
    # https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/pull/125
    """,
    """
    import torch.nn as nn
    class RNN(nn.Module):
        def forward(self, text, text_lengths):
            embedded = self.dropout(self.embedding(text))
            packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to("cpu"))
            packed_output, (hidden, cell) = self.rnn(packed_embedded)
            output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
            return self.fc(hidden[-1])
    # https://github.com/bentrevett/pytorch-sentiment-analysis/issues/38
    """,
    """
    import torch.nn.functional as F
    def test(model, test_loader):
        test_loss = 0
        for data, target in test_loader:
            test_loss += F.nll_loss(model(data), target, reduction="sum").item()
        return test_loss / len(test_loader.dataset)
    # https://github.com/kymatio/kymatio/issues/180
    """,
    """
    import torch.nn as nn
    class Seq2SeqLoss:
        def __init__(self, weight):
            self.criterion = nn.NLLLoss(weight=weight, reduction="mean")
    # https://github.com/IBM/pytorch-seq2seq/pull/190
    """,
    """
    import torch.nn as nn
    class CapsuleLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.reconstruction_loss = nn.MSELoss(reduction="sum")
    # https://github.com/cezannec/capsule_net_pytorch/pull/2
    """,
    """
    from machine.loss import NLLLoss, Perplexity
    loss = NLLLoss(size_average=True)
    ppl = Perplexity(size_average=False)
    # https://github.com/i-machine-think/machine/issues/56
    """,
    """
    from torchcrf import CRF
    def nll(crf: CRF, emissions, tags, mask):
        return -crf(emissions, tags, mask=mask, reduction="mean")
    # https://github.com/kmkurn/pytorch-crf/issues/10
    """,
    """
    import torch
    def node_max(x, edge_index, num_nodes):
        out = torch.zeros(num_nodes, x.size(1))
        return out.scatter_reduce(0, edge_index[0].unsqueeze(-1).expand_as(x), x, reduce="amax", include_self=False)
    # https://github.com/pytorch/pytorch/issues/63780
    """,
    """
    import torch
    def scatter_add(dim, index, output):
        output.scatter_(dim, index, 1.0, reduce="add")
        return output
    # https://github.com/pytorch/pytorch/issues/63265
    """,
    """
    import torch.nn as nn
    def build(ignore_index):
        return nn.CrossEntropyLoss(reduction="elementwise_mean", ignore_index=ignore_index)
    # https://github.com/pytorch/pytorch/issues/15186
    """,
]
