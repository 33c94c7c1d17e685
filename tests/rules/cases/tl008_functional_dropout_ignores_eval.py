"""TL008's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl008_functional_dropout_ignores_eval import attention_message, fresh_layer_message, message
from torchlint.rule import Invalid


VALID = [
    # The rate is zero whenever the module is not training: nn.MultiheadAttention's
    # functional form (brevitas' QuantMultiheadAttention), and a conditional expression.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        def attention(q, k, v, dropout_p, training=True):
            if not training:
                dropout_p = 0.0
            w = (q @ k.transpose(-2, -1)).softmax(-1)
            if dropout_p > 0.0:
                w = F.dropout(w, p=dropout_p)
            return w @ v
        class Attn(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.p = p
            def forward(self, x):
                rate = self.p if self.training else 0
                return F.dropout(attention(x, x, x, self.p, training=self.training), rate)
        """,
    # The fix: the module's mode chooses.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout(x, p=0.5, training=self.training)
        """,
    # training passed positionally (the third argument).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout2d(x, 0.1, self.training)
        """,
    # An explicit training=True is intent (Tacotron's always-on prenet dropout).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Prenet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(80, 256)
            def forward(self, x):
                return F.dropout(F.relu(self.fc(x)), p=0.5, training=True)
        """,
    # Guarded by the module's mode, alone or with more conditions.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                if self.training:
                    x = F.dropout(x, 0.2)
                if self.training and self.p > 0:
                    x = F.alpha_dropout(x, self.p)
                return x
        """,
    # A conditional expression on the mode.
    """
        import torch.nn as nn
        from torch.nn import functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.2) if self.training else x
        """,
    # An early return outside training.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                if not self.training:
                    return x
                return F.dropout(x, 0.3)
        """,
    # Code outside modules: a data augmentation function.
    """
        import torch.nn.functional as F
        def augment(x):
            return F.dropout(x, 0.1)
        """,
    # A class that is not an nn.Module.
    """
        import torch.nn.functional as F
        class Augment:
            def forward(self, x):
                return F.dropout(x, 0.1)
        """,
    # A method forward never calls: Monte Carlo dropout on purpose.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.drop = nn.Dropout(0.1)
            def forward(self, x):
                return self.fc(self.drop(x))
            def mc_sample(self, x):
                return self.fc(F.dropout(x, 0.1))
        """,
    # Not torch's dropout; the training flag handed through **kwargs.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        from mylib import dropout
        class Net(nn.Module):
            def forward(self, x, **kw):
                x = dropout(x, 0.1)
                return F.dropout(x, 0.1, **kw)
        """,
]


INVALID = [
    # The rate is zeroed by a switch that is not the module's mode.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, p, enabled):
                    super().__init__()
                    self.p, self.enabled = p, enabled
                def forward(self, x):
                    p = self.p
                    if not self.enabled:
                        p = 0.0
                    return F.dropout(x, p)
            """,
        lines=(12,),
        messages=(message("F.dropout", "Net", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, p, enabled):
                    super().__init__()
                    self.p, self.enabled = p, enabled
                def forward(self, x):
                    p = self.p
                    if not self.enabled:
                        p = 0.0
                    return F.dropout(x, p, training=self.training)
            """,
    ),
    # A docstring saying "always" about something else than dropout is no such note.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Encoder(nn.Module):
                \"\"\"Encoder. The output is always normalised.

                Uses dropout between layers.
                \"\"\"
                def forward(self, x):
                    return F.dropout(x, 0.2)
            """,
        lines=(10,),
        messages=(message("F.dropout", "Encoder", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Encoder(nn.Module):
                \"\"\"Encoder. The output is always normalised.

                Uses dropout between layers.
                \"\"\"
                def forward(self, x):
                    return F.dropout(x, 0.2, training=self.training)
            """,
    ),
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5))
            """,
        lines=(9,),
        messages=(message("F.dropout", "Net", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5, training=self.training))
            """,
    ),
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    return F.dropout2d(x, p=0.1, inplace=False)
            """,
        lines=(6,),
        messages=(message("F.dropout2d", "Net", "dropout2d"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    return F.dropout2d(x, p=0.1, inplace=False, training=self.training)
            """,
    ),
    Invalid(
        """
            import torch
            class SelfNorm(torch.nn.Module):
                def forward(self, x):
                    return torch.nn.functional.alpha_dropout(torch.selu(x), 0.1)
            """,
        lines=(5,),
        messages=(message("torch.nn.functional.alpha_dropout", "SelfNorm", "alpha_dropout"),),
        fixed="""
            import torch
            class SelfNorm(torch.nn.Module):
                def forward(self, x):
                    return torch.nn.functional.alpha_dropout(torch.selu(x), 0.1, training=self.training)
            """,
    ),
    Invalid(
        """
            from torch import nn
            from torch.nn.functional import dropout
            class Net(nn.Module):
                def forward(self, x):
                    return dropout(x, 0.3)
            """,
        lines=(6,),
        messages=(message("dropout", "Net", "dropout"),),
        fixed="""
            from torch import nn
            from torch.nn.functional import dropout
            class Net(nn.Module):
                def forward(self, x):
                    return dropout(x, 0.3, training=self.training)
            """,
    ),
    # In a helper method forward calls.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def _regularise(self, h):
                    return F.dropout(h, 0.2)
                def forward(self, x):
                    return self._regularise(x)
            """,
        lines=(6,),
        messages=(message("F.dropout", "Net", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def _regularise(self, h):
                    return F.dropout(h, 0.2, training=self.training)
                def forward(self, x):
                    return self._regularise(x)
            """,
    ),
    # In a nested function forward calls, and a module-level helper it calls.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            def drop_tokens(h):
                return F.dropout1d(h, 0.1)
            class Net(nn.Module):
                def forward(self, x):
                    def block(h):
                        return F.dropout(h, 0.2)
                    return drop_tokens(block(x))
            """,
        lines=(5, 9),
        messages=(message("F.dropout1d", "Net", "dropout1d"), message("F.dropout", "Net", "dropout")),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            def drop_tokens(h):
                return F.dropout1d(h, 0.1)
            class Net(nn.Module):
                def forward(self, x):
                    def block(h):
                        return F.dropout(h, 0.2, training=self.training)
                    return drop_tokens(block(x))
            """,
    ),
    # A guard that is not the module's mode.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, use_dropout=True):
                    super().__init__()
                    self.use_dropout = use_dropout
                def forward(self, x):
                    if self.use_dropout:
                        x = F.dropout(x, 0.5)
                    return x
            """,
        lines=(10,),
        messages=(message("F.dropout", "Net", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, use_dropout=True):
                    super().__init__()
                    self.use_dropout = use_dropout
                def forward(self, x):
                    if self.use_dropout:
                        x = F.dropout(x, 0.5, training=self.training)
                    return x
            """,
    ),
    # A LightningModule, through a same-file base class.
    Invalid(
        """
            import lightning as L
            import torch.nn.functional as F
            class Base(L.LightningModule):
                pass
            class Model(Base):
                def forward(self, x):
                    return F.feature_alpha_dropout(x, 0.1)
            """,
        lines=(8,),
        messages=(message("F.feature_alpha_dropout", "Model", "feature_alpha_dropout"),),
        fixed="""
            import lightning as L
            import torch.nn.functional as F
            class Base(L.LightningModule):
                pass
            class Model(Base):
                def forward(self, x):
                    return F.feature_alpha_dropout(x, 0.1, training=self.training)
            """,
    ),
    # One call fixed, one not.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    x = F.dropout(x, 0.1, training=self.training)
                    return F.dropout3d(x, 0.1)
            """,
        lines=(7,),
        messages=(message("F.dropout3d", "Net", "dropout3d"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    x = F.dropout(x, 0.1, training=self.training)
                    return F.dropout3d(x, 0.1, training=self.training)
            """,
    ),
    # training=False written in one branch does not cover the other.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x, deterministic=False):
                    if deterministic:
                        return F.dropout(x, 0.1, training=False)
                    return F.dropout(x, 0.1)
            """,
        lines=(8,),
        messages=(message("F.dropout", "Net", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x, deterministic=False):
                    if deterministic:
                        return F.dropout(x, 0.1, training=False)
                    return F.dropout(x, 0.1, training=self.training)
            """,
    ),
    # No comment or docstring switches a finding off (issue 39): "always applies dropout"
    # (Tacotron 2's prenet), Monte-Carlo dropout, a class docstring saying dropout stays on in
    # evaluation (espnet's prenet), a TODO/FIXME/BUG, "intentionally"/"deliberately": training=True
    # says it in code.
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                \"\"\"Prenet of the decoder.

                Note:
                    Dropout is applied even in evaluation, as in the paper.
                \"\"\"
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        # non deterministic on purpose: see the note above
                        x = F.dropout(layer(x), 0.5)
                    x = F.dropout(x, p=0.5)  # always applies dropout
                    return x
            class Head(nn.Module):
                def forward(self, x):
                    # Monte-Carlo dropout: kept on in evaluation to sample predictions
                    x = F.dropout(x, p=0.1)
                    # TODO: F.dropout ignores eval(), pass training=self.training
                    x = F.dropout(x, p=0.1)
                    x = F.dropout(x, p=0.2)  # BUG: stays on after model.eval()
                    # FIXME: deliberately (intentionally?) left on in evaluation
                    return F.dropout(x, p=0.3)
            """,
        lines=(16, 17, 22, 24, 25, 27),
        messages=(
            '`F.dropout` runs in `Prenet.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
            '`F.dropout` runs in `Prenet.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
            '`F.dropout` runs in `Head.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
            '`F.dropout` runs in `Head.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
            '`F.dropout` runs in `Head.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
            '`F.dropout` runs in `Head.forward` with its default training=True, so it keeps dropping '
            'after model.eval(); pass training=self.training or use nn.Dropout',
        ),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                \"\"\"Prenet of the decoder.

                Note:
                    Dropout is applied even in evaluation, as in the paper.
                \"\"\"
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        # non deterministic on purpose: see the note above
                        x = F.dropout(layer(x), 0.5, training=self.training)
                    x = F.dropout(x, p=0.5, training=self.training)  # always applies dropout
                    return x
            class Head(nn.Module):
                def forward(self, x):
                    # Monte-Carlo dropout: kept on in evaluation to sample predictions
                    x = F.dropout(x, p=0.1, training=self.training)
                    # TODO: F.dropout ignores eval(), pass training=self.training
                    x = F.dropout(x, p=0.1, training=self.training)
                    x = F.dropout(x, p=0.2, training=self.training)  # BUG: stays on after model.eval()
                    # FIXME: deliberately (intentionally?) left on in evaluation
                    return F.dropout(x, p=0.3, training=self.training)
            """,
    ),
]


# -- issue 39: a comment never switches a finding off, nor changes the finding or its fix --
# (these three were VALID: a comment or a docstring saying the dropout stays on was taken as consent;
# training=True is how the code says so)
INVALID += [
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        x = F.dropout(layer(x), p=0.5)  # always applies dropout
                    return x
            """,
        lines=(10,), messages=(message("F.dropout", "Prenet", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        x = F.dropout(layer(x), p=0.5, training=self.training)  # always applies dropout
                    return x
            """),
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Head(nn.Module):
                def forward(self, x):
                    # Monte-Carlo dropout: kept on in evaluation to sample predictions
                    return F.dropout(x, p=0.1)
            """,
        lines=(7,), messages=(message("F.dropout", "Head", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Head(nn.Module):
                def forward(self, x):
                    # Monte-Carlo dropout: kept on in evaluation to sample predictions
                    return F.dropout(x, p=0.1, training=self.training)
            """),
    # Said in the class docstring (review5 TL008_1: espnet's Tacotron 2 prenet).
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                \"\"\"Prenet of the decoder.

                Note:
                    Dropout is applied even in evaluation, as in the paper.
                \"\"\"
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        # non deterministic on purpose: see the note above
                        x = F.dropout(layer(x), 0.5)
                    return x
            """,
        lines=(16,), messages=(message("F.dropout", "Prenet", "dropout"),),
        fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Prenet(nn.Module):
                \"\"\"Prenet of the decoder.

                Note:
                    Dropout is applied even in evaluation, as in the paper.
                \"\"\"
                def __init__(self, layers):
                    super().__init__()
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        # non deterministic on purpose: see the note above
                        x = F.dropout(layer(x), 0.5, training=self.training)
                    return x
            """),
]

# -- issue 40: the other dropouts model.eval() cannot reach --
INVALID += [
    # A dropout layer built and called in forward (NTS-Net's resnet.py: ``nn.Dropout(p=0.5)(x)``).
    Invalid(
        """
            import torch.nn as nn
            class ResNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(2048, 200)
                def forward(self, x):
                    x = x.flatten(1)
                    x = nn.Dropout(p=0.5)(x)
                    return self.fc(x)
            """,
        lines=(9,), messages=(fresh_layer_message("Dropout", "ResNet"),)),
    # Attention dropout passed whatever the mode (speechbrain's RoPE attention).
    Invalid(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            class RoPEMHA(nn.Module):
                def __init__(self, dropout=0.1):
                    super().__init__()
                    self.dropout = dropout
                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout)
            """,
        lines=(9,), messages=(attention_message("F.scaled_dot_product_attention", "RoPEMHA"),)),
]

VALID += [
    # The attention dropout gated by the mode (nanoGPT's CausalSelfAttention).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class CausalSelfAttention(nn.Module):
            def __init__(self, dropout):
                super().__init__()
                self.dropout = dropout
            def forward(self, q, k, v):
                return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0,
                                                      is_causal=True)
        """,
    # A rate bound by the mode before the call.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Attention(nn.Module):
            def forward(self, q, k, v):
                dropout_p = self.p if self.training else 0.0
                return F.scaled_dot_product_attention(q, k, v, None, dropout_p)
        """,
    # No dropout_p, or a literal zero.
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Attention(nn.Module):
            def forward(self, q, k, v):
                a = F.scaled_dot_product_attention(q, k, v)
                return a + F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
        """,
    # The dropout layer built once in __init__.
    """
        import torch.nn as nn
        class ResNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(p=0.5)
                self.fc = nn.Linear(2048, 200)
            def forward(self, x):
                return self.fc(self.drop(x.flatten(1)))
        """,
]

INVALID += [
    # A module's class (another module may construct it with a rate; a notebook's, with every
    # rate it is given a literal zero, is not reported: test_tl008's notebook test).
    Invalid("""
        import torch.nn as nn
        import torch.nn.functional as F
        class MLPDecoder(nn.Module):
            def __init__(self, n_in, n_out, do_prob=0.0):
                super().__init__()
                self.fc = nn.Linear(n_in, n_out)
                self.dropout_prob = do_prob
            def forward(self, x):
                return F.dropout(self.fc(x), self.dropout_prob)
        decoder = MLPDecoder(16, 4)
        decoder.eval()
        """,
        lines=(10,), messages=(message("F.dropout", "MLPDecoder", "dropout"),),
        fixed="""
        import torch.nn as nn
        import torch.nn.functional as F
        class MLPDecoder(nn.Module):
            def __init__(self, n_in, n_out, do_prob=0.0):
                super().__init__()
                self.fc = nn.Linear(n_in, n_out)
                self.dropout_prob = do_prob
            def forward(self, x):
                return F.dropout(self.fc(x), self.dropout_prob, training=self.training)
        decoder = MLPDecoder(16, 4)
        decoder.eval()
        """),
]

VALID += [
    # The rate is a parameter of forward itself: whoever calls the model chooses it at every
    # call (0.0 for the test pass), not the module's mode (semantic.modes.rate_given_per_call).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class GraphConvNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(64, 10)
            def forward(self, x, d, L):
                x = nn.Dropout(d)(x)
                return F.dropout(self.fc(L @ x), d)
        net = GraphConvNet()
        y = net(train_x, 0.5, L)
        y_test = net(test_x, 0.0, L)
        """,
]

INVALID += [
    # A helper's parameter is not the caller's choice: forward hands it the module's own rate.
    Invalid("""
        import torch.nn as nn
        import torch.nn.functional as F
        def block(x, p):
            return F.dropout(x, p)
        class Net(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.p = p
            def forward(self, x):
                return block(x, self.p)
        """,
        lines=(5,), messages=(message("F.dropout", "Net", "dropout"),)),
]

VALID += [
    # A GAN's discriminator that the script builds and only ever trains: nothing puts it in
    # evaluation mode (G.eval() switches the generator), so its dropout drops as it should
    # (semantic.modes.never_switched_to_eval; another file importing the module keeps it:
    # test_tl008).
    """
        import torch.nn as nn
        import torch.nn.functional as F
        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 256)
                self.fc2 = nn.Linear(256, 1)
            def forward(self, x):
                x = F.dropout(F.leaky_relu(self.fc1(x), 0.2), 0.3)
                return self.fc2(x).sigmoid()
        G = Generator().cuda()
        D = Discriminator().cuda()
        for x, _ in loader:
            d_loss = criterion(D(x), real) + criterion(D(G(z)), fake)
            d_loss.backward()
        G.eval()
        """,
]

INVALID += [
    # The same discriminator put in evaluation mode to score samples.
    Invalid("""
        import torch.nn as nn
        import torch.nn.functional as F
        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 256)
                self.fc2 = nn.Linear(256, 1)
            def forward(self, x):
                x = F.dropout(F.leaky_relu(self.fc1(x), 0.2), 0.3)
                return self.fc2(x).sigmoid()
        D = Discriminator().cuda()
        D.eval()
        score = D(samples)
        """,
        lines=(10,), messages=(message("F.dropout", "Discriminator", "dropout"),),
        fixed="""
        import torch.nn as nn
        import torch.nn.functional as F
        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 256)
                self.fc2 = nn.Linear(256, 1)
            def forward(self, x):
                x = F.dropout(F.leaky_relu(self.fc1(x), 0.2), 0.3, training=self.training)
                return self.fc2(x).sigmoid()
        D = Discriminator().cuda()
        D.eval()
        score = D(samples)
        """),
]
