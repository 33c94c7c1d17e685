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
