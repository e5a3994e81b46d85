"""The one table of stages: what each decides, what its rules may read, and how rules combine.

Every consumer reads this table (pack validation, compilation, the decider, cases files, explain,
the type checker), so adding a stage or a stage variable is one edit here (POLICY.md section 2).
Variable types are written in CEL's own notation (``string``, ``int``, ``bool``, ``timestamp``,
``dyn``, ``list(T)``, ``map(K, V)``) or, for a map with known keys, as a mapping of field types
(:class:`ListOf` such a mapping for a list of them). The type checker
(:mod:`~dsh_policy.policy.cel.checker`) reads them: selecting a key a mapping does not list is a
load error, as is reading a name the stage does not provide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeAlias

Stage: TypeAlias = Literal["pre-step", "pre-execute", "guard", "post-execute"]
#: A variable's type: a CEL type name, the field types of a map with known keys, or a list of those.
VariableType: TypeAlias = "str | Mapping[str, VariableType] | ListOf"


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list whose elements have a known shape (``messages``: maps with known keys)."""

    element: VariableType


def _frozen(fields: dict[str, VariableType]) -> Mapping[str, VariableType]:
    return MappingProxyType(fields)


_COMMON: dict[str, VariableType] = {
    "session": _frozen({"id": "string"}),
    "agent": _frozen({"id": "string"}),
    "params": "map(string, dyn)",  # refined per pack from the declared params' values
    "vars": "map(string, dyn)",  # refined per pack from the variables' expressions
    "now": "timestamp",
    "turn": "int",
    "step": "int",
}
_TOOL: dict[str, VariableType] = {
    "tool": _frozen(
        {
            "name": "string",
            "call_id": "string",
            "root_call_id": "string",
            "nested": "bool",
            "original_name": "string",
        }
    ),
    "args": "dyn",  # whatever the tool's input schema allows: fields unknown until run time
}
_RESULT: dict[str, VariableType] = {
    "result": _frozen(
        {
            "is_error": "bool",
            "text": "string",
            "value": "dyn",
            "error": _frozen({"message": "string", "code": "string"}),
        }
    ),
}
_STEP: dict[str, VariableType] = {
    "messages": ListOf(
        _frozen(
            {
                "role": "string",
                "text": "string",
                "source": _frozen({"kind": "string", "plugin": "string"}),
            }
        )
    ),
    "prompt": "string",
}


@dataclass(frozen=True, slots=True)
class StageSpec:
    """One stage of the decision API."""

    name: Stage
    #: The explicit ``decision:`` words a rule of this stage may give.
    rule_decisions: frozenset[str]
    #: What a matching rule without ``decision:`` does (None: a rule must give a decision).
    default_effect: str | None
    #: What an evaluation error with ``on_error: deny`` gives (the stage's refusing answer).
    closed_effect: str
    #: The verdict words a cases file may expect.
    outcomes: frozenset[str]
    #: The CEL names a rule of this stage may read, with their types.
    variables: Mapping[str, VariableType]
    #: Whether the event is about one tool call (``match.tools`` applies).
    tool_event: bool
    #: Whether rules of this stage may add ``context`` and ``redact`` output.
    takes_context: bool
    takes_redact: bool
    #: The stages a case of this stage consults (a pre-execute case is the whole gate).
    consulted: tuple[Stage, ...]
    #: How the matching rules combine, in words (shown by ``explain``).
    combination: str


STAGE_TABLE: Mapping[str, StageSpec] = MappingProxyType(
    {
        "pre-step": StageSpec(
            name="pre-step",
            rule_decisions=frozenset({"reject"}),
            default_effect="enter",
            closed_effect="reject",
            outcomes=frozenset({"enter", "reject"}),
            variables=_frozen({**_COMMON, **_STEP}),
            tool_event=False,
            takes_context=True,
            takes_redact=False,
            consulted=("pre-step",),
            combination="any enforced reject wins; else enter with the contexts of matching rules",
        ),
        "pre-execute": StageSpec(
            name="pre-execute",
            rule_decisions=frozenset({"deny", "ask", "allow"}),
            default_effect=None,
            closed_effect="deny",
            outcomes=frozenset({"allow", "deny", "ask"}),
            variables=_frozen({**_COMMON, **_TOOL}),
            tool_event=True,
            takes_context=False,
            takes_redact=False,
            consulted=("pre-execute", "guard"),
            combination="deny > ask > allow > defaults.decision; a guard denial beats everything",
        ),
        "guard": StageSpec(
            name="guard",
            rule_decisions=frozenset({"deny"}),
            default_effect="deny",
            closed_effect="deny",
            outcomes=frozenset({"allow", "deny"}),
            variables=_frozen({**_COMMON, **_TOOL}),
            tool_event=True,
            takes_context=False,
            takes_redact=False,
            consulted=("guard",),
            combination="any match denies; always enforced and fail closed",
        ),
        "post-execute": StageSpec(
            name="post-execute",
            rule_decisions=frozenset({"block"}),
            default_effect="accept",
            closed_effect="block",
            outcomes=frozenset({"accept", "block"}),
            variables=_frozen({**_COMMON, **_TOOL, **_RESULT}),
            tool_event=True,
            takes_context=True,
            takes_redact=True,
            consulted=("post-execute",),
            combination="any block wins; else every redaction applies in pack order, contexts appended",
        ),
    }
)

STAGES: tuple[Stage, ...] = tuple(spec.name for spec in STAGE_TABLE.values())
TOOL_STAGES: frozenset[Stage] = frozenset(spec.name for spec in STAGE_TABLE.values() if spec.tool_event)
#: Every name some stage provides, with the stages that provide it in table order (the CEL type
#: checker receives this table and lists the stages in this order when a name is missing).
EVENT_NAMES: Mapping[str, tuple[Stage, ...]] = MappingProxyType(
    {
        name: tuple(other.name for other in STAGE_TABLE.values() if name in other.variables)
        for spec in STAGE_TABLE.values()
        for name in spec.variables
    }
)


def stage_spec(stage: str) -> StageSpec:
    """The table entry of ``stage``."""
    return STAGE_TABLE[stage]
