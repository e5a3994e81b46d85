"""The session log: an append-only list of facts, kept in memory and optionally in a JSONL file.

Two kinds of record share the log. *Facts* are the conversation (HARNESS.md section 4: ``turn/start``,
``step/start``, ``user/message``, ``assistant/message``, ``tool/call``, ``tool/result``, ``step/end``,
``turn/end``); tests and resume read them. *Journal* records (``session/open``, ``inbox/queued``,
``inbox/claimed``) make the inbox durable, so queued input survives a restart. A record reaches
memory only after the store accepted it: a failing append changes nothing and raises.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .frozen import FrozenDict, freeze_json, thaw, to_json_text

FACT_TYPES = frozenset(
    {
        "turn/start",
        "step/start",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "turn/end",
    }
)
JOURNAL_TYPES = frozenset({"session/open", "inbox/queued", "inbox/claimed"})


@dataclass(frozen=True, slots=True)
class Fact:
    """One record: its position, type, coordinates and frozen JSON data."""

    seq: int
    type: str
    turn: int | None
    step: int | None
    data: FrozenDict

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def to_json(self) -> dict[str, Any]:
        """The plain JSON form written to the file."""
        return {
            "seq": self.seq,
            "type": self.type,
            "turn": self.turn,
            "step": self.step,
            "data": thaw(self.data),
        }


class SessionStore(Protocol):
    """Where records go; ``append`` must raise if the record was not stored."""

    def append(self, record: Mapping[str, Any]) -> None:
        """Store one record durably."""
        ...

    def load(self) -> list[dict[str, Any]]:
        """Every stored record, in order."""
        ...


class MemoryStore:
    """Keeps records in a list (the default: nothing survives the process)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def append(self, record: Mapping[str, Any]) -> None:
        """Keep the record as plain JSON (a thawed copy, so later changes by the caller don't leak in)."""
        self.records.append(thaw(record))

    def load(self) -> list[dict[str, Any]]:
        """The kept records."""
        return [thaw(r) for r in self.records]


class JsonlStore:
    """Appends one JSON line per record to ``path``; ``fsync=True`` makes each append durable."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync

    def append(self, record: Mapping[str, Any]) -> None:
        """Write the record as one line in a single write call."""
        line = to_json_text(record) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            if self.fsync:
                os.fsync(handle.fileno())

    def load(self) -> list[dict[str, Any]]:
        """Read every complete line; a torn last line (crash mid-write) is ignored, others are errors."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").split("\n")
        records: list[dict[str, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if number == len(lines):  # unterminated last line
                    break
                raise ValueError(f"{self.path}:{number}: not a JSON record: {exc.msg}") from exc
        return records


class Session:
    """The fact log of one agent session."""

    def __init__(self, store: SessionStore | None = None, session_id: str | None = None) -> None:
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.id = session_id or uuid.uuid4().hex
        self.records: list[Fact] = []
        self.facts: list[Fact] = []

    @classmethod
    def to_file(cls, path: str | os.PathLike[str], *, fsync: bool = False) -> Session:
        """A new session logged to a JSONL file; an existing non-empty log is refused (two sessions
        in one file could not be told apart on resume; use :meth:`load` to continue one)."""
        target = Path(path)
        if target.exists() and target.stat().st_size > 0:
            raise FileExistsError(f"{target}: already holds a session log; use Session.load() to resume it")
        return cls(JsonlStore(target, fsync=fsync))

    @classmethod
    def load(cls, store: SessionStore | str | os.PathLike[str]) -> Session:
        """Rebuild a session from its stored records (to resume it)."""
        if isinstance(store, str | os.PathLike):
            store = JsonlStore(store)
        raw = store.load()
        session = cls(store, _session_id(raw))
        for number, record in enumerate(raw, start=1):
            try:
                fact = Fact(
                    int(record["seq"]),
                    str(record["type"]),
                    record.get("turn"),
                    record.get("step"),
                    freeze_json(record.get("data") or {}),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"session record {number}: malformed ({exc})") from exc
            session._keep(fact)
        return session

    def append(self, type: str, *, turn: int | None = None, step: int | None = None, **data: Any) -> Fact:
        """Store a record, then keep it in memory. Raises (and keeps nothing) if the store fails."""
        seq = len(self.records) + 1
        # The store gets the caller's plain data (serializers handle frozen parts); memory keeps a
        # frozen copy. Freezing first also proves the record is JSON before anything is written.
        frozen = freeze_json(data)
        self.store.append({"seq": seq, "type": type, "turn": turn, "step": step, "data": data})
        fact = Fact(seq, type, turn, step, frozen)
        self._keep(fact)
        return fact

    def _keep(self, fact: Fact) -> None:
        self.records.append(fact)
        if fact.type in FACT_TYPES:
            self.facts.append(fact)

    def types(self) -> list[str]:
        """The fact types in order (handy in tests)."""
        return [fact.type for fact in self.facts]


def _session_id(records: list[dict[str, Any]]) -> str | None:
    for record in records:
        if record.get("type") == "session/open":
            value = (record.get("data") or {}).get("session_id")
            return str(value) if value else None
    return None
