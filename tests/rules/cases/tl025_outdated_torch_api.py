"""TL025's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl025_outdated_torch_api import reduction_message, unpack_message
from torchlint.rule import Invalid, Valid

VALID: list[Valid | str] = [
    # The fixes: reduction=, .data, [0], *_.
    """
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence
        criterion = nn.CrossEntropyLoss(reduction="sum")
        def step(scores, targets, lengths):
            scores = pack_padded_sequence(scores, lengths, batch_first=True).data
            targets = pack_padded_sequence(targets, lengths, batch_first=True)[0]
            first, *_ = pack_padded_sequence(scores, lengths)
            return criterion(scores, targets)
        """,
    # A user's own loss (or a library's) taking size_average.
    """
        from mylosses import FocalLoss, dice_loss
        criterion = FocalLoss(gamma=2, size_average=True)
        d = dice_loss(a, b, size_average=False)
        """,
    # reduce= of scatter/scatter_reduce is not a loss's.
    """
        import torch
        def agg(out, index, src):
            return torch.scatter_reduce(out, 0, index, src, reduce="sum"), out.scatter_(0, index, src, reduce="add")
        """,
    # An RNN over a PackedSequence returns two values; pad_packed_sequence returns two.
    """
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        def encode(rnn, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first=True)
            out, hidden = rnn(packed)
            padded, out_lengths = pad_packed_sequence(out, batch_first=True)
            return padded
        """,
    # Unpacking something else into two names.
    """
        def split(batch):
            text, text_lengths = batch.text
            a, b = divmod(7, 2)
            return text, a
        """,
    # A name bound to a PackedSequence on one path only.
    """
        from torch.nn.utils.rnn import pack_padded_sequence
        def f(x, lengths, packed_input):
            p = pack_padded_sequence(x, lengths) if packed_input else (x, lengths)
            data, sizes = p
        """,
    # size_average as a variable of one's own, not an argument of a loss.
    """
        def average(values, size_average=True):
            return sum(values) / len(values) if size_average else sum(values)
        """,
    # Unpacking into three or four names is not two.
    """
        from torch.nn.utils.rnn import pack_padded_sequence
        def f(x, lengths):
            data, batch_sizes, sorted_indices, unsorted_indices = pack_padded_sequence(x, lengths, enforce_sorted=False)
            return data
        """,
]

INVALID: list[Invalid] = [
    # The page's example: a summed loss written with size_average.
    Invalid("""
        import torch.nn as nn

        criterion = nn.MSELoss(size_average=False)
        """, lines=(4,), messages=(reduction_message("size_average=False", "sum"),), fixed="""
        import torch.nn as nn

        criterion = nn.MSELoss(reduction='sum')
        """),
    # reduce=False: per-element losses.
    Invalid("""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss(ignore_index=-1, reduce=False)
        """, lines=(3,), messages=(reduction_message("reduce=False", "none"),), fixed="""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss(ignore_index=-1, reduction='none')
        """),
    # A functional loss.
    Invalid("""
        import torch.nn.functional as F
        def test_loss(output, target):
            return F.nll_loss(output, target, size_average=False).item()
        """, lines=(4,), messages=(reduction_message("size_average=False", "sum"),), fixed="""
        import torch.nn.functional as F
        def test_loss(output, target):
            return F.nll_loss(output, target, reduction='sum').item()
        """),
    # Both given: reported with what torch computes, no fix (two keywords to merge).
    Invalid("""
        import torch.nn as nn
        bce = nn.BCELoss(size_average=False, reduce=True)
        """, lines=(3,), messages=(reduction_message("size_average=False, reduce=True", "sum"),)),
    # A value known only at run time: no fix.
    Invalid("""
        import torch.nn as nn
        def build(avg):
            return nn.MSELoss(size_average=avg)
        """, lines=(4,), messages=(reduction_message("size_average=avg", None),)),
    # The captioning tutorial: a PackedSequence unpacked into two names.
    Invalid("""
        from torch.nn.utils.rnn import pack_padded_sequence
        def loss_of(scores, targets, decode_lengths, criterion):
            scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
            return criterion(scores, targets)
        """, lines=(4,), messages=(unpack_message("pack_padded_sequence"),), fixed="""
        from torch.nn.utils.rnn import pack_padded_sequence
        def loss_of(scores, targets, decode_lengths, criterion):
            scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)[:2]
            return criterion(scores, targets)
        """),
    # Through a name, and through the module path.
    Invalid("""
        import torch.nn as nn
        def f(x, lengths):
            packed = nn.utils.rnn.pack_sequence(x)
            data, batch_sizes = packed
            return data
        """, lines=(5,), messages=(unpack_message("pack_sequence"),), fixed="""
        import torch.nn as nn
        def f(x, lengths):
            packed = nn.utils.rnn.pack_sequence(x)
            data, batch_sizes = packed[:2]
            return data
        """),
    # A loss held on self, built in __init__.
    Invalid("""
        import torch.nn as nn
        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.smooth_l1 = nn.L1Loss(reduce=False)
        """, lines=(6,), messages=(reduction_message("reduce=False", "none"),), fixed="""
        import torch.nn as nn
        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.smooth_l1 = nn.L1Loss(reduction='none')
        """),
]
