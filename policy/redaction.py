"""Applying redactions to everything that leaves the pipeline: content text, the canonical value
(every string inside it) and audit-record arguments.

``accept(content=...)`` alone keeps the value, so a redaction that only rewrote the text would leak
the secret through ``value`` and the audit log; these functions therefore walk whole JSON values.
Each step is a plain function over plain data (structlog-style), testable alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dsh_policy.policy.compiled import Redaction
from dsh_policy.policy.detectors import DETECTORS
from dsh_policy.policy.detectors import redact as detector_redact


def redact_text(text: str, redactions: Iterable[Redaction]) -> tuple[str, int]:
    """Apply redaction steps in order; return the new text and how many secrets were replaced.

    Consecutive presets run as one detector pass, so where two detectors overlap the detectors'
    own priority decides and each secret is replaced (and counted) once. A text holding a lone
    surrogate (a JSON ``\\ud800`` escape, or bytes decoded with ``surrogateescape``) cannot be
    handed to RE2 as UTF-8: it is scanned with each lone surrogate replaced by U+FFFD (one code
    point for one, so every secret is still found whole), and returned unchanged when nothing
    was redacted.
    """
    if text.isascii():
        return _redact_text(text, redactions)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        cleaned, total = _redact_text(_LONE_SURROGATE.sub("\ufffd", text), redactions)
        return (cleaned, total) if total else (text, 0)
    return _redact_text(text, redactions)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _redact_text(text: str, redactions: Iterable[Redaction]) -> tuple[str, int]:
    total = 0
    presets: list[str] = []
    for step in (*redactions, None):
        if step is not None and step.preset is not None:
            presets.append(step.preset)
            continue
        if presets:
            text, count = detector_redact(text, presets)
            total += count
            presets = []
        if step is not None:
            text, count = step.pattern.subn(step.replace, text)
            total += count
    return text, total


def redact_value(value: Any, redactions: Sequence[Redaction]) -> tuple[Any, int]:
    """Redact every string inside a JSON value (frozen or plain); returns a plain copy and a count.
    Keys are left alone: rewriting them could merge two keys into one."""
    if isinstance(value, str):
        return redact_text(value, redactions)
    if isinstance(value, Mapping):
        total = 0
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key], count = redact_value(item, redactions)
            total += count
        return out, total
    if isinstance(value, list | tuple):
        total = 0
        items: list[Any] = []
        for item in value:
            redacted, count = redact_value(item, redactions)
            items.append(redacted)
            total += count
        return items, total
    return value, 0


def all_detector_redactions() -> tuple[Redaction, ...]:
    """One preset step per shipped detector, for places where every known secret must go (audit)."""
    return tuple(Redaction(name, None, f"[REDACTED:{name}]") for name in DETECTORS)
