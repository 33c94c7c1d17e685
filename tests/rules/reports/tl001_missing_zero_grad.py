"""TL001 missing-zero-grad: cases adapted from public reports (see ``tests/rules/reports``)."""

from tests.rules.reports import Report

BUGS = [
    # Transfer-learning notebook: the classifier loop never clears.
    """
    import torch
    from torch import nn, optim
    model.classifier = nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 2), nn.LogSoftmax(dim=1))
    criterion = nn.NLLLoss()
    optimizer = optim.Adam(model.classifier.parameters(), lr=0.003)
    for epoch in range(epochs):
        for inputs, labels in trainloader:
            logps = model(inputs)
            loss = criterion(logps, labels)
            loss.backward()
            optimizer.step()
    # https://github.com/udacity/deep-learning-v2-pytorch/pull/160
    """,
    # DETR-style engine: backward, clipping, step, no zero_grad.
    """
    import torch
    def train_one_epoch(model, criterion, data_loader, optimizer, device, max_norm=0.1):
        model.train()
        for samples, targets in data_loader:
            outputs = model(samples.to(device))
            losses = sum(criterion(outputs, targets).values())
            losses.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
    # https://github.com/IDEA-Research/DN-DETR/issues/19
    """,
    # Steering a GAN's latent space: the transformer's optimizer is never cleared.
    """
    import torch
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.0002)
    for batch_start in range(0, train_niters, batch_size):
        z = torch.randn(batch_size, 140)
        alpha = torch.rand(batch_size) - 0.5
        z_transformed = transformer.transform(z, alpha)
        loss = criterion(assessor(generator(z_transformed)), alpha)
        loss.backward()
        optimizer.step()
    # https://github.com/LoreGoetschalckx/GANalyze/issues/7
    """,
    # A course exercise: accuracy drops to 10% without clearing.
    """
    import torch
    from torch import nn
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    loss = nn.CrossEntropyLoss()
    trainer = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            l = loss(net(X), y)
            l.backward()
            trainer.step()
    # https://github.com/Miraclelucy/dive_into_deep_learning/issues/6
    """,
    # Cleared once per epoch instead of once per iteration.
    """
    import torch
    def train(model, loader, loss_fn, epochs):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(epochs):
            optimizer.zero_grad()
            for inputs, targets in loader:
                loss = loss_fn(model(inputs), targets)
                loss.backward()
                optimizer.step()
    # https://github.com/pytorch/pytorch/issues/47175
    """,
    # BigGAN: several D steps per G step, the D optimizer cleared only before them.
    """
    def train(x, y, G, D, num_D_steps, z_, y_):
        G.optim.zero_grad()
        D.optim.zero_grad()
        for step_index in range(num_D_steps):
            D_fake, D_real = D(G(z_), y_, x, y)
            D_loss = discriminator_loss(D_fake, D_real)
            D_loss.backward()
            D.optim.step()
        G.optim.zero_grad()
        G_loss = generator_loss(D(G(z_), y_))
        G_loss.backward()
        G.optim.step()
    # https://github.com/ajbrock/BigGAN-PyTorch/issues/25
    """,
    # A GAN class: the discriminator's optimizer is stepped, only the generator cleared.
    """
    import torch
    class GAN:
        def __init__(self, generator, discriminator, lr):
            self.generator, self.discriminator = generator, discriminator
            self.optimizerD = torch.optim.Adam(discriminator.parameters(), lr=lr)
            self.optimizerG = torch.optim.Adam(generator.parameters(), lr=lr)
        def step(self, real, noise):
            errD = self.criterion(self.discriminator(real), 1) + self.criterion(self.discriminator(self.generator(noise).detach()), 0)
            errD.backward()
            self.optimizerD.step()
            self.generator.zero_grad()
            errG = self.criterion(self.discriminator(self.generator(noise)), 1)
            errG.backward()
            self.optimizerG.step()
        def fit(self, loader, noise):
            for real in loader:
                self.step(real, noise)
    # https://github.com/Adversarial-Deep-Learning/code-soup/issues/69
    """,
    # An encoder with a discriminator: optimizer_D is never cleared.
    """
    import torch
    def training_loop(E, G, D, loader, lr):
        optimizer_E = torch.optim.Adam(E.parameters(), lr=lr)
        optimizer_D = torch.optim.Adam(D.parameters(), lr=lr)
        for x in loader:
            x_rec = G(E(x))
            loss_D = torch.nn.functional.softplus(D(x_rec.detach())).mean() + torch.nn.functional.softplus(-D(x)).mean()
            loss_D.backward()
            optimizer_D.step()
            optimizer_E.zero_grad()
            loss_E = ((x - x_rec) ** 2).mean() + torch.nn.functional.softplus(-D(x_rec)).mean()
            loss_E.backward()
            optimizer_E.step()
    # https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
    """,
    # VQGAN tutorial: the generator cleared, the discriminator's optimizer not.
    """
    import torch
    optimizer_g = torch.optim.Adam(params=model.parameters(), lr=1e-4)
    optimizer_d = torch.optim.Adam(params=discriminator.parameters(), lr=5e-4)
    for epoch in range(n_epochs):
        for step, batch in enumerate(train_loader):
            images = batch["image"]
            optimizer_g.zero_grad(set_to_none=True)
            reconstruction, quantization_error = model(images=images)
            loss_g = l1_loss(reconstruction, images) + quantization_error
            loss_g.backward()
            optimizer_g.step()
            logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
            loss_d = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
            loss_d.backward()
            optimizer_d.step()
    # https://github.com/Project-MONAI/GenerativeModels/issues/102
    """,
    # Gradient accumulation with zero_grad() on every iteration: nothing accumulates.
    """
    import torch
    def train_model(self, X, max_steps):
        accumulated_samples = 0
        for step_ndx, data in enumerate(X):
            self.optimizer.zero_grad()
            x, y = data
            loss = self.loss(self.model(x), y)
            loss.backward()
            accumulated_samples += x.shape[0]
            if accumulated_samples >= 128:
                self.optimizer.step()
                accumulated_samples = 0
    # https://github.com/dscripka/openWakeWord/issues/316
    """,
    # The DCGAN tutorial with the generator's clearing dropped: only netD is cleared.
    """
    import torch
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            errD_real = criterion(netD(data[0]).view(-1), real_label)
            errD_real.backward()
            fake = netG(noise)
            errD_fake = criterion(netD(fake.detach()).view(-1), fake_label)
            errD_fake.backward()
            optimizerD.step()
            errG = criterion(netD(fake).view(-1), real_label)
            errG.backward()
            optimizerG.step()
    # https://github.com/pytorch/tutorials/pull/1116
    """,
]

LOOKALIKES = [
    # The transfer-learning loop, fixed.
    """
    import torch
    from torch import nn, optim
    criterion = nn.NLLLoss()
    optimizer = optim.Adam(model.classifier.parameters(), lr=0.003)
    for epoch in range(epochs):
        for inputs, labels in trainloader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
    # https://github.com/udacity/deep-learning-v2-pytorch/pull/160
    """,
    # Clearing after the step (the tutorial's first form) is as good as before the backward.
    """
    import torch
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            outputs = model(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    # https://github.com/patrickloeber/pytorchTutorial/issues/19
    """,
    # Clearing between the forward and the backward is fine.
    """
    def train(train_source_iter, model, optimizer, iters_per_epoch):
        model.train()
        for i in range(iters_per_epoch):
            x_s, labels_s = next(train_source_iter)
            y_s, f_s = model(x_s)
            loss = cls_loss(y_s, labels_s)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/thuml/Transfer-Learning-Library/issues/12
    """,
    # ADDA: both optimizers cleared before the critic's backward.
    """
    def train_tgt(src_encoder, tgt_encoder, critic, optimizer_tgt, optimizer_critic, loader):
        for step, (images_src, images_tgt) in enumerate(loader):
            optimizer_critic.zero_grad()
            feat_concat = torch.cat((src_encoder(images_src), tgt_encoder(images_tgt)), 0)
            loss_critic = criterion(critic(feat_concat.detach()), label_concat)
            loss_critic.backward()
            optimizer_critic.step()
            optimizer_critic.zero_grad()
            optimizer_tgt.zero_grad()
            loss_tgt = criterion(critic(tgt_encoder(images_tgt)), label_tgt)
            loss_tgt.backward()
            optimizer_tgt.step()
    # https://github.com/corenel/pytorch-adda/issues/19
    """,
    # DCGAN clearing through the modules: netD.zero_grad() for optimizerD over netD, netG's for G.
    """
    import torch
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002)
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002)
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            errD = criterion(netD(data[0]).view(-1), real_label)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(netG(noise)).view(-1), real_label)
            errG.backward()
            optimizerG.step()
    # https://github.com/pytorch/tutorials/pull/1116
    """,
    # A 1D-signal GAN clearing netD and netG, its optimizers built over them.
    """
    import torch.optim as optim
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(epoch_num):
        for step, (data, _) in enumerate(dataloader):
            netD.zero_grad()
            loss_D = criterion(netD(data), real) + criterion(netD(netG(noise).detach()), fake)
            loss_D.backward()
            optimizerD.step()
            netG.zero_grad()
            loss_G = criterion(netD(netG(noise)), real)
            loss_G.backward()
            optimizerG.step()
    # https://github.com/LixiangHan/GANs-for-1D-Signal/issues/3
    """,
    # SRGAN: discriminator.zero_grad() and generator.zero_grad() for their own optimizers.
    """
    def train(discriminator, generator, d_optimizer, g_optimizer, dataloader):
        for index, (lr, hr) in enumerate(dataloader):
            discriminator.zero_grad()
            d_loss = adversarial_criterion(discriminator(hr), real) + adversarial_criterion(discriminator(generator(lr).detach()), fake)
            d_loss.backward()
            d_optimizer.step()
            generator.zero_grad()
            g_loss = pixel_criterion(generator(lr), hr)
            g_loss.backward()
            g_optimizer.step()
    # https://github.com/Lornatang/SRGAN-PyTorch/issues/42
    """,
    # BigGAN, fixed: the D optimizer is cleared on every D step.
    """
    def train(x, y, G, D, num_D_steps, z_, y_):
        for step_index in range(num_D_steps):
            D.optim.zero_grad()
            D_fake, D_real = D(G(z_), y_, x, y)
            D_loss = discriminator_loss(D_fake, D_real)
            D_loss.backward()
            D.optim.step()
        G.optim.zero_grad()
        G_loss = generator_loss(D(G(z_), y_))
        G_loss.backward()
        G.optim.step()
    # https://github.com/ajbrock/BigGAN-PyTorch/issues/25
    """,
    # The VQGAN tutorial, fixed.
    """
    import torch
    optimizer_g = torch.optim.Adam(params=model.parameters(), lr=1e-4)
    optimizer_d = torch.optim.Adam(params=discriminator.parameters(), lr=5e-4)
    for epoch in range(n_epochs):
        for step, batch in enumerate(train_loader):
            images = batch["image"]
            optimizer_g.zero_grad(set_to_none=True)
            reconstruction, quantization_error = model(images=images)
            loss_g = l1_loss(reconstruction, images) + quantization_error
            loss_g.backward()
            optimizer_g.step()
            optimizer_d.zero_grad(set_to_none=True)
            logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
            loss_d = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
            loss_d.backward()
            optimizer_d.step()
    # https://github.com/Project-MONAI/GenerativeModels/issues/102
    """,
    # Accumulation done right: clear after the gated step.
    """
    def train_model(self, X, accumulation_steps):
        for step_ndx, (x, y) in enumerate(X):
            loss = self.loss(self.model(x), y) / accumulation_steps
            loss.backward()
            if (step_ndx + 1) % accumulation_steps == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
    # https://github.com/dscripka/openWakeWord/issues/316
    """,
    # The code-soup GAN fixed: the discriminator cleared through its module.
    """
    import torch
    class GAN:
        def __init__(self, generator, discriminator, lr):
            self.generator, self.discriminator = generator, discriminator
            self.optimizerD = torch.optim.Adam(discriminator.parameters(), lr=lr)
            self.optimizerG = torch.optim.Adam(generator.parameters(), lr=lr)
        def step(self, real, noise):
            self.discriminator.zero_grad()
            errD = self.criterion(self.discriminator(real), 1)
            errD.backward()
            self.optimizerD.step()
            self.generator.zero_grad()
            errG = self.criterion(self.discriminator(self.generator(noise)), 1)
            errG.backward()
            self.optimizerG.step()
        def fit(self, loader, noise):
            for real in loader:
                self.step(real, noise)
    # https://github.com/Adversarial-Deep-Learning/code-soup/pull/74
    """,
]
