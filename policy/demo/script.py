"""Scripted sessions for ``dsh-policy run`` (format: ``examples/sessions/README.md``).

A script fixes everything a live session leaves to chance: the sandbox's files and web, the answers
to approval requests, and per turn the user's prompt and the model's reply for each step. It is
validated like a rule pack (shipped JSON Schema, ``FILE:LINE:COL`` errors, unknown keys are errors)
so a typo in a demo is reported, not silently ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.source.schema import schema_errors
from dsh_policy.policy.source.yaml_source import read_yaml_file

SCHEMA = "session.schema.json"


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One tool call as the model emits it: ``arguments`` is raw JSON text (maybe invalid)."""

    tool: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """The model's reply for one step."""

    text: str
    tool_calls: tuple[ScriptedCall, ...]


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """A user prompt and the replies the model gives, step by step, in that turn."""

    prompt: str
    replies: tuple[ScriptedReply, ...]


@dataclass(frozen=True, slots=True)
class SessionScript:
    """A whole validated session script."""

    path: str
    name: str
    description: str
    cwd: str
    files: dict[str, str]
    web: dict[str, str]
    approvals: tuple[str, ...]
    turns: tuple[ScriptedTurn, ...]


def _call(raw: dict[str, Any]) -> ScriptedCall:
    if "raw_arguments" in raw:
        return ScriptedCall(raw["tool"], raw["raw_arguments"])
    return ScriptedCall(raw["tool"], json.dumps(raw.get("args", {}), ensure_ascii=False))


def load_session_script(path: str | Path) -> SessionScript | list[PolicyError]:
    """Read and validate a session script; every problem comes back as a ``PolicyError``."""
    file = str(path)
    document = read_yaml_file(path)
    if isinstance(document, list):
        return document
    errors = schema_errors(document.value, document.source, file, SCHEMA)
    if errors:
        return sorted(errors)
    spec = document.value["spec"]
    metadata = document.value["metadata"]
    turns = tuple(
        ScriptedTurn(
            prompt=turn["prompt"],
            replies=tuple(
                ScriptedReply(
                    text=reply.get("text", ""),
                    tool_calls=tuple(_call(call) for call in reply.get("tool_calls", [])),
                )
                for reply in turn.get("replies", [])
            ),
        )
        for turn in spec["turns"]
    )
    return SessionScript(
        path=file,
        name=metadata["name"],
        description=metadata.get("description", ""),
        cwd=spec.get("cwd", "/workspace"),
        files=dict(spec.get("files", {})),
        web=dict(spec.get("web", {})),
        approvals=tuple(spec.get("approvals", [])),
        turns=turns,
    )
