"""The top-level entry point: one plugin runtime, its tool registry and the agents on it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .agent import Agent, SessionStartEvent, new_agent_id
from .events import Listener
from .messages import Message, MessageSource
from .model import AssistantMessage, Model, ModelToolCall, ToolResultMessage
from .plugin import Context, Fiber, Runtime, ScopedTools
from .scopes import ScopeLayer
from .session import Fact, Session

PluginSpec = Any  # a plugin, or a (plugin, config) pair


class Harness:
    """Plugins, tools and services shared by every agent created from it.

    The harness context is the root of the fiber tree; ``harness.plugin(p, config)`` applies a
    plugin under it and returns the plugin's :class:`Fiber` (``fiber.dispose()`` unloads it).
    """

    def __init__(self, *, logger: Any = None) -> None:
        self.runtime = Runtime(logger)
        self.ctx = Context(self.runtime, Fiber("harness"), self.runtime.tools.root_scope)

    @property
    def tools(self) -> ScopedTools:
        """The tool registry (registrations made here live as long as the harness)."""
        return self.ctx.tools

    @property
    def logger(self) -> Any:
        """The harness logger (structlog)."""
        return self.runtime.logger

    def plugin(self, plugin: Any, config: Any = None) -> Fiber:
        """Apply a plugin at the root; returns its fiber."""
        return self.ctx.plugin(plugin, config)

    def on(self, event: str, listener: Listener, prepend: bool = False) -> Callable[[], None]:
        """Listen at the root (lives as long as the harness); returns a disposer."""
        return self.ctx.on(event, listener, prepend)

    def provide(self, name: str, service: Any) -> Callable[[], None]:
        """Provide a service at the root; returns a disposer."""
        return self.ctx.provide(name, service)

    async def create_agent(
        self,
        *,
        model: Model,
        session: Session | None = None,
        agent_id: str | None = None,
        parent: Agent | None = None,
        plugins: Iterable[PluginSpec] = (),
    ) -> Agent:
        """Create an agent and fire ``agent/session-start`` (source ``startup``) before returning.

        ``plugins`` are applied in the agent's own context: their guards apply to this agent's
        calls only, their tools are visible to this agent only (shadowing a global tool of the
        same name), and everything they registered goes away with ``agent.close()``.
        """
        session = session if session is not None else Session()
        agent_id = agent_id or new_agent_id()
        agent = self._new_agent(model, session, agent_id, parent, plugins)
        session.append("session/open", session_id=session.id, agent_id=agent_id)
        await self._start(agent, "startup")
        return agent

    async def resume_agent(
        self,
        session: Session,
        *,
        model: Model,
        parent: Agent | None = None,
        plugins: Iterable[PluginSpec] = (),
    ) -> Agent:
        """Recreate an agent from a loaded session (see :meth:`Session.load`) and fire
        ``agent/session-start`` with source ``resume``. A turn the process died in is closed as
        ``aborted``; input that was queued but never claimed is queued again (without waking)."""
        opened = next((f for f in session.records if f.type == "session/open"), None)
        agent_id = str(opened.data["agent_id"]) if opened is not None else new_agent_id()
        agent = self._new_agent(model, session, agent_id, parent, plugins)
        _replay(agent, session)
        await self._start(agent, "resume")
        return agent

    def _new_agent(
        self,
        model: Model,
        session: Session,
        agent_id: str,
        parent: Agent | None,
        plugins: Iterable[PluginSpec],
    ) -> Agent:
        parent_scope = parent.guard_scope if parent is not None else self.runtime.tools.root_scope
        ctx = self.ctx.child(f"agent:{agent_id}", ScopeLayer(parent_scope))
        agent = Agent(
            runtime=self.runtime, ctx=ctx, model=model, session=session, agent_id=agent_id, parent=parent
        )
        try:
            for spec in plugins:
                plugin, config = spec if isinstance(spec, tuple) else (spec, None)
                ctx.plugin(plugin, config)
        except BaseException:  # nothing of a half-built agent stays registered
            ctx.fiber.dispose(self.runtime.logger)
            raise
        return agent

    async def _start(self, agent: Agent, source: Any) -> None:
        await self.runtime.bus.emit_contained("agent/session-start", SessionStartEvent(agent, source))


def _replay(agent: Agent, session: Session) -> None:
    """Rebuild history, counters and the inbox from the session's records."""
    queued: dict[str, tuple[str, Message]] = {}
    open_turn: int | None = None
    open_step: int | None = None
    unanswered: dict[str, str] = {}
    entry_seq = 0
    for fact in session.records:
        data = fact.data
        kind = fact.type
        if kind == "inbox/queued":
            entry_seq += 1
            queued[str(data["id"])] = (str(data["lane"]), _message(data["message"]))
        elif kind == "inbox/claimed":
            for entry_id in data["ids"]:
                queued.pop(str(entry_id), None)
        elif kind == "turn/start":
            open_turn, agent.turn = fact.turn, fact.turn or agent.turn
        elif kind == "turn/end":
            open_turn = None
            _answer_lost_results(agent, unanswered)
        elif kind == "step/start":
            open_step = fact.step
        elif kind == "step/end":
            open_step = None
            _answer_lost_results(agent, unanswered)
        elif kind == "user/message":
            agent.history.append(_message(data))
        elif kind == "assistant/message":
            calls = tuple(
                ModelToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in data["tool_calls"]
            )
            agent.history.append(AssistantMessage(str(data["text"]), calls))
            unanswered.update({c.id: c.name for c in calls})
        elif kind == "tool/result":
            call_id = str(data["call_id"])
            unanswered.pop(call_id, None)
            text = "\n".join(data["content"])
            agent.history.append(ToolResultMessage(call_id, str(data["name"]), text, bool(data["is_error"])))
    if open_turn is not None:
        # The process died inside this turn: answer its open calls and close it, so the history
        # the model sees stays well-formed and the log says what happened.
        for call_id, name in unanswered.items():
            reason = f'tool "{name}" was interrupted'
            session.append(
                "tool/result", turn=open_turn, step=open_step, call_id=call_id, name=name, is_error=True,
                content=[f"Error: {reason}"], value=None,
                error={"message": reason, "info": {"code": "ABORTED"}},
            )
            agent.history.append(ToolResultMessage(call_id, name, f"Error: {reason}", True))
        if open_step is not None:
            session.append("step/end", turn=open_turn, step=open_step)
        session.append("turn/end", turn=open_turn, reason="aborted", detail="interrupted")
    agent._entry_seq = entry_seq
    for entry_id, (lane, message) in queued.items():
        getattr(agent.inbox, lane).append((entry_id, message))


def _answer_lost_results(agent: Agent, unanswered: dict[str, str]) -> None:
    """A step closed with calls the log holds no result for (its store failed mid-step): answer
    them in the history only, so a resumed agent never sends the model a dangling call."""
    for call_id, name in unanswered.items():
        text = f'Error: the result of tool "{name}" was not recorded'
        agent.history.append(ToolResultMessage(call_id, name, text, True))
    unanswered.clear()


def _message(data: Any) -> Message:
    source = data.get("source") or {}
    origin = MessageSource(source.get("kind", "user"), source.get("plugin"))
    return Message(data["role"], str(data["text"]), origin)


__all__ = ["Fact", "Harness"]
