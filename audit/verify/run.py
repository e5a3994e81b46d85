"""``verify_log``: which files make the log, which anchor proves its end, and the order in which
the walk reads and judges them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..keys import load_public_key
from ..segments import active_path_of, anchor_path, discover_segments
from .anchor_lookup import find_anchor, first_log_id
from .parallel import processes_for, walk_in_shares
from .report import VerificationReport
from .walker import ChainWalker

PublicKeySource = str | os.PathLike[str] | Ed25519PublicKey | Ed25519PrivateKey


def verify_log(
    paths: Sequence[str | os.PathLike[str]],
    *,
    public_key: PublicKeySource | None = None,
    anchor: str | os.PathLike[str] | None = None,
    live: bool = False,
    require_anchor: bool = False,
    on_segment: Callable[[int, int, str], None] | None = None,
    workers: int | None = 1,
    contents: Sequence[bytes] | None = None,
) -> VerificationReport:
    """Verify a log given its segments.

    One path: it and its sibling segments (``PATH.NNNNNN``) are discovered, and the anchor beside
    it is found by the log's id (:mod:`.anchor_lookup`; ``PATH.anchor`` by name when that is
    another log's, to report it as foreign): older than the log's last checkpoint is a failure with
    a key. Several paths: exactly those, in that order; links between them are checked, so a
    segment left out is ``SEGMENT_MISSING``. ``anchor`` is an exported checkpoint line kept off the
    host: a log that ends before it is ``TRUNCATED``; the writer's own ``PATH.anchor`` given so is
    still judged as on-host. With no anchor at all the report says a cut tail cannot be excluded
    (a warning), and ``require_anchor`` makes that a failure. ``public_key`` (PEM path or key)
    makes verification strict: INTACT then means every record is covered by a checkpoint that key
    (or a key it handed over to) signed.
    ``live`` is for a log still being written: records after the last signed checkpoint are then
    a warning instead of ``UNSIGNED_TAIL``, and nothing proves them. Raises ``KeyFileError`` if
    the key cannot be loaded. ``on_segment(done, total, file)`` is called after each segment (for
    a progress display).

    ``workers``: processes that verify segments in parallel, this one included (:mod:`.parallel`;
    the report is the one a single walk gives), each a contiguous share of the segments of
    near-equal bytes. ``None``: sized to the work, one process per ``SHARE_FROM_BYTES`` of
    segments up to every usable core, so one for a small log (starting a process costs more than a
    small share takes).
    Workers are forked, so the default is one: a caller with threads of its own (the gateway)
    must not fork; the ``verify`` command, which has none, asks for ``None``.

    ``contents``: the bytes of each of ``paths``, already in memory (a central copy of a shipped
    log, :mod:`dsh_policy.policy.fleet.evidence`). The paths then only name the segments: no file
    is read, none discovered beside them, and no anchor looked for there (give ``anchor``). Every
    check is the same as on files; one process walks them.
    """
    key = load_public_key(public_key) if public_key is not None else None
    given = [Path(p) for p in paths]
    if contents is not None and len(contents) != len(given):
        raise ValueError(f"{len(contents)} contents for {len(given)} paths")
    anchor_kind = "off-host" if anchor is not None else None
    walker = ChainWalker(key, live=live)
    walker.anchor.require = require_anchor
    found_by: str | None = "given" if anchor is not None else None
    if len(given) == 1 and contents is None:
        files = discover_segments(given[0])
        if len(files) > 1 and _same_file(files[-1], files[-2]):
            # A writer died after hard-linking the full segment to its rotated name and before
            # renaming the new segment over PATH: one file under two names, a rotation cut short.
            files.pop()
            walker.rotation_cut_short = True
        active = active_path_of(files[-1])
        if anchor is None:
            found = find_anchor(active, first_log_id(files[0]))
            if found is None:
                walker.anchor.on_host_missing = str(anchor_path(active))
            else:
                anchor, anchor_kind, found_by = found.path, "on-host", found.by
        elif _same_file(Path(anchor), anchor_path(active)):
            anchor_kind = "on-host"  # the host's own export proves only what the host chose to keep
    else:
        files = given
    # The anchor is read before the log: a writer still running may export a newer one meanwhile,
    # which must not make the log we read look truncated.
    anchor_bytes = walker.anchor.read(Path(anchor), walker.unreadable) if anchor is not None else None
    workers = 1 if contents is not None else processes_for(files, workers)
    if workers > 1:
        walk_in_shares(walker, files, workers, on_segment)
    else:
        for position, path in enumerate(files):
            data = None if contents is None else contents[position]
            walker.walk_file(path, is_last=position == len(files) - 1, data=data)
            if on_segment is not None:
                on_segment(position + 1, len(files), str(path))
    walker.judge_not_a_log()
    if anchor is not None and anchor_bytes is not None:
        walker.check_anchor(Path(anchor), anchor_bytes, on_host=anchor_kind == "on-host")
    walker.anchor.none_supplied = anchor is None
    walker.judge_signatures()
    walker.judge_missing_anchor()
    return walker.report(
        [str(p) for p in files], str(anchor) if anchor is not None else None, anchor_kind, found_by
    )


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False
