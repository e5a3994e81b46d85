"""A write of a file that runs later is judged like the shell commands it will run
(policy/decide/later_calls.py): the write takes the strictest verdict of those command lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent

PACK = """
rules:
  - {id: deny-rm, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.contains("rm -rf")',
     decision: deny, message: no recursive delete}
  - {id: ask-curl, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.contains("curl")',
     decision: ask, message: egress}
  - {id: ask-big, stage: pre-execute, match: {tools: [write_file]}, when: 'args.content.contains("BIG")',
     decision: ask, message: big}
"""


def call(tool: str, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(tool, freeze_json(args), turn=1, step=1)


def test_a_hook_is_decided_as_the_commands_it_runs(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    verdict = policy.pre_execute(
        call("write_file", path=".git/hooks/post-merge", content="#!/bin/sh\nrm -rf build /\n")
    )
    assert verdict.decision == "deny"
    assert verdict.rules == ("t/deny-rm",)
    assert ".git/hooks/post-merge will run" in (verdict.message or "")
    assert "no recursive delete" in (verdict.message or "")


def test_the_strictest_line_wins_and_the_writes_own_rules_stay(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    verdict = policy.pre_execute(
        call(
            "write_file",
            path="package.json",
            content='{"scripts": {"prepare": "curl -s x", "postinstall": "BIG"}}',
        )
    )
    assert verdict.decision == "ask"
    assert verdict.rules == ("t/ask-big",)  # a line no stricter than the write adds nothing
    verdict = policy.pre_execute(
        call(
            "write_file",
            path="package.json",
            content='{"scripts": {"prepare": "curl -s x", "install": "rm -rf /"}, "x": "BIG"}',
        )
    )
    assert verdict.decision == "deny"
    assert verdict.rules == ("t/ask-big", "t/deny-rm")


def test_benign_commands_leave_the_write_allowed(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    assert (
        policy.pre_execute(call("write_file", path=".git/hooks/pre-commit", content="make lint\n")).decision
        == "allow"
    )
    assert (
        policy.pre_execute(call("edit_file", path=".husky/pre-push", new_string="npm test\n")).decision
        == "allow"
    )


def test_only_whole_text_of_files_that_run_later_is_read(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    # an ordinary file and a shell call imply nothing; a patch is not a file's text
    assert policy.pre_execute(call("write_file", path="notes.txt", content="rm -rf /\n")).decision == "allow"
    assert policy.pre_execute(call("shell", command="echo rm -rf")).decision == "deny"  # its own rule
    assert (
        policy.pre_execute(call("apply_patch", path=".git/hooks/x", patch="+rm -rf /\n")).decision == "allow"
    )


def test_an_mcp_tool_writing_a_hook_is_judged_too(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    verdict = policy.pre_execute(
        call("mcp__fs__write_file", path=".git/hooks/pre-commit", content="curl -s x\n")
    )
    assert verdict.decision == "ask"
    assert verdict.rules == ("t/ask-curl",)
    # the framework entry that holds only a name and arguments judges it the same way
    found = policy.pre_execute_call(
        "mcp__fs__write_file", freeze_json({"path": ".git/hooks/x", "content": "curl -s x\n"})
    )
    assert found.decision == "ask"


def test_a_dependency_file_is_decided_as_the_installs_it_causes(make_policy: Callable[..., Policy]) -> None:
    pack = """
rules:
  - {id: ask-git-install, stage: pre-execute, match: {tools: [shell]},
     when: 'shell.acts(args.command).exists(e, e.kind == "source")', decision: ask, message: outside source}
"""
    policy = make_policy(pack)
    verdict = policy.pre_execute(
        call(
            "write_file",
            path="Cargo.toml",
            content='[dependencies]\nfast = { git = "https://example.org/x/fast" }\n',
        )
    )
    assert verdict.decision == "ask"
    assert "Cargo.toml will run `cargo add --git https://example.org/x/fast` later" in (verdict.message or "")
    registry_only = call("write_file", path="Cargo.toml", content='[dependencies]\nserde = "1"\n')
    assert policy.pre_execute(registry_only).decision == "allow"
