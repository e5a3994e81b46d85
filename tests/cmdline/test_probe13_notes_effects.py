# ruff: noqa: E501  (tables of config texts and URLs read better unwrapped)
"""The classes probe13's writer found while probing and left unbuilt, in spellings of our own with
their everyday look-alikes (no corpus entry): git URL rewrites to another host (shell and config
text), remote MCP servers registered in a client config, and text carried base64-encoded in a URL
shorter than the long-value test's 48 characters."""

from __future__ import annotations

import base64

import pytest
from dsh_policy.cmdline.effects import later_risks, shell_acts
from dsh_policy.cmdline.effects.agent_configs import unknown_remote_servers
from dsh_policy.cmdline.effects.git_rewrites import config_rewrites, rewrite_target
from dsh_policy.policy.cel.functions import url_encoded_text


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("url.https://git.mirror-cdn.example/.insteadOf", "https://github.com/"),
        ("url.git@code.example.net:.insteadof", "git@github.com:"),
        ("URL.ssh://git@forge.example.org/.pushInsteadOf", "https://gitlab.com/"),
    ],
)
def test_a_rewrite_to_another_host_is_read(key: str, value: str) -> None:
    assert rewrite_target(key, value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("url.git@github.com:.insteadOf", "https://github.com/"),
        ("url.https://x-access-token:${TOKEN}@github.com/.insteadOf", "https://github.com/"),
        ("url.https://github.com/.insteadOf", "gh:"),
        ("core.editor", "vim"),
    ],
)
def test_same_host_rewrites_and_aliases_are_not(key: str, value: str) -> None:
    assert rewrite_target(key, value) == ""


def test_shell_rewrites_are_a_registry_change() -> None:
    acts = shell_acts(
        'git config --global url."https://git.mirror-cdn.example/".insteadOf "https://github.com/"'
    )
    assert [a["kind"] for a in acts] == ["registry"]
    assert not [
        a
        for a in shell_acts('git config --global url."git@github.com:".insteadOf "https://github.com/"')
        if a["kind"] == "registry"
    ]


def test_config_text_rewrites() -> None:
    moved = (
        '[user]\n\tname = dev\n[url "https://git.mirror-cdn.example/"]\n\tinsteadOf = https://github.com/\n'
    )
    kept = '[url "git@github.com:"]\n    insteadOf = https://github.com/\n[core]\n    insteadOf = https://other.example/\n'
    assert config_rewrites(moved) == ["https://git.mirror-cdn.example/"]
    assert config_rewrites(kept) == []
    assert "url-rewrite" in later_risks("/home/dev/.gitconfig", moved)
    assert later_risks("/home/dev/.gitconfig", kept) == []


@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": {"notes": {"type": "http", "url": "https://mcp.notes-sync.example/mcp"}}}',
        '[mcp_servers.search]\nurl = "https://search.tools.example/sse"\n',
        '{"servers": {"x": {"httpUrl": "http://10.0.0.5:8080/mcp"}}}',
        '{"mcpServers": {"y": {"serverUrl": "http://mcp.stripe.com/"}}}',
    ],
)
def test_unknown_remote_servers_are_read(text: str) -> None:
    assert unknown_remote_servers(text)
    assert "remote-server" in later_risks(".cursor/mcp.json", text)


@pytest.mark.parametrize(
    "text",
    [
        '{"servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}}}',
        '{"mcpServers": {"docs": {"url": "https://docs.mcp.cloudflare.com/sse"}}}',
        '{"mcpServers": {"local": {"url": "http://localhost:3845/mcp"}}}',
        '{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "./docs"]}}}',
    ],
)
def test_vendor_and_local_servers_are_not(text: str) -> None:
    assert unknown_remote_servers(text) == []


def _b64(text: str, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(text.encode()).decode()


@pytest.mark.parametrize(
    "url",
    [
        "https://stats.example.net/p?d=" + _b64("DB_PASSWORD=hunter2-prod"),
        "https://stats.example.net/i/" + _b64("user=dev;host=build-7;key=abc", urlsafe=True) + ".gif",
        "https://stats.example.net/c?v=" + _b64("OPENAI_API_KEY=sk-xyz").replace("=", "%3D"),
    ],
)
def test_short_encoded_text_in_a_url_is_read(url: str) -> None:
    assert url_encoded_text(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.google.com/spreadsheets/d/1Qm4xZb8TnVw0aP2sKc7LrYjEe5uHdGf9oNiBtXyWzA3/edit",
        "https://github.com/org/repo/commit/3f786850e387550fdab836ed7e6dc881de23001b",
        "https://maps.example.com/api/js?key=AIzaSyD4f8kQ2x9Lm0pRtUvWxYz1234567890ab",
        "https://blog.example.com/posts/how-to-configure-the-build-cache-on-windows",
        "https://example.com/search?q=what+is+base64+encoding",
    ],
)
def test_random_ids_digests_and_slugs_are_not(url: str) -> None:
    assert not url_encoded_text(url)
