"""TL016 unsafe-checkpoint-load beyond the embedded cases: the project's torch pin
(``torchlint.pins``: pyproject.toml, requirements*.txt, setup.cfg, setup.py), read once per run, decides
whether a ``torch.load`` without weights_only is reported; fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchlint import run as run_layer
from torchlint.pins import read_torch_pin
from torchlint.testing import lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_it():
    findings = lint_tree(_project("buggy_project"), select=["TL016"], dedent=False)
    assert [(f.path, f.line) for f in findings] == [("tl016_unsafe_checkpoint_load.py", 13)]
    assert "of a path from user input" in findings[0].message  # the higher-severity variant


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), select=["TL016"], dedent=False) == []


# -- reading the pin ------------------------------------------------------------------------

@pytest.mark.parametrize(("file", "text", "spec", "below"), [
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["numpy", "torch>=2.0,<2.6"]\n', "torch>=2.0,<2.6", True),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n', "torch>=2.6", False),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "^1.13"\n', "torch^1.13", True),
    ("requirements.txt", "numpy\ntorch<2.6  # old CUDA\ntorchvision\n", "torch<2.6", True),
    ("requirements.txt", "torch==2.5.1\n", "torch==2.5.1", True),
    ("requirements.txt", "torch==2.6.0\n", "torch==2.6.0", False),
    ("requirements.txt", "torch>=2.0,<2.6\n", "torch>=2.0,<2.6", True),
    ("requirements.txt", "torch >= 2.0, < 2.6.1\n", "torch >= 2.0, < 2.6.1", False),  # 2.6.0 allowed
    ("requirements-dev.txt", "torch~=2.4.1 ; python_version >= '3.9'\n", "torch~=2.4.1", True),
    ("requirements/base.txt", "torch==2.5.*\n", "torch==2.5.*", True),
    ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n    torch<=2.5.1\n", "torch<=2.5.1", True),
    # accelerate's setup.py (the project of TL016's mutation benchmark script)
    ("setup.py", 'from setuptools import setup\nsetup(name="x", install_requires=["numpy>=1.17", "torch>=2.0.0"])\n',
     "torch>=2.0.0", False),
    ("setup.py", 'from setuptools import setup\nREQUIRED = ["torch<2.6"]\nsetup(install_requires=REQUIRED)\n',
     "torch<2.6", True),
])
def test_a_pin_is_read(tmp_path, file, text, spec, below):
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text(text, encoding="utf-8")
    pin = read_torch_pin(tmp_path)
    assert (pin.file, pin.spec, pin.below((2, 6))) == (file, spec, below)


@pytest.mark.parametrize(("file", "text"), [
    ("requirements.txt", "numpy\ntorchvision==0.20.0\n"),  # no torch at all
    ("requirements.txt", "torch\n"),  # torch without a version
    ("requirements.txt", "torch>=latest\n"),  # unparsable: no claim
    ("requirements.txt", "torch @ https://download.pytorch.org/whl/torch-2.5.1.whl\n"),
    ("pyproject.toml", "[project\nbroken"),  # unreadable TOML
    ("setup.cfg", "not an ini file [\n"),
    ("setup.py", "from setuptools import setup\nsetup(install_requires=open('requirements.txt').read().split())\n"),
    ("setup.py", "setup(install_requires=[\n"),  # not Python
])
def test_no_pin_is_claimed(tmp_path, file, text):
    (tmp_path / file).write_text(text, encoding="utf-8")
    assert read_torch_pin(tmp_path) is None


@pytest.mark.parametrize(("text", "allows"), [
    ("torch>=2.1\n", True),  # 2.1 to 2.5 still default to weights_only=False
    ("torch>=2.1,<3\n", True),
    ("torch>2.5\n", True),  # 2.5.1
    ("torch<3\n", True),  # no lower bound: any old torch
    ("torch^2.4\n", True),
    ("torch~=2.6\n", False),
    ("torch>=2.6\n", False),
    ("torch>=2.6.0,<2.8\n", False),
    ("torch==2.7.1\n", False),
    ("torch==2.5.1\n", True),
])
def test_the_lowest_allowed_release(tmp_path, text, allows):
    (tmp_path / "requirements.txt").write_text(text, encoding="utf-8")
    assert read_torch_pin(tmp_path).allows_below((2, 6)) is allows


def test_a_project_allowing_torch_below_2_6_reports_torch_load(project, run):
    """``torch>=2.1`` installs 2.1 to 2.5 as readily as 2.6: there the default is still
    weights_only=False (not only under an upper pin)."""
    (project.root / ".git").mkdir()
    project.write("requirements.txt", "torch>=2.1\n")
    project.write("train.py", TRAIN)
    assert [(path, line) for path, line, _ in _findings(run, ".")] == [("train.py", 4)]


def test_a_setup_py_pin_below_2_6_is_read(tmp_path):
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["torch>=2.0.0"])\n')
    pin = read_torch_pin(tmp_path)
    assert (pin.file, pin.spec, pin.allows_below((2, 6))) == ("setup.py", "torch>=2.0.0", True)


def test_the_declared_dependency_comes_before_requirements_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n')
    (tmp_path / "requirements-old.txt").write_text("torch==1.13.1\n")
    assert read_torch_pin(tmp_path).spec == "torch>=2.6"


def test_no_project_root_no_pin():
    assert read_torch_pin(None) is None


# -- the pin in a run ------------------------------------------------------------------------

TRAIN = """\
import torch

def restore(path):
    return torch.load(path, map_location="cpu")
"""


def _findings(run, *args):
    code, out, err = run("check", "--format", "json", "--select", "TL016", *args)
    assert code in (0, 1), err
    return [(f["path"], f["line"], f["message"]) for f in json.loads(out)]


def test_torch_load_without_weights_only_under_an_old_pin(project, run):
    (project.root / ".git").mkdir()
    project.write("requirements.txt", "torch==2.5.1\n")
    project.write("train.py", TRAIN)
    message = ("`torch.load` without weights_only unpickles arbitrary objects with the torch versions this project "
               "allows (`torch==2.5.1` in requirements.txt; the default became weights_only=True in 2.6), so a crafted "
               "checkpoint runs code when loaded; pass weights_only=True (allow your own classes with "
               "torch.serialization.add_safe_globals)")
    assert _findings(run, ".") == [("train.py", 4, message)]
    assert _findings(run, "train.py") == [("train.py", 4, message)]  # one file named: the same project


def test_torch_load_without_weights_only_from_a_url_under_an_old_pin(project, run):
    (project.root / ".git").mkdir()
    project.write("pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.0,<2.6"]\n')
    project.write("hub.py", "from torch.hub import load_state_dict_from_url\n"
                            "state = load_state_dict_from_url('https://example.com/w.pth')\n")
    message = ("`torch.hub.load_state_dict_from_url` without weights_only of a file from a URL unpickles arbitrary "
               "objects with the torch versions this project allows (`torch>=2.0,<2.6` in pyproject.toml; the default "
               "became weights_only=True in 2.6), so a crafted checkpoint runs code when loaded; pass weights_only=True "
               "(allow your own classes with torch.serialization.add_safe_globals)")
    assert _findings(run, ".") == [("hub.py", 2, message)]


@pytest.mark.parametrize("requirements", [None, "torch>=2.6\n", "torch>=2.6,<3\n", "torch>=nonsense\n"])
def test_torch_load_without_weights_only_is_silent_without_an_old_pin(project, run, requirements):
    (project.root / ".git").mkdir()
    if requirements is not None:
        project.write("requirements.txt", requirements)
    project.write("train.py", TRAIN)
    assert _findings(run, ".") == []


def test_a_pin_change_is_seen_with_the_cache(project, run):
    """The pin is applied in the project pass, not stored in a file's cached result."""
    (project.root / ".git").mkdir()
    project.write("train.py", TRAIN)
    assert _findings(run, ".") == []
    project.write("requirements.txt", "torch<2.6\n")
    assert [line for _, line, _ in _findings(run, ".")] == [4]


def test_the_pin_is_read_once_per_run(project, run, monkeypatch):
    (project.root / ".git").mkdir()
    project.write("requirements.txt", "torch<2.6\n")
    for name in ("a", "b", "c"):
        project.write(f"{name}.py", TRAIN)
    calls = []
    real = run_layer.read_torch_pin
    monkeypatch.setattr(run_layer, "read_torch_pin", lambda root: calls.append(root) or real(root))
    assert [path for path, _, _ in _findings(run, "--no-cache", ".")] == ["a.py", "b.py", "c.py"]
    assert calls == [project.root]


# -- files another file of the project writes -------------------------------------------------

_TRAINER = '''
import torch
def train(model, output_dir, epochs):
    for epoch in range(epochs):
        torch.save(model.state_dict(), output_dir / f"{epoch}epoch.pth")
'''

_AVERAGE = '''
import torch
def average(output_dir, best, run_dir):
    states = [torch.load(output_dir / f"{e}epoch.pth", weights_only=False) for e in best]
    others = [torch.load(run_dir / f"{e}.pth", weights_only=False) for e in best]
    foreign = torch.load(output_dir / f"{best[0]}epoch_ema.pth", weights_only=False)
    return states, others, foreign
'''


def test_a_path_another_file_writes_is_the_programs_own():
    """Checkpoint averaging reads the epoch files the trainer saved (espnet): left alone; a
    file name pattern with no name of its own, or one no file writes, is still reported, with
    its fix."""
    findings = lint_tree({"pkg/trainer.py": _TRAINER, "pkg/average.py": _AVERAGE}, select=["TL016"])
    assert [(f.path, f.line) for f in findings] == [("pkg/average.py", 5), ("pkg/average.py", 6)]
    assert all(f.fix is not None for f in findings)


def test_without_the_writer_the_load_is_reported():
    findings = lint_tree({"pkg/average.py": _AVERAGE}, select=["TL016"])
    assert [(f.path, f.line) for f in findings] == [("pkg/average.py", 4), ("pkg/average.py", 5),
                                                    ("pkg/average.py", 6)]


# -- files the program writes to paths it is handed (semantic.written_files) -----------------

# cs231n-sl-classification: the Dataset makes each video's encoding file name, main.py runs the
# loader through pickle_encoding, which pickles each encoding to the path the loader hands it,
# and the LSTM's Dataset reads the encodings back.
_FRAMES = '''
import os
from torch.utils.data import Dataset
class GestureFrameDatasetPickle(Dataset):
    def __init__(self, video_dirs, data_type, layers):
        self.data = video_dirs
        self._encoding_filename = '{0}RN{1}{2}-encoding.pt'.format('T', layers, data_type)
    def __getitem__(self, idx):
        video_dir = self.data[idx]
        return self.frames(video_dir), os.path.join(video_dir, self._encoding_filename)
'''

_PICKLER = '''
import pickle
def pickle_encoding(model, dataloader):
    for batch_idx, (X, video_path) in enumerate(dataloader):
        video_path = video_path[0]
        pickle.dump(model(X[0]), open(video_path, 'wb'))
        del X, video_path
'''

_ENCODINGS = '''
import os
import pickle
from torch.utils.data import Dataset
class ResnetEncodingDataset(Dataset):
    def read_frame_tensors_from_dir(self, directory, data_type):
        location = os.path.join(directory, '{}-encoding.pt'.format(data_type))
        return pickle.load(open(location, 'rb'))
    def pretrained(self, directory):
        return pickle.load(open(os.path.join(directory, 'resnet18-pretrained.pt'), 'rb'))
'''


def _lines(files: dict[str, str]) -> list[tuple[str, int]]:
    return [(f.path, f.line) for f in lint_tree(files, select=["TL016"])]


def test_a_file_name_a_dataset_makes_for_a_loader_fed_writer_is_the_programs_own():
    """The encodings are the program's own cache: left alone. The pretrained file, a name no
    file of the project makes, is still reported."""
    files = {"utils/gesture_frame_dataset_pickle.py": _FRAMES, "utils/pickle_encoding.py": _PICKLER,
             "utils/resnet_encoding_dataset.py": _ENCODINGS}
    assert _lines(files) == [("utils/resnet_encoding_dataset.py", 10)]


def test_without_the_name_or_without_the_writer_the_load_is_reported():
    both = [("utils/resnet_encoding_dataset.py", 8), ("utils/resnet_encoding_dataset.py", 10)]
    assert _lines({"utils/pickle_encoding.py": _PICKLER, "utils/resnet_encoding_dataset.py": _ENCODINGS}) == both
    assert _lines({"utils/gesture_frame_dataset_pickle.py": _FRAMES,
                   "utils/resnet_encoding_dataset.py": _ENCODINGS}) == both


def test_a_writer_in_another_package_or_of_another_format_does_not_count():
    """The evidence must reach the load (``Packages``), and a file torch.save wrote is no
    pickle ``pickle.load`` reads."""
    assert _lines({"gestures/frames.py": _FRAMES, "other/pickle_encoding.py": _PICKLER,
                   "gestures/encodings.py": _ENCODINGS}) == [("gestures/encodings.py", 8), ("gestures/encodings.py", 10)]
    torch_writer = _PICKLER.replace("import pickle", "import torch").replace(
        "pickle.dump(model(X[0]), open(video_path, 'wb'))", "torch.save(model(X[0]), video_path)")
    files = {"utils/frames.py": _FRAMES, "utils/writer.py": torch_writer, "utils/encodings.py": _ENCODINGS}
    assert _lines(files) == [("utils/encodings.py", 8), ("utils/encodings.py", 10)]
    torch_reader = _ENCODINGS.replace("pickle.load(open(location, 'rb'))", "torch.load(location, weights_only=False)")
    files["utils/encodings.py"] = "import torch\n" + torch_reader
    assert _lines(files) == [("utils/encodings.py", 11)]  # torch.load of torch.save's file: its own


# A package with a generic saver (``torch.save(state, path)`` to the path it is handed) and a
# trainer that saves its RNG state to ``output_dir/rng_state.pth`` and reads it back from the
# checkpoint directory the user names (transformers#43140, CVE-2026-1839): the trainer's own
# write is compared by its whole path, so the generic saver does not make the name the
# package's own cache.
_SAVER = '''
import torch
def save_checkpoint(state, filename):
    torch.save(state, filename)
'''

_RNG = '''
import os
import torch
class Trainer:
    def _save_rng_state(self, output_dir):
        torch.save({"cpu": torch.random.get_rng_state()}, os.path.join(output_dir, "rng_state.pth"))
    def _load_rng_state(self, checkpoint):
        rng_file = os.path.join(checkpoint, "rng_state.pth")
        state = torch.load(rng_file, weights_only=False)
        torch.random.set_rng_state(state["cpu"])
'''


def test_a_name_the_loader_s_file_writes_itself_is_no_cache_for_a_generic_saver():
    assert _lines({"pkg/utils.py": _SAVER, "pkg/trainer.py": _RNG}) == [("pkg/trainer.py", 9)]
    assert _lines({"pkg/trainer.py": _RNG}) == [("pkg/trainer.py", 9)]
