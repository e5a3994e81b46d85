"""The client configurations in docs/mcp.md are true: each one parses, and each proxy line in them
parses with the proxy's own options.

A reader copies these blocks into a client's file, so a block that is not valid JSON or TOML, an
option the proxy does not have, a ``--name`` that differs from the entry's key (the rules would
then name other tools than the client's), or a URL entry that does not point at a loopback proxy
would each fail them on first use. No process starts: the blocks are read, the lines parsed.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli.mcp import _proxy_parser
from dsh_policy.policy.cli.options import parse_command
from dsh_policy.policy.mcp.streamable_http import listen_address, loopback_host

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
#: Each client's file and the table its servers live in.
CLIENT_TABLES = {"mcpServers", "servers", "mcp_servers"}
#: The clients docs/mcp.md must show (a heading each).
CLIENTS = ("Claude Code", "Codex", "Gemini CLI", "Cursor", "VS Code", "Claude Desktop")


def _blocks(language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(DOC.read_text("utf-8")) if lang == language]


def _entries(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for table in CLIENT_TABLES & document.keys():
        yield from document[table].items()


def _proxy_problem(key: str, command: str, args: list[str]) -> str | None:
    """Why a stdio entry does not start the proxy in front of a server, or None."""
    if Path(command).name != "dsh-policy":
        return f"{key}: command {command!r} is not dsh-policy"
    if args[:2] != ["mcp", "proxy"] or "--" not in args:
        return f"{key}: args must be mcp proxy OPTIONS -- COMMAND..."
    split = args.index("--")
    options, server = args[2:split], args[split + 1 :]
    parsed = parse_command(_proxy_parser(), options)
    if isinstance(parsed, int):
        return f"{key}: the proxy refuses its options {options}"
    if parsed.name != key:
        return f"{key}: --name {parsed.name!r} is not the entry's key"
    if not server:
        return f"{key}: no server command after --"
    return None


def _url_problem(key: str, url: str) -> str | None:
    found = re.fullmatch(r"http://([^/]+)/mcp", url)
    if found is None or not loopback_host(found.group(1)):
        return f"{key}: {url!r} is not the loopback proxy's endpoint"
    return None


def _entry_problems(document: dict[str, Any]) -> list[str]:
    problems: list[str | None] = []
    for key, entry in _entries(document):
        url = entry.get("url") or entry.get("httpUrl")
        if url is not None:
            problems.append(_url_problem(key, url))
        else:
            problems.append(_proxy_problem(key, entry.get("command", ""), list(entry.get("args", []))))
    return [problem for problem in problems if problem is not None]


def test_every_client_has_its_section() -> None:
    headings = re.findall(r"^### (.+)$", DOC.read_text("utf-8"), re.MULTILINE)
    for client in CLIENTS:
        assert any(heading.startswith(client) for heading in headings), client


def test_json_configurations_parse_and_start_the_proxy() -> None:
    documents = [json.loads(block) for block in _blocks("json")]
    entries = [entry for document in documents for entry in _entries(document)]
    assert len(entries) >= 9  # a stdio entry per client, an HTTP entry where the client has one
    for document in documents:
        assert _entry_problems(document) == []


def test_toml_configurations_parse_and_start_the_proxy() -> None:
    documents = [tomllib.loads(block) for block in _blocks("toml")]
    assert documents and all(_entry_problems(document) == [] for document in documents)
    assert sum(1 for document in documents for _ in _entries(document)) >= 2


def test_the_http_proxy_line_parses_and_listens_on_the_entries_address() -> None:
    lines = [
        " ".join(block.replace("\\\n", " ").split())
        for block in _blocks("sh")
        if "--upstream https://" in block and "[" not in block
    ]
    assert lines, "docs/mcp.md shows no runnable HTTP proxy line"
    for line in lines:
        argv = shlex.split(line)
        assert argv[:3] == ["dsh-policy", "mcp", "proxy"]
        parsed = parse_command(_proxy_parser(), argv[3:])
        assert not isinstance(parsed, int), line
        assert listen_address(parsed.listen) == ("127.0.0.1", 8765)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server"]}}}, "is not dsh-policy"),
        (
            {
                "mcpServers": {
                    "fs": {"command": "dsh-policy", "args": ["mcp", "proxy", "--name", "other", "--", "x"]}
                }
            },
            "is not the entry's key",
        ),
        (
            {
                "servers": {
                    "fs": {"command": "dsh-policy", "args": ["mcp", "proxy", "--nme", "fs", "--", "x"]}
                }
            },
            "refuses its options",
        ),
        (
            {
                "mcp_servers": {
                    "fs": {"command": "dsh-policy", "args": ["mcp", "proxy", "--name", "fs", "--"]}
                }
            },
            "no server",
        ),
        ({"mcpServers": {"docs": {"url": "https://mcp.example.com/mcp"}}}, "not the loopback proxy"),
    ],
)
def test_the_checks_catch_a_wrong_entry(document: dict[str, Any], problem: str) -> None:
    found = _entry_problems(document)
    assert len(found) == 1 and problem in found[0]
