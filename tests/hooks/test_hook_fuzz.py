"""Fuzzed payloads: whatever arrives on stdin, the hook answers with exit 0 or 2, never a traceback,
and a Codex answer only ever carries fields Codex honours."""

from __future__ import annotations

import json
from typing import Any

from dsh_policy.policy.hooks.codex.dialect import check_known_fields
from dsh_policy.policy.hooks.protocol.messages import SUPPORTED_EVENTS
from dsh_policy.policy.hooks.protocol.vocabulary import ALIASES
from hook_testkit import payload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_FUZZ = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
tool_names = st.sampled_from(sorted({name for table in ALIASES.values() for name in table})) | st.text(
    max_size=12
)
events = st.sampled_from([*SUPPORTED_EVENTS, "Notification", "PermissionRequest", ""]) | st.text(max_size=10)
commands = st.sampled_from(["rm -rf /", "ls", "bash -lc 'rm -rf ~'", "", "$(rm -rf /)"]) | st.text(
    max_size=30
)

_FIELDS = [
    "session_id",
    "transcript_path",
    "cwd",
    "prompt",
    "tool_name",
    "tool_input",
    "tool_response",
    "tool_use_id",
]


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """A recorded payload shape with fields dropped, retyped or replaced at random."""
    harness = draw(st.sampled_from(["claude-code", "codex"]))
    base = payload(
        harness,
        draw(
            st.sampled_from(
                [
                    "pre_tool_use_bash_ls",
                    "post_tool_use_bash_clean",
                    "user_prompt_submit",
                    "session_start",
                    "stop",
                ]
            )
        ),
    )
    document: dict[str, Any] = dict(base)
    document["hook_event_name"] = draw(st.sampled_from([base["hook_event_name"]]) | events)
    document["tool_name"] = draw(tool_names)
    tool_input = draw(
        st.dictionaries(
            st.sampled_from(["command", "file_path", "path", "url", "edits", "cmd"]),
            json_values | commands,
            max_size=3,
        )
        | json_values
    )
    document["tool_input"] = tool_input
    for name in draw(st.lists(st.sampled_from(_FIELDS), max_size=3)):
        if draw(st.booleans()):
            document.pop(name, None)
        else:
            document[name] = draw(json_values)
    return document


def _check(run, harness: str, event: Any) -> None:  # type: ignore[no-untyped-def]
    assert run.code in (0, 2), run
    assert "Traceback" not in run.stderr
    if run.code == 2:
        assert run.stdout == "" and run.stderr.strip()
    elif run.stdout:
        answer = json.loads(run.stdout)
        assert isinstance(answer, dict)
        if harness == "codex":
            check_known_fields(event, answer)


@_FUZZ
@given(document=payloads(), harness=st.sampled_from(["claude-code", "codex"]))
def test_fuzzed_payloads_answer_with_exit_0_or_2(run_hook, document: dict[str, Any], harness: str) -> None:
    run = run_hook(harness, document)
    _check(run, harness, document.get("hook_event_name"))


@_FUZZ
@given(
    raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode),
    harness=st.sampled_from(["claude-code", "codex"]),
)
def test_fuzzed_bytes_never_crash(run_hook, raw: bytes, harness: str) -> None:
    run = run_hook(harness, raw)
    assert run.code in (0, 2)
    assert "Traceback" not in run.stderr
