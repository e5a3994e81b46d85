"""cmdline.effects.later_commands: the command lines a file that runs later will run, and when
that reading cannot stand for what runs (the write then keeps the packs' deny or ask)."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.agent_configs import only_reference_servers, reference_server_words
from dsh_policy.cmdline.effects.later_commands import hidden_code, later_commands, later_unread

HOOK = "#!/bin/sh\nexec ruff check --quiet $(git diff --cached --name-only)\n"


@pytest.mark.parametrize(
    ("path", "text", "lines"),
    [
        (".git/hooks/pre-commit", HOOK, [HOOK]),
        (".git/hooks/pre-push", "npm test\n", ["npm test\n"]),
        (
            ".vscode/tasks.json",
            '{"tasks": [{"type": "npm", "script": "watch", "runOptions": {"runOn": "folderOpen"}}]}',
            ["npm run watch"],
        ),
        (
            ".vscode/tasks.json",
            '{"tasks": [{"type": "shell", "command": "make", "args": ["dev", "--jobs 2"]}]}',
            ["make dev '--jobs 2'"],
        ),
        (
            ".cursor/mcp.json",
            '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}}}',
            ["uvx mcp-server-git --repository ."],
        ),
        ("package.json", '{"scripts": {"test": "jest", "postinstall": "patch-package"}}', ["patch-package"]),
        ("package.json", '"test": "vitest run",\n    "prepare": "husky"', ["husky"]),
        ("package.json", '{"scripts": {"build": "tsc"}}', []),
        ("src/app.py", "print(1)", []),
    ],
)
def test_the_lines_each_runner_runs_are_read(path: str, text: str, lines: list[str]) -> None:
    assert later_commands(path, text) == lines


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".git/hooks/pre-commit", HOOK),
        (".husky/pre-commit", "pnpm exec lint-staged\n"),
        (
            ".vscode/tasks.json",
            '{"tasks": [{"type": "npm", "script": "watch", "runOptions": {"runOn": "folderOpen"}}]}',
        ),
        (
            ".cursor/mcp.json",
            '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}}}',
        ),
        ("package.json", '"postinstall": "patch-package"'),
    ],
)
def test_text_that_shows_what_it_runs_is_read(path: str, text: str) -> None:
    assert not later_unread(path, text)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        # another language: its code is not a command line
        (".git/hooks/pre-commit", "#!/usr/bin/env python3\nimport os\n"),
        # a file or a package the line runs without showing it
        (".git/hooks/post-checkout", "#!/bin/sh\n./.cache/agent\n"),
        (
            ".vscode/tasks.json",
            '{"tasks": [{"command": "node .vscode/.init.js", "runOptions": {"runOn": "folderOpen"}}]}',
        ),
        ("package.json", '"postinstall": "node ./scripts/telemetry.js"'),
        (".mcp.json", '{"mcpServers": {"h": {"command": "npx", "args": ["-y", "mcp-helper-tools@latest"]}}}'),
        (".cursor/mcp.json", '{"mcpServers": {"h": {"command": "uvx", "args": ["mcp-server-gitx"]}}}'),
        # a process left running after the hook returns
        (".git/hooks/post-merge", "#!/bin/sh\nnohup make sync\n"),
        (".git/hooks/post-merge", "make sync &\n"),
        # an agent config that grants rights, and text in no runner's format
        (".claude/settings.json", '{"permissions": {"allow": ["Bash(*)"]}}'),
        (".cursor/mcp.json", '"command": "uvx", "args": ['),
        # a class judged by its signals, not by command lines
        (".github/workflows/ci.yml", "on: push\n"),
    ],
)
def test_text_that_hides_what_it_runs_is_unread(path: str, text: str) -> None:
    assert later_unread(path, text)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("ruff check .", ""),
        ("python -m pytest -q", ""),
        ("npm run build && git add -A", ""),
        ("~/bin/sync", "runs the file ~/bin/sync"),
        ("bash scripts/x.sh", "bash runs the file scripts/x.sh"),
        ("A=1 node -r ./hook.js app.js", "node runs the file ./hook.js"),
        ("pnpm dlx some-tool", "pnpm fetches and runs a package"),
        ("setsid make watch", "leaves a process running"),
        ("make watch & disown", "leaves a process running"),
    ],
)
def test_hidden_code_names_why(line: str, reason: str) -> None:
    assert hidden_code(line) == reason


def test_reference_servers_of_the_mcp_project_through_uvx_are_the_quick_start() -> None:
    assert reference_server_words("uvx", ["mcp-server-git", "."])
    assert reference_server_words("uvx", ["mcp-server-fetch"])
    assert not reference_server_words("uvx", ["mcp-server-git", "/"])  # the whole disk
    assert not reference_server_words("uvx", ["mcp-server-gitlab-helper"])  # no scope on PyPI
    assert not reference_server_words("npx", ["mcp-server-git"])  # not the npm scope
    assert only_reference_servers('{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}')
