"""The demo tools, in the canonical vocabulary, acting on a :class:`~.sandbox.Sandbox` only.

Names and argument fields are the canonical ones the shipped packs match (``shell {command}``,
``read_file {path}``, ``write_file {path, content}``, ``edit_file {path, old_string, new_string}``,
``list_dir {path}``, ``web_fetch {url}``, ``http_request {url, method, headers, body}``,
``send_message {channel, text}``), so the same packs guard the demo and real harnesses. Values keep
the data (file content, response body) so that redaction of the value, not only of the rendered
content, is visible in a demo.
"""

from __future__ import annotations

from typing import Any

from dsh_policy.core import ToolDefinition, ToolFailure, ToolOutput, define_tool
from dsh_policy.policy.demo.sandbox import Sandbox, SandboxError


def _schema(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


_STRING = {"type": "string"}


def _render_shell(value: Any) -> str:
    parts = [value["stdout"]]
    if value["stderr"]:
        parts.append(value["stderr"])
    parts.append(f"[exit {value['exit_code']}]")
    return "".join(part if part.endswith("\n") else part + "\n" for part in parts).rstrip("\n")


def _render_content(value: Any) -> str:
    return str(value["content"])


def sandbox_tools(box: Sandbox, *, outbox: list[dict[str, Any]] | None = None) -> list[ToolDefinition]:
    """The demo tools bound to ``box``; ``send_message``/``http_request`` append to ``outbox``."""
    sent = outbox if outbox is not None else []

    def failing(action: Any) -> Any:
        try:
            return action()
        except SandboxError as error:
            raise ToolFailure(str(error), code="SANDBOX") from None

    def shell(args: Any, _run: Any) -> dict[str, Any]:
        outcome = box.run_shell(args["command"])
        return {"stdout": outcome.stdout, "stderr": outcome.stderr, "exit_code": outcome.exit_code}

    def read_file(args: Any, _run: Any) -> dict[str, Any]:
        return {"path": args["path"], "content": failing(lambda: box.read(args["path"]))}

    def write_file(args: Any, _run: Any) -> str:
        failing(lambda: box.write(args["path"], args["content"]))
        return f"wrote {len(args['content'])} characters to {args['path']}"

    def edit_file(args: Any, _run: Any) -> str:
        text = failing(lambda: box.read(args["path"]))
        count = text.count(args["old_string"])
        if count != 1:
            raise ToolFailure(f"old_string occurs {count} times in {args['path']}; it must occur once")
        failing(lambda: box.write(args["path"], text.replace(args["old_string"], args["new_string"])))
        return f"edited {args['path']}"

    def list_dir(args: Any, _run: Any) -> list[str]:
        return list(failing(lambda: box.list_dir(args.get("path", "."))))

    def web_fetch(args: Any, _run: Any) -> dict[str, Any]:
        return {"url": args["url"], "content": failing(lambda: box.fetch(args["url"]))}

    def http_request(args: Any, _run: Any) -> str:
        sent.append({"tool": "http_request", **dict(args)})
        return f"(sandbox) {args.get('method', 'GET')} {args['url']}: 200 OK"

    def send_message(args: Any, _run: Any) -> str:
        sent.append({"tool": "send_message", **dict(args)})
        return f"(sandbox) message posted to {args['channel']}"

    content_output = ToolOutput(schema={"type": "object", "required": ["content"]}, render=_render_content)
    return [
        define_tool(
            "shell",
            description="Run a command line in the workspace shell.",
            parameters=_schema({"command": _STRING}),
            execute=shell,
            output=ToolOutput(
                schema={"type": "object", "required": ["stdout", "stderr", "exit_code"]},
                render=_render_shell,
            ),
        ),
        define_tool(
            "read_file",
            description="Read a text file.",
            parameters=_schema({"path": _STRING}),
            execute=read_file,
            output=content_output,
            concurrency_safe=True,
        ),
        define_tool(
            "write_file",
            description="Create or replace a text file.",
            parameters=_schema({"path": _STRING, "content": _STRING}),
            execute=write_file,
        ),
        define_tool(
            "edit_file",
            description="Replace one unique occurrence of old_string with new_string in a file.",
            parameters=_schema({"path": _STRING, "old_string": _STRING, "new_string": _STRING}),
            execute=edit_file,
        ),
        define_tool(
            "list_dir",
            description="List a directory.",
            parameters=_schema({}, {"path": _STRING}),
            execute=list_dir,
            concurrency_safe=True,
        ),
        define_tool(
            "web_fetch",
            description="Fetch a web page.",
            parameters=_schema({"url": _STRING}),
            execute=web_fetch,
            output=content_output,
            concurrency_safe=True,
        ),
        define_tool(
            "http_request",
            description="Send an HTTP request.",
            parameters=_schema(
                {"url": _STRING},
                {"method": _STRING, "headers": {"type": "object"}, "body": _STRING},
            ),
            execute=http_request,
        ),
        define_tool(
            "send_message",
            description="Post a message to a chat channel.",
            parameters=_schema({"channel": _STRING, "text": _STRING}),
            execute=send_message,
        ),
    ]
