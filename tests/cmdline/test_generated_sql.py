# ruff: noqa: E501  (command lines read better unwrapped)
"""Statements a database client builds from a catalogue and pipes into another client (the "drop
every table" idiom), and switch clusters before a query option (``psql -Atc``, ``mysql -Ne``),
read as the statements they send. Spellings of our own, no corpus entry."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.shell import shell_commands, shell_sql


def kinds(line: str) -> set[str]:
    return {s["kind"] for s in shell_sql(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "psql -h pg.internal -d app -qAtc \"SELECT 'DROP TABLE ' || quote_ident(tablename) || ';' FROM pg_tables WHERE schemaname='public'\" | psql -h pg.internal -d app",
            "drop",
        ),
        (
            "mysql -h my.internal -Nse \"SELECT CONCAT('DROP DATABASE ', schema_name, ';') FROM information_schema.schemata\" | mysql -h my.internal",
            "drop",
        ),
        (
            "psql -d app -Atc \"SELECT 'TRUNCATE ' || relname || ' CASCADE;' FROM pg_stat_user_tables\" | psql -d app",
            "truncate",
        ),
    ],
)
def test_generated_statements_are_read(line: str, kind: str) -> None:
    assert any(k.startswith(kind) for k in kinds(line)), kinds(line)


def test_switch_clusters_before_the_query_option() -> None:
    assert any(k.startswith("drop") for k in kinds("psql -h pg.internal -Atc 'DROP TABLE audit_log'"))
    assert any(k.startswith("delete") for k in kinds("mysql -h my.internal -uapp -Ne 'DELETE FROM sessions'"))
    assert {s["host"] for s in shell_sql("mysql -hmy.internal -uroot -e 'SELECT 1'")} == {"my.internal"}


@pytest.mark.parametrize(
    "line",
    [
        "psql -d app -Atc \"SELECT tablename FROM pg_tables WHERE schemaname = 'public'\" | sort",
        "psql -d app -Atc \"SELECT 'rows: ' || count(*) FROM orders\"",
        "mysql -N -e \"SELECT table_name FROM information_schema.tables WHERE table_schema='app'\" | wc -l",
    ],
)
def test_reports_and_lists_are_not_statements(line: str) -> None:
    assert not any(k.startswith(("drop", "truncate", "delete")) for k in kinds(line)), kinds(line)
    assert shell_commands(line)
