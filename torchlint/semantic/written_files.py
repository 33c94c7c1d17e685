"""Which files a program writes, and the file names it makes for other code to write: whether a
load reads the program's own file (TL016's questions across files).

* ``write_sites(model)``: every write of the file (``torch.save(x, P)``, ``pickle.dump(x, P)``
  and its kin, ``joblib.dump``, ``np.save``/``savez``, ``open(P, "wb")``), each with its path
  expression, the suffix the writer appends (``np.save`` adds ``.npy``) and what can read it
  back (``kind``: ``TORCH``, ``PICKLE``, ``NUMPY``, or ``BYTES`` for raw bytes, any of them).
* ``dumps_what_it_loads(model, load, parent)``: the function writes back, in the same format,
  the value the load gives it (a resume file it saves itself).
* ``from_elsewhere(model, expr)``: a value this code is handed rather than makes: a parameter
  (not ``self``), a loop target (``for x, path in loader``: a Dataset's items), an unpacked
  value, a part of those (``item["path"]``, ``paths[0]``), or a join of them.
* ``handed_in_writes(model)``: the writes whose path is handed in and names no file of its
  own (``pickle.dump(enc, open(video_path, "wb"))`` for each ``video_path`` a DataLoader
  gives): the file name is made elsewhere.
* ``written_paths(model)``: the keys of the paths the file writes (``path_key`` patterns; a
  function's parameter is keyed with its function: ``def save(self, path)`` and ``def
  load(cls, path)`` name no common file), through same-file helpers and renames too;
  ``reads_own_file(model, load)``: a load reads one of them; ``names_written(shape, keys)``: a
  path pattern names one of ``keys``.
* ``built_names(model)``: the file-name patterns the file makes and hands on (stores,
  returns, passes to a call) rather than reads, fetches, hands to a shell or writes itself:
  ``self.name = "{0}RN{1}-encoding.pt".format(...)`` is ``*RN*-encoding.pt``.

A project whose files write to handed-in paths while another of its files makes a name that a
load reads writes that file itself (its feature cache); a name nothing in the project makes
(a downloaded checkpoint) is not its own. ``file_name``, ``names_match``, ``specific`` and
``has_own_name`` compare path patterns (``*`` any text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.semantic.callgraph import passed_argument
from torchlint.semantic.model import SemanticModel
from torchlint.semantic.provenance import (DOWNLOAD, OPENERS, URL, bound_values, formatted_text, moved, origin,
                                           parameter_of, path_shape, read_paths)
from torchlint.torch_api import keyword_arg
from torchlint.tree import iter_nodes

TORCH = "torch"
PICKLE = "pickle"
NUMPY = "numpy"
BYTES = "bytes"  # raw bytes (``open(P, "wb")``): whatever reads them

TORCH_LOADS = {"torch.load", "torch.serialization.load"}
PICKLE_LOADS = {
    f"{module}.{function}"
    for module in ("pickle", "_pickle", "cPickle", "dill", "cloudpickle")
    for function in ("load", "loads", "Unpickler")
} | {"joblib.load", "sklearn.externals.joblib.load"}
# Writers: the index of the path argument, and what reads the file back.
WRITERS = {"joblib.dump": (1, PICKLE), "numpy.save": (0, NUMPY), "numpy.savez": (0, NUMPY),
           "numpy.savez_compressed": (0, NUMPY), "torch.save": (1, TORCH), "pickle.dump": (1, PICKLE),
           "dill.dump": (1, PICKLE), "cloudpickle.dump": (1, PICKLE)}
# What a writer appends to a path that lacks it.
_SUFFIXES = {"numpy.save": ".npy", "numpy.savez": ".npz", "numpy.savez_compressed": ".npz"}
# Calls that hand their arguments to a shell (``wget -O name``): a name given there is fetched.
_SHELLS = {"os.system", "os.popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
           "subprocess.check_output", "subprocess.Popen"}
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_FIELD = re.compile(r"\{[^}]*\}")
_MAX_DEPTH = 4
# The verb part of a path option's name: ``args.load_emissions`` and ``args.dump_emissions`` name one file.
_PATH_VERB = re.compile(r"(?<![A-Za-z0-9])(load|dump|save|read|write)_|_(load|dump|save|read|write)(?![A-Za-z0-9_])")
_CALLERS_DEEP = 3  # how many calls deep a path parameter is followed to what its callers pass


@dataclass(frozen=True)
class WriteSite:
    call: cst.Call
    path: cst.BaseExpression  # the path or file object written
    suffix: str  # what the writer appends to a path without it
    kind: str  # TORCH, PICKLE, NUMPY or BYTES: what reads the file back


def opens_for_writing(call: cst.Call) -> bool:
    """``open(P, "wb")``, ``open(P, mode="a")``: the file is written."""
    mode = keyword_arg(call, "mode")
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1]
    return mode is not None and isinstance(mode.value, cst.SimpleString) and \
        any(c in mode.value.evaluated_value for c in "wax")


def reader_kind(qualified: str | None) -> str | None:
    """What a load reads: ``TORCH`` for ``torch.load``, ``PICKLE`` for pickle's kin and
    joblib, ``NUMPY`` for ``np.load``; None for anything else."""
    if qualified in TORCH_LOADS:
        return TORCH
    if qualified in PICKLE_LOADS:
        return PICKLE
    return NUMPY if qualified == "numpy.load" else None


def readable(reader: str, writer: str) -> bool:
    """A file ``writer`` wrote can be what ``reader`` loads (a pickle is no torch checkpoint)."""
    return writer in (reader, BYTES)


def write_sites(model: SemanticModel) -> list[WriteSite]:
    """Every write of the file, in source order (see the module's docstring)."""
    table = model.memo("written_files")
    if "sites" not in table:
        sites = []
        for site in model.calls:
            call = site.node
            qualified = model.qualified_name(call.func)
            if qualified in WRITERS and len(call.args) > WRITERS[qualified][0]:
                index, kind = WRITERS[qualified]
                sites.append(WriteSite(call, call.args[index].value, _SUFFIXES.get(qualified, ""), kind))
            elif qualified in OPENERS and call.args and opens_for_writing(call):
                sites.append(WriteSite(call, call.args[0].value, "", BYTES))
        table["sites"] = sites
    return table["sites"]


def dumps_what_it_loads(model: SemanticModel, load: cst.Call, parent) -> bool:
    """The value a load binds to a name is written back by the same function with a writer
    of the same format (``study = joblib.load(resume)`` ... ``joblib.dump(study, path)``): the
    function resumes from the file it saves itself (tsai's ``run_optuna_study``), whatever
    path its caller names. ``parent`` gives a node's parent (``ctx.parent``)."""
    reader = reader_kind(model.qualified_name(load.func))
    assign = parent(load)
    if reader is None or not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
            or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    scope = model.scope_of(load)
    for site in write_sites(model):
        if site.kind != reader or model.scope_of(site.call) is not scope:
            continue
        written = site.call.args[0].value if site.call.args else None
        if isinstance(written, cst.Name) and written.value == name \
                and any(b.value is load for b in model.reaching(name, written)):
            return True
    return False


def from_elsewhere(model: SemanticModel, expr: cst.BaseExpression, depth: int = 0,
                   seen: frozenset = frozenset()) -> bool:
    """``expr`` is handed to this code (see the module's docstring): every name it is built
    from is a parameter other than ``self``, a loop or comprehension target or an unpacked
    value, directly or through assignments a few deep (``path = path[0]`` in a loop keeps
    what the loop gave; a ``del`` gives nothing); strings may join them (``d + ".pkl"``).
    Attributes of ``self``, calls' results and module constants are not."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        bindings = [b for b in model.reaching(expr.value, expr) if b.kind != "del" and id(b.node) not in seen]
        inner = seen | {id(b.node) for b in bindings}
        return bool(bindings) and all(_handed(model, b, expr, depth, inner) for b in bindings)
    if isinstance(expr, (cst.Subscript, cst.Attribute)):
        return from_elsewhere(model, expr.value, depth + 1, seen)
    parts = _parts(model, expr)
    if parts is None:
        return False
    names = [p for p in parts if not isinstance(p, (cst.SimpleString, cst.ConcatenatedString))]
    return bool(names) and all(from_elsewhere(model, p, depth + 1, seen) for p in names)


def _handed(model: SemanticModel, binding, name: cst.Name, depth: int, seen: frozenset) -> bool:
    if binding.kind in ("for", "comp", "unpack"):
        return True
    if binding.kind == "param":
        function = model.ctx.enclosing_function(binding.node)
        return function is None or model.self_name(function) != name.value
    if binding.kind in ("assign", "ann", "walrus") and binding.value is not None:
        return from_elsewhere(model, binding.value, depth + 1, seen)
    return False


def _parts(model: SemanticModel, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The parts a path is joined from (``os.path.join``, ``Path``, ``str``, ``/``, ``+``,
    f-string fields), or None for an expression that is no join."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.Add)):
        return [expr.left, expr.right]
    if isinstance(expr, cst.FormattedString):
        return [p.expression for p in expr.parts if isinstance(p, cst.FormattedStringExpression)]
    if isinstance(expr, cst.Call) and expr.args and not any(a.keyword or a.star for a in expr.args) and \
            model.qualified_name(expr.func) in ("os.path.join", "posixpath.join", "pathlib.Path", "str", "os.fspath"):
        return [a.value for a in expr.args]
    return None


def handed_in_writes(model: SemanticModel) -> list[WriteSite]:
    """The writes whose path is handed in (``from_elsewhere``) and names no file of its own
    (``has_own_name``): where the file ends up is decided by the code that made the path."""
    out = []
    for site in write_sites(model):
        paths = read_paths(model, site.path)  # ``open(P, "wb")`` and ``with open(P, "wb") as f``: P
        if any(has_own_name(path_shape(model, p)) for p in paths if not isinstance(p, cst.Name)):
            continue
        if any(from_elsewhere(model, p) for p in paths):
            out.append(site)
    return out


def built_names(model: SemanticModel) -> list[str]:
    """The file-name patterns (the last component, ``*`` for each field) written in strings of
    the file that name a file of their own (``specific``), except those read here (a load's
    or ``open``'s path, as ``read_paths`` follows it), fetched (a download helper's or a URL
    opener's arguments), handed to a shell, or written here (a writer's path, as
    ``read_paths`` follows it: ``torch.save(x, os.path.join(output_dir, "rng_state.pth"))``
    is this file's own write, compared by its whole path, not a name made for a writer that is
    handed its paths)."""
    table = model.memo("written_files")
    if "names" in table:
        return table["names"]
    candidates = []
    for node in model.nodes_of(cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
        parent = model.ctx.parent(node)
        if isinstance(parent, (cst.ConcatenatedString, cst.Expr)):
            continue  # the whole concatenation is the string; a docstring names nothing
        expr = parent if isinstance(parent, cst.BinaryOperation) and parent.left is node else node
        if isinstance(parent, cst.Attribute) and parent.attr.value == "format":
            grand = model.ctx.parent(parent)
            expr = grand if isinstance(grand, cst.Call) and grand.func is parent else node
        shape = formatted_text(expr) if expr is not node else path_shape(model, node)
        if shape is None or "://" in shape:
            continue
        name = file_name(shape)
        if _EXTENSION.search(name) and specific(name) and not any(c.isspace() for c in name):  # not a message
            candidates.append((node, name))
    names: set[str] = set()
    if candidates:
        hidden = _read_or_fetched(model, [node for node, _ in candidates])
        names = {name for node, name in candidates if id(node) not in hidden}
    table["names"] = sorted(names)
    return table["names"]


def _read_or_fetched(model: SemanticModel, nodes: list[cst.CSTNode]) -> set[int]:
    """The ids of the nodes of the paths the file reads (loads, ``open`` for reading) or
    writes (``write_sites``), and of the arguments of fetches and shell commands: those
    ``built_names`` asks about (``nodes``) among them. Whether a call fetches
    (``provenance.origin``, the costly part) is asked only of the calls around one of
    ``nodes``: the arguments of any other hold none of them."""
    around = {id(anc) for node in nodes for anc in model.ctx.ancestors(node) if type(anc) is cst.Call}
    roots: list[cst.CSTNode] = [p for site in write_sites(model) for p in read_paths(model, site.path)]
    for site in model.calls:
        call = site.node
        qualified = model.qualified_name(call.func)
        if call.args and (reader_kind(qualified) is not None
                          or qualified in OPENERS and not opens_for_writing(call)):
            roots += read_paths(model, call.args[0].value)
        elif qualified in _SHELLS or id(call) in around and origin(model, call) in (URL, DOWNLOAD):
            roots += [a.value for a in call.args]
    return {id(n) for root in roots for n in iter_nodes(root)}


# -- comparing path patterns ---------------------------------------------------------------

def file_name(shape: str) -> str:
    """The last component of a path pattern, each expression a ``*`` (``{out}/{e}epoch.pth``
    gives ``*epoch.pth``)."""
    return _FIELD.sub("*", shape).replace("\\", "/").rsplit("/", 1)[-1]


def specific(pattern: str) -> bool:
    """The file name part of ``pattern`` has three characters of its own, its extension aside."""
    return len(_EXTENSION.sub("", pattern.rsplit("/", 1)[-1]).replace("*", "")) >= 3


def has_own_name(shape: str) -> bool:
    """A path pattern with a name of its own written in strings (``{out}/*epoch.pth``), not
    only expressions (``{args.resume}``) or fields (``{out}/*.pt``)."""
    return specific(_FIELD.sub("", shape))


def covers(pattern: str, text: str) -> bool:
    """``pattern``, each ``*`` any text, matches ``text``."""
    return "*" in pattern and specific(pattern) and \
        re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), text) is not None


def names_match(a: str, b: str) -> bool:
    """Two file-name patterns can name one file: equal, or one matches the other."""
    return specific(a) and specific(b) and (a == b or covers(a, b) or covers(b, a))


def path_key(text: str) -> str:
    """A path expression as written, or without its verb when it has one: ``args.load_emissions``
    and ``args.dump_emissions`` (two options of one program for one file) have one key, while
    ``path`` and ``save_path`` do not."""
    shape = _PATH_VERB.sub("", text)
    return text if shape == text else f"{shape} (verb aside)"


def names_written(shape: str, written) -> bool:
    """``shape`` (a read path's pattern) names one of the ``written`` keys (patterns; keys of a
    parameter are left out): the same text, or one matches the other with each ``*`` standing
    for any text (``out/*epoch.pth`` and ``out/*epoch.pth``, ``cache/*_dataset`` and
    ``cache/train_dataset``); a pattern whose file name has fewer than three characters of its
    own (``*.pkl``) names no particular file."""
    key = path_key(shape)
    if "*" in key and not specific(key):
        return False
    patterns = [k for k in written if isinstance(k, str)]
    return key in patterns or any(covers(key, other) or covers(other, key) for other in patterns)


def written_paths(model: SemanticModel) -> set:
    """The keys (``_key``) of the paths the file writes (``write_sites``: ``open(P, "w..."/"a...")``,
    ``joblib.dump(x, P)``, ``np.save(P, ...)``, ``torch.save(x, P)``), what same-file callers
    pass when P is the writing function's parameter, the target of ``with write_and_rename(P)
    as tmp`` and of a rename of a written path (``os.rename(tmp, path)``). Memoised on the model."""
    table = model.memo("written_paths")
    if "keys" in table:
        return table["keys"]
    paths = [(site.path, site.suffix) for site in write_sites(model)]
    # ``with write_and_rename(P) as tmp: torch.save(x, tmp)``: the file is P
    paths += [(value.args[0].value, suffix) for p, suffix in list(paths) if isinstance(p, cst.Name)
              for value in bound_values(model, p) if isinstance(value, cst.Call) and value.args
              and value.args[0].keyword is None and not value.args[0].star]
    paths += [(q, suffix) for p, suffix in list(paths) for q in _passed_for(model, p) if q is not None]
    written: set = set()
    for p, suffix in paths:
        key = _key(model, p)
        if isinstance(key, tuple):
            written.add(key)  # torch.save(x, path) of a parameter: that function's file, whatever its caller names
        else:
            written |= {path_key(path_shape(model, p) + end) for end in {"", suffix}}  # np.save adds .npy
    # ``torch.save(x, tmp); os.rename(tmp, path)``: the file ends up at ``path``
    for site in model.calls:
        move = moved(model, site.node)
        if move is not None and _writes(model, move[0], written):
            written.add(_key(model, move[1]))
    table["keys"] = written
    return written


def reads_own_file(model: SemanticModel, load: cst.Call) -> bool:
    """``load`` reads a path this file writes (``written_paths``): its first argument as written
    or the values it was assigned, or, for a parameter of a same-file function, its own
    function's write of it or what every same-file call passes (``resume(checkpoint=out /
    "checkpoint.pth")``)."""
    first = next((a.value for a in load.args if a.keyword is None and not a.star), None)
    written = written_paths(model)
    if first is None or not written:
        return False
    return any(_writes(model, p, written) for p in read_paths(model, first))


def _key(model: SemanticModel, path: cst.BaseExpression) -> str | tuple[int, str]:
    """``path``'s key among the written paths: its pattern (``path_key``), or, for a function's
    parameter (``provenance.parameter_of``), the pattern together with that function: the
    ``path`` parameter of ``load`` is not the ``path`` parameter of ``save``, each holds what
    its caller hands it (stable-baselines3's ``BasePolicy.save(path)`` and
    ``BasePolicy.load(path)``: the load reads any file a user names)."""
    key = path_key(path_shape(model, path))
    function = parameter_of(model, path) if isinstance(path, cst.Name) else None
    return key if function is None else (id(function), key)


def _writes(model: SemanticModel, path: cst.BaseExpression, written: set, depth: int = 0) -> bool:
    """``path`` names a written one (``names_written``); a function's parameter names its own
    function's write of it, or, where that function writes none, what every same-file call
    passes for it, when each names a written path (``resume(checkpoint=out /
    "checkpoint.pth")``; followed ``_CALLERS_DEEP`` calls deep). A caller passing ``None``
    loads no file."""
    key = _key(model, path)
    if key in written if isinstance(key, tuple) else names_written(key, written):
        return True
    # a parameter's callers, a few calls deep (a name bound otherwise too: only the load's own)
    passed = _passed_for(model, path) if depth < _CALLERS_DEEP and (isinstance(key, tuple) or depth == 0) else []
    return bool(passed) and all(p is not None and (_is_none(p) or any(_writes(model, q, written, depth + 1)
                                                                     for q in read_paths(model, p)))
                                for p in passed)


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _passed_for(model: SemanticModel, path: cst.BaseExpression) -> list[cst.BaseExpression | None]:
    """When ``path`` is a parameter of a same-file function, what each same-file call of that
    function passes for it, or the parameter's default where a call leaves it out (None where
    that cannot be told)."""
    if not isinstance(path, cst.Name):
        return []
    out = []
    for binding in model.reaching(path.value, path):
        function = binding.scope.node
        if binding.kind == "param" and isinstance(binding.node, cst.Param) and isinstance(function, cst.FunctionDef):
            name = binding.node.name.value
            out += [passed_argument(model, site, function, name) for site in model.calls_to(function.name.value)]
    return out
