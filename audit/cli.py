"""``dsh-policy verify`` and ``dsh-policy keygen`` (POLICY.md section 5).

verify exits 0 when the log is intact (a torn tail is only a warning), 1 on any integrity finding,
2 when an input cannot be read, is no audit log at all, or the command line is wrong.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from .arguments import EXIT_USAGE, CommandParser, parse_command
from .keys import KeyFileError, write_key_pair
from .terminal import Painter, Progress
from .verify import Finding, VerificationReport, verify_log
from .verify.anchors import NO_ANCHOR
from .worktree import unignored_in_work_tree

EXIT_INTACT: Final = 0
EXIT_INTEGRITY: Final = 1
_ERRORS_SHOWN: Final = 20
#: The signature mode in words (the JSON report keeps the stable identifiers).
SIGNATURE_WORDS: Final = {
    "signature-verified": "signatures verified",
    "unsigned-verified": "checked against the records; signatures not checked",
}


def _positive(text: str) -> int:
    """A count of at least 1 (``--jobs``)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def verify_main(argv: Sequence[str]) -> int:
    """``dsh-policy verify LOG... [--key PUB] [--live] [--anchor FILE] [--require-anchor]
    [--jobs N] [--format text|json]``."""
    parser = CommandParser(
        prog="dsh-policy verify",
        description="Verify a hash-chained audit log. One LOG: its rotated siblings (LOG.NNNNNN) and "
        "LOG.anchor are found automatically. Several: exactly those segments, in order.",
        epilog="exit status: 0 intact (a torn last line is only a warning; without an anchor the report"
        " says a cut tail cannot be excluded), 1 integrity failure (or no anchor with --require-anchor),"
        " 2 unreadable input, not an audit log, or usage error. Without --key only the hash chain is"
        " checked: anyone able to write the files can rewrite the whole log consistently.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="audit log segment(s)")
    parser.add_argument(
        "--key",
        metavar="PUB",
        help="Ed25519 public key (PEM). Strict: INTACT then means every record is covered by a"
        " checkpoint this key signed (or a key it handed over to); a log without one, records after"
        " the last one, unsigned checkpoints, a key change without a signed hand-over, and a stale"
        " on-host anchor all fail (a missing anchor only with --require-anchor)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="the log is still being written: records after the last signed checkpoint, and an"
        " an on-host anchor that lags it, are reported as warnings instead of failures."
        " This gives up any proof for those records (whoever can write the files can change, add or"
        " cut them undetected until a later checkpoint covers them) and the on-host check of a cut"
        " tail. A log with no signed checkpoint at all still fails",
    )
    parser.add_argument(
        "--anchor",
        metavar="FILE",
        help="an exported checkpoint kept off the host (a copy of LOG.anchor); detects a cut tail"
        " and a rollback of the whole log up to that checkpoint. Without it the anchor beside the"
        " log is found by the log's id (a renamed log still finds it); the host's own LOG.anchor"
        " given here is judged as on-host, which proves only what the host kept",
    )
    parser.add_argument(
        "--require-anchor",
        action="store_true",
        help="fail (exit 1) when no anchor is given or found: without one INTACT proves a valid"
        " prefix of the log, and a cut tail cannot be excluded",
    )
    parser.add_argument(
        "--jobs",
        type=_positive,
        metavar="N",
        help="processes verifying segments in parallel, each a contiguous share of near-equal bytes"
        " (the report is the same as with 1); default: one per 4 MiB of segments, up to every usable"
        " core (so 1 for a log under 8 MiB)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    progress = Progress("verifying segment")
    try:
        with progress:
            report = verify_log(
                args.logs,
                public_key=args.key,
                anchor=args.anchor,
                live=args.live,
                require_anchor=args.require_anchor,
                workers=args.jobs,
                on_segment=lambda done, total, file: progress.advance(detail=file) if total > 1 else None,
            )
    except KeyFileError as error:
        print(f"dsh-policy verify: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(render_text(report, Painter.for_stream(sys.stdout)))
    if report.unreadable or report.not_a_log:
        return EXIT_USAGE
    return EXIT_INTACT if report.intact else EXIT_INTEGRITY


def render_text(report: VerificationReport, paint: Painter | None = None) -> str:
    """The report as an auditor reads it: verdict first, then the evidence (the verdict coloured
    when ``paint`` is on)."""
    paint = paint or Painter(False)
    if report.not_a_log:
        verdict = "NOT A LOG"
    elif report.unreadable:
        verdict = "UNREADABLE INPUT"
    elif report.intact:
        verdict = "INTACT" + (" (with warnings)" if report.warnings else "")
        if not report.tail_proven:
            verdict += f"; {NO_ANCHOR}"
    else:
        verdict = "INTEGRITY FAILURE"
    span = f" (seq {report.first_seq}..{report.last_seq})" if report.first_seq is not None else ""
    lines = [f"verdict      {paint.decision(verdict)}"]
    if report.not_a_log:
        lines.append(f"not a log    {', '.join(report.files)}: {report.not_a_log}")
        lines.extend(f"unreadable   {problem}" for problem in report.unreadable)
        return "\n".join(lines)
    lines += [
        f"log id       {report.log_id or '-'}",
        f"segments     {len(report.files)}: " + ", ".join(report.files),
        f"records      {report.records_checked} checked, {report.records_valid} valid,"
        f" {report.records_invalid} invalid{span}",
        f"checkpoints  {report.checkpoints_valid} valid, {report.checkpoints_invalid} invalid"
        f" ({SIGNATURE_WORDS.get(report.signature_mode, report.signature_mode)})",
    ]
    if report.signature_mode == "signature-verified":
        lines.append(
            f"signatures   checked with key {report.key_id}"
            + (f" ({report.key_handovers} key hand-over(s) followed)" if report.key_handovers else "")
        )
        tail = report.unsigned_tail
        if tail is None:
            lines.append("assurance    every record is covered by a checkpoint signed by the key")
        else:
            lines.append(
                f"assurance    {tail.count} record(s) from seq {tail.first_seq} are NOT covered by a signed"
                " checkpoint" + (" (--live: accepted unproven)" if report.live else "")
            )
    else:
        lines.append(
            "signatures   NOT CHECKED (no --key): checkpoints were only checked against the records;"
            " a forger who rewrites the whole log can recompute them. Pass --key PUB."
        )
        lines.append("assurance    ONLY THE CHAIN WAS CHECKED: nothing proves who wrote this log")
    if report.anchored_through is None:
        lines.append(
            f"anchored     nothing: no valid checkpoint; {report.unanchored_records} records unanchored"
        )
    else:
        lines.append(
            f"anchored     through seq {report.anchored_through};"
            f" {report.unanchored_records} record(s) after the last valid checkpoint"
        )
    if report.anchor_file:
        found = " found by log id" if report.anchor_found_by == "log_id" else ""
        lines.append(f"anchor file  {report.anchor_file} ({report.anchor_kind}{found}): {report.anchor_note}")
    else:
        lines.append(
            f"anchor file  none: {NO_ANCHOR}, nor a rollback of the whole log"
            + ("" if report.require_anchor else " (--require-anchor makes this a failure)")
        )
    if report.records_lost:
        lines.append(f"losses       the writer reports {report.records_lost} record(s) it could not write")
    if report.hook_told:
        lines.append(
            f"told         {report.hook_told} hook_told record(s): the agent was told a safe answer, not"
            " the decision recorded for that request (dsh-policy log shows which)"
        )
    for recovery in report.recoveries:
        if recovery.reason == "active_missing":
            lines.append(
                f"recovery     {recovery.file}:{recovery.line} (seq {recovery.seq}): the active segment"
                " was missing; the writer started a new one after the last rotated segment"
            )
            continue
        lines.append(
            f"recovery     {recovery.file}:{recovery.line} (seq {recovery.seq}): the writer moved"
            f" {recovery.length} torn byte(s) from offset {recovery.offset} to {recovery.side_file}"
            f" (sha256 {recovery.sha256})"
        )
    for warning in report.warnings:
        lines.append(f"warning      {_where(warning)} {warning.reason.value}: {warning.message}")
    for problem in report.unreadable:
        lines.append(f"unreadable   {problem}")
    if report.first_error is not None:
        first = report.first_error
        lines.append(f"first error  {_where(first)} {first.reason.value}: {first.message}")
        if first.expected is not None or first.actual is not None:
            lines.append(f"               expected {first.expected}")
            lines.append(f"               actual   {first.actual}")
        counts = ", ".join(f"{reason} {count}" for reason, count in sorted(report.reason_counts.items()))
        lines.append(f"reasons      {counts}")
        for finding in report.errors[1:_ERRORS_SHOWN]:
            lines.append(f"  {_where(finding)} {finding.reason.value}: {finding.message}")
        hidden = report.error_total - min(len(report.errors), _ERRORS_SHOWN)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more (use --format json for the list)")
    return "\n".join(lines)


def _where(finding: Finding) -> str:
    place = finding.file if finding.line is None else f"{finding.file}:{finding.line}"
    return place if finding.seq is None else f"{place} (seq {finding.seq})"


def key_prefix(out: str) -> Path:
    """``--out``'s file prefix: a path ending in ``/`` names a folder (made if missing), which gets
    the default name inside it rather than ``DIR.key`` beside it. Without the slash ``--out audit``
    stays the prefix ``audit`` even where a folder ``audit/`` exists (as it always was)."""
    if out.endswith(("/", os.sep)):
        Path(out).mkdir(mode=0o700, parents=True, exist_ok=True)
        return Path(out) / DEFAULT_KEY_NAME
    return Path(out)


DEFAULT_KEY_NAME: Final = "audit-signing"


def keygen_main(argv: Sequence[str]) -> int:
    """``dsh-policy keygen [--out PREFIX] [--format text|json]``: writes PREFIX.key and PREFIX.pub."""
    parser = CommandParser(
        prog="dsh-policy keygen",
        description="Make an Ed25519 key pair for signing audit checkpoints. Keep PREFIX.key where the "
        "agent process cannot read it; auditors need only PREFIX.pub.",
    )
    parser.add_argument(
        "--out",
        metavar="PREFIX",
        default=DEFAULT_KEY_NAME,
        help="file prefix (default %(default)s); DIR/ (with the slash) writes DIR/audit-signing.key and .pub",
    )
    parser.add_argument(
        "--approver",
        metavar="NAME",
        help="make NAME's approval key instead (default prefix approver-NAME): PREFIX.pub goes into the"
        " deployment's approvers file, PREFIX.key stays with NAME (docs/approvals.md)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    out = str(args.out)
    if args.approver is not None:
        if not args.approver or not all(c.isalnum() or c in "_.@-" for c in args.approver):
            problem = f"--approver {args.approver!r}: letters, digits and _.@- only"
            print(f"dsh-policy keygen: {problem}", file=sys.stderr)
            return EXIT_USAGE
        if out == DEFAULT_KEY_NAME:
            out = f"approver-{args.approver}"
        elif out.endswith(("/", os.sep)):
            Path(out).mkdir(mode=0o700, parents=True, exist_ok=True)
            out = f"{out}approver-{args.approver}"
    try:
        files = write_key_pair(key_prefix(out))
    except (KeyFileError, OSError) as error:
        print(f"dsh-policy keygen: {error}", file=sys.stderr)
        return EXIT_USAGE
    exposed = unignored_in_work_tree(files.private_path)
    if exposed is not None:
        print(
            f"dsh-policy keygen: warning: {files.private_path} is inside the git work tree {exposed}"
            " and not ignored: one 'git add' publishes it, and anyone with it can forge signed"
            f" checkpoints. Move it out of the tree, or add '{files.private_path.name}' to .gitignore.",
            file=sys.stderr,
        )
    if args.format == "json":
        payload = {
            "private_key": str(files.private_path),
            "public_key": str(files.public_path),
            "key_id": files.key_id,
            "unignored_in_work_tree": str(exposed) if exposed is not None else None,
        }
        if args.approver is not None:
            payload["approver"] = args.approver
        print(json.dumps(payload, indent=2))
    else:
        print(f"private key  {files.private_path} (mode 0600; keep it away from the agent process)")
        if args.approver is not None:
            print(f"public key   {files.public_path} (list it in the approvers file:)")
            entry = f"{{name: {args.approver}, public_key: {files.public_path}, rules: ['*']}}"
            print(f"               - {entry}")
        else:
            print(f"public key   {files.public_path} (give this to auditors: dsh-policy verify --key)")
        print(f"key id       {files.key_id}")
    return EXIT_INTACT
