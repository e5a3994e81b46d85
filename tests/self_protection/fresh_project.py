"""A fresh project set up as ``examples/hooks/README.md`` says, and the tamper corpus loaded into
hook payloads for it (a uniquely named helper module, shared by this folder's tests)."""

from __future__ import annotations

import functools
import io
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from dsh_policy.audit.keys import write_key_pair

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "hooks"
CORPUS = Path(__file__).with_name("tamper_corpus.yaml")
PACK = ROOT / "rules" / "baseline.yaml"


@dataclass(frozen=True)
class Project:
    """The project folder, its deployment file and the home folder the agent's ``~`` means."""

    root: Path
    config: Path
    home: Path


def make_project(base: Path, *, signing_key: bool = True) -> Project:
    """``.claude/settings.json`` from the shipped example, ``.dsh/gateway.yaml`` from the shipped
    deployment file (packs pointed at the installed baseline, workspace at the project), the
    audit folder it needs, and (for the key cases) a signing key in ``.dsh/keys``."""
    root = base / "project"
    home = base / "home"
    for folder in (root / ".claude", root / ".dsh" / "audit", root / "src", home / ".claude"):
        folder.mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text((EXAMPLES / "claude-code-settings.json").read_text())
    (root / "src" / "app.py").write_text("def f():\n    return 1\n")
    text = (EXAMPLES / "gateway.yaml").read_text()
    text = text.replace("../../rules/baseline.yaml", str(PACK)).replace("/work/app", str(root))
    if signing_key:
        (root / ".dsh" / "keys").mkdir()
        write_key_pair(root / ".dsh" / "keys" / "audit")
        text = text.replace("fail_closed: true", "fail_closed: true\n    checkpoint_key: keys/audit.key")
    config = root / ".dsh" / "gateway.yaml"
    config.write_text(text)
    return Project(root, config, home)


@dataclass(frozen=True)
class Case:
    """One corpus entry, ready to send: which harness, and the PreToolUse payload."""

    name: str
    harness: str
    payload: dict[str, Any]


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(project|home|pack|runtime)\}", lambda m: names[m.group(1)], value)
    if isinstance(value, dict):
        return {key: _fill(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, names) for item in value]
    return value


@functools.cache
def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(CORPUS.read_text(), Loader=yaml.CSafeLoader)
    return loaded


def corpus(section: str, project: Project) -> list[Case]:
    """The ``tamper`` or ``benign`` entries as payloads for ``project``."""
    document = _document()
    # {runtime}: the resident gateway's runtime folder, the session's own (tests/conftest.py).
    names = {
        "project": str(project.root),
        "home": str(project.home),
        "pack": str(PACK),
        "runtime": os.environ.get("DSH_POLICY_RUNTIME_DIR", "/run/dsh-policy-unset"),  # unset: collection
    }
    cases = []
    for entry in document[section]:
        payload = {
            "session_id": "self-protection-test",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(project.root),
            "hook_event_name": "PreToolUse",
            "tool_name": entry["tool"],
            "tool_input": _fill(entry["input"], names),
            "tool_use_id": "toolu_" + re.sub(r"\W+", "_", entry["name"])[:40],
        }
        cases.append(Case(entry["name"], entry.get("harness", "claude-code"), payload))
    return cases


class StdinBytes(io.TextIOWrapper):
    """A text stdin over bytes, with ``.buffer`` as the hook reads it."""


def stdin_for(payload: dict[str, Any]) -> StdinBytes:
    return StdinBytes(io.BytesIO(json.dumps(payload).encode()), encoding="utf-8")


def python() -> str:
    return sys.executable
