"""One tool call is decided by one compiled policy, and its audit record names that policy.

A reload that lands while a call runs (here: the tool itself edits the pack and forces the reload)
must not change how the rest of the call is decided, nor the digest the record carries; the next
call is decided by the new policy and recorded under its digest.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.core import Harness, ScriptedModel, ToolOutput, define_tool, reply
from dsh_policy.policy.events import StepEvent, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.gateway import PolicyGateway
from dsh_policy.policy.runtime.reload import ReloadingPolicy

HEADER = "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata:\n  name: pin\nspec:\n"
BLOCKS_MARKER = HEADER + (
    "  rules:\n"
    "    - id: withhold-marker\n"
    "      stage: post-execute\n"
    "      when: 'result.text.contains(\"MARKER\")'\n"
    "      decision: block\n"
    "      message: marker withheld\n"
)
ACCEPTS_ALL = HEADER + (
    "  rules:\n"
    "    - id: note-marker\n"
    "      stage: post-execute\n"
    "      when: 'result.text.contains(\"NEVER-PRESENT\")'\n"
    "      decision: block\n"
)


class FrozenClock:
    """Reload checks happen only when the test forces them."""

    def __call__(self) -> float:
        return 0.0


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


@pytest.mark.anyio
async def test_a_reload_mid_call_neither_changes_the_decision_nor_the_recorded_digest(tmp_path: Path) -> None:
    pack = tmp_path / "pin.yaml"
    _write(pack, BLOCKS_MARKER)
    policy = ReloadingPolicy.load_watching([str(pack)], engine="python", clock=FrozenClock())
    assert isinstance(policy, ReloadingPolicy), str(policy)
    first_digest = policy.digest
    log = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(log, fsync="off")
    harness = Harness()
    harness.plugin(PolicyGateway(policy, auditor=DecisionAuditor(writer, policy)))

    def edit_then_answer(args: Any, _run: Any) -> Any:
        # The pack changes and the new policy is put in force while this call is running.
        _write(pack, ACCEPTS_ALL)
        assert policy.check_now() is True
        return {"content": "output with MARKER inside"}

    harness.tools.register(
        define_tool(
            "shell",
            description="shell",
            execute=edit_then_answer,
            output=ToolOutput(render=lambda value: str(value["content"])),
        )
    )
    model = ScriptedModel(
        [
            reply(tool_calls=[("shell", '{"command": "first"}')]),
            reply(tool_calls=[("shell", '{"command": "second"}')]),
            reply("done"),
        ]
    )
    agent = await harness.create_agent(model=model)
    agent.followup("go")
    await agent.wait_idle()
    writer.close()

    second_digest = policy.digest
    assert second_digest != first_digest
    records = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    results = [record for record in records if record["kind"] == "tool_result"]
    assert [r["call"]["args"]["command"] for r in results] == ["first", "second"]
    first, second = results
    # The first call started under the blocking policy: its output is withheld by it, and its
    # record names it, although the accepting policy was in force when the record was written.
    assert first["decision"]["post_execute"]["decision"] == "block"
    assert first["decision"]["post_execute"]["rules"] == ["pin/withhold-marker"]
    assert first["policy"]["digest"] == first_digest
    # The second call is decided and recorded by the policy now in force.
    assert second["decision"]["post_execute"]["decision"] == "accept"
    assert second["policy"]["digest"] == second_digest


def test_every_verdict_is_stamped_with_the_deciding_policy(tmp_path: Path) -> None:
    pack = tmp_path / "pin.yaml"
    _write(pack, BLOCKS_MARKER)
    policy = ReloadingPolicy.load_watching([str(pack)], engine="python", clock=FrozenClock())
    assert isinstance(policy, ReloadingPolicy), str(policy)
    decider = policy.current()
    call = ToolCallEvent("shell", {"command": "ls"})
    verdicts = [
        decider.gate_step(StepEvent()),
        decider.pre_execute(call),
        decider.guard(call),
        decider.check_tool_call(call),
        decider.review_tool_result(ToolResultEvent(call=call, text="MARKER")),
    ]
    assert {verdict.policy_digest for verdict in verdicts} == {policy.digest}
    assert {verdict.policy.engine for verdict in verdicts} == {"python"}


def test_a_background_watcher_swaps_policies_off_the_decision_path(tmp_path: Path) -> None:
    pack = tmp_path / "pin.yaml"
    _write(pack, BLOCKS_MARKER)
    policy = ReloadingPolicy.load_watching([str(pack)], engine="python", interval=0.01)
    assert isinstance(policy, ReloadingPolicy), str(policy)
    before = policy.current()
    policy.watch_in_background()
    try:
        _write(pack, ACCEPTS_ALL)
        deadline = 500
        while policy.current() is before and deadline:
            time.sleep(0.01)
            deadline -= 1
        assert policy.current() is not before, "the watcher never swapped the new policy in"
        assert before.stamp.digest != policy.current().stamp.digest
    finally:
        policy.close()
    assert policy._watcher is None
