"""``dsh-policy log LOG...``: an audit log for people, one line per decision, verified as it reads.

Auditors should not need ``jq`` to see which command was denied by which rule. Every line is checked
by the verifier's own per-record checks (:mod:`.verify`: canonical form, hash, chain, checkpoints,
signatures with ``--key``) while it is read, and a record that fails is shown with the reasons,
never skipped: a tampered record that claims "allow" must be seen next to the word FAILED. The
whole-log checks that need the end of the log (an exported anchor, a cut tail, a missing segment)
stay with ``dsh-policy verify``.

Lives in ``audit`` because it needs only the records: arguments were redacted when they were
written, so reading a log never needs the policy engine.

Exit codes: 0 every record read verified, 1 a record failed verification, 2 usage or an unreadable
input.
"""

from __future__ import annotations

import datetime
import fnmatch
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from .arguments import EXIT_USAGE, CommandParser, parse_command
from .keys import KeyFileError, load_public_key
from .segments import active_path_of, discover_segments, rotated_segments
from .terminal import Painter
from .verify import RecordChecker, SegmentState

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
_POLL_SECONDS: Final = 0.2
_ARG_KEYS: Final = ("command", "path", "url", "channel", "file_path")
_WRITER_KINDS: Final = frozenset({"segment_start", "checkpoint", "tool_dispatch"})
_HOOK_STAGES: Final = {
    "PreToolUse": "pre-execute",
    "PostToolUse": "post-execute",
    "UserPromptSubmit": "pre-step",
    "SessionStart": "session",
    "Stop": "session",
}
#: Decision words a ``--decision`` value matches (ASK>OK was asked and allowed, ...).
_DECISION_WORDS: Final = {
    "ASK>OK": {"ask", "allow", "ask>ok"},
    "ASK>DENY": {"ask", "deny", "ask>deny"},
    "REDACT": {"redact", "accept"},
    "PASS": {"allow", "pass", "accept"},
}
#: Hook answers (``answer.action``), which ``log`` prints upper-cased.
_HOOK_ACTIONS: Final = ("allow", "deny", "ask", "block", "redact", "pass", "halt")
#: Every word ``--decision`` accepts: the decision words ``log`` prints, and what they match. A
#: value outside it is refused (a typo such as ``denied`` would otherwise show nothing).
DECISION_VALUES: Final = frozenset(
    {
        *(word for words in _DECISION_WORDS.values() for word in words),
        *_HOOK_ACTIONS,
        *(f"told-{action}" for action in _HOOK_ACTIONS),
        "reject", "error", "dispatch", "loaded", "reload-failed", "checkpoint", "segment", "recovery",
        "policy_reload_refused", "records_lost", "key_handover", "step_entered",
    }
)  # fmt: skip
#: What a harness does with an answer it cannot honour, where the record predates ``client``.
_CLIENT_ACTIONS: Final = {("codex", "ask"): "deny"}


@dataclass(frozen=True, slots=True)
class Entry:
    """One record as a person reads it, with the verifier's judgement of it."""

    file: str
    line: int
    seq: int | None
    ts: str | None
    kind: str
    session: str | None
    stage: str
    tool: str | None
    args: Any
    decision: str
    rules: tuple[str, ...]
    message: str | None
    failures: tuple[str, ...] = ()
    harness: str | None = None  #: the harness or framework that decided (``harness``, ``hook.harness``)
    defines: tuple[str, ...] = ()  #: rule ids a ``policy_loaded`` record brought into force

    @property
    def verified(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "seq": self.seq,
            "ts": self.ts,
            "kind": self.kind,
            "session": self.session,
            "stage": self.stage,
            "tool": self.tool,
            "args": self.args,
            "decision": self.decision.lower(),
            "harness": self.harness,
            "rules": list(self.rules),
            "message": self.message,
            "verified": self.verified,
            "failures": list(self.failures),
        }


# ------------------------------------------------------------------------------------ describing


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _tool_result(record: dict[str, Any]) -> tuple[str, str, tuple[str, ...], str | None]:
    """(stage, decision word, rules, message) of a ``tool_result`` record, as ``run`` labels it."""
    decision = _mapping(record.get("decision"))
    pre, guard = _mapping(decision.get("pre_execute")), _mapping(decision.get("guard"))
    post, result = _mapping(decision.get("post_execute")), _mapping(record.get("result"))
    denied_by = decision.get("denied_by")
    if guard.get("denied"):
        return "guard", "DENY", _strings(guard.get("rules")), guard.get("message")
    if denied_by == "approval":
        return "approval", "ASK>DENY", _strings(pre.get("rules")), pre.get("message")
    if denied_by is not None:
        return (
            "pre-execute",
            "DENY",
            _strings(pre.get("rules")),
            pre.get("message") or result.get("error_message"),
        )
    if post.get("decision") == "block" or post.get("action") == "block":
        return "post-execute", "BLOCK", _strings(post.get("rules")), post.get("message")
    if post.get("redactions"):
        return "post-execute", "REDACT", _strings(post.get("rules")), f"{post['redactions']} redaction(s)"
    if pre.get("decision") == "ask":
        return "approval", "ASK>OK", _strings(pre.get("rules")), pre.get("message")
    if result.get("is_error"):
        return "tool", "ERROR", (), result.get("error_message") or result.get("error_code")
    return "pre-execute" if pre else "post-execute", "ALLOW", _strings(pre.get("rules")), pre.get("message")


def describe(record: dict[str, Any], file: str, line: int, failures: tuple[str, ...]) -> Entry:
    """The person-readable :class:`Entry` of any record kind."""
    kind = str(record.get("kind", "?"))
    call = _mapping(record.get("call"))
    tool = call.get("name") if call else None
    args: Any = call.get("args") if call else None
    stage, decision, message = kind, kind.upper(), None
    rules: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    if kind == "tool_result":
        stage, decision, rules, message = _tool_result(record)
    elif kind == "tool_dispatch":
        stage, decision = "dispatch", "DISPATCH"
    elif kind == "step_rejected":
        verdict = _mapping(record.get("decision"))
        stage, decision, rules, message = (
            "pre-step",
            "REJECT",
            _strings(verdict.get("rules")),
            verdict.get("message"),
        )
        texts = [m.get("text") for m in record.get("messages") or () if isinstance(m, dict)]
        args = texts[-1] if texts else None
    elif kind == "hook_event":
        hook, answer = _mapping(record.get("hook")), _mapping(record.get("answer"))
        stage = _HOOK_STAGES.get(str(hook.get("event")), str(hook.get("event") or "hook"))
        action = str(answer.get("action") or "pass")
        decision = action.upper()
        rules, message = _strings(answer.get("rules")), answer.get("reason")
        # What the client did with our answer, where it differs (Codex cannot ask: it refuses).
        client = answer.get("client") or _CLIENT_ACTIONS.get((str(hook.get("harness")), action))
        if isinstance(client, str) and client != action:
            decision = client.upper()
            message = f"{hook.get('harness')} did {client}; policy said {action}: {message or ''}".rstrip(
                ": "
            )
        if record.get("input_error"):
            message = f"malformed hook input: {record['input_error']}"
        if isinstance(answer.get("approval"), str):  # asked, and the approval queue admitted it
            decision, message = "ASK>OK", f"{answer['approval']}: {message or ''}".rstrip(": ")
    elif kind.startswith(("approval_", "grant_")):
        stage, decision, message = "approval", *_approval_event(kind, record)
        rules = _strings(record.get("rules"))
        tool, args = record.get("tool"), record.get("args")
    elif kind == "hook_told":
        hook, told = _mapping(record.get("hook")), _mapping(record.get("told"))
        stage = _HOOK_STAGES.get(str(hook.get("event")), str(hook.get("event") or "hook"))
        decision = "TOLD-" + str(told.get("action") or "deny").upper()
        message = (
            f"the agent was told this, not the gateway's answer to request {record.get('request')}: "
            f"{record.get('why')}"
        )
    elif kind == "policy_loaded":
        stage, decision = "policy", "LOADED"
        defines = tuple(str(rule) for rule in _mapping(record.get("rules")))
        args = ", ".join(str(_mapping(p).get("name")) for p in record.get("packs") or ())
    elif kind == "policy_reload_failed":
        stage, decision = "policy", "RELOAD-FAILED"
        errors = record.get("errors") or ()
        message = str(errors[0]) if errors else None
    elif kind == "checkpoint":
        info = _mapping(record.get("checkpoint"))
        stage, decision = "log", "CHECKPOINT"
        message = f"covers seq {info.get('first_seq', '?')}..{info.get('last_seq', '?')}" + (
            ", signed" if info.get("signature") or info.get("sig") else ""
        )
    elif kind == "segment_start":
        stage, decision = "log", "SEGMENT"
    elif kind == "recovery":
        info = _mapping(record.get("recovery"))
        stage, decision = "log", "RECOVERY"
        message = f"torn tail of {info.get('length')} byte(s) moved to {info.get('side_file')}"
    delivery = _mapping(record.get("delivery"))
    if delivery.get("path") == "in-process":  # the hook decided itself: its gateway did not answer
        message = (
            f"{message} [decided in process: {delivery.get('why')}]"
            if message
            else (f"decided in process: {delivery.get('why')}")
        )
    session = record.get("session")
    return Entry(
        file=file,
        line=line,
        seq=record.get("seq") if isinstance(record.get("seq"), int) else None,
        ts=record.get("ts") if isinstance(record.get("ts"), str) else None,
        kind=kind,
        session=session if isinstance(session, str) else None,
        stage=stage,
        tool=str(tool) if tool is not None else None,
        args=args,
        decision=decision,
        rules=rules,
        message=str(message) if message is not None else None,
        failures=failures,
        harness=_harness(record),
        defines=defines,
    )


def _approval_event(kind: str, record: dict[str, Any]) -> tuple[str, str]:
    """Decision word and message of an approval queue record (docs/approvals.md)."""
    request, grant = record.get("request"), record.get("grant")
    if kind == "approval_decided":
        verdict = "APPROVED" if record.get("verdict") == "approve" else "DENIED"
        return verdict, f"{request} by {record.get('approver')} ({record.get('key_id')})"
    if kind == "approval_used":
        return "APPROVAL-USED", f"{request} approved by {', '.join(_strings(record.get('approvers')))}"
    if kind == "approval_closed":
        return str(record.get("status") or "closed").upper(), f"{request}: {record.get('why')}"
    if kind == "grant_made":
        return "GRANTED", f"{grant} by {record.get('approver')} until {record.get('until')}"
    if kind == "grant_used":
        return "GRANT-USED", f"{grant} by {record.get('approver')}"
    if kind == "grant_revoked":
        return "REVOKED", f"{grant} by {record.get('by')}"
    return "REQUESTED", f"{request}: {record.get('message')}"


def _harness(record: dict[str, Any]) -> str | None:
    """Which harness decided: a framework adapter's ``harness``, or a hook's ``hook.harness``."""
    named = record.get("harness") or _mapping(record.get("hook")).get("harness")
    return named if isinstance(named, str) else None


def _unreadable(file: str, line: int, failures: tuple[str, ...]) -> Entry:
    return Entry(file, line, None, None, "?", None, "?", None, None, "UNREADABLE", (), None, failures)


# -------------------------------------------------------------------------------------- reading


@dataclass(slots=True)
class VerifyingReader:
    """Feeds lines to the verifier's per-record checks (:class:`~.verify.RecordChecker`) in
    log order and yields :class:`Entry`, so ``log`` and ``verify`` never disagree about a record."""

    checker: RecordChecker
    failed: int = 0
    read: int = 0

    def start_segment(self) -> SegmentState:
        return self.checker.begin_segment()

    def entry(self, raw: bytes, file: str, number: int, previous: SegmentState | None) -> Entry:
        failures = self.checker.check(raw, file, number, previous)
        self.read += 1
        if failures:
            self.failed += 1
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            return _unreadable(file, number, failures or ("MALFORMED: not a JSON object",))
        return describe(record, file, number, failures)


def _complete_lines(handle: BinaryIO, pending: bytearray) -> list[bytes]:
    """The newly complete lines of ``handle``; an unfinished last line waits in ``pending``."""
    data = handle.read()
    if not data:
        return []
    pending += data
    *lines, rest = bytes(pending).split(b"\n")
    pending[:] = rest
    return lines


def _read_lines(
    path: Path, handle: BinaryIO, reader: VerifyingReader, state: list[Any], *, final: bool, last: bool
) -> Iterator[Entry]:
    """The complete lines now in ``handle``; ``state`` is [line number, pending bytes, segment
    state for line 1]. ``final``: the file will not grow, so a pending part-line is reported."""
    for raw in _complete_lines(handle, state[1]):
        state[0] += 1
        yield reader.entry(raw, str(path), state[0], state[2])
        state[2] = None
    if final and state[1]:
        if not last:
            reader.failed += 1
        yield _unreadable(
            str(path),
            state[0] + 1,
            ("TORN_TAIL: last line has no newline (a write cut short)",)
            if last
            else ("MALFORMED: line without newline inside a rotated segment",),
        )


def _read_whole(path: Path, reader: VerifyingReader, unreadable: list[str], *, last: bool) -> Iterator[Entry]:
    try:
        handle = path.open("rb")
    except OSError as error:
        unreadable.append(f"{path}: {error.strerror or error}")
        return
    with handle:
        yield from _read_lines(
            path, handle, reader, [0, bytearray(), reader.start_segment()], final=True, last=last
        )


def read_entries(
    files: Sequence[Path], reader: VerifyingReader, *, follow: bool, unreadable: list[str]
) -> Iterator[Entry]:
    """Every record of ``files`` in order; with ``follow``, then every record appended to the
    log's active segment, following rotation, until interrupted."""
    if not follow:
        for position, path in enumerate(files):
            yield from _read_whole(path, reader, unreadable, last=position == len(files) - 1)
        return
    active = active_path_of(files[-1])
    read_up_to: int | None = None
    for path in files[:-1] if files[-1] == active else files:
        yield from _read_whole(path, reader, unreadable, last=False)
        index = _segment_index(path, active)
        if index is not None:
            read_up_to = index
    yield from _follow(active, reader, read_up_to)


def _segment_index(path: Path, active: Path) -> int | None:
    return next((index for index, candidate in rotated_segments(active) if candidate == path), None)


def _inode(info: os.stat_result) -> tuple[int, int]:
    return info.st_ino, info.st_dev


def _rotated_after(active: Path, read_up_to: int | None) -> list[tuple[int, Path]]:
    return [(i, p) for i, p in rotated_segments(active) if read_up_to is None or i > read_up_to]


def _follow(active: Path, reader: VerifyingReader, read_up_to: int | None) -> Iterator[Entry]:
    """Tail the active segment; when the writer rotates it (the full file gets its ``PATH.NNNNNN``
    name, a new file takes ``PATH``), finish the held file, read any segments rotated since in
    index order, then tail the new active file. Segments are always read in log order, so the
    verifier's segment links hold however many rotations happen between two looks."""
    while True:
        rotated = _rotated_after(active, read_up_to)
        try:
            handle = active.open("rb")
        except OSError:
            handle = None
        held = _inode(os.fstat(handle.fileno())) if handle is not None else None
        older = [(i, p) for i, p in rotated if held is None or _inode(os.stat(p)) != held]
        if older:  # complete segments we have not read: they come first
            if handle is not None:
                handle.close()
            for index, path in older:
                yield from _read_whole(path, reader, [], last=False)
                read_up_to = index
            continue
        if handle is None:
            time.sleep(_POLL_SECONDS)
            continue
        with handle:
            state: list[Any] = [0, bytearray(), reader.start_segment()]
            while True:
                yield from _read_lines(active, handle, reader, state, final=False, last=True)
                moved_to = _rotated_name(active, held, read_up_to)
                if moved_to is not None and _current_inode(active) != held:
                    yield from _read_lines(active, handle, reader, state, final=True, last=False)
                    read_up_to = moved_to
                    break
                time.sleep(_POLL_SECONDS)


def _rotated_name(active: Path, held: tuple[int, int] | None, read_up_to: int | None) -> int | None:
    """The index under which the file we hold now lives as a rotated segment, if it does."""
    for index, path in _rotated_after(active, read_up_to):
        try:
            if _inode(os.stat(path)) == held:
                return index
        except OSError:
            continue
    return None


def _current_inode(active: Path) -> tuple[int, int] | None:
    try:
        return _inode(os.stat(active))
    except OSError:
        return None


# ------------------------------------------------------------------------------------ filtering

_RELATIVE: Final = re.compile(r"^(\d+)\s*([smhdw])$")
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: datetime.datetime | None = None) -> datetime.datetime | None:
    """An RFC 3339 time or date (UTC when no zone is given), or an age such as ``30m``, ``2h``,
    ``7d``; None when unreadable."""
    now = now or datetime.datetime.now(datetime.UTC)
    relative = _RELATIVE.match(text.strip())
    if relative:
        return now - datetime.timedelta(seconds=int(relative[1]) * _UNIT_SECONDS[relative[2]])
    try:
        parsed = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.UTC)


@dataclass(frozen=True, slots=True)
class Filters:
    """What ``--decision``, ``--rule``, ``--session``, ``--since`` and ``--all`` keep. Records that
    fail verification are always kept: a filter must never hide evidence of tampering."""

    decisions: frozenset[str] = frozenset()
    rules: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    since: datetime.datetime | None = None
    everything: bool = False

    def unknown_decisions(self) -> list[str]:
        """The ``--decision`` values no record can match (refused before reading)."""
        return sorted(self.decisions - DECISION_VALUES)

    def unmatched_rules(self, known: set[str]) -> list[str]:
        """The ``--rule`` patterns that match none of the rule ids in ``known``."""
        return [p for p in self.rules if not any(_rule_matches(p, rule) for rule in known)]

    def keep(self, entry: Entry) -> bool:
        if not entry.verified:
            return True
        if not self.everything and entry.kind in _WRITER_KINDS:
            return False
        if self.decisions:
            words = _DECISION_WORDS.get(entry.decision, {entry.decision.lower()})
            if not words & self.decisions:
                return False
        if self.rules and not any(
            _rule_matches(pattern, rule) for pattern in self.rules for rule in entry.rules
        ):
            return False
        if self.sessions and not any((entry.session or "").startswith(s) for s in self.sessions):
            return False
        if self.since is not None:
            stamp = parse_since(entry.ts) if entry.ts else None
            if stamp is None or stamp < self.since:
                return False
        return True


def _rule_matches(pattern: str, rule: str) -> bool:
    """``baseline/deny-x``, a glob (``baseline/*``), or a bare id matching any pack's rule."""
    if fnmatch.fnmatchcase(rule, pattern):
        return True
    return "/" not in pattern and fnmatch.fnmatchcase(rule.split("/", 1)[-1], pattern)


# ------------------------------------------------------------------------------------ rendering


def brief_args(args: Any, width: int = 60) -> str:
    """One short line for (already redacted) arguments: the telling field, else compact JSON."""
    if args is None:
        return "-"
    text: str | None = None
    if isinstance(args, dict):
        text = next((args[k] for k in _ARG_KEYS if isinstance(args.get(k), str)), None)
    elif isinstance(args, str):
        text = args
    if text is None:
        text = orjson.dumps(args).decode()
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def render_line(entry: Entry, paint: Painter) -> str:
    """time, session, stage, tool, arguments, decision, rules, message; then any failure."""
    ts = (entry.ts or "-").replace("T", " ")[:19]
    session = (entry.session or "-")[:8]
    parts = [
        paint.dim(ts),
        f"{session:<8}",
        f"{entry.stage:<12}",
        f"{entry.tool or '-':<12}",
        paint.decision(entry.decision, 8),
        brief_args(entry.args),
    ]
    if entry.rules:
        parts.append(paint.rules(entry.rules))
    if entry.message:
        parts.append(f"- {entry.message}")
    line = "  ".join(parts)
    if entry.failures:
        where = f"{entry.file}:{entry.line}" + (f" (seq {entry.seq})" if entry.seq is not None else "")
        line += "\n    " + paint.paint(
            f"FAILED VERIFICATION {where}: " + "; ".join(entry.failures), "red", "bold"
        )
    return line


# ---------------------------------------------------------------------------------- the command


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy log",
        description="Show an audit log for people: one line per decision (time, session, stage, tool, "
        "redacted arguments, decision, rules, message), each record verified as it is read; a record "
        "that fails verification is marked, never hidden. One LOG: its rotated segments are found "
        "automatically. For the whole-log verdict (cut tail, missing segment, anchor) use verify.",
        epilog="exit status: 0 every record read verified, 1 a record failed verification,"
        " 2 unreadable input or usage error",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="audit log segment(s)")
    parser.add_argument(
        "--decision",
        action="append",
        default=[],
        metavar="D",
        help="only these decisions (allow, deny, ask, block, redact, reject, error, ...); repeatable;"
        " an unknown word is refused (exit 2) with the list of valid ones",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="ID",
        help="only decisions by this rule (glob); a pattern that matches no rule of the log is"
        " refused once the log is read (exit 2, with the rules the log holds)",
    )
    parser.add_argument(
        "--session", action="append", default=[], metavar="S", help="only this session (id prefix)"
    )
    parser.add_argument(
        "--since", metavar="T", help="only records from T on: RFC 3339 time, or an age (30m, 2h, 7d)"
    )
    parser.add_argument("--follow", "-f", action="store_true", help="keep reading as records are appended")
    parser.add_argument(
        "--all", action="store_true", help="also show checkpoints, segment starts and dispatches"
    )
    parser.add_argument("--key", metavar="PUB", help="Ed25519 public key (PEM): check checkpoint signatures")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="json: one object per line"
    )
    return parser


def log_main(argv: Sequence[str]) -> int:
    """Entry point of ``dsh-policy log``."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    since = parse_since(args.since) if args.since else None
    if args.since and since is None:
        print(
            f"dsh-policy log: --since {args.since!r}: not a time (RFC 3339) or an age (30m, 2h, 7d)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        key = load_public_key(args.key) if args.key else None
    except KeyFileError as error:
        print(f"dsh-policy log: {error}", file=sys.stderr)
        return EXIT_USAGE
    given = [Path(p) for p in args.logs]
    files = discover_segments(given[0]) if len(given) == 1 else given
    filters = Filters(
        decisions=frozenset(d.lower() for d in args.decision),
        rules=tuple(args.rule),
        sessions=tuple(args.session),
        since=since,
        everything=args.all,
    )
    unknown = filters.unknown_decisions()
    if unknown:
        print(
            f"dsh-policy log: --decision {', '.join(unknown)}: not a decision; valid:"
            f" {', '.join(sorted(DECISION_VALUES))}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    reader = VerifyingReader(RecordChecker(key))
    paint = Painter.for_stream(sys.stdout)
    unreadable: list[str] = []
    known_rules: set[str] = set()
    shown = 0
    try:
        for entry in read_entries(files, reader, follow=args.follow, unreadable=unreadable):
            known_rules.update(entry.rules, entry.defines)
            if not filters.keep(entry):
                continue
            shown += 1
            if args.format == "json":
                sys.stdout.write(orjson.dumps(entry.to_json()).decode() + "\n")
            else:
                sys.stdout.write(render_line(entry, paint) + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:  # the end of --follow
        pass
    for problem in unreadable:
        print(f"dsh-policy log: unreadable: {problem}", file=sys.stderr)
    unmatched = filters.unmatched_rules(known_rules) if not args.follow else []
    if unmatched and not unreadable and not reader.failed:
        # Known only once the log is read: the rules its policy_loaded records define and its
        # decisions name. A pattern matching none is a typo, not "no decision by that rule".
        print(
            f"dsh-policy log: --rule {', '.join(unmatched)}: no rule of this log matches; rules in"
            f" the log: {', '.join(sorted(known_rules)) or 'none'}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.format == "text":
        verdict = (
            paint.decision("UNREADABLE INPUT")
            if unreadable
            else paint.decision("FAILED") + f": {reader.failed} record(s) failed verification"
            if reader.failed
            else "every record verified"
            + ("" if key is not None else " (signatures not checked: pass --key)")
        )
        print(f"{shown} of {reader.read} record(s) shown; {verdict}")
    if unreadable:
        return EXIT_USAGE
    return EXIT_FAILED if reader.failed else EXIT_OK


__all__ = ["Entry", "Filters", "VerifyingReader", "describe", "log_main", "parse_since", "read_entries"]
