"""Policy on MCP messages: what each message from either side becomes, and what is recorded.

The transport (:mod:`.stdio`, :mod:`.streamable_http`) hands every parsed message here and sends what comes
back; this module never does I/O itself except through the auditor. Client requests are tracked by
id until the server answers, so a server that dies or answers nonsense fails each of them with a
JSON-RPC error instead of leaving the client waiting or pretending success.

- ``tools/call`` from the client: quarantine check, then pre-execute and guard. A refused call is
  answered here with ``isError`` and never reaches the server; a fail-closed log records
  ``tool_dispatch`` before a call is forwarded.
- its result: post-execute blocks, or redacts ``content`` and ``structuredContent`` alike; one
  ``tool_result`` record per call, whichever way it ended.
- a ``tools/list`` result: each definition pinned (``mcp_tool`` records); changed, flagged and
  denied tools are hidden.
- anything else: relayed unchanged (requests tracked, so they can fail).

Without a policy (it failed to load, or its log cannot be opened) every ``tools/call`` is refused
with the reason, and other requests that could carry content to the model are refused too.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import structlog
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.mcp import calls, jsonrpc, listing
from dsh_policy.policy.mcp.jsonrpc import FramingError, Message, RequestId
from dsh_policy.policy.mcp.pins import Observation, PinBook, definition_digest
from dsh_policy.policy.runtime.auditing import AuditUnavailableError, DecisionAuditor, ResultFacts

_log = structlog.get_logger("dsh_policy.mcp")

#: Requests a proxy without a policy still relays: they carry no tool output to the model.
_HANDSHAKE = frozenset({"initialize", "server/discover", "ping", "tools/list"})
INVALID_PARAMS = -32602


@dataclass(slots=True)
class Route:
    """What to send after one message: lines to the server, lines to the client."""

    to_server: list[bytes] = field(default_factory=list)
    to_client: list[bytes] = field(default_factory=list)


def _answer(*bodies: dict[str, Any]) -> Route:
    return Route(to_client=[jsonrpc.encode(body) for body in bodies])


@dataclass(slots=True)
class _Pending:
    method: str
    call: calls.CallState | None = None


class McpGate:
    """The policy point of one proxied server. ``policy`` None means it could not be loaded (or
    its audit log opened): ``unavailable`` says why, and every call is refused with it."""

    def __init__(
        self,
        server: str,
        policy: Policy | None,
        auditor: DecisionAuditor | None,
        pins: PinBook,
        *,
        unavailable: str | None = None,
    ) -> None:
        self.server = server
        self.policy = policy
        self.auditor = auditor
        self.pins = pins
        self.unavailable = unavailable if policy is None else None
        #: The deployment's approval queue (``approvals:``; set by ``open_gate``), else None: an
        #: ``ask`` is refused.
        self.approvals: ApprovalChannel | None = None
        self.session_id = f"mcp-{server}-{os.getpid()}-{time.time_ns() // 1_000_000}"
        # Keyed by request id on stdio; the HTTP transport keys by (exchange, id), since its
        # clients' ids need not be unique across connections.
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()
        self._calls = itertools.count(1)
        self._gone: str | None = None

    # --- from the client -----------------------------------------------------------------------------

    def from_client(self, message: Message, raw: bytes, *, key: Hashable | None = None) -> Route:
        """A client message: forwarded, answered here, or both never (notifications dropped after
        the server died). ``key`` tracks a forwarded request (default: its id)."""
        if self._gone is not None:
            if message.kind == "request":
                return _answer(jsonrpc.error(message.id, jsonrpc.SERVER_UNAVAILABLE, self._gone))
            return Route()
        if message.kind != "request":
            return Route(to_server=[raw])  # notifications and answers to the server's requests
        method = message.method or ""
        assert message.id is not None
        if self.unavailable is not None and method not in _HANDSHAKE:
            return _answer(self._unavailable_answer(message, method))
        if method == "tools/call":
            return self._tools_call(message, raw, key)
        return self._forward(message.id if key is None else key, _Pending(method), raw)

    def client_garbage(self, problem: FramingError) -> Route:
        """A client line that is not a message: answered with the JSON-RPC error, never forwarded."""
        _log.warning("bad JSON-RPC from the client", server=self.server, reason=problem.reason)
        return _answer(jsonrpc.error(problem.id, problem.code, problem.reason))

    def _unavailable_answer(self, message: Message, method: str) -> dict[str, Any]:
        request_id = message.id
        assert request_id is not None
        reason = f"dsh-policy refused the call: the policy is unavailable ({self.unavailable})"
        if method == "tools/call":
            return jsonrpc.tool_error(request_id, reason, modern=jsonrpc.is_modern(message))
        return jsonrpc.error(request_id, jsonrpc.POLICY_UNAVAILABLE, reason)

    def _forward(self, key: Hashable, pending: _Pending, raw: bytes) -> Route:
        with self._lock:
            self._pending[key] = pending
        return Route(to_server=[raw])

    def _tools_call(self, message: Message, raw: bytes, key: Hashable | None) -> Route:
        request_id = message.id
        assert request_id is not None and self.policy is not None
        name = message.params.get("name")
        if not isinstance(name, str) or not name:
            return _answer(jsonrpc.error(request_id, INVALID_PARAMS, "tools/call needs a tool name"))
        event = calls.call_event(
            listing.qualified_name(self.server, name),
            message.params.get("arguments"),
            call_id=f"{self.session_id}-{next(self._calls)}",
            session_id=self.session_id,
        )
        if isinstance(event, str):
            return _answer(jsonrpc.error(request_id, INVALID_PARAMS, event))
        state = calls.CallState(event, self.policy.current())
        quarantined = self.pins.quarantine(name)
        if quarantined is not None:
            state.denied_by = "mcp/quarantine"
            state.refusal = _quarantine_message(self.server, quarantined)
        else:
            calls.gate(state, self.approvals, self.auditor)
        if state.refusal is None and self.auditor is not None and self.auditor.fail_closed:
            try:
                self.auditor.tool_dispatch(state.event, state.decider.stamp)
            except AuditUnavailableError as error:
                state.denied_by = "audit"
                state.refusal = f"audit log unavailable, call refused: {error}"
        if state.refusal is not None:
            answer = jsonrpc.tool_error(request_id, state.refusal, modern=jsonrpc.is_modern(message))
            self._record_call(state, calls.result_facts(answer["result"]))
            return _answer(answer)
        return self._forward(request_id if key is None else key, _Pending("tools/call", state), raw)

    # --- from the server -----------------------------------------------------------------------------

    def from_server(self, message: Message, raw: bytes, *, key: Hashable | None = None) -> Route:
        """A server message: answers to tracked requests are reviewed, the rest relayed as sent.
        ``key``: the request it answers was tracked under this key, not its id."""
        if message.kind not in ("response", "error"):
            return Route(to_client=[raw])  # the server's own requests and notifications
        lookup = message.id if key is None else key
        with self._lock:
            pending = self._pending.pop(lookup, None) if lookup is not None else None
        if pending is None:
            _log.warning("server answered a request nobody is waiting for", server=self.server, id=message.id)
            return Route()
        if message.kind == "error":
            if pending.call is not None:
                error = message.body.get("error")
                text = str(error.get("message", "")) if isinstance(error, dict) else str(error)
                self._record_call(pending.call, ResultFacts(is_error=True, text=text, error_message=text))
            return Route(to_client=[raw])
        if pending.method == "tools/call" and pending.call is not None:
            return _answer(self._reviewed_call(message, pending.call))
        if pending.method == "tools/list" and self.policy is not None:
            return _answer(self._filtered_listing(message))
        return Route(to_client=[raw])

    def server_garbage(self, problem: FramingError) -> Route:
        """A server line that is not a message: dropped; the request it answered (when its id could
        be read) fails with an error rather than waiting forever."""
        _log.warning("bad JSON-RPC from the server", server=self.server, reason=problem.reason)
        if problem.id is None:
            return Route()
        with self._lock:
            pending = self._pending.pop(problem.id, None)
        if pending is None:
            return Route()
        reason = f"the MCP server {self.server!r} sent an unreadable answer: {problem.reason}"
        if pending.call is not None:
            self._record_call(pending.call, ResultFacts(is_error=True, text=reason, error_message=reason))
        code = (
            jsonrpc.MESSAGE_TOO_LARGE if problem.code == jsonrpc.MESSAGE_TOO_LARGE else jsonrpc.INVALID_RESULT
        )
        return _answer(jsonrpc.error(problem.id, code, reason))

    def server_gone(self, reason: str) -> Route:
        """The server died or closed its output: every waiting request fails, and so will every
        later one (a dead server is an error, never an empty success)."""
        self._gone = f"the MCP server {self.server!r} is not running: {reason}"
        with self._lock:
            pending, self._pending = self._pending, {}
        route = Route()
        for key, waiting in pending.items():
            if waiting.call is not None:
                facts = ResultFacts(is_error=True, text=self._gone, error_message=self._gone)
                self._record_call(waiting.call, facts)
            request_id = key if isinstance(key, str | int) else None  # stdio: keys are the ids
            route.to_client.append(
                jsonrpc.encode(jsonrpc.error(request_id, jsonrpc.SERVER_UNAVAILABLE, self._gone))
            )
        return route

    def abandon(self, key: Hashable, request_id: RequestId, reason: str, code: int) -> Route:
        """One forwarded request that will get no answer (the HTTP upstream failed this exchange):
        it fails with ``reason``, recorded when it was a call; nothing when it was not waiting."""
        with self._lock:
            pending = self._pending.pop(key, None)
        if pending is None:
            return Route()
        if pending.call is not None:
            self._record_call(pending.call, ResultFacts(is_error=True, text=reason, error_message=reason))
        return _answer(jsonrpc.error(request_id, code, reason))

    def failed(self, message: Message, from_client: bool, error: BaseException) -> Route:
        """A message the gate itself failed on (a bug): a request is refused, the request an answer
        belongs to fails; nothing unchecked is relayed."""
        _log.error("MCP gate failed", server=self.server, error=repr(error), from_client=from_client)
        reason = f"dsh-policy failed closed: internal error ({type(error).__name__})"
        if from_client:
            return (
                _answer(jsonrpc.error(message.id, jsonrpc.INTERNAL_ERROR, reason))
                if message.id is not None
                else Route()
            )
        with self._lock:
            pending = self._pending.pop(message.id, None) if message.id is not None else None
        if pending is None:
            return Route()
        return _answer(jsonrpc.error(message.id, jsonrpc.INTERNAL_ERROR, reason))

    def _reviewed_call(self, message: Message, state: calls.CallState) -> dict[str, Any]:
        assert message.id is not None
        result = message.body.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("content", []), list):
            reason = f"the MCP server {self.server!r} sent a tools/call result that is not a CallToolResult"
            self._record_call(state, ResultFacts(is_error=True, text=reason, error_message=reason))
            return jsonrpc.error(message.id, jsonrpc.INVALID_RESULT, reason)
        relayed = calls.review(state, result)
        self._record_call(state, calls.result_facts(relayed))
        return jsonrpc.result(message.id, relayed)

    def _filtered_listing(self, message: Message) -> dict[str, Any]:
        assert message.id is not None and self.policy is not None
        result = message.body.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(result, dict) or not isinstance(tools, list):
            reason = f"the MCP server {self.server!r} sent a tools/list result without a tools list"
            return jsonrpc.error(message.id, jsonrpc.INVALID_RESULT, reason)
        decider = self.policy.current()
        shown: list[Any] = []
        for definition in tools:
            name = definition.get("name") if isinstance(definition, dict) else None
            if not isinstance(name, str) or not isinstance(definition, dict):
                continue  # a definition without a name cannot be called or governed
            if self._visible(decider, name, definition):
                shown.append(definition)
        return jsonrpc.result(message.id, {**result, "tools": shown})

    def _visible(self, decider: Any, name: str, definition: dict[str, Any]) -> bool:
        digest = definition_digest(definition)
        known = self.pins.seen.get(name) == digest
        flagged = None if known else listing.scan(decider, self.server, definition, self.session_id)
        observed = self.pins.observe(name, digest, flagged)
        if observed.status in ("pinned", "changed", "flagged"):
            self._record_pin(observed)
        if not observed.usable:
            return False
        return listing.hidden(decider.policy, listing.qualified_name(self.server, name)) is None

    # --- records -------------------------------------------------------------------------------------

    def _record_call(self, state: calls.CallState, result: ResultFacts) -> None:
        if self.auditor is None:
            return
        try:
            self.auditor.tool_result(state.outcome(result))
        except AuditUnavailableError as error:
            _log.error(
                "MCP call not audited", server=self.server, call_id=state.event.call_id, error=str(error)
            )

    def _record_pin(self, observed: Observation) -> None:
        if observed.status != "pinned":
            _log.warning(
                "MCP tool quarantined", server=self.server, tool=observed.tool, reason=observed.reason
            )
        if self.auditor is None:
            return
        fields: dict[str, Any] = {
            "session": self.session_id,
            "server": self.server,
            "tool": listing.qualified_name(self.server, observed.tool),
            "event": observed.status,
            "digest": observed.digest,
        }
        if observed.status != "pinned":
            fields["pinned_digest"] = observed.pinned
            fields["message"] = self.auditor.redacted(observed.reason or "")
        try:
            self.auditor.adapter_event("mcp_tool", fields)
        except AuditUnavailableError as error:
            _log.error("MCP tool pin not audited", server=self.server, tool=observed.tool, error=str(error))


def _quarantine_message(server: str, observed: Observation) -> str:
    return (
        f"dsh-policy refused the call: the definition of MCP tool {observed.tool!r} is quarantined "
        f"({observed.reason}; pinned {observed.pinned or 'none'}, now {observed.digest}). "
        f"An operator can approve it with: dsh-policy mcp approve --name {server} --tool {observed.tool}"
    )
