"""Acknowledgements decide what counts as shipped: only a reply naming the stream and sequence moves
the cursor; a subject no stream captures (503), a refusal or an unreadable reply leaves it, and a
re-send under the same message id is stored once (on a real JetStream server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.fleet.acks import ack_problem
from dsh_policy.policy.fleet.bus import EVIDENCE, connect, ensure_evidence
from dsh_policy.policy.fleet.local_server import LocalServer
from dsh_policy.policy.fleet.shipper import CURSOR_SUFFIX, Shipper


@pytest.mark.parametrize(
    ("headers", "data", "problem"),
    [
        (None, b'{"stream":"DSH_EVIDENCE","seq":7}', None),
        (None, b'{"stream":"DSH_EVIDENCE","seq":7,"duplicate":true}', None),
        ({"Status": "503"}, b"", "no stream answered"),
        (
            None,
            b'{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}',
            "refused the message: maximum messages exceeded",
        ),
        (None, b"not json", "unreadable"),
        (None, b"[1, 2]", "unreadable"),
        (None, b'{"seq":7}', "not an acknowledgement"),
    ],
)
def test_only_a_reply_naming_stream_and_seq_is_an_acknowledgement(
    headers: dict[str, str] | None, data: bytes, problem: str | None
) -> None:
    found = ack_problem(headers, data)
    assert found is None if problem is None else (found is not None and problem in found)


def test_the_cursor_moves_only_over_acknowledged_lines(
    nats_server: LocalServer, keys: dict[str, KeyPairFiles], tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    with AuditWriter.open(log, fsync="off", signing_key=keys["audit"].private_path) as writer:
        for n in range(30):
            writer.append("hook_event", {"n": n})

    async def scenario() -> tuple[str | None, int, int, int, int, int]:
        connection = await connect(nats_server.url)
        try:
            shipper = Shipper(log, "acks-host", batch=8)
            # No stream captures the subject yet: the server answers 503, nothing counts as shipped.
            refused = await shipper.ship_once(connection, timeout=5.0)
            error = shipper.state.last_error
            js = connection.jetstream()
            await ensure_evidence(js)
            shipped = await shipper.ship_all(connection, timeout=5.0)
            stored = (await js.stream_info(EVIDENCE)).state.messages
            # The cursor lost (a crash before it was saved): everything is sent again, stored once.
            Path(str(log) + CURSOR_SUFFIX).unlink()
            again = await Shipper(log, "acks-host", batch=8).ship_all(connection, timeout=5.0)
            after = (await js.stream_info(EVIDENCE)).state.messages
            return error, refused, shipped, stored, again, after
        finally:
            await connection.close()

    error, refused, shipped, stored, again, after = asyncio.run(scenario())
    lines = len(log.read_bytes().splitlines())
    assert refused == 0 and error is not None and "no stream answered" in error
    assert shipped == lines and stored == lines
    assert again == lines and after == stored  # re-sent lines acknowledged as duplicates, stored once
