"""Every name the fleet uses on the bus, and how a process connects and sets them up.

One place names them, so the docs (docs/fleet.md) and every party agree:

- KV bucket :data:`BUNDLES` (history kept): key :data:`BUNDLE_KEY` holds the newest signed bundle;
- KV bucket :data:`STATUS`: one key per gateway (``host.<host>.<gateway>``), its last report;
- stream :data:`EVIDENCE` on ``dsh.audit.<host>.<log_id>``: every audit line, exactly as written,
  published with ``Nats-Msg-Id`` = ``<log_id>:<seq>:<hash prefix>`` so a re-send after an outage is
  dropped by the server, while a *different* line under the same seq (a rewritten log) is kept
  and shows up as a fork;
- stream :data:`REPORTS` on ``dsh.fleet.report.<host>``: refused bundles and shipper findings.
"""

from __future__ import annotations

import re
from typing import Any, Final

BUNDLES: Final = "dsh_policy_bundles"
BUNDLE_KEY: Final = "bundle"
STATUS: Final = "dsh_policy_status"
EVIDENCE: Final = "DSH_EVIDENCE"
EVIDENCE_SUBJECTS: Final = "dsh.audit.>"
REPORTS: Final = "DSH_REPORTS"
REPORT_SUBJECTS: Final = "dsh.fleet.report.>"
#: How long the server remembers a message id: a gateway offline longer than this re-sends what
#: it had not seen acknowledged, and the central verifier drops exact duplicates itself.
DUPLICATE_WINDOW_S: Final = 15 * 60.0

_TOKEN = re.compile(r"[^A-Za-z0-9_-]")


def token(text: str) -> str:
    """``text`` as one subject token (dots, spaces and wildcards become ``_``)."""
    return _TOKEN.sub("_", text)[:128] or "_"


def evidence_subject(host: str, log_id: str) -> str:
    return f"dsh.audit.{token(host)}.{token(log_id)}"


def report_subject(host: str) -> str:
    return f"dsh.fleet.report.{token(host)}"


def status_key(host: str, gateway: str) -> str:
    return f"host.{token(host)}.{token(gateway)}"


def message_id(log_id: str, seq: int, line_hash: str) -> str:
    return f"{log_id}:{seq}:{line_hash[:16]}"


async def connect(url: str, **options: Any) -> Any:
    """A connection that keeps trying while the bus is down (the caller's work waits, never fails)."""
    import nats

    settings: dict[str, Any] = {
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 0.2,
        "connect_timeout": 2,
        "allow_reconnect": True,
    }
    settings.update(options)
    return await nats.connect(url, **settings)


async def ensure_evidence(js: Any) -> None:
    """Create the evidence and report streams if missing (file storage: acknowledged means on disk)."""
    from nats.js.api import StorageType, StreamConfig
    from nats.js.errors import BadRequestError

    for name, subjects in ((EVIDENCE, [EVIDENCE_SUBJECTS]), (REPORTS, [REPORT_SUBJECTS])):
        config = StreamConfig(
            name=name,
            subjects=subjects,
            storage=StorageType.FILE,
            duplicate_window=DUPLICATE_WINDOW_S,
        )
        try:
            await js.add_stream(config)
        except BadRequestError:
            await js.update_stream(config)


async def bundles_bucket(js: Any) -> Any:
    return await js.create_key_value(bucket=BUNDLES, history=16)


async def status_bucket(js: Any) -> Any:
    return await js.create_key_value(bucket=STATUS, history=1)
