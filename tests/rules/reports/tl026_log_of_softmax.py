"""TL026's cases from public reports: the log taken of a softmax's or a sigmoid's output
(-inf and NaN gradients once it underflows to 0); and the stable forms and guarded logs that
look like them."""

BUGS = [
    """
    import torch
    import torch.nn as nn
    sm = nn.Softmax(dim=1)
    crit = nn.NLLLoss()
    def step(model, data, target, optimizer):
        optimizer.zero_grad()
        loss = crit(torch.log(sm(model(data))), target)
        loss.backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/issues/1620
    """,
    """
    import torch
    def forward(self, premise, hypothesis, labels):
        label_logits = self.classify(premise, hypothesis).squeeze(1)
        label_probs = torch.nn.functional.softmax(label_logits, dim=-1)
        log_label_probs = -torch.log(label_probs)
        return torch.sum(log_label_probs * labels.float())
    # https://github.com/allenai/allennlp/issues/2797
    """,
    """
    import torch
    def reward_loss(chosen_rewards, rejected_rewards):
        loss = 0
        for c, r in zip(chosen_rewards, rejected_rewards):
            loss += -torch.log(torch.sigmoid(c - r)).mean()
        return loss / len(chosen_rewards)
    # https://github.com/deepspeedai/DeepSpeedExamples/issues/423
    """,
    """
    import torch
    class RewardModel(torch.nn.Module):
        def forward(self, input_ids):
            rewards = self.v_head(self.rwtranrsformer(input_ids)[0]).squeeze(-1)
            chosen, rejected = rewards.chunk(2)
            c_truncated_reward, r_truncated_reward = chosen[:, -8:], rejected[:, -8:]
            return -torch.log(torch.sigmoid(c_truncated_reward - r_truncated_reward)).mean()
    # https://github.com/deepspeedai/DeepSpeedExamples/pull/501
    """,
    """
    import torch
    class EntropyDetector:
        def __init__(self, model):
            self.model = model

        def predict(self, x):
            p = self.model(x).softmax(dim=1)
            return -(p * torch.log(p)).sum(dim=1)
    # https://github.com/kkirchheim/pytorch-ood/issues/84
    """,
    """
    import torch
    def bpr_loss(users, pos_items, neg_items):
        pos_scores = (users * pos_items).sum(dim=1)
        neg_scores = (users * neg_items).sum(dim=1)
        maxi = torch.log(torch.sigmoid(pos_scores - neg_scores))
        return -maxi.mean()
    # https://github.com/xiangwang1223/neural_graph_collaborative_filtering/issues/43
    """,
    """
    import torch
    import torch.nn.functional as F
    def anchor_loss(input, target, gamma=0.5):
        pt = torch.sigmoid(input)
        logpt_pos = torch.log(torch.sigmoid(input))
        logpt_neg = F.logsigmoid(-input)
        return -(target * logpt_pos * (1 - pt) ** gamma + (1 - target) * logpt_neg).mean()
    # https://github.com/slryou41/AnchorLoss/issues/2
    """,
    """
    import torch
    def manual_bce(x, y):
        return -(y * torch.log(torch.sigmoid(x)) + (1 - y) * torch.log(1 - torch.sigmoid(x)))
    # https://github.com/pytorch/pytorch/issues/135359
    """,
    """
    import torch
    import torch.nn.functional as F
    def pick_neg_log_softmax(scores, k):
        return -torch.log(F.softmax(scores, dim=-1))[k]
    # https://github.com/clab/dynet/issues/1412
    """,
    """
    import torch
    def log_sigmoid(x):
        return torch.log(torch.sigmoid(x))
    # https://github.com/clab/dynet/issues/1217
    """,
    """
    import torch
    import torch.nn.functional as F
    def get_loss(module, X, y):
        y_pred = F.softmax(module(X), dim=-1)
        return F.nll_loss(torch.log(y_pred), y)
    # https://github.com/skorch-dev/skorch/issues/481
    """,
]

LOOKALIKES = [
    """
    import torch
    class EntropyDetector:
        def __init__(self, model):
            self.model = model

        def predict(self, x):
            p = self.model(x).softmax(dim=1)
            return -(p * torch.log(p.clamp(1e-7, 1))).sum(dim=1)
    # https://github.com/kkirchheim/pytorch-ood/pull/85
    """,
    """
    import torch
    class RewardModel(torch.nn.Module):
        def forward(self, input_ids):
            rewards = self.v_head(self.rwtranrsformer(input_ids)[0]).squeeze(-1)
            chosen, rejected = rewards.chunk(2)
            return -torch.nn.functional.logsigmoid(chosen - rejected).mean()
    # https://github.com/deepspeedai/DeepSpeedExamples/pull/501
    """,
    """
    import torch.nn as nn
    def reward_loss(c_truncated_reward, r_truncated_reward):
        return nn.functional.softplus(r_truncated_reward - c_truncated_reward).mean()
    # https://github.com/deepspeedai/DeepSpeedExamples/issues/423
    """,
    """
    import torch.nn as nn
    import torch.nn.functional as F
    def kd_loss(y_s, y_t, T):
        return nn.KLDivLoss(reduction="batchmean")(F.log_softmax(y_s / T, dim=1), F.softmax(y_t / T, dim=1)) * T * T
    # https://github.com/zhengli97/CTKD/issues/4
    """,
    """
    import torch
    import torch.nn.functional as F
    def kl_loss(input_logit, target_logit):
        prob = F.softmax(target_logit, dim=-1)
        kl = torch.sum(prob * (F.log_softmax(target_logit, dim=-1) - F.log_softmax(input_logit, dim=-1)), 1)
        return torch.mean(kl)
    # https://github.com/mepeichun/Efficient-Neural-Network-Bilibili/issues/1
    """,
    """
    import torch
    def get_loss(self, y_pred, y_true):
        y_pred = torch.log(y_pred + self.epsilon)
        return self.criterion_(y_pred, y_true)
    # https://github.com/skorch-dev/skorch/issues/481
    """,
    """
    import torch
    def bpr_loss(pos_scores, neg_scores):
        maxi = torch.log(torch.clamp(torch.sigmoid(pos_scores - neg_scores), 1e-8, 1))
        return -maxi.mean()
    # https://github.com/xiangwang1223/neural_graph_collaborative_filtering/issues/43
    """,
    """
    import torch
    import torch.nn.functional as F
    def entropy_from_logits(logits, chunk_size=128):
        entropies = []
        for chunk in logits.split(chunk_size, dim=0):
            logps = F.log_softmax(chunk, dim=-1)
            entropies.append(-(torch.exp(logps) * logps).sum(-1))
        return torch.cat(entropies)
    # https://github.com/huggingface/trl/issues/7221
    """,
    """
    import torch
    import torch.nn.functional as F
    def entropy_from_logits(chunk):
        probs = F.softmax(chunk, dim=-1)
        return -torch.xlogy(probs, probs).sum(-1)
    # https://github.com/huggingface/trl/pull/7225
    """,
    """
    import torch.nn as nn
    lsm = nn.LogSoftmax(dim=1)
    crit = nn.NLLLoss()
    def step(model, data, target):
        loss_lsm = crit(lsm(model(data)), target)
        loss_lsm.backward()
    # https://github.com/pytorch/pytorch/issues/1620
    """,
    """
    import torch.nn.functional as F
    def reward_loss(good_reward, bad_reward):
        return -F.logsigmoid(good_reward - bad_reward).mean()
    # https://github.com/HarderThenHarder/transformers_tasks/issues/15
    """,
    """
    import torch
    def anchor_logpt(input):
        return torch.log(torch.sigmoid(input) + 1e-9)
    # https://github.com/slryou41/AnchorLoss/issues/2
    """,
    """
    import torch.nn.functional as F
    def distillation_loss(out_s, out_t, T):
        return F.kl_div(F.log_softmax(out_s / T, dim=1), F.softmax(out_t / T, dim=1), reduction="batchmean") * T * T
    # https://github.com/AberHu/Knowledge-Distillation-Zoo/issues/12
    """,
]
