"""Where a value (a path, a file object, bytes) comes from, as far as one file shows:
a URL, a download helper or user input (command line, ``input()``, argparse arguments).

``origin(model, expr)`` looks through the expression's parts (``os.path.join(args.dir,
"best.pt")``, ``open(path, "rb")``, ``io.BytesIO(resp.content)``, f-strings) and, for a
name, the values it was assigned before the read (a few assignments deep). Parameters and
attributes of objects it does not know are not followed: an unknown origin is None, never a
guess. Rules use it to say how exposed a load is; it decides no finding by itself.

Where a path leads, for loads and saves: ``read_paths(model, expr)`` (the path expressions a
file object or name reads: ``open(P)`` gives P), ``path_shape(model, expr)`` (a path written
as a pattern, ``{out}/*epoch.pth``; ``formatted_text`` for ``str.format`` and ``%``), ``moved(model, call)`` (the source and destination of a
rename or copy), ``reads_file(model, expr)`` (bytes read from a file or fetched),
``in_memory(model, expr)`` (an ``io.BytesIO`` built here), ``from_package(model, expr)``
(a file shipped with the code: ``__file__``, ``importlib.resources``) and ``parameter_of(model,
name)`` (the function whose parameter a bare path name is).
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.semantic.literals import string_value
from torchlint.semantic.model import SemanticModel
from torchlint.statements import dotted_name
from torchlint.tree import iter_nodes

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


def parameter_of(model: SemanticModel, name: cst.Name) -> cst.CSTNode | None:
    """The function (or lambda) whose parameter ``name`` is where it is read (every binding
    reaching the read is that parameter), else None. A parameter holds whatever each caller
    hands it: two parameters of one name in two functions (``def save(self, path)`` and
    ``def load(cls, path)``) name no common file."""
    bindings = model.reaching(name.value, name)
    if not bindings or any(b.kind != "param" for b in bindings):
        return None
    scopes = {id(b.scope.node) for b in bindings}
    return bindings[0].scope.node if len(scopes) == 1 else None


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


# -- paths: what a load reads, how a path is written, where a file is moved -------------------

# Calls that open a file: their first argument is the path.
OPENERS = {"open", "io.open", "gzip.open", "bz2.open", "lzma.open"}
# Moves of a file: (source, destination) are the first two arguments.
_MOVES = {"os.rename", "os.replace", "shutil.move", "shutil.copy", "shutil.copyfile", "shutil.copy2"}
# Where a package's own data files are found.
_PACKAGE_DATA = ("importlib.resources.", "importlib_resources.", "pkg_resources.resource_")
_JOINS = {"os.path.join", "posixpath.join"}
_PATHS = {"pathlib.Path", "pathlib.PurePath", "str", "os.fspath"}


def read_paths(model: SemanticModel, expr: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
    """The expressions naming what ``expr`` reads: ``open(P)`` gives P, a name the values
    it was assigned (``with open(P) as f``), anything else itself."""
    if depth > 3:
        return [expr]
    if isinstance(expr, cst.Call):
        if expr.args and model.qualified_name(expr.func) in OPENERS:
            return read_paths(model, expr.args[0].value, depth + 1)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "open":
            return read_paths(model, expr.func.value, depth + 1)  # Path(P).open("rb")
    if isinstance(expr, cst.Name):
        values = bound_values(model, expr)
        return [expr, *(p for v in values for p in read_paths(model, v, depth + 1))]
    return [expr]


def path_shape(model: SemanticModel, expr: cst.BaseExpression) -> str:
    """A path expression as a pattern: string parts as their text, each formatted field a
    ``*`` (f-strings, ``str.format``, ``%``), ``/`` and ``os.path.join`` as ``/``, ``Path(p)``
    as ``p``, anything else as written in braces: ``out / f"{epoch}epoch.pth"`` is
    ``{out}/*epoch.pth``."""
    if isinstance(expr, cst.SimpleString):
        value = string_value(expr)
        return value if isinstance(value, str) else model.ctx.module.code_for_node(expr)
    if isinstance(expr, cst.FormattedString):
        return "".join(p.value if isinstance(p, cst.FormattedStringText) else "*" for p in expr.parts)
    if isinstance(expr, cst.ConcatenatedString):
        return path_shape(model, expr.left) + path_shape(model, expr.right)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.Add)):
        joint = "/" if isinstance(expr.operator, cst.Divide) else ""
        return path_shape(model, expr.left) + joint + path_shape(model, expr.right)
    formatted = formatted_text(expr)
    if formatted is not None:  # "{}-encoding.pt".format(kind), "%s_%d.pkl" % (name, epoch)
        return formatted
    if isinstance(expr, cst.Call) and expr.args and not any(a.keyword or a.star for a in expr.args):
        function = model.qualified_name(expr.func)
        if function in _JOINS:
            return "/".join(path_shape(model, a.value) for a in expr.args)
        if function in _PATHS and len(expr.args) == 1:
            return path_shape(model, expr.args[0].value)
    return "{" + model.ctx.module.code_for_node(expr) + "}"


_FORMAT_FIELD = re.compile(r"\{[^{}]*\}")
_PERCENT_FIELD = re.compile(r"%[-#0 +]*(\d+|\*)?(\.\d+)?[a-zA-Z]")


def formatted_text(expr: cst.BaseExpression) -> str | None:
    """A string formatted by ``str.format`` or ``%`` as a pattern, each field a ``*``:
    ``"{}-encoding.pt".format(kind)`` is ``*-encoding.pt``, ``"%s_%d.pkl" % (name, epoch)``
    ``*_*.pkl``; None for any other expression."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format" \
            and isinstance(expr.func.value, cst.SimpleString):
        text = string_value(expr.func.value)
        return _FORMAT_FIELD.sub("*", text).replace("{{", "{").replace("}}", "}") if isinstance(text, str) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo) \
            and isinstance(expr.left, cst.SimpleString):
        text = string_value(expr.left)
        return _PERCENT_FIELD.sub("*", text).replace("%%", "%") if isinstance(text, str) else None
    return None


def moved(model: SemanticModel, call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(source, destination) of ``os.rename(a, b)``/``os.replace``/``shutil.move``/a copy, or
    of ``Path(a).rename(b)``/``a.replace(b)`` on a path; None for any other call."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if model.qualified_name(call.func) in _MOVES and len(args) == 2:
        return args[0], args[1]
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("rename", "replace") and len(args) == 1 \
            and len(call.args) == 1:
        receiver = func.value
        if isinstance(receiver, cst.Call) and model.qualified_name(receiver.func) in _PATHS and receiver.args:
            receiver = receiver.args[0].value
        return receiver, args[0]
    return None


def reads_file(model: SemanticModel, expr: cst.BaseExpression) -> bool:
    """``expr`` reads a file (``f.read()``, ``path.read_bytes()``, ``open(...)``) or is fetched."""
    for node in iter_nodes(expr):
        if isinstance(node, cst.Call) and (
                isinstance(node.func, cst.Attribute) and node.func.attr.value in ("read", "read_bytes", "open")
                or model.qualified_name(node.func) in OPENERS):
            return True
    return origin(model, expr) in (URL, DOWNLOAD)


def in_memory(model: SemanticModel, expr: cst.BaseExpression | None) -> bool:
    """``expr`` is an ``io.BytesIO`` built here (``io.BytesIO(t.numpy())``, directly or
    through a name): bytes in memory, not a file."""
    if expr is None:
        return False
    candidates = bound_values(model, expr) if isinstance(expr, cst.Name) else [expr]
    return bool(candidates) and all(isinstance(c, cst.Call) and model.qualified_name(c.func) == "io.BytesIO"
                                    for c in candidates)


def from_package(model: SemanticModel, expr: cst.BaseExpression | None, depth: int = 0) -> bool:
    """``expr`` is a file shipped with the code: it reads ``__file__`` or calls
    ``importlib.resources``/``pkg_resources``, itself or through the values of the names it
    reads (``here = os.path.dirname(__file__)``)."""
    if expr is None:
        return False
    for node in iter_nodes(expr):
        if isinstance(node, cst.Name):
            if node.value == "__file__":
                return True
            if depth < 3 and any(from_package(model, v, depth + 1) for v in bound_values(model, node)):
                return True
        elif isinstance(node, cst.Call) and (model.qualified_name(node.func) or "").startswith(_PACKAGE_DATA):
            return True
    return False
