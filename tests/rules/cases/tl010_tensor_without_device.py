"""TL010's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl010_tensor_without_device import message, moved_message
from torchlint.rule import Invalid


VALID = [
    # The name fed moved inputs only after it is rebound to another model (learners' CS547
    # pytorch_tutorial: a CPU LeNet first, a CIFAR net moved to the GPU later).
    """
        import torch
        import torch.nn as nn
        net = nn.Linear(4, 2)
        out = net(torch.randn(1, 4))
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = nn.Linear(4, 2).to(device)
        for x in loader:
            out = net(x.to(device))
        """,
    # The same helper where every call passes tensors made on the CPU (or nothing says where
    # they are): nothing puts it on a device.
    """
        import torch
        def one_hot(x, n_class):
            res = torch.zeros(x.shape[0], n_class)
            res.scatter_(1, x.view(-1, 1), 1)
            return res
        def encode(labels, n):
            return one_hot(torch.tensor(labels), n)
        def batch(y, n):
            return one_hot(y, n)
        """,
    # Element-wise assignment with integer indices copies across devices (d2l's corr2d called
    # from a forward; learners' dsgiitr d2l-pytorch Convolutions_For_Images): only a mask or an
    # index tensor (``t[mask] = v``) needs both on one device.
    """
        import torch
        from torch import nn
        def corr2d(X, K):
            h, w = K.shape
            Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
            for i in range(Y.shape[0]):
                for j in range(Y.shape[1]):
                    Y[i, j] = (X[i: i + h, j: j + w] * K).sum()
            return Y
        class Conv2D(nn.Module):
            def __init__(self, kernel_size):
                super().__init__()
                self.weight = nn.Parameter(torch.rand(kernel_size))
            def forward(self, x):
                return corr2d(x, self.weight)
        """,
    # The same with the rows picked by iterating ``torch.arange`` (each a 0-dim integer tensor,
    # which indexing turns into an integer: select + copy_) or by an ``enumerate`` counter, the
    # result returned for the caller to move (review packages: flair's document_mean_pooling).
    """
        import torch
        from torch import nn
        def mean_pooling(hidden, lengths):
            result = torch.zeros(hidden.shape[0], hidden.shape[2], dtype=hidden.dtype)
            for i in torch.arange(hidden.shape[0]):
                result[i] = hidden[i, : lengths[i]].mean(dim=0)
            return result
        def max_pooling(hidden, lengths):
            result = torch.zeros(len(lengths), hidden.shape[2])
            for i, n in enumerate(lengths):
                result[i], _ = hidden[i, :n].max(dim=0)
            return result
        class Pooler(nn.Module):
            def forward(self, hidden, lengths):
                return mean_pooling(hidden, lengths), max_pooling(hidden, lengths)
        """,
    # The causal mask made on the CPU in a branch of a private helper whose only call leaves
    # is_causal at its default False: the branch never runs (review packages: pytorch-forecasting's
    # Samformer._scaled_dot_product_attention).
    """
        import torch
        import math
        from torch import nn
        class Samformer(nn.Module):
            def __init__(self, n, h):
                super().__init__()
                self.q = nn.Linear(n, h)
                self.k = nn.Linear(n, h)
            def _attention(self, query, key, value, is_causal=False):
                L, S = query.size(-2), key.size(-2)
                attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
                if is_causal:
                    temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
                    attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
                weight = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1)) + attn_bias
                return torch.softmax(weight, dim=-1) @ value
            def forward(self, x):
                return self._attention(self.q(x), self.k(x), x)
        """,
    # Sequence lengths made on the CPU and handed to a model fed moved inputs: its forward packs
    # the batch with them (pack_padded_sequence wants CPU lengths; learners' bentrevett
    # pytorch-sentiment-analysis ``predict_sentiment``).
    """
        import torch
        def predict_sentiment(text, model, tokenizer, vocab, device):
            ids = vocab.lookup_indices(tokenizer(text))
            length = torch.LongTensor([len(ids)])
            tensor = torch.LongTensor(ids).unsqueeze(dim=0).to(device)
            prediction = model(tensor, length).squeeze(dim=0)
            return prediction.argmax(dim=-1).item()
        """,
    # A helper given the model whose inputs stay on the CPU (no move in sight): nothing says
    # where the model runs; and a helper whose model is fed moved inputs but whose tensor only
    # meets a plotting call.
    """
        import torch
        def sample(model, latent_dim, loader):
            for features, _ in loader:
                out = model(features)
            noise = torch.randn(8, latent_dim)
            return model.generator_forward(noise)
        """,
    """
        import torch
        def train(model, device, loader, opt, plot):
            for features, y in loader:
                loss = (model(features.to(device)) - y.to(device)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            grid = torch.zeros(8, 8)
            plot(grid)
        """,
    # An indexed assignment into a CPU tensor from a network nothing moves.
    """
        import torch
        import torch.nn as nn
        class Agent:
            def __init__(self):
                self.target_q = nn.Linear(4, 2)
            def train(self, states, mask):
                next_values = torch.zeros(states.size(0))
                next_values[mask] = self.target_q(states).max(1)[0].detach()
                return next_values
        """,
    # A number updated in place (``base *= ...``) is still the number its default says, not
    # a tensor (x-transformers' rotary embedding); the result is moved before it meets ``x``.
    """
        import torch
        import torch.nn as nn
        class Rotary(nn.Module):
            def forward(self, x, base=10000.0, factor=1.0):
                base *= factor ** 2
                inv_freq = 1.0 / (base ** (torch.arange(0, x.shape[-1], 2).float() / x.shape[-1]))
                return x * inv_freq.to(x.device).sum()
        """,
    # The fixes: device= from the input, x.new_zeros, a registered buffer.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.ones(4))
            def forward(self, x):
                a = x + torch.zeros(x.size(0), 4, device=x.device)
                b = a * x.new_ones(x.size(0), 4)
                return b * self.scale
        """,
    # Moved afterwards: .to(x.device), .type_as(x), .cuda(), in the chain or on the name.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                pos = torch.arange(x.size(1)).float()
                pos = pos.to(x.device)
                noise = torch.randn(x.shape).type_as(x)
                eye = torch.eye(4).cuda()
                return x + pos + noise + eye
        """,
    # 0-dim scalars broadcast across devices.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                scale = torch.tensor(2.0)
                return x * scale + torch.zeros(()) + torch.tensor(self.eps)
        """,
    # Only indexing and shape arithmetic on the host.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                idx = torch.arange(x.size(0))
                n = len(torch.ones(3).tolist())
                return x[idx, :n]
        """,
    # Combined only with host values: sizes and counts.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x, steps=10):
                length = x.size(1)
                grid = torch.linspace(0, 1, steps) * length
                return x.sum() , grid
        """,
    # Not in forward: __init__ and a method forward does not call.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(4, 4))
            def forward(self, x):
                return x @ self.w
            def sample(self, n):
                return torch.randn(n, 4) @ self.w
        """,
    # Not an nn.Module; a plain function.
    """
        import torch
        class Sampler:
            def forward(self, x):
                return x + torch.randn(3)
        def jitter(x):
            return x + torch.randn(x.shape)
        """,
    # A file that sets the default device.
    """
        import torch
        import torch.nn as nn
        torch.set_default_device("cuda")
        class Net(nn.Module):
            def forward(self, x):
                return x + torch.zeros(3)
        """,
    # **kwargs may carry device=; a module whose input is built on the host.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x, **kw):
                return x + torch.zeros(3, **kw)
        """,
    # .cpu() moves the input to the host first: both on the CPU.
    """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return x.cpu() + torch.ones(3)
        """,
    # A helper whose every call passes a tensor built on the host (tokenised words): CPU + CPU.
    """
        import torch
        import torch.nn as nn
        class Embed(nn.Module):
            def _pad(self, ids, size):
                return torch.cat((ids, torch.zeros(size - len(ids)).long()))
            def forward(self, words, extra):
                a = self._pad(torch.LongTensor(words), 16)
                b = self._pad(ids=torch.tensor([1, 2]), size=8)
                return a, b
        """,
    # ``.type(x.type())``: the type string ('torch.cuda.FloatTensor') carries x's device.
    """
        import torch
        import torch.nn as nn
        class Pad(nn.Module):
            def forward(self, x):
                tail = torch.zeros(x.size(0), 3).type(x.type())
                return torch.cat([x, tail], 1)
        """,
    # Helpers fed host values: a parameter annotated ``Tuple[int, int]``, ``x.shape`` and a number
    # at every call, bounds the helper itself passes to ``torch.randint``.
    """
        from typing import Tuple
        import torch
        import torch.nn as nn
        def span_count(grid: Tuple[int, int], width: int) -> int:
            rows, steps = grid
            return int(steps / width + torch.rand(1))
        def jitter_count(grid, rate):
            return int(rate * grid[1] + torch.rand(1))
        def pick(lo, hi, width):
            first = torch.randint(lo, hi - width, (1,))
            return first - lo, hi - first
        class Masker(nn.Module):
            def forward(self, x):
                k = span_count(self.grid, 4) + jitter_count(x.shape, 0.3)
                return x[:, k:], pick(0, x.size(1), 2)
        """,
    # A helper given a local assigned a part of a shape: a Python int (deep-daze's
    # ``width = out.shape[-1]`` then ``self.sample_sizes(..., width, ...)``).
    """
        import torch
        import torch.nn as nn
        class Cutouts(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.batch_size = 4
            def sample_sizes(self, width):
                samples = torch.zeros(self.batch_size).normal_(mean=0.5, std=0.1)
                return (samples * width).int()
            def forward(self, x):
                out = self.lin(x)
                width = out.shape[-1]
                sizes = self.sample_sizes(width)
                return [out[..., :s] for s in sizes]
        """,
    # A script that never moves anything to an accelerator: the model it builds runs on the CPU.
    """
        import torch
        import torch.nn as nn
        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(8, 16, batch_first=True)
            def forward(self, x):
                h0 = torch.zeros(1, x.size(0), 16)
                return self.lstm(x, (h0, h0))[0]
        model = RNN()
        print(model(torch.randn(4, 5, 8)).shape)
        """,
    # The state moved where there is a GPU (``if use_cuda: return result.cuda()``), kept on the CPU otherwise.
    """
        import torch
        import torch.nn as nn
        use_cuda = torch.cuda.is_available()
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16)
            def forward(self, x, hidden):
                return self.gru(x, hidden)
            def init_hidden(self):
                result = torch.zeros(1, 1, 16)
                if use_cuda:
                    return result.cuda()
                return result
        """,
    # ``init_hidden`` on the parameters' device; a method whose tensor never reaches the model.
    """
        import torch
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16)
            def forward(self, x, hidden):
                return self.gru(x, hidden)
            def init_hidden(self, n):
                weight = next(self.parameters())
                return weight.new_zeros(1, n, 16)
            def count(self, n):
                return torch.zeros(n).sum().item()
        """,
    # A mask a helper makes on the host, moved to the input's device by forward.
    """
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 2)
            def _mask(self, n):
                return torch.triu(torch.ones(n, n), diagonal=1).bool()
            def forward(self, src):
                return self.enc(src, self._mask(len(src)).to(src.device))
        """,
    # Training code: the model never moved (CPU), the state moved with the model, or made there.
    """
        import torch
        import torch.nn as nn
        cpu_model = nn.LSTM(8, 16)
        device = "cuda"
        model = nn.LSTM(8, 16).to(device)
        for x in loader:
            h = torch.zeros(1, x.size(1), 16)
            out, _ = cpu_model(x, (h, h))
            h1 = torch.zeros(1, x.size(1), 16).to(device)
            out, _ = model(x.to(device), (h1, h1))
            h2 = torch.zeros(1, x.size(1), 16, device=device)
            out, _ = model(x.to(device), (h2, h2))
        """,
    # The CPU branch of an ``if torch.cuda.is_available()`` whose other branch moves the state.
    """
        import torch
        import torch.nn as nn
        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16)
            def forward(self, x, hidden):
                return self.gru(x, hidden)
            def init_hidden(self):
                if torch.cuda.is_available():
                    hidden = torch.zeros(1, 1, 16).cuda()
                else:
                    hidden = torch.zeros(1, 1, 16)
                return hidden
        """,
    # A same-file helper that moves what it is given to the GPU when there is one.
    """
        import torch
        import torch.nn as nn
        def cuda_variable(tensor):
            if torch.cuda.is_available():
                return tensor.cuda()
            return tensor
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16)
            def forward(self, x, hidden):
                return self.gru(x, hidden)
            def init_hidden(self):
                return cuda_variable(torch.zeros(1, 1, 16))
        """,
    # The targets and lengths of a CTC loss made on the CPU: torch takes them there (the native
    # kernel moves CPU targets to the log-probs' device, cuDNN's wants them on the CPU), in a
    # loss module's forward (speechbrain 1.1.2's FastSpeech2 ``ForwardSumLoss``) and in training
    # code beside a moved model (the ``input_lengths`` of PyTorch's own CTCLoss example).
    """
        import torch
        import torch.nn as nn
        class ForwardSumLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.log_softmax = nn.LogSoftmax(dim=3)
                self.ctc_loss = nn.CTCLoss(zero_infinity=True)
            def forward(self, attn_logprob, key_lens, query_lens):
                total = 0.0
                for b in range(attn_logprob.shape[0]):
                    target_seq = torch.arange(1, key_lens[b] + 1).unsqueeze(0)
                    logprob = self.log_softmax(attn_logprob[b].permute(1, 0, 2)[None])[0]
                    total = total + self.ctc_loss(logprob, target_seq, input_lengths=query_lens[b:b + 1],
                                                  target_lengths=key_lens[b:b + 1])
                return total / attn_logprob.shape[0]
        """,
    """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.GRU(13, 32)
                self.out = nn.Linear(32, 29)
            def forward(self, x):
                return self.out(self.rnn(x)[0]).log_softmax(2)
        device = torch.device("cuda")
        model = Net().to(device)
        ctc = nn.CTCLoss(blank=0)
        opt = torch.optim.Adam(model.parameters())
        for feats, transcripts in loader:
            log_probs = model(feats.to(device))
            input_lengths = torch.full((feats.shape[1],), feats.shape[0], dtype=torch.long)
            target_lengths = torch.tensor([len(t) for t in transcripts])
            loss = ctc(log_probs, transcripts, input_lengths, target_lengths)
            loss = loss + F.ctc_loss(log_probs, transcripts, input_lengths=torch.full((2,), 5), target_lengths=target_lengths)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
]


INVALID = [
    # The same helper shape given a local that holds a tensor: a statistic of the output.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)
                def noisy(self, scale):
                    return torch.randn(4) * scale
                def forward(self, x):
                    out = self.lin(x)
                    scale = out.std()
                    return out + self.noisy(scale)
            """,
        lines=(9,),
        messages=("`torch.randn(...)` in `M.forward` has no device=, so it is made on the CPU and then combined "
                  "with `scale`: that fails with a device mismatch when the model runs on a GPU; pass "
                  "device=scale.device",),
        fixed="""
            import torch
            import torch.nn as nn
            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)
                def noisy(self, scale):
                    return torch.randn(4, device=scale.device) * scale
                def forward(self, x):
                    out = self.lin(x)
                    scale = out.std()
                    return out + self.noisy(scale)
            """,
    ),
    # A tensor updated in place stays one: ``h`` holds the layer's output.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    h = self.fc(x)
                    h *= 2
                    return h + torch.ones(4)
            """,
        lines=(11,),
        messages=(message("torch.ones", "Net", "h", "ones"),),
    ),
    # ``.type(torch.half)`` changes the dtype only: still on the CPU.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Pad(nn.Module):
                def forward(self, x):
                    tail = torch.zeros(x.size(0), 3).type(torch.half)
                    return torch.cat([x, tail], 1)
            """,
        lines=(6,),
        messages=(message("torch.zeros", "Pad", "x", "zeros"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Pad(nn.Module):
                def forward(self, x):
                    tail = torch.zeros(x.size(0), 3, device=x.device).type(torch.half)
                    return torch.cat([x, tail], 1)
            """,
    ),
    # A helper fed a number and the model's input: the input carries the device.
    Invalid(
        """
            import torch
            import torch.nn as nn
            def blend(h, rate):
                return rate * h + torch.rand(4)
            class Mixer(nn.Module):
                def forward(self, x):
                    return blend(x, 0.5)
            """,
        lines=(5,),
        messages=(message("torch.rand", "Mixer", "h", "rand"),),
        fixed="""
            import torch
            import torch.nn as nn
            def blend(h, rate):
                return rate * h + torch.rand(4, device=h.device)
            class Mixer(nn.Module):
                def forward(self, x):
                    return blend(x, 0.5)
            """,
    ),
    # The same helper, also called with the model's input: reported.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Embed(nn.Module):
                def _pad(self, ids, size):
                    return torch.cat((ids, torch.zeros(size - len(ids)).long()))
                def forward(self, words, x):
                    return self._pad(torch.LongTensor(words), 16), self._pad(x, 16)
            """,
        lines=(6,),
        messages=(message("torch.zeros", "Embed", "ids", "zeros"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Embed(nn.Module):
                def _pad(self, ids, size):
                    return torch.cat((ids, torch.zeros(size - len(ids), device=ids.device).long()))
                def forward(self, words, x):
                    return self._pad(torch.LongTensor(words), 16), self._pad(x, 16)
            """,
    ),
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    return x + torch.zeros(x.size(0), 4)
            """,
        lines=(6,),
        messages=(message("torch.zeros", "Net", "x", "zeros"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    return x + torch.zeros(x.size(0), 4, device=x.device)
            """,
    ),
    # Through a local name and a dtype-only chain.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class PositionalEncoding(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1)).float().unsqueeze(0)
                    return x + pos
            """,
        lines=(6,),
        messages=(message("torch.arange", "PositionalEncoding", "x", "arange"),),
        fixed="""
            import torch
            import torch.nn as nn
            class PositionalEncoding(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1), device=x.device).float().unsqueeze(0)
                    return x + pos
            """,
    ),
    # torch.cat with the input, a list literal passed to torch.tensor.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    cls = torch.tensor([[1.0, 0.0]])
                    return torch.cat([x, cls.expand(x.size(0), 2)], dim=1)
            """,
        lines=(6,),
        messages=(message("torch.tensor", "Net", "x", "tensor"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    cls = torch.tensor([[1.0, 0.0]], device=x.device)
                    return torch.cat([x, cls.expand(x.size(0), 2)], dim=1)
            """,
    ),
    # A causal mask meeting the scores through masked_fill.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Attention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.qk = nn.Linear(8, 8)
                def forward(self, x):
                    scores = self.qk(x) @ x.transpose(1, 2)
                    mask = torch.ones(x.size(1), x.size(1)).triu(1).bool()
                    return scores.masked_fill(mask, float("-inf"))
            """,
        lines=(10,),
        messages=(message("torch.ones", "Attention", "scores", "ones"),),
    ),
    # Noise added to a parameter.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Noisy(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.weight = nn.Parameter(torch.zeros(4, 4))
                def forward(self, x):
                    w = self.weight + 0.01 * torch.randn(4, 4)
                    return x @ w
            """,
        lines=(9,),
        messages=(message("torch.randn", "Noisy", "self.weight", "randn"),),
    ),
    # In a helper method forward calls.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def _noise(self, h):
                    return h + torch.rand(h.shape)
                def forward(self, x):
                    return self._noise(x)
            """,
        lines=(6,),
        messages=(message("torch.rand", "Net", "h", "rand"),),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def _noise(self, h):
                    return h + torch.rand(h.shape, device=h.device)
                def forward(self, x):
                    return self._noise(x)
            """,
    ),
    # An identity matrix through torch.matmul; an aliased import.
    Invalid(
        """
            import torch as T
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    return T.matmul(x, T.eye(x.size(-1)))
            """,
        lines=(6,),
        messages=(message("T.eye", "Net", "x", "eye"),),
        fixed="""
            import torch as T
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    return T.matmul(x, T.eye(x.size(-1), device=x.device))
            """,
    ),
    # The output of a layer; torch.full.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    h = self.fc(x)
                    bias = torch.full((4,), 0.5)
                    return h - bias
            """,
        lines=(10,),
        messages=(message("torch.full", "Net", "h", "full"),),
    ),
    # A subclass of a same-file module; augmented assignment.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Base(nn.Module):
                pass
            class Net(Base):
                def forward(self, x):
                    x += torch.randn(x.shape)
                    return x
            """,
        lines=(8,),
        messages=(message("torch.randn", "Net", "x", "randn"),),
    ),
    # randint and linspace, each combined with the input.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x, t):
                    steps = torch.linspace(0, 1, 10)
                    noise = torch.randint(0, 2, (10,))
                    return x * steps + t * noise
            """,
        lines=(6, 7),
        messages=(message("torch.linspace", "Net", "x", "linspace"), message("torch.randint", "Net", "t", "randint")),
        fixed="""
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x, t):
                    steps = torch.linspace(0, 1, 10, device=x.device)
                    noise = torch.randint(0, 2, (10,), device=t.device)
                    return x * steps + t * noise
            """,
    ),
    # An LSTM's initial state made in forward and handed to the LSTM with the input (issue 40).
    Invalid(
        """
            import torch
            import torch.nn as nn
            class RNN(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(8, 16, 2, batch_first=True)
                def forward(self, x):
                    h0 = torch.zeros(2, x.size(0), 16)
                    c0 = torch.zeros(2, x.size(0), 16)
                    out, _ = self.lstm(x, (h0, c0))
                    return out
            """,
        lines=(9, 10),
        messages=(
                  message("torch.zeros", "RNN", "x", "zeros", "self.lstm"),
                  message("torch.zeros", "RNN", "x", "zeros", "self.lstm"),
        ),
        fixed="""
            import torch
            import torch.nn as nn
            class RNN(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(8, 16, 2, batch_first=True)
                def forward(self, x):
                    h0 = torch.zeros(2, x.size(0), 16, device=x.device)
                    c0 = torch.zeros(2, x.size(0), 16, device=x.device)
                    out, _ = self.lstm(x, (h0, c0))
                    return out
            """,
    ),
    # nanoGPT's causal mask made in forward: a function around the factory, then ``masked_fill``.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Attention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.qkv = nn.Linear(8, 24)
                def forward(self, x):
                    T = x.size(1)
                    q, k, v = self.qkv(x).chunk(3, dim=-1)
                    att = q @ k.transpose(-2, -1)
                    mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
                    att = att.masked_fill(mask, float("-inf"))
                    return att.softmax(-1) @ v
            """,
        lines=(12,),
        messages=(
                  message("torch.ones", "Attention", "att", "ones"),
        ),
    ),
    # Positions handed to an Embedding with nothing else naming the device (``idx`` reads as an index).
    Invalid(
        """
            import torch
            import torch.nn as nn
            class GPT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.wte = nn.Embedding(100, 8)
                    self.wpe = nn.Embedding(32, 8)
                def forward(self, idx):
                    pos = torch.arange(0, idx.size(1), dtype=torch.long).unsqueeze(0)
                    return self.wte(idx) + self.wpe(pos)
            """,
        lines=(10,),
        messages=(
                  message("torch.arange", "GPT", "self.wpe", "arange", "self.wpe"),
        ),
    ),
    # A state a helper makes when none is given, met with a parameter in the loop.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class GRU(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.W = nn.Parameter(torch.randn(16, 16))
                def _state(self, X, H):
                    if H is None:
                        H = torch.zeros(X.shape[1], 16)
                    return H
                def forward(self, inputs, H=None):
                    H = self._state(inputs, H)
                    for X in inputs:
                        H = torch.tanh(X + torch.matmul(H, self.W))
                    return H
            """,
        lines=(10,),
        messages=(
                  message("torch.zeros", "GRU", "self.W", "zeros"),
        ),
    ),
    # ``init_hidden`` for the training code (no caller here): the GRU's initial state on the CPU.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gru = nn.GRU(8, 16)
                def forward(self, x, hidden):
                    return self.gru(x, hidden)
                def init_hidden(self, batch_size):
                    return torch.zeros(1, batch_size, 16)
            """,
        lines=(11,),
        messages=(
                  message("torch.zeros", "Encoder", "self.gru", "zeros", "self.gru", "init_hidden", returned=True),
        ),
    ),
    # A Lightning step: the state made there and passed to the model with the batch.
    Invalid(
        """
            import torch
            import torch.nn as nn
            import pytorch_lightning as pl
            class Model(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(8, 16)
                def forward(self, x, state):
                    return self.lstm(x, state)[0]
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    h = torch.zeros(1, x.size(1), 16)
                    return (self(x, (h, h)) - y).pow(2).mean()
            """,
        lines=(13,),
        messages=(
                  message("torch.zeros", "Model", "x", "zeros", "self", "training_step"),
        ),
    ),
    # Training code: the LSTM's state made in the loop, handed to the model moved to ``device``.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class LSTMModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(8, 16, batch_first=True)
                def forward(self, x, state):
                    return self.lstm(x, state)[0]
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = LSTMModel().to(device)
            for x, y in loader:
                h0 = torch.zeros(1, x.size(0), 16)
                out = model(x.to(device), (h0, h0))
            """,
        lines=(13,), messages=(moved_message("torch.zeros", None, "model", "device"),)),
    # Training code: GAN labels made in the loop, met with a moved model's output in the loss.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class D(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 1)
                def forward(self, x):
                    return torch.sigmoid(self.fc(x))
            def train(loader, device):
                netD = D()
                netD = netD.to(device)
                bce = nn.BCELoss()
                for real in loader:
                    real_labels = torch.ones(real.size(0))
                    loss = bce(netD(real.to(device)).view(-1), real_labels)
            """,
        lines=(15,), messages=(moved_message("torch.ones", "train", "netD", "device"),)),
    # Positions handed to an embedding held in a ModuleDict (nanoGPT's ``self.transformer.wpe``).
    Invalid(
        """
            import torch
            import torch.nn as nn
            class GPT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(100, 8), wpe=nn.Embedding(32, 8)))
                def forward(self, idx):
                    pos = torch.arange(0, idx.size(1), dtype=torch.long).unsqueeze(0)
                    return self.transformer.wte(idx) + self.transformer.wpe(pos)
            """,
        lines=(9,), messages=(message("torch.arange", "GPT", "self.transformer.wpe", "arange", "self.transformer.wpe"),)),
    # Training code in a helper given the model: its inputs moved to ``device`` say where the model
    # runs (learners' rasbt helper_train ``train_gan_v1``, mutation benchmark): a noise made
    # without device= and handed to a forward of it, labels met with its output in a loss held by
    # a ``loss_fn=None`` parameter.
    Invalid(
        """
            import torch
            import torch.nn.functional as F
            def train_gan(num_epochs, model, opt_d, latent_dim, device, train_loader, loss_fn=None):
                if loss_fn is None:
                    loss_fn = F.binary_cross_entropy_with_logits
                fixed_noise = torch.randn(64, latent_dim, 1, 1)
                for epoch in range(num_epochs):
                    for features, _ in train_loader:
                        real_images = features.to(device)
                        real_labels = torch.ones(features.size(0))
                        pred_real = model.discriminator_forward(real_images).view(-1)
                        loss = loss_fn(pred_real, real_labels)
                        opt_d.zero_grad()
                        loss.backward()
                        opt_d.step()
                    with torch.no_grad():
                        fake = model.generator_forward(fixed_noise).detach().cpu()
            """,
        lines=(7, 11),
        messages=(moved_message("torch.randn", "train_gan", "model", "device"),
                  moved_message("torch.ones", "train_gan", "model", "device"))),
    # A DQN agent: the target values made without device= and filled by indexed assignment from
    # the output of a network the class moved (learners' CS547 HW8 ``Algo.train``).
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Agent:
                def __init__(self, device):
                    self.target_q = nn.Linear(4, 2).to(device)
                def train(self, states, mask, rewards):
                    next_values = torch.zeros(states.size(0))
                    next_values[mask] = self.target_q(states).max(1)[0].detach()
                    return rewards + 0.99 * next_values
            """,
        lines=(8,), messages=(moved_message("torch.zeros", "train", "self.target_q", "device"),)),
    # A helper (no model class) scattering into a CPU-made tensor with its parameter as the index,
    # where a same-file call, through another helper's indexing, passes a tensor made on a device
    # (learners' ShusenTang d2lzh_pytorch ``one_hot``, mutation benchmark).
    Invalid(
        """
            import torch
            def one_hot(x, n_class, dtype=torch.float32):
                x = x.long()
                res = torch.zeros(x.shape[0], n_class, dtype=dtype)
                res.scatter_(1, x.view(-1, 1), 1)
                return res
            def to_onehot(X, n_class):
                return [one_hot(X[:, i], n_class) for i in range(X.shape[1])]
            def predict_rnn(rnn, params, vocab_size, device, output):
                X = to_onehot(torch.tensor([[output[-1]]], device=device), vocab_size)
                return rnn(X, params)
            """,
        lines=(5,),
        messages=("`torch.zeros(...)` in `one_hot` has no device=, so it is made on the CPU and then combined with "
                  "`x`, which a call gives on `device` (`to_onehot(torch.tensor([[output[-1]]], device=device), "
                  "vo...`): that fails with a device mismatch; pass device=x.device or use x.new_zeros(...)",)),
    # Filled row by row across devices (fine), then combined with the input on the CPU: still
    # the bug (the flair pooling's look-alike that adds the input back).
    Invalid(
        """
            import torch
            from torch import nn
            class Pooler(nn.Module):
                def forward(self, hidden, lengths):
                    result = torch.zeros(hidden.shape[0], hidden.shape[2])
                    for i in torch.arange(hidden.shape[0]):
                        result[i] = hidden[i, : lengths[i]].mean(dim=0)
                    return torch.cat([result, hidden[:, 0]], dim=-1)
            """,
        lines=(6,), messages=(message("torch.zeros", "Pooler", "hidden", "zeros"),),
        fixed="""
            import torch
            from torch import nn
            class Pooler(nn.Module):
                def forward(self, hidden, lengths):
                    result = torch.zeros(hidden.shape[0], hidden.shape[2], device=hidden.device)
                    for i in torch.arange(hidden.shape[0]):
                        result[i] = hidden[i, : lengths[i]].mean(dim=0)
                    return torch.cat([result, hidden[:, 0]], dim=-1)
            """),
    # Rows picked by an index tensor (``index_put_``, not select + copy_): the CPU target and
    # the model's values must be on one device.
    Invalid(
        """
            import torch
            from torch import nn
            class Scatter(nn.Module):
                def forward(self, x, idx):
                    out = torch.zeros(x.shape[0] * 2, x.shape[1])
                    out[idx] = x
                    return out
            """,
        lines=(6,), messages=(message("torch.zeros", "Scatter", "x", "zeros"),),
        fixed="""
            import torch
            from torch import nn
            class Scatter(nn.Module):
                def forward(self, x, idx):
                    out = torch.zeros(x.shape[0] * 2, x.shape[1], device=x.device)
                    out[idx] = x
                    return out
            """),
    # The same helper called with is_causal=True: the CPU mask meets the bias on the input's device.
    Invalid(
        """
            import torch
            import math
            from torch import nn
            class Samformer(nn.Module):
                def __init__(self, n, h):
                    super().__init__()
                    self.q = nn.Linear(n, h)
                    self.k = nn.Linear(n, h)
                def _attention(self, query, key, value, is_causal=False):
                    L, S = query.size(-2), key.size(-2)
                    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
                    if is_causal:
                        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
                        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
                    weight = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1)) + attn_bias
                    return torch.softmax(weight, dim=-1) @ value
                def forward(self, x):
                    return self._attention(self.q(x), self.k(x), x, is_causal=True)
            """,
        lines=(14,), messages=(message("torch.ones", "Samformer", "attn_bias", "ones"),)),
]
