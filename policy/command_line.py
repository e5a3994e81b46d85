"""Command-line options shared by every command that loads rule packs (check, explain, run, hook,
serve, and doctor reading a configured hook command): packs, ``--config``, ``--param``,
``--engine``, ``--shadow``, ``--format``.

Each command owns its parser; this module only adds the common options and turns them into a
:class:`~dsh_policy.policy.config.PolicySources` or errors, so every command reads them alike.
It sits below the CLI (:mod:`dsh_policy.policy.cli` imports it, never the reverse) so that
``hooks`` can parse a hook's command line without importing the CLI.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from dsh_policy.policy.config import PolicySources, policy_sources
from dsh_policy.policy.errors import PolicyError


class UsageError(Exception):
    """argparse found a usage error; the message is already formatted."""


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of exiting, so ``main(argv)`` returns exit codes."""

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn; we raise
        raise UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


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
