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
from .report import VerificationReport
from .walker import ChainWalker

PublicKeySource = str | os.PathLike[str] | Ed25519PublicKey | Ed25519PrivateKey


def verify_log(
    paths: Sequence[str | os.PathLike[str]],
    *,
    public_key: PublicKeySource | None = None,
    anchor: str | os.PathLike[str] | None = None,
    live: bool = False,
    on_segment: Callable[[int, int, str], None] | None = None,
) -> VerificationReport:
    """Verify a log given its segments.

    One path: it and its sibling segments (``PATH.NNNNNN``) are discovered, and ``PATH.anchor``
    (the on-host anchor) is checked: missing, older than the log's last checkpoint, or from
    another log is reported, and is a failure with a key. Several paths: exactly those, in that
    order; links between them are checked, so a segment left out is ``SEGMENT_MISSING``.
    ``anchor`` is an exported checkpoint line kept off the host: a log that ends before it is
    ``TRUNCATED``. ``public_key`` (PEM path or key) makes verification strict: INTACT then means
    every record is covered by a checkpoint that key (or a key it handed over to) signed.
    ``live`` is for a log still being written: records after the last signed checkpoint are then
    a warning instead of ``UNSIGNED_TAIL``, and nothing proves them. Raises ``KeyFileError`` if
    the key cannot be loaded. ``on_segment(done, total, file)`` is called after each segment (for
    a progress display).
    """
    key = load_public_key(public_key) if public_key is not None else None
    given = [Path(p) for p in paths]
    anchor_kind = "off-host" if anchor is not None else None
    walker = ChainWalker(key, live=live)
    if len(given) == 1:
        files = discover_segments(given[0])
        if len(files) > 1 and _same_file(files[-1], files[-2]):
            # A writer died after hard-linking the full segment to its rotated name and before
            # renaming the new segment over PATH: one file under two names, a rotation cut short.
            files.pop()
            walker.rotation_cut_short = True
        if anchor is None:
            anchor_kind = "on-host"
            anchor = anchor_path(active_path_of(files[-1]))
            if not Path(anchor).is_file():
                walker.anchor.on_host_missing = str(anchor)
                anchor, anchor_kind = None, None
    else:
        files = given
    # The anchor is read before the log: a writer still running may export a newer one meanwhile,
    # which must not make the log we read look truncated.
    anchor_bytes = walker.anchor.read(Path(anchor), walker.unreadable) if anchor is not None else None
    for position, path in enumerate(files):
        walker.walk_file(path, is_last=position == len(files) - 1)
        if on_segment is not None:
            on_segment(position + 1, len(files), str(path))
    walker.judge_not_a_log()
    if anchor is not None and anchor_bytes is not None:
        walker.check_anchor(Path(anchor), anchor_bytes, on_host=anchor_kind == "on-host")
    walker.judge_signatures()
    walker.judge_missing_anchor()
    return walker.report([str(p) for p in files], str(anchor) if anchor is not None else None, anchor_kind)


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False
