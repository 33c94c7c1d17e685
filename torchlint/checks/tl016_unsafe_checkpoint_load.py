"""TL016 unsafe-checkpoint-load: a checkpoint or pickle load that can run code from the file.

The walk notes calls whose last name is ``load``/``loads``/``Unpickler``/... (or an imported
name: an alias); ``finish`` resolves
them with the semantic model (imports, shadowing) and reports:

* ``torch.load``/``torch.serialization.load`` (and ``torch.hub.load_state_dict_from_url``/
  ``torch.utils.model_zoo.load_url``, which torch.load what they download) with
  ``weights_only=False`` (``0``) as written, or stored into the ``**kwargs`` dict it is given
  (``kwargs["weights_only"] = False``, ``{"weights_only": False}``), except of an ``io.BytesIO``
  built in the file from nothing fetched (objects sent between ranks), of a path the program
  writes (below) (no comment exempts a call: one may name the risk precisely because it is one);
* ``torch.load`` with no ``weights_only`` (and no ``**kwargs``): only in a project whose
  torch requirement (``torchlint.pins``, read once per run) allows a release below 2.6
  (``torch>=2.1``, ``torch<2.6``), where the default is still ``False``. The file cannot know the pin, so these are facts the project pass
  reports (``check_project``, with the pin in the message);
* ``pickle``/``_pickle``/``dill``/``cloudpickle``/``joblib`` loads (and ``pickle.Unpickler``)
  of a checkpoint-looking path (``.pt``/``.pth``/``.ckpt``, or ``checkpoint``, ``ckpt``,
  ``pretrained``, ``state_dict``, ``resume`` in the file name written in the path, else in the
  path's expression or the values it was assigned) or
  of something fetched from a URL or a download helper; left alone: other pickles (data and
  caches), ``loads`` of bytes held in memory (not read from a file), and a path the program
  writes (below): its own cache;
* ``numpy.load(..., allow_pickle=True)``, except of a path the program writes.

A path the program writes: one the same file writes (``open(P, "wb")``, ``joblib.dump(x, P)``,
``np.save(P, ...)``, ``torch.save(x, P)``; also through a same-file helper given the path, a
sibling option that differs only by a load/dump verb, ``args.load_x`` and ``args.dump_x``, and
a path parameter that every same-file call fills with a written path, ``resume(out /
"checkpoint.pth")``), compared as patterns (``out / f"{e}epoch.pth"`` is ``{out}/*epoch.pth``;
a pattern must keep three characters of a file name of its own); or, for a pattern with a file
name written in strings and not fetched, one that another file of the project writes: such
findings are facts the project pass keeps only when no file writes the path (``average.py``
reading the epoch files ``trainer.py`` saved), and drops too when a file of the load's package
makes its file name and hands it on, not writing it itself (``written_files.built_names``) while one writes, in a format the load
reads, to paths it is handed (``written_files.handed_in_writes``): a feature cache whose names a
Dataset makes and whose writer pickles to each path a DataLoader hands it. Which files a
program writes, and the patterns (``str.format`` and ``%`` too), are ``semantic.written_files``
and ``semantic.provenance``; a file with a string ending in a file name is analysed for the
names it makes even without a load or a write.
* ``torch.hub.load`` whose repository is not a string literal (and ``source`` is not
  ``"local"``), except a parameter with a literal default that no call in the file passes
  (callers in other files are not seen); one finding per repository expression and function.

A load from a URL, a download helper or user input (``semantic.provenance``, which also reads
what a path leads to: ``open(P)``'s P, a path as a pattern, renames, ``__file__``, in-memory
buffers) gets the message variant that says so: that is the rule's higher severity (one severity per rule, as
in ruff). Test files are skipped (``skip-tests``): tests load
what they wrote.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, from_trailing, replace_node, trailing_json
from torchlint.rule import Option, Rule
from torchlint.semantic.callgraph import passed_argument
from torchlint.semantic.packages import Packages
from torchlint.semantic.provenance import (DOWNLOAD, URL, bound_values, from_package, in_memory, origin, path_shape,
                                           read_paths, reads_file)
from torchlint.semantic.written_files import (PICKLE_LOADS, TORCH_LOADS, built_names, dumps_what_it_loads,
                                              file_name, handed_in_writes, has_own_name, names_match, names_written,
                                              opens_for_writing, path_key, readable, reader_kind, reads_own_file,
                                              specific, written_paths)
from torchlint.statements import dotted_name
from torchlint.textscan import contains_any
from torchlint.torch_api import has_star_kwargs, is_false_literal, keyword_arg
from torchlint.tree import iter_nodes

# torch.load of what they download: the URL is their first argument
_URL_LOADS = {"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"}
_WRITE_NAMES = {"save", "savez", "savez_compressed", "dump", "open"}
_CHECKPOINT = re.compile(r"\.(pt|pth|ckpt)\b|checkpoint|ckpt|pretrained|state_dict|resume", re.IGNORECASE)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
# A string literal ending in a file name's extension (``"x.pt"``, ``'{}.pkl'``).
_NAME_TEXT = re.compile(r"""\.[A-Za-z][A-Za-z0-9]{0,7}['"]""")
_SAFE_RELEASE = (2, 6)
_LAST_NAMES = ("load", "loads", "Unpickler", "load_state_dict_from_url", "load_url")

_FIX_TORCH = "pass weights_only=True (allow your own classes with torch.serialization.add_safe_globals)"


def _where(source: str | None) -> str:
    return {URL: " of a file from a URL", DOWNLOAD: " of a downloaded file"}.get(source or "", " of a path from user input" if source else "")


def weights_only_false_message(function: str, source: str | None) -> str:
    return (f"`{function}(..., weights_only=False)`{_where(source)} unpickles arbitrary objects, so a crafted "
            f"checkpoint runs code when loaded; {_FIX_TORCH}, or keep False only for files this program wrote")


def unpinned_message(function: str, source: str | None, pin: str, file: str) -> str:
    return (f"`{function}` without weights_only{_where(source)} unpickles arbitrary objects with the torch "
            f"versions this project allows (`{pin}` in {file}; the default became weights_only=True in 2.6), so a "
            f"crafted checkpoint runs code when loaded; {_FIX_TORCH}")


def pickle_message(written: str, source: str | None) -> str:
    what = _where(source) or " of a checkpoint"
    return (f"`{written}`{what} runs any code the file holds when it is loaded; store tensors "
            f"(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)")


def numpy_message(source: str | None) -> str:
    return (f"`np.load(..., allow_pickle=True)`{_where(source)} unpickles object arrays, so a crafted .npy/.npz "
            f"runs code when loaded; keep allow_pickle=False and save plain arrays (np.savez) instead of objects")


def hub_message(repo: str, source: str | None) -> str:
    chosen = f"`{repo}`, {source}" if source else f"`{repo}`"
    return (f"`torch.hub.load` of a repository chosen at run time ({chosen}) imports and runs that "
            f"repository's hubconf.py; load a fixed literal 'owner/repo:tag', or a checked-out copy with source='local'")


class UnsafeCheckpointLoad(Rule):
    code = "TL016"
    name = "unsafe-checkpoint-load"
    severity = Severity.WARNING
    default_enabled = True
    summary = 'a checkpoint or pickle load that can run code from the file (weights_only=False, pickle, torch below 2.6)'
    # [tool.torchlint.unsafe-checkpoint-load]; the page's Options block is generated from this.
    options = {
        "skip-tests": Option(True, bool, "skip test files (tests/, test/, testing/, test_utils/ directories, test_*.py, "
                                         "*_test.py, tests.py, conftest.py): tests load the files they wrote"),
    }
    skips_test_files = True
    shared_facts = ("written",)  # a checkpoint a test writes is one the project writes
    requires_text = ("load", "Unpickler", "save", "dump")  # writers: paths other files may read
    fixable = (UNSAFE,)  # weights_only=False -> True: a checkpoint holding more than tensors stops loading

    @classmethod
    def might_apply(cls, text: str, options=None) -> bool:
        """A load or a write, or a string ending in a file name (``'{0}RN{1}-encoding.pt'``): a
        name another file's load may read (``written_files.built_names``)."""
        return contains_any(text, cls.requires_text) or _NAME_TEXT.search(text) is not None


    def __init__(self, ctx, options: dict[str, Any]):
        super().__init__(ctx, options)
        self._calls: list[cst.Call] = []
        self._saves = False  # the file may write a file (torch.save, np.save, pickle.dump, open(P, "w"))
        self._deferred: list = []  # findings the project pass drops when another file writes the path

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        kind = type(func)  # (``type() is``: every call of the file passes here; neither class is subclassed)
        if kind is cst.Attribute:
            name = func.attr.value
            if name in _LAST_NAMES:
                self._calls.append(node)
        elif kind is cst.Name:
            name = func.value
            if name in _LAST_NAMES or self.ctx.is_imported(func):
                self._calls.append(node)  # ``from torch.serialization import load as load_checkpoint`` too
        else:
            name = None
        if name in _WRITE_NAMES and (name != "open" or opens_for_writing(node)):
            self._saves = True

    def finish(self) -> None:
        calls = self._calls if self.reports else []  # the loads are this file's findings only
        if not calls and not self._saves and not (self.reports and _NAME_TEXT.search(self.ctx.text)):
            return  # no load, no write, no file name another file may read
        model = self.ctx.semantic.model
        unpinned = []
        hub_seen: set[tuple] = set()
        for call in calls:
            qualified = model.qualified_name(call.func)
            if qualified in TORCH_LOADS or qualified in _URL_LOADS:
                source = URL if qualified in _URL_LOADS else self._source(call)
                weights_only = keyword_arg(call, "weights_only")
                if weights_only is not None and is_false_literal(weights_only.value) or self._false_in_kwargs(call):
                    first = _first_argument(call)
                    if source is None and in_memory(model, first):
                        continue  # bytes the program holds (sent between ranks), no file
                    if source not in (URL, DOWNLOAD) and (reads_own_file(model, call) or from_package(model, first)):
                        continue  # a file this program wrote (a resumed run, its own cache) or ships
                    if keyword_arg(call, "pickle_module") is not None:
                        continue  # a custom unpickler on purpose: torch refuses it with weights_only=True
                    fix = None if weights_only is None else Fix.unsafe(  # **kwargs: no place to edit
                        "Pass weights_only=True", replace_node(self.ctx, weights_only.value, cst.Name("True")))
                    self._report_unless_written(call, weights_only_false_message(qualified, source), source, fix)
                elif weights_only is None and not has_star_kwargs(call):
                    unpinned.append([self.ctx.span(call).to_json(), qualified, source])
            elif qualified in PICKLE_LOADS or qualified == "numpy.load":
                self._check_pickle(call, qualified)
            elif qualified == "torch.hub.load":
                self._check_hub(call, hub_seen)
        published = sorted(key for key in written_paths(model) if isinstance(key, str) and has_own_name(key)) \
            if self._saves else []
        facts = {"unpinned": unpinned, "deferred": self._deferred, "written": published}
        if self.reports:  # a file the loader hands on, written where another file is handed it
            facts["handed_in"] = sorted({site.kind for site in handed_in_writes(model)}) if self._saves else []
            facts["names"] = built_names(model)
        if any(facts.values()):
            self.ctx.facts[self.code] = {key: value for key, value in facts.items() if value}

    def _report_unless_written(self, call: cst.Call, message: str, source: str | None, fix: Fix | None = None) -> None:
        """Report ``call``, or, when its path names a file with a name of its own
        (``out / f"{e}epoch.pth"``) and was not fetched, leave it to the project pass, which
        drops it if another file of the project writes that path (checkpoint averaging reading
        what the trainer saved)."""
        first, model = _first_argument(call), self.ctx.semantic.model
        shapes = [] if first is None or source in (URL, DOWNLOAD) else \
            sorted({key for p in read_paths(model, first) if has_own_name(key := path_key(path_shape(model, p)))})
        if shapes:
            reader = reader_kind(model.qualified_name(call.func))
            self._deferred.append([self.ctx.span(call).to_json(), message, shapes, reader, *trailing_json(fix)])
        else:
            self.report(call, message, fix=fix)

    # -- pickle, numpy, hub ------------------------------------------------------------
    def _check_pickle(self, call: cst.Call, qualified: str) -> None:
        if not call.args or call.args[0].keyword is not None:
            return
        model = self.ctx.semantic.model
        paths = read_paths(model, call.args[0].value)
        if reads_own_file(model, call) or dumps_what_it_loads(model, call, self.ctx.parent):
            return  # the program's own cache, or the file a function resumes from and saves itself
        if qualified.endswith(".loads") and not any(reads_file(model, p) for p in paths):
            return  # bytes held in memory (a loader's state), no file
        source = self._source(call)
        if qualified == "numpy.load":
            allow = keyword_arg(call, "allow_pickle")
            if allow is not None and isinstance(allow.value, cst.Name) and allow.value.value == "True":
                self._report_unless_written(call, numpy_message(source), source)
            return
        fetched = source in (URL, DOWNLOAD)
        if fetched or _looks_like_checkpoint([self._text(p) for p in paths], paths):
            self._report_unless_written(call, pickle_message(dotted_name(call.func) or qualified, source), source)

    def _check_hub(self, call: cst.Call, seen: set[tuple]) -> None:
        repo = keyword_arg(call, "repo_or_dir") or next((a for a in call.args if a.keyword is None and not a.star), None)
        if repo is None or isinstance(repo.value, (cst.SimpleString, cst.ConcatenatedString)):
            return
        source_kw = keyword_arg(call, "source")
        if source_kw is not None and not (isinstance(source_kw.value, cst.SimpleString)
                                          and source_kw.value.evaluated_value == "github"):
            return  # source="local" (a checked-out directory) or chosen at run time
        model = self.ctx.semantic.model
        decision = (model.scope_of(call).node, self._text(repo.value))
        if decision in seen or self._literal_default_only(repo.value):
            return  # reported once per function (a retry branch is the same decision)
        seen.add(decision)
        self.report(call, hub_message(self._text(repo.value), origin(model, repo.value)))

    def _literal_default_only(self, repo: cst.BaseExpression) -> bool:
        """``repo`` is a name every binding reaching it sets to a string literal, or a parameter
        with a string default, never rebound, for which no call in
        this file passes anything but a string literal (``def smart_hub_load(repo="ultralytics/yolov5")``);
        a call with ``*args``/``**kwargs`` may pass anything."""
        if not isinstance(repo, cst.Name):
            return False
        model = self.ctx.semantic.model
        bindings = model.reaching(repo.value, repo)
        if bindings and all(b.kind in ("assign", "ann") and isinstance(b.value, (cst.SimpleString, cst.ConcatenatedString))
                            for b in bindings):
            return True  # ``repo = "fepegar/highresnet"`` above: a fixed literal under a name
        if len(bindings) != 1 or bindings[0].kind != "param" or not isinstance(bindings[0].node, cst.Param):
            return False
        param = bindings[0].node
        if not isinstance(param.default, (cst.SimpleString, cst.ConcatenatedString)):
            return False
        function = self.ctx.enclosing_function(param)
        if function is None:
            return False
        for site in model.calls_to(function.name.value):
            passed = passed_argument(model, site, function, param.name.value)
            if any(a.star for a in site.node.args) or \
                    passed is not None and not isinstance(passed, (cst.SimpleString, cst.ConcatenatedString)):
                return False
        return True

    # -- what a load is given ----------------------------------------------------------------
    def _false_in_kwargs(self, call: cst.Call) -> bool:
        """``torch.load(p, **kw)`` where ``kw["weights_only"] = False`` or ``kw = {"weights_only":
        False}`` / ``dict(weights_only=False)`` reaches the call."""
        model = self.ctx.semantic.model
        for arg in call.args:
            if arg.star != "**" or not isinstance(arg.value, cst.Name):
                continue
            name = arg.value.value
            stores = [b.value for quote in "\"'" for b in model.reaching(f"{name}[{quote}weights_only{quote}]", call)]
            values = bound_values(model, arg.value)
            if any(v is not None and is_false_literal(v) for v in stores) or any(_sets_false(v) for v in values):
                return True
        return False

    # -- shared ------------------------------------------------------------------------
    def _source(self, call: cst.Call) -> str | None:
        first = _first_argument(call)
        if first is None:
            first = keyword_arg(call, "f") or keyword_arg(call, "file")
            first = first.value if first is not None else None
        return origin(self.ctx.semantic.model, first)

    def _text(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    # -- the project pass: torch.load without weights_only under an old pin -------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        facts = [(record, record.facts.get(cls.code) or {}) for record in project.records]
        written = {key for _, fact in facts for key in fact.get("written", ())}
        packages = None
        for record, fact in facts:
            for span, message, shapes, reader, *fix in fact.get("deferred", ()):
                if any(names_written(shape, written) for shape in shapes):
                    continue
                if reader is not None and any(f.get("handed_in") for _, f in facts):
                    packages = packages or Packages(project)
                    if _named_for_a_handed_in_write(record, shapes, reader, facts, packages):
                        continue
                yield Finding.at(cls, record.path, Span.from_json(span), message, fix=from_trailing(fix))
        pin = project.torch_pin
        if pin is None or not pin.allows_below(_SAFE_RELEASE):
            return
        for record, fact in facts:
            for span, function, source in fact.get("unpinned", ()):
                yield Finding.at(cls, record.path, Span.from_json(span),
                                 unpinned_message(function, source, pin.spec, pin.file))


def _named_for_a_handed_in_write(record, shapes: list[str], reader: str, facts: list, packages: Packages) -> bool:
    """The file name a load reads (one of ``shapes``) is one that a file of its package makes
    (``written_files.built_names``) while a file of its package writes, in a form ``reader``
    reads, to paths it is handed (``handed_in_writes``): the project's own file (a feature
    cache whose paths a Dataset makes and a DataLoader hands to the writer)."""
    names = [name for shape in shapes if specific(name := file_name(shape.removesuffix(" (verb aside)")))]
    near = [fact for other, fact in facts if packages.together(other.path, record.path)]
    return bool(names) and any(readable(reader, kind) for fact in near for kind in fact.get("handed_in", ())) and \
        any(names_match(name, built) for fact in near for built in fact.get("names", ()) for name in names)


def _first_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The first positional argument (the path or file a load or save is given)."""
    return next((a.value for a in call.args if a.keyword is None and not a.star), None)


def _sets_false(value: cst.BaseExpression | None) -> bool:
    """``{"weights_only": False, ...}`` or ``dict(weights_only=False, ...)``."""
    if isinstance(value, cst.Dict):
        return any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                   and e.key.evaluated_value == "weights_only" and is_false_literal(e.value) for e in value.elements)
    if isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
        found = keyword_arg(value, "weights_only")
        return found is not None and is_false_literal(found.value)
    return False


def _looks_like_checkpoint(texts: list[str], paths: list[cst.BaseExpression]) -> bool:
    """A file name written in the paths (``"vocab.pkl"`` in ``os.path.join(ckpt_dir,
    "vocab.pkl")``) decides alone; without one, any checkpoint word in the expressions."""
    names = [name for path in paths for name in _file_names(path)]
    return any(_CHECKPOINT.search(text) for text in (names or texts))


def _file_names(expr: cst.BaseExpression) -> list[str]:
    """The last components with an extension of the string parts written in ``expr``."""
    out = []
    for node in iter_nodes(expr):
        text = node.value if isinstance(node, cst.FormattedStringText) else \
            node.evaluated_value if isinstance(node, cst.SimpleString) else None
        if isinstance(text, str):
            name = text.replace("\\", "/").rsplit("/", 1)[-1]
            if _EXTENSION.search(name):
                out.append(name)
    return out
