"""What the interpreter readers report about one piece of code, and the values they share."""

from __future__ import annotations

from dataclasses import dataclass, field

UNKNOWN = "$__"
"""The value of an expression the analysis cannot resolve (reads like an unset shell variable)."""

MAX_CODE_CHARS = 64 * 1024
"""Longest code analysed; longer code is cut (the shell module bounds the whole line anyway)."""

SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "csh", "tcsh", "cmd",
                          "cmd.exe",
                          "powershell", "pwsh"})  # fmt: skip


@dataclass(slots=True)
class CodeAnalysis:
    """What one piece of code does: shell lines and argvs it runs, its other effects, and code it
    hands back to its own interpreter (``exec("...")``) as ``(language, code)``: the caller reads
    that again under its nesting budget."""

    shell_lines: list[str] = field(default_factory=list)
    argvs: list[list[str]] = field(default_factory=list)
    effects: list[dict[str, str]] = field(default_factory=list)
    nested: list[tuple[str, str]] = field(default_factory=list)
