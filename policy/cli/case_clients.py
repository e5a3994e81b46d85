"""Cases written in an agent client's own tool vocabulary, judged as that client's hook judges them.

Rules see canonical tools (``read_file`` with ``path``); Claude Code sends ``Read`` with
``file_path``, Gemini CLI ``run_shell_command``, OpenCode ``filePath``. A security team copying a
call out of a transcript into a cases file would otherwise dry-run a call no rule names and see
``allow`` where the real hook denies. So ``check`` maps each tool call through
:func:`~dsh_policy.policy.hooks.protocol.vocabulary.canonicalize`, the hooks' own table:

- with ``client:`` on the case (or the file, or ``--client``), through that client, and a call
  whose arguments lack the client's documented fields is an error at the case's line (the hook
  would fail closed on it);
- without one, a tool name only clients use (or a canonical name given in a client's fields,
  Gemini's ``write_file`` with ``file_path``) goes through the first client, in
  :data:`~dsh_policy.policy.hooks.protocol.vocabulary.HARNESSES` order, that knows the name and
  accepts the arguments; ``check`` says which, once per tool. Canonical calls are left alone.

It lives with the command line because the cases are policy-layer data and the vocabulary belongs
to the hooks, which sit above the policy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import cast

from dsh_policy.policy.cases import Case
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import ToolCallEvent, ToolResultEvent
from dsh_policy.policy.hooks.protocol.vocabulary import (
    ALIASES,
    CANONICAL_TOOLS,
    HARNESSES,
    CanonicalCall,
    Harness,
    canonicalize,
)

__all__ = ["ClientMapping", "in_canonical_vocabulary"]


@dataclass(slots=True)
class ClientMapping:
    """The cases with their calls in the canonical vocabulary, what could not be mapped, and which
    tool names were mapped through a client nobody named (``(client, tool, canonical) -> count``)."""

    cases: list[Case]
    errors: list[PolicyError]
    guessed: Counter[tuple[str, str, str]]

    def notes(self) -> list[str]:
        """One line per guessed mapping, for the report."""
        return [
            f"{count} case(s) call {tool!r}, judged as {client} sends it ({canonical}); "
            f"set `client:` on the case or the file to choose another client"
            for (client, tool, canonical), count in sorted(self.guessed.items())
        ]


def in_canonical_vocabulary(cases: list[Case], client: str | None = None) -> ClientMapping:
    """``cases`` with every tool call mapped as its client's hook maps it (``client`` overrides
    what the cases say)."""
    mapping = ClientMapping([], [], Counter())
    for case in cases:
        call = _call_of(case)
        if call is None:
            mapping.cases.append(case)
            continue
        named = client or case.client
        mapped = _named(call, named) if named else _guessed(call)
        if isinstance(mapped, str):
            mapping.errors.append(PolicyError(case.file, case.line, 1, f"case {case.name!r}: {mapped}"))
            continue
        if mapped is None:
            mapping.cases.append(case)
            continue
        if not named:
            mapping.guessed[(mapped.harness, call.tool, mapped.name)] += 1
        mapping.cases.append(_with_call(case, call, mapped))
    return mapping


def _call_of(case: Case) -> ToolCallEvent | None:
    event = case.event
    if isinstance(event, ToolResultEvent):
        return event.call
    return event if isinstance(event, ToolCallEvent) else None


def _named(call: ToolCallEvent, client: str) -> CanonicalCall | str | None:
    # The cases schema and --client's choices admit only HARNESSES.
    harness = cast("Harness", client)
    if call.tool not in ALIASES[harness]:
        return None  # a tool the client does not rename (an MCP tool, say) keeps its name
    mapped = canonicalize(harness, call.tool, call.args if call.args is not None else {})
    return mapped if isinstance(mapped, CanonicalCall) else str(mapped)


def _guessed(call: ToolCallEvent) -> CanonicalCall | None:
    fields = CANONICAL_TOOLS.get(call.tool)
    args = call.args if call.args is not None else {}
    if fields is not None and isinstance(args, Mapping) and fields[0] in args:
        return None  # already canonical: its first field (path, command, url, patch...) is there
    for harness in HARNESSES:
        if call.tool in ALIASES[harness]:
            mapped = canonicalize(harness, call.tool, args)
            if isinstance(mapped, CanonicalCall):
                return mapped
    return None


def _with_call(case: Case, call: ToolCallEvent, mapped: CanonicalCall) -> Case:
    canonical = replace(call, tool=mapped.name, args=mapped.args, original_name=mapped.original_name)
    event = replace(case.event, call=canonical) if isinstance(case.event, ToolResultEvent) else canonical
    return replace(case, event=event)
