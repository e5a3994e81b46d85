"""What the walk counted: records, lines and bytes, for the report and the not-a-log judgement."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Tally:
    """Counts kept while walking; the fast path settles whole runs of records at once."""

    records_checked: int = 0
    records_invalid: int = 0
    #: Records after the last valid checkpoint (not covered by one).
    records_after_anchor: int = 0
    records_seen: int = 0  # lines that parsed as records of this format
    hashed_right: int = 0
    segment_starts: int = 0
    lines_total: int = 0
    bytes_checked: int = 0
