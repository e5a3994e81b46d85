"""SQL inside wrappers (issue 24): a statement inside EXPLAIN ANALYZE, a DO block, a function
body, a prepared or dynamically executed statement, or a data-modifying CTE is reported after its
wrapper, like a bare one; plain EXPLAIN, which runs nothing, is not unwrapped."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.sql import MAX_ENTRIES, sql_statements


def _inner(text: str) -> list[tuple[str, str, str, str]]:
    return [(s["kind"], s["name"], s["where"], s["inside"]) for s in sql_statements(text) if "inside" in s]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EXPLAIN ANALYZE DELETE FROM users", ("delete", "users", "false", "explain analyze")),
        (
            "explain analyse verbose update accounts set balance = 0",
            ("update", "accounts", "false", "explain analyze"),
        ),
        ("EXPLAIN (ANALYZE, BUFFERS) DELETE FROM users", ("delete", "users", "false", "explain analyze")),
        ("DO $$ BEGIN DELETE FROM users; END $$", ("delete", "users", "false", "do")),
        ("DO $body$ BEGIN DROP TABLE users; END $body$ LANGUAGE plpgsql", ("drop", "users", "", "do")),
        ("DO LANGUAGE plpgsql $$ DECLARE n int; BEGIN IF true THEN TRUNCATE users; END IF; END $$",
         ("truncate", "users", "", "do")),
        ("DO $$ BEGIN FOR r IN SELECT 1 LOOP DELETE FROM logs; END LOOP; END $$",
         ("delete", "logs", "false", "do")),
        ("DO $$ BEGIN EXECUTE 'DELETE FROM users'; END $$", ("delete", "users", "false", "do")),
        ("PREPARE p AS DELETE FROM users", ("delete", "users", "false", "prepare")),
        ("PREPARE p (int) AS UPDATE users SET admin = true", ("update", "users", "false", "prepare")),
        ("PREPARE s FROM 'DELETE FROM users'", ("delete", "users", "false", "prepare")),
        ("EXECUTE IMMEDIATE 'DROP TABLE users'", ("drop", "users", "", "execute")),
        ("EXEC sp_executesql N'DELETE FROM users'", ("delete", "users", "false", "execute")),
        ("WITH d AS (DELETE FROM users RETURNING *) SELECT count(*) FROM d",
         ("delete", "users", "false", "with")),
        ("WITH a AS (SELECT 1), d AS MATERIALIZED (UPDATE users SET x = 1 RETURNING id) SELECT * FROM d",
         ("update", "users", "false", "with")),
        ("CREATE FUNCTION f() RETURNS void AS $$ BEGIN DELETE FROM users; END $$ LANGUAGE plpgsql",
         ("delete", "users", "false", "function")),
        ("CREATE OR REPLACE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM users'",
         ("delete", "users", "false", "function")),
        ("CREATE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC DELETE FROM users; END",
         ("delete", "users", "false", "function")),
    ],
)
def test_wrapped_statements_are_reported(text: str, expected: tuple[str, str, str, str]) -> None:
    assert expected in _inner(text)


def test_the_multi_statement_prepare_execute_is_read() -> None:
    statements = sql_statements("PREPARE p AS DELETE FROM users; EXECUTE p")
    kinds = [(s["kind"], s.get("inside", "")) for s in statements]
    assert kinds == [("prepare", ""), ("delete", "prepare"), ("execute", "")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EXPLAIN ANALYZE DELETE FROM users WHERE id = 4", ("delete", "users", "true", "explain analyze")),
        ("DO $$ BEGIN DELETE FROM sessions WHERE expires < now(); END $$",
         ("delete", "sessions", "true", "do")),
        ("WITH d AS (DELETE FROM jobs WHERE done RETURNING id) SELECT count(*) FROM d",
         ("delete", "jobs", "true", "with")),
    ],
)
def test_bounded_wrapped_statements_stay_bounded(text: str, expected: tuple[str, str, str, str]) -> None:
    assert expected in _inner(text)


@pytest.mark.parametrize(
    "text",
    [
        "EXPLAIN DELETE FROM users",  # only plans
        "EXPLAIN (ANALYZE false) DELETE FROM users",
        "EXPLAIN QUERY PLAN SELECT * FROM users",
        "WITH t AS (SELECT * FROM users) SELECT * FROM t",
        "SELECT 'DO $$ BEGIN DELETE FROM users; END $$'",
        "CREATE FUNCTION add(a int, b int) RETURNS int AS $$ SELECT a + b $$ LANGUAGE sql",
    ],
)
def test_look_alikes_wrap_nothing_destructive(text: str) -> None:
    assert all(s["kind"] not in ("delete", "update", "drop", "truncate") for s in sql_statements(text))


def test_nesting_and_size_are_bounded() -> None:
    text = "DELETE FROM users"
    for _ in range(10):
        text = "EXPLAIN ANALYZE " + text
    kinds = [s["kind"] for s in sql_statements(text)]
    assert "too-deep" in kinds and "delete" not in kinds  # deeper than MAX_INNER_DEPTH: fails closed
    many = "; ".join(["DO $$ BEGIN " + "DELETE FROM t WHERE id = 1; " * 300 + "END $$"] * 6)
    statements = sql_statements(many)
    assert len(statements) <= MAX_ENTRIES + 1 and statements[-1]["kind"] == "too-deep"
