"""One host's shipped lines put back in order, and its chain verified with ``audit/verify``.

The stream holds what each gateway shipped, possibly more than once (a re-send after the
server's duplicate window) and, for a host whose log was rewritten or cut and written again,
two different lines under one seq: a fork. :func:`verify_shipped` drops exact duplicates, reports
forks, cuts the lines back into segments at each ``segment_start`` record, and hands them to
:func:`~dsh_policy.audit.verify.verify_log`, so every check of a local log (hashes, links, gaps,
checkpoints and their signatures, key hand-overs) applies to the central copy unchanged. The
segments stay in memory (``verify_log``'s ``contents``): nothing is written to scratch files and
read back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from dsh_policy.audit.segments import rotated_path
from dsh_policy.audit.verify import PublicKeySource, verify_log

_HEADER = re.compile(rb'^\{"v":[23],"log_id":"([^"]*)","seq":(\d+),')
_SEGMENT_MARK = b'"kind":"segment_start"'
# What precedes the kind in a format 2 or 3 header: a nested {"kind":"segment_start"} in a
# record's own fields (an agent's tool arguments) must never be taken for a segment boundary.
_HEADER_BEFORE_KIND = re.compile(rb'\{"v":[23],"log_id":"[^"]*","seq":\d+,"prev":"[0-9a-f]{64}",')


def seq_and_hash(line: bytes) -> tuple[int, str] | None:
    """A line's seq and stated hash: read off the format 2 or 3 header and trailer, parsed otherwise."""
    match = _HEADER.match(line)
    if match is not None and line.endswith(b'"}') and line[-75:-66] == b',"hash":"':
        return int(match.group(2)), line[-66:-2].decode("ascii", "replace")
    try:
        record = orjson.loads(line)
        return int(record["seq"]), str(record["hash"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LogVerdict:
    """The central verdict on one host's log."""

    host: str
    log_id: str
    lines: int
    duplicates: int
    forks: tuple[int, ...]
    unreadable: int
    report: dict[str, Any]

    @property
    def intact(self) -> bool:
        return bool(self.report.get("intact")) and not self.forks and not self.unreadable

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "log_id": self.log_id,
            "intact": self.intact,
            "lines": self.lines,
            "duplicates": self.duplicates,
            "forks": list(self.forks[:50]),
            "fork_count": len(self.forks),
            "unreadable": self.unreadable,
            "verify": self.report,
        }


def verify_shipped(
    host: str,
    log_id: str,
    lines: list[bytes],
    *,
    public_key: PublicKeySource | None,
    live: bool = True,
) -> LogVerdict:
    """Verify one log from its shipped lines (in any order, duplicates allowed)."""
    by_seq: dict[int, bytes] = {}
    forks: set[int] = set()
    duplicates = unreadable = 0
    for line in lines:
        found = seq_and_hash(line)
        if found is None:
            unreadable += 1
            continue
        seq = found[0]
        seen = by_seq.get(seq)
        if seen is None:
            by_seq[seq] = line
        elif seen == line:
            duplicates += 1
        else:
            forks.add(seq)
    ordered = [by_seq[seq] for seq in sorted(by_seq)]
    if ordered:
        names, contents = _segments(host, log_id, ordered)
        report = verify_log(names, public_key=public_key, live=live, contents=contents).to_json()
    else:
        report = {"intact": False}
    return LogVerdict(host, log_id, len(lines), duplicates, tuple(sorted(forks)), unreadable, report)


def verify_shipped_bytes(
    host: str,
    log_id: str,
    data: bytes,
    *,
    public_key: PublicKeySource | None,
    live: bool = True,
) -> LogVerdict:
    """:func:`verify_shipped` for lines joined by newlines (an archive file). The common case is
    a stream that holds the log in order, once: then the buffer, cut at each ``segment_start``
    (found by a byte search, without touching each line), is the log, and ``verify_log`` judges
    it as it stands. Only when that finds anything wrong is the log taken line by line (exact
    duplicates dropped, forks named, lines put in order) and judged again."""
    if not data.endswith(b"\n"):
        data += b"\n"
    cuts = [0]
    found = data.find(_SEGMENT_MARK, 1)
    while found != -1:
        line_start = data.rfind(b"\n", 0, found) + 1
        if line_start > cuts[-1] and _HEADER_BEFORE_KIND.fullmatch(data, line_start, found):
            cuts.append(line_start)
        found = data.find(_SEGMENT_MARK, found + 1)
    cuts.append(len(data))
    # A log in one segment is handed over as it is (a whole slice of bytes is not copied).
    contents = [data[cuts[index] : cuts[index + 1]] for index in range(len(cuts) - 1)]
    names = _segment_names(host, log_id, len(contents))
    report = verify_log(names, public_key=public_key, live=live, contents=contents).to_json()
    if report.get("intact") and not report.get("errors"):
        return LogVerdict(host, log_id, data.count(b"\n"), 0, (), 0, report)
    return verify_shipped(host, log_id, data.splitlines(), public_key=public_key, live=live)


def _starts_segment(line: bytes) -> bool:
    at = line.find(_SEGMENT_MARK)
    if at > 0 and _HEADER_BEFORE_KIND.fullmatch(line, 0, at):
        return True
    if line.startswith((b'{"v":2,', b'{"v":3,')):
        return False
    try:  # format 1: the canonical form, kind among the sorted members
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and record.get("kind") == "segment_start"


def _segment_names(host: str, log_id: str, count: int) -> list[Path]:
    """Names for a log's segments in reports, as in an archive: ``HOST/LOG_ID.jsonl`` for the last
    (the active one), ``HOST/LOG_ID.jsonl.NNNNNN`` before it (rotated: they promise a successor)."""
    active = Path(host) / f"{log_id}.jsonl"
    return [active if index == count - 1 else rotated_path(active, index) for index in range(count)]


def _segments(host: str, log_id: str, ordered: list[bytes]) -> tuple[list[Path], list[bytes]]:
    """The lines as the segments they were (a new one at each ``segment_start``): names, bytes."""
    groups: list[list[bytes]] = []
    for line in ordered:
        if not groups or _starts_segment(line):
            groups.append([])
        groups[-1].append(line)
    # verify_log takes the segments in the order given: rotated ones first, the active last.
    return _segment_names(host, log_id, len(groups)), [b"\n".join(group) + b"\n" for group in groups]
