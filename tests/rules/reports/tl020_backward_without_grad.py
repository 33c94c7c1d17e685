"""TL020's cases from public reports: losses computed where autograd records nothing (a
no-grad block, an inference-mode decorator, a Lightning evaluation hook, a helper that turns
autograd off globally), and the correct shapes that look like them (a backward inside no_grad
after an ordinary forward, teachers and rollouts under no_grad, enable_grad inside)."""


BUGS = [
    """
    import torch
    from cog import BasePredictor

    class Predictor(BasePredictor):
        @torch.inference_mode()
        def predict(self, images, labels, steps: int = 10):
            optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
            for _ in range(steps):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(self.model(images), labels)
                loss.requires_grad_(True)
                loss.backward()
                optimizer.step()
            return self.model(images)
    # https://github.com/replicate/cog/issues/1681
    """,
    """
    import torch

    class Trainer:
        def val(self):
            self.set_eval()
            inputs = next(self.val_iter)
            with torch.no_grad():
                outputs, losses = self.process_batch(inputs)
                self.model_optimizer.zero_grad()
                losses["loss"].backward()
                self.model_optimizer.step()
                loss = losses["loss"] * 1.0
                loss.backward()
            self.set_train()
    # https://github.com/nianticlabs/monodepth2/issues/24
    """,
    """
    import torch
    import torch.nn.functional as F

    class Meta(torch.nn.Module):
        def forward(self, x_spt, y_spt, x_qry, y_qry):
            task_num = x_spt.size(0)
            loss_q = 0
            for i in range(task_num):
                logits = self.net(x_spt[i], vars=None, bn_training=True)
                grad = torch.autograd.grad(F.cross_entropy(logits, y_spt[i]), self.net.parameters())
                fast_weights = [p - self.update_lr * g for g, p in zip(grad, self.net.parameters())]
                with torch.no_grad():
                    logits_q = self.net(x_qry[i], fast_weights, bn_training=True)
                    loss_q = loss_q + F.cross_entropy(logits_q, y_qry[i])
            loss_q = loss_q / task_num
            self.meta_optim.zero_grad()
            loss_q.backward()
            self.meta_optim.step()
    # https://github.com/dragen1860/MAML-Pytorch/issues/40
    """,
    """
    import torch
    import pytorch_lightning as pl

    class KalmanNet(pl.LightningModule):
        def training_step(self, batch, batch_idx):
            return self.step(batch)

        def validation_step(self, batch, batch_idx):
            loss = self.step(batch)
            loss.backward()
            return loss

        def test_step(self, batch, batch_idx):
            loss = self.step(batch)
            self.manual_backward(loss)
    # https://github.com/Lightning-AI/pytorch-lightning/issues/19910
    """,
    """
    import torch

    def init_jit_model(model_path, device=torch.device("cpu")):
        torch.set_grad_enabled(False)
        model = torch.jit.load(model_path, map_location=device)
        model.eval()
        return model

    vad_model = init_jit_model("silero_vad.jit")
    for epoch in range(10):
        for x, y in train_loader:
            model.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    # https://github.com/snakers4/silero-vad/issues/192
    """,
    """
    import torch

    def init_jit_model(model_path):
        torch.set_grad_enabled(False)
        model = torch.jit.load(model_path)
        model.eval()
        return model

    def remove_speech(wav, vad):
        return wav[vad(wav, 16000) < 0.5]

    def main(train_loader, classifier, optimizer):
        vad = init_jit_model("files/silero_vad.jit")
        for wav, label in train_loader:
            logits = classifier(remove_speech(wav, vad))
            loss = torch.nn.functional.cross_entropy(logits, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/snakers4/silero-vad/issues/460
    """,
    """
    import torch

    def init_jit_model(model_url, device=torch.device("cpu")):
        torch.set_grad_enabled(False)
        model = torch.jit.load(model_url, map_location=device)
        model.eval()
        return model, Decoder(model.labels)

    stt, decoder = init_jit_model("en_v2_jit.model")
    head = torch.nn.Linear(999, 10)
    optimizer = torch.optim.Adam(head.parameters())
    for batch, target in loader:
        features = stt(batch)
        loss = torch.nn.functional.cross_entropy(head(features), target)
        loss.backward()
        optimizer.step()
    # https://github.com/snakers4/silero-models/issues/40
    """,
    """
    import torch

    def convert_pytorch(nlp, opset, output):
        torch.set_grad_enabled(False)
        input_names, output_names, dynamic_axes, tokens = infer_shapes(nlp, "pt")
        torch.onnx.export(nlp.model, tuple(tokens.values()), f=output.as_posix(), opset_version=opset)

    def test_export_then_train(nlp, model, batch, optimizer):
        convert_pytorch(nlp, 12, output_path)
        outputs = model(**batch)
        outputs.loss.backward()
        loss = outputs.loss
        loss.backward()
        optimizer.step()
    # https://github.com/huggingface/transformers/pull/13257
    """,
    """
    import torch

    def convert(nlp, opset, output):
        torch.set_grad_enabled(False)
        torch.onnx.export(nlp.model, nlp.dummy_inputs, f=output, opset_version=opset)

    convert(pipeline, 11, "model.onnx")
    model.train()
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    # https://github.com/huggingface/transformers/pull/13703
    """,
    """
    import torch

    @torch.inference_mode()
    def finetune_depther(depther, images, depths, optimizer):
        depther.train()
        for image, depth in zip(images, depths):
            optimizer.zero_grad()
            prediction = depther.whole_inference(image, img_meta=None, rescale=True)
            loss = torch.nn.functional.l1_loss(prediction, depth)
            loss.backward()
            optimizer.step()
    # https://github.com/facebookresearch/dinov2/issues/472
    """,
]

LOOKALIKES = [
    """
    import torch

    class Trainer:
        def fit_epoch(self):
            self.model.train()
            for batch in self.train_dataloader:
                loss = self.model.training_step(self.prepare_batch(batch))
                self.optim.zero_grad()
                with torch.no_grad():
                    loss.backward()
                    if self.gradient_clip_val > 0:
                        self.clip_gradients(self.gradient_clip_val, self.model)
                    self.optim.step()
    # https://github.com/d2l-ai/d2l-en/issues/2573
    """,
    """
    import torch
    import lightning as L

    class LightningModel(L.LightningModule):
        def training_step(self, batch, batch_idx):
            features, true_labels = batch
            logits = self(features)
            loss = torch.nn.functional.cross_entropy(logits, true_labels)
            self.log("train_loss", loss)
            self.model.eval()
            with torch.no_grad():
                predicted_labels = torch.argmax(logits, 1)
                self.train_acc(predicted_labels, true_labels)
            self.model.train()
            return loss
    # https://github.com/rasbt/faster-pytorch-blog/issues/8
    """,
    """
    import torch
    import torch.nn.functional as F

    def train(student, teacher, loader, optimizer, dist_criterion):
        for images, labels in loader:
            with torch.no_grad():
                t_e = teacher(images)
            e = student(images)
            loss = dist_criterion(e, t_e)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/lenscloth/RKD/issues/16
    """,
    """
    import torch

    class GAIN(torch.nn.Module):
        def forward(self, images, labels):
            with torch.enable_grad():
                logits = self.model(images)
                grad_logits = (logits * labels).sum()
                self.model.zero_grad()
                grad_logits.backward(retain_graph=True)
            return logits
    # https://github.com/ngxbac/GAIN/issues/5
    """,
    """
    import torch

    def train_epoch(agent, env, optimizer, steps):
        with torch.no_grad():
            states, actions, old_logp, advantages = agent.rollout(env, steps)
        pi, logp = agent.actor(states, actions)
        ratio = torch.exp(logp - old_logp)
        loss = -(torch.min(ratio * advantages, torch.clamp(ratio, 0.8, 1.2) * advantages)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/sidhantls/ppo_lightning/issues/5
    """,
    """
    import torch

    def calc_policy_loss(self, batch):
        states = batch[0]
        _, action_probs, log_action_probs = self.policy.sample(states)
        with torch.no_grad():
            q1 = self.online_critic.Q1(states)
            q2 = self.online_critic.Q2(states)
        entropies = -torch.sum(action_probs * log_action_probs, dim=1, keepdim=True)
        q = torch.sum(torch.min(q1, q2) * action_probs, dim=1, keepdim=True)
        policy_loss = (-q - self.alpha * entropies).mean()
        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
    # https://github.com/toshikwa/sac-discrete.pytorch/issues/24
    """,
    """
    import torch

    def init_jit_model(model_path):
        model = torch.jit.load(model_path)
        model.eval()
        return model

    @torch.no_grad()
    def get_speech_timestamps(audio, model):
        return model(audio, 16000)

    vad = init_jit_model("silero_vad.jit")
    for x, y in train_loader:
        speech = get_speech_timestamps(x, vad)
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/snakers4/silero-vad/pull/467
    """,
    """
    import torch

    def loop(model, data_iter, optimizer, eval=False):
        grad_mode = not eval
        torch.set_grad_enabled(grad_mode)
        for x, y in data_iter:
            loss = model(x, y)
            if not eval:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    # https://github.com/whr94621/NJUNMT-pytorch/pull/16
    """,
    """
    import torch
    import torch.nn as nn

    class HDDTBinaryLoss(nn.Module):
        def forward(self, net_output, target):
            pc = torch.softmax(net_output, dim=1)[:, 1]
            with torch.no_grad():
                pc_dist = compute_edts_forhdloss(pc.cpu().numpy() > 0.5)
                gt_dist = compute_edts_forhdloss(target.cpu().numpy() > 0.5)
            pred_error = (target - pc) ** 2
            dist = torch.from_numpy(pc_dist ** 2 + gt_dist ** 2).float()
            return (pred_error * dist).mean()

    criterion = HDDTBinaryLoss()
    for image, label in loader:
        loss = criterion(net(image), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/JunMa11/SegLossOdyssey/issues/17
    """,
    """
    import torch

    def train(model, loader, optimizer, rl_crit, get_self_critical_reward):
        for data in loader:
            model.eval()
            with torch.no_grad():
                greedy_res, _ = model(data["fc_feats"], data["att_feats"], mode="sample")
            model.train()
            gen_result, sample_logprobs = model(data["fc_feats"], data["att_feats"], opt={"sample_max": 0}, mode="sample")
            reward = get_self_critical_reward(greedy_res, data, gen_result)
            loss = rl_crit(sample_logprobs, gen_result.data, torch.from_numpy(reward).float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/ruotianluo/self-critical.pytorch/issues/84
    """,
    """
    import torch

    class Trainer:
        @torch.no_grad()
        def train(self, batch):
            with torch.enable_grad():
                q_loss = self.q_network.loss(batch)
                self.q_optimizer.zero_grad()
                q_loss.backward()
                self.q_optimizer.step()
            self.update_target_network()
    # https://github.com/facebookresearch/ReAgent/pull/321
    """,
]
