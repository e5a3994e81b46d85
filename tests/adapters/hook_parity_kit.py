"""Parity of the Claude Agent SDK adapter (the Claude Code hook in process) with the in-process
gateway: the shared calls mapped to Claude Code's tools, and the comparison.

The SDK answers Claude Code's hooks, so what is compared has the hook path's form (HOOKS.md):
PreToolUse decides the whole gate at once (``check_tool_call``: a guard denial beats any
pre-execute outcome), a refusal reads ``<message> [policy: <rules>]`` (the hooks' one wording), an
allowed or asked call is a ``hook_event`` record and its result a ``tool_result`` of its own,
and the result is Claude Code's response object, not a string. :func:`assert_hook_parity`
compares, call by call, the same things :func:`adapter_parity_kit.assert_parity` does, each in
that form, against the reference run of the same calls:

- the gate: decision, deciding rules and message (the reference's pre-execute verdict, or its
  guard's when the guard denied), and who refused (``guard`` or ``tools/pre-execute``);
- post-execute, for every call that ran: decision, rules, message, number of redactions and the
  text the model reads (the redacted text, the contexts after it);
- what the model read of a refused call (the gate's message in the hooks' wording) and of a
  blocked result (the policy's message, saying the output could not be taken back);
- which bodies ran (an ask runs only when the application's ``can_use_tool`` approves);
- what the application's ``can_use_tool`` answered, as recorded (``PolicyHooks.can_use_tool``):
  the approval outcome and, for a refusal, its record (``denied_by: approval``, the pipeline's
  reason) next to the PreToolUse ``ask``;
- the audit records: the call as recorded (name, redacted arguments, argument digest, ids), the
  policy digest, the recorded gate and post-execute verdicts, the post-execute action and error
  flags. What differs by nature is left out: timestamps and chain fields, the session
  coordinates, ``original_name`` (Claude Code's tool name, absent in the harness), the content
  digest (the hook digests Claude Code's response object).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from adapter_parity_kit import Call, Run, _kind
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.events import with_rules
from dsh_policy.policy.hooks.claude_code.dialect import already_seen
from dsh_policy.policy.hooks.protocol.vocabulary import ALIASES, canonicalize

HARNESS = "claude-code"


def claude_code_call(call: Call) -> tuple[str, dict[str, Any]]:
    """The call as Claude Code makes it: the first tool of the Claude Code dialect's own table that
    canonicalizes to this tool, its fields renamed back; a tool the table does not name keeps its
    name (MCP tools and the like). Checked by canonicalizing it again."""
    name, args = call.tool, dict(call.args)
    for claude_name, alias in ALIASES[HARNESS].items():
        if alias.canonical == call.tool:
            name = claude_name
            for source, target in alias.renames:
                if target in args:
                    args[source] = args.pop(target)
            break
    back = canonicalize(HARNESS, name, args)
    assert not isinstance(back, str) and hasattr(back, "args"), back
    assert (back.name, thaw(back.args)) == (call.tool, dict(call.args)), (call, back)
    return name, args


def tool_response(name: str, args: Mapping[str, Any], output: str) -> Any:
    """What Claude Code 2.1's tool gives PostToolUse, in that tool's own shape."""
    if name == "Bash":
        return {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
    if name == "Read":
        lines = output.count("\n") + 1
        return {"type": "text", "file": {"filePath": args["file_path"], "content": output,
                                         "numLines": lines, "startLine": 1, "totalLines": lines}}
    if name == "WebFetch":
        return {"bytes": len(output), "code": 200, "codeText": "OK", "result": output, "durationMs": 3,
                "url": args["url"]}
    if name.startswith("mcp__"):
        return [{"type": "text", "text": output}]
    return output


def hook_records(log: Path) -> dict[str, list[dict[str, Any]]]:
    """Every record of a tool call in the hook path's log, by call id, in log order; each names the
    harness when it is a ``tool_result`` and the hook when it is a ``hook_event``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        call = record.get("call")
        if not isinstance(call, Mapping):
            continue
        if record["kind"] == "tool_result":
            assert record.get("harness") == HARNESS, record
        elif record["kind"] == "hook_event":
            assert record["hook"]["harness"] == HARNESS, record
        out.setdefault(str(call["call_id"]), []).append(record)
    return out


def _call(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record["call"].items() if k != "original_name"}


def _post(verdict: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {k: v for k, v in verdict.items() if k not in ("now", "action")}


#: The post-execute action the hook records for what the harness records (Claude Code takes a
#: redacted response object as the tool's output: ``updatedToolOutput``).
_ACTIONS = {"accept": "accept", "redact-content": "redact-value", "redact-value": "redact-value",
            "block": "block"}


def reference_facts(reference: Run, call_id: str, *, contexts_beside_output: bool = False) -> dict[str, Any]:
    """What the hook path must reproduce of one reference call. ``contexts_beside_output``: the
    harness shows a hook's contexts (``additionalContext``) beside the tool's output rather than
    after it in the same text, as the real Claude Code CLI does, so they are not in ``shown``."""
    outcome = reference.outcomes[call_id]
    record = reference.records[call_id]
    pre, guard = outcome.pre_execute, outcome.guard
    assert pre is not None
    if guard is not None and guard.denied:
        gate = {"decision": "deny", "rules": list(guard.rules), "message": guard.message, "by": "guard"}
    else:
        gate = {"decision": pre.decision, "rules": list(pre.rules), "message": pre.message,
                "by": "tools/pre-execute" if pre.decision == "deny" else None}
    ran = call_id in reference.ran
    decision = record["decision"]
    shown = reference.shown[call_id]
    is_error = record["result"]["is_error"]
    review = outcome.review
    if ran and review is not None and review.decision == "block":
        # Claude Code cannot take a built-in tool's output back: the hook says so, and the tool's
        # own response (recorded) is no error
        message = already_seen(with_rules(review.message or "", review.rules))
        shown, is_error = "\n\n".join((message, *review.contexts)), False
    elif not ran:
        shown = with_rules(gate["message"] or "", tuple(gate["rules"]))
    elif contexts_beside_output and review is not None and review.contexts:
        shown = shown.removesuffix("\n\n".join(("", *review.contexts)))
    refused_by_approval = decision.get("denied_by") == "approval"
    return {
        "call": _call(record),
        "policy": record["policy"],
        "gate": gate,
        "approval": decision.get("approval"),
        "approval_refusal": record["result"].get("error_message") if refused_by_approval else None,
        "ran": ran,
        "post": _post(decision.get("post_execute")) if ran else None,
        "post_action": _ACTIONS[decision["post_execute"]["action"]] if ran else None,
        "shown": shown,
        "is_error": is_error,
    }


def hook_facts(records: list[dict[str, Any]], shown: str, ran: bool) -> dict[str, Any]:
    """The same facts, read from the hook path's records of one call and what its model read."""
    pre_hook = [r for r in records if r["kind"] == "hook_event" and r["hook"]["event"] == "PreToolUse"]
    results = [r for r in records if r["kind"] == "tool_result"]
    assert len(results) <= 1 and len(pre_hook) <= 1, records
    result = results[0] if results else None
    denied_by = result["decision"].get("denied_by") if result is not None else None
    if denied_by is not None and denied_by != "approval":
        assert not pre_hook, records
        verdict = result["decision"]["pre_execute"]
        gate = {"decision": "deny", "rules": verdict["rules"], "message": verdict.get("message"),
                "by": result["decision"]["denied_by"]}
    else:
        (event,) = pre_hook
        answer = event["answer"]
        decision = {"pass": "allow", "ask": "ask"}[answer["action"]]
        message = answer["reason"]
        suffix = f" [policy: {', '.join(answer['rules'])}]" if answer["rules"] else ""
        if message is not None and suffix:
            assert message.endswith(suffix), answer
            message = message[: -len(suffix)]
        gate = {"decision": decision, "rules": answer["rules"], "message": message, "by": None}
    first = pre_hook[0] if pre_hook else result
    assert first is not None
    post = result["decision"].get("post_execute") if result is not None and gate["by"] is None else None
    if denied_by == "approval":  # the application's can_use_tool refused the asked call
        assert result is not None and result["decision"]["pre_execute"]["decision"] == "ask", records
        post = None
    return {
        "call": _call(first),
        "policy": first["policy"],
        "gate": gate,
        "approval": result["decision"].get("approval") if result is not None else None,
        "approval_refusal": result["result"].get("error_message") if denied_by == "approval" else None,
        "ran": ran,
        "post": _post(post) if ran else None,
        "post_action": post["action"] if ran and post is not None else None,
        "shown": shown,
        "is_error": result["result"]["is_error"] if result is not None else not ran,
    }


def assert_hook_parity(reference: Run, records: dict[str, list[dict[str, Any]]], shown: dict[str, str],
                       ran: list[str], calls: list[Call], rejected: str, *, every_path: bool = True,
                       contexts_beside_output: bool = False) -> None:
    """Call by call, the hook path decided, showed, ran and recorded what the reference did.
    ``rejected`` is what the application's ``can_use_tool`` tells the model when it says no;
    ``every_path``: the calls must exercise every path (allow, deny, guard, both asks, redact)."""
    ids = [call.call_id for call in calls]
    assert sorted(records) == sorted(ids), set(ids) ^ set(records)
    for call_id in ids:
        expected = reference_facts(reference, call_id, contexts_beside_output=contexts_beside_output)
        if expected["gate"]["decision"] == "ask" and not expected["ran"]:
            expected["shown"] = rejected  # the application's own words to the model
        got = hook_facts(records[call_id], shown[call_id], call_id in ran)
        assert got == expected, call_id
    assert sorted(ran) == sorted(reference.ran)
    kinds = {_kind(reference.outcomes[call_id]) for call_id in ids}
    assert not every_path or {"allow", "deny", "guard", "ask-ok", "ask-denied", "redact"} <= kinds, kinds
