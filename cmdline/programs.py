"""What programs do, as far as the readers need to know: one table shared by the shell reader and
self-protection, so a fact about a program is written down once.

A program missing here is read as its argv says; these tables only add what its name alone tells
(that ``sh`` runs its ``-c`` string, that ``find -exec`` runs a command).
"""

from __future__ import annotations

from typing import Final

SHELLS: Final[frozenset[str]] = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash"})
"""POSIX-style shells: ``-c LINE`` is a shell line, and without ``-c`` or a script they read one
from stdin."""

FIND_EXEC: Final[frozenset[str]] = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
"""``find`` actions that run a command (up to ``;`` or ``+``)."""
