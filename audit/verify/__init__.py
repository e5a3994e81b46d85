"""Verification of audit log segments (AUDIT.md "Verification").

:func:`verify_log` recomputes every record hash, the chain links, the global sequence, the segment
links, the Merkle root and (given the public key) the signature of every checkpoint. It never stops
at the first error: every line gets a verdict, and the report says how far the log is anchored by
a valid checkpoint. Without a key, checkpoints can only be checked for internal consistency: a
forger who rehashes the whole file also recomputes those, so such a report says ``chain-only``.
With a key verification is strict: INTACT means every record is covered by a checkpoint that key
(or a key it handed over to) signed, and the on-host anchor must be present and current; ``live``
relaxes only what a log still being written cannot have yet (its unsigned tail, a lagging anchor).

Where each phase lives:

- :mod:`.run` -- :func:`verify_log`: the files, the anchor, the order of the phases;
- :mod:`.walker` -- the walk over every line, composing the phases below;
- :mod:`.lines` -- reading a segment in chunks; :mod:`.fast_path` -- the hot loop;
- :mod:`.records` -- one line as a record (canonical form, its own hash);
- :mod:`.chain` -- seq, ``prev``, segment links and tree state;
- :mod:`.checkpoints` -- checkpoints, signatures, key hand-overs; :mod:`.anchors` -- the anchor;
- :mod:`.findings` -- reasons and findings; :mod:`.report` -- the verdict and the JSON report;
- :mod:`.record_checker` -- one record at a time, for ``dsh-policy log``.

What a record's hash covers is :mod:`..record_hash`'s alone (shared with the writer).
"""

from .chain import SegmentState
from .findings import MAX_FINDINGS, WARNING_REASONS, Finding, Reason
from .record_checker import RecordChecker
from .report import ASSURANCE_NOTES, Recovery, SignatureMode, UnsignedTail, VerificationReport
from .run import PublicKeySource, verify_log

__all__ = [
    "ASSURANCE_NOTES",
    "MAX_FINDINGS",
    "WARNING_REASONS",
    "Finding",
    "PublicKeySource",
    "Reason",
    "RecordChecker",
    "Recovery",
    "SegmentState",
    "SignatureMode",
    "UnsignedTail",
    "VerificationReport",
    "verify_log",
]
