"""Named secret detectors, shared by post-execute redaction and the CEL ``secrets.scan`` helper.

Each :class:`Detector` is an RE2 pattern (linear time on tool output of any size). When the pattern
has a group named ``secret``, only that group is the secret: ``Authorization: Bearer <tok>`` keeps
the header and loses the token, ``postgres://user:PASSWORD@host`` loses only the password.

Where detectors overlap (an Anthropic key also looks like an OpenAI ``sk-`` key; a JWT inside a
bearer header), the detector listed first in :data:`DETECTORS` wins, so every secret is reported
and replaced exactly once.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

import re2

__all__ = ["DETECTORS", "Detector", "Match", "find", "redact"]


@dataclass(frozen=True, slots=True)
class Match:
    """One secret found in a text: which detector, and the ``[start, end)`` span of the secret."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Detector:
    """A named secret pattern. ``pattern`` is RE2 syntax; ``replacement`` defaults to
    ``[REDACTED:<name>]``; ``requires_digit`` rejects candidates without a digit (random tokens
    have them; words such as ``sk-spinner-fading-circle`` do not)."""

    name: str
    pattern: str
    replacement: str = ""
    requires_digit: bool = False

    def __post_init__(self) -> None:
        if not self.replacement:
            object.__setattr__(self, "replacement", f"[REDACTED:{self.name}]")

    @cached_property
    def regex(self) -> re2._Regexp:
        """The compiled RE2 program, on first use (compiling the table at import was about a
        tenth of reading a kept policy back; ``tests/cel/test_cel_detectors.py`` compiles every
        pattern, so a bad one still fails the suite)."""
        return re2.compile(self.pattern)

    @cached_property
    def secret_group(self) -> int:
        """The group holding the secret (``secret``, else the whole match); pyre2 builds its
        ``groupindex`` anew on every read, which cost every redacted record a dict per detector."""
        return int(self.regex.groupindex.get("secret", 0))

    def find(self, text: str) -> list[Match]:
        """Every non-overlapping secret span of this detector in ``text``."""
        regex = self.regex
        group = self.secret_group
        out: list[Match] = []
        for found in regex.finditer(text):
            start, end = found.span(group)
            if start < 0 or start == end:
                continue
            if self.requires_digit and not any(c.isdigit() for c in text[start:end]):
                continue
            if _MARKER.fullmatch(text[start:end]):
                continue  # already redacted: redaction must be idempotent
            out.append(Match(self.name, start, end))
        return out


_BASE64URL = r"[A-Za-z0-9_\-]"
#: What a replacement looks like; a detector whose secret group would match one (a password field
#: holding ``[REDACTED:...]``) must not redact it again, or the rendered text would never settle.
_MARKER = re2.compile(r"\[REDACTED:[a-z0-9-]+\]")

_TABLE: tuple[Detector, ...] = (
    Detector(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)"
        # an OpenSSH key's body without its armour: base64 of the format's magic "openssh-key-v1\0"
        r"|\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=\s]{16,}",
    ),
    Detector(
        "connection-string-password",
        r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?)://"
        r"[^:@/\s]*:(?P<secret>[^@/\s]+)@",
    ),
    Detector(
        "bearer-token",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?bearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)",
    ),
    Detector(
        "basic-auth-header",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<secret>[A-Za-z0-9+/]{4,}={0,2})",
    ),
    Detector(
        "aws-secret-key",
        r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|\z)",
    ),
    Detector(
        "aws-access-key",
        r"\b(?P<secret>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16})\b",
    ),
    Detector("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255})"),
    Detector("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,255}"),
    Detector(
        "slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}"
    ),
    Detector("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,250}", requires_digit=True),
    Detector("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,255}"),
    Detector(
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,255}",
        requires_digit=True,
    ),
    Detector("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    Detector("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,247}"),
    # from the secret scanners' catalogues (gitleaks, GitGuardian): registry, bot and vault tokens
    Detector("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", requires_digit=True),
    Detector("pypi-token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    Detector("telegram-bot-token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    Detector("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    Detector("jwt", rf"\beyJ{_BASE64URL}{{8,}}\.eyJ{_BASE64URL}{{8,}}\.{_BASE64URL}*"),
)

DETECTORS: Mapping[str, Detector] = MappingProxyType({d.name: d for d in _TABLE})
"""Every preset by name, in priority order (first wins where matches overlap)."""


def find(text: str, names: Iterable[str] | None = None) -> list[Match]:
    """Every secret in ``text`` (of the named detectors, or all), sorted by position, without
    overlaps. Raises ``KeyError`` for an unknown detector name (the loader validates names)."""
    chosen, screen = _chosen(None if names is None else tuple(names))
    if screen is None or screen.search(text) is None:
        return []  # most texts hold no secret: one scan instead of one per detector
    # Accepted spans are disjoint, so kept sorted by start they are sorted by end too: an overlap
    # check looks at the two neighbours only. (Checking every accepted span made a tool output
    # holding tens of thousands of key-like tokens take minutes: quadratic, and attacker-fed.)
    accepted: list[Match] = []
    starts: list[int] = []
    for detector in chosen:
        for match in detector.find(text):
            at = bisect.bisect_right(starts, match.start)
            if at and accepted[at - 1].end > match.start:
                continue
            if at < len(accepted) and accepted[at].start < match.end:
                continue
            accepted.insert(at, match)
            starts.insert(at, match.start)
    return accepted


def redact(text: str, names: Iterable[str] | None = None) -> tuple[str, int]:
    """``text`` with every secret of the named detectors (or all) replaced by the detector's
    replacement, and how many were replaced."""
    matches = find(text, names)
    if not matches:
        return text, 0
    parts: list[str] = []
    last = 0
    for match in matches:
        parts.append(text[last : match.start])
        parts.append(DETECTORS[match.name].replacement)
        last = match.end
    parts.append(text[last:])
    return "".join(parts), len(matches)


_PRIORITY = {name: index for index, name in enumerate(DETECTORS)}


@functools.cache
def _chosen(names: tuple[str, ...] | None) -> tuple[tuple[Detector, ...], re2._Regexp | None]:
    """The named detectors (all for ``None``) in priority order, and their screen (``None`` when
    there are none). Cached: every string of every call and result asks for the same few sets."""
    chosen = sorted(
        DETECTORS.values() if names is None else (DETECTORS[n] for n in names),
        key=lambda d: _PRIORITY[d.name],
    )
    return tuple(chosen), (_screen(tuple(d.name for d in chosen)) if chosen else None)


@functools.cache
def _screen(names: tuple[str, ...]) -> re2._Regexp:
    """One RE2 program matching wherever any of the named detectors could: the alternation of
    their patterns (groups unnamed, a leading ``(?i)`` scoped to its own pattern). No match means
    no detector matches, so the per-detector passes, which cost a scan each, are skipped."""
    parts = []
    for name in names:
        pattern = DETECTORS[name].pattern.replace("(?P<secret>", "(?:")
        parts.append(f"(?i:{pattern[4:]})" if pattern.startswith("(?i)") else f"(?:{pattern})")
    return re2.compile("|".join(parts))
