"""``torchlint.positions`` must give exactly LibCST's ``PositionProvider`` ranges."""

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.context import iter_nodes
from torchlint.positions import Positions

SNIPPETS = [
    "",
    "x",
    "x = 1\n",
    "import torch\r\nfor x in y:\r\n    loss.backward()\r\n",
    "a = 1\rb = 2\r",
    "@torch.no_grad()\n# comment\ndef f(a, *, b=(1,\n    2)):\n\treturn (a  )  # tail\n\n\n",
    "s = 'héllo ✓'; t = f'{s!r:>10}'\nclass C(nn.Module):\n    '''doc\n    string'''\n    x: int = 3\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    with (open(p) as f, g()):\n        y = [i for i in f if i]\n",
    "x = 1  # no newline at end",
    "\n\n\n# only comments\n",
]


def _check(code: str) -> None:
    module = cst.parse_module(code)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = Positions(module)
    for node in iter_nodes(module):
        assert ours[node] == expected[node], (type(node).__name__, code)


@pytest.mark.parametrize("code", SNIPPETS)
def test_same_ranges_as_libcst(code):
    _check(code)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS[2:]), min_size=1, max_size=4), st.sampled_from(["\n", "\r\n"]))
def test_same_ranges_on_combined_files(parts, newline):
    code = "".join(p if p.endswith(("\n", "\r")) else p + "\n" for p in parts).replace("\r\n", "\n").replace("\r", "\n")
    _check(code.replace("\n", newline))
