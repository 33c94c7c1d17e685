"""Whether a file's code draws from torch's global random number generator at all.

``draws_from_torch(sem)`` is False only when nothing in the file can: no torch random
function (``torch.rand*``, ``randperm``, ``normal``, ``bernoulli``, ``multinomial``, dropout,
``random_split``, random samplers, ``torch.nn.init`` other than constant fills, torchvision's
``Random*`` transforms, a distribution's ``sample``), no in-place random refill
(``t.uniform_()``, ``t.normal_()``), no shuffling ``DataLoader``, no randomly initialised layer
(``nn.Linear``, ``nn.Conv2d``, ``nn.LSTM``, ``nn.Embedding``, ...) whose weight and bias the
code does not overwrite (``layer.weight.data = w``, ``self.linear.weight.detach().zero_()``,
``nn.init.zeros_(layer.bias)``, a loop over ``model.children()`` doing so), no call into code
torchlint cannot see (a project module, a model library) and no name it cannot resolve (a
star import, a value from nowhere: the model may come from there): those may draw. A full-batch fit
of a zero-initialised tensor (``w = torch.tensor(0.0, requires_grad=True)``) or of a linear
layer whose weights are set from numpy gives the same numbers on every run: seeding torch
changes nothing there (TL006). ``only_starts_a_convex_fit(sem)``: the one draw initialises
the single ``nn.Linear`` the file builds and nothing else draws (linear or logistic regression,
full batch or an unshuffled loader): the fit is convex, where it starts does not change where
it ends, and a seed changes nothing that matters either.
"""

from __future__ import annotations

import builtins
import re

import libcst as cst

from torchlint.torch_api import expr_key, is_false_literal
from torchlint.tree import iter_nodes

# torch functions and classes that draw (the last part of the qualified name).
_TORCH_DRAWS = re.compile(
    r"^(rand|randn|randint|randperm|rand_like|randn_like|randint_like|normal|bernoulli|multinomial|poisson|"
    r"random_split|.*[dD]ropout.*|rrelu|RReLU|gumbel_softmax|RandomSampler|SubsetRandomSampler|"
    r"WeightedRandomSampler|DistributedSampler|Random.*|seed)$")
# torch.nn.init functions that fill with constants (no draw).
_CONSTANT_INIT = {"zeros_", "ones_", "constant_", "eye_", "dirac_", "calculate_gain"}
# torch.nn layers initialised from the generator.
_RANDOM_LAYER = re.compile(r"Linear|Conv|RNN|LSTM|GRU|Embedding|Attention|Transformer|Bilinear")
# In-place methods and draws on any object.
_RANDOM_METHODS = {"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
                   "log_normal_", "sample", "rsample", "sample_n"}
# In-place methods that overwrite a tensor without drawing.
_FILLS = {"zero_", "fill_", "copy_", "ones_", "zeros_", "constant_", "set_"}
# Libraries whose functions never draw from torch's generator.
_QUIET_ROOTS = {
    "numpy", "pandas", "matplotlib", "seaborn", "sklearn", "scipy", "math", "os", "sys", "time", "datetime",
    "json", "csv", "re", "collections", "itertools", "functools", "IPython", "PIL", "tqdm", "visdom",
    "tensorboardX", "io", "pathlib", "random", "typing", "copy", "pickle", "warnings", "urllib", "requests",
    "zipfile", "gzip", "shutil", "glob", "string", "statistics", "logging", "argparse", "builtins", "plotly",
    "jax", "optax", "flax", "haiku", "autograd", "sympy", "mpl_toolkits", "cv2", "h5py", "yaml", "torchvision", "torch",  # (torch's draws: above)
}


def draws_from_torch(sem) -> bool:
    """Whether anything in the file may draw from torch's global generator (module docstring).
    Memoised on the semantic model."""
    model = sem.model
    memo = model.memo("draws_from_torch")
    if "" not in memo:
        memo[""] = _draws(sem)
    return bool(memo[""])


def _draws(sem) -> bool | str:
    model, ctx = sem.model, sem.ctx
    layers: list[tuple[str | None, bool, str]] = []  # (owner key, has a bias, class) of each random layer built
    for site in model.calls:
        call = site.node
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _RANDOM_METHODS:
            return True
        qualified = model.qualified_name(func) if model.is_imported(func) else None
        if qualified is None:
            continue  # a same-file function or a method: its body is in the file
        root, _, rest = qualified.partition(".")
        last = qualified.rsplit(".", 1)[-1]
        if root not in _QUIET_ROOTS:
            return True  # a project module or a model library: it may draw
        if root not in ("torch", "torchvision"):
            continue
        if rest.startswith("nn.init."):
            if last not in _CONSTANT_INIT:
                return True
            continue
        if _TORCH_DRAWS.match(last) or root == "torchvision" and "models" in qualified.split("."):
            return True
        if last == "DataLoader" and any(a.keyword is not None and a.keyword.value == "shuffle"
                                        and not is_false_literal(a.value) for a in call.args):
            return True
        if rest.startswith("nn.") and _RANDOM_LAYER.search(last):
            bias = not any(a.keyword is not None and a.keyword.value == "bias" and is_false_literal(a.value)
                           for a in call.args)
            layers.append((_owner(ctx, call), bias, last))
    if _unresolved_names(sem):
        return True
    if not layers:
        return False
    weights, biases = _overwritten(sem)
    drawn = [last for owner, bias, last in layers if owner is None or owner not in weights or bias and owner not in biases]
    if not drawn:
        return False
    return CONVEX if len(layers) == 1 and drawn == ["Linear"] else True


CONVEX = "convex"  # ``_draws``: the one draw is the initialisation of a single nn.Linear


def only_starts_a_convex_fit(sem) -> bool:
    """The file draws from torch's generator (``draws_from_torch``) only to initialise the one
    layer it builds, a single ``nn.Linear`` (linear or logistic regression; nothing else
    draws: no dropout, no shuffling loader, no random data): the fit is convex, and where it
    starts does not change where it ends, so a seed changes nothing that matters (TL006)."""
    draws_from_torch(sem)
    return sem.model.memo("draws_from_torch")[""] == CONVEX


_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "display", "get_ipython"}


def _unresolved_names(sem) -> bool:
    """A name read that no binding of the file gives (nor a builtin): a star import or a value
    defined elsewhere; what it holds may draw."""
    model, ctx = sem.model, sem.ctx
    for node in iter_nodes(ctx.module):
        if not isinstance(node, cst.Name) or node.value in _BUILTINS:
            continue
        up = ctx.parent(node)
        if isinstance(up, cst.Attribute) and up.attr is node or isinstance(up, cst.Arg) and up.keyword is node \
                or isinstance(up, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AssignTarget,
                                   cst.ImportFrom, cst.Import, cst.Global, cst.Nonlocal, cst.AsName)) \
                or isinstance(up, (cst.For, cst.CompFor)) and up.target is node:
            continue
        if not model.lookup(node.value, model.scope_of(node)) and not _in_import(ctx, node):
            return True
    return False


def _in_import(ctx, node: cst.CSTNode) -> bool:
    for up in ctx.ancestors(node):
        if isinstance(up, (cst.Import, cst.ImportFrom)):
            return True
        if isinstance(up, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False


def _owner(ctx, call: cst.Call) -> str | None:
    """The key the layer ``call`` builds is kept under, itself or inside a container built around
    it (``model = nn.Sequential(nn.Linear(2, 1))``: ``model``)."""
    for up in ctx.ancestors(call):
        if isinstance(up, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in up.targets] if isinstance(up, cst.Assign) else [up.target]
            keys = [expr_key(t) for t in targets]
            return keys[0] if len(keys) == 1 else None
        if isinstance(up, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.FunctionDef, cst.Lambda)):
            return None
    return None


def _overwritten(sem) -> tuple[set[str], set[str]]:
    """Keys of modules whose ``weight`` / ``bias`` the code overwrites without drawing:
    ``m.weight.data = w``, ``m.weight = nn.Parameter(w)``, ``m.weight.detach().zero_()``,
    ``m.weight.data.fill_(0)``, ``nn.init.zeros_(m.weight)``; through a loop variable of
    ``for m in model.children()`` (or ``modules()``), the model's key."""
    ctx = sem.ctx
    found: dict[str, set[str]] = {"weight": set(), "bias": set()}
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Attribute) and node.attr.value in found:
            if _overwrites(sem, node):
                owner = _module_key(sem, node.value)
                if owner is not None:
                    found[node.attr.value].add(owner)
    return found["weight"], found["bias"]


def _overwrites(sem, attr: cst.Attribute) -> bool:
    """``attr`` (``m.weight``) is overwritten here: assigned (itself or its ``.data``), refilled
    in place by a fill (``.zero_()``, through ``.data`` / ``.detach()``), or handed to a
    constant ``nn.init`` function."""
    ctx, model = sem.ctx, sem.model
    current: cst.CSTNode = attr
    while True:
        up = ctx.parent(current)
        if isinstance(up, cst.Attribute) and up.value is current and up.attr.value == "data":
            current = up
            continue
        if isinstance(up, cst.Call) and up.func is current:  # m.weight.detach()
            current = up
            continue
        if isinstance(up, cst.Attribute) and up.value is current and up.attr.value in ("detach", "data"):
            current = up
            continue
        break
    up = ctx.parent(current)
    if isinstance(up, cst.AssignTarget):
        return True
    if isinstance(up, cst.Attribute) and up.value is current and up.attr.value in _FILLS:
        return isinstance(ctx.parent(up), cst.Call)
    if isinstance(up, cst.Arg):
        call = ctx.parent(up)
        name = model.qualified_name(call.func) if isinstance(call, cst.Call) else None
        return bool(name) and name.startswith("torch.nn.init.") and name.rsplit(".", 1)[-1] in _CONSTANT_INIT
    return False


def _module_key(sem, expr: cst.BaseExpression) -> str | None:
    """The key of the module whose parameter is overwritten: ``self.linear`` for
    ``self.linear.weight``; for a loop variable over ``model.children()`` / ``modules()`` /
    ``model`` itself, ``model``."""
    key = expr_key(expr)
    if key is None or not isinstance(expr, cst.Name):
        return key
    for binding in sem.model.reaching(expr.value, expr):
        loop = binding.node
        if isinstance(loop, cst.For):
            it = loop.iter
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) \
                    and it.func.attr.value in ("children", "modules"):
                return expr_key(it.func.value)
            return expr_key(it)
    return key


# Draws whose every element is independent and identically distributed whatever the arguments
# (they are sizes and bounds, or the shape of another tensor).
_IID_TORCH_DRAWS = {f"torch.{name}" for name in ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like")}
_IID_NUMPY_DRAWS = {f"numpy.random.{name}" for name in ("rand", "randn", "randint", "random", "random_sample", "ranf",
                                                         "sample", "standard_normal")}
# Draws whose parameters may be arrays (a mean per row: ordered data): i.i.d. only where every
# argument is a plain number or a size.
_PARAMETRISED_DRAWS = {"torch.normal", *(f"numpy.random.{name}" for name in (
    "normal", "uniform", "binomial", "poisson", "exponential", "beta", "gamma", "laplace", "logistic", "lognormal"))}
# Conversions keeping the elements (and their order) of the array they are given.
_CONVERSIONS = {"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor", "torch.FloatTensor",
                "torch.LongTensor", "torch.DoubleTensor", "numpy.array", "numpy.asarray", "numpy.float32"}
# Methods that keep each element where it is (casts, moves, reshapes, elementwise maths).
_ELEMENTWISE_METHODS = {"float", "double", "half", "long", "int", "bool", "to", "cuda", "cpu", "view", "reshape",
                        "unsqueeze", "squeeze", "detach", "clone", "contiguous", "type", "numpy", "astype",
                        "requires_grad_", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "round",
                        "floor", "ceil", "sign", "relu"}
# In-place refills of a fresh tensor (``torch.empty(n, d).uniform_()``).
_REFILL_DRAWS = {"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "cauchy_", "log_normal_", "geometric_"}
# Methods that change a tensor or array in place (``x.sort()`` sorts a numpy array).
_IN_PLACE = re.compile(r"^(sort|shuffle|put|fill|resize)$|[a-z]_$")
_MAX_DEPTH = 8


def freshly_drawn(model, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``expr`` holds values freshly drawn at random, independent and identically distributed
    along every axis: ``torch.rand(n, d)``, ``torch.randint(10, (n,))``, ``np.random.randn(n)``,
    ``torch.normal(0.0, 1.0, (n,))``, ``torch.empty(n).uniform_()``; through a conversion
    (``torch.from_numpy``, ``torch.tensor``), casts and moves (``.float()``, ``.to(device)``),
    elementwise maths with plain numbers or other such draws (``torch.rand(n) * 2 - 1``,
    ``x > 0.5``), a slice (``x[:, 0]``), a product with a matrix on the right (``X @ w + noise``:
    each row stays a function of its own draw), and a name every binding reaching the read is
    such a value, never changed in place (no ``x.sort()``, ``x.add_(...)``, ``x[i] = v``). Rows of
    such data are exchangeable: their order carries nothing."""
    if depth > _MAX_DEPTH:
        return False
    from torchlint.semantic.dataflow import is_plain_number, values_of
    if isinstance(expr, cst.Name):
        values = values_of(model, expr)
        return bool(values) and not _changed_in_place(model, expr.value) and \
            all(freshly_drawn(model, v, depth + 1) for v in values)
    if isinstance(expr, cst.Call):
        func = expr.func
        qualified = model.qualified_name(func) if model.is_imported(func) else None
        if qualified in _IID_TORCH_DRAWS or qualified in _IID_NUMPY_DRAWS:
            return True
        if qualified in _PARAMETRISED_DRAWS:
            return all(is_plain_number(model, a.value) or _size(model, a.value) for a in expr.args if not a.star)
        if qualified in _CONVERSIONS:
            return bool(expr.args) and expr.args[0].keyword is None and not expr.args[0].star \
                and freshly_drawn(model, expr.args[0].value, depth + 1)
        if qualified is None and isinstance(func, cst.Attribute):
            if func.attr.value in _ELEMENTWISE_METHODS:
                return freshly_drawn(model, func.value, depth + 1)
            if func.attr.value in _REFILL_DRAWS and isinstance(func.value, cst.Call):
                return (model.qualified_name(func.value.func) or "").startswith(("torch.", "numpy."))
        return False
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.MatrixMultiply):
            return freshly_drawn(model, expr.left, depth + 1)
        sides = (expr.left, expr.right)
        drawn = [freshly_drawn(model, side, depth + 1) for side in sides]
        return any(drawn) and all(d or is_plain_number(model, side) for d, side in zip(drawn, sides))
    if isinstance(expr, cst.UnaryOperation):
        return freshly_drawn(model, expr.expression, depth + 1)
    if isinstance(expr, cst.Comparison):
        return freshly_drawn(model, expr.left, depth + 1) and \
            all(is_plain_number(model, c.comparator) for c in expr.comparisons)
    if isinstance(expr, cst.Subscript):
        return all(isinstance(e.slice, cst.Slice) or isinstance(e.slice, cst.Index) and (
            is_plain_number(model, e.slice.value) or isinstance(e.slice.value, cst.Ellipsis)
            or isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None") for e in expr.slice) \
            and freshly_drawn(model, expr.value, depth + 1)
    return False


def _size(model, expr: cst.BaseExpression) -> bool:
    """A size: a tuple or list of plain numbers (``(n, d)``)."""
    from torchlint.semantic.dataflow import is_plain_number
    return isinstance(expr, (cst.Tuple, cst.List)) and all(is_plain_number(model, e.value) for e in expr.elements)


def _changed_in_place(model, name: str) -> bool:
    """Something in the file may change what ``name`` holds in place: a method that does
    (``x.sort()``, ``x.add_(...)``, ``np.random.shuffle(x)`` does not reorder exchangeable rows
    but is counted too) or an item or attribute assignment (``y[:500] = 0``)."""
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name \
                and _IN_PLACE.search(func.attr.value) and func.attr.value not in _ELEMENTWISE_METHODS:
            return True
    for node in model.nodes_of(cst.Assign, cst.AugAssign, cst.AnnAssign):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            while isinstance(target, (cst.Subscript, cst.Attribute)):
                target = target.value
                if isinstance(target, cst.Name) and target.value == name:
                    return True
    return False
