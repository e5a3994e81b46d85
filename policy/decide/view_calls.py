"""A call judged as what it does: each canonical call its arguments describe (:mod:`.tool_views`)
is decided by the same stage, and the call takes the strictest answer.

A call whose name is canonical but whose fields are another client's (``write_file {file_path}``,
``shell`` with an argv list) is judged as its views only: the rules of its name read fields it
lacks. Any other call is judged as itself too, so rules written for its own name (an MCP server's
tools, a harness's) keep applying. The views are canonical calls, so they imply no further views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dsh_policy.policy.decide.tool_views import ToolViews
from dsh_policy.policy.events import DECISION_STRICTNESS, GuardVerdict, ToolCallEvent, ToolCallVerdict

_SHOWN: Final[int] = 100  # characters of a view's main argument quoted in a message
_MAIN_ARGUMENT: Final[dict[str, str]] = {
    "shell": "command",
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "web_fetch": "url",
    "http_request": "url",
    "send_message": "channel",
}


def view_events(event: ToolCallEvent, found: ToolViews) -> list[ToolCallEvent]:
    """One event per view, carrying the call's session, step and working directory."""
    return [
        ToolCallEvent(
            name,
            args,
            call_id=event.call_id,
            root_call_id=event.root_call_id,
            nested=event.nested,
            session_id=event.session_id,
            agent_id=event.agent_id,
            turn=event.turn,
            step=event.step,
            original_name=event.original_name or event.tool,
            now=event.now,
            cwd=event.cwd,
        )
        for name, args in found.calls
    ]


def describe(view: ToolCallEvent) -> str:
    """``write_file .git/hooks/pre-commit``: the view's name and main argument, for messages."""
    key = _MAIN_ARGUMENT.get(view.tool)
    value: Any = view.args.get(key) if key is not None and isinstance(view.args, dict) else None
    if not isinstance(value, str):
        return view.tool
    shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
    return f"{view.tool} {shown}"


def strictest_pre_execute(
    event: ToolCallEvent,
    found: ToolViews,
    own: ToolCallVerdict | None,
    decide: Callable[[ToolCallEvent], ToolCallVerdict],
) -> ToolCallVerdict:
    """``own`` (None when the views replace the call), or the stricter verdict of a view, its
    message naming what the call was judged as."""
    best = own
    best_view: ToolCallEvent | None = None
    for view in view_events(event, found):
        if best is not None and best.decision == "deny":
            break
        verdict = decide(view)
        if best is None or DECISION_STRICTNESS.get(verdict.decision, 2) > DECISION_STRICTNESS.get(
            best.decision, 2
        ):
            best, best_view = verdict, view
    assert best is not None  # found.calls is never empty
    if best_view is None or (own is None and best.decision == "allow"):
        return best
    message = f'tool "{event.tool}" judged as {describe(best_view)}: {best.message or best.decision}'
    rules = best.rules if own is None else own.rules + tuple(r for r in best.rules if r not in own.rules)
    return ToolCallVerdict(
        best.decision,
        rules,
        message,
        best.shadow_rules if own is None else own.shadow_rules + best.shadow_rules,
        best.trace if own is None else own.trace + best.trace,
        best.internal_error or (own.internal_error if own is not None else None),
        policy=best.policy,
    )


def first_guard_denial(
    event: ToolCallEvent,
    found: ToolViews,
    own: GuardVerdict | None,
    guard: Callable[[ToolCallEvent], GuardVerdict],
) -> GuardVerdict:
    """``own`` when it denies (or no view is denied); else the first view's denial, naming it."""
    if own is not None and own.denied:
        return own
    first: GuardVerdict | None = None
    for view in view_events(event, found):
        verdict = guard(view)
        if verdict.denied:
            message = f'tool "{event.tool}" judged as {describe(view)}: {verdict.message or "denied"}'
            return GuardVerdict(
                True,
                verdict.rules,
                message,
                verdict.shadow_rules,
                verdict.trace,
                verdict.internal_error,
                policy=verdict.policy,
            )
        first = first or verdict
    if own is not None:
        return own
    assert first is not None
    return first
