"""Shared helpers for the core tests: a harness with a scripted model and a few small tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from dsh_policy.core import (
    Agent,
    Harness,
    Message,
    ModelReply,
    ScriptedModel,
    ToolRun,
    define_tool,
    thaw,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Kit:
    """A harness plus helpers to build agents and read their logs."""

    def __init__(self) -> None:
        self.harness = Harness()
        self.calls: list[tuple[str, Any]] = []

    @property
    def bus(self) -> Any:
        return self.harness.runtime.bus

    def tool(
        self,
        name: str,
        body: Callable[[Any, ToolRun], Any] | None = None,
        *,
        parameters: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        """Register a tool that records its calls; the default body echoes its arguments."""

        async def execute(args: Any, run: ToolRun) -> Any:
            self.calls.append((name, args))
            if body is None:
                return dict(args) if hasattr(args, "keys") else args
            result = body(args, run)
            if hasattr(result, "__await__"):
                result = await result
            return result

        self.harness.tools.register(
            define_tool(
                name,
                description=f"the {name} tool",
                parameters=parameters if parameters is not None else {"type": "object"},
                execute=execute,
                **options,
            )
        )

    async def agent(self, replies: Sequence[ModelReply], **options: Any) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(list(replies))
        agent = await self.harness.create_agent(model=model, **options)
        return agent, model

    async def run(
        self, replies: Sequence[ModelReply], *prompts: str, **options: Any
    ) -> tuple[Agent, ScriptedModel]:
        agent, model = await self.agent(replies, **options)
        for prompt in prompts:
            agent.followup(Message.user(prompt))
        await agent.wait_idle()
        return agent, model

    @staticmethod
    def passthrough(log: list[Any], label: Any = None) -> Callable[..., Any]:
        """A waterfall listener that records ``label`` (or its first argument) and calls next."""

        def listener(*args: Any) -> Any:
            log.append(args[0] if label is None else label)
            return args[-1]()

        return listener

    @staticmethod
    def types(agent: Agent) -> list[str]:
        """Fact types of the agent's session, in order."""
        return [fact.type for fact in agent.session.facts]

    @staticmethod
    def texts(agent: Agent, fact_type: str = "user/message") -> list[str]:
        """The ``text`` of every fact of one type."""
        return [fact.data["text"] for fact in agent.session.facts if fact.type == fact_type]

    @staticmethod
    def turn_ends(agent: Agent) -> list[dict[str, Any]]:
        """The data of every ``turn/end`` fact, thawed."""
        return [thaw(fact.data) for fact in agent.session.facts if fact.type == "turn/end"]

    @staticmethod
    def sent(model: ScriptedModel, index: int) -> list[str]:
        """The text of every history entry sent with request ``index``."""
        return [getattr(entry, "text", "") for entry in model.requests[index].messages]


@pytest.fixture
def kit() -> Kit:
    return Kit()
