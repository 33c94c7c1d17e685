"""The flake8 plugin: TL codes through flake8's plugin interface, in-process, and through the
real flake8 where it is installed."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.config import parse_toml
from torchlint.flake8 import Plugin

REPO = Path(__file__).resolve().parents[2]

SOURCE = textwrap.dedent("""\
    import torch

    def train(model, loader, optimizer, losses):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss)  # noqa: TL002
""")
TL001 = ("TL001 optimizer.step() in this loop applies gradients that were never cleared, so they add up across "
         "iterations; call optimizer.zero_grad() once per iteration")


def run_plugin(path: Path, source: str) -> list[tuple]:
    lines = source.splitlines(keepends=True)
    return list(Plugin(ast.parse(source), str(path), lines).run())


def test_the_plugin_yields_flake8_errors_with_zero_based_columns(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001", "TL002"]\n')
    assert run_plugin(tmp_path / "train.py", SOURCE) == [(7, 8, TL001, Plugin)]


def test_the_plugin_follows_the_files_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL002"]\n')
    assert run_plugin(tmp_path / "train.py", SOURCE.replace("  # noqa: TL002", "")) == [
        (8, 8, "TL002 `losses.append(loss)` keeps each iteration's autograd graph alive, so memory grows every step; "
               "store `loss.item()` (or `loss.detach()`) instead", Plugin)]


def test_the_entry_point_names_the_plugin():
    entry = parse_toml(REPO / "pyproject.toml", (REPO / "pyproject.toml").read_text())["project"]["entry-points"]["flake8.extension"]
    module, _, attribute = entry["TL"].partition(":")
    assert getattr(importlib.import_module(module), attribute) is Plugin


def test_the_real_flake8_reports_tl_codes(tmp_path):
    try:
        import flake8  # noqa: F401
    except ImportError:
        pytest.skip("flake8 is not installed (the plugin interface is tested in-process above)")
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL001", "TL002"]\n')
    (tmp_path / "train.py").write_text(SOURCE)
    # the entry point of an installed torchlint, declared here for the working tree
    (tmp_path / ".flake8").write_text("[flake8:local-plugins]\nextension =\n    TL = torchlint.flake8:Plugin\n")
    paths = os.pathsep.join([str(REPO), *sys.path])
    done = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", "train.py"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": paths})
    assert done.stdout == f"train.py:7:9: {TL001}\n", done.stderr
    assert done.returncode == 1
