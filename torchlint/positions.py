"""Source positions of LibCST nodes, computed only when a file has something to report.

LibCST's ``PositionProvider`` (through ``MetadataWrapper``) walks the tree once with a
visitor and once more generating code, splitting every token on newlines to keep a line and
column: on a large file that costs about twice the parse. The same ranges follow from the
character offset alone, which is one addition per token; lines and columns are then read off
the text for the few nodes a rule reports.
"""

from __future__ import annotations

import bisect
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")  # what LibCST's position provider counts as a line break


@dataclass
class _OffsetState(CodegenState):
    offset: int = 0
    starts: list = field(default_factory=list)
    ranges: dict = field(default_factory=dict)
    popped: str = ""

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        # LibCST drops the module's last newline from the code but not from the position
        # count (a module ends at the start of the line after its last): keep it for lines.
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        if node not in self.ranges:  # a syntactic range recorded inside wins
            self.ranges[node] = (start, self.offset)

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None
    ) -> Iterator[None]:
        # No ``finally``: when code generation fails inside (a RecursionError on a deep
        # tree), ``end_node`` has no range, and a KeyError keyed by a node would replace
        # the real error with one whose message is the node's (recursive) repr.
        start = self.offset
        yield
        end = self.offset
        if start_node is not None:
            start = self.ranges[start_node][0]
        if end_node is not None:
            end = self.ranges[end_node][1]
        self.ranges[node] = (start, end)


class Positions:
    """``positions[node]`` is the node's ``CodeRange``, exactly as ``PositionProvider``
    gives it (1-based lines, 0-based columns, whitespace not syntactically owned left out)."""

    def __init__(self, module: cst.Module):
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
        module._codegen(state)
        self._ranges = state.ranges
        code = "".join(state.tokens) + state.popped
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(code)]

    def _position(self, offset: int) -> CodePosition:
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return CodePosition(index + 1, offset - self._line_starts[index])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._ranges[node]
        return CodeRange(self._position(start), self._position(end))
