"""Kept for one release; import from :mod:`dsh_policy.policy.hooks.in_process.failsafe` (the
watched child that decides a hook event now lives beside the in-process hook)."""

from dsh_policy.policy.hooks.in_process.failsafe import (
    DEFAULT_DEADLINE_SECONDS,
    DEFAULT_MEMORY_BYTES,
    Reply,
    emit,
    install_signal_handlers,
    set_safe_answer,
    sniff_event,
    stdin_bytes,
    supervise,
)

__all__ = [
    "DEFAULT_DEADLINE_SECONDS",
    "DEFAULT_MEMORY_BYTES",
    "Reply",
    "emit",
    "install_signal_handlers",
    "set_safe_answer",
    "sniff_event",
    "stdin_bytes",
    "supervise",
]
