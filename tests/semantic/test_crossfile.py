"""ProjectCalls: one property of imported project functions, followed across files through
the per-file summaries a rule stores (TL006's seeding summaries here)."""

from __future__ import annotations

import textwrap

from torchlint.engine import analyze_source
from torchlint.project import Project
from torchlint.semantic.crossfile import ProjectCalls
from torchlint.semantic.seeding import known_generators


def project(files: dict[str, str]) -> Project:
    return Project([analyze_source(path, textwrap.dedent(text).encode(), frozenset({"TL006"})).record
                    for path, text in files.items()])


FILES = {
    "pkg/seeds.py": """
        import numpy as np
        import torch
        torch.manual_seed(1)

        def numpy_only(seed):
            np.random.seed(seed)

        def both(seed):
            numpy_only(seed)
            torch.manual_seed(seed)
    """,
    "pkg/helpers.py": """
        from pkg.seeds import both

        class Setup:
            def run(self):
                both(0)

        def unknown():
            pass
    """,
    "pkg/train.py": """
        from pkg.helpers import Setup, unknown
    """,
}


def calls(proj: Project) -> ProjectCalls:
    return ProjectCalls(proj, "TL006", known=known_generators, fallback=lambda q: {"guess"})


def test_values_follow_same_file_and_imported_callees_and_methods():
    proj = project(FILES)
    train = proj.record("pkg/train.py")
    assert calls(proj).values("pkg.helpers.Setup.run", train) == {"torch", "numpy"}
    assert calls(proj).values("pkg.seeds.numpy_only", train) == {"numpy"}
    # A defined function with no summary does nothing; an unknown name gets the fallback.
    assert calls(proj).values("pkg.helpers.unknown", train) == set()
    assert calls(proj).values("pkg.helpers.missing", train) == {"guess"}
    assert calls(proj).values("elsewhere.set_seed", train) == {"guess"}
    # A library name is answered by the table, never resolved.
    assert calls(proj).values("torch.manual_seed", train) == {"torch"}


def test_on_import_and_seen_functions_add_nothing_twice():
    proj = project(FILES)
    train = proj.record("pkg/train.py")
    resolver = calls(proj)
    assert resolver.on_import("pkg.seeds", train) == {"torch"}
    assert resolver.on_import("pkg.helpers", train) == set()
    assert resolver.values("pkg.seeds.both", train) == {"torch", "numpy"}
    assert resolver.values("pkg.seeds.both", train) == set()  # already followed by this instance


def test_call_shapes_and_the_parameters_they_may_pass():
    import libcst as cst

    from torchlint.semantic.crossfile import call_shape, may_pass, merge_shapes, parameter_positions

    def call(text: str) -> cst.Call:
        return cst.parse_expression(text)

    assert call_shape(call("f(a, b, deterministic=True)")) == [["deterministic"], 2, False]
    assert call_shape(call("f(*args, k=1)")) == [["k"], 0, True]
    assert merge_shapes(None, [["a"], 1, False]) == [["a"], 1, False]
    assert merge_shapes([["a"], 3, False], [["b"], 1, True]) == [["a", "b"], 3, True]
    module = cst.parse_module(
        "def f(model, opt, device=None, *, deterministic=False): pass\n"
        "class C:\n"
        "    def m(self, x, flag=False): pass\n"
        "    @staticmethod\n"
        "    def s(x, flag=False): pass\n")
    f, cls = module.body[0], module.body[1]
    method, static = cls.body.body
    assert parameter_positions(f, ("device", "deterministic"), None) == [["device", 2], ["deterministic", -1]]
    assert parameter_positions(method, ("flag",), "self") == [["flag", 1]]  # self is not the caller's
    assert parameter_positions(static, ("flag",), None) == [["flag", 1]]
    positions = parameter_positions(f, ("device",), None)
    assert may_pass(None, positions)  # a call nobody stored may pass anything
    assert not may_pass([[], 2, False], positions)
    assert may_pass([[], 3, False], positions)
    assert may_pass([["device"], 0, False], positions)
    assert may_pass([[], 0, True], positions)
    assert not may_pass([["deterministic"], 2, False], positions)


def test_guarded_part_counts_only_for_calls_that_may_pass_its_parameter():
    proj = project({
        "pkg/seeds.py": """
            import torch

            def setup(cfg, seed=None):
                configure(cfg)
                if seed is not None:
                    torch.manual_seed(seed)

            def configure(cfg):
                pass
        """,
        "pkg/train.py": "from pkg.seeds import setup\n",
    })
    train = proj.record("pkg/train.py")
    assert calls(proj).values("pkg.seeds.setup", train, shape=[[], 1, False]) == set()
    assert calls(proj).values("pkg.seeds.setup", train, shape=[["seed"], 1, False]) == {"torch"}
    assert calls(proj).values("pkg.seeds.setup", train, shape=[[], 2, False]) == {"torch"}
    assert calls(proj).values("pkg.seeds.setup", train) == {"torch"}  # shape unknown
    # One resolver: the part left out for one call is still added for a later call that passes it.
    resolver = calls(proj)
    assert resolver.values("pkg.seeds.setup", train, shape=[[], 1, False]) == set()
    assert resolver.values("pkg.seeds.setup", train, shape=[["seed"], 1, False]) == {"torch"}
