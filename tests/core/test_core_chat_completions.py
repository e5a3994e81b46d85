"""The OpenAI-compatible model adapter, driven through the real loop with a fake transport."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import pytest
from dsh_policy.core import Message, reply
from dsh_policy.core.chat_completions import (
    ChatCompletionsModel,
    ModelProtocolError,
    parse_chat_completion,
)

pytestmark = pytest.mark.anyio


class FakeEndpoint:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[Mapping[str, str]] = []

    async def __call__(self, url: str, body: bytes, headers: Mapping[str, str]) -> bytes:
        assert url == "http://llm.local/v1/chat/completions"
        self.bodies.append(json.loads(body))
        self.headers.append(headers)
        answer = self.answers.pop(0)
        return answer if isinstance(answer, bytes) else json.dumps(answer).encode()


def completion(
    content: str | None = None, calls: Sequence[tuple[str, str, str]] = (), finish: str = "stop"
) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
        ]
    return {"id": "x", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


async def test_a_tool_round_trip_through_the_loop(kit: Any) -> None:
    kit.tool("echo", parameters={"type": "object", "properties": {"text": {"type": "string"}}})
    endpoint = FakeEndpoint(
        completion(None, [("call_a", "echo", '{"text": "hi"}')], "tool_calls"), completion("all done")
    )
    model = ChatCompletionsModel(base_url="http://llm.local/v1/", model="m", api_key="k", transport=endpoint)
    agent = await kit.harness.create_agent(model=model)
    agent.followup(Message.user("say hi"))
    await agent.wait_idle()
    assert kit.turn_ends(agent) == [{"reason": "completed"}]
    assert kit.calls == [("echo", {"text": "hi"})]
    first, second = endpoint.bodies
    assert first["model"] == "m" and first["messages"] == [{"role": "user", "content": "say hi"}]
    assert first["tools"][0]["function"]["name"] == "echo"
    assert second["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"text": "hi"}'
    assert second["messages"][2] == {"role": "tool", "tool_call_id": "call_a", "content": '{"text":"hi"}'}
    assert endpoint.headers[0]["Authorization"] == "Bearer k"


def test_finish_reasons_map_to_stop_reasons() -> None:
    assert parse_chat_completion(completion("cut", finish="length")).stop_reason == "max_tokens"
    assert parse_chat_completion(completion("ok")).stop_reason == "stop"
    calls = parse_chat_completion(completion(None, [("c", "t", "")], finish="stop"))
    assert calls.stop_reason == "tool_calls" and calls.tool_calls[0].arguments == ""


@pytest.mark.parametrize(
    "payload", [{"choices": []}, {"nope": 1}, {"choices": [{"message": {"tool_calls": [{"id": 1}]}}]}]
)
def test_malformed_completions_are_protocol_errors(payload: Any) -> None:
    with pytest.raises(ModelProtocolError):
        parse_chat_completion(payload)


async def test_a_bad_response_is_an_error_turn_not_a_crash(kit: Any) -> None:
    model = ChatCompletionsModel(base_url="http://llm.local/v1", model="m", transport=FakeEndpoint(b"<html>"))
    agent = await kit.harness.create_agent(model=model)
    agent.followup("hi")
    await agent.wait_idle()
    end = kit.turn_ends(agent)[0]
    assert end["reason"] == "error" and "not JSON" in end["error"]["message"]


async def test_abort_cancels_a_pending_request(kit: Any) -> None:
    started = anyio.Event()

    async def hanging(url: str, body: bytes, headers: Mapping[str, str]) -> bytes:
        started.set()
        await anyio.sleep(60)
        return b"{}"

    model = ChatCompletionsModel(base_url="http://llm.local/v1", model="m", transport=hanging)
    agent = await kit.harness.create_agent(model=model)
    agent.followup("hi")
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.wait_idle)
            await started.wait()
            agent.abort("enough")
    assert kit.turn_ends(agent) == [{"reason": "aborted", "detail": "enough"}]


def test_scripted_and_real_models_share_the_reply_type() -> None:
    assert type(reply("x")) is type(parse_chat_completion(completion("x")))
