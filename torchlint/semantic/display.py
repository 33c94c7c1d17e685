"""Where a value ends up: only shown (printed, logged, plotted, displayed) or used.

* ``showing_call``: a call that only shows its arguments -- ``print``, logging, a progress
  bar's postfix, TensorBoard's ``writer.add_*``, ``wandb.log``, a plot (matplotlib, seaborn,
  visdom, ``ax.scatter``/``imshow``...), IPython's ``display``, a function named for showing
  (``show_*``, ``plot_*``, ``visualize*``, ``imshow``).
* ``only_shown``: every place the value of an expression flows to (through assignments, loop
  targets, containers, subscripts and anything computed from it, as ``dataflow.Flow`` follows
  it) is an argument of a showing call, or a statement that drops it (a notebook cell's last
  expression is shown; a name alone does nothing), and is shown at least once. A value returned, tested in a branch,
  written into another object, called, or passed to any other call whose result is dropped
  (``model.train_step(x)``, ``opt.step()``) is used. So ``idx = random.randrange(n)`` that only
  picks the sample ``plt.imshow(images[idx])`` shows is only shown; ``random.shuffle(data)``
  (it changes ``data`` in place) and a draw that reaches a loss or a batch are not.

TL006 uses it: a draw from Python's or numpy's global generator used only for display (a random
example to print, a plot colour, a fake value for a logging demo) is no unseeded training
randomness.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.dataflow import Flow
from torchlint.semantic.model import SemanticModel

# Methods and functions that only show their arguments.
SHOWING = frozenset({
    "print", "pprint", "display", "log", "info", "debug", "warning", "warn", "set_postfix", "set_description",
    "set_postfix_str", "write",
    # TensorBoard / wandb / visdom / mlflow
    "add_scalar", "add_scalars", "add_image", "add_images", "add_figure", "add_histogram", "add_text",
    "add_embedding", "add_video", "add_audio", "add_pr_curve", "add_mesh", "add_hparams", "log_metrics",
    "log_metric", "log_image", "log_hyperparams", "updateTrace", "scatter", "line", "images", "image", "heatmap",
    "bar", "histogram", "text",
    # matplotlib (pyplot and Axes)
    "plot", "imshow", "show", "hist", "barh", "pie", "title", "set_title", "xlabel", "ylabel", "set_xlabel",
    "set_ylabel", "legend", "annotate", "savefig", "subplot", "fill_between", "errorbar", "stem", "step_plot",
    "contour", "contourf", "pcolormesh", "matshow", "quiver", "suptitle", "axvline", "axhline", "set_xticks",
    "set_yticks", "xticks", "yticks", "semilogy", "semilogx", "loglog", "boxplot", "violinplot",
})
# Libraries whose every function only shows (plots, displays).
_SHOWING_ROOTS = ("matplotlib.", "seaborn.", "plotly.", "visdom.", "IPython.display.", "wandb.log")
# Same-file or imported helpers named for showing.
# (a prefix only: ``fit_and_plot`` trains before it plots)
_SHOWING_NAME = re.compile(r"^(show|plot|display|visuali[sz]e|imshow|print)(_|$)", re.IGNORECASE)
# Roots whose functions compute (``np.log``, ``torch.histogram``), whatever their name.
_COMPUTING_ROOTS = ("numpy.", "torch.", "math.", "scipy.", "random.", "jax.", "tensorflow.")
# Calls that store their argument in the object they are called on (its later reads see it).
_STORING = frozenset({"append", "extend", "add", "insert", "update", "appendleft", "put"})
_LIMIT = 200  # reads followed before giving up (then: used)


def showing_call(model: SemanticModel, call: cst.Call) -> bool:
    """A call that only shows its arguments (module docstring)."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if name is None:
        return False
    qualified = model.qualified_name(func) or ""
    if qualified.startswith(_COMPUTING_ROOTS):
        return False
    return name in SHOWING or bool(_SHOWING_NAME.search(name)) or qualified.startswith(_SHOWING_ROOTS)


def only_shown(ctx, model: SemanticModel, flow: Flow, node: cst.BaseExpression) -> bool:
    """The value ``node`` computes is shown somewhere and every other use of it drops it
    (module docstring). A value never shown (a draw as a statement of its own, a name never
    read) is not: it is no display."""
    todo: list[cst.CSTNode] = [node]
    seen: set[cst.CSTNode] = set()
    shown = False
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if len(seen) > _LIMIT:
            return False
        end = _end(ctx, model, current)
        if end == "used":
            return False
        if end == "stored":
            todo.extend(flow.onward(current))
        shown = shown or end == "shown"
    return shown


def _end(ctx, model: SemanticModel, node: cst.CSTNode) -> str:
    """Climb from ``node`` to where its value ends: ``shown`` (an argument of a showing call),
    ``stored`` (assigned, a loop's iterable, put in a container: follow its reads),
    ``dropped`` (a statement that is the value, or computes from it without calling anything)
    or ``used``."""
    parent = ctx.parent
    current, through_call = node, False
    while True:
        up = parent(current)
        if up is None:
            return "dropped"
        if isinstance(up, cst.Arg):
            call = parent(up)
            if isinstance(call, cst.Call):
                if showing_call(model, call):
                    return "shown"
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _STORING:
                    return "stored"
                through_call = True
        elif isinstance(up, cst.Call):
            if up.func is current and not isinstance(current, cst.Attribute):
                return "used"  # a drawn callable, called
            through_call = True  # a method of the value (``.tolist()``) or a call computing from it
        elif isinstance(up, (cst.Assign, cst.AnnAssign)):
            return "stored" if up.value is current else "used"
        elif isinstance(up, cst.AugAssign):
            return "stored" if up.value is current and isinstance(up.target, cst.Name) else "used"
        elif isinstance(up, cst.For):
            return "stored" if up.iter is current else "used"
        elif isinstance(up, cst.Expr):
            return "used" if through_call else "dropped"
        elif isinstance(up, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Lambda, cst.Param,
                             cst.NamedExpr, cst.Yield, cst.Await, cst.AssignTarget, cst.Decorator, cst.With,
                             cst.WithItem)):
            return "used"
        elif isinstance(up, cst.CompFor) and up.iter is not current:
            return "used"
        current = up
