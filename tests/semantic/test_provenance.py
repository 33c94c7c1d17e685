"""``semantic.provenance``: where a value comes from (a URL, a download, user input), and where a
path leads for loads and saves: what a file object reads, a path as a pattern, renames and
copies, bytes read from a file, in-memory buffers and files shipped with the code (TL016's
questions)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import provenance
from torchlint.tree import iter_nodes


def analyses(src: str, path: str = "m.py"):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def last_value(src: str):
    """The model of ``src`` and the value of its last statement (``value = <expr>``)."""
    ctx, model = analyses(src)
    (value,) = [n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Assign)
                and code(ctx, n.targets[0].target) == "value"]
    return ctx, model, value


def code(ctx, node) -> str:
    return ctx.module.code_for_node(node)


@pytest.mark.parametrize(("src", "expected"), [
    ("import argparse\nparser = argparse.ArgumentParser()\nargs = parser.parse_args()\nvalue = args.ckpt\n",
     provenance.USER_INPUT),
    ("import sys\nvalue = sys.argv[1]\n", provenance.USER_INPUT),
    ("value = 'https://example.com/w.pt'\n", provenance.URL),
    ("from huggingface_hub import hf_hub_download\np = hf_hub_download('a/b', 'w.pt')\nvalue = open(p, 'rb')\n",
     provenance.DOWNLOAD),
    ("value = 'weights/best.pt'\n", None),
    ("def f(path):\n    value = path\n", None),  # a parameter is not followed
])
def test_origin(src, expected):
    _, model, value = last_value(src)
    assert provenance.origin(model, value) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("value = open('a.pkl', 'rb')\n", ["'a.pkl'"]),
    ("import gzip\nvalue = gzip.open(p)\n", ["p"]),
    ("from pathlib import Path\nvalue = Path(p).open('rb')\n", ["Path(p)"]),
    ("f = open(p, 'rb')\nvalue = f\n", ["f", "p"]),  # a name: itself and what it was assigned
    ("value = data\n", ["data"]),
])
def test_read_paths(src, expected):
    ctx, model, value = last_value(src)
    assert [code(ctx, p) for p in provenance.read_paths(model, value)] == expected


def test_read_paths_through_with():
    ctx, model = analyses("with open(ckpt, 'rb') as f:\n    pickle.load(f)\n")
    f = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n.func) == "pickle.load")
    assert [code(ctx, p) for p in provenance.read_paths(model, f.args[0].value)] == ["f", "ckpt"]


@pytest.mark.parametrize(("src", "expected"), [
    ("value = 'out/best.pt'\n", "out/best.pt"),
    ("value = out / f'{epoch}epoch.pth'\n", "{out}/*epoch.pth"),
    ("import os\nvalue = os.path.join(root, 'ckpt', name + '.pt')\n", "{root}/ckpt/{name}.pt"),
    ("from pathlib import Path\nvalue = str(Path(root) / 'x.pkl')\n", "{root}/x.pkl"),
    ("value = 'a' 'b.pt'\n", "ab.pt"),
    ("value = b'raw.pt'\n", "b'raw.pt'"),  # bytes: as written
    ("value = args.resume\n", "{args.resume}"),
])
def test_path_shape(src, expected):
    _, model, value = last_value(src)
    assert provenance.path_shape(model, value) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("import os\nvalue = os.rename(tmp, path)\n", ("tmp", "path")),
    ("import shutil\nvalue = shutil.copy2(a, b)\n", ("a", "b")),
    ("from pathlib import Path\nvalue = Path(tmp).rename(path)\n", ("tmp", "path")),
    ("value = tmp.replace(path)\n", ("tmp", "path")),
    ("value = text.replace(a, b)\n", None),  # str.replace: two arguments
    ("value = os.remove(tmp)\n", None),
])
def test_moved(src, expected):
    ctx, model, value = last_value(src)
    found = provenance.moved(model, value)
    assert (tuple(code(ctx, e) for e in found) if found is not None else None) == expected


@pytest.mark.parametrize(("src", "expected"), [
    ("value = f.read()\n", True),
    ("value = path.read_bytes()\n", True),
    ("import io\nvalue = io.open(p)\n", True),
    ("import requests\nvalue = requests.get(url).content\n", True),  # fetched
    ("value = self.buffer\n", False),  # bytes held in memory
])
def test_reads_file(src, expected):
    _, model, value = last_value(src)
    assert provenance.reads_file(model, value) is expected


@pytest.mark.parametrize(("src", "expected"), [
    ("import io\nvalue = io.BytesIO(t.numpy())\n", True),
    ("import io\nbuf = io.BytesIO(data)\nvalue = buf\n", True),
    ("import io\nbuf = io.BytesIO(data) if c else open(p, 'rb')\nvalue = buf\n", False),
    ("def f(buf):\n    value = buf\n", False),  # a parameter: anything
    ("value = open(p, 'rb')\n", False),
])
def test_in_memory(src, expected):
    _, model, value = last_value(src)
    assert provenance.in_memory(model, value) is expected
    assert not provenance.in_memory(model, None)


@pytest.mark.parametrize(("src", "expected"), [
    ("import os\nvalue = os.path.join(os.path.dirname(__file__), 'w.pt')\n", True),
    ("import os\nhere = os.path.dirname(__file__)\nvalue = os.path.join(here, 'w.pt')\n", True),
    ("import importlib.resources\nvalue = importlib.resources.files('pkg') / 'w.pt'\n", True),
    ("import pkg_resources\nvalue = pkg_resources.resource_filename('pkg', 'w.pt')\n", True),
    ("value = args.weights\n", False),
])
def test_from_package(src, expected):
    _, model, value = last_value(src)
    assert provenance.from_package(model, value) is expected
    assert not provenance.from_package(model, None)


def test_bound_values():
    ctx, model = analyses("x = 1\nwith open(p) as f:\n    pass\ny: int = 2\nvalue = (x, f, y)\n")
    names = ctx.module.body[-1].body[0].value.elements
    assert [[code(ctx, v) for v in provenance.bound_values(model, e.value)] for e in names] == [
        ["1"], ["open(p)"], ["2"]]


@pytest.mark.parametrize(("src", "expected"), [
    ("def save(self, path):\n    value = path\n", "save"),  # a parameter: what the caller hands it
    ("def load(path, x=None):\n    def inner():\n        value = path\n", "load"),  # read in a nested function
    ("def f(path):\n    if path is None:\n        path = 'a.pt'\n    value = path\n", None),  # bound otherwise too
    ("def f():\n    path = 'a.pt'\n    value = path\n", None),  # a local variable
    ("path = 'a.pt'\nvalue = path\n", None),  # module level
    ("value = path\n", None),  # bound nowhere
])
def test_parameter_of(src, expected):
    ctx, model, value = last_value(src)
    function = provenance.parameter_of(model, value)
    assert (function.name.value if function is not None else None) == expected
