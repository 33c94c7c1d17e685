"""The unit of output: one problem at one place in one file."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found in a file.

    ``path`` is relative to the working directory (posix separators); ``line`` and
    ``column`` are 1-based, as are ``end_line``/``end_column`` (the end column is the column
    just past the last character, as ruff reports it).
    """

    rule: str
    name: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    # Set by ``check --trace``: True when the dry-run trace confirmed the finding.
    confirmed: bool | None = None
    # Extra machine-readable facts (never shown in the text formats).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.rule, self.message)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        extra = data.pop("extra")
        if data["confirmed"] is None:
            del data["confirmed"]
        if extra:
            data["extra"] = extra
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        data = dict(data)
        data["severity"] = Severity(data["severity"])
        return cls(**data)
