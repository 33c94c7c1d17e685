"""TL016's cases adapted from public reports: checkpoint and pickle loads that can run code from
the file (``BUGS``: ``weights_only=False``, ``torch.load`` in a project that allows torch below
2.6, ``np.load(..., allow_pickle=True)``, pickled checkpoints), and the fixed or similar code
(``LOOKALIKES``). See ``tests/rules/reports/__init__.py``."""

from tests.rules.reports import Report


def _project(requirement: str, code: str) -> Report:
    """``code`` (``train.py``) in a project whose requirements.txt names ``requirement``."""
    return Report(files={"requirements.txt": requirement + "\n", "train.py": code})


BUGS = [
    # the library's checkpoint loader passes weights_only=False
    """
    import torch

    def load_checkpoint(path):
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        return checkpoint["config"], checkpoint["state_dict"]
    # https://github.com/vinnylarouge/jevlike/issues/3
    """,
    # checkpoint helpers unpickle user-supplied checkpoint paths
    """
    import torch

    def load_metadata(checkpoint_path: str) -> dict:
        return torch.load(checkpoint_path, map_location="cpu", weights_only=False)["hyper_parameters"]

    def load_model(checkpoint_path: str):
        return torch.load(checkpoint_path, map_location="cpu", weights_only=False)["model"]
    # https://github.com/ecmwf/anemoi-core/issues/1416
    """,
    # a runner's load() without weights_only, in a project allowing torch 1.10 and later
    _project("torch>=1.10.0", """
    import torch

    class OnPolicyRunner:
        def load(self, path, load_optimizer=True):
            loaded_dict = torch.load(path)
            self.alg.actor_critic.load_state_dict(loaded_dict["model_state_dict"])
            if load_optimizer:
                self.alg.optimizer.load_state_dict(loaded_dict["optimizer_state_dict"])
            return loaded_dict["infos"]
    # https://github.com/leggedrobotics/rsl_rl/issues/42
    """),
    # a sampling example reads a checkpoint path from the command line
    _project("torch>=2.0", """
    import argparse
    import torch

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--path_checkpoint")
        args = parser.parse_args()
        params = torch.load(args.path_checkpoint)
        return {k: v.to("cuda") for k, v in params.items()}
    # https://github.com/google-deepmind/recurrentgemma/pull/12
    """),
    # a model path from the CLI or a download, loaded without weights_only
    _project("torch>=1.13", """
    import torch

    def load_completion(model, path, device):
        model.load_state_dict(torch.load(path, map_location=torch.device(device)))
        return model.eval()
    # https://github.com/UMMISCO/ecgtizer/issues/5
    """),
    # an inference engine loads its checkpoint without weights_only
    _project("torch>=2.1", """
    import torch

    class InferenceEngine:
        def __init__(self, checkpoint_path, device):
            self.checkpoint_path = checkpoint_path
            self.device = device

        def load(self, model):
            checkpoint = torch.load(self.checkpoint_path, map_location=self.device)
            model.load_state_dict(checkpoint["state_dict"])
            return model
    # https://github.com/nikopueringer/CorridorKey/issues/12
    """),
    # the model file is read with the default unpickler (torch 1.10 still supported)
    _project("torch>=1.10.1", """
    import torch

    def load_model(fp, device):
        checkpoint = torch.load(fp, map_location=device)
        return checkpoint["dims"], checkpoint["model_state_dict"]
    # https://github.com/openai/whisper/pull/2451
    """),
    # fine-tuning resumes from a directory: four loads without weights_only
    _project("torch>=2.5.0", """
    import os
    import torch

    def resume(model, optimizer, scheduler, ckpt_dir):
        model.load_state_dict(torch.load(os.path.join(ckpt_dir, "lora_weights.ckpt")), strict=False)
        optimizer.load_state_dict(torch.load(os.path.join(ckpt_dir, "optimizer.pth")))
        scheduler.load_state_dict(torch.load(os.path.join(ckpt_dir, "scheduler.pth")))
    # https://github.com/OpenBMB/VoxCPM/pull/347
    """),
    # np.load with allow_pickle=True of a file the user names
    """
    import numpy as np

    def load_features(path):
        data = np.load(path, allow_pickle=True)
        return data["features"], data["labels"]
    # https://github.com/numpy/numpy/issues/27761
    """,
    # an NPZ reader allows pickles
    """
    import numpy as np

    class NPZFile:
        def __init__(self, path):
            self.path = path
            self.file = np.load(self.path, allow_pickle=True)
            self.type = str(self.file["type"])
    # https://github.com/pynapple-org/pynapple/pull/607
    """,
    # a dataset reads a shape file with allow_pickle=True
    """
    import os
    import numpy as np

    class CpGPTDataset:
        def __init__(self, data_path, weights):
            X_shape_file = os.path.join(data_path, weights, "X_shape.npy")
            self.X_shape = tuple(np.load(X_shape_file, allow_pickle=True))
    # https://github.com/lucascamillomd/CpGPT/issues/18
    """,
    # pretrained weights loaded without weights_only under torch 2.4 (the FutureWarning)
    _project("torch>=2.0.0", """
    import torch

    def load_state_dict_from_file(file: str, only_state_dict=True):
        checkpoint = torch.load(file, map_location="cpu")
        if only_state_dict and "state_dict" in checkpoint:
            checkpoint = checkpoint["state_dict"]
        return checkpoint
    # https://github.com/mit-han-lab/efficientvit/issues/132
    """),
    # the trainer saves its RNG state into each checkpoint and reads it back on resume from
    # whatever checkpoint directory the user names: a crafted rng_state.pth runs code (torch 2.2-2.5)
    _project("torch>=2.2", """
    import os
    import torch

    class Trainer:
        def _save_rng_state(self, output_dir):
            states = {"cpu": torch.random.get_rng_state()}
            torch.save(states, os.path.join(output_dir, "rng_state.pth"))

        def _load_rng_state(self, checkpoint):
            rng_file = os.path.join(checkpoint, "rng_state.pth")
            if not os.path.isfile(rng_file):
                return
            checkpoint_rng_state = torch.load(rng_file)
            torch.random.set_rng_state(checkpoint_rng_state["cpu"])
    # https://github.com/huggingface/transformers/pull/43140
    """),
    # a policy's save(path) and load(path): the load reads whatever file its caller names
    """
    import torch as th

    class BasePolicy(th.nn.Module):
        def save(self, path):
            th.save({"state_dict": self.state_dict(), "data": self.constructor_kwargs()}, path)

        @classmethod
        def load(cls, path, device="cpu"):
            saved = th.load(path, map_location=device, weights_only=False)
            policy = cls(**saved["data"])
            policy.load_state_dict(saved["state_dict"])
            return policy
    # https://github.com/DLR-RM/stable-baselines3/issues/1852
    """,
]

LOOKALIKES = [
    # the fix: weights_only=True (the config is a plain dict)
    """
    import torch

    def load_checkpoint(path):
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        return checkpoint["config"], checkpoint["state_dict"]
    # https://github.com/vinnylarouge/jevlike/issues/3
    """,
    # the suggested change: weights_only=True in the runner
    _project("torch>=1.10.0", """
    import torch

    class OnPolicyRunner:
        def load(self, path, load_optimizer=True):
            loaded_dict = torch.load(path, weights_only=True)
            self.alg.actor_critic.load_state_dict(loaded_dict["model_state_dict"])
            if load_optimizer:
                self.alg.optimizer.load_state_dict(loaded_dict["optimizer_state_dict"])
            return loaded_dict["infos"]
    # https://github.com/leggedrobotics/rsl_rl/issues/42
    """),
    # the merged fix
    _project("torch>=1.10.1", """
    import torch

    def load_model(fp, device):
        checkpoint = torch.load(fp, map_location=device, weights_only=True)
        return checkpoint["dims"], checkpoint["model_state_dict"]
    # https://github.com/openai/whisper/pull/2451
    """),
    # resuming a run with weights_only=True everywhere
    """
    import torch

    def resume(flow, optimiser, path):
        state = torch.load(path, weights_only=True)
        flow.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
    # https://github.com/mj-will/nessai/pull/455
    """,
    # pretrained weights from a URL, read with weights_only=True
    """
    import torch

    def get_state_dict(url, progress=True):
        return torch.hub.load_state_dict_from_url(url, progress=progress, weights_only=True)
    # https://github.com/torchgeo/torchgeo/pull/3893
    """,
    # the fix in the inference engine
    _project("torch>=2.1", """
    import torch

    class InferenceEngine:
        def __init__(self, checkpoint_path, device):
            self.checkpoint_path = checkpoint_path
            self.device = device

        def load(self, model):
            checkpoint = torch.load(self.checkpoint_path, map_location=self.device, weights_only=True)
            model.load_state_dict(checkpoint["state_dict"])
            return model
    # https://github.com/nikopueringer/CorridorKey/pull/58
    """),
    # a project that requires torch 2.6 or later: the default is weights_only=True
    _project("torch>=2.6", """
    import torch

    def restore(model, optimizer, path):
        checkpoint = torch.load(path)
        model.load_state_dict(checkpoint["model_state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        return checkpoint["epoch"]
    # https://github.com/pytorch/pytorch.github.io/issues/1837
    """),
    # the suggested format: np.savez of the arrays, read back without pickles
    """
    import os
    import numpy as np

    def load_J_dense():
        return list(np.load(os.path.join(os.path.dirname(__file__), "J_dense_0-278.npz"), encoding="latin1").values())
    # https://github.com/AMLab-Amsterdam/lie_learn/pull/6
    """,
    # np.load with the default allow_pickle=False
    """
    import numpy as np

    def load_array(path):
        return np.load(path)
    # https://github.com/numpy/numpy/issues/12759
    """,
    # the suggested fix: allow_pickle=False
    """
    import os
    import numpy as np

    class CpGPTDataset:
        def __init__(self, data_path, weights):
            X_shape_file = os.path.join(data_path, weights, "X_shape.npy")
            self.X_shape = tuple(np.load(X_shape_file, allow_pickle=False))
    # https://github.com/lucascamillomd/CpGPT/issues/18
    """,
    # the resume path hardened: four loads with weights_only=True
    _project("torch>=2.5.0", """
    import os
    import torch

    def resume(model, optimizer, scheduler, ckpt_dir):
        model.load_state_dict(torch.load(os.path.join(ckpt_dir, "lora_weights.ckpt"), weights_only=True), strict=False)
        optimizer.load_state_dict(torch.load(os.path.join(ckpt_dir, "optimizer.pth"), weights_only=True))
        scheduler.load_state_dict(torch.load(os.path.join(ckpt_dir, "scheduler.pth"), weights_only=True))
    # https://github.com/OpenBMB/VoxCPM/pull/347
    """),
    # the NPZ reader without pickles
    """
    import numpy as np

    class NPZFile:
        def __init__(self, path):
            self.path = path
            self.file = np.load(self.path, allow_pickle=False)
            self.type = str(self.file["type"])
    # https://github.com/pynapple-org/pynapple/pull/607
    """,
    # the RNG state read back with weights_only=True
    _project("torch>=2.2", """
    import os
    import torch

    class Trainer:
        def _save_rng_state(self, output_dir):
            states = {"cpu": torch.random.get_rng_state()}
            torch.save(states, os.path.join(output_dir, "rng_state.pth"))

        def _load_rng_state(self, checkpoint):
            rng_file = os.path.join(checkpoint, "rng_state.pth")
            if not os.path.isfile(rng_file):
                return
            checkpoint_rng_state = torch.load(rng_file, weights_only=True)
            torch.random.set_rng_state(checkpoint_rng_state["cpu"])
    # https://github.com/huggingface/transformers/pull/43140
    """),
]
