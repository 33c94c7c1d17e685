"""TL027's cases from public reports: an optimizer stepped after the backward of a loss that
never reaches the model it updates (GAN generator/discriminator swaps, optimizers built over
the other network), and the correct shapes that look like them (each network's optimizer
stepped after its own loss, a generator loss going through the discriminator, one optimizer
over both)."""

BUGS = [
    """
    import torch
    from torch import nn, optim

    def train(d_model, g_model, loader, pixel_criterion, adversarial_criterion, d_optimizer, g_optimizer):
        for lr, gt in loader:
            g_optimizer.zero_grad()
            sr = g_model(lr)
            d_model.zero_grad()
            gt_output = d_model(gt)
            sr_output = d_model(sr.detach())
            d_loss = adversarial_criterion(gt_output - sr_output.mean(), ones) + \\
                adversarial_criterion(sr_output - gt_output.mean(), zeros)
            d_loss.backward()
            g_optimizer.step()

    d_model, g_model = Discriminator(), RRDBNet()
    d_optimizer = optim.Adam(d_model.parameters(), 1e-4)
    g_optimizer = optim.Adam(g_model.parameters(), 1e-4)
    train(d_model, g_model, loader, nn.L1Loss(), nn.BCEWithLogitsLoss(), d_optimizer, g_optimizer)
    # https://github.com/Lornatang/ESRGAN-PyTorch/issues/39
    """,
    """
    import torch
    from torch import nn, optim

    def train(discriminator, generator, loader, adversarial_criterion, d_optimizer, g_optimizer):
        for lr, hr in loader:
            sr = generator(lr)
            for p in discriminator.parameters():
                p.requires_grad = True
            g_optimizer.zero_grad()
            hr_output = discriminator(hr)
            d_loss_hr = adversarial_criterion(hr_output, ones)
            d_loss_hr.backward()
            sr_output = discriminator(sr.detach().clone())
            d_loss_sr = adversarial_criterion(sr_output, zeros)
            d_loss_sr.backward()
            g_optimizer.step()

    discriminator, generator = Discriminator(), SRResNet()
    d_optimizer = optim.Adam(discriminator.parameters(), 1e-4, (0.9, 0.999))
    g_optimizer = optim.Adam(generator.parameters(), 1e-4, (0.9, 0.999))
    train(discriminator, generator, loader, nn.BCEWithLogitsLoss(), d_optimizer, g_optimizer)
    # https://github.com/Lornatang/SRGAN-PyTorch/issues/85
    """,
    """
    import torch

    class GAN(torch.nn.Module):
        def __init__(self, generator, discriminator):
            super().__init__()
            self.generator, self.discriminator = generator, discriminator
            self.generator_optimizer = torch.optim.Adam(self.generator.parameters())
            self.discriminator_optimizer = torch.optim.Adam(self.discriminator.parameters())

        def train_step(self, images, z):
            self.generator_optimizer.zero_grad()
            generated = self.generator(z)
            logits = self.discriminator(generated)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
            loss.backward()
            self.discriminator_optimizer.step()
    # https://github.com/ufal/npfl138/issues/57
    """,
    """
    import torch

    class GAN(torch.nn.Module):
        def __init__(self, generator, discriminator):
            super().__init__()
            self.generator, self.discriminator = generator, discriminator
            self.generator_optimizer = torch.optim.Adam(self.generator.parameters())
            self.discriminator_optimizer = torch.optim.Adam(self.discriminator.parameters())

        def discriminator_step(self, images, z):
            self.discriminator_optimizer.zero_grad()
            fake = self.generator(z).detach()
            real_logits, fake_logits = self.discriminator(images), self.discriminator(fake)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits)) \\
                + torch.nn.functional.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
            loss.backward()
            self.generator_optimizer.step()
    # https://github.com/ufal/npfl138/issues/57
    """,
    """
    import torch
    import torch.optim as optim
    import torch.nn.functional as F

    model = RNN_VAE(n_vocab, h_dim, z_dim, c_dim)
    trainer_D = optim.Adam(model.discriminator.parameters(), lr=lr)
    trainer_G = optim.Adam(model.encoder.parameters(), lr=lr)
    trainer_E = optim.Adam(model.decoder.parameters(), lr=lr)
    for it in range(n_iter):
        inputs, labels = dataset.next_batch()
        z = torch.randn(batch_size, z_dim)
        c = torch.eye(c_dim)[torch.randint(c_dim, (batch_size,))]
        y_disc = model.discriminator(model.decoder(z, c).detach())
        loss_D = F.cross_entropy(y_disc, labels)
        loss_D.backward()
        trainer_D.step()
        trainer_D.zero_grad()
        trainer_G.zero_grad()
        x_gen = model.decoder(z, c)
        loss_G = F.cross_entropy(x_gen.view(-1, n_vocab), inputs.view(-1))
        loss_G.backward()
        trainer_G.step()
    # https://github.com/wiseodd/controlled-text-generation/issues/15
    """,
    """
    import torch.optim as optim
    import torch.nn.functional as F

    model = RNN_VAE(n_vocab, h_dim, z_dim, c_dim)
    trainer_G = optim.Adam(model.encoder.parameters(), lr=lr)
    trainer_E = optim.Adam(model.decoder.parameters(), lr=lr)
    for it in range(n_iter):
        inputs = dataset.next_batch()
        trainer_E.zero_grad()
        mu, logvar = model.encoder(inputs)
        loss_vae = kl_weight * (0.5 * (logvar.exp() + mu ** 2 - 1 - logvar)).sum()
        loss_vae.backward()
        trainer_E.step()
    # https://github.com/wiseodd/controlled-text-generation/issues/15
    """,
    """
    import torch

    def trainer(opt, generator, discriminator, dataloader):
        optimizer_g = torch.optim.Adam(generator.parameters(), lr=opt.lr_g, betas=(opt.b1, opt.b2))
        optimizer_d = torch.optim.Adam(generator.parameters(), lr=opt.lr_d, betas=(opt.b1, opt.b2))
        for img, mask in dataloader:
            optimizer_d.zero_grad()
            first_out, second_out = generator(img, mask)
            fake = img * (1 - mask) + second_out * mask
            fake_scalar = discriminator(fake.detach(), mask)
            true_scalar = discriminator(img, mask)
            loss_D = torch.mean(fake_scalar) - torch.mean(true_scalar)
            loss_D.backward()
            optimizer_d.step()
    # https://github.com/zhaoyuzhi/deepfillv2/pull/3
    """,
    """
    import torch

    def train(generator, ema_generator, discriminator, optim_g, optim_d, loader):
        for real in loader:
            z = torch.randn(real.size(0), 128)
            optim_d.zero_grad()
            fake = generator(z)
            loss_d = torch.relu(1 - discriminator(real)).mean() + torch.relu(1 + discriminator(fake.detach())).mean()
            loss_d.backward()
            optim_d.step()
            optim_g.zero_grad()
            loss_g = -discriminator(generator(z)).mean()
            loss_g.backward()
            optim_g.step()

    netG, netG_s, netD = ViTGenerator(), ViTGenerator(), ViTDiscriminator()
    optimizer_g = torch.optim.Adam(netG.parameters(), lr=2e-4)
    optimizer_d = torch.optim.Adam(netD.parameters(), lr=2e-4)
    train(netG_s, netG, netD, optimizer_g, optimizer_d, loader)
    # https://github.com/wilile26811249/ViTGAN/issues/5
    """,
    """
    import torch

    class ReCycleGAN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.G_A_to_B, self.D_B = Generator(), Discriminator()
            self.optim_G = torch.optim.Adam(self.G_A_to_B.parameters(), lr=1e-4)
            self.optim_D = torch.optim.Adam(self.D_B.parameters(), lr=1e-4)

        def update_generator(self, true_a, true_b):
            self.optim_G.zero_grad()
            fake_b = self.G_A_to_B(true_a)
            logits = self.D_B(true_b)
            loss_adv = torch.mean((logits - 1) ** 2)
            loss_adv.backward()
            self.optim_G.step()
            return fake_b
    # https://github.com/SunnerLi/RecycleGAN/issues/2
    """,
    """
    import torch

    netD, netG = Discriminator(), Generator()
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=2e-4)
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=2e-4)
    for real, _ in loader:
        optimizer_G.zero_grad()
        fake = netG(noise)
        loss_real = criterion(netD(real), ones)
        loss_fake = criterion(netD(fake.detach()), zeros)
        (loss_real + loss_fake).backward()
        optimizer_G.step()
    # https://github.com/Lornatang/ESRGAN-PyTorch/issues/39
    """,
]

LOOKALIKES = [
    """
    import torch
    import torch.nn as nn

    netG, netD = Generator(ngpu), Discriminator(ngpu)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))
    for epoch in range(num_epochs):
        for data in dataloader:
            netD.zero_grad()
            errD_real = criterion(netD(data[0]).view(-1), real_labels)
            errD_real.backward()
            fake = netG(torch.randn(b_size, nz, 1, 1))
            errD_fake = criterion(netD(fake.detach()).view(-1), fake_labels)
            errD_fake.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(fake).view(-1), real_labels)
            errG.backward()
            optimizerG.step()
    # https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html
    """,
    """
    import torch.optim as optim

    G, D = Generator(g_input_size, g_hidden_size, g_output_size), Discriminator(d_input_size, d_hidden_size, 1)
    d_optimizer = optim.SGD(D.parameters(), lr=d_learning_rate, momentum=sgd_momentum)
    g_optimizer = optim.SGD(G.parameters(), lr=g_learning_rate, momentum=sgd_momentum)
    for epoch in range(num_epochs):
        D.zero_grad()
        d_real_error = criterion(D(real_data), ones)
        d_real_error.backward()
        d_fake_data = G(gen_input).detach()
        d_fake_error = criterion(D(d_fake_data), zeros)
        d_fake_error.backward()
        d_optimizer.step()
        G.zero_grad()
        g_error = criterion(D(G(gen_input)), ones)
        g_error.backward()
        g_optimizer.step()
    # https://github.com/devnag/pytorch-generative-adversarial-networks/issues/14
    """,
    """
    import torch

    class Solver:
        def __init__(self, nets):
            self.nets = nets
            self.optim_g = torch.optim.Adam(nets.generator.parameters(), lr=1e-4)
            self.optim_d = torch.optim.Adam(nets.discriminator.parameters(), lr=1e-4)

        def train_step(self, x_real, y_trg, s_trg):
            self.optim_g.zero_grad()
            x_fake = self.nets.generator(x_real, s_trg)
            out = self.nets.discriminator(x_fake, y_trg)
            loss_adv = adv_loss(out, 1)
            loss_adv.backward()
            self.optim_g.step()
    # https://github.com/clovaai/stargan-v2/issues/16
    """,
    """
    import torch

    generator, discriminator = Encoder(), Discriminator()
    e_opt = torch.optim.Adam(generator.parameters(), lr=1e-4)
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-4)
    for images, thetas in loader:
        e_loss = loss_shape(generator(images)) + adversarial(discriminator(generator(images)))
        d_loss = d_adv(discriminator(thetas), discriminator(generator(images).detach()))
        e_opt.zero_grad()
        e_loss.backward()
        e_opt.step()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
    # https://github.com/MandyMo/pytorch_HMR/issues/15
    """,
    """
    import torch

    generator_ddp, discriminator_ddp = Generator(), Discriminator()
    optimizer_G = torch.optim.Adam(generator_ddp.parameters(), lr=gen_lr, betas=betas)
    optimizer_D = torch.optim.Adam(discriminator_ddp.parameters(), lr=disc_lr, betas=betas)
    for imgs in dataloader:
        optimizer_D.zero_grad()
        gen_imgs = generator_ddp(z).detach()
        d_loss = torch.nn.functional.softplus(discriminator_ddp(gen_imgs)).mean() + \\
            torch.nn.functional.softplus(-discriminator_ddp(imgs)).mean()
        d_loss.backward()
        optimizer_D.step()
        optimizer_G.zero_grad()
        g_loss = torch.nn.functional.softplus(-discriminator_ddp(generator_ddp(z))).mean()
        g_loss.backward()
        optimizer_G.step()
    # https://github.com/marcoamonteiro/pi-GAN/issues/8
    """,
    """
    import torch

    class FeaMGAN:
        def __init__(self, netG, netD, G_lr, D_lr):
            self.netG, self.netD = netG, netD
            self.optimizer_G = torch.optim.AdamW(list(self.netG.parameters()), lr=G_lr)
            self.optimizer_D = torch.optim.AdamW(list(self.netD.parameters()), lr=D_lr)

        def generator_step(self, data):
            self.optimizer_G.zero_grad()
            fake = self.netG(data)
            g_loss = self.criterion(self.netD(fake), True)
            g_loss.backward()
            self.optimizer_G.step()
    # https://github.com/BonifazStuhr/feamgan/pull/2
    """,
    """
    import torch

    class ConditionalGAN:
        def __init__(self, netG, netD):
            self.netG, self.netD = netG, netD
            self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4)
            self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4)

        def optimize_parameters(self, real_A, real_B):
            fake_B = self.netG(real_A)
            for _ in range(self.critic_updates):
                self.optimizer_D.zero_grad()
                loss_D = self.netD(fake_B.detach()).mean() - self.netD(real_B).mean()
                loss_D.backward(retain_graph=True)
                self.optimizer_D.step()
            self.optimizer_G.zero_grad()
            loss_G = -self.netD(fake_B).mean() + self.content_loss(fake_B, real_B)
            loss_G.backward()
            self.optimizer_G.step()
    # https://github.com/KupynOrest/DeblurGAN/issues/64
    """,
    """
    import torch

    def train(netG, localD, globalD, loader, config):
        optimizer_g = torch.optim.Adam(netG.parameters(), lr=config["lr"])
        optimizer_d = torch.optim.Adam(list(localD.parameters()) + list(globalD.parameters()), lr=config["lr"])
        for iteration, (x, mask) in enumerate(loader):
            _, x2 = netG(x, mask)
            if iteration % 5 == 0:
                optimizer_d.zero_grad()
                loss_d = localD(x2.detach()).mean() - localD(x).mean() + globalD(x2.detach()).mean() - globalD(x).mean()
                loss_d.backward()
                optimizer_d.step()
            optimizer_g.zero_grad()
            loss_g = -localD(x2).mean() - globalD(x2).mean()
            loss_g.backward()
            optimizer_g.step()
    # https://github.com/daa233/generative-inpainting-pytorch/issues/11
    """,
    """
    import torch
    from torch import autograd

    netG, netD = Generator(), Discriminator()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for iteration in range(ITERS):
        for p in netD.parameters():
            p.requires_grad = True
        for i in range(CRITIC_ITERS):
            netD.zero_grad()
            D_real = netD(real_data).mean()
            D_real.backward(mone)
            fake = netG(noise).detach()
            D_fake = netD(fake).mean()
            D_fake.backward(one)
            gradient_penalty = calc_gradient_penalty(netD, real_data, fake)
            gradient_penalty.backward()
            optimizerD.step()
        netG.zero_grad()
        G = netD(netG(noise)).mean()
        G.backward(mone)
        optimizerG.step()
    # https://github.com/caogang/wgan-gp/issues/59
    """,
    """
    import torch

    class Agent:
        def __init__(self, actor, critic):
            self.actor, self.critic = actor, critic
            self.actor_optim = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
            self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

        def update(self, o, u, r, o_next):
            q_target = (r + gamma * self.critic(o_next, self.actor(o_next))).detach()
            critic_loss = (q_target - self.critic(o, u)).pow(2).mean()
            actor_loss = -self.critic(o, self.actor(o)).mean()
            self.actor_optim.zero_grad()
            actor_loss.backward()
            self.actor_optim.step()
            self.critic_optim.zero_grad()
            critic_loss.backward()
            self.critic_optim.step()
    # https://github.com/starry-sky6688/MADDPG/issues/27
    """,
    """
    import torch
    import torch.nn.functional as F

    class Trainer:
        def __init__(self, actor, critic):
            self.actor, self.critic = actor, critic
            self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
            self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

        def optimize(self, s1, a1, r1, s2):
            a2 = self.actor(s2).detach()
            y_expected = r1 + GAMMA * self.critic(s2, a2).detach().squeeze()
            y_predicted = self.critic(s1, a1).squeeze()
            loss_critic = F.smooth_l1_loss(y_predicted, y_expected)
            self.critic_optimizer.zero_grad()
            loss_critic.backward()
            self.critic_optimizer.step()
            loss_actor = -torch.sum(self.critic(s1, self.actor(s1)))
            self.actor_optimizer.zero_grad()
            loss_actor.backward()
            self.actor_optimizer.step()
    # https://github.com/vy007vikas/PyTorch-ActorCriticRL/issues/7
    """,
    """
    import torch
    from torch import nn

    G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    D = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
    loss_fn = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(G.parameters(), lr=0.01)
    opt_d = torch.optim.Adam(D.parameters(), lr=0.01)
    for step in range(1, 301):
        real = real_batch(64)
        fake = G(torch.randn(64, 2)).detach()
        d_real, d_fake = D(real), D(fake)
        loss_d = loss_fn(d_real, torch.ones_like(d_real)) + loss_fn(d_fake, torch.zeros_like(d_fake))
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        d_fake = D(G(torch.randn(64, 2)))
        loss_g = loss_fn(d_fake, torch.ones_like(d_fake))
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    # https://airoads.org/ch06-deep-learning/ch06-generative/01-gan/
    """,
]
