"""The safe answer of every hook event, spelled without the policy engine.

The fast client must refuse even when nothing else works (no gateway, a signal, a broken socket, a
bug), and it cannot import pydantic or the dialects to do so. These are the same answers
:func:`~dsh_policy.policy.hooks.protocol.messages.failure_verdict` and the dialects give, written out by
hand; a test checks both spellings agree for every event and harness:

- ``PreToolUse``, or input too broken to name its event: exit 2, reason on stderr (denied);
- ``PostToolUse`` and ``UserPromptSubmit``: exit 0, ``decision: "block"`` (withheld / dropped);
  under Claude Code a PostToolUse block cannot withhold a built-in tool's output, and the reason
  says so (the dialect's ``ALREADY_SEEN_NOTE``);
- ``SessionStart`` and ``Stop``: exit 0, ``continue: false`` (the session stops);
- Copilot CLI, which ignores stderr and cannot be stopped: exit 2 with the refusal also in stdout,
  for every event but PostToolUse.
"""

from __future__ import annotations

FAIL_CLOSED_PREFIX = "dsh-policy failed closed"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
EXIT_OK = 0
EXIT_BLOCK = 2
# claude_code.ALREADY_SEEN_NOTE, repeated here so the client need not import the dialect.
CLAUDE_CODE_ALREADY_SEEN = (
    "dsh-policy could not withhold this output: Claude Code passes a built-in tool's output to the "
    "model before PostToolUse hooks run and lets no hook take it back, so it has already reached "
    "you; do not repeat, store or send what policy flagged."
)


class Answer:
    """What the process emits: exit code, stdout, stderr."""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, exit_code: int, stdout: str = "", stderr: str = "") -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"Answer({self.exit_code}, {self.stdout!r}, {self.stderr!r})"


def _reject_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def event_of(raw: bytes | None) -> str | None:
    """The event a raw payload names, when it names a supported one readably (else None, which
    is answered as a refusal). Parsed as strictly as the adapter does: a duplicate key is
    unreadable, because two readers could disagree about which event it is."""
    if not raw:
        return None
    import json  # only on the failure path: the fast client never needs it otherwise

    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    name = document.get("hook_event_name") if isinstance(document, dict) else None
    return name if name in EVENTS else None


def safe_answer(event: str | None, message: str, harness: str = "codex") -> Answer:
    """The refusal for ``event`` (None = unknown) with ``message`` as the reason."""
    reason = f"{FAIL_CLOSED_PREFIX}: {message}".strip()
    if harness == "copilot-cli" and event != "PostToolUse":
        return _copilot_refusal(reason)
    if event == "PostToolUse" and harness == "claude-code":
        return Answer(
            EXIT_OK, _line({"decision": "block", "reason": f"{reason}. {CLAUDE_CODE_ALREADY_SEEN}"})
        )
    if event in ("PostToolUse", "UserPromptSubmit"):
        return Answer(EXIT_OK, _line({"decision": "block", "reason": reason}))
    if event in ("SessionStart", "Stop"):
        return Answer(EXIT_OK, _line({"continue": False, "stopReason": reason}))
    return Answer(EXIT_BLOCK, "", reason.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


def _copilot_refusal(reason: str) -> Answer:
    """Copilot CLI ignores stderr: its refusal is also in stdout, readable before and after a call
    (the copilot_cli dialect's ``refusal``)."""
    document: dict[str, object] = {
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
        "decision": "block",
        "reason": reason,
    }
    stderr = reason.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"
    return Answer(EXIT_BLOCK, _line(document), stderr)


def _line(document: dict[str, object]) -> str:
    import json

    return json.dumps(document, ensure_ascii=True, separators=(",", ":")) + "\n"


def action_of(answer: Answer) -> str:
    """What ``answer`` told the agent, in a word (``deny``, ``block``, ``stop`` or ``pass``)."""
    if answer.exit_code == EXIT_BLOCK:
        return "deny"
    if '"decision":"block"' in answer.stdout:
        return "block"
    if '"continue":false' in answer.stdout:
        return "stop"
    return "pass"
