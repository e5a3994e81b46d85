"""Command-line parsing shared by the audit commands (``verify``, ``keygen``, ``log``).

``audit`` imports nothing else of ours (an auditor verifies without the policy engine), so it
cannot use the policy commands' parser; this is its own, with the same behaviour: a usage error
or ``--help`` becomes an exit code for ``main(argv)`` to return, never an exit of the process
that called it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Final, NoReturn

EXIT_USAGE: Final = 2


class UsageError(Exception):
    """argparse found a usage error; the usage line is already printed to stderr."""


class CommandParser(argparse.ArgumentParser):
    """argparse that reports usage errors as exit code 2 without killing an embedding process."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: error: {message}")


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """``argv`` parsed, or the exit code to return: :data:`EXIT_USAGE` after a usage error
    (printed to stderr), 0 after ``--help`` printed the help."""
    try:
        return parser.parse_args(list(argv))
    except UsageError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exit_request:  # --help
        return int(exit_request.code or 0)
