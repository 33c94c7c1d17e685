"""TL010's cases adapted from public reports: a tensor made without ``device=`` in code a
module's ``forward`` runs, that then meets the model's tensors (an LSTM's initial state, a
causal mask, positions, an identity matrix) and fails on the GPU (``BUGS``); and the fixed or
similar code that creates it on the input's device, moves it, registers it as a buffer or keeps
it on the host (``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

from tests.rules.reports import Report

BUGS = [
    # the initial LSTM state made in forward and handed to the LSTM with the input
    """
    import torch
    import torch.nn as nn

    class BiRNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super().__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(hidden_size * 2, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers * 2, x.size(0), self.hidden_size)
            c0 = torch.zeros(self.num_layers * 2, x.size(0), self.hidden_size)
            out, _ = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])
    # https://github.com/yunjey/pytorch-tutorial/issues/40
    """,
    # the same with the deprecated Variable wrapper, as time-series tutorials wrote it
    """
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    class LSTM(nn.Module):
        def __init__(self, num_classes, input_size, hidden_size, num_layers):
            super().__init__()
            self.num_layers = num_layers
            self.hidden_size = hidden_size
            self.lstm = nn.LSTM(input_size=input_size, hidden_size=hidden_size, num_layers=num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size, num_classes)

        def forward(self, x):
            h_0 = Variable(torch.zeros(self.num_layers, x.size(0), self.hidden_size))
            c_0 = Variable(torch.zeros(self.num_layers, x.size(0), self.hidden_size))
            ula, (h_out, _) = self.lstm(x, (h_0, c_0))
            h_out = h_out.view(-1, self.hidden_size)
            return self.fc(h_out)
    # https://github.com/spdin/time-series-prediction-lstm-pytorch/issues/1
    """,
    # a GRU wrapper that makes h0 when none is given
    """
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers=1, bidirectional=False, batch_first=True):
            super().__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.directions = 2 if bidirectional else 1
            self.batch_first = batch_first
            self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=batch_first,
                              bidirectional=bidirectional)

        def forward(self, input, h0=None):
            if h0 is None:
                batch = input.shape[0] if self.batch_first else input.shape[1]
                h0 = torch.zeros(self.directions * self.num_layers, batch, self.hidden_size)
            return self.gru(input, h0)
    # https://github.com/dotnet/TorchSharp/issues/591
    """,
    # a recurrent graph cell: the hidden state made by a helper, then fed to a layer
    """
    import torch
    from torch_geometric.nn import ChebConv

    class GConvGRU(torch.nn.Module):
        def __init__(self, in_channels, out_channels, K):
            super().__init__()
            self.out_channels = out_channels
            self.conv_x_z = ChebConv(in_channels, out_channels, K)
            self.conv_h_z = ChebConv(out_channels, out_channels, K)

        def _set_hidden_state(self, X, H):
            if H is None:
                H = torch.zeros(X.shape[0], self.out_channels)
            return H

        def _update_gate(self, X, edge_index, edge_weight, H):
            Z = self.conv_x_z(X, edge_index, edge_weight)
            Z = Z + self.conv_h_z(H, edge_index, edge_weight)
            return torch.sigmoid(Z)

        def forward(self, X, edge_index, edge_weight=None, H=None):
            H = self._set_hidden_state(X, H)
            Z = self._update_gate(X, edge_index, edge_weight, H)
            return Z * H
    # https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/20
    """,
    # the same helper, its state concatenated with the input
    """
    import torch
    from torch_geometric_temporal.nn.recurrent.dcrnn import DConv

    class DCRNN(torch.nn.Module):
        def __init__(self, in_channels, out_channels, K):
            super().__init__()
            self.out_channels = out_channels
            self.conv_x_z = DConv(in_channels + out_channels, out_channels, K)

        def _set_hidden_state(self, X, H):
            if H is None:
                H = torch.zeros(X.shape[0], self.out_channels)
            return H

        def _calculate_update_gate(self, X, edge_index, edge_weight, H):
            Z = torch.cat([X, H], dim=1)
            Z = self.conv_x_z(Z, edge_index, edge_weight)
            return torch.sigmoid(Z)

        def forward(self, X, edge_index, edge_weight=None, H=None):
            H = self._set_hidden_state(X, H)
            Z = self._calculate_update_gate(X, edge_index, edge_weight, H)
            return Z * H
    # https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/18
    """,
    # a GRU from scratch: the state meets the recurrent weights
    """
    import torch
    from torch import nn

    class GRUScratch(nn.Module):
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.num_hiddens = num_hiddens
            init_weight = lambda *shape: nn.Parameter(torch.randn(*shape) * sigma)
            self.W_xz = init_weight(num_inputs, num_hiddens)
            self.W_hz = init_weight(num_hiddens, num_hiddens)
            self.b_z = nn.Parameter(torch.zeros(num_hiddens))

        def forward(self, inputs, H=None):
            if H is None:
                H = torch.zeros(inputs.shape[1], self.num_hiddens)
            outputs = []
            for X in inputs:
                Z = torch.sigmoid(torch.matmul(X, self.W_xz) + torch.matmul(H, self.W_hz) + self.b_z)
                H = Z * H
                outputs.append(H)
            return outputs, H
    # https://github.com/d2l-ai/d2l-en/pull/2233
    """,
    # a positional encoding's frequencies from arange, multiplied with the input
    """
    import numpy as np
    import torch
    import torch.nn as nn

    def positional_encoding(v, sigma, m):
        j = torch.arange(m)
        coeffs = 2 * np.pi * sigma ** (j / m)
        vp = coeffs * torch.unsqueeze(v, -1)
        vp_cat = torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)
        return vp_cat.flatten(-2, -1)

    class PositionalEncoding(nn.Module):
        def __init__(self, sigma, m):
            super().__init__()
            self.sigma = sigma
            self.m = m

        def forward(self, v):
            return positional_encoding(v, self.sigma, self.m)
    # https://github.com/jmclong/random-fourier-features-pytorch/pull/4
    """,
    # a LightningModule: the initial state made in the step, passed to forward with the batch
    """
    import torch
    import torch.nn as nn
    import pytorch_lightning as pl

    class RNN(pl.LightningModule):
        def __init__(self, input_size, hidden_size, embedding_size, n_layers, output_size):
            super().__init__()
            self.n_layers = n_layers
            self.hidden_size = hidden_size
            self.criterion = nn.CrossEntropyLoss()
            self.embedding = nn.Embedding(input_size, embedding_size)
            self.lstm = nn.LSTM(embedding_size, hidden_size, n_layers)
            self.out_fc = nn.Linear(hidden_size, output_size)

        def forward(self, letters, hidden, cell):
            emb = self.embedding(letters).unsqueeze(0)
            out, (hidden, cell) = self.lstm(emb, (hidden, cell))
            return self.out_fc(out.squeeze(0)), hidden, cell

        def training_step(self, batch, batch_idx):
            letters, targets = batch
            hidden = torch.zeros(self.n_layers, letters.size(0), self.hidden_size)
            cell = torch.zeros(self.n_layers, letters.size(0), self.hidden_size)
            output, hidden, cell = self(letters, hidden, cell)
            return self.criterion(output, targets)

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=5e-4)
    # https://github.com/Lightning-AI/pytorch-lightning/issues/3738
    """,
    # an identity matrix fed to the encoder and added to a product of the model's tensors
    """
    import torch

    class CASTER(torch.nn.Module):
        def __init__(self, drug_channels, hidden, lambda3=1e-5):
            super().__init__()
            self.drug_channels = drug_channels
            self.lambda3 = lambda3
            self.encoder = torch.nn.Sequential(torch.nn.Linear(drug_channels, hidden), torch.nn.ReLU(True),
                                               torch.nn.Linear(hidden, hidden))
            self.predictor = torch.nn.Linear(drug_channels, 1)

        def dictionary_encoder(self, latent, dictionary_latent):
            squared = torch.matmul(dictionary_latent, dictionary_latent.transpose(2, 1))
            squared_inv = torch.inverse(squared + self.lambda3 * (torch.eye(self.drug_channels)))
            closed_form = torch.matmul(squared_inv, dictionary_latent)
            return latent[:, None, :].matmul(closed_form.transpose(2, 1)).squeeze(1)

        def forward(self, features):
            latent = self.encoder(features)
            dictionary_latent = self.encoder(torch.eye(self.drug_channels))
            dictionary_latent = dictionary_latent.mul(features[:, :, None])
            return self.predictor(self.dictionary_encoder(latent, dictionary_latent))
    # https://github.com/AstraZeneca/chemicalx/issues/96
    """,
    # scaled dot-product attention written out: the causal mask made on the CPU
    """
    import math
    import torch
    import torch.nn as nn

    def scaled_dot_product_attention(query, key, value, is_causal=False):
        L, S = query.size(-2), key.size(-2)
        attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
        if is_causal:
            temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
            attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_weight = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        attn_weight = torch.softmax(attn_weight + attn_bias, dim=-1)
        return attn_weight @ value

    class CausalSelfAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            return scaled_dot_product_attention(q, k, v, is_causal=True)
    # https://github.com/pytorch/pytorch/issues/163026
    """,
    # an encoder layer's causal mask, handed to the attention layer
    """
    import torch
    import torch.nn as nn

    class EncoderLayer(nn.Module):
        def __init__(self, d_model, nhead):
            super().__init__()
            self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
            self.norm = nn.LayerNorm(d_model)

        def forward(self, src, is_causal=False):
            mask = None
            if is_causal:
                size = src.size(1)
                mask = torch.triu(torch.ones(size, size), diagonal=1).bool()
            out, _ = self.self_attn(src, src, src, attn_mask=mask)
            return self.norm(src + out)
    # https://github.com/mlverse/torch/pull/1473
    """,
    # a masked attention operator: the lower-triangular mask meets the bias
    """
    import torch
    import torch.nn as nn

    class SelfAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)

        def forward(self, x, past):
            query, key = self.q(x), self.k(torch.cat([past, x], dim=1))
            L, S = query.size(-2), key.size(-2)
            scores = query @ key.transpose(-2, -1)
            temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)
            scores = scores.masked_fill(temp_mask.logical_not(), float("-inf"))
            return scores.softmax(dim=-1)
    # https://github.com/InfiniTensor/llaisys/pull/11
    """,
    # a contrastive model's GRU state from init_hidden, passed back into the model by fit
    """
    import torch
    import torch.nn as nn

    class CPC(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.encoder = nn.Conv1d(1, dim, 10, stride=5)
            self.gru = nn.GRU(dim, 256, num_layers=1, batch_first=True)

        def init_hidden(self, batch_size):
            return torch.zeros(1, batch_size, 256)

        def forward(self, x, hidden):
            z = self.encoder(x).transpose(1, 2)
            output, hidden = self.gru(z, hidden)
            return output, hidden
    # https://github.com/talipucar/CPC/issues/1
    """,
]

LOOKALIKES = [
    # the tutorial as fixed: the state moved to the device the model was moved to
    """
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super().__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            c0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            out, _ = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])
    # https://github.com/yunjey/pytorch-tutorial/issues/40
    """,
    # an LSTM written out, its states moved to the input's device
    """
    import torch
    import torch.nn as nn

    class OptimizedLSTM(nn.Module):
        def __init__(self, input_sz, hidden_sz):
            super().__init__()
            self.hidden_size = hidden_sz
            self.weight_ih = nn.Parameter(torch.randn(input_sz, hidden_sz * 4))
            self.weight_hh = nn.Parameter(torch.randn(hidden_sz, hidden_sz * 4))

        def forward(self, x, init_states=None):
            bs, seq_sz, _ = x.size()
            if init_states is None:
                h_t, c_t = (torch.zeros(bs, self.hidden_size).to(x.device),
                            torch.zeros(bs, self.hidden_size).to(x.device))
            else:
                h_t, c_t = init_states
            for t in range(seq_sz):
                gates = x[:, t, :] @ self.weight_ih + h_t @ self.weight_hh
                h_t = torch.tanh(gates[:, :self.hidden_size])
            return h_t, c_t
    # https://github.com/keitakurita/Practical_NLP_in_PyTorch/issues/12
    """,
    # a spiking LSTM's state made by a helper and moved to the input's device
    """
    import torch
    import torch.nn as nn

    class SLSTM(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.lstm_cell = nn.LSTMCell(input_size, hidden_size)

        def _reshape_input(self, input_):
            device = input_.device
            b, _ = input_.size()
            return torch.zeros(b, self.hidden_size).to(device)

        def forward(self, input_, syn=None, mem=None):
            if syn is None:
                syn = self._reshape_input(input_)
            if mem is None:
                mem = self._reshape_input(input_)
            mem, syn = self.lstm_cell(input_, (mem, syn))
            return mem, syn
    # https://github.com/jeshraghian/snntorch/issues/198
    """,
    # a ConvLSTM cell's init_hidden on the device of its convolution's weight
    """
    import torch
    import torch.nn as nn

    class ConvLSTMCell(nn.Module):
        def __init__(self, input_dim, hidden_dim, kernel_size):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size, padding=kernel_size // 2)

        def forward(self, input_tensor, cur_state):
            h_cur, c_cur = cur_state
            combined = torch.cat([input_tensor, h_cur], dim=1)
            cc_i, cc_f, cc_o, cc_g = torch.split(self.conv(combined), self.hidden_dim, dim=1)
            c_next = torch.sigmoid(cc_f) * c_cur + torch.sigmoid(cc_i) * torch.tanh(cc_g)
            return torch.sigmoid(cc_o) * torch.tanh(c_next), c_next

        def init_hidden(self, batch_size, image_size):
            height, width = image_size
            return (torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device),
                    torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device))
    # https://github.com/ndrplz/ConvLSTM_pytorch/pull/10
    """,
    # the recurrent graph cell as fixed: the state moved to the input's device
    """
    import torch
    from torch_geometric.nn import ChebConv

    class GConvGRU(torch.nn.Module):
        def __init__(self, in_channels, out_channels, K):
            super().__init__()
            self.out_channels = out_channels
            self.conv_h_z = ChebConv(out_channels, out_channels, K)

        def _set_hidden_state(self, X, H):
            if H is None:
                H = torch.zeros(X.shape[0], self.out_channels).to(X.device)
            return H

        def forward(self, X, edge_index, edge_weight=None, H=None):
            H = self._set_hidden_state(X, H)
            return torch.sigmoid(self.conv_h_z(H, edge_index, edge_weight)) * H
    # https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/20
    """,
    # the GRU from scratch as fixed: the state made on the inputs' device
    """
    import torch
    from torch import nn

    class GRUScratch(nn.Module):
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.num_hiddens = num_hiddens
            self.W_xz = nn.Parameter(torch.randn(num_inputs, num_hiddens) * sigma)
            self.W_hz = nn.Parameter(torch.randn(num_hiddens, num_hiddens) * sigma)

        def forward(self, inputs, H=None):
            if H is None:
                H = torch.zeros(inputs.shape[1], self.num_hiddens, device=inputs.device)
            for X in inputs:
                Z = torch.sigmoid(torch.matmul(X, self.W_xz) + torch.matmul(H, self.W_hz))
                H = Z * H
            return H
    # https://github.com/d2l-ai/d2l-en/pull/2233
    """,
    # the positional encoding as fixed: arange on the input's device
    """
    import numpy as np
    import torch
    import torch.nn as nn

    def positional_encoding(v, sigma, m):
        j = torch.arange(m, device=v.device)
        coeffs = 2 * np.pi * sigma ** (j / m)
        vp = coeffs * torch.unsqueeze(v, -1)
        return torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1).flatten(-2, -1)

    class PositionalEncoding(nn.Module):
        def __init__(self, sigma, m):
            super().__init__()
            self.sigma = sigma
            self.m = m

        def forward(self, v):
            return positional_encoding(v, self.sigma, self.m)
    # https://github.com/jmclong/random-fourier-features-pytorch/pull/4
    """,
    # relative positions built on the CPU by a helper, moved where the hidden states are
    """
    import torch
    import torch.nn as nn

    class XLNetModel(nn.Module):
        def __init__(self, d_model, n_token):
            super().__init__()
            self.d_model = d_model
            self.word_embedding = nn.Embedding(n_token, d_model)

        @staticmethod
        def positional_embedding(pos_seq, inv_freq):
            sinusoid_inp = torch.einsum("i,d->id", pos_seq, inv_freq)
            return torch.cat([torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)], dim=-1)[:, None, :]

        def relative_positional_encoding(self, qlen, klen):
            freq_seq = torch.arange(0, self.d_model, 2.0, dtype=torch.float)
            inv_freq = 1 / torch.pow(10000, (freq_seq / self.d_model))
            fwd_pos_seq = torch.arange(klen, -qlen, -1.0)
            return self.positional_embedding(fwd_pos_seq, inv_freq)

        def forward(self, input_ids):
            output_h = self.word_embedding(input_ids)
            qlen = klen = input_ids.shape[0]
            pos_emb = self.relative_positional_encoding(qlen, klen)
            pos_emb = pos_emb.to(output_h.device)
            return output_h, pos_emb
    # https://github.com/huggingface/transformers/pull/44782
    """,
    # the word language model's square subsequent mask, moved to the source's device
    """
    import torch
    import torch.nn as nn

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, ninp, nhead, nlayers):
            super().__init__()
            self.src_mask = None
            self.encoder = nn.Embedding(ntoken, ninp)
            layer = nn.TransformerEncoderLayer(ninp, nhead)
            self.transformer_encoder = nn.TransformerEncoder(layer, nlayers)
            self.decoder = nn.Linear(ninp, ntoken)

        def _generate_square_subsequent_mask(self, sz):
            mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
            return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    self.src_mask = self._generate_square_subsequent_mask(len(src)).to(device)
            else:
                self.src_mask = None
            output = self.transformer_encoder(self.encoder(src), self.src_mask)
            return self.decoder(output)
    # https://github.com/pytorch/examples/pull/555
    """,
    # nanoGPT's causal mask: a registered buffer, moved with the model
    """
    import math
    import torch
    import torch.nn as nn
    from torch.nn import functional as F

    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd, n_head, block_size):
            super().__init__()
            self.n_head = n_head
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            return F.softmax(att, dim=-1) @ v
    # https://github.com/karpathy/nanoGPT/issues/170
    """,
    # a hierarchical attention network: the states moved to the GPU when there is one
    """
    import torch
    import torch.nn as nn

    class HierAttNet(nn.Module):
        def __init__(self, word_hidden_size, sent_hidden_size, batch_size):
            super().__init__()
            self.batch_size = batch_size
            self.word_hidden_size = word_hidden_size
            self.sent_hidden_size = sent_hidden_size
            self.word_gru = nn.GRU(100, word_hidden_size, bidirectional=True)
            self.sent_gru = nn.GRU(2 * word_hidden_size, sent_hidden_size, bidirectional=True)
            self._init_hidden_state()

        def _init_hidden_state(self, last_batch_size=None):
            batch_size = last_batch_size if last_batch_size else self.batch_size
            self.word_hidden_state = torch.zeros(2, batch_size, self.word_hidden_size)
            self.sent_hidden_state = torch.zeros(2, batch_size, self.sent_hidden_size)
            if torch.cuda.is_available():
                self.word_hidden_state = self.word_hidden_state.cuda()
                self.sent_hidden_state = self.sent_hidden_state.cuda()

        def forward(self, words):
            out, self.word_hidden_state = self.word_gru(words, self.word_hidden_state)
            out, self.sent_hidden_state = self.sent_gru(out, self.sent_hidden_state)
            return out
    # https://github.com/vietnh1009/Hierarchical-attention-networks-pytorch/issues/2
    """,
    # init_hidden that puts the states on the GPU itself
    """
    import torch
    import torch.nn as nn

    class LSTMClassifier(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super().__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size, num_classes)

        def init_hidden(self, num_layers, batch_size):
            return (torch.zeros(num_layers, batch_size, self.hidden_size).cuda(),
                    torch.zeros(num_layers, batch_size, self.hidden_size).cuda())

        def forward(self, x):
            hidden = self.init_hidden(self.num_layers, x.size(0))
            out, _ = self.lstm(x, hidden)
            return self.fc(out[:, -1])
    # https://github.com/pytorch/examples/pull/251
    """,
    # a positional encoding summed with its input after moving it there
    """
    import torch
    import torch.nn as nn

    class Summer(nn.Module):
        def __init__(self, penc):
            super().__init__()
            self.penc = penc

        def forward(self, tensor):
            penc = self.penc(tensor)
            assert tensor.size() == penc.size()
            return tensor + penc.to(tensor.device)
    # https://github.com/tatp22/multidim-positional-encoding/issues/33
    """,
    # scaled dot-product attention written out, as fixed: the mask on the query's device
    """
    import math
    import torch
    import torch.nn as nn

    def scaled_dot_product_attention(query, key, value, is_causal=False):
        L, S = query.size(-2), key.size(-2)
        attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
        if is_causal:
            temp_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=0)
            attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_weight = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        return torch.softmax(attn_weight + attn_bias, dim=-1) @ value

    class CausalSelfAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            return scaled_dot_product_attention(q, k, v, is_causal=True)
    # https://github.com/pytorch/pytorch/issues/163026
    """,
    # a block world's face colours: made and indexed on the host, the opacities brought there
    """
    import torch
    import torch.nn as nn

    class BlocksWorld(nn.Module):
        def __init__(self, n_blocks, n_faces):
            super().__init__()
            self.n_blocks = n_blocks
            self.BNF = n_faces
            self.opacity = nn.Parameter(torch.zeros(n_blocks))
            self.bkg = nn.Parameter(torch.zeros(3))

        def get_opacities(self):
            return torch.sigmoid(self.opacity)

        def get_scene_face_colors(self, cmap, filter_transparent=False):
            val_blocks = torch.linspace(0, 1, self.n_blocks + 1)[1:]
            if filter_transparent:
                val_blocks = val_blocks[self.get_opacities().cpu() > 0.5]
            values = torch.cat([torch.zeros(6), val_blocks.repeat_interleave(self.BNF)])
            colors = cmap(values.numpy())
            return torch.from_numpy(colors).float().to(self.bkg.device)

        def forward(self, x):
            return x * self.get_opacities()[None]
    # https://github.com/monniert/differentiable-blocksworld/issues/2
    """,
    # the encoder layer as fixed: the causal mask made on the source's device
    """
    import torch
    import torch.nn as nn

    class EncoderLayer(nn.Module):
        def __init__(self, d_model, nhead):
            super().__init__()
            self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)

        def forward(self, src, is_causal=False):
            mask = None
            if is_causal:
                size = src.size(1)
                mask = torch.triu(torch.ones(size, size, device=src.device), diagonal=1).bool()
            out, _ = self.self_attn(src, src, src, attn_mask=mask)
            return src + out
    # https://github.com/mlverse/torch/pull/1473
    """,
    # a mask kept as a registered buffer rather than an attribute
    """
    import torch
    import torch.nn as nn

    class Decoder(nn.Module):
        def __init__(self, max_len, d_model):
            super().__init__()
            self.proj = nn.Linear(d_model, d_model)
            mask = torch.triu(torch.ones(1, max_len, max_len), diagonal=1).bool()
            self.register_buffer("mask", mask)

        def forward(self, x, scores):
            T = x.size(1)
            return self.proj(x), scores.masked_fill(self.mask[:, :T, :T], -1e9)
    # https://github.com/karpathy/nanoGPT/issues/154
    """,
]
