"""``semantic.written_files``: what a file writes, which of its writes go to paths it is handed
(a Dataset's items through a loader, a helper's parameter), and which file names it makes for
others (TL016's cross-file questions); ``provenance.formatted_text`` for ``str.format``/``%``."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable
from torchlint.semantic import written_files as wf
from torchlint.semantic.provenance import formatted_text, path_shape
from torchlint.tree import iter_nodes


def analyses(src: str):
    src = textwrap.dedent(src)
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic.model


def code(ctx, node) -> str:
    return ctx.module.code_for_node(node)


# -- str.format and % as patterns ----------------------------------------------------------

@pytest.mark.parametrize(("expr", "pattern"), [
    ("'{}-encoding.pt'.format(kind)", "*-encoding.pt"),
    ("'{0}RN{1}{2}-encoding.pt'.format(a, b, c)", "*RN**-encoding.pt"),
    ("'{name}_{epoch:03d}.pth'.format(name=n, epoch=e)", "*_*.pth"),
    ("'%s_%03d.pkl' % (name, epoch)", "*_*.pkl"),
    ("'100%% %s.pkl' % name", "100% *.pkl"),
    ("name.format(x)", None),  # not a string written here
    ("'a' + b", None),
])
def test_formatted_text(expr, pattern):
    assert formatted_text(cst.parse_expression(expr)) == pattern


def test_path_shape_reads_format_and_percent():
    ctx, model = analyses("""
        import os
        a = os.path.join(directory, '{}-encoding.pt'.format(kind))
        b = out + '/%s.pth' % name
        """)
    values = [n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Assign)]
    assert [path_shape(model, v) for v in values] == ["{directory}/*-encoding.pt", "{out}/*.pth"]


# -- writes --------------------------------------------------------------------------------

def test_write_sites_and_kinds():
    ctx, model = analyses("""
        import pickle, torch, joblib
        import numpy as np
        torch.save(state, "model.pt")
        pickle.dump(obj, open(path, "wb"))
        joblib.dump(obj, "m.joblib")
        np.save("arr", x)
        with open(log, "a") as f:
            f.write("x")
        with open(src, "rb") as f:
            data = f.read()
        """)
    sites = [(code(ctx, s.path), s.suffix, s.kind) for s in wf.write_sites(model)]
    assert sites == [('"model.pt"', "", wf.TORCH), ('open(path, "wb")', "", wf.PICKLE), ("path", "", wf.BYTES),
                     ('"m.joblib"', "", wf.PICKLE), ('"arr"', ".npy", wf.NUMPY), ("log", "", wf.BYTES)]


def test_readable():
    assert wf.readable(wf.PICKLE, wf.PICKLE) and wf.readable(wf.PICKLE, wf.BYTES) and wf.readable(wf.TORCH, wf.BYTES)
    assert not wf.readable(wf.TORCH, wf.PICKLE) and not wf.readable(wf.PICKLE, wf.TORCH)
    assert (wf.reader_kind("torch.load"), wf.reader_kind("cPickle.load"), wf.reader_kind("numpy.load"),
            wf.reader_kind("json.load")) == (wf.TORCH, wf.PICKLE, wf.NUMPY, None)


# -- paths handed in -----------------------------------------------------------------------

def handed(src: str) -> list[str]:
    ctx, model = analyses(src)
    return [code(ctx, s.call) for s in wf.handed_in_writes(model)]


def test_a_loader_s_paths_are_handed_in():
    """cs231n-sl-classification's utils/pickle_encoding.py: each path a DataLoader gives."""
    assert handed("""
        import pickle
        def pickle_encoding(model, dataloader):
            for batch_idx, (X, video_path) in enumerate(dataloader):
                video_path = video_path[0]
                pickle.dump(model(X), open(video_path, 'wb'))
                del X, video_path
        """) == ["pickle.dump(model(X), open(video_path, 'wb'))", "open(video_path, 'wb')"]


@pytest.mark.parametrize("src", [
    # a helper's parameter
    "import torch\ndef save(state, path):\n    torch.save(state, path)\n",
    # a dataset item's field, joined under a directory parameter
    "import torch, os\ndef dump(items, out):\n    for item in items:\n"
    "        torch.save(item['x'], os.path.join(out, item['name']))\n",
    # an unpacked batch, a file object opened on it
    "import pickle\ndef f(batch):\n    x, path = batch\n    with open(path, 'wb') as fh:\n        pickle.dump(x, fh)\n",
    # paths zipped with their arrays
    "import numpy as np\ndef f(arrays, paths):\n    for a, p in zip(arrays, paths):\n        np.save(p, a)\n",
])
def test_handed_in(src):
    assert handed(src)


@pytest.mark.parametrize("src", [
    # the file names its file: the same file's analysis decides (``written``)
    "import torch\ndef save(state, out):\n    torch.save(state, out + '/checkpoint.pth')\n",
    "import torch\nfor epoch in range(3):\n    torch.save(state, f'model_{epoch}.pt')\n",
    # the object's own attribute, a module constant, a call's result: not handed in
    "import torch\nclass T:\n    def save(self):\n        torch.save(self.state, self.path)\n",
    "import torch\nPATH = 'w.pt'\ntorch.save(state, PATH)\n",
    "import torch\ntorch.save(state, make_path())\n",
    # reading is no write
    "import pickle\ndef f(path):\n    return pickle.load(open(path, 'rb'))\n",
])
def test_not_handed_in(src):
    assert handed(src) == []


def test_from_elsewhere_ignores_a_loop_s_own_rebinding():
    ctx, model = analyses("""
        def f(paths):
            for p in paths:
                p = p.strip()
                p = p[0]
                use(p)
        def g():
            p = "x"
            p = p[0]
            use(p)
        """)
    uses = [n.args[0].value for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and code(ctx, n.func) == "use"]
    assert [wf.from_elsewhere(model, u) for u in uses] == [False, False]  # ``p.strip()``: a call's result
    ctx, model = analyses("""
        def f(paths):
            for p in paths:
                p = p[0]
                use(p)
        """)
    (use,) = [n.args[0].value for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)]
    assert wf.from_elsewhere(model, use)


# -- names made for others -----------------------------------------------------------------

def names(src: str) -> list[str]:
    return wf.built_names(analyses(src)[1])


def test_a_dataset_s_file_name_is_built():
    """cs231n-sl-classification's utils/gesture_frame_dataset_pickle.py."""
    assert names("""
        import os
        class GestureFrameDatasetPickle(Dataset):
            def __init__(self, data_type, layers):
                self._encoding_filename = '{0}RN{1}{2}-encoding.pt'.format('T', layers, data_type)
            def __getitem__(self, idx):
                return self.frames(idx), os.path.join(self.data[idx], self._encoding_filename)
        """) == ["*RN**-encoding.pt"]


def test_names_read_fetched_or_told_are_not_built():
    assert names('''
        """Writes features.pkl next to each video."""
        import os, pickle, torch, subprocess
        from urllib.request import urlretrieve
        def load(d):
            path = os.path.join(d, "cached_features.pkl")
            with open(path, "rb") as f:
                return pickle.load(f)
        state = torch.load(f"{root}/pretrained_resnet.pth", weights_only=False)
        urlretrieve(URL, "downloaded_weights.pth")
        subprocess.run(["wget", URL, "-O", "glove_vectors.pkl"])
        print("saved to model_best.pth")
        link = "https://example.com/release/model_final.pth"
        names = [f"{split}_encoding.pt" for split in splits]
        ''') == ["*_encoding.pt"]


def test_names_the_file_writes_itself_are_not_built():
    """A name in the path of the file's own write (directly, or through the name it is bound
    to) is compared by its whole path as a written file; a name handed to a function that
    writes it stays a name made for another writer (flair's trainer hands
    ``base_path / "checkpoint.pt"`` to ``save_checkpoint``)."""
    assert names("""
        import os, pickle, torch
        def save_rng(output_dir):
            torch.save(torch.random.get_rng_state(), os.path.join(output_dir, "rng_state.pth"))
        def save_vocab(d, vocab):
            path = os.path.join(d, "vocab_cache.pkl")
            with open(path, "wb") as f:
                pickle.dump(vocab, f)
        def train(model, base_path):
            model.save_checkpoint(base_path / "checkpoint.pt")
        """) == ["checkpoint.pt"]


def test_a_name_needs_an_extension_and_three_characters_of_its_own():
    assert names("a = f'{x}.pt'\nb = 'ab.pt'\nc = 'readme'\nd = f'{x}_emb.npy'\n") == ["*_emb.npy"]


@pytest.mark.parametrize(("a", "b", "match"), [
    ("*-encoding.pt", "*RN**-encoding.pt", True),
    ("model_best.pth", "model_best.pth", True),
    ("*_best.pth", "resnet_best.pth", True),
    ("*-encoding.pt", "*-encoding.pkl", False),
    ("*.pt", "*.pt", False),  # no name of its own
    ("resnet50.pth", "*RN**-encoding.pt", False),
])
def test_names_match(a, b, match):
    assert wf.names_match(a, b) is match
    assert wf.names_match(b, a) is match


def test_file_name():
    assert wf.file_name("{out}/*epoch.pth") == "*epoch.pth"
    assert wf.file_name("{os.path.join(a, b)}/{prefix}_model.pt") == "*_model.pt"


@pytest.mark.parametrize(("src", "expected"), [
    # the function writes back, with the same writer, what the load gave it
    ("import joblib\ndef f(resume, out):\n    s = joblib.load(resume)\n    joblib.dump(s, out)\n", True),
    ("import joblib\ndef f(resume, out, fresh):\n    if resume:\n        s = joblib.load(resume)\n"
     "    else:\n        s = fresh()\n    joblib.dump(s, out)\n", True),
    # another value written, another format, another function, the name bound anew
    ("import joblib\ndef f(resume, out):\n    s = joblib.load(resume)\n    joblib.dump(s.summary(), out)\n", False),
    ("import joblib, torch\ndef f(resume, out):\n    s = joblib.load(resume)\n    torch.save(s, out)\n", False),
    ("import joblib\ndef f(resume):\n    s = joblib.load(resume)\n    return s\n"
     "def g(s, out):\n    joblib.dump(s, out)\n", False),
    ("import joblib\ndef f(resume, out, make):\n    s = joblib.load(resume)\n    s = make(s)\n    joblib.dump(s, out)\n",
     False),
])
def test_dumps_what_it_loads(src, expected):
    ctx, model = analyses(src)
    load = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
                and model.qualified_name(n.func) == "joblib.load")
    assert wf.dumps_what_it_loads(model, load, ctx.parent) is expected


# -- the paths a file writes, and loads of them ----------------------------------------------

def _load(ctx):
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call)
                and code(ctx, n.func) in ("torch.load", "pickle.load"))


def test_written_paths_through_helpers_and_renames():
    ctx, model = analyses("""
        import os, torch, numpy as np
        def save(state, path):
            torch.save(state, path)
        save(s, out / "best.pth")
        np.save("feats", x)
        torch.save(m, tmp)
        os.rename(tmp, final_path)
        with open(args.dump_emissions, "wb") as f:
            f.write(b)
    """)
    keys = wf.written_paths(model)
    assert {"{out}/best.pth", "feats", "feats.npy", "{tmp}", "{final_path}", "{args.emissions} (verb aside)"} <= keys
    assert [key[1] for key in keys if isinstance(key, tuple)] == ["{path}"]  # save's own parameter
    assert wf.written_paths(model) is keys  # memoised on the model


@pytest.mark.parametrize(("src", "own"), [
    # the path as written
    ("torch.save(sd, 'ckpt.pth')\nsd = torch.load('ckpt.pth', weights_only=False)", True),
    # a parameter every same-file call fills with the written path
    ("def resume(checkpoint):\n    return torch.load(checkpoint, weights_only=False)\n"
     "torch.save(sd, out / 'last.pth')\nresume(out / 'last.pth')", True),
    # one call passes something else
    ("def resume(checkpoint):\n    return torch.load(checkpoint, weights_only=False)\n"
     "torch.save(sd, out / 'last.pth')\nresume(out / 'last.pth')\nresume(args.init)", False),
    # a load/dump pair of options names one file
    ("pickle.dump(e, open(args.dump_emissions, 'wb'))\ne = pickle.load(open(args.load_emissions, 'rb'))", True),
    # a file written nowhere here
    ("torch.save(sd, 'a.pth')\nsd = torch.load('b.pth', weights_only=False)", False),
    # a pattern with no name of its own names no particular file
    ("torch.save(sd, f'{e}.pth')\nsd = torch.load(f'{k}.pth', weights_only=False)", False),
    # two functions' parameters of one name are two files (save(self, path) / load(cls, path))
    ("class P:\n    def save(self, path):\n        torch.save(self.sd, path)\n"
     "    @classmethod\n    def load(cls, path):\n        return torch.load(path, weights_only=False)", False),
    # a function that saves and reloads its own parameter
    ("def roundtrip(sd, path):\n    torch.save(sd, path)\n    return torch.load(path, weights_only=False)", True),
])
def test_reads_own_file(src, own):
    ctx, model = analyses("import pickle, torch\n" + src)
    assert wf.reads_own_file(model, _load(ctx)) is own


def test_names_written():
    assert wf.names_written("{out}/*epoch.pth", {"{out}/*epoch.pth"})
    assert wf.names_written("cache/*_dataset", {"cache/train_dataset"})
    assert not wf.names_written("*.pkl", {"*.pkl"})  # no file name of its own
    assert not wf.names_written("{path}", {(1, "{path}")})  # a parameter's key is its function's

