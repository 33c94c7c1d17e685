"""TL005 unused-layer beyond the embedded cases: class hierarchies across files, single-file
linting, options, messages, the facts contract, fixtures and the shape trace."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from torchlint.checks.tl005_unused_layer import torch_nn_class
from torchlint.engine import analyze_source
from torchlint.testing import lint_snippet, lint_tree

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def _project(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def tl005(files: dict[str, str], **options) -> list:
    return lint_tree(files, select=["TL005"], options={"TL005": options} if options else None)


def where(findings) -> list[tuple[str, int, str, str]]:
    return sorted((f.path, f.line, f.extra["class"], f.extra["attribute"]) for f in findings)


# -- fixtures ------------------------------------------------------------------------------

def test_buggy_fixture_reports_the_unused_dropout():
    findings = lint_tree(_project("buggy_project"), select=["TL005"], dedent=False)
    assert where(findings) == [("model.py", 16, "ConvNet", "dropout")]
    message = findings[0].message
    assert "`ConvNet.dropout` is built but never applied" in message
    assert "DistributedDataParallel" not in message  # a Dropout has no parameters


def test_clean_fixture_is_clean():
    assert lint_tree(_project("clean_project"), dedent=False) == []
    assert lint_tree(_project("clean_project"), select=["TL005"], dedent=False) == []


# -- class hierarchies across files ----------------------------------------------------------

BASE = """
    import torch.nn as nn

    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3)
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            return self.stem(x).mean((2, 3))
"""


def test_subclass_in_another_file_that_reads_the_layer_is_a_use():
    child = """
        from .base import Base

        class Child(Base):
            def forward(self, x):
                return self.head(super().forward(x))
    """
    assert tl005({"pkg/base.py": BASE, "pkg/child.py": child}) == []
    # The same base linted alone: no subclass is visible, so the head is unused.
    assert where(tl005({"pkg/base.py": BASE})) == [("pkg/base.py", 8, "Base", "head")]


def test_subclass_in_another_file_that_does_not_read_it_leaves_the_finding():
    child = """
        from pkg.base import Base

        class Child(Base):
            def extra(self, x):
                return self.stem(x)
    """
    assert where(tl005({"pkg/base.py": BASE, "pkg/child.py": child})) == [("pkg/base.py", 8, "Base", "head")]


def test_base_in_another_linted_file_reads_the_subclass_layer():
    base = """
        import torch.nn as nn

        class Template(nn.Module):
            def forward(self, x):
                return self.classifier(self.features(x))
    """
    child = """
        import torch.nn as nn
        from models.template import Template

        class Net(Template):
            def __init__(self):
                super().__init__()
                self.features = nn.Linear(4, 4)
                self.classifier = nn.Linear(4, 2)
                self.unused = nn.Linear(4, 4)
    """
    findings = tl005({"src/models/template.py": base, "src/models/net.py": child})
    assert where(findings) == [("src/models/net.py", 10, "Net", "unused")]


def test_base_from_a_file_that_is_not_linted_is_never_reported():
    child = """
        import torch.nn as nn
        from .template import Template

        class Net(Template):
            def __init__(self):
                super().__init__()
                self.classifier = nn.Linear(4, 2)

            def forward(self, x):
                return x
    """
    assert tl005({"models/net.py": child}) == []


def test_dynamic_access_in_a_base_in_another_file_covers_the_subclass():
    base = """
        import torch.nn as nn

        class Chain(nn.Module):
            def forward(self, x):
                for layer in self.children():
                    x = layer(x)
                return x
    """
    child = """
        import torch.nn as nn
        from .chain import Chain

        class Net(Chain):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(4, 4)
    """
    assert tl005({"m/chain.py": base, "m/net.py": child}) == []


def test_re_exported_base_through_package_init():
    init = "from .base import Base\n"
    child = """
        from pkg import Base

        class Child(Base):
            def forward(self, x):
                return self.head(x)
    """
    assert tl005({"pkg/__init__.py": init, "pkg/base.py": BASE, "app/child.py": child}) == []


def test_subclass_with_a_third_party_base_in_another_file_protects_the_base():
    child = """
        from pkg.base import Base
        from huggingface_hub import PyTorchModelHubMixin

        class HubModel(Base, PyTorchModelHubMixin):
            pass
    """
    assert tl005({"pkg/base.py": BASE, "pkg/hub.py": child}) == []


def test_sibling_subclass_reads_do_not_count():
    base = """
        import torch.nn as nn

        class Base(nn.Module):
            def forward(self, x):
                return self.body(x)
    """
    files = {
        "m/base.py": base,
        "m/a.py": """
            import torch.nn as nn
            from .base import Base

            class A(Base):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Linear(4, 4)
                    self.aux = nn.Linear(4, 4)

                def auxiliary(self, x):
                    return self.aux(x)
        """,
        "m/b.py": """
            import torch.nn as nn
            from .base import Base

            class B(Base):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Linear(4, 4)
                    self.aux = nn.Linear(4, 4)
        """,
    }
    assert where(tl005(files)) == [("m/b.py", 9, "B", "aux")]


# -- project classes as layers -----------------------------------------------------------------

BLOCKS = """
    import torch.nn as nn

    class ResBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return x + self.conv(x)

    class Swish(nn.Module):
        def forward(self, x):
            return x * x.sigmoid()

    class Config:
        def __init__(self):
            self.depth = 2
"""

NET = """
    import torch.nn as nn
    from .blocks import ResBlock, Swish, Config

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3)
            self.block = ResBlock()
            self.act = Swish()
            self.cfg = Config()

        def forward(self, x):
            return self.stem(x)
"""


def test_project_classes_that_are_modules_are_layers():
    # A parameter-free project layer nothing asked for (no __init__ argument builds or guards it)
    # is a leftover that changes nothing: not reported.
    findings = tl005({"net/blocks.py": BLOCKS, "net/model.py": NET})
    assert where(findings) == [("net/model.py", 9, "Net", "block")]
    assert "DistributedDataParallel" in findings[0].message  # ResBlock has a conv
    # Built because an argument asks for it: the Swish it was built for never runs.
    guarded = NET.replace("def __init__(self):", "def __init__(self, act=True):").replace(
        "self.act = Swish()", "self.act = Swish() if act else None")
    findings = tl005({"net/blocks.py": BLOCKS, "net/model.py": guarded})
    by_attr = {f.extra["attribute"]: f.message for f in findings}
    assert sorted(by_attr) == ["act", "block"]
    assert "so the Swish it was built for never runs" in by_attr["act"]
    assert "DistributedDataParallel" not in by_attr["act"]


def test_project_class_from_a_file_that_is_not_linted_is_not_known_to_be_a_layer():
    assert tl005({"net/model.py": NET}) == []


# -- single-file linting, options, messages, suppression ---------------------------------------

def test_single_file_lint_reports_what_the_file_shows():
    code = """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.spare = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)
    """
    findings = lint_snippet(code, select=["TL005"], path="solo.py")
    assert where(findings) == [("solo.py", 8, "Net", "spare")]
    (finding,) = findings
    assert finding.column == 9 and finding.end_line == 8
    assert finding.message == (
        "`Net.spare` is built but never used: nothing outside __init__ in Net, its bases or subclasses reads "
        "`self.spare`, so its parameters get no gradient, waste memory and checkpoint space, and "
        "DistributedDataParallel fails with 'Expected to have finished reduction in the prior iteration' "
        "unless find_unused_parameters=True; use it in forward or delete it"
    )


IGNORED = """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.teacher = nn.Linear(4, 4)
            self.aux_head = nn.Linear(4, 4)
            self.aux = nn.Linear(4, 4)
            self.extra = nn.Linear(4, 4)

        def forward(self, x):
            return x
"""


def test_ignore_names_takes_exact_names_and_patterns():
    everything = {f.extra["attribute"] for f in tl005({"m.py": IGNORED})}
    assert everything == {"teacher", "aux_head", "aux", "extra"}
    kept = {f.extra["attribute"] for f in tl005({"m.py": IGNORED}, **{"ignore-names": ["teacher", "aux_*"]})}
    assert kept == {"aux", "extra"}


def test_ignore_names_is_read_from_pyproject(tmp_path, monkeypatch):
    from torchlint.cli import main

    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.unused-layer]\nignore-names = ["aux*"]\n')
    (tmp_path / "m.py").write_text(textwrap.dedent(IGNORED))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.json"
    assert main(["check", "--no-cache", "--select", "TL005", "--format", "json", "-o", str(out), "m.py"]) == 1
    assert sorted(d["line"] for d in json.loads(out.read_text())) == [7, 10]


def test_noqa_on_the_assignment_silences_it():
    code = """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.spare = nn.Linear(4, 4)  # noqa: TL005
                self.other = nn.Linear(4, 4)

            def forward(self, x):
                return x
    """
    assert [f.extra["attribute"] for f in lint_snippet(code, select=["TL005"])] == ["other"]


def test_findings_carry_class_and_attribute_for_the_trace():
    (finding,) = lint_snippet(
        """
        import torch.nn as nn

        class Outer:
            class Inner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(2, 2)

                def forward(self, x):
                    return x
        """,
        select=["TL005"],
    )
    assert finding.extra == {"class": "Inner", "attribute": "fc"}
    assert finding.to_dict()["extra"] == {"class": "Inner", "attribute": "fc"}


# -- the per-file facts ------------------------------------------------------------------------

def test_facts_are_json_and_only_hold_candidates_not_read_in_the_class():
    code = textwrap.dedent(NET).encode()
    result = analyze_source("net/model.py", code, frozenset({"TL005"}), {})
    facts = result.record.facts["TL005"]
    assert json.loads(json.dumps(facts)) == facts
    (net,) = facts["classes"]
    assert net["bases"] == [["q", "torch.nn.Module"]]
    # stem is read in forward; whether Config() builds a module is settled in the project pass.
    assert [layer[0] for layer in net["layers"]] == ["act", "block", "cfg"]
    assert net["runs"] is True and "stem" in net["reads"]


def test_a_file_without_any_class_or_model_use_is_skipped():
    result = analyze_source("util.py", b"def f(x):\n    return x + 1\n", frozenset({"TL005"}), {})
    assert "TL005" not in result.record.facts


@pytest.mark.parametrize(
    ("qualified", "expected"),
    [
        ("torch.nn.Linear", "Linear"),
        ("torch.nn.modules.conv.Conv2d", "Conv2d"),
        ("torch.nn.Parameter", None),
        ("torch.nn.init.zeros_", None),
        ("torch.nn.functional.relu", None),
        ("torch.nn.utils.rnn.PackedSequence", None),
        ("torch.nn.parallel.DistributedDataParallel", None),
        ("timm.layers.Mlp", None),
    ],
)
def test_torch_nn_class(qualified, expected):
    assert torch_nn_class(qualified) == expected


# -- the shape trace ---------------------------------------------------------------------------

@pytest.mark.slow  # imports torch in the trace's child process
def test_check_trace_confirms_a_real_finding(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from torchlint.cli import main

    monkeypatch.chdir(REPO)
    out = tmp_path / "out.json"
    code = main(["check", "--isolated", "--no-cache", "--trace", "--select", "TL005", "--format", "json",
                 "-o", str(out), "tests/trace/models/misc.py"])
    assert code == 1
    findings = json.loads(out.read_text())
    assert [(d["line"], d.get("confirmed")) for d in findings] == [(12, True)]
    assert "`UnusedLayer.extra`" in findings[0]["message"]
