"""The ``dsh-policy`` command: a thin dispatcher over one module per subcommand.

Each subcommand module exposes ``main(argv: list[str]) -> int`` and owns its own argument parsing,
so a subcommand can live in the package that owns the behaviour (``verify`` and ``keygen`` live in
``audit``, which must not import the policy engine). Modules are imported lazily: ``dsh-policy
verify`` never loads CEL.

This module is on the path of every hook event (the console script imports it), so it imports
nothing but ``sys``, ``os`` and ``importlib`` at module level: ``hook`` and ``redact-output`` run
the fast client (:mod:`dsh_policy.policy.hooks.gateway.client`), which must not pay for structlog,
pydantic or the policy engine unless it has to decide in process.
"""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["hook"] and __name__ == "dsh_policy.policy.cli":
    # A hook must refuse even when a signal arrives during start-up, before the imports below:
    # these handlers exit 2 (a refusal in every harness) until the hook installs its own.
    # The built-in _signal, not signal.py: that one imports enum, functools and collections,
    # which would cost every hook event more CPU than the rest of the fast client.
    import _signal
    import os as _os

    _START_UP_SIGNALS = {
        _signal.SIGTERM: "SIGTERM",
        _signal.SIGHUP: "SIGHUP",
        _signal.SIGINT: "SIGINT",
        _signal.SIGPIPE: "SIGPIPE",
    }

    def _refuse_during_start_up(number: int, _frame: object) -> None:
        name = _START_UP_SIGNALS.get(number, f"signal {number}")
        _os.write(2, f"dsh-policy failed closed: {name} during start-up\n".encode())
        _os._exit(2)

    for _number in _START_UP_SIGNALS:
        _signal.signal(_number, _refuse_during_start_up)

import importlib
import os

TYPE_CHECKING = False  # not typing's: importing typing would cost every hook event
if TYPE_CHECKING:
    from collections.abc import Sequence


SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("dsh_policy.policy.cli.check", "compile and lint packs; --cases dry-runs cases"),
    "explain": ("dsh_policy.policy.cli.explain", "evaluate one event against every rule"),
    "run": ("dsh_policy.policy.cli.run", "run a scripted agent session through the gateway"),
    "hook": ("dsh_policy.policy.hooks.gateway.client", "act as a Claude Code or Codex command hook"),
    "serve": ("dsh_policy.policy.cli.serve", "run the resident gateway of one deployment"),
    "init": ("dsh_policy.policy.cli.init", "write hook settings and a deployment file into a project"),
    "doctor": ("dsh_policy.policy.cli.doctor", "check a hook installation end to end"),
    "redact-output": (
        "dsh_policy.policy.hooks.gateway.output_filter",
        "filter a command's output (used by hooks)",
    ),
    "replay": ("dsh_policy.policy.cli.replay", "re-decide an audit log's decisions under a candidate policy"),
    "diff": ("dsh_policy.policy.cli.diff", "what changes between two packs or deployment files"),
    "verify": ("dsh_policy.audit.cli", "verify audit log segments"),
    "policy-log": ("dsh_policy.policy.cli.policy_log", "list every policy change in a log, weakening marked"),
    "keygen": ("dsh_policy.audit.cli", "make an Ed25519 key pair for checkpoint signatures"),
    "log": ("dsh_policy.audit.logview", "show an audit log for people, verifying each record"),
    "mcp": ("dsh_policy.policy.cli.mcp", "put the policy in front of an MCP server (proxy, approve)"),
    "approvals": ("dsh_policy.policy.cli.approvals", "answer the approval queue: list, approve, deny, grant"),
    "bundle": ("dsh_policy.policy.fleet.commands", "build, sign and publish a fleet policy bundle"),
    "fleet": ("dsh_policy.policy.fleet.commands", "fleet status, and export of the evidence stream"),
    "data": ("dsh_policy.policy.cli.data", "show or refresh the package data the readers decide with"),
}
#: ``verify --fleet`` verifies every host's log from the fleet's stream (the audit package, which
#: imports nothing else of ours, verifies local files).
FLEET_VERIFY = "dsh_policy.policy.fleet.fleet_verify"

USAGE_EXIT = 2
#: 128 + SIGPIPE: what the shell reports for a command whose reader went away (``... | head -1``).
BROKEN_PIPE_EXIT = 141
#: Commands whose exit code is a decision for another program: any failure must mean "block".
FAIL_CLOSED_COMMANDS = frozenset({"hook"})
#: Commands that configure logging themselves, only when they need it (they start fast).
FAST_COMMANDS = frozenset({"hook", "redact-output"})
#: Commands whose own output is their log: info lines by default.
VERBOSE_COMMANDS = frozenset({"serve"})


def configure_logging(default: str = "warning") -> None:
    """Kept for one release; call :func:`dsh_policy.policy.diagnostics.configure_logging` (imported
    here only when called: the hook's start-up imports this module)."""
    from dsh_policy.policy.diagnostics import configure_logging as configure

    configure(default)


def _usage() -> str:
    lines = ["usage: dsh-policy COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<13} {summary}" for name, (_, summary) in SUBCOMMANDS.items()]
    lines += [
        "",
        "Run 'dsh-policy COMMAND --help' for a command's options; 'dsh-policy --version' for the version.",
    ]
    return "\n".join(lines)


def version() -> str:
    """The installed distribution's version (the source tree's, when run from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as distribution_version

    try:
        return distribution_version("dsh-policy")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code.

    Output into a closed pipe (``dsh-policy verify LOG | head -1``) ends quietly with status 141,
    as for any command the shell's pipeline cut short; ``hook`` answers 2 instead (block), since
    its exit code is a decision and any failure must refuse."""
    args = list(sys.argv[1:] if argv is None else argv)
    name = args[0] if args else ""
    try:
        code = _dispatch(args, console=argv is None)
        sys.stdout.flush()  # flush here, where a closed pipe can still be reported quietly
    except BrokenPipeError:
        from dsh_policy.audit.terminal import silence_broken_stdout

        silence_broken_stdout()
        return USAGE_EXIT if name in FAIL_CLOSED_COMMANDS else BROKEN_PIPE_EXIT
    return code


def _dispatch(args: list[str], *, console: bool = False) -> int:
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0 if args else USAGE_EXIT
    if args[0] in {"--version", "-V", "version"}:
        print(f"dsh-policy {version()}")
        return 0
    name, rest = args[0], args[1:]
    if not sys.platform.startswith("linux"):  # cheap on Linux: the hook's path imports nothing here
        from dsh_policy.policy.platform_support import platform_problem

        problem = platform_problem(name)
        if problem is not None:
            print(problem, file=sys.stderr)
            return USAGE_EXIT  # 2: also a refusal for a hook
    if name not in FAST_COMMANDS:
        configure_logging("info" if name in VERBOSE_COMMANDS else "warning")
    if name not in SUBCOMMANDS:
        print(f"dsh-policy: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return USAGE_EXIT
    try:
        fleet = name == "verify" and any(arg == "--fleet" or arg.startswith("--fleet=") for arg in rest)
        module = importlib.import_module(FLEET_VERIFY if fleet else SUBCOMMANDS[name][0])
        # The console script's hook decides in a watched child process (``failsafe``); called
        # with an explicit argv (tests, embedding) it decides in this process.
        process_entry = getattr(module, "process_main", None) if console else None
        entry = process_entry or getattr(module, f"{name}_main", None) or module.main
        code: int = entry(rest)
    except BrokenPipeError:
        raise  # the reader went away: quiet, see main
    except (MemoryError, RecursionError) as error:
        print(
            f"dsh-policy {name}: input too large or too deeply nested ({type(error).__name__})",
            file=sys.stderr,
        )
        return USAGE_EXIT
    except Exception as error:
        from dsh_policy.policy.diagnostics import LOG_LEVEL_VARIABLE

        if name not in FAIL_CLOSED_COMMANDS and os.environ.get(LOG_LEVEL_VARIABLE, "").lower() == "debug":
            raise  # asked for: the traceback
        # A hook that exits 1 lets the harness run the call (fail open); 2 blocks it. Any other
        # command reports an internal error in one line (no input should ever get here).
        refusing = ", refusing" if name in FAIL_CLOSED_COMMANDS else ""
        print(
            f"dsh-policy {name}: internal error{refusing}: {type(error).__name__}: {error}", file=sys.stderr
        )
        return USAGE_EXIT
    return code
