"""TL024's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl024_tensor_identity_comparison import (bool_identity_message, identity_message,
                                                               item_identity_message)
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # The fix: compare values.
    """
        EOS_token = 1
        def decode(decoder, x):
            topv, topi = decoder(x).topk(1)
            if topi[0][0] == EOS_token or topi.item() == EOS_token:
                return True
        """,
    # `is None` and `is True` are identity questions with singletons.
    """
        def f(model, x):
            pred = model(x).argmax(1)
            if pred is None or pred is not None:
                return pred
        """,
    # .item() gives a Python int: the small-int cache makes `is 0` work (not this rule).
    """
        def f(labels):
            if labels.long().sum().item() is 0:
                return []
        """,
    # Two tensors: identity may be meant (is this the same object?).
    """
        import torch
        def f(params, grads):
            g = torch.zeros(3)
            if g is grads[0]:
                pass
        """,
    # Both sides plain Python numbers (pylint's literal-comparison, not a tensor question).
    """
        def f(i):
            n = len([1, 2])
            if n is 0 or i % 100 is 0:
                pass
        """,
    # The other side unknown (a parameter, an attribute): may be the same tensor.
    """
        def f(decoder, x, eos, tokenizer):
            top = decoder(x).topk(1)[1]
            if top is eos or top is tokenizer.eos_token_id:
                pass
        """,
    # A list's element is an int, not a tensor.
    """
        def f(ids):
            if ids[0] is 1:
                pass
        """,
    # A tensor's `==` against None (a different question, never this rule).
    """
        import torch
        def f(x):
            t = torch.tensor([1])
            return t == None
        """,
    # .item() against a name bound only to a small int literal (CPython shares -5..256: pylint's
    # question), to a bool, or against a literal.
    """
        EOS_token = 1
        def stop(decoder_output, done=True):
            _, topi = decoder_output.topk(1)
            return topi.item() is EOS_token or topi.item() is done or topi.item() is not None
        """,
    # Functions that return a Python bool: `is True` asks exactly that.
    """
        import numpy as np
        import torch
        def same(a, b):
            x = np.array(a)
            return np.allclose(x, b) is True and np.array_equal(x, x) is True and torch.equal(a, b) is True
        """,
    # .item() of a bool tensor is the Python bool.
    """
        def all_done(finished):
            return finished.all().item() is True
        """,
    # A bool(...) of an array, and a dict entry, compared with False.
    """
        import numpy as np
        def f(a, cfg):
            return bool(np.isnan(a).any()) is False or cfg["training"] is False
        """,
]

INVALID: list[Invalid] = [
    # The page's example: a greedy decoding loop that never stops at EOS.
    Invalid("""
        EOS_token = 1

        def greedy_decode(decoder, hidden, decoder_input, max_length=20):
            decoded = []
            for _ in range(max_length):
                output, hidden = decoder(decoder_input, hidden)
                topv, topi = output.topk(1)
                if topi[0][0] is EOS_token:
                    break
                decoded.append(topi[0][0])
                decoder_input = topi.detach()
            return decoded
        """, lines=(9,), messages=(identity_message("topi[0][0] is EOS_token", "index", False, "topi[0][0] == EOS_token"),),
            fixed="""
        EOS_token = 1

        def greedy_decode(decoder, hidden, decoder_input, max_length=20):
            decoded = []
            for _ in range(max_length):
                output, hidden = decoder(decoder_input, hidden)
                topv, topi = output.topk(1)
                if topi[0][0] == EOS_token:
                    break
                decoded.append(topi[0][0])
                decoder_input = topi.detach()
            return decoded
        """),
    # argmax and `is not`: always True.
    Invalid("""
        def count(model, x):
            pred = model(x).argmax(dim=1)
            if pred is not 0:
                return 1
        """, lines=(4,), messages=(identity_message("pred is not 0", "argmax", True, "pred != 0"),), fixed="""
        def count(model, x):
            pred = model(x).argmax(dim=1)
            if pred != 0:
                return 1
        """),
    # A name imported from another module: bound before the tensor was made.
    Invalid("""
        import torch
        from vocab import EOS_token
        def sample(dist):
            top_i = torch.multinomial(dist, 1)[0]
            return top_i is EOS_token
        """, lines=(6,), messages=(identity_message("top_i is EOS_token", "index", False, "top_i == EOS_token"),), fixed="""
        import torch
        from vocab import EOS_token
        def sample(dist):
            top_i = torch.multinomial(dist, 1)[0]
            return top_i == EOS_token
        """),
    # The indices of torch.max(x, 1), taken by index.
    Invalid("""
        import torch
        def first_is_blank(logits):
            return torch.max(logits, 1)[1] is 0
        """, lines=(4,), messages=(identity_message("torch.max(logits, 1)[1] is 0", "topk", False, "torch.max(logits, 1)[1] == 0"),),
            fixed="""
        import torch
        def first_is_blank(logits):
            return torch.max(logits, 1)[1] == 0
        """),
    # The number on the left.
    Invalid("""
        def f(scores):
            _, idx = scores.sort(descending=True)
            return 3 is idx[0]
        """, lines=(4,), messages=(identity_message("3 is idx[0]", "index", False, "3 == idx[0]"),), fixed="""
        def f(scores):
            _, idx = scores.sort(descending=True)
            return 3 == idx[0]
        """),
    # A layer's output held on self, through .data and .cpu().
    Invalid("""
        import torch.nn as nn
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.out = nn.Linear(8, 2)

            def is_background(self, h):
                y = self.out(h).data.cpu()
                return y[0] is 0
        """, lines=(10,), messages=(identity_message("y[0] is 0", "index", False, "y[0] == 0"),), fixed="""
        import torch.nn as nn
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.out = nn.Linear(8, 2)

            def is_background(self, h):
                y = self.out(h).data.cpu()
                return y[0] == 0
        """),
    # A NumPy scalar from a tensor: never the int object either.
    Invalid("""
        EOS = 2
        def stop(decoder_output):
            _, topi = decoder_output.topk(1)
            ni = topi.cpu().numpy()[0]
            return ni is EOS
        """, lines=(6,), messages=(identity_message("ni is EOS", "index", False, "ni == EOS"),), fixed="""
        EOS = 2
        def stop(decoder_output):
            _, topi = decoder_output.topk(1)
            ni = topi.cpu().numpy()[0]
            return ni == EOS
        """),
    # A tensor factory's result and an option read from args.
    Invalid("""
        import torch
        def f(args):
            label = torch.tensor(3)
            return label is args.target_class
        """, lines=(5,), messages=(identity_message("label is args.target_class", "factory", False, "label == args.target_class"),),
            fixed="""
        import torch
        def f(args):
            label = torch.tensor(3)
            return label == args.target_class
        """),
    # The token id .item() takes out against an end-token id that may be large (T5's 32098).
    Invalid("""
        def finished(token_id, eos_token_id):
            return eos_token_id is not None and token_id.item() is not eos_token_id
        """, lines=(3,), messages=(item_identity_message("token_id.item() is not eos_token_id", "eos_token_id",
                                                        "token_id.item() != eos_token_id"),), fixed="""
        def finished(token_id, eos_token_id):
            return eos_token_id is not None and token_id.item() != eos_token_id
        """),
    # np.any(...) is a NumPy bool_, never the False object.
    Invalid("""
        import numpy as np
        def fits(sizes, limits):
            if np.any(np.array(sizes) < limits) is False:
                return True
        """, lines=(4,), messages=(bool_identity_message("np.any(np.array(sizes) < limits) is False", "array", False,
                                                        "not np.any(np.array(sizes) < limits)"),), fixed="""
        import numpy as np
        def fits(sizes, limits):
            if not np.any(np.array(sizes) < limits):
                return True
        """),
    # .all() of a comparison with a model's predictions, `is True` and `is not False`.
    Invalid("""
        def check(model, x, y):
            pred = model(x).argmax(dim=1)
            ok = (pred == y).all() is True
            return ok, (pred == y).any() is not False
        """, lines=(4, 5), messages=(
            bool_identity_message("(pred == y).all() is True", "index", False, "bool((pred == y).all())"),
            bool_identity_message("(pred == y).any() is not False", "index", True, "bool((pred == y).any())")),
        fixed="""
        def check(model, x, y):
            pred = model(x).argmax(dim=1)
            ok = bool((pred == y).all())
            return ok, bool((pred == y).any())
        """),
    # An element of a bool array.
    Invalid("""
        import numpy as np
        def cleared(n):
            flags = np.zeros(n, dtype=bool)
            return [k for k in range(n) if flags[k] is not True]
        """, lines=(5,), messages=(bool_identity_message("flags[k] is not True", "index", True, "not flags[k]"),),
        fixed="""
        import numpy as np
        def cleared(n):
            flags = np.zeros(n, dtype=bool)
            return [k for k in range(n) if not flags[k]]
        """),
]
