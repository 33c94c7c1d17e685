"""TL016's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl016_unsafe_checkpoint_load import pickle_message, weights_only_false_message
from torchlint.rule import Invalid, Valid


VALID = [
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
    # An object array the same script dumps with a sibling option (--dump-x / --load-x).
    """
        import argparse
        import numpy as np
        parser = argparse.ArgumentParser()
        parser.add_argument("--dump-emissions")
        parser.add_argument("--load-emissions")
        args = parser.parse_args()
        if args.load_emissions:
            emissions = np.load(args.load_emissions, allow_pickle=True)
        else:
            emissions = np.empty(2, dtype=object)
            if args.dump_emissions:
                np.save(args.dump_emissions, emissions)
        """,
    # The label cache a same-file helper writes with np.save when given the same path (yolov5).
    """
        from pathlib import Path
        import numpy as np
        class Labels:
            def cache_labels(self, path=Path("./labels.cache")):
                x = {"version": 0.6}
                np.save(path, x)
                return x
            def load(self, label_dir):
                cache_path = Path(label_dir).with_suffix(".cache")
                try:
                    return np.load(cache_path, allow_pickle=True).item()
                except Exception:
                    return self.cache_labels(cache_path)
        """,
    # pickle.loads of bytes held in a loader's state dict: no file (torchtitan).
    """
        import pickle
        class StatefulLoader:
            def state_dict(self):
                return {"rank0": pickle.dumps({"position": 0})}
            def load_state_dict(self, state_dict):
                self.position = pickle.loads(state_dict["rank0"])["position"]
        """,
    # The program's own files, written through a temporary name: a context manager that
    # renames on exit (demucs' solver), a save then os.rename (so3krates' cache).
    """
        import os
        import torch
        from .utils import write_and_rename
        class Solver:
            def save(self, state):
                with write_and_rename(self.checkpoint_file) as tmp:
                    torch.save(state, tmp)
            def resume(self):
                return torch.load(self.checkpoint_file, weights_only=False)
        class Cache:
            def store(self, idx, data):
                path = os.path.join(self.cache_dir, f"{idx:08d}.pt")
                tmp_path = path + ".tmp"
                torch.save(data, tmp_path)
                os.rename(tmp_path, path)
            def load(self, idx):
                path = os.path.join(self.cache_dir, f"{idx:08d}.pt")
                return torch.load(path, weights_only=False)
        """,
    # Files shipped inside the package (as trusted as its code), and a custom unpickler that
    # renames moved classes (torch refuses pickle_module with weights_only=True).
    """
        import os
        import sys
        from importlib import resources
        import torch
        def load_pretrained(device="cpu"):
            with resources.path("so3krates_torch.pretrained", "so3lr.model") as model_path:
                return torch.load(model_path, map_location=device, weights_only=False)
        def load_asset():
            here = os.path.dirname(os.path.abspath(__file__))
            return torch.load(os.path.join(here, "assets", "lin.pth"), weights_only=False)
        def convert(path):
            return torch.load(path, pickle_module=sys.modules[__name__], weights_only=False)
        """,
    # A fixed repository under a name (highresnet's inference script).
    """
        import torch
        def load_model(pretrained):
            repo = "fepegar/highresnet"
            return torch.hub.load(repo, "highres3dnet", pretrained=pretrained, trust_repo=True)
        """,
    # A repository parameter with a literal default that no call passes (yolov5 smart_hub_load).
    """
        import torch
        def smart_hub_load(repo="ultralytics/yolov5", model="yolov5s", **kwargs):
            try:
                return torch.hub.load(repo, model, **kwargs)
            except Exception:
                return torch.hub.load(repo, model, force_reload=True, **kwargs)
        smart_hub_load(model="yolov5m")
        smart_hub_load("ultralytics/yolov5:v7.0", "yolov5l")
        """,
    # A run resuming from the checkpoint it writes into its own output directory (espnet Trainer).
    """
        import torch
        class Trainer:
            @staticmethod
            def resume(checkpoint, model):
                states = torch.load(checkpoint, map_location="cpu", weights_only=False)
                model.load_state_dict(states["model"])
            @classmethod
            def run(cls, model, output_dir, epochs):
                if (output_dir / "checkpoint.pth").exists():
                    cls.resume(checkpoint=output_dir / "checkpoint.pth", model=model)
                for epoch in range(epochs):
                    torch.save({"model": model.state_dict()}, output_dir / "checkpoint.pth")
                    torch.save(model.state_dict(), output_dir / f"{epoch}epoch.pth")
            def average(self, output_dir, best):
                return [torch.load(output_dir / f"{e}epoch.pth", weights_only=False) for e in best]
        """,
    # Per-rank object arrays merged by rank 0 (np.savez adds .npz), a dataset cache by tag.
    """
        import numpy as np
        import torch
        def gather(out_dir, rank, world, table):
            np.savez(f"{out_dir}/"
                     f"table_rank{rank}", **table)
            return [np.load(f"{out_dir}/table_rank{r}.npz", allow_pickle=True) for r in range(world)]
        class DataModule:
            def cache(self, train, valid):
                torch.save(train, self.cache_dir / "train_dataset")
                torch.save(valid, self.cache_dir / "valid_dataset")
            def load(self, tag):
                return torch.load(self.cache_dir / f"{tag}_dataset", weights_only=False)
        """,
    # A feature cache: the Dataset makes each item's file name, a DataLoader hands the paths to
    # the writer, and the reader loads that name (cs231n-sl-classification's ResNet encodings;
    # across files: tests/rules/test_tl016_unsafe_checkpoint_load.py).
    """
        import os
        import pickle
        from torch.utils.data import DataLoader, Dataset
        class EncodingPaths(Dataset):
            def __init__(self, dirs, kind):
                self.dirs, self.name = dirs, "{0}RN18-encoding.pt".format(kind)
            def __getitem__(self, idx):
                return os.path.join(self.dirs[idx], self.name)
        def cache_encodings(model, loader):
            for frames, path in loader:
                pickle.dump(model(frames), open(path[0], "wb"))
        def read_encoding(directory, kind):
            return pickle.load(open(os.path.join(directory, "{}RN18-encoding.pt".format(kind)), "rb"))
        """,
    # A function that resumes from the file it saves itself: what the load gives is written
    # back with the same writer (tsai's run_optuna_study pickles its optuna Study).
    """
        import joblib
        import optuna
        from pathlib import Path
        def run_study(objective, resume=None, path="optuna"):
            if resume:
                study = joblib.load(resume)
            else:
                study = optuna.create_study()
            study.optimize(objective, n_trials=10)
            joblib.dump(study, Path(path) / f"{study.study_name}.pkl")
        """,
    # A function that writes its own ``path`` parameter and reads it back: that one variable
    # names one file. And a parameter whose callers hand it the file the program wrote, or
    # leave it out (``None``: no load), through another method's parameter (pykeen's
    # TrainingLoop._save_state reading the best-epoch file _load_state wrote to a temporary).
    """
        import torch
        from tempfile import NamedTemporaryFile
        def roundtrip(model, path):
            torch.save(model.state_dict(), path)
            return torch.load(path, weights_only=False)
        class Loop:
            def restore_best(self, state):
                best_path = NamedTemporaryFile().name
                torch.save(state["best"], best_path)
                return best_path
            def train(self, state, epochs):
                best_path = self.restore_best(state)
                self._train(epochs, best_path=best_path)
                self._train(epochs)
            def _train(self, epochs, best_path=None):
                self._save_state(best_file=best_path)
            def _save_state(self, best_file=None):
                if best_file is not None:
                    return torch.load(best_file, weights_only=False)
        """,
]


INVALID = [
    # A class's save(path) and load(path): two parameters of one name, each what its own caller
    # hands it, so the load reads any file a user names (stable-baselines3's BasePolicy.load;
    # before issue 39 the same text ``path`` counted as the file save writes). Likewise
    # np.save(path)/np.load(path) in two functions.
    Invalid(
        """
            import numpy as np
            import torch as th
            class BasePolicy:
                def save(self, path):
                    th.save({"state_dict": self.state_dict(), "data": self.constructor_parameters()}, path)
                @classmethod
                def load(cls, path, device="cpu"):
                    saved = th.load(path, map_location=device, weights_only=False)
                    model = cls(**saved["data"])
                    model.load_state_dict(saved["state_dict"])
                    return model
            def save_pools(path, pools):
                np.save(path, pools)
            def load_pools(path):
                return np.load(path, allow_pickle=True)
            """,
        lines=(9, 16),
        messages=(weights_only_false_message("torch.load", None),
                  '`np.load(..., allow_pickle=True)` unpickles object arrays, so a crafted .npy/.npz runs code when '
                  'loaded; keep allow_pickle=False and save plain arrays (np.savez) instead of objects'),
        fixed="""
            import numpy as np
            import torch as th
            class BasePolicy:
                def save(self, path):
                    th.save({"state_dict": self.state_dict(), "data": self.constructor_parameters()}, path)
                @classmethod
                def load(cls, path, device="cpu"):
                    saved = th.load(path, map_location=device, weights_only=True)
                    model = cls(**saved["data"])
                    model.load_state_dict(saved["state_dict"])
                    return model
            def save_pools(path, pools):
                np.save(path, pools)
            def load_pools(path):
                return np.load(path, allow_pickle=True)
            """,
    ),
    # A class's own save/resume pair that matches only by file name: the trainer writes
    # ``base_path / "checkpoint.pt"``, but ``load_checkpoint`` reads whatever path its caller
    # hands it (a public entry point: flair's LanguageModelTrainer.load_checkpoint), so it may
    # be a checkpoint someone else made (transformers' rng_state.pth, CVE-2026-1839).
    Invalid(
        """
            import torch
            class LanguageModel:
                def save_checkpoint(self, file, optimizer, epoch):
                    state = {"state_dict": self.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
                    torch.save(state, str(file))
                @classmethod
                def load_checkpoint(cls, model_file):
                    state = torch.load(str(model_file), map_location="cpu", weights_only=False)
                    return state["state_dict"], state["optimizer"], state["epoch"]
            class LanguageModelTrainer:
                def __init__(self, model):
                    self.model = model
                def train(self, base_path, optimizer, epochs):
                    for epoch in range(epochs):
                        self.model.save_checkpoint(base_path / "checkpoint.pt", optimizer, epoch)
                @staticmethod
                def load_checkpoint(checkpoint_file):
                    return LanguageModel.load_checkpoint(checkpoint_file)
            """,
        lines=(9,),
        messages=(weights_only_false_message("torch.load", None),),
        fixed="""
            import torch
            class LanguageModel:
                def save_checkpoint(self, file, optimizer, epoch):
                    state = {"state_dict": self.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
                    torch.save(state, str(file))
                @classmethod
                def load_checkpoint(cls, model_file):
                    state = torch.load(str(model_file), map_location="cpu", weights_only=True)
                    return state["state_dict"], state["optimizer"], state["epoch"]
            class LanguageModelTrainer:
                def __init__(self, model):
                    self.model = model
                def train(self, base_path, optimizer, epochs):
                    for epoch in range(epochs):
                        self.model.save_checkpoint(base_path / "checkpoint.pt", optimizer, epoch)
                @staticmethod
                def load_checkpoint(checkpoint_file):
                    return LanguageModel.load_checkpoint(checkpoint_file)
            """,
    ),
    # A resume path loaded and used, but what the function writes is something else: the
    # loaded file is not one it saves.
    Invalid(
        """
            import joblib
            def fit(model, resume_ckpt, out):
                state = joblib.load(resume_ckpt)
                model.load(state)
                joblib.dump(model.summary(), out)
            """,
        lines=(4,),
        messages=(pickle_message("joblib.load", None),),
    ),
    # A file moved into place from somewhere this program did not write.
    Invalid(
        """
            import os
            import torch
            def install(downloaded, path):
                os.rename(downloaded, path)
                return torch.load(path, weights_only=False)
            """,
        lines=(6,),
        messages=(weights_only_false_message("torch.load", None),),
        fixed="""
            import os
            import torch
            def install(downloaded, path):
                os.rename(downloaded, path)
                return torch.load(path, weights_only=True)
            """,
    ),
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
    # weights_only=False stored into the **kwargs torch.load is given (ultralytics patches.torch_load),
    # or in a dict literal.
    Invalid(
        """
            import torch
            def torch_load(*args, **kwargs):
                if "weights_only" not in kwargs:
                    kwargs["weights_only"] = False
                return torch.load(*args, **kwargs)
            def load(path):
                options = {"map_location": "cpu", "weights_only": False}
                return torch.load(path, **options)
            """,
        lines=(6, 9),
        messages=(
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
            'code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
            'code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
        ),
    ),
    # A comment that does not explain the choice; a bytes value read from a file; a repository
    # default that a caller overrides; two repository expressions in one function.
    Invalid(
        """
            import pickle
            import torch
            def restore(path, resume_path):
                state = torch.load(path, weights_only=False)  # restore the run
                replay = pickle.loads(open(resume_path, "rb").read())
                return state, replay
            def hub(repo="owner/repo", fallback=None):
                return torch.hub.load(repo, "m") if fallback is None else torch.hub.load(fallback, "m")
            hub(repo=input())
            """,
        lines=(5, 6, 9, 9),
        messages=(
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
            'code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`pickle.loads` of a checkpoint runs any code the file holds when it is loaded; store tensors '
            '(torch.save of a state_dict, or safetensors) and read them with torch.load(..., weights_only=True)',
            "`torch.hub.load` of a repository chosen at run time (`repo`) imports and runs that repository's "
            "hubconf.py; load a fixed literal 'owner/repo:tag', or a checked-out copy with source='local'",
            "`torch.hub.load` of a repository chosen at run time (`fallback`) imports and runs that repository's "
            "hubconf.py; load a fixed literal 'owner/repo:tag', or a checked-out copy with source='local'",
        ),
        fixed="""
            import pickle
            import torch
            def restore(path, resume_path):
                state = torch.load(path, weights_only=True)  # restore the run
                replay = pickle.loads(open(resume_path, "rb").read())
                return state, replay
            def hub(repo="owner/repo", fallback=None):
                return torch.hub.load(repo, "m") if fallback is None else torch.hub.load(fallback, "m")
            hub(repo=input())
            """,
    ),
    # A written path that differs by more than a verb is another file.
    Invalid(
        """
            import numpy as np
            def save(x, save_path):
                np.save(save_path, x)
            def load(path):
                return np.load(path, allow_pickle=True)
            """,
        lines=(6,),
        messages=('`np.load(..., allow_pickle=True)` unpickles object arrays, so a crafted .npy/.npz runs code when '
                  'loaded; keep allow_pickle=False and save plain arrays (np.savez) instead of objects',),
    ),
    # A resume helper that one call gives a path from elsewhere; a file name pattern with no
    # name of its own (any *.pt) names no particular written file.
    Invalid(
        """
            import torch
            def resume(checkpoint):
                return torch.load(checkpoint, weights_only=False)
            def run(output_dir, pretrained, name, other):
                torch.save({}, output_dir / "last.pt")
                torch.save({}, f"{output_dir}/{name}.pt")
                resume(output_dir / "last.pt")
                resume(pretrained)
                return torch.load(f"{other}/{name}.pt", weights_only=False)
            """,
        lines=(4, 10),
        messages=('`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
                  'code when loaded; pass weights_only=True (allow your own classes with '
                  'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
                  '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted checkpoint runs '
                  'code when loaded; pass weights_only=True (allow your own classes with '
                  'torch.serialization.add_safe_globals), or keep False only for files this program wrote'),
        fixed="""
            import torch
            def resume(checkpoint):
                return torch.load(checkpoint, weights_only=True)
            def run(output_dir, pretrained, name, other):
                torch.save({}, output_dir / "last.pt")
                torch.save({}, f"{output_dir}/{name}.pt")
                resume(output_dir / "last.pt")
                resume(pretrained)
                return torch.load(f"{other}/{name}.pt", weights_only=True)
            """,
    ),
    # No comment switches a finding off (issue 39): a FIXME naming weights_only=False as unsafe, a
    # comment saying why the full unpickler is needed (stable_baselines3), one heading the function
    # (torchrl libero), "deliberately"/"intentionally", a TODO, a BUG, a docstring: the file is as
    # dangerous as without them.
    Invalid(
        """
            import os
            import torch
            import torch as th
            def load(path):
                # we cannot use `weights_only=True` here because we need to allow
                # gymnasium imports for the policy to be loaded successfully
                return th.load(path, map_location="cpu", weights_only=False)
            def load_init_states(root, task):
                # these init states are trusted files shipped with the benchmark, pickled
                # numpy arrays that weights_only=True rejects
                path = os.path.join(root, task.folder, task.states_file)
                return torch.load(path, weights_only=False)
            def restore(path):
                \"\"\"Deliberately loads with the full unpickler: the file is trusted, written by our own exporter.\"\"\"
                # FIXME: weights_only=False is unsafe, switch to True
                state = torch.load(path, weights_only=False)
                extra = torch.load(path + ".extra", weights_only=False)  # TODO: weights_only=True
                # BUG: intentionally unsafe until the optimizer state is plain tensors
                return state, extra, torch.load(path + ".opt", map_location="cpu", weights_only=False)
            """,
        lines=(8, 13, 17, 18, 20),
        messages=(
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
        ),
        fixed="""
            import os
            import torch
            import torch as th
            def load(path):
                # we cannot use `weights_only=True` here because we need to allow
                # gymnasium imports for the policy to be loaded successfully
                return th.load(path, map_location="cpu", weights_only=True)
            def load_init_states(root, task):
                # these init states are trusted files shipped with the benchmark, pickled
                # numpy arrays that weights_only=True rejects
                path = os.path.join(root, task.folder, task.states_file)
                return torch.load(path, weights_only=True)
            def restore(path):
                \"\"\"Deliberately loads with the full unpickler: the file is trusted, written by our own exporter.\"\"\"
                # FIXME: weights_only=False is unsafe, switch to True
                state = torch.load(path, weights_only=True)
                extra = torch.load(path + ".extra", weights_only=True)  # TODO: weights_only=True
                # BUG: intentionally unsafe until the optimizer state is plain tensors
                return state, extra, torch.load(path + ".opt", map_location="cpu", weights_only=True)
            """,
    ),
    # A comment heading a function, or one that does not explain the load, vouches for nothing
    # (before issue 39 the first load was exempted by its comment).
    Invalid(
        """
            import torch
            def first(path):
                # trusted file written by our own exporter
                return torch.load(path, weights_only=False)
            def second(path):
                # read the weights
                state = torch.load(path, map_location="cpu", weights_only=False)
                return state
            """,
        lines=(5, 8),
        messages=(
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
            '`torch.load(..., weights_only=False)` unpickles arbitrary objects, so a crafted '
            'checkpoint runs code when loaded; pass weights_only=True (allow your own classes with '
            'torch.serialization.add_safe_globals), or keep False only for files this program wrote',
        ),
        fixed="""
            import torch
            def first(path):
                # trusted file written by our own exporter
                return torch.load(path, weights_only=True)
            def second(path):
                # read the weights
                state = torch.load(path, map_location="cpu", weights_only=True)
                return state
            """,
    ),
    # The same program loading a checkpoint it downloaded: it makes no file of that name.
    Invalid(
        """
            import os
            import pickle
            from torch.utils.data import Dataset
            class EncodingPaths(Dataset):
                def __init__(self, dirs, kind):
                    self.dirs, self.name = dirs, "{0}RN18-encoding.pt".format(kind)
                def __getitem__(self, idx):
                    return os.path.join(self.dirs[idx], self.name)
            def cache_encodings(model, loader):
                for frames, path in loader:
                    pickle.dump(model(frames), open(path[0], "wb"))
            def pretrained(directory):
                return pickle.load(open(os.path.join(directory, "resnet18-pretrained.pt"), "rb"))
            """,
        lines=(14,),
        messages=(pickle_message("pickle.load", None),),
    ),
]
