"""Dedupe by shape, and keep secrets out: two filters every extracted call goes through.

A run repeats itself (``npm test`` forty times, ``sed -n 1,200p`` on every file); the corpus wants
each SHAPE once, so a command's shape is its programs, subcommands and flags with the operands
abstracted, and a file call's shape is its tool, the file's kind and the project.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

_SEPARATORS = re.compile(r"\|\||&&|[;|\n]")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9:_-]*$")
_DIGITS = re.compile(r"\d+")

# Credentials a transcript may carry in a command or a file it wrote: an entry holding one is
# dropped (never rewritten), so the corpus publishes no one's token.
_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{20,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]{15,}\.|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|(?:postgres|postgresql|mysql|mongodb(?:\+srv)?|redis)://[^\s:/@]+:[^\s@/]{3,}@"
    r"|(?i:(?:password|passwd|secret|api[_-]?key|token)\s*[=:]\s*['\"]?[A-Za-z0-9/+_-]{12,}))"
)


def has_secret(value: Any) -> bool:
    """Whether any string inside the call looks like a live credential."""
    return bool(_SECRET.search(repr(value)))


def _segment_shape(segment: str) -> str:
    try:
        words = shlex.split(segment, posix=True)
    except ValueError:
        words = segment.split()
    if not words:
        return ""
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]  # environment assignments
    if not words:
        return "env"
    program = words[0].rsplit("/", 1)[-1]
    shape = [program]
    if len(words) > 1 and _SUBCOMMAND.match(words[1]):
        shape.append(words[1])
    shape.extend(sorted({_DIGITS.sub("0", w.split("=", 1)[0]) for w in words[1:] if w.startswith("-")}))
    return " ".join(shape)


def command_shape(command: str) -> str:
    """The programs, subcommands and flags of every simple command, operands abstracted."""
    first_line = command.split("<<", 1)[0]
    return " ; ".join(s for part in _SEPARATORS.split(first_line) if (s := _segment_shape(part.strip())))


def file_shape(tool: str, args: dict[str, Any], project: str) -> str:
    """The tool, the kind of file (its extension or name) and the project it was made in."""
    path = str(args.get("path", ""))
    name = re.split(r"[\\/]", path)[-1]
    kind = name.rsplit(".", 1)[-1] if "." in name else name
    absolute = path.startswith(("/", "~")) or bool(re.match(r"^[A-Za-z]:\\", path))
    return f"{tool}|{project}|{kind}|{'abs' if absolute else 'rel'}"
