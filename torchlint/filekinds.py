"""What kind of file a path names: a test file, a config file. A leaf module (no torchlint
imports) so rules, the engine and the file discovery can all ask it."""

from __future__ import annotations

from pathlib import PurePosixPath

TEST_DIRS = {"tests", "test", "testing", "test_utils"}


def is_test_file(path: str) -> bool:
    """Under ``tests/``, ``test/``, ``testing/`` or ``test_utils/``, or named ``test_*.py``,
    ``*_test.py``, ``tests.py`` (unittest's and Django's module of tests; not ``test.py``, which
    research code names its evaluation script), ``conftest.py``: what rules with a ``skip-tests``
    option leave alone."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (any(p in TEST_DIRS for p in parts[:-1]) or name.startswith("test_") or name.endswith("_test.py")
            or name in ("tests.py", "conftest.py"))


CONFIG_DIRS = {"config", "configs"}
CONFIG_FILES = {"config.py", "configs.py", "hparams.py", "hyperparams.py", "settings.py"}
CONFIG_SUFFIXES = ("_config.py", "_configs.py")
CONFIG_FILES_DESCRIPTION = (" or ".join(f"{d}/" for d in sorted(CONFIG_DIRS)) + " directories, "
                            + ", ".join(sorted(CONFIG_FILES) + [f"*{s}" for s in CONFIG_SUFFIXES]))


def is_config_file(path: str) -> bool:
    """Under a config directory, or a config file by name (``CONFIG_FILES_DESCRIPTION``):
    where hyperparameters belong."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else ""
    return any(p in CONFIG_DIRS for p in parts[:-1]) or name in CONFIG_FILES or name.endswith(CONFIG_SUFFIXES)


DEMO_DIRS = {"demo", "demos"}


def is_demo_module(path: str) -> bool:
    """Under a ``demo/`` or ``demos/`` directory: a library's shipped example models
    (``lightning.pytorch.demos``' ``BoringModel``), whose values are fixed on purpose and
    changed by subclassing, not configured."""
    return any(p in DEMO_DIRS for p in PurePosixPath(path.replace("\\", "/")).parts[:-1])


BENCHMARK_DIRS = {"benchmark", "benchmarks", "bench"}


def is_benchmark_file(path: str) -> bool:
    """Named for a benchmark: ``benchmark*.py``, ``bench_*.py``, ``*_benchmark.py``,
    ``*_bench.py``, or under a ``benchmark(s)/``/``bench/`` directory or one named
    ``*_benchmark(s)`` (ignite's ``cifar100_amp_benchmark/``). Whether it times anything is
    the semantic layer's question (``semantic.timing.times_code``)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else ""
    stem = name.rsplit(".", 1)[0].lower()
    if stem.startswith(("benchmark", "bench_")) or stem.endswith(("_benchmark", "_bench")):
        return True
    return any(p.lower() in BENCHMARK_DIRS or p.lower().endswith(("_benchmark", "_benchmarks"))
               for p in parts[:-1])
