"""TL029's cases from public reports: a log of, or a division by, a value the same code can make
exactly 0 (one minus a sigmoid or a softmax, a count of a mask, a softmax written by hand) with no
epsilon, clamp or guard; and the guarded forms that look like them."""

from tests.rules.reports import Report

_DIV = {"divisions": True}

BUGS = [
    """
    import torch
    def distil_loss(logits, teacher_logits, labels):
        teacher_probs = torch.softmax(teacher_logits, dim=-1)
        logprobs = torch.log_softmax(logits, dim=-1)
        x = torch.sum(teacher_probs * logprobs, dim=-1).view(-1)
        mask = (labels != -100).int()
        return -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    # https://github.com/microsoft/LMOps/issues/38
    """,
    """
    import torch.nn.functional as F
    class SSDLoss:
        def __call__(self, loc_preds, loc_targets, cls_preds, cls_targets):
            pos = cls_targets > 0
            num_pos = pos.sum().item()
            loc_loss = F.smooth_l1_loss(loc_preds[pos], loc_targets[pos], reduction="sum")
            cls_loss = F.cross_entropy(cls_preds.view(-1, cls_preds.size(-1)), cls_targets.view(-1), reduction="sum")
            return (loc_loss + cls_loss) / num_pos
    # https://github.com/kuangliu/torchcv/issues/35
    """,
    """
    import torch.nn.functional as F
    def chunked_ce(logits, labels, ignore_index=-100):
        num_label_tokens = (labels != ignore_index).sum()
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                               ignore_index=ignore_index, reduction="sum")
        return loss / num_label_tokens
    # https://github.com/NVIDIA-NeMo/Automodel/issues/3796
    """,
    """
    import torch
    import torch.nn as nn
    def loss_dcgan_dis(dis_out_real, dis_out_fake):
        ones = torch.ones_like(dis_out_fake)
        return -torch.mean(nn.LogSigmoid()(dis_out_real) + (ones - dis_out_fake.sigmoid()).log())
    # https://github.com/POSTECH-CVLab/PyTorch-StudioGAN/issues/67
    """,
    """
    import torch
    def focal_loss(classifications, targets, alpha=0.25, gamma=2.0):
        classification = torch.sigmoid(classifications)
        alpha_factor = torch.where(targets == 1., alpha, 1. - alpha)
        focal_weight = torch.where(targets == 1., 1. - classification, classification)
        bce = -(targets * torch.log(classification) + (1.0 - targets) * torch.log(1.0 - classification))
        return (alpha_factor * focal_weight ** gamma * bce).sum()
    # https://github.com/yhenon/pytorch-retinanet/issues/3
    """,
    """
    import torch
    def neg_loss(out, gt):
        pred = out.sigmoid()
        pos_inds = gt.eq(1).float()
        neg_inds = gt.lt(1).float()
        neg_weights = torch.pow(1 - gt, 4)
        pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos_inds
        neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg_inds
        return -(pos_loss.sum() + neg_loss.sum())
    # https://github.com/xingyizhou/CenterNet/pull/121
    """,
    """
    import torch
    def log_abs_det_jacobian(x, y):
        offset = (x.shape[-1] + 1) - x.new([1]).expand(x.shape).cumsum(-1)
        z = torch.sigmoid(x - offset.log())
        return ((1 - z).log() + y[..., :-1].log()).sum(-1)
    # https://github.com/pytorch/pytorch/pull/20288
    """,
    """
    import torch
    import torch.nn as nn
    class AnchorLoss(nn.Module):
        def forward(self, input, target):
            pt = torch.sigmoid(input)
            logpt_pos = torch.log(pt)
            logpt_neg = torch.log(1 - torch.sigmoid(input))
            return -(target * logpt_pos + (1 - target) * logpt_neg).mean()
    # https://github.com/slryou41/AnchorLoss/issues/2
    """,
    """
    import torch
    def loss_fn(logprobs, prev_logprobs, labels):
        mask = labels != 0
        lp_error = torch.abs(logprobs - prev_logprobs)
        return ((torch.exp(lp_error) * mask).sum() / mask.sum()).item()
    # https://github.com/NVIDIA-NeMo/RL/issues/158
    """,
    """
    import torch
    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    def cross_entropy(logits, y):
        probs = torch.exp(logits) / torch.exp(logits).sum(dim=1, keepdim=True)
        return -torch.log(probs[range(len(probs)), y]).mean()
    # https://github.com/zackchase/mxnet-the-straight-dope/issues/3
    """,
    """
    import torch
    import torch.nn as nn
    D = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())
    def d_loss(real, fake):
        return -torch.mean(torch.log(D(real)) + torch.log(1 - D(fake)))
    # https://github.com/soumith/ganhacks/issues/36
    """,
    """
    import torch
    def focal(x, y, eps=1e-7):
        p = torch.sigmoid(x)
        pos = (y > 0).float()
        num_pos = pos.sum()
        loss = -(pos * torch.log(p.clamp(min=eps)) + (1 - pos) * torch.log(1 - p)).sum()
        return loss / num_pos
    # https://github.com/NVIDIA/retinanet-examples/pull/93
    """,
]

LOOKALIKES = [
    """
    import torch
    def distil_loss(logits, teacher_logits, labels):
        teacher_probs = torch.softmax(teacher_logits, dim=-1)
        x = torch.sum(teacher_probs * torch.log_softmax(logits, dim=-1), dim=-1).view(-1)
        mask = (labels != -100).int()
        sum_masks = torch.sum(mask.view(-1), dim=0)
        if sum_masks == 0:
            return torch.tensor(0.0, device=x.device)
        return -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    # https://github.com/microsoft/LMOps/issues/38
    """,
    """
    class SSDLoss:
        def __call__(self, loc_loss, cls_loss, cls_targets):
            pos = cls_targets > 0
            num_pos = pos.sum().item()
            if num_pos > 0:
                return (loc_loss + cls_loss) / num_pos
            return loc_loss + cls_loss
    # https://github.com/kuangliu/torchcv/issues/35
    """,
    """
    import torch.nn.functional as F
    def masked_ce(logits, labels, ignore_index=-100):
        num_label_tokens = (labels != ignore_index).sum()
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                               ignore_index=ignore_index, reduction="sum")
        if num_label_tokens == 0:
            return loss * 0.0
        return loss / num_label_tokens
    # https://github.com/NVIDIA-NeMo/Automodel/pull/3797
    """,
    """
    import torch
    import torch.nn as nn
    def loss_dcgan_dis(dis_out_real, dis_out_fake):
        ones = torch.ones_like(dis_out_fake)
        return -torch.mean(nn.LogSigmoid()(dis_out_real) + (ones - dis_out_fake.sigmoid() + 1e-6).log())
    # https://github.com/POSTECH-CVLab/PyTorch-StudioGAN/issues/67
    """,
    """
    import torch
    def focal_loss(classifications, targets):
        classification = torch.clamp(torch.sigmoid(classifications), 1e-4, 1.0 - 1e-4)
        return -(targets * torch.log(classification) + (1.0 - targets) * torch.log(1.0 - classification)).sum()
    # https://github.com/yhenon/pytorch-retinanet/issues/3
    """,
    """
    import torch
    def _sigmoid(x):
        return torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)

    def neg_loss(out, gt):
        pred = _sigmoid(out)
        neg_inds = gt.lt(1).float()
        pos_inds = gt.eq(1).float()
        num_pos = pos_inds.float().sum()
        neg_loss = (torch.log(1 - pred) * torch.pow(pred, 2) * neg_inds).sum()
        pos_loss = (torch.log(pred) * torch.pow(1 - pred, 2) * pos_inds).sum()
        if num_pos == 0:
            return -neg_loss
        return -(pos_loss + neg_loss) / num_pos
    # https://github.com/xingyizhou/CenterNet/issues/234
    """,
    """
    import torch
    import torch.nn.functional as F
    def log_abs_det_jacobian(x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)
    # https://github.com/pytorch/pytorch/pull/20288
    """,
    """
    import torch.nn.functional as F
    def anchor_loss(input, target):
        logpt_pos = F.logsigmoid(input)
        logpt_neg = F.logsigmoid(-input)
        return -(target * logpt_pos + (1 - target) * logpt_neg).mean()
    # https://github.com/slryou41/AnchorLoss/issues/2
    """,
    """
    import torch
    def loss_fn(logprobs, prev_logprobs, labels):
        mask = labels != 0
        lp_error = torch.abs(logprobs - prev_logprobs)
        return ((torch.exp(lp_error) * mask).sum() / mask.sum().clamp(min=1)).item()
    # https://github.com/NVIDIA-NeMo/RL/issues/158
    """,
    """
    import torch
    def cross_entropy(logits, y):
        log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
        return -log_probs[range(len(log_probs)), y].mean()
    # https://github.com/zackchase/mxnet-the-straight-dope/issues/3
    """,
    """
    import torch
    def attention(energy):
        attention = torch.softmax(energy, dim=-1)
        return attention / (1e-9 + attention.sum(dim=1, keepdims=True))
    # https://github.com/MenghaoGuo/PCT/issues/13
    """,
    """
    import torch
    def aggregate(edge_e, edge_w):
        e_rowsum = (edge_e > 0).float().sum(1)
        e_rowsum[e_rowsum == 0.0] = 1e-12
        return edge_w / e_rowsum
    # https://github.com/deepakn97/relationPrediction/issues/31
    """,
]

# The divisions are reported with the rule's `divisions` option (off by default); every case
# is measured with it on, so that both families count.
BUGS = [Report(code, options=_DIV) for code in BUGS]
LOOKALIKES = [Report(code, options=_DIV) for code in LOOKALIKES]
