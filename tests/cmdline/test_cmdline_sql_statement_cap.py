"""The SQL reader's statement cap fails closed: statements past ``MAX_STATEMENTS`` are one
``too-deep`` entry (which the databases pack treats as destructive), never merged into the last
statement read, where a ``DROP`` after 256 harmless statements would pass as a ``SELECT``."""

from __future__ import annotations

from pathlib import Path

from dsh_policy.cmdline.sql import MAX_STATEMENTS, sql_statements
from dsh_policy.policy import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

RULES = Path(__file__).resolve().parents[2] / "rules"
HARMLESS = "".join(f"SELECT {n}; " for n in range(MAX_STATEMENTS))
HIDDEN = "DROP TABLE users"


def test_statements_past_the_cap_are_one_too_deep_entry_holding_their_text() -> None:
    statements = sql_statements(HARMLESS + HIDDEN)
    assert [s["kind"] for s in statements] == ["select"] * MAX_STATEMENTS + ["too-deep"]
    assert statements[MAX_STATEMENTS - 1]["text"] == f"SELECT {MAX_STATEMENTS - 1}"  # nothing merged into it
    assert statements[-1]["text"] == HIDDEN


def test_text_that_ends_at_the_cap_reads_as_before() -> None:
    for tail in ("", "  ", "-- the end\n", ";;"):
        statements = sql_statements(HARMLESS + tail)
        assert [s["kind"] for s in statements] == ["select"] * MAX_STATEMENTS


def test_empty_statements_do_not_use_up_the_cap() -> None:
    statements = sql_statements(";" * (2 * MAX_STATEMENTS) + HIDDEN)
    assert [s["kind"] for s in statements] == ["drop"]


def test_a_wrapped_body_past_the_cap_fails_closed_inside_its_wrapper() -> None:
    statements = sql_statements(f"DO $$ BEGIN {HARMLESS}{HIDDEN}; END $$")
    assert statements[-1]["kind"] == "too-deep" and statements[-1]["inside"] == "do"


def test_the_databases_pack_refuses_sql_hidden_past_the_cap() -> None:
    policy = Policy.load([RULES / "databases.yaml"])
    assert not isinstance(policy, LoadFailure), policy
    bare = policy.check_tool_call(ToolCallEvent(tool="run_sql", args={"query": HIDDEN}))
    hidden = policy.check_tool_call(ToolCallEvent(tool="run_sql", args={"query": HARMLESS + HIDDEN}))
    harmless = policy.check_tool_call(ToolCallEvent(tool="run_sql", args={"query": HARMLESS}))
    assert bare.decision != "allow" and harmless.decision == "allow", (bare, harmless)
    assert (hidden.decision, hidden.rules) == (bare.decision, bare.rules)  # as if it stood alone
