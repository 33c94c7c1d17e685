"""TL019 unshuffled-training-loader: a ``DataLoader`` that a training loop iterates is built
without ``shuffle`` and without a sampler, so every epoch sees the batches in the same order.

The loaders come from ``semantic.loaders.iterated_by_training`` (the ``DataLoader(...)`` calls
a loop that runs backward and an optimizer step iterates). Left alone: ``shuffle=`` written
(``shuffle=False`` is a choice the code states, except over a ``torchvision.datasets`` dataset,
whose samples are stored in order and never want it), a third positional argument, a
``sampler=`` or ``batch_sampler=`` that is not ``None`` in a branch, ``**kwargs``, a loader named or built for evaluation
(``loaders.feeds_evaluation``), a dataset of a class of the file that is an
``IterableDataset`` (which cannot be shuffled by the loader), and a ``TensorDataset`` of tensors
freshly drawn at random (``loaders.random_dataset``: i.i.d. synthetic samples have no order to
undo). The fix (unsafe: the order of
batches, and so the run, changes) adds ``shuffle=True``.
"""

from __future__ import annotations

import libcst as cst

from torchlint import torch_api as api
from torchlint.finding import Severity
from torchlint.fixes import UNSAFE, Fix, insert_after, replace_node
from torchlint.rule import Option, Rule
from torchlint.semantic.dataflow import single_value
from torchlint.semantic.loaders import feeds_evaluation, iterated_by_training, loader_dataset, random_dataset

_CHOOSE_ORDER = {"shuffle", "sampler", "batch_sampler"}


def message(loader: str) -> str:
    return (f"`{loader}` feeds the training loop but never shuffles: every epoch sees the batches in the same "
            "order (often sorted by class or file), which biases training; pass shuffle=True or a sampler")


class UnshuffledTrainingLoader(Rule):
    code = "TL019"
    name = "unshuffled-training-loader"
    severity = Severity.WARNING
    default_enabled = True
    summary = "A DataLoader a training loop iterates never shuffles"
    # [tool.torchlint.unshuffled-training-loader]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("DataLoader",)
    fixable = (UNSAFE,)

    def finish(self) -> None:
        semantic = self.ctx.semantic
        for call in iterated_by_training(semantic):
            if self._chooses_order(call) or feeds_evaluation(semantic, call) or self._iterable_dataset(call) \
                    or random_dataset(semantic.model, call):
                continue
            self.report(call, message(self._name(call)), fix=self._fix(call))

    def _fix(self, call: cst.Call) -> Fix | None:
        stated = api.keyword_arg(call, "shuffle")
        if stated is not None:  # shuffle=False over a torchvision dataset
            return Fix.unsafe("Pass shuffle=True", replace_node(self.ctx, stated.value, cst.Name("True")))
        return Fix.unsafe("Pass shuffle=True", insert_after(self.ctx, call.args[-1], ", shuffle=True")) \
            if call.args else None

    def _chooses_order(self, call: cst.Call) -> bool:
        """The call states the order: shuffle (positional or keyword; ``shuffle=False`` too,
        except over a torchvision dataset, whose samples come sorted and never want it), a
        sampler that is not ``None`` in some branch, or ``**kwargs`` that may hold either."""
        positional = [a for a in call.args if a.keyword is None and a.star == ""]
        if len(positional) >= 3 or any(a.star == "**" for a in call.args):
            return True
        for arg in call.args:
            name = arg.keyword.value if arg.keyword is not None else None
            if name == "shuffle":
                return not (api.is_false_literal(arg.value) and self._torchvision_dataset(call))
            if name in _CHOOSE_ORDER and not self._maybe_none(arg.value):
                return True
        return False

    def _maybe_none(self, value: cst.BaseExpression) -> bool:
        """``X if c else None`` (yolov5's sampler outside DDP), directly or through a name."""
        value = single_value(self.ctx.semantic.model, value) or value
        return isinstance(value, cst.IfExp) and any(isinstance(v, cst.Name) and v.value == "None"
                                                    for v in (value.body, value.orelse))

    def _torchvision_dataset(self, call: cst.Call) -> bool:
        dataset = self._dataset(call)
        return isinstance(dataset, cst.Call) and \
            (self.ctx.semantic.model.qualified_name(dataset.func) or "").startswith("torchvision.datasets.")

    def _dataset(self, call: cst.Call) -> cst.BaseExpression | None:
        return loader_dataset(self.ctx.semantic.model, call)

    def _iterable_dataset(self, call: cst.Call) -> bool:
        """The dataset is built from a class of the file that derives from ``IterableDataset``."""
        model = self.ctx.semantic.model
        dataset = self._dataset(call)
        if not isinstance(dataset, cst.Call) or not isinstance(dataset.func, cst.Name):
            return False
        info = model.class_named(dataset.func.value)
        return info is not None and any("IterableDataset" in str(base) for c in [info, *model.mro(info)] for base in c.bases)

    def _name(self, call: cst.Call) -> str:
        parent = self.ctx.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return self.ctx.module.code_for_node(parent.targets[0].target)
        return "DataLoader(...)"
