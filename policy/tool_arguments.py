"""The argument names each canonical tool can carry, so a misspelled ``args.comand`` is caught.

``args`` is dynamic to the type checker (its fields are only known at run time), so without this
table ``args.comand`` type-checks and the rule is silently off (``has(args.comand)`` is always
false) or fails on every call. The table is the canonical vocabulary the hooks map onto
(:mod:`dsh_policy.policy.hooks.protocol.vocabulary`) and the demo tools speak: the fields a rule
may rely on, plus those the clients' own tools pass through unchanged (Claude Code's Bash
``description``/``timeout``, Codex's ``workdir``/``timeout_ms``, ...); a test keeps it in step with
the vocabulary's ``CANONICAL_TOOLS``.

A rule whose ``match.tools`` names only tools found here may read only their arguments: anything
else is an error with a "did you mean". A rule with no ``match.tools`` may see any tool, so an
argument no known tool has is only a warning. Tools not found here (MCP tools, a harness's own
names, globs) are not checked: their arguments are not known when the pack is compiled (MCP pins
keep a definition's digest, not its schema).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from dsh_policy.policy.source.schema import suggest_spelling

_SHELL_PASSED = (
    "argv",  # the argv list a command given as a list came from
    "description",  # Claude Code Bash
    "timeout",
    "run_in_background",
    "dangerouslyDisableSandbox",
    "workdir",  # Codex shell tools
    "timeout_ms",
    "with_escalated_permissions",
    "sandbox_permissions",
    "justification",
    "login",
    "shell",
    "yield_time_ms",
    "max_output_tokens",
    "prefix_rule",
)

#: Canonical tool -> every argument name it can carry.
TOOL_ARGUMENTS: Final[dict[str, frozenset[str]]] = {
    "shell": frozenset(("command", *_SHELL_PASSED)),
    "read_file": frozenset(("path", "offset", "limit", "pages")),
    "write_file": frozenset(("path", "content")),
    "edit_file": frozenset(
        ("path", "old_string", "new_string", "replace_all", "edits", "cell_id", "cell_type", "edit_mode")
    ),
    "list_dir": frozenset(("path", "ignore")),
    "web_fetch": frozenset(("url", "prompt")),
    # A request body arrives under the name the tool's client library uses (requests: data, json,
    # files; form posts: form); the baseline's egress rule reads each to see what can leave.
    "http_request": frozenset(("url", "method", "headers", "body", "data", "json", "form", "files")),
    "send_message": frozenset(("channel", "text")),
    "apply_patch": frozenset(("patch", "paths")),
}
#: Names tools outside the vocabulary use for the same things (MCP file servers and harness tools
#: that are not canonicalized: ``file_path``, an edit's ``new``, a patch's ``input``). An unscoped
#: rule that reads them, to judge every tool's writes alike, is not warned about. (The decider also
#: judges every such call as the canonical calls its arguments describe, ``decide/tool_views.py``,
#: so a rule scoped to the canonical tools sees them too.)
OTHER_TOOL_ARGUMENTS: Final[frozenset[str]] = frozenset(("file_path", "new", "input"))
ALL_ARGUMENTS: Final[frozenset[str]] = frozenset().union(*TOOL_ARGUMENTS.values(), OTHER_TOOL_ARGUMENTS)


def known_arguments(tools: Sequence[str] | None) -> frozenset[str] | None:
    """The arguments a rule scoped to ``tools`` may read; None when any tool is unknown here."""
    if not tools:
        return None
    found: set[str] = set()
    for tool in tools:
        arguments = TOOL_ARGUMENTS.get(tool)
        if arguments is None:
            return None
        found |= arguments
    return frozenset(found)


def argument_problem(tools: Sequence[str] | None, name: str) -> tuple[bool, str] | None:
    """(is it only a warning?, the message) when ``args.<name>`` cannot be an argument of the
    rule's tools; None when it can be (or when they are not known here)."""
    allowed = known_arguments(tools)
    if allowed is not None:
        if name in allowed:
            return None
        listed = ", ".join(tools or ())
        return False, f"unknown argument 'args.{name}' for {listed}{_hint(name, allowed)}"
    if tools or name in ALL_ARGUMENTS:
        return None
    return True, (
        f"'args.{name}' is not an argument of any known tool{_hint(name, ALL_ARGUMENTS)}; "
        "scope the rule with match.tools"
    )


def _hint(name: str, choices: Iterable[str]) -> str:
    return suggest_spelling(name, sorted(choices)) or f" (known: {', '.join(sorted(choices))})"
