"""TL027's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl027_optimizer_stepped_after_other_backward import message, swap_message
from torchlint.rule import Invalid, Valid

_GAN = """
        import torch
        import torch.nn as nn

        netG, netD = Generator(), Discriminator()
        optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        criterion = nn.BCELoss()
        """

VALID: list[Valid | str] = [
    # The generator's step of a GAN class: the optimizer cleared is the one stepped.
    """
    import torch

    class GAN(torch.nn.Module):
        def __init__(self, generator, discriminator):
            super().__init__()
            self.generator, self.discriminator = generator, discriminator
            self.g_opt = torch.optim.Adam(self.generator.parameters())
            self.d_opt = torch.optim.Adam(self.discriminator.parameters())

        def generator_step(self, z):
            self.g_opt.zero_grad()
            logits = self.discriminator(self.generator(z))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
            loss.backward()
            self.g_opt.step()
    """,
    # The discriminator's optimizer cleared after its step; its phase opens with the generator's step.
    _GAN + """
    for real, _ in loader:
        optimizerG.zero_grad()
        fake = netG(z)
        errG = criterion(netD(fake), ones)
        errG.backward()
        optimizerG.step()
        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        errD.backward()
        optimizerD.step()
        optimizerD.zero_grad()
    """,
    # The fix: each optimizer stepped after its own network's backward (DCGAN).
    _GAN + """
        for real, _ in loader:
            netD.zero_grad()
            fake = netG(torch.randn(real.size(0), 100, 1, 1))
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
        """,
    # The generator's loss goes through the discriminator: it reaches both, the step is right.
    _GAN + """
        for real, _ in loader:
            optimizerG.zero_grad()
            errG = criterion(netD(netG(noise)), ones)
            errG.backward()
            optimizerG.step()
        """,
    # One optimizer over both networks.
    """
        import torch
        G, D = Generator(), Discriminator()
        opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters()))
        for x in loader:
            opt.zero_grad()
            loss = D(x).mean()
            loss.backward()
            opt.step()
        """,
    # The backward runs in a same-file helper: what it differentiates is not judged.
    _GAN + """
        def d_step(real):
            errD = criterion(netD(real), ones)
            errD.backward()
        for real, _ in loader:
            optimizerG.zero_grad()
            d_step(real)
            optimizerG.step()
        """,
    # A gradient penalty handed the critic, a generator step after the generator's loss (WGAN-GP).
    """
        import torch
        G, C = Generator(), Critic()
        opt_g = torch.optim.Adam(G.parameters(), lr=1e-4)
        opt_c = torch.optim.Adam(C.parameters(), lr=1e-4)
        for real in loader:
            opt_c.zero_grad()
            fake = G(z).detach()
            loss_c = C(fake).mean() - C(real).mean() + gradient_penalty(C, real, fake)
            loss_c.backward()
            opt_c.step()
            opt_g.zero_grad()
            loss_g = -C(G(z)).mean()
            loss_g.backward()
            opt_g.step()
        """,
    # An autoencoder: the loss reaches the encoder through the decoder.
    """
        import torch
        import torch.nn.functional as F
        encoder, decoder = Encoder(), Decoder()
        enc_opt = torch.optim.Adam(encoder.parameters())
        dec_opt = torch.optim.Adam(decoder.parameters())
        for x in loader:
            enc_opt.zero_grad()
            dec_opt.zero_grad()
            loss = F.mse_loss(decoder(encoder(x)), x)
            loss.backward()
            enc_opt.step()
            dec_opt.step()
        """,
    # Optimizers handed in with no caller in the file: what they cover is unknown.
    """
        def train(G, D, opt_g, opt_d, loader, criterion):
            for real in loader:
                opt_d.zero_grad()
                loss = criterion(D(real), 1)
                loss.backward()
                opt_g.step()
        """,
    # A gradient written by hand before the step.
    _GAN + """
        for real, _ in loader:
            optimizerD.zero_grad()
            errD = criterion(netD(real), ones)
            errD.backward()
            for p in netG.parameters():
                p.grad = torch.randn_like(p)
            optimizerG.step()
        """,
    # Mixed precision: the discriminator's scaled loss, the discriminator's optimizer stepped.
    _GAN + """
        scaler = torch.cuda.amp.GradScaler()
        for real, _ in loader:
            optimizerD.zero_grad()
            with torch.autocast("cuda"):
                errD = criterion(netD(real), ones)
            scaler.scale(errD).backward()
            scaler.step(optimizerD)
            scaler.update()
        """,
    # seq2seq: the encoder reaches the loss through the hidden state the decoder's loop carries.
    """
        from torch import nn, optim

        def train(x, y, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            loss = 0
            encoder_outputs = encoder(x)
            decoder_hidden = encoder_outputs[-1].view(1, 1, -1)
            for t in range(y.size(0)):
                decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
                loss += criterion(decoder_output, y[t])
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()

        encoder, decoder = EncoderRNN(), DecoderRNN()
        train(x, y, encoder, decoder, optim.SGD(encoder.parameters(), lr=0.01),
              optim.SGD(decoder.parameters(), lr=0.01), nn.NLLLoss())
        """,
    # The decoder's outputs stored into a buffer the loss is computed from (batched seq2seq).
    """
        import torch

        encoder, decoder = EncoderRNN(), AttnDecoderRNN()
        encoder_optimizer = torch.optim.Adam(encoder.parameters())
        decoder_optimizer = torch.optim.Adam(decoder.parameters())
        for x, y in loader:
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, hidden = encoder(x)
            all_outputs = torch.zeros(y.size(0), y.size(1), n_words)
            for t in range(y.size(0)):
                out, hidden = decoder(inp, hidden, encoder_outputs)
                all_outputs[t] = out
            loss = masked_cross_entropy(all_outputs, y)
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
        """,
    # An exercise notebook's loop whose loss still reads a score an earlier cell computed with
    # another network ("your code here" left to fill): the loop's own iteration meets no model.
    """
        import torch
        net_G, net_D = Generator(), Discriminator()
        optimizer_G = torch.optim.Adam(net_G.parameters())
        optimizer_D = torch.optim.Adam(net_D.parameters())
        D_scores_on_fake = net_D(net_G(z))
        net_CG, net_CD = CGenerator(), CDiscriminator()
        optimizer_CG = torch.optim.Adam(net_CG.parameters())
        optimizer_CD = torch.optim.Adam(net_CD.parameters())
        for real_batch, real_label in loader:
            z = torch.empty(50, 32).normal_()
            loss = -torch.mean(torch.log(1 - D_scores_on_fake))
            optimizer_CD.zero_grad()
            loss.backward()
            optimizer_CD.step()
        """,
]

INVALID: list[Invalid] = [
    # The generator's step of a GAN class stepping the discriminator's optimizer (npfl138): the
    # generator's gradients cleared, the loss reaches both, the discriminator's never cleared.
    Invalid("""
        import torch

        class GAN(torch.nn.Module):
            def __init__(self, generator, discriminator):
                super().__init__()
                self.generator, self.discriminator = generator, discriminator
                self.g_opt = torch.optim.Adam(self.generator.parameters())
                self.d_opt = torch.optim.Adam(self.discriminator.parameters())

            def generator_step(self, z):
                self.g_opt.zero_grad()
                logits = self.discriminator(self.generator(z))
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
                loss.backward()
                self.d_opt.step()
        """, lines=(16,), messages=(swap_message("self.d_opt", "self.g_opt", 12, 15),)),
    # ... and the generator's gradients cleared through its module.
    Invalid(_GAN + """
        def generator_step(z):
            netG.zero_grad()
            errG = criterion(netD(netG(z)), ones)
            errG.backward()
            optimizerD.step()
        """, lines=(14,), messages=(swap_message("optimizerD", "optimizerG", 11, 13),)),
    # The page's example: the generator's optimizer stepped after the discriminator's backward.
    Invalid(_GAN + """
        for real, _ in loader:
            netD.zero_grad()
            fake = netG(torch.randn(real.size(0), 100, 1, 1))
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
            errD.backward()
            optimizerG.step()
            netG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
        """, lines=(15,), messages=(message("optimizerG", "netG", "netD", "optimizerD", 14),)),
    # The two steps swapped: only the first is sure (the generator's loss reaches both).
    Invalid(_GAN + """
        for real, _ in loader:
            optimizerD.zero_grad()
            errD = criterion(netD(real), ones) + criterion(netD(netG(z).detach()), zeros)
            errD.backward()
            optimizerG.step()
            optimizerG.zero_grad()
            errG = criterion(netD(netG(z)), ones)
            errG.backward()
            optimizerD.step()
        """, lines=(14,), messages=(message("optimizerG", "netG", "netD", "optimizerD", 13),)),
    # A train function handed both models and optimizers by a caller in the file (SRGAN).
    Invalid("""
        from torch import nn, optim

        def train(d_model, g_model, loader, criterion, d_optimizer, g_optimizer):
            for lr_img, hr_img in loader:
                d_optimizer.zero_grad()
                sr = g_model(lr_img)
                d_loss = criterion(d_model(hr_img), 1.0) + criterion(d_model(sr.detach()), 0.0)
                d_loss.backward()
                g_optimizer.step()

        def main():
            d_model, g_model = Discriminator(), Generator()
            d_optimizer = optim.Adam(d_model.parameters(), 1e-4)
            g_optimizer = optim.Adam(g_model.parameters(), 1e-4)
            train(d_model, g_model, loader, nn.BCEWithLogitsLoss(), d_optimizer, g_optimizer)
        """, lines=(10,), messages=(message("g_optimizer", "g_model", "d_model", "d_optimizer", 9),)),
    # Networks and optimizers held by one object.
    Invalid("""
        import torch
        from torch import nn

        class WGAN(nn.Module):
            def __init__(self, gen, critic, lr):
                super().__init__()
                self.gen, self.critic = gen, critic
                self.opt_gen = torch.optim.RMSprop(self.gen.parameters(), lr=lr)
                self.opt_critic = torch.optim.RMSprop(self.critic.parameters(), lr=lr)

            def critic_step(self, real, noise):
                self.opt_critic.zero_grad()
                fake = self.gen(noise).detach()
                loss = self.critic(fake).mean() - self.critic(real).mean()
                loss.backward()
                self.opt_gen.step()
        """, lines=(17,), messages=(message("self.opt_gen", "self.gen", "self.critic", "self.opt_critic", 16),)),
    # A frozen encoder's features, the classifier's loss, the encoder's optimizer stepped.
    Invalid("""
        import torch
        import torch.nn.functional as F

        encoder, head = Encoder(), Head()
        enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
        head_opt = torch.optim.SGD(head.parameters(), lr=0.01)
        for x, y in loader:
            z = encoder(x)
            head_opt.zero_grad()
            loss = F.cross_entropy(head(z.detach()), y)
            loss.backward()
            enc_opt.step()
        """, lines=(13,), messages=(message("enc_opt", "encoder", "head", "head_opt", 12),)),
    # Mixed precision: the discriminator's scaled loss, the generator's optimizer stepped.
    Invalid(_GAN + """
        scaler = torch.cuda.amp.GradScaler()
        for real, _ in loader:
            optimizerD.zero_grad()
            with torch.autocast("cuda"):
                errD = criterion(netD(real), ones)
            scaler.scale(errD).backward()
            scaler.step(optimizerG)
            scaler.update()
        """, lines=(16,), messages=(message("optimizerG", "netG", "netD", "optimizerD", 15),)),
    # Submodules of one model, each with its optimizer.
    Invalid("""
        import torch
        model = VAE()
        enc_opt = torch.optim.Adam(model.encoder.parameters())
        dec_opt = torch.optim.Adam(model.decoder.parameters())
        for x in loader:
            with torch.no_grad():
                z = model.encoder(x)
            dec_opt.zero_grad()
            recon = model.decoder(z.detach())
            loss = ((recon - x) ** 2).mean()
            loss.backward()
            enc_opt.step()
        """, lines=(13,), messages=(message("enc_opt", "model.encoder", "model.decoder", "dec_opt", 12),)),
    # Two losses accumulated, both the discriminator's, the generator's optimizer stepped.
    Invalid(_GAN + """
        for real, _ in loader:
            optimizerD.zero_grad()
            loss_real = criterion(netD(real), ones)
            loss_real.backward()
            loss_fake = criterion(netD(netG(z).detach()), zeros)
            loss_fake.backward()
            optimizerG.step()
        """, lines=(16,), messages=(message("optimizerG", "netG", "netD", "optimizerD", 15),)),
]

INVALID += [
    # The discriminator's optimizer built over the generator: no optimizer covers the discriminator.
    Invalid("""
        import torch

        def train(generator, discriminator, loader, lr):
            optimizer_g = torch.optim.Adam(generator.parameters(), lr=lr)
            optimizer_d = torch.optim.Adam(generator.parameters(), lr=lr)
            for img, mask in loader:
                optimizer_d.zero_grad()
                fake = generator(img, mask)
                loss_d = discriminator(fake.detach()).mean() - discriminator(img).mean()
                loss_d.backward()
                optimizer_d.step()
        """, lines=(12,), messages=(message("optimizer_d", "generator", "discriminator", None, 11),)),
]
