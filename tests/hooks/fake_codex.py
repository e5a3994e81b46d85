#!/usr/bin/env python3
"""A stand-in for ``codex app-server`` in tests: answers ``initialize`` and ``hooks/list`` the way
Codex 0.171 does, from the hooks in ``$CODEX_HOME/config.toml`` and ``<cwd>/.codex/config.toml``,
with a trust status read from ``[hooks.state]`` (the hash is a digest of the hook's fields, like
Codex's own, whose exact recipe the code under test never needs to know).

Managed hooks, as measured with the real Codex 0.171.0: the hooks of the system requirements file
(``$DSH_POLICY_CODEX_REQUIREMENTS`` here, never the real ``/etc/codex/requirements.toml``) come
first, with ``source: system``, ``isManaged: true`` and ``trustStatus: managed`` whatever
``[hooks.state]`` says; with ``allow_managed_hooks_only = true`` there, user and project hooks
are left out of the list (and would not run)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib

EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
}


def hooks(cwd: str) -> list[dict[str, object]]:
    home = os.environ["CODEX_HOME"]
    user = os.path.join(home, "config.toml")
    state = _load(user).get("hooks", {}).get("state", {})
    requirements_path = os.environ.get("DSH_POLICY_CODEX_REQUIREMENTS") or "/etc/codex/requirements.toml"
    requirements = _load(requirements_path)
    out = _entries(requirements_path, requirements, state, managed=True)
    if requirements.get("allow_managed_hooks_only") is not True:
        for source in (os.path.join(cwd, ".codex", "config.toml"), user):
            out += _entries(source, _load(source), state, managed=False)
    return out


def _entries(
    source: str, config: dict[str, object], state: dict[str, dict[str, str]], *, managed: bool
) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    hooks = config.get("hooks", {})
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        if event not in EVENTS:
            continue
        for g, group in enumerate(groups):
            for h, hook in enumerate(group.get("hooks", [])):
                key = f"{source}:{EVENTS[event]}:{g}:{h}"
                digest = "sha256:" + hashlib.sha256(json.dumps(hook, sort_keys=True).encode()).hexdigest()
                trusted = state.get(key, {}).get("trusted_hash") == digest
                out.append(
                    {
                        "key": key,
                        "eventName": event[0].lower() + event[1:],
                        "handlerType": "command",
                        "command": hook.get("command"),
                        "sourcePath": source,
                        "source": "system" if managed else "user",
                        "isManaged": managed,
                        "currentHash": digest,
                        "trustStatus": "managed" if managed else ("trusted" if trusted else "untrusted"),
                    }
                )
    return out


def _load(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}


def main() -> int:
    if sys.argv[1:] != ["app-server"]:
        return 2
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == 1:
            reply = {"id": 1, "result": {"userAgent": "fake", "codexHome": os.environ["CODEX_HOME"]}}
        elif message.get("id") == 2:
            cwd = message["params"]["cwds"][0]
            reply = {"id": 2, "result": {"data": [{"cwd": cwd, "hooks": hooks(cwd)}]}}
        else:
            continue
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
