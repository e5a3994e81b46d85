"""Output for people: colour and progress on a terminal, plain text everywhere else.

Standard library only, so the audit commands (which must not import the policy engine) and the
policy commands share one notion of "is a person watching". Colour follows the common conventions:
never when the stream is not a terminal or ``NO_COLOR`` is set (https://no-color.org), forced on by
``FORCE_COLOR`` (for pagers such as ``less -R``), never with ``TERM=dumb``. Progress goes to stderr,
only when stderr is a terminal, so it never mixes into a report, JSON or a pipe.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Final, TextIO

_RESET: Final = "\x1b[0m"
_STYLES: Final = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}

#: The colour of each word a reader scans for (decisions, verdicts, case results).
DECISION_STYLES: Final = {
    "ALLOW": "green",
    "ACCEPT": "green",
    "ENTER": "green",
    "PASS": "green",
    "INTACT": "green",
    "ASK>OK": "yellow",
    "ASK": "yellow",
    "CONTEXT": "cyan",
    "REDACT": "magenta",
    "WARNING": "yellow",
    "ASK>DENY": "red",
    "DENY": "red",
    "BLOCK": "red",
    "REJECT": "red",
    "ERROR": "red",
    "FAIL": "red",
    "FAILED": "red",
    "DISAGREE": "red",
    "INTEGRITY FAILURE": "red",
    "UNREADABLE INPUT": "red",
    "UNVERIFIED": "red",
    "NOT A LOG": "red",
}


def wants_colour(stream: TextIO) -> bool:
    """True when ``stream`` reaches a person's terminal that should be coloured."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


@dataclass(frozen=True, slots=True)
class Painter:
    """Wraps text in ANSI styles, or returns it unchanged when colour is off."""

    enabled: bool

    @classmethod
    def for_stream(cls, stream: TextIO) -> Painter:
        return cls(wants_colour(stream))

    def paint(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(_STYLES[style] for style in styles)
        return f"\x1b[{codes}m{text}{_RESET}"

    def dim(self, text: str) -> str:
        return self.paint(text, "dim")

    def bold(self, text: str) -> str:
        return self.paint(text, "bold")

    def decision(self, word: str, width: int = 0) -> str:
        """A decision word in its colour, padded to ``width`` outside the escape codes (so columns
        line up with and without colour)."""
        style = DECISION_STYLES.get(word.strip().upper())
        padded = f"{word:<{width}}"
        if style is None:
            return padded
        return self.paint(word, style, "bold") + padded[len(word) :]

    def rules(self, rule_ids: list[str] | tuple[str, ...]) -> str:
        """Rule ids, dimmed: present for whoever looks for them, quiet for whoever does not."""
        return ", ".join(self.dim(rule) for rule in rule_ids)


@dataclass(slots=True)
class Progress:
    """A one-line ``label done/total`` counter on stderr, redrawn at most every 0.1 s, only when
    stderr is a terminal; :meth:`close` erases it. A no-op otherwise, so callers never branch."""

    label: str
    total: int | None = None
    stream: TextIO | None = None
    enabled: bool | None = None
    done: int = 0
    _last: float = field(default=0.0)
    _drawn: bool = False

    def __post_init__(self) -> None:
        if self.stream is None:
            self.stream = sys.stderr
        if self.enabled is None:
            self.enabled = _is_terminal(self.stream)

    def advance(self, step: int = 1, detail: str = "") -> None:
        self.done += step
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and (self.total is None or self.done < self.total):
            return
        self._last = now
        of = f"/{self.total}" if self.total is not None else ""
        text = f"{self.label} {self.done}{of}" + (f"  {detail}" if detail else "")
        self._write(f"\r\x1b[2K{text[:200]}")
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self._write("\r\x1b[2K")
            self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, text: str) -> None:
        assert self.stream is not None
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False  # progress is a courtesy: a broken stderr must not stop the work


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
    except (OSError, ValueError):
        return False


#: The shell's status for a process that wrote into a closed pipe (128 + SIGPIPE).
BROKEN_PIPE_EXIT: Final = 141


def silence_broken_stdout() -> None:
    """After a ``BrokenPipeError`` on stdout: point stdout at /dev/null, so the interpreter's own
    flush at exit does not print a second traceback ("Exception ignored ...") and turn the exit
    status into 120. The documented recipe of Python's ``signal`` module notes."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
