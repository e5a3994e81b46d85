"""Where diagnostics go and how many: stderr, at the level ``DSH_POLICY_LOG`` names.

Below the CLI (which calls it for every command but the fast ones) so that the hook client's slow
path and the output filter configure logging the same way without importing ``policy.cli``.
Imports only ``os`` and ``sys`` at module level: the fast hook client's start-up must not grow.
"""

from __future__ import annotations

import os
import sys

LOG_LEVEL_VARIABLE = "DSH_POLICY_LOG"


class _StderrPrinter:
    """A structlog logger that looks ``sys.stderr`` up on every line (so a replaced or captured
    stderr, as under test runners, is honoured)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = err = critical = exception = fatal = failure = msg


def configure_logging(default: str = "warning") -> None:
    """Diagnostics go to stderr, never stdout: stdout carries reports, JSON and hook protocol
    answers. The level comes from ``DSH_POLICY_LOG`` (debug, info, warning, error; default
    ``default``), so a command's own output is not drowned in the gateway's info lines."""
    import logging

    import structlog

    name = os.environ.get(LOG_LEVEL_VARIABLE, default).upper()
    level = logging.getLevelNamesMapping().get(name, logging.WARNING)
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=lambda *args: _StderrPrinter(),
        cache_logger_on_first_use=False,
    )
