"""Command-line options shared by every command that loads rule packs (check, explain, and the
run/hook commands): packs, ``--config``, ``--param``, ``--engine``, ``--shadow``, ``--format``.

Each command owns its parser; this module only adds the common options and turns them into a
:class:`~dsh_policy.policy.config.PolicySources` or errors, so every command reads them alike.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from dsh_policy.policy.config import PolicySources, policy_sources
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec

USAGE_EXIT = 2


class UsageError(Exception):
    """argparse found a usage error; the message is already formatted."""


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of exiting, so ``main(argv)`` returns exit codes."""

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn; we raise
        raise UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """``argv`` parsed, or the exit code to return: :data:`USAGE_EXIT` after printing a usage
    error (a :class:`CommandParser` raises it) to stderr, 0 after ``--help`` printed the help.
    Every command's ``main`` starts with it, so none exits its caller's process."""
    try:
        return parser.parse_args(list(argv))
    except UsageError as error:
        print(error, file=sys.stderr)
        return USAGE_EXIT
    except SystemExit as exit_request:  # --help
        return exit_request.code if isinstance(exit_request.code, int) else 0


def add_policy_options(
    parser: argparse.ArgumentParser,
    *,
    positional_packs: bool = True,
    engines: Sequence[str] = ("auto", "closure", "python", "native"),
) -> None:
    """Packs (positional, and ``--pack`` on every command, so one spelling works everywhere),
    and the options that shape the policy."""
    if positional_packs:
        parser.add_argument("packs", nargs="*", metavar="PACK", help="rule pack files (YAML)")
    # ``--pack A B`` and ``--pack A --pack B`` both: the README's ``--pack PACK...``.
    parser.add_argument(
        "--pack",
        dest="packs" if not positional_packs else "option_packs",
        action="extend",
        nargs="+",
        default=[],
        metavar="PACK",
        help="rule pack file(s); repeatable",
    )
    parser.add_argument("--config", metavar="FILE", help="deployment file (kind: Gateway)")
    parser.add_argument(
        "--param",
        dest="params",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a pack param (VALUE is read as YAML)",
    )
    parser.add_argument(
        "--engine", choices=list(engines), default=None, help="CEL engine (default: the config's, else auto)"
    )
    parser.add_argument("--shadow", action="store_true", help="evaluate every rule in audit mode")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def sources_from(
    args: argparse.Namespace, engine: str | None = None, *, unprotected: bool = False
) -> PolicySources | list[PolicyError]:
    """The policy inputs named by parsed options."""
    return policy_sources(
        [*args.packs, *getattr(args, "option_packs", ())],
        config=args.config,
        param_flags=list(args.params),
        engine=engine if engine is not None else args.engine,
        shadow=bool(args.shadow),
        unprotected=unprotected,
    )


def spec_from(args: argparse.Namespace) -> DeploymentSpec:
    """The deployment that parsed hook or ``serve`` options name: the same one the fast client
    computes from the raw command line, so ``hook``, ``serve`` and ``doctor`` find one gateway.

    Not folded into :func:`sources_from`: ``serve --status`` needs the spec without reading the
    deployment file, and the hook needs it only when it decides a tool call."""
    return DeploymentSpec.from_options(
        config=args.config,
        packs=list(args.packs),
        params=list(args.params),
        engine=args.engine,
        shadow=bool(args.shadow),
        audit=args.audit,
        unprotected=bool(args.no_self_protection),
    )


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
