"""JetStream acknowledgements for shipped evidence, collected on one reply inbox per connection.

JetStream acknowledges a message published with a reply subject on that subject: a small JSON
document naming the stream and the sequence it was stored under (``"duplicate": true`` when the
server dropped a re-send under a known ``Nats-Msg-Id``, which counts as stored), an ``error``
document when the stream refused it, or a status-only ``503`` when no stream listens on the
subject. nats-py's ``publish_async`` does the same and more per message (a semaphore, a
timeout-backed wait, a dataclass built from every acknowledgement); shipping a backlog spent most
of its CPU there (``benchmarks/bench_fleet.py``). The shipper needs one answer per line: stored,
or not and why.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

NO_RESPONDERS = "503"


class AckRefused(Exception):
    """The bus answered, and the answer was not "stored"."""


def ack_problem(headers: dict[str, str] | None, data: bytes) -> str | None:
    """Why this reply is not an acknowledgement of a stored message; None when it is."""
    if headers and headers.get("Status") == NO_RESPONDERS:
        return "no stream answered on this subject (503)"
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return f"an unreadable acknowledgement: {data[:80]!r}"
    if not isinstance(document, dict):
        return f"an unreadable acknowledgement: {data[:80]!r}"
    error = document.get("error")
    if error is not None:
        description = error.get("description", error) if isinstance(error, dict) else error
        return f"the stream refused the message: {description}"
    if "stream" not in document or "seq" not in document:
        return f"a reply that is not an acknowledgement: {data[:80]!r}"
    return None


class AckInbox:
    """Publishes with a reply subject under one inbox and resolves a future per acknowledgement.

    One per NATS connection: the subscription lives with the connection (nats-py renews it after
    a reconnect), and replies to a closed connection are simply never seen, which the caller's
    timeout turns into "not shipped"."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self._prefix: str | None = None
        self._waiting: dict[str, asyncio.Future[None]] = {}
        self._next = 0

    async def publish(self, subject: str, data: bytes, message_id: str) -> asyncio.Future[None]:
        """Send ``data`` to ``subject`` under ``message_id``; the future resolves when JetStream
        acknowledges it and fails with :class:`AckRefused` when it answers otherwise."""
        prefix = self._prefix or await self._subscribe()
        self._next += 1
        token = str(self._next)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        try:
            await self.connection.publish(
                subject, data, reply=f"{prefix}.{token}", headers={"Nats-Msg-Id": message_id}
            )
        except BaseException:
            self._waiting.pop(token, None)
            raise
        return future

    def forget(self, futures: list[asyncio.Future[None]]) -> None:
        """Stop waiting for these (timed out, or the batch gave up): a late answer is ignored."""
        waiting = set(map(id, futures))
        for token, future in list(self._waiting.items()):
            if id(future) in waiting:
                del self._waiting[token]
                future.cancel()

    async def _subscribe(self) -> str:
        prefix = self.connection.new_inbox()
        await self.connection.subscribe(f"{prefix}.*", cb=self._answer)
        self._prefix = prefix
        return prefix

    async def _answer(self, message: Any) -> None:
        future = self._waiting.pop(message.subject.rpartition(".")[2], None)
        if future is None or future.done():
            return
        problem = ack_problem(message.headers, message.data)
        if problem is None:
            future.set_result(None)
        else:
            future.set_exception(AckRefused(problem))
