"""TL003 eval-without-no-grad: cases adapted from public reports (see ``tests/rules/reports``)."""

from tests.rules.reports import Report

BUGS = [
    # Segmentation validate(): out of memory after each epoch's validation.
    """
    import time
    def validate(val_loader, model, criterion):
        model.eval()
        end = time.time()
        for i, (input, target) in enumerate(val_loader):
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            output = model(input)
            loss = criterion(output, target)
    # https://github.com/hszhao/semseg/issues/60
    """,
    # Point-cloud features: the validation epoch runs with autograd recording.
    """
    def _valid_epoch(self, data_loader_iter):
        self.model.eval()
        for batch_idx in range(self.val_max_iter):
            input_dict = next(data_loader_iter)
            F0 = self.model(input_dict['sinput0']).F
            F1 = self.model(input_dict['sinput1']).F
            self.hit_ratio(F0, F1)
    # https://github.com/chrischoy/FCGF/issues/15
    """,
    # skorch's validation_step (a plain class, no Lightning): out of memory on validation.
    """
    class NeuralNet:
        def validation_step(self, Xi, yi, **fit_params):
            self.module_.eval()
            y_pred = self.infer(Xi, **fit_params)
            loss = self.get_loss(y_pred, yi, X=Xi, training=False)
            return {'loss': loss, 'y_pred': y_pred}
        def infer(self, x, **fit_params):
            return self.module_(x, **fit_params)
    # https://github.com/skorch-dev/skorch/issues/218
    """,
    # The ImageNet example's validate() after volatile=True stopped working.
    """
    def validate(val_loader, model, criterion):
        model.eval()
        for i, (input, target) in enumerate(val_loader):
            target = target.cuda(non_blocking=True)
            output = model(input)
            loss = criterion(output, target)
            losses.update(loss.item(), input.size(0))
    # https://github.com/pytorch/pytorch/issues/4932
    """,
    # no_grad around loading the batch, not around the model.
    """
    import torch
    def validation(self, dataloader, model=None):
        model = self.model if model is None else model
        model.eval()
        for i, (input, target, task) in enumerate(dataloader):
            with torch.no_grad():
                input = input.cuda()
                target = target.cuda()
            output = model.forward(input)[:, :self.valid_out_dim]
            acc = accumulate_acc(output, target, task)
    # https://github.com/GT-RIPL/AlwaysBeDreaming-DFCIL/issues/9
    """,
    # OpenNMT's Trainer.validate: the model in eval mode, every batch recorded.
    """
    class Trainer(object):
        def validate(self, valid_iter):
            self.model.eval()
            stats = Statistics()
            for batch in valid_iter:
                src, src_lengths = batch.src
                outputs, attns = self.model(src, batch.tgt, src_lengths)
                batch_stats = self.valid_loss.monolithic_compute_loss(batch, outputs, attns)
                stats.update(batch_stats)
            self.model.train()
            return stats
    # https://github.com/OpenNMT/OpenNMT-py/issues/1141
    """,
    # A video dialogue model evaluated without no_grad.
    """
    def run_epoch(data, indices, vocab, epoch, model, loss_compute, eval=False):
        if eval:
            model.eval()
            for j in range(0, len(indices)):
                batch = make_batch(data, indices[j], vocab)
                out, ae_out = model.forward(batch)
                loss = loss_compute(out, batch.trg_y, batch.ntokens)
    # https://github.com/henryhungle/MTN/issues/7
    """,
    # DeblurGAN's Trainer._validate.
    """
    def _validate(self, epoch):
        self.netG.eval()
        for data in self.val_dataset:
            inputs, targets = self.model.get_input(data)
            outputs = self.netG(inputs)
            loss_content = self.criterionG(outputs, targets)
            self.metric_counter.add_losses(loss_content.item())
    # https://github.com/VITA-Group/DeblurGANv2/issues/15
    """,
    # A bare torch.no_grad() statement disables nothing.
    """
    import torch
    def val(args, val_loader, model, criterion):
        model.eval()
        torch.no_grad()
        for i, (input, label, size, name) in enumerate(val_loader):
            output = model(input.cuda())
            loss = criterion(output, label.cuda())
    # https://github.com/xiaoyufenfei/Efficient-Segmentation-Networks/pull/5
    """,
    # robosat's training tool: validation after net.eval(), without no_grad.
    """
    def validate(loader, num_classes, device, net, criterion):
        net.eval()
        for images, masks, tiles in loader:
            images = images.to(device)
            masks = masks.to(device)
            outputs = net(images)
            loss = criterion(outputs, masks)
    # https://github.com/mapbox/robosat/pull/109
    """,
    # A script: eval() at the top, the test function it calls later records a graph.
    """
    import torch
    model = Net()
    model.load_state_dict(torch.load('model.pth'))
    model.eval()
    def test(loader):
        correct = 0
        for images, labels in loader:
            outputs = model(images)
            correct += (outputs.argmax(1) == labels).sum().item()
        return correct / len(loader.dataset)
    print(test(test_loader))
    # https://github.com/mahmoudnafifi/CIE_XYZ_NET/issues/2
    """,
]

LOOKALIKES = [
    # The semseg fix: no_grad around the forward.
    """
    import torch
    def validate(val_loader, model, criterion):
        model.eval()
        for i, (input, target) in enumerate(val_loader):
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            with torch.no_grad():
                output = model(input)
            loss = criterion(output, target)
    # https://github.com/hszhao/semseg/issues/60
    """,
    # The skorch fix: the validation step under no_grad.
    """
    import torch
    class NeuralNet:
        def validation_step(self, Xi, yi, **fit_params):
            self.module_.eval()
            with torch.no_grad():
                y_pred = self.infer(Xi, **fit_params)
                loss = self.get_loss(y_pred, yi, X=Xi, training=False)
            return {'loss': loss, 'y_pred': y_pred}
        def infer(self, x, **fit_params):
            return self.module_(x, **fit_params)
    # https://github.com/skorch-dev/skorch/pull/219
    """,
    # robosat's fix: the validation function decorated.
    """
    import torch
    @torch.no_grad()
    def validate(loader, num_classes, device, net, criterion):
        net.eval()
        for images, masks, tiles in loader:
            outputs = net(images.to(device))
            loss = criterion(outputs, masks.to(device))
    # https://github.com/mapbox/robosat/pull/109
    """,
    # Lightning's validation_step runs under no_grad already.
    """
    import torch
    import lightning as L
    class LitModel(L.LightningModule):
        def validation_step(self, batch, batch_idx):
            self.model.eval()
            x, y = batch
            loss = self.loss_fn(self.model(x), y)
            self.log("val_loss", loss)
    # https://github.com/skorch-dev/skorch/issues/218
    """,
    # An evaluation function only ever called under no_grad.
    """
    import torch
    def evaluate(model, loader):
        model.eval()
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    def main(model, val_loader):
        with torch.no_grad():
            acc = evaluate(model, val_loader)
        print(acc)
    # https://github.com/OpenNMT/OpenNMT-py/issues/1141
    """,
    # Adversarial examples: the gradient of the loss with respect to the input is wanted.
    """
    import torch
    def fgsm(model, images, labels, eps):
        model.eval()
        images.requires_grad_()
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        return images + eps * images.grad.sign()
    # https://github.com/pytorch/pytorch/issues/4932
    """,
    # A frozen batch-norm backbone in eval mode while the rest trains.
    """
    def train_epoch(model, loader, optimizer):
        model.train()
        model.backbone.eval()
        for x, y in loader:
            loss = model.criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/VITA-Group/DeblurGANv2/issues/15
    """,
    # The DFCIL fix: no_grad around the model call.
    """
    import torch
    def validation(self, dataloader, model=None):
        model = self.model if model is None else model
        model.eval()
        for i, (input, target, task) in enumerate(dataloader):
            with torch.no_grad():
                output = model.forward(input.cuda())[:, :self.valid_out_dim]
            acc = accumulate_acc(output, target, task)
    # https://github.com/GT-RIPL/AlwaysBeDreaming-DFCIL/issues/9
    """,
    # The module-level script, fixed: the test function is called under no_grad.
    """
    import torch
    model = Net()
    model.eval()
    def test(loader):
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    with torch.no_grad():
        print(test(test_loader))
    # https://github.com/namisan/mt-dnn/pull/92
    """,
    # MTN, fixed: the evaluation epoch under no_grad.
    """
    import torch
    def run_epoch(data, indices, vocab, epoch, model, loss_compute, eval=False):
        if eval:
            model.eval()
            with torch.no_grad():
                for j in range(0, len(indices)):
                    batch = make_batch(data, indices[j], vocab)
                    out, ae_out = model.forward(batch)
                    loss = loss_compute(out, batch.trg_y, batch.ntokens)
    # https://github.com/henryhungle/MTN/issues/7
    """,
    # Efficient-Segmentation-Networks, fixed: no_grad as a context.
    """
    import torch
    def val(args, val_loader, model, criterion):
        model.eval()
        with torch.no_grad():
            for i, (input, label, size, name) in enumerate(val_loader):
                output = model(input.cuda())
                loss = criterion(output, label.cuda())
    # https://github.com/xiaoyufenfei/Efficient-Segmentation-Networks/pull/5
    """,
    # an equivariance check: one random toy input made before the loop, each group element's
    # transform of it forwarded (the same handful on every pass)
    """
    import torch
    model = build_model().eval()
    x = feat_type_in(torch.randn(1, 1, 17, 17))
    y = model(x)
    for g in group.elements:
        y_from_gx = model(x.transform(g))
        assert torch.allclose(y_from_gx.tensor, y.transform(g).tensor, atol=1e-5), g
    # https://github.com/phlippe/uvadlc_notebooks/blob/master/docs/tutorial_notebooks/DL2/Geometric_deep_learning/tutorial2_steerable_cnns.ipynb
    """,
]
