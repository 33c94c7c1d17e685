"""TL016 unsafe-checkpoint-load: a checkpoint or pickle load that can run code from the file.

The walk notes calls whose last name is ``load``/``loads``/``Unpickler``/... (or an imported
name: an alias); ``finish`` resolves
them with the semantic model (imports, shadowing) and reports:

* ``torch.load``/``torch.serialization.load`` (and ``torch.hub.load_state_dict_from_url``/
  ``torch.utils.model_zoo.load_url``, which torch.load what they download) with
  ``weights_only=False`` (``0``) as written, except of an ``io.BytesIO`` built in the file from
  nothing fetched (objects sent between ranks);
* ``torch.load`` with no ``weights_only`` (and no ``**kwargs``): only in a project whose
  torch pin (``torchlint.pins``, read once per run) excludes 2.6 and later, where the default
  is still ``False``. The file cannot know the pin, so these are facts the project pass
  reports (``check_project``, with the pin in the message);
* ``pickle``/``_pickle``/``dill``/``cloudpickle``/``joblib`` loads (and ``pickle.Unpickler``)
  of a checkpoint-looking path (``.pt``/``.pth``/``.ckpt``, or ``checkpoint``, ``ckpt``,
  ``pretrained``, ``state_dict``, ``resume`` in the file name written in the path, else in the
  path's expression or the values it was assigned) or
  of something fetched from a URL or a download helper; left alone: other pickles (data and
  caches) and a path the same file writes (``open(P, "wb")``, ``joblib.dump(x, P)``,
  ``np.save(P, ...)``): the program's own cache;
* ``numpy.load(..., allow_pickle=True)``, except of a path the same file writes;
* ``torch.hub.load`` whose repository is not a string literal (and ``source`` is not
  ``"local"``).

A load from a URL, a download helper or user input (``semantic.provenance``) gets the
message variant that says so: that is the rule's higher severity (one severity per rule, as
in ruff). Test files are skipped (``skip-tests``): tests load
what they wrote.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import libcst as cst

from torchlint.context import dotted_name, iter_nodes
from torchlint.finding import Finding, Severity, Span
from torchlint.fixes import UNSAFE, Fix, replace_node
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.provenance import DOWNLOAD, URL, bound_values, origin
from torchlint.torch_api import has_star_kwargs, is_false_literal, keyword_arg

_TORCH_LOADS = {"torch.load", "torch.serialization.load"}
# torch.load of what they download: the URL is their first argument
_URL_LOADS = {"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"}
_PICKLE_LOADS = {
    f"{module}.{function}"
    for module in ("pickle", "_pickle", "cPickle", "dill", "cloudpickle")
    for function in ("load", "loads", "Unpickler")
} | {"joblib.load", "sklearn.externals.joblib.load"}
_WRITES = {"joblib.dump": 1, "numpy.save": 0, "numpy.savez": 0, "numpy.savez_compressed": 0}
_OPENERS = {"open", "io.open", "gzip.open", "bz2.open", "lzma.open"}
_CHECKPOINT = re.compile(r"\.(pt|pth|ckpt)\b|checkpoint|ckpt|pretrained|state_dict|resume", re.IGNORECASE)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_SAFE_RELEASE = (2, 6)
_LAST_NAMES = ("load", "loads", "Unpickler", "load_state_dict_from_url", "load_url")

_FIX_TORCH = "pass weights_only=True (allow your own classes with torch.serialization.add_safe_globals)"


def _where(source: str | None) -> str:
    return {URL: " of a file from a URL", DOWNLOAD: " of a downloaded file"}.get(source or "", " of a path from user input" if source else "")


def weights_only_false_message(function: str, source: str | None) -> str:
    return (f"`{function}(..., weights_only=False)`{_where(source)} unpickles arbitrary objects, so a crafted "
            f"checkpoint runs code when loaded; {_FIX_TORCH}, or keep False only for files this program wrote")


def unpinned_message(function: str, source: str | None, pin: str, file: str) -> str:
    return (f"`{function}` without weights_only{_where(source)} unpickles arbitrary objects with the torch this "
            f"project pins (`{pin}` in {file}; the default became weights_only=True in 2.6), so a crafted "
            f"checkpoint runs code when loaded; {_FIX_TORCH}")


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
                                         "*_test.py, conftest.py): tests load the files they wrote"),
    }
    skips_test_files = True
    requires_text = ("load", "Unpickler")
    fixable = (UNSAFE,)  # weights_only=False -> True: a checkpoint holding more than tensors stops loading

    VALID: list[Valid | str] = [
        # No pin seen (or torch >= 2.6 pinned): torch.load defaults to weights_only=True.
        """
        import torch
        state = torch.load("model.pt", map_location="cpu")
        """,
        # The fix, with a memory-mapped load as well.
        """
        import torch
        state = torch.load("model.pt", weights_only=True)
        big = torch.load("llama.pt", mmap=True, weights_only=True)
        """,
        # weights_only passed through from the caller (Lightning's cloud_io).
        """
        import torch
        def load(path, weights_only=None):
            return torch.load(path, map_location="cpu", weights_only=weights_only)
        def load_all(path, **kwargs):
            return torch.load(path, **kwargs)
        """,
        # A pickle that is no checkpoint: data the program reads.
        """
        import pickle
        with open("data/vocab.pkl", "rb") as f:
            vocab = pickle.load(f)
        """,
        # A data file kept in a checkpoint directory: the file name decides.
        """
        import os
        import pickle
        def load_vocab(checkpoint_dir):
            with open(os.path.join(checkpoint_dir, "vocab.pkl"), "rb") as f:
                return pickle.load(f)
        """,
        # A cache the same file writes: the program's own objects.
        """
        import pickle
        cache_file = "checkpoint_index.pkl"
        def save(index):
            with open(cache_file, "wb") as f:
                pickle.dump(index, f)
        def restore():
            with open(cache_file, "rb") as f:
                return pickle.load(f)
        """,
        # numpy without object arrays, memory-mapped or not.
        """
        import numpy as np
        features = np.load("features.npy")
        table = np.load("table.npy", mmap_mode="r")
        frozen = np.load("weights.npz", allow_pickle=False)
        """,
        # numpy objects the same file saved.
        """
        import numpy as np
        def save(stats):
            np.save("stats_ckpt.npy", stats)
        def restore():
            return np.load("stats_ckpt.npy", allow_pickle=True).item()
        """,
        # A fixed hub repository, and a checked-out one.
        """
        import torch
        model = torch.hub.load("pytorch/vision:v0.10.0", "resnet18", weights="DEFAULT")
        def local(repo_dir):
            return torch.hub.load(repo_dir, "custom", source="local")
        """,
        # Objects broadcast between ranks: bytes in memory, no file.
        """
        import io
        import torch
        import torch.distributed as dist
        def broadcast_object(obj, src, device):
            data = torch.empty(16, dtype=torch.uint8)
            dist.broadcast(data, src=src)
            buffer = io.BytesIO(data.cpu().numpy())
            return torch.load(buffer, map_location=device, weights_only=False)
        """,
        # Bytes gathered from other ranks: no file.
        """
        import pickle
        def all_gather_objects(buffers):
            return [pickle.loads(buffer.numpy().tobytes()) for buffer in buffers]
        """,
        # Test files load what they wrote (skip-tests).
        Valid(
            """
            import torch
            def test_roundtrip(tmp_path):
                torch.save({"step": 1}, tmp_path / "ckpt.pt")
                assert torch.load(tmp_path / "ckpt.pt", weights_only=False)["step"] == 1
            """,
            path="tests/test_checkpoint.py",
        ),
        # A project's own load function, not torch's.
        """
        from mylib.io import load
        state = load("checkpoint.pt", weights_only=False)
        """,
    ]
    INVALID: list[Invalid] = [
        # Explicitly unsafe.
        Invalid(
            """
            import torch
            state = torch.load("checkpoint.pth", map_location="cpu", weights_only=False)
            """,
            lines=(3,),
            messages=('`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
                      'code when loaded; pass weights_only=True (allow your own classes with '
                      'torch.serialization.add_safe_globals), or keep False only for files this program wrote',),
            fixed="""
            import torch
            state = torch.load("checkpoint.pth", map_location="cpu", weights_only=True)
            """,
        ),
        # A path from the command line: the message says so.
        Invalid(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--resume")
            args = parser.parse_args()
            state = torch.load(args.resume, weights_only=False)
            """,
            lines=(7,),
            messages=('`torch.load(..., weights_only=False)` of a path from user input unpickles arbitrary objects, so a '
                      'crafted checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
                      'torch.serialization.add_safe_globals), or keep False only for files this program wrote',),
            fixed="""
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--resume")
            args = parser.parse_args()
            state = torch.load(args.resume, weights_only=True)
            """,
        ),
        # Bytes fetched from a URL.
        Invalid(
            """
            import io
            import requests
            import torch
            response = requests.get("https://example.com/model.pt")
            state = torch.load(io.BytesIO(response.content), weights_only=0)
            """,
            lines=(6,),
            messages=('`torch.load(..., weights_only=False)` of a file from a URL unpickles arbitrary objects, so a '
                      'crafted checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
                      'torch.serialization.add_safe_globals), or keep False only for files this program wrote',),
            fixed="""
            import io
            import requests
            import torch
            response = requests.get("https://example.com/model.pt")
            state = torch.load(io.BytesIO(response.content), weights_only=True)
            """,
        ),
        # torch.load of a download, through torch.hub.
        Invalid(
            """
            from torch.hub import load_state_dict_from_url
            def pretrained(url):
                return load_state_dict_from_url(url, map_location="cpu", weights_only=False)
            """,
            lines=(4,),
            messages=('`torch.hub.load_state_dict_from_url(..., weights_only=False)` of a file from a URL unpickles '
                      'arbitrary objects, so a crafted checkpoint runs code when loaded; pass weights_only=True (allow '
                      'your own classes with torch.serialization.add_safe_globals), or keep False only for files this '
                      'program wrote',),
            fixed="""
            from torch.hub import load_state_dict_from_url
            def pretrained(url):
                return load_state_dict_from_url(url, map_location="cpu", weights_only=True)
            """,
        ),
        # pickle of a checkpoint.
        Invalid(
            """
            import pickle
            with open("runs/checkpoint_best.pkl", "rb") as f:
                state = pickle.load(f)
            """,
            lines=(4,),
            messages=('`pickle.load` of a checkpoint runs any code the file holds when it is loaded; store tensors '
                      '(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)',),
        ),
        # joblib and dill, the path named in a variable.
        Invalid(
            """
            import dill
            import joblib
            def restore(run_dir):
                ckpt_path = f"{run_dir}/ckpt.joblib"
                model = joblib.load(ckpt_path)
                optimizer = dill.load(open(run_dir + "/resume_optimizer.dill", "rb"))
                return model, optimizer
            """,
            lines=(6, 7),
            messages=('`joblib.load` of a checkpoint runs any code the file holds when it is loaded; store tensors '
                      '(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)',
                      '`dill.load` of a checkpoint runs any code the file holds when it is loaded; store tensors '
                      '(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)',),
        ),
        # A pickle downloaded from the Hub.
        Invalid(
            """
            import pickle
            from huggingface_hub import hf_hub_download
            path = hf_hub_download("user/repo", "model.pkl")
            with open(path, "rb") as f:
                model = pickle.load(f)
            """,
            lines=(6,),
            messages=('`pickle.load` of a downloaded file runs any code the file holds when it is loaded; store tensors '
                      '(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)',),
        ),
        # numpy object arrays.
        Invalid(
            """
            import numpy as np
            def read(path):
                return np.load(path, allow_pickle=True)
            """,
            lines=(4,),
            messages=('`np.load(..., allow_pickle=True)` unpickles object arrays, so a crafted .npy/.npz runs code when '
                      'loaded; keep allow_pickle=False and save plain arrays (np.savez) instead of objects',),
        ),
        # A hub repository chosen on the command line.
        Invalid(
            """
            import sys
            import torch
            model = torch.hub.load(sys.argv[1], "resnet50")
            """,
            lines=(4,),
            messages=('`torch.hub.load` of a repository chosen at run time (`sys.argv[1]`, user input) imports and runs '
                      "that repository's hubconf.py; load a fixed literal 'owner/repo:tag', or a checked-out copy with "
                      "source='local'",),
        ),
        # A hub repository passed in.
        Invalid(
            """
            import torch
            def build(repo, name):
                return torch.hub.load(repo, name, trust_repo=True)
            """,
            lines=(4,),
            messages=("`torch.hub.load` of a repository chosen at run time (`repo`) imports and runs that repository's "
                      "hubconf.py; load a fixed literal 'owner/repo:tag', or a checked-out copy with source='local'",),
        ),
        # Imported under another name.
        Invalid(
            """
            from torch.serialization import load as load_checkpoint
            state = load_checkpoint("model.ckpt", weights_only=False)
            """,
            lines=(3,),
            messages=('`torch.serialization.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
                      'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
                      'torch.serialization.add_safe_globals), or keep False only for files this program wrote',),
            fixed="""
            from torch.serialization import load as load_checkpoint
            state = load_checkpoint("model.ckpt", weights_only=True)
            """,
        ),
    ]

    def __init__(self, ctx, options: dict[str, Any]):
        super().__init__(ctx, options)
        self._calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _LAST_NAMES or \
                isinstance(func, cst.Name) and (func.value in _LAST_NAMES or self.ctx.is_imported(func)):
            self._calls.append(node)  # ``from torch.serialization import load as load_checkpoint`` too

    def finish(self) -> None:
        if not self._calls:
            return
        model = self.ctx.semantic.model
        written: set[str] | None = None
        unpinned = []
        for call in self._calls:
            qualified = model.qualified_name(call.func)
            if qualified in _TORCH_LOADS or qualified in _URL_LOADS:
                source = URL if qualified in _URL_LOADS else self._source(call)
                weights_only = keyword_arg(call, "weights_only")
                if weights_only is not None and is_false_literal(weights_only.value):
                    if source is None and self._in_memory(call):
                        continue  # bytes the program holds (sent between ranks), no file
                    self.report(call, weights_only_false_message(qualified, source),
                                fix=Fix.unsafe("Pass weights_only=True",
                                               replace_node(self.ctx, weights_only.value, cst.Name("True"))))
                elif weights_only is None and not has_star_kwargs(call):
                    unpinned.append([self.ctx.span(call).to_json(), qualified, source])
            elif qualified in _PICKLE_LOADS or qualified == "numpy.load":
                if written is None:
                    written = self._written_paths()
                self._check_pickle(call, qualified, written)
            elif qualified == "torch.hub.load":
                self._check_hub(call)
        if unpinned:
            self.ctx.facts[self.code] = unpinned

    # -- pickle, numpy, hub ------------------------------------------------------------
    def _check_pickle(self, call: cst.Call, qualified: str, written: set[str]) -> None:
        if not call.args or call.args[0].keyword is not None:
            return
        paths = self._paths(call.args[0].value)
        if any(self._text(p) in written for p in paths):
            return  # the program's own cache
        source = self._source(call)
        if qualified == "numpy.load":
            allow = keyword_arg(call, "allow_pickle")
            if allow is not None and isinstance(allow.value, cst.Name) and allow.value.value == "True":
                self.report(call, numpy_message(source))
            return
        fetched = source in (URL, DOWNLOAD)
        if fetched or _looks_like_checkpoint([self._text(p) for p in paths], paths):
            self.report(call, pickle_message(dotted_name(call.func) or qualified, source))

    def _check_hub(self, call: cst.Call) -> None:
        repo = keyword_arg(call, "repo_or_dir") or next((a for a in call.args if a.keyword is None and not a.star), None)
        if repo is None or isinstance(repo.value, (cst.SimpleString, cst.ConcatenatedString)):
            return
        source_kw = keyword_arg(call, "source")
        if source_kw is not None and not (isinstance(source_kw.value, cst.SimpleString)
                                          and source_kw.value.evaluated_value == "github"):
            return  # source="local" (a checked-out directory) or chosen at run time
        source = origin(self.ctx.semantic.model, repo.value)
        self.report(call, hub_message(self._text(repo.value), source))

    def _paths(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
        """The expressions naming what ``expr`` reads: ``open(P)`` gives P, a name the values
        it was assigned (``with open(P) as f``), anything else itself."""
        if depth > 3:
            return [expr]
        model = self.ctx.semantic.model
        if isinstance(expr, cst.Call):
            if expr.args and model.qualified_name(expr.func) in _OPENERS:
                return self._paths(expr.args[0].value, depth + 1)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "open":
                return self._paths(expr.func.value, depth + 1)  # Path(P).open("rb")
        if isinstance(expr, cst.Name):
            values = bound_values(model, expr)
            return [expr, *(p for v in values for p in self._paths(v, depth + 1))]
        return [expr]

    def _in_memory(self, call: cst.Call) -> bool:
        """The first argument is an ``io.BytesIO`` built here (``io.BytesIO(t.numpy())``,
        directly or through a name): bytes in memory, not a file."""
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        if first is None:
            return False
        model = self.ctx.semantic.model
        candidates = bound_values(model, first) if isinstance(first, cst.Name) else [first]
        return bool(candidates) and all(isinstance(c, cst.Call) and model.qualified_name(c.func) == "io.BytesIO"
                                        for c in candidates)

    def _written_paths(self) -> set[str]:
        """The path expressions (as written) this file writes: ``open(P, "w..."/"a...")``,
        ``joblib.dump(x, P)``, ``np.save(P, ...)``."""
        model = self.ctx.semantic.model
        out = set()
        for site in model.calls:
            call = site.node
            qualified = model.qualified_name(call.func)
            if qualified in _WRITES and len(call.args) > _WRITES[qualified]:
                out.add(self._text(call.args[_WRITES[qualified]].value))
            elif qualified in _OPENERS and call.args and _writes(call):
                out.add(self._text(call.args[0].value))
        return out

    # -- shared ------------------------------------------------------------------------
    def _source(self, call: cst.Call) -> str | None:
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        if first is None:
            first = keyword_arg(call, "f") or keyword_arg(call, "file")
            first = first.value if first is not None else None
        return origin(self.ctx.semantic.model, first)

    def _text(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    # -- the project pass: torch.load without weights_only under an old pin -------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        pin = project.torch_pin
        if pin is None or not pin.below(_SAFE_RELEASE):
            return
        for record in project.records:
            for span, function, source in record.facts.get(cls.code, ()):
                yield Finding.at(cls, record.path, Span.from_json(span),
                                 unpinned_message(function, source, pin.spec, pin.file))


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


def _writes(call: cst.Call) -> bool:
    """``open(P, "wb")``, ``open(P, mode="a")``: the file is written."""
    mode = keyword_arg(call, "mode")
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1]
    return mode is not None and isinstance(mode.value, cst.SimpleString) and \
        any(c in mode.value.evaluated_value for c in "wax")
