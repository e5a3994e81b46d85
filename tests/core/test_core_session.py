"""The fact log on disk and resuming an agent from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.core import (
    AssistantMessage,
    Message,
    ScriptedModel,
    Session,
    ToolResultMessage,
    reply,
)

pytestmark = pytest.mark.anyio


async def run_to_file(kit: Any, path: Path) -> Any:
    kit.tool("echo")
    agent, _ = await kit.agent(
        [reply(tool_calls=[("echo", '{"say": "hi"}')]), reply("said hi")], session=Session.to_file(path)
    )
    agent.followup(Message.user("greet"))
    await agent.wait_idle()
    return agent


async def test_every_record_is_one_json_line_in_order(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    agent = await run_to_file(kit, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    fact_types = {f.type for f in agent.session.facts}
    assert [r["type"] for r in records if r["type"] in fact_types] == kit.types(agent)
    result = next(r for r in records if r["type"] == "tool/result")
    assert result["data"]["value"] == {"say": "hi"} and result["turn"] == 1 and result["step"] == 1


async def test_loading_a_session_reproduces_its_facts(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    agent = await run_to_file(kit, path)
    loaded = Session.load(path)
    assert loaded.id == agent.session.id
    assert loaded.facts == agent.session.facts


async def test_resume_restores_history_and_continues_numbering(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    await run_to_file(kit, path)
    sources: list[str] = []
    kit.harness.on("agent/session-start", lambda e: sources.append(e.source))
    model = ScriptedModel([reply("welcome back")])
    resumed = await kit.harness.resume_agent(Session.load(path), model=model)
    assert sources == ["resume"]
    resumed.followup(Message.user("again"))
    await resumed.wait_idle()
    sent = model.requests[0].messages
    assert [type(m).__name__ for m in sent] == [
        "Message", "AssistantMessage", "ToolResultMessage", "AssistantMessage", "Message",
    ]
    assert sent[0] == Message.user("greet") and sent[-1] == Message.user("again")
    assert [f.turn for f in resumed.session.facts if f.type == "turn/start"] == [1, 2]
    assert len(Session.load(path).facts) == len(resumed.session.facts)


async def test_resume_closes_a_turn_the_process_died_in(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    await run_to_file(kit, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "tool/call")
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_text("\n".join(lines[: cut + 1]) + "\n", encoding="utf-8")
    model = ScriptedModel([reply("recovered")])
    resumed = await kit.harness.resume_agent(Session.load(crashed), model=model)
    assert kit.types(resumed)[-4:] == ["tool/call", "tool/result", "step/end", "turn/end"]
    assert kit.turn_ends(resumed) == [{"reason": "aborted", "detail": "interrupted"}]
    assert isinstance(resumed.history[-2], AssistantMessage)
    assert isinstance(resumed.history[-1], ToolResultMessage) and resumed.history[-1].is_error
    resumed.followup("go on")
    await resumed.wait_idle()
    assert kit.turn_ends(resumed)[-1] == {"reason": "completed"}


async def test_queued_input_survives_a_restart_without_waking(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    agent, _ = await kit.agent([], session=Session.to_file(path))
    agent.followup(Message.user("do this later"))
    agent.inject(Message.from_plugin("remember the style guide"))
    model = ScriptedModel([reply("done")])
    resumed = await kit.harness.resume_agent(Session.load(path), model=model)
    assert [m.text for _, m in resumed.inbox.next_turn] == ["do this later"]
    await resumed.wait_idle()
    assert model.requests == []
    resumed.steer(Message.from_plugin("go"))
    await resumed.wait_idle()
    assert [getattr(m, "text", "") for m in model.requests[0].messages] == [
        "remember the style guide", "go", "do this later",
    ]


def test_a_torn_last_line_is_ignored_but_a_broken_middle_line_is_an_error(tmp_path: Path) -> None:
    good = {"seq": 1, "type": "turn/start", "turn": 1, "step": None, "data": {}}
    torn = tmp_path / "torn.jsonl"
    torn.write_text(json.dumps(good) + '\n{"seq": 2, "ty', encoding="utf-8")
    assert [f.type for f in Session.load(torn).facts] == ["turn/start"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(good) + "\nnot json\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.jsonl:2: not a JSON record"):
        Session.load(broken)


def test_a_record_that_is_not_json_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    session = Session.to_file(tmp_path / "s.jsonl")
    with pytest.raises(ValueError):
        session.append("tool/result", value=float("nan"))
    assert session.records == [] and not (tmp_path / "s.jsonl").exists()


async def test_a_new_session_refuses_a_file_that_already_holds_one(kit: Any, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    await run_to_file(kit, path)
    with pytest.raises(FileExistsError, match=r"Session\.load"):
        Session.to_file(path)
