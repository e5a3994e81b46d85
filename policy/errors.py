"""Errors as values: every problem with a pack, a cases file or a deployment file is a
:class:`PolicyError` that names the file, line and column, so a user can jump straight to it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, order=True)
class PolicyError:
    """One reportable problem. ``line``/``col`` are 1-based; 0 means the position is unknown (for
    example a ``--param`` flag, which has no file). ``source_line`` is the file's line at ``line``
    when the error points inside an expression, shown with a caret under ``col`` (cel-go's style);
    it is not part of the error's identity."""

    file: str
    line: int
    col: int
    message: str
    source_line: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.col}: {self.message}"

    def display(self) -> str:
        """``FILE:LINE:COL: message``, then the source line and a caret under the column."""
        if self.source_line is None or self.line <= 0 or self.col <= 0:
            return str(self)
        return f"{self}\n | {self.source_line}\n | {caret_padding(self.source_line, self.col)}^"

    def to_json(self) -> dict[str, object]:
        """The JSON shape used in ``--format json`` outputs."""
        out: dict[str, object] = {
            "file": self.file, "line": self.line, "col": self.col, "message": self.message
        }  # fmt: skip
        if self.source_line is not None:
            out["source_line"] = self.source_line
        return out


def caret_padding(line: str, col: int) -> str:
    """What goes before a caret under 1-based ``col`` of ``line``: tabs stay tabs, wide
    characters (CJK) take two columns, so the caret lines up in a terminal."""
    pad: list[str] = []
    for char in line[: max(col - 1, 0)]:
        if char == "\t":
            pad.append("\t")
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            pad.append("  ")
        else:
            pad.append(" ")
    return "".join(pad)
