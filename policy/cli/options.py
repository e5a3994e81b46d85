"""How every command reports: the usage exit code, parsing without exiting the caller's process,
errors and JSON reports. The options themselves (packs, ``--config``, ``--param``, ...) live in
:mod:`dsh_policy.policy.command_line`, below the CLI, so that ``hooks`` can read them too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from dsh_policy.policy.command_line import UsageError
from dsh_policy.policy.errors import PolicyError

USAGE_EXIT = 2


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """``argv`` parsed, or the exit code to return: :data:`USAGE_EXIT` after printing a usage
    error (a :class:`~dsh_policy.policy.command_line.CommandParser` raises it) to stderr, 0 after
    ``--help`` printed the help. Every command's ``main`` starts with it, so none exits its
    caller's process."""
    try:
        return parser.parse_args(list(argv))
    except UsageError as error:
        print(error, file=sys.stderr)
        return USAGE_EXIT
    except SystemExit as exit_request:  # --help
        return exit_request.code if isinstance(exit_request.code, int) else 0


def print_errors(errors: Sequence[PolicyError], stream: TextIO | None = None) -> None:
    """Errors for people: ``FILE:LINE:COL: message`` each (with the source line and a caret under
    the column when it points inside an expression), then a count."""
    out = stream or sys.stderr
    for error in errors:
        print(error.display(), file=out)
    print(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", file=out)


def print_json(document: Any) -> None:
    """A JSON report on stdout (stable key order for diffs in CI)."""
    print(json.dumps(document, indent=2, ensure_ascii=False, default=str))
