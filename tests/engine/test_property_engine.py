"""Property test: generated programs through the whole engine, every rule enabled.

hypothesmith (as LibCST's own test suite uses it) builds syntactically valid Python from
CPython's grammar (``from_grammar``) and from LibCST's node types (``from_node``). For each
program the engine must raise nothing, report no internal error (``RuleError``), and give
the same findings when run twice.
"""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from torchlint import checks
from torchlint.engine import analyze_source

# hypothesmith compiles what it generates; CPython warns about code such as ``1()``.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

ALL_RULES = frozenset(r.code for r in checks.discover())
# Text every rule's cheap pre-check looks for, so that generated code reaches every rule.
KEYWORDS = (
    "import torch\nimport torch.nn as nn\n"
    "class M(nn.Module):\n    def forward(self, x):\n        return self.fc(x)\n"
    "model.eval()\noptimizer.zero_grad()\nloss.backward()\noptimizer.step()\nlr = 0.1\n"
    "torch.manual_seed(0)\n"
)

def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        # No "explain" phase: it re-runs a failing example under a coverage tracer, which
        # takes many minutes on these programs; the shrunk example is reported all the same.
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


def _lint_twice(code: str) -> None:
    for source in (code, KEYWORDS + code):
        data = source.encode("utf-8", "surrogatepass")
        first = analyze_source("generated.py", data, ALL_RULES)
        second = analyze_source("generated.py", data, ALL_RULES)
        assert first.errors == [], [(e.rule, e.error) for e in first.errors]
        assert first.findings == second.findings
        assert first.record.to_json() == second.record.to_json()


@pytest.mark.slow
@_settings(150)
@given(hypothesmith.from_grammar())
def test_programs_from_the_grammar(code):
    _lint_twice(code)


@pytest.mark.slow
@_settings(50)  # slower to generate: about half its draws are discarded
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes(code):
    _lint_twice(code)
