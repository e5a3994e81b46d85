"""Helpers shared by the audit tests (a uniquely named module: every test area has a conftest)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson


def gateway_fields(index: int) -> dict[str, Any]:
    """What the gateway hands the writer for one tool call: already redacted, no floats."""
    command = f"grep -rn 'TODO' src/module_{index % 7}.py | head -n {index % 50 + 1}"
    return {
        "session": "sess-4f1c2a",
        "agent": "main",
        "turn": index // 5,
        "step": index,
        "call": {
            "call_id": f"call-{index:06d}",
            "root_call_id": f"call-{index - index % 3:06d}",
            "name": "shell" if index % 2 else "read_file",
            "args": {"command": command, "cwd": "/home/dev/project", "timeout": 30},
            "args_digest": hashlib.sha256(command.encode()).hexdigest(),
        },
        "decision": {
            "pre_execute": {"outcome": "allow", "rules": ["baseline/allow-read-only"]},
            "guard": None,
            "approval": None,
            "post_execute": {"action": "accept", "rules": ["secrets/redact-aws"], "redactions": index % 2},
        },
        "result": {
            "is_error": index % 11 == 0,
            "error_code": "E_TIMEOUT" if index % 11 == 0 else None,
            "content_digest": hashlib.sha256(str(index).encode()).hexdigest(),
        },
        "policy": {"digest": "sha256:" + "ab" * 32, "engine": "cel-python"},
    }


WriteLog = Callable[..., Path]


def read_lines(path: Path) -> list[bytes]:
    """The lines of a segment, each with its newline."""
    return path.read_bytes().splitlines(keepends=True)


def forge_rechained(lines: list[bytes]) -> list[bytes]:
    """What a forger without the signing key can do: rehash every record, its links, the seqs and
    every checkpoint's head and Merkle state, keeping the old (now wrong) signatures."""
    from dsh_policy.audit.merkle import MerkleFrontier
    from dsh_policy.audit.record import seal_record
    from dsh_policy.audit.record_hash import genesis_prev

    frontier = MerkleFrontier()
    head: str | None = None
    forged: list[bytes] = []
    for seq, line in enumerate(lines):
        record = orjson.loads(line)
        del record["hash"]
        record["seq"] = seq
        record["prev"] = head if head is not None else genesis_prev(record["log_id"])
        if record["kind"] == "checkpoint":
            record["checkpoint"].update(
                last_seq=seq - 1,
                head=head,
                merkle_root=frontier.root().hex(),
                frontier=[r.hex() for r in frontier.roots],
            )
        elif record["kind"] == "segment_start":
            record["tree"] = {"size": frontier.size, "frontier": [r.hex() for r in frontier.roots]}
        sealed = seal_record(record)
        head = sealed.hash
        frontier.append_record(record.get("v"), bytes.fromhex(sealed.hash))
        forged.append(sealed.line + b"\n")
    return forged
