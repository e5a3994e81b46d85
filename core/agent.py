"""The agent loop: inbox, turns, steps, tool batches (HARNESS.md section 4).

An agent is driven either inline (``await agent.wait_idle()`` runs turns until the inbox is drained
or the loop parks) or by a background task (``await agent.run()`` inside the caller's task group;
``wait_idle()`` then waits for it). Either way nothing outlives the caller's scope.

A turn never raises out of the loop: a failure ends it with reason ``error`` (or ``aborted`` when
its signal fired), ``agent/error`` is emitted, ``turn/end`` is appended and queued work stays parked
until the next wake.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from .decisions import Enter, PreStepDecision, Reject, enter
from .execution import ToolResult
from .failures import describe, exact_str, is_cancellation, log_failure, safe_text, type_name
from .frozen import NotJsonError, thaw
from .messages import Message, checked_message
from .model import (
    AssistantMessage,
    HistoryEntry,
    Model,
    ModelReply,
    ModelRequest,
    ModelToolCall,
    ToolResultMessage,
)
from .pipeline import PendingCall, aborted, aborted_before_dispatch
from .plugin import Context, Runtime
from .scopes import ScopeLayer
from .session import Fact, Session
from .signals import AbortController, AbortedError, AbortSignal, cancel_on_abort
from .tool_definitions import ContractError

#: Bodies of concurrency-safe calls in one batch that may run at the same time.
MAX_PARALLEL_TOOLS = 10

#: How long closing a turn the caller is cancelling may take (settling its open calls, reporting
#: ``agent/error``): listeners awaited then run shielded, so a stuck one must not hold the caller.
CLOSE_GRACE_SECONDS = 5.0

Status = Literal["idle", "running"]
Lane = Literal["next_turn", "next_step"]


@dataclass(frozen=True, slots=True)
class SessionStartEvent:
    """``agent/session-start``: once, before turn 1."""

    agent: Agent
    source: Literal["startup", "resume"]


@dataclass(frozen=True, slots=True)
class PreStepEvent:
    """``agent/pre-step``: the claimed messages of a proposed step and its coordinates."""

    agent: Agent
    messages: tuple[Message, ...]
    turn: int
    step: int
    signal: AbortSignal


@dataclass(frozen=True, slots=True)
class TurnStoppingEvent:
    """``agent/turn-stopping``: the turn has an end state; ``agent.steer()`` asks for one more step."""

    agent: Agent
    turn: int
    signal: AbortSignal


@dataclass(frozen=True, slots=True)
class AgentErrorEvent:
    """``agent/error``: a turn ended with an exception (``reason`` is ``error`` or ``aborted``)."""

    agent: Agent
    turn: int
    reason: str
    error: BaseException


@dataclass(frozen=True, slots=True)
class AgentStatusEvent:
    """``agent/status``: the driver went ``running`` or ``idle``."""

    agent: Agent
    status: Status


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a turn ended: ``completed``, ``blocked``, ``max_tokens``, ``aborted`` or ``error``."""

    reason: str
    detail: Any = None

    def fact_data(self) -> dict[str, Any]:
        """The ``turn/end`` fact's data."""
        if self.reason == "error":
            return {"reason": "error", "error": self.detail}
        if self.detail is not None:
            return {"reason": self.reason, "detail": self.detail}
        return {"reason": self.reason}


class Inbox:
    """Two ordered lanes of (entry id, message): input for the next turn and for the next step."""

    __slots__ = ("next_step", "next_turn")

    def __init__(self) -> None:
        self.next_turn: deque[tuple[str, Message]] = deque()
        self.next_step: deque[tuple[str, Message]] = deque()

    def pending(self) -> bool:
        """Whether any input waits."""
        return bool(self.next_turn or self.next_step)


class Agent:
    """One conversation driven by a model, with its own scoped context and fact log."""

    def __init__(
        self,
        *,
        runtime: Runtime,
        ctx: Context,
        model: Model,
        session: Session,
        agent_id: str,
        parent: Agent | None = None,
    ) -> None:
        self.runtime = runtime
        self.ctx = ctx
        self.model = model
        self.session = session
        self.id = agent_id
        self.parent = parent
        self.status: Status = "idle"
        self.turn = 0
        self.step = 0
        self.history: list[HistoryEntry] = []
        self.inbox = Inbox()
        self._woken = False
        self._entry_seq = 0
        self._controller: AbortController | None = None
        self._drive_lock: anyio.Lock | None = None
        self._runner_active = False
        self._wake_event: anyio.Event | None = None
        self._idle_waiters: list[anyio.Event] = []

    # identity

    @property
    def session_id(self) -> str:
        """The id of the session this agent logs to."""
        return self.session.id

    @property
    def guard_scope(self) -> ScopeLayer:
        """The scope whose guards (and its ancestors') apply to this agent's calls."""
        return self.ctx.scope

    @property
    def facts(self) -> list[Fact]:
        """The session's fact log."""
        return self.session.facts

    # the inbox

    def followup(self, message: Message | str) -> None:
        """Queue input for a later turn and wake the driver."""
        self._enqueue("next_turn", _as_message(message, "user"), wake=True)

    def steer(self, message: Message | str) -> None:
        """Queue input for the next step (of the current turn if one runs) and wake the driver."""
        self._enqueue("next_step", _as_message(message, "plugin"), wake=True)

    def inject(self, message: Message | str) -> None:
        """Queue context for the next step without waking the driver."""
        self._enqueue("next_step", _as_message(message, "plugin"), wake=False)

    def _enqueue(self, lane: Lane, message: Message, *, wake: bool) -> None:
        self._entry_seq += 1
        entry_id = f"q{self._entry_seq}"
        # Durable first: if the journal append raises, the inbox is untouched.
        self.session.append("inbox/queued", id=entry_id, lane=lane, message=_message_data(message))
        getattr(self.inbox, lane).append((entry_id, message))
        if wake:
            self._wake()

    def _wake(self) -> None:
        self._woken = True
        if self._wake_event is not None:
            self._wake_event.set()

    def abort(self, reason: Any = "aborted") -> None:
        """Abort the running turn (if any): its pending waits are cancelled and it ends ``aborted``."""
        if self._controller is not None:
            self._controller.abort(reason)

    def close(self) -> None:
        """Abort the running turn and dispose everything registered through this agent's context."""
        self.abort("agent closed")
        self.ctx.fiber.dispose(self.runtime.logger)

    # driving

    async def wait_idle(self) -> None:
        """Run (or, with a background runner, wait for) turns until the agent is idle."""
        if self._runner_active:
            while self.status == "running" or (self._woken and self.inbox.pending()):
                event = anyio.Event()
                self._idle_waiters.append(event)
                await event.wait()
            return
        if self._drive_lock is None:
            self._drive_lock = anyio.Lock()
        async with self._drive_lock:
            await self._drive()

    async def run(self) -> None:
        """Drive the agent forever, waking on ``followup``/``steer``; cancel the caller's scope to stop."""
        if self._runner_active:
            raise RuntimeError(f"agent {self.id} already has a runner")
        self._runner_active = True
        try:
            while True:
                await self._drive()
                if not (self._woken and self.inbox.pending()):
                    self._wake_event = anyio.Event()
                    await self._wake_event.wait()
                    self._wake_event = None
        finally:
            self._runner_active = False

    async def _drive(self) -> None:
        while self._woken:
            self._woken = False
            if not self.inbox.pending():
                continue
            await self._set_status("running")
            try:
                while self.inbox.pending():
                    end = await self._run_turn()
                    if end.reason in ("blocked", "error", "aborted"):
                        # Parked: queued work (and any wake that came during the turn) waits for
                        # the next wake.
                        self._woken = False
                        break
            finally:
                # Shielded: even when the caller's scope is being cancelled, observers must see
                # the agent go idle.
                with anyio.CancelScope(shield=True):
                    await self._set_status("idle")

    async def _set_status(self, status: Status) -> None:
        self.status = status
        if status == "idle":
            waiters, self._idle_waiters = self._idle_waiters, []
            for event in waiters:
                event.set()
        await self.runtime.bus.emit_contained("agent/status", AgentStatusEvent(self, status))

    # a turn

    async def _run_turn(self) -> TurnEnd:
        self.turn += 1
        self.step = 0
        turn = self.turn
        controller = AbortController()
        self._controller = controller
        signal = controller.signal
        escaping: BaseException | None = None
        try:
            self.session.append("turn/start", turn=turn)
            end = await self._turn_body(turn, signal)
        except BaseException as exc:
            if is_cancellation(exc):
                # The caller is cancelling: close the turn, shielded and bounded, and let the
                # cancellation go on.
                escaping = exc
                controller.abort("cancelled")
                end = TurnEnd("aborted", "cancelled")
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_GRACE_SECONDS):
                    await self._report(turn, end, exc)
            else:  # any other exception, KeyboardInterrupt and SystemExit included
                end = await self._failed(turn, signal, exc)
        finally:
            self._controller = None
        end = self._close_turn(turn, end)
        if escaping is not None:
            raise escaping
        return end

    def _close_turn(self, turn: int, end: TurnEnd) -> TurnEnd:
        """Append ``turn/end``; a failing log is reported and turns the end into an error."""
        try:
            self.session.append("turn/end", turn=turn, **end.fact_data())
        except BaseException as exc:  # the log itself is failing: say so, keep the loop alive
            if is_cancellation(exc):
                raise
            log_failure(self.runtime.logger, "turn/end append failed", agent=self.id, turn=turn,
                        error=describe(exc))
            end = TurnEnd("error", {"message": describe(exc), "code": "UNKNOWN"})
        return end

    async def _failed(self, turn: int, signal: AbortSignal, exc: BaseException) -> TurnEnd:
        if isinstance(exc, AbortedError) or signal.aborted:
            reason = exc.reason if isinstance(exc, AbortedError) else signal.reason
            end = TurnEnd("aborted", safe_text(reason))
        else:
            end = TurnEnd("error", {"message": describe(exc), "code": "UNKNOWN"})
        await self._report(turn, end, exc)
        return end

    async def _report(self, turn: int, end: TurnEnd, exc: BaseException) -> None:
        await self.runtime.bus.emit_contained("agent/error", AgentErrorEvent(self, turn, end.reason, exc))

    async def _turn_body(self, turn: int, signal: AbortSignal) -> TurnEnd:
        end: TurnEnd | None = None
        first_proposal = True
        last_step = 0
        while True:
            if end is not None and not self.inbox.next_step:
                await self._turn_stopping(turn, signal)
                if not self.inbox.next_step:
                    return end
            _check(signal)
            claimed = self._claim(first_proposal)
            proposed = last_step + 1
            decision = await self._pre_step(claimed, turn, proposed, signal)
            if isinstance(decision, Reject):
                return TurnEnd("blocked", decision.reason)
            if not decision.messages and (first_proposal or end is not None):
                return end or TurnEnd("completed")
            first_proposal = False
            last_step = proposed
            self.step = proposed
            end, concluded = await self._run_step(turn, proposed, decision.messages, signal)
            if concluded:
                # A concluding result is terminal: one model request, whatever contexts it
                # carried (they were recorded in the step). turn-stopping still hears of the
                # stop, but what it queues waits for the next turn instead of reopening this one.
                await self._turn_stopping(turn, signal)
                return end  # type: ignore[return-value]

    def _claim(self, first_proposal: bool) -> tuple[Message, ...]:
        entries = list(self.inbox.next_step)
        take_turn_input = first_proposal and bool(self.inbox.next_turn)
        if take_turn_input:
            entries.append(self.inbox.next_turn[0])
        if not entries:
            return ()
        self.session.append("inbox/claimed", ids=[entry_id for entry_id, _ in entries])
        self.inbox.next_step.clear()
        if take_turn_input:
            self.inbox.next_turn.popleft()
        return tuple(message for _, message in entries)

    async def _pre_step(
        self, claimed: tuple[Message, ...], turn: int, step: int, signal: AbortSignal
    ) -> PreStepDecision:
        event = PreStepEvent(self, claimed, turn, step, signal)
        decision: Any = None
        with cancel_on_abort(signal):
            decision = await self.runtime.bus.waterfall("agent/pre-step", (event,), lambda: enter(claimed))
        _check(signal)
        if isinstance(decision, Reject):
            return Reject(decision.reason)  # re-checked: the reason goes into turn/end
        if not isinstance(decision, Enter):
            raise ContractError(f"agent/pre-step returned {type_name(decision)}, expected enter/reject")
        entered = decision.messages
        if entered is claimed:  # the default: messages checked when they were queued
            return decision
        messages = tuple(checked_message(m, "an entered message") for m in entered)
        same = type(entered) is tuple and all(a is b for a, b in zip(messages, entered, strict=True))
        return decision if same else Enter(messages)

    async def _turn_stopping(self, turn: int, signal: AbortSignal) -> None:
        with cancel_on_abort(signal):
            await self.runtime.bus.serial("agent/turn-stopping", TurnStoppingEvent(self, turn, signal))
        _check(signal)

    # a step

    async def _run_step(
        self, turn: int, step: int, messages: tuple[Message, ...], signal: AbortSignal
    ) -> tuple[TurnEnd | None, bool]:
        """Open the step, ask the model, run its tool calls. Returns the turn's end (None: another
        step is owed) and whether a result concluded the turn."""
        append = self.session.append
        append("step/start", turn=turn, step=step)
        batch_ran = False
        failing = False
        try:
            for message in messages:
                append("user/message", turn=turn, step=step, **_message_data(message))
                self.history.append(message)
            reply = await self._ask_model(signal)
            append(
                "assistant/message",
                turn=turn,
                step=step,
                text=reply.text,
                tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
                stop_reason=reply.stop_reason,
            )
            self.history.append(AssistantMessage(reply.text, reply.tool_calls))
            if not reply.tool_calls:
                return TurnEnd("max_tokens" if reply.stop_reason == "max_tokens" else "completed"), False
            batch_ran = True
            concluded = await self._run_tool_calls(reply.tool_calls, turn, step, signal)
            _check(signal)
            if concluded:
                self._flush_contexts(turn, step)
                return TurnEnd("completed"), True
            return None, False
        except BaseException:
            failing = True
            if batch_ran:
                # The batch settled (or was answered) but the turn closes here: its contexts
                # are recorded now, after every result, instead of opening the next turn.
                try:
                    self._flush_contexts(turn, step)
                except BaseException as exc:
                    if is_cancellation(exc):
                        raise
                    log_failure(self.runtime.logger, "recording contexts failed", agent=self.id,
                                turn=turn, error=describe(exc))
            raise
        finally:
            try:
                append("step/end", turn=turn, step=step)
            except BaseException as exc:
                if not failing or is_cancellation(exc):
                    raise
                log_failure(self.runtime.logger, "step/end append failed", agent=self.id, turn=turn,
                            error=describe(exc))

    def _flush_contexts(self, turn: int, step: int) -> None:
        """Record everything waiting in the next-step FIFO as this step's user messages, in order.

        Used when a turn closes right after a tool batch (a concluding result, an abort, a
        failure): the batch's contexts, and input queued with them, land after every result and
        before the turn closes; they are in the history, so the next request sends them.
        """
        entries = list(self.inbox.next_step)
        if not entries:
            return
        self.session.append("inbox/claimed", ids=[entry_id for entry_id, _ in entries])
        self.inbox.next_step.clear()
        for _, message in entries:
            self.session.append("user/message", turn=turn, step=step, **_message_data(message))
            self.history.append(message)

    async def _ask_model(self, signal: AbortSignal) -> ModelReply:
        request = ModelRequest(tuple(self.history), self.runtime.tools.specs(self.guard_scope), signal)
        reply: Any = None
        with cancel_on_abort(signal):
            reply = await self.model.complete(request)
        _check(signal)
        return checked_reply(reply)

    async def _run_tool_calls(
        self, calls: tuple[ModelToolCall, ...], turn: int, step: int, signal: AbortSignal
    ) -> bool:
        """Policy in model order, bodies in parallel where safe, commits in model order.
        Returns whether a result concluded the turn.

        Whatever happens on the way (cancellation included), every call of the reply leaves with
        a result in the history, in model order: the next request never carries a dangling call.
        """
        registry = self.runtime.tools
        slots = [_CallSlot(call) for call in calls]
        concluded = False
        try:
            for slot in slots:
                call = slot.call
                arguments = parse_arguments(call.arguments)
                self._log_call(slot, turn, step, arguments)
                slot.pending = await registry.prepare(
                    call.name, arguments, call_id=call.id, agent=self, signal=signal
                )
            for group in _batches(slots):
                if len(group) == 1:
                    await group[0].prepared.dispatch()
                else:
                    limiter = anyio.CapacityLimiter(MAX_PARALLEL_TOOLS)
                    async with anyio.create_task_group() as tasks:
                        for item in group:
                            tasks.start_soon(_dispatch_limited, item.prepared, limiter)
                for item in group:
                    result = await item.prepared.settle()
                    self._commit_result(item, result, turn, step)
                    concluded = concluded or result.concludes_turn
        except BaseException as exc:
            cancelled = is_cancellation(exc)
            with anyio.CancelScope(shield=cancelled):
                await self._answer_open_calls(slots, turn, step, cancelled)
            raise
        return concluded

    def _log_call(self, slot: _CallSlot, turn: int, step: int, arguments: Any) -> None:
        call = slot.call
        append = self.session.append
        try:
            append("tool/call", turn=turn, step=step, call_id=call.id, name=call.name, arguments=arguments)
        except (NotJsonError, RecursionError):  # parsed, too deep to keep: log the text as written
            append("tool/call", turn=turn, step=step, call_id=call.id, name=call.name,
                   arguments=call.arguments)
        slot.logged = True

    async def _answer_open_calls(
        self, slots: list[_CallSlot], turn: int, step: int, cancelled: bool
    ) -> None:
        """Give every call not yet committed its result (in model order) before the turn closes."""
        for slot in slots:
            if slot.committed:
                continue
            result = await _interrupted_result(slot, cancelled)
            try:
                self._commit_result(slot, result, turn, step)
            except BaseException as exc:
                if is_cancellation(exc):
                    raise
                log_failure(self.runtime.logger, "recording an interrupted call failed", agent=self.id,
                            call_id=slot.call.id, error=describe(exc))

    def _commit_result(self, slot: _CallSlot, result: ToolResult, turn: int, step: int) -> None:
        call = slot.call
        # History first: whatever the log does next, the call is answered for the model.
        self.history.append(ToolResultMessage(call.id, call.name, result.text, result.is_error))
        slot.committed = True
        if not slot.logged:
            self._log_call(slot, turn, step, call.arguments)
        error = result.error
        self.session.append(
            "tool/result",
            turn=turn,
            step=step,
            call_id=call.id,
            name=call.name,
            is_error=result.is_error,
            content=[part.text for part in result.content],
            value=thaw(result.value),
            error=None if error is None else {"message": error.message, "info": thaw(error.info)},
        )
        # Contexts go to the same FIFO as inject(): they land after every result of the batch.
        for message in result.additional_contexts:
            self._enqueue("next_step", message, wake=False)


@dataclass(slots=True)
class _CallSlot:
    """One tool call of a reply on its way: logged, prepared, committed."""

    call: ModelToolCall
    logged: bool = False
    pending: PendingCall | None = None
    committed: bool = False

    @property
    def prepared(self) -> PendingCall:
        assert self.pending is not None
        return self.pending


async def _interrupted_result(slot: _CallSlot, cancelled: bool) -> ToolResult:
    """The result of a call the turn is leaving: settled through the pipeline when it got that far
    (finalize and ``tools/result`` run, bounded in time), else made here."""
    pending = slot.pending
    if pending is None:  # pre-execute never finished, or the call was never prepared
        return aborted_before_dispatch(slot.call.name)
    if not pending.settled:
        pending.interrupt(cancelled=cancelled)
        with anyio.move_on_after(CLOSE_GRACE_SECONDS):
            return await pending.settle()
    if pending.materialized and pending.result is not None:
        return pending.result
    return aborted(slot.call.name, ())


def checked_reply(reply: Any) -> ModelReply:
    """A model's reply with exact types, or ContractError before anything of it is recorded."""
    if type(reply) is ModelReply and _exact_reply(reply):
        return reply
    if not issubclass(type(reply), ModelReply):
        raise ContractError(f"model returned {type_name(reply)}, expected ModelReply")
    text = "" if reply.text is None else exact_str(reply.text)
    stop_reason = exact_str(reply.stop_reason)
    raw_calls = reply.tool_calls
    if text is None or stop_reason is None or not issubclass(type(raw_calls), tuple | list):
        raise ContractError("model reply has a malformed text, stop_reason or tool_calls")
    calls: list[ModelToolCall] = []
    for item in raw_calls:
        if not issubclass(type(item), ModelToolCall):
            raise ContractError(f"a tool call must be a ModelToolCall, not {type_name(item)}")
        call_id, name = exact_str(item.id), exact_str(item.name)
        arguments = "" if item.arguments is None else exact_str(item.arguments)
        if call_id is None or name is None or arguments is None:
            raise ContractError("a tool call needs str id, name and arguments")
        calls.append(ModelToolCall(call_id, name, arguments))
    return ModelReply(text, tuple(calls), stop_reason)


def _exact_reply(reply: ModelReply) -> bool:
    if type(reply.text) is not str or type(reply.stop_reason) is not str:
        return False
    if type(reply.tool_calls) is not tuple:
        return False
    for call in reply.tool_calls:
        if type(call) is not ModelToolCall:
            return False
        if type(call.id) is not str or type(call.name) is not str or type(call.arguments) is not str:
            return False
    return True


def parse_arguments(raw: str) -> Any:
    """A model's argument text: empty means ``{}``; invalid JSON (``NaN`` and ``Infinity``
    included, which are not JSON) stays the raw string, and then fails validation as INVALID_ARGS."""
    if raw is None or not raw.strip():
        return {}
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return raw


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _batches(slots: list[_CallSlot]) -> list[list[_CallSlot]]:
    """Consecutive concurrency-safe calls share a batch; an exclusive call is a barrier."""
    groups: list[list[_CallSlot]] = []
    open_group: list[_CallSlot] | None = None
    for slot in slots:
        call = slot.prepared
        if call.concurrency_safe or not call.will_dispatch:
            if open_group is None:
                open_group = []
                groups.append(open_group)
            open_group.append(slot)
        else:
            open_group = None
            groups.append([slot])
    return groups


async def _dispatch_limited(call: PendingCall, limiter: anyio.CapacityLimiter) -> None:
    async with limiter:
        await call.dispatch()


def _check(signal: AbortSignal) -> None:
    if signal.aborted:
        raise AbortedError(signal.reason)


def _as_message(message: Message | str, default_source: Literal["user", "plugin"]) -> Message:
    text = exact_str(message)
    if text is not None:
        return Message.user(text) if default_source == "user" else Message.from_plugin(text)
    return checked_message(message)


def _message_data(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "text": message.text,
        "source": {"kind": message.source.kind, "plugin": message.source.plugin},
    }


def new_agent_id() -> str:
    """A fresh agent id."""
    return "agent-" + uuid.uuid4().hex[:12]
