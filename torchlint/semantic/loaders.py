"""What a ``DataLoader`` feeds: training, or evaluation / sampling.

* ``feeds_training(ctx, call)``: it shuffles, or Lightning's ``train_dataloader`` hook builds
  it (a name with "train" in it is no proof on its own).
* ``feeds_evaluation(semantic, call)``: it is named for evaluation (``val_loader``,
  ``testloader``, ``eval_dl``, ``sample_loader``), built in an evaluation function
  (``evaluate``, ``validate``, ``test``, ``sample``, ``val_dataloader``; or one the training
  model says evaluates), over an evaluation dataset (``test_set``; ``MNIST(train=False)``,
  ``load_dataset(split="test")``, ``VOC(image_set="val")``, ``Data(mode="val")``), or it is
  used only by evaluation functions and evaluation loops.
* ``is_evaluation_name`` / ``is_evaluation_function``: the name tests behind it.
* ``iterated_by_training(semantic)``: the ``DataLoader(...)`` calls a training loop (one whose
  iteration runs backward and an optimizer step) iterates, directly or through
  ``enumerate``/``tqdm``/``iter``, or through a name or ``self.<attr>`` every binding of which
  is such a call (``dataflow.values_of``).
* ``loader_dataset(model, call)``: the dataset a ``DataLoader(...)`` call is given (its first
  positional argument or ``dataset=``), through a name bound once.
* ``random_dataset(model, call)``: that dataset is a ``TensorDataset`` of tensors freshly drawn
  at random (``TensorDataset(torch.rand(n, d), torch.randint(k, (n,)))``:
  ``torch_rng.freshly_drawn``): synthetic i.i.d. samples, whose order carries nothing, so
  shuffling them changes nothing.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.dataflow import single_value, values_of
from torchlint.semantic.torch_rng import freshly_drawn
from torchlint.semantic.training import EVALUATION
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

_EVAL_WORD = r"(?:val|valid|validation|test|testing|eval|evaluation|sample|samples|sampling|dev)"
# A variable named for evaluation data: val_loader, testloader, eval_dl, test_set, loader_val.
_EVAL_NAME = re.compile(rf"(?:^|_){_EVAL_WORD}(?:_|$|loader|set|data|ds|dl|iter)")
# A function that evaluates or samples: evaluate, validate, test, run_validation, val_dataloader.
_EVAL_FUNCTION = re.compile(
    r"(?:^|_)(?:val|valid|validate|validation|test|testing|eval|evaluate|evaluation|sample|samples|sampling|predict|infer|"
    r"inference)(?:_|$)")
# Dataset arguments choosing a split.
_SPLIT_KEYWORDS = ("split", "mode", "image_set", "subset", "phase")
_TRAIN_FLAGS = ("train", "is_train", "training")
# Calls that read a loader without running it.
_NEUTRAL = ("len", "print", "iter")
_EVAL_SPLIT = re.compile(r"^(?:val|valid|validation|test|testing|eval|evaluation|dev)\b", re.IGNORECASE)


def is_evaluation_name(name: str | None) -> bool:
    """The last part of a variable name says evaluation data (``self.val_loader``, ``testset``)."""
    return name is not None and bool(_EVAL_NAME.search(name.rsplit(".", 1)[-1].lower()))


def is_evaluation_function(training, function: cst.CSTNode | None) -> bool:
    """Named for evaluation or sampling, or the training model says it evaluates."""
    if function is None:
        return False
    if isinstance(function, cst.FunctionDef) and _EVAL_FUNCTION.search(function.name.value.lower()):
        return True
    return training.evaluates(function)


def feeds_training(ctx, call: cst.Call) -> bool:
    """``shuffle=True``, or built in a ``train_dataloader`` hook."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "shuffle" and isinstance(arg.value, cst.Name) \
                and arg.value.value == "True":
            return True
    function = ctx.enclosing_function(call)
    return function is not None and function.name.value == "train_dataloader"


def feeds_evaluation(semantic, call: cst.Call) -> bool:
    model = semantic.model
    parent = model.ctx.parent(call)
    targets = [dotted_name(t.target) for t in parent.targets] if isinstance(parent, cst.Assign) else []
    if any(is_evaluation_name(t) for t in targets):
        return True
    function = model.code_scope(model.scope_of(call)).node
    if is_evaluation_function(semantic.training, function if isinstance(function, cst.FunctionDef) else None):
        return True
    if _evaluation_dataset(semantic, call):
        return True
    names = [t for t in targets if t is not None and "." not in t]
    return bool(names) and all(_used_for_evaluation(semantic, function, name, parent) for name in names)


def _evaluation_dataset(semantic, call: cst.Call) -> bool:
    data = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "dataset"), None)
    if data is None:
        return False
    if isinstance(data, (cst.Name, cst.Attribute)):
        if is_evaluation_name(dotted_name(data)):
            return True
        values = [b.value for b in semantic.model.reaching(dotted_name(data), call) if b.kind == "assign"] \
            if isinstance(data, cst.Name) else []
        return bool(values) and all(isinstance(v, cst.Call) and _evaluation_split(v) for v in values)
    return isinstance(data, cst.Call) and _evaluation_split(data)


def _evaluation_split(call: cst.Call) -> bool:
    """``train=False``, ``split="test"``, ``mode="val"``, ``image_set="val"``..."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword in _TRAIN_FLAGS and isinstance(arg.value, cst.Name) and arg.value.value == "False":
            return True
        if keyword in _SPLIT_KEYWORDS and isinstance(arg.value, cst.SimpleString) \
                and _EVAL_SPLIT.match(arg.value.evaluated_value or ""):
            return True
    return False


_DATALOADER = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
_ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"}


def iterated_by_training(semantic) -> list[cst.Call]:
    """The ``DataLoader(...)`` calls that training loops iterate (see the module docstring)."""
    model, training = semantic.model, semantic.training
    found: list[cst.Call] = []
    for loop in training.training_loops():
        node = loop.node
        if not isinstance(node, cst.For):
            continue
        iterable = node.iter
        while isinstance(iterable, cst.Call) and iterable.args and \
                (model.qualified_name(iterable.func) or dotted_name(iterable.func)) in _ITER_WRAPPERS:
            iterable = iterable.args[0].value
        calls = [iterable] if isinstance(iterable, cst.Call) else values_of(model, iterable)
        if not all(isinstance(call, cst.Call) for call in calls):
            continue
        for call in calls:
            if model.qualified_name(call.func) in _DATALOADER and not any(call is c for c in found):
                found.append(call)
    return found


def _used_for_evaluation(semantic, scope_node: cst.CSTNode, name: str, binding: cst.CSTNode) -> bool:
    """Every read of ``name`` in the scope's code is an argument of an evaluation function or
    the iterable of an evaluation loop (and there is one)."""
    model, training = semantic.model, semantic.training
    uses = 0
    for node in iter_nodes(scope_node, into_scopes=False):
        if isinstance(node, cst.Call):
            if dotted_name(node.func) in _NEUTRAL or \
                    not any(isinstance(a.value, cst.Name) and a.value.value == name for a in node.args):
                continue
            site = model.call_site(node)
            targets = semantic.graph.targets(site) if site is not None else []
            named = isinstance(node.func, (cst.Name, cst.Attribute)) and \
                _EVAL_FUNCTION.search((dotted_name(node.func) or "").rsplit(".", 1)[-1].lower())
            if not (named or targets and all(is_evaluation_function(training, t) for t in targets)):
                if not _in_evaluation_loop_iter(model, training, node):
                    return False
            uses += 1
        elif isinstance(node, cst.For) and isinstance(node.iter, cst.Name) and node.iter.value == name:
            loop = model.loops.get(node)
            if loop is None or EVALUATION not in training.loop_kinds(loop):
                return False
            uses += 1
    return uses > 0


def _in_evaluation_loop_iter(model, training, call: cst.Call) -> bool:
    """``for x in enumerate(loader)`` / ``tqdm(loader)`` of an evaluation loop."""
    parent = model.ctx.parent(call)
    return isinstance(parent, cst.For) and parent.iter is call and parent in model.loops \
        and EVALUATION in training.loop_kinds(model.loops[parent])


_TENSOR_DATASET = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}


def loader_dataset(model, call: cst.Call) -> cst.BaseExpression | None:
    """The dataset of a ``DataLoader(...)`` call (its first positional argument, or
    ``dataset=``), through a name or ``self.<attr>`` bound once (``dataflow.single_value``)."""
    first = call.args[0] if call.args else None
    if first is not None and first.keyword is None and not first.star:
        dataset = first.value
    else:
        dataset = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dataset"), None)
    if dataset is None:
        return None
    return single_value(model, dataset) or dataset


def random_dataset(model, call: cst.Call) -> bool:
    """The loader's dataset is a ``TensorDataset`` whose every tensor is freshly drawn at random
    (``torch_rng.freshly_drawn``): i.i.d. synthetic samples in no order."""
    dataset = loader_dataset(model, call)
    if not isinstance(dataset, cst.Call) or model.qualified_name(dataset.func) not in _TENSOR_DATASET:
        return False
    tensors = [a.value for a in dataset.args]
    return bool(tensors) and all(a.keyword is None and not a.star for a in dataset.args) \
        and all(freshly_drawn(model, t) for t in tensors)
