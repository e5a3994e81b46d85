"""How a writer trades durability for speed, and when it rotates and checkpoints."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from ..record import DEFAULT_FORMAT_VERSION, FORMAT_VERSIONS

FsyncMode = Literal["always", "batch", "off"]


@dataclass(frozen=True, slots=True)
class WriterSettings:
    """How a writer trades durability for speed and when it rotates and checkpoints."""

    fsync: FsyncMode = "batch"
    batch_records: int = 256
    batch_ms: float = 5.0
    rotate_bytes: int | None = None
    rotate_seconds: float | None = None
    checkpoint_every: int | None = 1000
    checkpoint_seconds: float | None = 60.0
    export_anchor: bool = True
    #: The format version of a new log (an existing log keeps its own): 3 hashes the bytes as
    #: written into the record's Merkle leaf, 2 the bytes as written, 1 the canonical form
    #: (record_hash).
    format_version: int = DEFAULT_FORMAT_VERSION

    def __post_init__(self) -> None:
        if type(self.format_version) is not int or self.format_version not in FORMAT_VERSIONS:
            raise ValueError(f"format_version must be 1, 2 or 3, not {self.format_version!r}")
        if self.fsync not in ("always", "batch", "off"):
            raise ValueError(f"fsync must be always, batch or off, not {self.fsync!r}")
        if self.batch_records < 1 or self.batch_ms < 0:
            raise ValueError("batch_records must be >= 1 and batch_ms >= 0")
        if self.rotate_bytes is not None and self.rotate_bytes < 1024:
            raise ValueError("rotate_bytes must be at least 1024")
        if self.rotate_seconds is not None and self.rotate_seconds <= 0:
            raise ValueError("rotate_seconds must be > 0 (or None)")
        if self.checkpoint_every is not None and self.checkpoint_every < 1:
            raise ValueError("checkpoint_every must be >= 1 (or None)")
        if self.checkpoint_seconds is not None and self.checkpoint_seconds <= 0:
            raise ValueError("checkpoint_seconds must be > 0 (or None)")

    @property
    def durable(self) -> bool:
        """Whether this writer fsyncs at all (every mode but ``off``)."""
        return self.fsync != "off"

    def segment_is_full(self, size: int, started: float, incoming: int) -> bool:
        """Whether a record of ``incoming`` bytes belongs in a new segment, the active one holding
        ``size`` bytes since ``started`` (epoch seconds): by size, or by the segment's age."""
        if self.rotate_bytes is not None and size + incoming > self.rotate_bytes:
            return True
        return self.rotate_seconds is not None and time.time() - started >= self.rotate_seconds
