"""Parent-side pieces of the trace: no torch, no child process (except the import check)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from trace_helpers import MODELS, REPO

from torchlint import shapes
from torchlint import trace_settings as config
from torchlint.errors import ConfigError, UsageError
from torchlint.trace import command, locate, report
from torchlint.trace.target import parse_target

# --------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("text", ["4,3,32,32", "(4, 3, 32, 32)", "[4,3,32,32]", "4x3x32x32"])
def test_parse_shape_text(text):
    assert shapes.parse_shape_text(text) == [4, 3, 32, 32]


@pytest.mark.parametrize("text", ["", "4,a", "4,-1", "()"])
def test_parse_shape_text_rejects(text):
    with pytest.raises(shapes.ShapeError):
        shapes.parse_shape_text(text)


def test_build_specs_dtypes():
    specs = shapes.build_specs([[2, 3], [2, 5]], ["long"])
    assert [s.dtype for s in specs] == ["int64", "int64"]
    specs = shapes.build_specs([[2, 3], [2, 5]], ["int64", "float"])
    assert [s.dtype for s in specs] == ["int64", "float32"]
    assert shapes.build_specs([[1]], None)[0].dtype == "float32"
    with pytest.raises(shapes.ShapeError, match="2 dtypes for 3"):
        shapes.build_specs([[1], [2], [3]], ["int64", "int64"])
    with pytest.raises(shapes.ShapeError, match="unknown dtype"):
        shapes.canonical_dtype("complex7")


def test_inline_comment_positions():
    source = textwrap.dedent('''
        import torch.nn as nn

        # torchlint: input-shape=(4, 10)
        class Above(nn.Module):
            pass

        class Trailing(nn.Module):  # torchlint: input-shape=(2, 3, 8, 8)
            pass

        @decorator
        class InBody(nn.Module):
            # torchlint: input-shape=(4, 16), (4, 16) dtype=int64
            """Docs."""

        class Outer:
            class Inner(nn.Module):  # torchlint: input-shape=[1, 2]
                pass

        class Nothing(nn.Module):
            x = 1  # torchlint: input-shape=(9, 9)
    ''')
    above, line = shapes.find_inline_shape(source, "Above")
    assert [s.shape for s in above] == [[4, 10]] and line == 4
    assert shapes.find_inline_shape(source, "Trailing")[0][0].shape == [2, 3, 8, 8]
    body = shapes.find_inline_shape(source, "InBody")[0]
    assert [(s.shape, s.dtype) for s in body] == [([4, 16], "int64"), ([4, 16], "int64")]
    assert shapes.find_inline_shape(source, "Outer.Inner")[0][0].shape == [1, 2]
    assert shapes.find_inline_shape(source, "Nothing") is None  # not a class-level comment
    assert shapes.find_inline_shape(source, "Missing") is None


def test_inline_comment_malformed():
    with pytest.raises(shapes.ShapeError, match="cannot read"):
        shapes.parse_directive("# torchlint: input-shape=(4, oops)")
    assert shapes.parse_directive("# torchlint: disable=TL005") is None


def test_infer_candidates():
    conv = shapes.infer_candidates("conv1", "Conv2d", {"in_channels": 3})
    assert conv.candidates[0][0].shape == [2, 3, 32, 32]
    assert "(N, C, H, W)" in conv.reason
    lin = shapes.infer_candidates("fc", "Linear", {"in_features": 7})
    assert lin.candidates[0][0].shape == [2, 7]
    emb = shapes.infer_candidates("emb", "Embedding", {"num_embeddings": 50})
    assert emb.candidates[0][0].dtype == "int64" and emb.high == 50
    lstm = shapes.infer_candidates("rnn", "LSTM", {"input_size": 5, "batch_first": True})
    assert lstm.candidates[0][0].shape == [2, 16, 5]
    assert shapes.infer_candidates("x", "MultiheadAttention", {}) is None


# --------------------------------------------------------------------------- config


def test_config_defaults_and_models(tmp_path):
    cfg_file = tmp_path / "pyproject.toml"
    cfg = config.load({
        "timeout": 5,
        "memory-limit": "2GiB",
        "models": {"models/net.py:Net": {"args": [3], "kwargs": {"h": 4},
                                         "input-shape": [[2, 3], [2, 4]], "dtype": ["int64", "float32"]}},
    }, str(cfg_file))
    assert cfg.timeout == 5 and cfg.memory_limit == 2 << 30 and cfg.device == "meta"
    (tmp_path / "models").mkdir()
    net = tmp_path / "models" / "net.py"
    net.write_text("")
    entry = cfg.model_for_file(net, "Net")
    assert entry.args == [3] and entry.kwargs == {"h": 4}
    assert [(s.shape, s.dtype) for s in entry.inputs] == [([2, 3], "int64"), ([2, 4], "float32")]
    assert cfg.model_for_file(net, "Other") is None
    assert config.load(None).timeout == 60
    assert config.load({"memory-limit": "none"}).memory_limit is None
    assert config.load({"memory-limit": 512}).memory_limit == 512 << 20


@pytest.mark.parametrize("table, key", [
    ({"timeout": 0}, "trace.timeout"),
    ({"timeout": "fast"}, "trace.timeout"),
    ({"device": "tpu"}, "trace.device"),
    ({"memory-limit": "lots"}, "trace.memory-limit"),
    ({"colour": 1}, "trace.colour"),
    ({"models": {"net.py": {}}}, 'trace.models."net.py"'),
    ({"models": {"net.py:Net": {"args": "3"}}}, 'trace.models."net.py:Net".args'),
    ({"models": {"net.py:Net": {"input-shape": [2, "x"]}}}, 'trace.models."net.py:Net".input-shape'),
    ({"models": {"net.py:Net": {"input-shape": [2], "dtype": "complex7"}}}, 'trace.models."net.py:Net".dtype'),
    ({"models": {"net.py:Net": {"shape": [2]}}}, 'trace.models."net.py:Net".shape'),
])
def test_config_errors_name_the_key(table, key):
    with pytest.raises(ConfigError) as info:
        config.load(table, "pyproject.toml")
    assert info.value.key == key
    assert str(info.value).startswith("pyproject.toml: ")


# --------------------------------------------------------------------------- targets


def test_parse_target_forms(in_repo):
    t = parse_target("tests/trace/models/cnn.py:GoodCNN")
    assert t.file == MODELS / "cnn.py" and t.attr == "GoodCNN"
    m = parse_target("tests.trace.models.misc:make_classifier")
    assert m.module == "tests.trace.models.misc" and m.source == MODELS / "misc.py"


@pytest.mark.parametrize("text, match", [
    ("cnn.py", "expected path/to/file.py:ClassName"),
    ("tests/trace/models/nope.py:Net", "no such file"),
    ("tests/trace/models/cnn.py:Good-CNN", "not a class or function name"),
    ("not a module:Net", "neither a .py file nor a module name"),
])
def test_parse_target_errors(in_repo, text, match):
    with pytest.raises(UsageError, match=match):
        parse_target(text)


# --------------------------------------------------------------------------- locate


def test_find_definition_variants(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1: nn.Linear = nn.Linear(4, 8)
                self.features = nn.Sequential(
                    nn.Conv2d(3, 8, 3),
                    nn.ReLU(),
                    nn.Conv2d(16, 8, 3),
                )
                self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Linear(3, 3)])
                self.add_module("head", nn.Linear(8, 2))
                setattr(self, "tail", nn.Linear(2, 2))

            class Inner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(1, 1)
    '''))
    fc1 = locate.find_definition(src, "Net", ["fc1"])
    assert (fc1.line, fc1.column) == (6, 9) and fc1.code.startswith("self.fc1")
    conv = locate.find_definition(src, "Net", ["features", "2"])
    assert (conv.line, conv.column, conv.code) == (10, 13, "nn.Conv2d(16, 8, 3),")
    assert conv.end_column == conv.column + len("nn.Conv2d(16, 8, 3)")
    assert locate.find_definition(src, "Net", ["blocks", "1"]).code.startswith("self.blocks")
    assert locate.find_definition(src, "Net", ["blocks", "1"]).column == 55
    assert locate.find_definition(src, "Net", ["head"]).line == 13
    assert locate.find_definition(src, "Net", ["tail"]).line == 14
    assert locate.find_definition(src, "Net.Inner", ["fc1"]).line == 19
    assert locate.find_definition(src, "Net", ["missing"]) is None
    assert locate.find_class(src, "Net")[1].line == 3


def test_line_location_columns(tmp_path):
    src = tmp_path / "f.py"
    src.write_text("def f(x):\n    return x.view(-1, 3)\n")
    loc = locate.line_location(src, 2, 11, 24)
    assert (loc.line, loc.column, loc.end_column) == (2, 12, 25)
    plain = locate.line_location(src, 2)
    assert (plain.column, plain.end_column, plain.code) == (5, 25, "return x.view(-1, 3)")


def test_describe_values():
    assert report.describe_args([{"shape": [2, 3], "dtype": "float32"},
                                 {"shape": [2], "dtype": "int64"}]) == "[2, 3], [2] int64"
    assert report.describe_value([{"shape": [1], "dtype": "float32"}, {"value": None}]) == "([1], None)"
    assert report.describe_args([{"name": "mask", "value": {"shape": [2], "dtype": "bool"}}]) == "mask=[2] bool"
    assert report.human_bytes(3 * 1024**3) == "3.0 GiB"


# --------------------------------------------------------------------------- command usage errors


def _args(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("argv, match", [
    (["tests/trace/models/cnn.py:GoodCNN", "--args", "{"], "--args: not valid JSON"),
    (["tests/trace/models/cnn.py:GoodCNN", "--args", '{"a": 1}'], "expected a JSON list"),
    (["tests/trace/models/cnn.py:GoodCNN", "--kwargs", "[1]"], "expected a JSON object"),
    (["tests/trace/models/cnn.py:GoodCNN", "--dtype", "int64"], "--dtype needs --input-shape"),
    (["tests/trace/models/cnn.py:GoodCNN", "--input-shape", "4,y"], "--input-shape/--dtype"),
    (["tests/trace/models/cnn.py:GoodCNN", "--timeout", "0"], "--timeout must be a positive"),
    (["tests/trace/models/cnn.py:GoodCNN", "--memory-limit", "huge"], "--memory-limit"),
    (["tests/trace/models/missing.py:Net"], "no such file"),
])
def test_command_usage_errors(in_repo, argv, match):
    pytest.importorskip("torch")  # past the torch check, the arguments are validated
    with pytest.raises(UsageError, match=match):
        command.run(_args(*argv), {}, None)


def test_add_arguments_leaves_cli_owned_options_alone():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    parser.add_argument("--format", choices=("text", "json", "sarif", "table"), default="text")
    command.add_arguments(parser)  # no argparse conflict
    assert parser.parse_args(["x.py:A", "--format", "json"]).format == "json"


# --------------------------------------------------------------------------- torch missing


def test_trace_without_torch_is_a_usage_error(in_repo, monkeypatch):
    real = command.importlib.util.find_spec
    monkeypatch.setattr(command.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(UsageError, match=r"install torchlint\[trace\]"):
        command.run(_args("tests/trace/models/cnn.py:GoodCNN"), {}, None)
    from torchlint.trace import confirm

    with pytest.raises(UsageError, match=r"install torchlint\[trace\]"):
        confirm.apply_trace([], [MODELS / "cnn.py"], {})


NO_TORCH_SHIM = '''
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return None
sys.meta_path.insert(0, _NoTorch())
'''


@pytest.fixture
def no_torch_env(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(NO_TORCH_SHIM)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def test_parent_modules_never_import_torch(no_torch_env):
    code = textwrap.dedent('''
        import sys
        import torchlint.trace, torchlint.trace.command, torchlint.trace.confirm
        import torchlint.trace_settings, torchlint.trace.locate, torchlint.trace.report
        import torchlint.trace.runner, torchlint.shapes, torchlint.trace.target
        try:
            import torch
        except ModuleNotFoundError:
            pass
        else:
            raise SystemExit("shim failed")
        assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules)
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", code], env=no_torch_env, capture_output=True,
                         text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _stdlib_sitecustomize() -> bool:
    """The interpreter's standard library has a sitecustomize of its own (Debian's and
    Ubuntu's system Pythons): the trace child, which puts PYTHONPATH after the standard
    library, imports that one and never the shim."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return (stdlib / "sitecustomize.py").exists()


@pytest.mark.skipif(_stdlib_sitecustomize(), reason="the standard library's sitecustomize shadows the shim "
                    "in the trace child (its PYTHONPATH comes after the standard library)")
def test_child_without_torch_reports_install_hint(in_repo, no_torch_env, monkeypatch):
    """find_spec says torch is there, but the child cannot import it: still exit 2."""
    monkeypatch.setattr(os, "environ", no_torch_env)
    monkeypatch.setattr(command.importlib.util, "find_spec", lambda name, *a: object())
    with pytest.raises(UsageError, match=r"install torchlint\[trace\]"):
        command.run(_args("tests/trace/models/cnn.py:GoodCNN"), {}, None)


def test_check_trace_candidates(tmp_path):
    from torchlint.trace.confirm import candidate_classes

    src = tmp_path / "models.py"
    src.write_text(textwrap.dedent('''
        import torch
        from torch import nn
        from .base import BaseThing

        class A(nn.Module): pass
        class B(A): pass
        class C(torch.nn.Sequential): pass
        class D(BaseThing): pass
        class E(Exception): pass
        class F(torch.utils.data.Dataset): pass
        class G(LightningModule): pass
        class H: pass
    '''))
    assert candidate_classes(src) == ["A", "B", "C", "D", "G"]
    setup = tmp_path / "setup.py"
    setup.write_text(src.read_text())
    assert candidate_classes(setup) == []  # never imported: side effects by design
    plain = tmp_path / "plain.py"
    plain.write_text("class Net(Module):\n    pass\n")  # no torch in sight
    assert candidate_classes(plain) == []


def test_interrupted_parent_kills_the_child(monkeypatch, tmp_path):
    """Ctrl-C while waiting: the child (in its own session) must not be left running."""
    from torchlint.trace import runner

    spawned = []
    real_popen = runner.subprocess.Popen

    def popen(*args, **kwargs):
        proc = real_popen([sys.executable, "-c", "import time; time.sleep(60)"], **{
            k: v for k, v in kwargs.items() if k != "env"})
        spawned.append(proc)
        return proc

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    monkeypatch.setattr(runner, "_watch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run_jobs([{"id": "a"}], timeout=5, cwd=tmp_path)
    assert spawned and spawned[0].poll() is not None


def test_check_trace_candidates_across_files(tmp_path, monkeypatch):
    """A subclass of a project class that subclasses nn.Module, in a file that never says
    torch: the project index finds it (the old regex did not)."""
    from torchlint.engine import analyze_source
    from torchlint.trace import confirm

    pkg = tmp_path / "models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("import torch.nn as nn\n\n\nclass Encoderish(nn.Module):\n    pass\n\n\n"
                                 "class Config:\n    pass\n")
    (pkg / "head.py").write_text("from models.base import Config, Encoderish\n\n\n"
                                 "class Classifier(Encoderish):\n    pass\n\n\nclass Settings(Config):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    linted = {p.resolve() for p in pkg.glob("*.py")}
    cfg = config.load({}, None)
    made = confirm._records_by_path(linted, None, tmp_path)
    jobs, _ = confirm.plan_jobs(linted, made, cfg, tmp_path)
    assert [j["target"]["display"] for j in jobs] == ["models/base.py:Encoderish", "models/head.py:Classifier"]
    assert confirm.candidate_classes(pkg / "head.py") == []  # alone, the file says nothing

    # check --trace hands over the run's records: nothing is parsed again
    records = [analyze_source(f"models/{p.name}", p.read_bytes(), frozenset()).record for p in sorted(linted)]
    monkeypatch.setattr(confirm, "file_record", lambda *a: pytest.fail("parsed again"))
    handed = confirm._records_by_path(linted, records, tmp_path)
    assert [j["target"]["display"] for j in confirm.plan_jobs(linted, handed, cfg, tmp_path)[0]] == \
        ["models/base.py:Encoderish", "models/head.py:Classifier"]
