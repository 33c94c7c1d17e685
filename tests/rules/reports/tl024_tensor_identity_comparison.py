"""TL024's cases adapted from public reports: ``is``/``is not`` where one side is a tensor or a
NumPy value (a sampled or top-k index, ``.any()``/``.all()`` of an array, an element of a bool
array) and the other a number or ``True``/``False``, or where one side is the Python number
``.item()`` just took out of a tensor and the other a token id that may lie outside CPython's
small-int cache (``BUGS``); and the fixed code, or code that looks the same and is right:
identity of two Python ints or of two tensor objects, ``bool(...)`` of an array compared with
``False``, ``allclose`` (a Python bool) compared with ``True`` (``LOOKALIKES``).
See ``tests/rules/reports/__init__.py``."""

BUGS = [
    # sampling a character decoder: an element of torch.multinomial's result is a tensor, never
    # the int EOS_token, so translation never stops at the end token
    """
    import torch
    from seq2seq_models import str2tensor, EOS_token, SOS_token

    def translate(encoder, decoder, enc_input, predict_len=100, temperature=0.9):
        _, hidden = encoder(str2tensor(enc_input), encoder.init_hidden())
        predicted = ''
        dec_input = str2tensor(SOS_token)
        for c in range(predict_len):
            output, hidden = decoder(dec_input, hidden)
            output_dist = output.data.view(-1).div(temperature).exp()
            top_i = torch.multinomial(output_dist, 1)[0]
            if top_i is EOS_token:
                break
            predicted += chr(top_i)
            dec_input = str2tensor(chr(top_i))
        return predicted
    # https://github.com/hunkim/PyTorchZeroToAll/blob/37d9ebd0a21163e53f2632b12400f63900a55698/14_1_seq2seq.py
    """,
    # the attention variant of the same tutorial
    """
    import torch
    from seq2seq_models import cuda_variable, str2tensor, EOS_token, SOS_token

    def translate(encoder, decoder, enc_input='thisissungkim.iloveyou.', predict_len=100, temperature=0.9):
        encoder_outputs, encoder_hidden = encoder(str2tensor(enc_input), encoder.init_hidden())
        hidden = encoder_hidden
        predicted = ''
        dec_input = str2tensor(SOS_token)
        for c in range(predict_len):
            output, hidden, attention = decoder(dec_input, hidden, encoder_outputs)
            output_dist = output.data.view(-1).div(temperature).exp()
            top_i = torch.multinomial(output_dist, 1)[0]
            # Stop at the EOS
            if top_i is EOS_token:
                break
            predicted_char = chr(top_i)
            predicted += predicted_char
            dec_input = str2tensor(predicted_char)
        return enc_input, predicted
    # https://github.com/hunkim/PyTorchZeroToAll/blob/2e44fb666d09cf24b223c18a210e6d3ace10b68e/14_2_seq2seq_att.py
    """,
    # beam search: the token id .item() takes out is a fresh int; with eos_token_id=32098 (T5's
    # <extra_id_1>) `is not` is always True and no hypothesis is ever finished
    """
    def beam_step(next_tokens, next_scores, batch_idx, vocab_size, eos_token_id, generated_hyps, next_sent_beam):
        for token_rank, (beam_token_id, beam_token_score) in enumerate(
                zip(next_tokens[batch_idx], next_scores[batch_idx])):
            beam_id = beam_token_id // vocab_size
            token_id = beam_token_id % vocab_size
            if eos_token_id is not None and token_id.item() is not eos_token_id:
                next_sent_beam.append((beam_token_score, token_id, beam_id))
            else:
                generated_hyps[batch_idx].add(beam_id, beam_token_score.item())
    # https://github.com/huggingface/transformers/pull/4745
    """,
    # the report: generate(eos_token_id=<extra_id_1>) breaks beam search in T5
    """
    import torch

    def add_finished(input_ids, next_tokens, next_scores, batch_idx, num_beams, eos_token_id, hyps):
        for rank, (token_id, score) in enumerate(zip(next_tokens[batch_idx], next_scores[batch_idx])):
            if (eos_token_id is not None) and (token_id.item() is eos_token_id):
                if rank >= num_beams:
                    continue
                hyps[batch_idx].add(input_ids[batch_idx].clone(), score.item())
    # https://github.com/huggingface/transformers/issues/4121
    """,
    # np.any returns a NumPy bool_, never the False object
    """
    import numpy as np

    def fits(sizes, limits):
        if np.any(np.array(sizes) < np.array(limits)) is False:
            return True
        return False
    # https://github.com/numpy/numpy/issues/8944
    """,
    # the test that fails: ndarray.all() is a bool_
    """
    import numpy as np

    def test_numpy_all_returns_boolean():
        assert np.array([False]).all() is False
    # https://github.com/numpy/numpy/issues/21165
    """,
    # the elements of a bool array are bool_ too
    """
    import numpy as np

    def all_cleared(n=3):
        flags = np.zeros(n, dtype=bool)
        return all(flags[k] is False for k in range(n))
    # https://github.com/numpy/numpy/issues/23199
    """,
    # an element of an array comparison
    """
    import numpy as np

    def mismatched(values, target):
        f = (np.array(values) == target)[0]
        return f is False
    # https://github.com/numpy/numpy/issues/20744
    """,
    # the NaN-aware equality check: .all() of an array expression compared with `is False`
    """
    import numpy as np

    def differ(a, b):
        if ((a == b) | (np.isnan(a) & np.isnan(b))).all() is False:
            return True
        return False
    # https://github.com/stumpy-dev/stumpy/pull/754
    """,
    # ndarray.any() is False: the branch never runs
    """
    import numpy as np

    def check(values):
        a = np.array(values)
        if a.any() is False:
            print("all zero")
    # https://wiki.kunaldawn.com/content/stackoverflow.com_en_all_2023-11/questions/70094339/why-does-ndarray-all-is-false-always-returns-false-in-python
    """,
]

LOOKALIKES = [
    # `c is 0` asks whether c is still the int it started as (no constraint was added): c is a
    # tensor only after `+=`, so the identity test is meant
    """
    def get_constraints_value(self):
        c = 0
        if self.L2:
            c += self.L2 * self.get_l2_loss()
        if self.spatial_smoothing:
            c += self.spatial_smoothing * self.get_output_spatial_smoothing_energy()
        if c is 0:
            return None
        return c
    # https://github.com/rwth-i6/returnn/pull/954
    """,
    # a hyperparameter compared with `is not 0`: two Python ints (the SyntaxWarning, not a tensor)
    """
    import torch.nn.functional as F

    def categorical_crossentropy(y_true, y_pred, label_smoothing=0):
        if label_smoothing is not 0:
            num_classes = y_true.shape[-1]
            y_true = y_true * (1.0 - label_smoothing) + label_smoothing / num_classes
        return F.cross_entropy(y_pred, y_true)
    # https://github.com/keras-team/keras/issues/14011
    """,
    # enumerate over a tensor: the index j is an int, the element a tensor
    """
    import torch

    def print_sentence(results, char_set):
        for j, index in enumerate(torch.argmax(results, dim=1)):
            if j is 0:
                print(''.join(char_set[t] for t in index), end='')
            else:
                print(char_set[index[-1]], end='')
    # https://github.com/hunkim/DeepLearningZeroToAll/pull/268
    """,
    # a precision setting compared with `is`
    """
    import torch
    from torch.cuda.amp import autocast

    def train_step(self, model, inputs, targets, criterion):
        with autocast(enabled=self.precision is 16):
            out = model(inputs)
            loss = criterion(out, targets)
        return loss
    # https://github.com/SeanNaren/deepspeech.pytorch/pull/605
    """,
    # an int loop index compared with `is 1`
    """
    import numpy as np

    def get_stress(self, p, istress=None):
        if istress is 1 and self.nsplit > 1:
            return np.array(self.stress[0].series)
        return np.array(self.stress[istress].series)
    # https://github.com/pastas/pastas/issues/236
    """,
    # len(...) is 0: two ints
    """
    import glob

    def load_config(model_config, model_dir):
        config_path = glob.glob(model_dir + "/*.json")
        config = model_config() if len(config_path) is 0 else model_config.from_json_file(str(config_path[0]))
        return config
    # https://github.com/microsoft/onnxruntime/pull/8658
    """,
    # allclose returns a Python bool: `is True` tests exactly that
    """
    import numpy as np

    def test_allclose_returns_python_bool():
        a = np.array([1.0, 2.0])
        b = a + 1e-9
        assert np.allclose(a, b) is True
        assert np.array_equal(a, a) is True
    # https://github.com/cupy/cupy/pull/4310
    """,
    # the fix: bool(...) makes the NaN-aware check a Python bool, so `is False` works
    """
    import numpy as np

    def are_arrays_equal(a, b):
        if a.shape != b.shape:
            return False
        return bool(((a == b) | (np.isnan(a) & np.isnan(b))).all())

    def differ(a, b):
        return are_arrays_equal(a, b) is False
    # https://github.com/stumpy-dev/stumpy/pull/754
    """,
    # the fix: compare the token id by value
    """
    def beam_step(next_tokens, next_scores, batch_idx, vocab_size, eos_token_id, generated_hyps, next_sent_beam):
        for token_rank, (beam_token_id, beam_token_score) in enumerate(
                zip(next_tokens[batch_idx], next_scores[batch_idx])):
            beam_id = beam_token_id // vocab_size
            token_id = beam_token_id % vocab_size
            if eos_token_id is not None and token_id.item() != eos_token_id:
                next_sent_beam.append((beam_token_score, token_id, beam_id))
            else:
                generated_hyps[batch_idx].add(beam_id, beam_token_score.item())
    # https://github.com/huggingface/transformers/pull/4745
    """,
    # `query is key`: whether two tensors are the same object is the question (self-attention)
    """
    import torch

    def multi_head_attention_forward(query, key, value, in_proj_weight, in_proj_bias):
        if query is key and key is value:
            q, k, v = torch.nn.functional.linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        elif torch.equal(key, value):
            q = query
            k = v = key
        else:
            q, k, v = query, key, value
        return q, k, v
    # https://github.com/pytorch/pytorch/issues/47979
    """,
    # NaN positions compared by value (`!= True`), then with np.any
    """
    import numpy as np

    def func_assert_same_pos(x, y, func=np.isnan):
        x_id = func(x)
        y_id = func(y)
        if (x_id == y_id).all() != True:
            raise AssertionError("x and y nan location mismatch")
        if np.any(x_id != y_id):
            raise AssertionError("x and y nan location mismatch")
        return x_id
    # https://github.com/numpy/numpy/pull/11756
    """,
]
