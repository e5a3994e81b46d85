"""Which tools a ``tools/list`` answer may show: those the policy could ever let run.

A listing has no arguments to decide on, so hiding is decided from the rules themselves: a tool
is hidden when an enforced ``pre-execute`` or ``guard`` rule denies it whatever its arguments (the
rule matches the tool's name and has neither ``when`` nor ``match.programs``), or when the policy
denies by default and no enforced rule could allow it (or ask for it). Everything else is shown
and decided per call: hiding is a courtesy to the model, ``tools/call`` is where policy holds.

Each definition is also reviewed by the packs' post-execute rules as the result of the pseudo
tool :data:`DEFINITION_TOOL`, so the injection rules that withhold web content addressing the
agent can refuse a poisoned description (the proxy then quarantines the tool).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_policy.core.frozen import NotJsonError, freeze_json
from dsh_policy.policy.compiled import CompiledPolicy, CompiledRule
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.events import ToolCallEvent, ToolResultEvent, all_strings_text, with_rules


@dataclass(frozen=True, slots=True)
class Hidden:
    """Why a tool is hidden: the rules that deny it outright, or the default."""

    rules: tuple[str, ...]
    reason: str


def qualified_name(server: str, tool: str) -> str:
    """The name packs use for an MCP tool, the one Claude Code's hooks already report."""
    return f"mcp__{server}__{tool}"


def _denies_outright(rule: CompiledRule) -> bool:
    return rule.enforced and rule.effect == "deny" and rule.when is None and rule.programs is None


def hidden(policy: CompiledPolicy, name: str) -> Hidden | None:
    """Whether the tool named ``name`` (qualified) is hidden from listings, and why."""
    outright = [
        rule.id
        for stage in ("pre-execute", "guard")
        for rule in policy.stages[stage].for_tool(name)
        if _denies_outright(rule)
    ]
    if outright:
        return Hidden(tuple(outright), "denied by policy")
    if policy.default_decision != "deny":
        return None
    could_run = any(
        rule.enforced and rule.effect in ("allow", "ask")
        for rule in policy.stages["pre-execute"].for_tool(name)
    )
    if could_run:
        return None
    return Hidden((), "no policy rule allows it (defaults.decision: deny)")


#: The tool name under which a tool's *definition* is reviewed by post-execute rules (a pack
#: matches it to scan descriptions, as ``injection`` does); the definition is its result value.
DEFINITION_TOOL = "mcp_tool_definition"


def definition_text(definition: Mapping[str, Any]) -> str:
    """Every string of a definition (description, titles, schema descriptions, enum values), one
    per line: poisoning hides in schema descriptions as often as in the tool's own."""
    return all_strings_text(definition)


def scan(decider: Decider, server: str, definition: Mapping[str, Any], session_id: str) -> str | None:
    """Why the policy refuses a tool definition (a post-execute ``block`` of the definition as the
    result of :data:`DEFINITION_TOOL`), or None. Redactions and contexts do not refuse it."""
    name = definition.get("name")
    call = ToolCallEvent(
        tool=DEFINITION_TOOL,
        args=freeze_json({"server": server, "tool": name if isinstance(name, str) else ""}),
        call_id=f"definition:{server}:{name}",
        session_id=session_id,
        now=datetime.datetime.now(datetime.UTC),
    )
    try:
        value = freeze_json(dict(definition))
    except NotJsonError as error:
        return f"the tool definition is not JSON: {error}"
    verdict = decider.review_tool_result(
        ToolResultEvent(call=call, text=definition_text(definition), value=value)
    )
    if verdict.decision != "block":
        return None
    message = verdict.message or "the tool definition was refused by policy"
    return with_rules(message, verdict.rules)
