"""Errors as values: every problem with a pack, a cases file or a deployment file is a
:class:`PolicyError` that names the file, line and column, so a user can jump straight to it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class PolicyError:
    """One reportable problem. ``line``/``col`` are 1-based; 0 means the position is unknown (for
    example a ``--param`` flag, which has no file)."""

    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.col}: {self.message}"

    def to_json(self) -> dict[str, object]:
        """The JSON shape used in ``--format json`` outputs."""
        return {"file": self.file, "line": self.line, "col": self.col, "message": self.message}
