"""``match.programs``: a rule about a few programs is evaluated only for shell lines that run one
of them (issue 13); everything else about the rule is unchanged, and a line the parser refuses
runs every such rule, so they fail closed on their own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dsh_policy.cmdline.shell import MAX_INPUT_CHARS
from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent

MakePolicy = Callable[..., Policy]

PACK = """
rules:
  - {id: ask-terraform, stage: pre-execute, match: {tools: [shell], programs: [terraform, "tofu*"]},
     when: 'true', decision: ask}
  - {id: guard-zfs, stage: guard, match: {tools: [shell], programs: [zfs]},
     when: 'shell.commands(args.command).exists(c, c[0] == "zfs" && "destroy" in c)'}
  - {id: ask-any, stage: pre-execute, match: {programs: [curl]}, when: 'true', decision: ask}
"""


def call(tool: str, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(tool, freeze_json(args), call_id="c1")


ENGINES = [pytest.param(name, id=name) for name in sorted(set(available_engines()) & {"python", "native"})]


@pytest.mark.parametrize("engine", ENGINES)
def test_rules_run_only_for_lines_running_their_programs(make_policy: MakePolicy, engine: str) -> None:
    policy = make_policy(PACK, engine=engine)
    assert policy.pre_execute(call("shell", command="terraform plan")).rules == ("t/ask-terraform",)
    assert policy.pre_execute(call("shell", command="sudo tofu apply")).rules == ("t/ask-terraform",)
    assert policy.pre_execute(call("shell", command="bash -c 'cd infra && terraform plan'")).decision == "ask"
    skipped = policy.pre_execute(call("shell", command="echo terraform"))
    assert skipped.decision == "allow"
    assert [entry.rule for entry in skipped.trace] == []  # not evaluated, like another tool's rule
    assert policy.check_tool_call(call("shell", command="zfs destroy tank")).decision == "deny"
    assert policy.check_tool_call(call("shell", command="zpool status")).decision == "allow"


@pytest.mark.parametrize("engine", ENGINES)
def test_calls_without_a_command_run_no_program(make_policy: MakePolicy, engine: str) -> None:
    policy = make_policy(PACK, engine=engine)
    assert policy.pre_execute(call("web_fetch", url="https://curl.se")).decision == "allow"
    assert policy.pre_execute(call("shell", command=42)).decision == "allow"
    # an argv list is a command line (joined with shell quoting, policy/decide/tool_views.py)
    assert policy.pre_execute(call("shell", command=["curl", "x"])).decision == "ask"
    assert policy.pre_execute(call("exec", command="curl https://example.com")).rules == ("t/ask-any",)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unparseable_line_runs_every_program_rule(make_policy: MakePolicy, engine: str) -> None:
    policy = make_policy(PACK, engine=engine)
    verdict = policy.check_tool_call(call("shell", command="x" * (MAX_INPUT_CHARS + 1)))
    assert verdict.decision == "deny"  # the guard ran, could not parse the line and failed closed
    assert "t/guard-zfs" in verdict.rules


def test_programs_need_a_tool_stage(write_pack: Callable[..., Any]) -> None:
    from dsh_policy.policy.loading import LoadFailure

    path = write_pack("rules:\n  - {id: x, stage: pre-step, match: {programs: [rm]}, decision: reject}\n")
    assert isinstance(Policy.load([path], engine="python"), LoadFailure)
