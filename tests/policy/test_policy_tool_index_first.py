"""The tool index consulted first: a call for a tool no rule names gets the verdict built at load,
which must be the one the full run gives; ``pre_execute_call`` decides as ``pre_execute`` on the
event it stands for; the cheaper :class:`ToolCallEvent` and argument count change no value."""

from __future__ import annotations

import datetime
import pickle
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.decide.sizes import strings_size, utf8_size
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure
from full_run import without_shortcuts

RULES = """
    - {id: no-rm, stage: pre-execute, match: {tools: [shell]}, decision: deny,
       when: 'args.command.contains("rm")'}
    - {id: guard-root, stage: guard, match: {tools: [shell]}, when: 'args.command.endsWith(" /")'}
"""

GLOB = """
    - {id: any-write, stage: pre-execute, match: {tools: ["write_*"]}, decision: ask}
    - {id: guard-glob, stage: guard, match: {tools: ["write_*"]}, when: 'args.path == "/etc"'}
"""

# Rules for tools no canonical call is named after: no view of a call is ever judged, so
# ``pre_execute`` answers a remembered unnamed tool before any other step.
UNVIEWED = """
    - {id: no-rm, stage: pre-execute, match: {tools: [deploy]}, decision: deny,
       when: 'args.command.contains("rm")'}
    - {id: guard-root, stage: guard, match: {tools: [deploy]}, when: 'args.command.endsWith(" /")'}
"""

EVERY = """
    - {id: everywhere, stage: pre-execute, decision: deny, when: 'has(args.secret)'}
    - {id: guard-every, stage: guard, when: 'has(args.secret)'}
"""

CALLS: list[tuple[str, Any]] = [
    ("shell", {"command": "rm -rf build"}),
    ("shell", {"command": "ls /"}),
    ("other", {"command": "rm -rf build"}),
    ("other", None),
    ("write_file", {"path": "/etc"}),
    ("read", {"secret": "x"}),
    ("", {}),
]


def _load(tmp_path: Path, rules: str, decision: str = "allow") -> Policy:
    path = tmp_path / "index.yaml"
    path.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: index, version: 1.0.0}\n"
        f"spec:\n  defaults: {{mode: enforce, on_error: deny, decision: {decision}}}\n  rules:{rules}",
        encoding="utf-8",
    )
    loaded = Policy.load([path], engine="closure")
    assert not isinstance(loaded, LoadFailure), loaded
    return loaded


@pytest.mark.parametrize("decision", ["allow", "deny", "ask"])
@pytest.mark.parametrize(
    "rules",
    [RULES, RULES + GLOB, RULES + EVERY, UNVIEWED],
    ids=["exact", "glob", "every", "unviewed"],
)
def test_unnamed_tools_decide_as_the_full_run(tmp_path: Path, rules: str, decision: str) -> None:
    policy = _load(tmp_path, rules, decision)
    fast, full = policy.current(), without_shortcuts(policy.current())
    assert fast._views_judged is (rules is not UNVIEWED)
    calls = [*CALLS, ("deploy", {"command": "rm -rf build"}), ("deploy", {"command": "ls"})]
    for _ in range(2):
        for tool, args in calls:
            event = ToolCallEvent(tool=tool, args=args)
            assert fast.pre_execute(event) == full.pre_execute(event), (tool, args)
            assert fast.guard(event) == full.guard(event), (tool, args)
            assert fast.check_tool_call(event) == full.check_tool_call(event), (tool, args)
            assert fast.pre_execute_call(tool, args) == full.pre_execute(event), (tool, args)


def test_the_prebuilt_verdicts_exist_only_when_they_are_one_object(tmp_path: Path) -> None:
    exact = _load(tmp_path, RULES).current()
    assert exact._pre_unruled is not None and exact._guard_unruled is not None
    unnamed = exact.pre_execute(ToolCallEvent(tool="other", args={"note": "rm"}))
    assert unnamed is exact.pre_execute_call("another", {"x": 1})
    # a tool no rule names whose arguments describe a canonical call is judged as that call
    # (policy/decide/tool_views.py), so it is not handed the prebuilt verdict
    assert exact.pre_execute(ToolCallEvent(tool="other", args={"command": "rm"})) is not unnamed
    assert unnamed.decision == "allow" and unnamed.trace == () and unnamed.policy == exact.stamp
    # the default decision's message names the tool: built per call, not shared
    assert _load(tmp_path, RULES, "deny").current()._pre_unruled is None
    # a glob or a rule for every tool may apply to any name: every call takes the plan path
    for rules in (RULES + GLOB, RULES + EVERY):
        decider = _load(tmp_path, rules).current()
        assert decider._pre_unruled is None and decider._guard_unruled is None


def test_plain_unnamed_tools_are_remembered_and_writers_and_named_tools_are_not(tmp_path: Path) -> None:
    """A tool no rule names and that writes no file gets the load-time verdict from one lookup
    once seen; a writer (whose content may imply shell calls) and a named tool never do."""
    decider = _load(tmp_path, RULES).current()
    write = {"path": "Makefile", "content": "all:\n\trm -rf build\n"}
    for tool in ("other", "write_file", "mcp__fs__write_file", "shell"):
        decider.pre_execute(ToolCallEvent(tool=tool, args=write))
        decider.pre_execute_call(tool, write)
    assert set(decider._pre_plain) == {"other"}
    assert decider.pre_execute_call("other", None) is decider._pre_unruled
    for index in range(5000):
        assert decider.pre_execute_call(f"tool-{index}", None) is decider._pre_unruled
    assert len(decider._pre_plain) == 4096  # bounded: names beyond take the two lookups
    assert decider.pre_execute(ToolCallEvent(tool="tool-4999")) is decider._pre_unruled


def test_a_named_tool_still_meets_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "index.yaml"
    _load(tmp_path, RULES)
    small = Policy.load([path], engine="closure", max_scan_bytes=16)
    assert not isinstance(small, LoadFailure)
    refused = small.pre_execute_call("shell", {"command": "ls " + "a" * 32})
    assert refused.decision == "deny" and "too large" in (refused.message or "")
    assert small.pre_execute_call("other", {"note": "ls " + "a" * 32}).decision == "allow"
    # another tool carrying a command line is judged as that shell call, size limit included
    viewed = small.pre_execute_call("other", {"command": "ls " + "a" * 32})
    assert viewed.decision == "deny" and "too large" in (viewed.message or "")


def test_a_plain_policy_binds_its_deciders_methods_and_a_reloading_one_does_not(tmp_path: Path) -> None:
    from dsh_policy.policy.runtime.reload import ReloadingPolicy

    policy = _load(tmp_path, RULES)
    assert policy.pre_execute == policy.current().pre_execute
    assert "pre_execute" not in vars(ReloadingPolicy.load([tmp_path / "index.yaml"], engine="closure"))


def test_a_subclass_override_of_a_decide_method_is_not_shadowed(tmp_path: Path) -> None:
    calls: list[str] = []

    class Logged(Policy):
        def pre_execute(self, event: ToolCallEvent) -> Any:
            calls.append(event.tool)
            return super().pre_execute(event)

    _load(tmp_path, RULES)
    logged = Logged.load([tmp_path / "index.yaml"], engine="closure")
    assert isinstance(logged, Logged)
    logged.pre_execute(ToolCallEvent(tool="shell", args={"command": "ls"}))
    assert calls == ["shell"]
    assert logged.guard == logged.current().guard  # what it does not override is still bound


def test_a_tool_call_event_keeps_its_dataclass_behaviour() -> None:
    now = datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
    full = ToolCallEvent("shell", {"command": "ls"}, "c1", "r1", True, "s1", "a1", 3, 4, "Bash", now, "/tmp")
    named = ToolCallEvent(
        tool="shell", args={"command": "ls"}, call_id="c1", root_call_id="r1", nested=True,
        session_id="s1", agent_id="a1", turn=3, step=4, original_name="Bash", now=now, cwd="/tmp",
    )  # fmt: skip
    assert full == named and hash(ToolCallEvent("x")) == hash(ToolCallEvent("x", None, ""))
    assert [getattr(full, f.name) for f in fields(ToolCallEvent)] == [
        "shell", {"command": "ls"}, "c1", "r1", True, "s1", "a1", 3, 4, "Bash", now, "/tmp"
    ]  # fmt: skip
    bare = ToolCallEvent("x")
    assert (bare.args, bare.call_id, bare.nested, bare.agent_id, bare.turn, bare.now, bare.cwd) == (
        None, "", False, None, 0, None, None
    )  # fmt: skip
    assert bare == ToolCallEvent("x", None, "", "", False, "", None, 0, 0, None, None, None)
    assert repr(bare) == repr(ToolCallEvent("x", call_id="", turn=0))
    assert replace(full, turn=9).turn == 9 and replace(full, turn=9).cwd == "/tmp"
    assert pickle.loads(pickle.dumps(full)) == full
    with pytest.raises(FrozenInstanceError):
        bare.tool = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolCallEvent("x", sesion_id="typo")  # type: ignore[call-arg]
    # a value equal to its field's default but not that object is stored as given, as before the
    # identity-only test of the usual call
    odd = ToolCallEvent("x", nested=0, turn=False)  # type: ignore[arg-type]
    assert (odd.nested, type(odd.nested), odd.turn) == (0, int, 0) and odd == bare


@pytest.mark.parametrize(
    "value",
    [
        {"command": "ls -la"},
        {"command": "héllo", "path": "/a"},
        {"a": "x", "b": 1, "c": None, "d": ["y", {"e": "zz"}]},
        {"a": "\udcff"},
        {},
        "plain",
        ["a", ("b", "c")],
        None,
    ],
)
def test_the_argument_count_is_the_utf8_size_of_every_string(value: Any) -> None:
    def every_string(item: Any) -> int:
        if isinstance(item, str):
            return utf8_size(item)
        if isinstance(item, dict):
            return sum(every_string(v) for v in item.values())
        if isinstance(item, list | tuple):
            return sum(every_string(v) for v in item)
        return 0

    assert strings_size(value, 1 << 20) == every_string(value)
    assert strings_size({"a": "x" * 40}, 16) > 16
