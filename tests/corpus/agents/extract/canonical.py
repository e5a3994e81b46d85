"""Map a harness's tool call onto the canonical vocabulary (``policy/tool_arguments.py``).

Only calls a guard judges are kept: shell, file reads, writes and edits, listings and web fetches.
Planning tools (TodoWrite, Task), content searches (Grep) and web searches carry no effect of their
own and are left out.
"""

from __future__ import annotations

from typing import Any


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def canonical(agent_tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(canonical tool, canonical args), or None for a call with no canonical effect."""
    name = agent_tool.strip()
    path = _text(arguments.get("file_path")) or _text(arguments.get("path"))
    if name in ("Bash", "shell", "run_terminal_cmd", "execute_bash", "bash"):
        command = _text(arguments.get("command"))
        return ("shell", {"command": command}) if command else None
    if name == "Read" and path:
        args: dict[str, Any] = {"path": path}
        for key in ("offset", "limit"):
            if isinstance(arguments.get(key), int):
                args[key] = arguments[key]
        return "read_file", args
    if name == "Write" and path and isinstance(arguments.get("content"), str):
        return "write_file", {"path": path, "content": arguments["content"]}
    if name == "Edit" and path and isinstance(arguments.get("old_string"), str):
        args = {
            "path": path,
            "old_string": arguments["old_string"],
            "new_string": arguments.get("new_string", ""),
        }
        if arguments.get("replace_all") is True:
            args["replace_all"] = True
        return "edit_file", args
    if name == "MultiEdit" and path and isinstance(arguments.get("edits"), list):
        return "edit_file", {"path": path, "edits": arguments["edits"]}
    if name in ("LS", "Glob"):
        return "list_dir", {"path": path or "."}
    if name == "WebFetch" and _text(arguments.get("url")):
        args = {"url": arguments["url"]}
        if _text(arguments.get("prompt")):
            args["prompt"] = arguments["prompt"]
        return "web_fetch", args
    return None
