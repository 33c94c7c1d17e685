"""Where a value (a path, a file object, bytes) comes from, as far as one file shows:
a URL, a download helper or user input (command line, ``input()``, argparse arguments).

``origin(model, expr)`` looks through the expression's parts (``os.path.join(args.dir,
"best.pt")``, ``open(path, "rb")``, ``io.BytesIO(resp.content)``, f-strings) and, for a
name, the values it was assigned before the read (a few assignments deep). Parameters and
attributes of objects it does not know are not followed: an unknown origin is None, never a
guess. Rules use it to say how exposed a load is; it decides no finding by itself.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.model import SemanticModel
from torchlint.statements import dotted_name

URL = "a URL"
DOWNLOAD = "a download"
USER_INPUT = "user input"

_MAX_DEPTH = 4
_URL_TEXT = re.compile(r"""^[rbuRBUfF]*['"]{1,3}(https?|ftp|s3|gs)://""")
# Calls whose result is fetched from the network (qualified names, imports expanded).
_FETCHERS = {
    "urllib.request.urlopen": URL, "urllib.request.urlretrieve": DOWNLOAD, "requests.get": URL,
    "requests.request": URL, "httpx.get": URL, "torch.hub.download_url_to_file": DOWNLOAD,
    "huggingface_hub.hf_hub_download": DOWNLOAD, "huggingface_hub.snapshot_download": DOWNLOAD,
    "huggingface_hub.cached_download": DOWNLOAD, "gdown.download": DOWNLOAD, "wget.download": DOWNLOAD,
    "torchvision.datasets.utils.download_url": DOWNLOAD,
}
_USER_CALLS = {"input", "sys.stdin.read", "sys.stdin.readline"}
_PARSERS = ("parse_args", "parse_known_args", "parse_intermixed_args")
_DOWNLOAD_NAME = re.compile(r"(^|_)(download|fetch)(_|$)|^(urlopen|urlretrieve)$", re.IGNORECASE)


def origin(model: SemanticModel, expr: cst.BaseExpression | None, depth: int = 0) -> str | None:
    """``URL``, ``DOWNLOAD`` or ``USER_INPUT`` when ``expr``'s value comes from there (see the
    module's docstring); None when nothing in the file says so."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return _string_origin(model, expr, depth)
    if isinstance(expr, cst.Call):
        return _call_origin(model, expr, depth)
    if isinstance(expr, cst.Subscript):
        if model.qualified_name(expr.value) == "sys.argv":
            return USER_INPUT
        return origin(model, expr.value, depth + 1)
    if isinstance(expr, cst.Attribute):
        if model.qualified_name(expr) in ("sys.argv",):
            return USER_INPUT
        return _attribute_origin(model, expr, depth)
    if isinstance(expr, cst.Name):
        return _name_origin(model, expr, depth)
    if isinstance(expr, cst.BinaryOperation):  # "https://" + name, root / "x.pt"
        return origin(model, expr.left, depth + 1) or origin(model, expr.right, depth + 1)
    return None


def _string_origin(model: SemanticModel, expr: cst.BaseExpression, depth: int) -> str | None:
    first = expr.left if isinstance(expr, cst.ConcatenatedString) else expr
    while isinstance(first, cst.ConcatenatedString):
        first = first.left
    if isinstance(first, cst.SimpleString) and _URL_TEXT.match(first.value):
        return URL
    if isinstance(first, cst.FormattedString):
        head = first.parts[0] if first.parts else None
        if isinstance(head, cst.FormattedStringText) and _URL_TEXT.match(first.start + head.value):
            return URL
        for part in first.parts:
            if isinstance(part, cst.FormattedStringExpression):
                found = origin(model, part.expression, depth + 1)
                if found:
                    return found
    return None


def _call_origin(model: SemanticModel, call: cst.Call, depth: int) -> str | None:
    qualified = model.qualified_name(call.func)
    if qualified in _FETCHERS:
        return _FETCHERS[qualified]
    if qualified in _USER_CALLS:
        return USER_INPUT
    written = dotted_name(call.func) or ""
    last = written.rsplit(".", 1)[-1]
    if last in _PARSERS:
        return USER_INPUT
    if _DOWNLOAD_NAME.search(last):
        return DOWNLOAD
    # a wrapper of its arguments: open(p), BytesIO(data), os.path.join(a, b), Path(p), str(p)
    for arg in call.args:
        found = origin(model, arg.value, depth + 1)
        if found:
            return found
    if isinstance(call.func, cst.Attribute):  # "...".format(x), path.replace(...), resp.read()
        return origin(model, call.func.value, depth + 1)
    return None


def _attribute_origin(model: SemanticModel, expr: cst.Attribute, depth: int) -> str | None:
    """``args.ckpt`` (argparse), ``resp.content`` (a fetched response)."""
    return origin(model, expr.value, depth + 1)


def _name_origin(model: SemanticModel, expr: cst.Name, depth: int) -> str | None:
    for value in bound_values(model, expr):
        found = origin(model, value, depth + 1)
        if found:
            return found
    return None


def bound_values(model: SemanticModel, name: cst.Name) -> list[cst.BaseExpression]:
    """The expressions ``name`` may hold where it is read: the values of the assignments
    reaching it (``x = ...``, ``x: T = ...``, ``(x := ...)``) and the context expressions of
    ``with ... as x``; parameters, loops and unpacking give nothing."""
    out = []
    for binding in model.reaching(name.value, name):
        if binding.kind == "with" and isinstance(binding.node, cst.WithItem):
            out.append(binding.node.item)
        elif binding.kind in ("assign", "ann", "walrus") and binding.value is not None:
            out.append(binding.value)
    return out
