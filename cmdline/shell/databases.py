"""Database clients' command lines (psql, mysql, sqlite3, mongosh, redis-cli, ...): which
server and database they talk to, the statements given on the line, and whether they read
statements from stdin (a here-document, a pipe).
"""

from __future__ import annotations

import shlex

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.budget import DatabaseClient
from dsh_policy.cmdline.shell.wrappers import longs

_DATABASE_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]] = {
    # client: (options holding statements, host options, database options, other options with a value)
    "psql": (longs("-c", "--command"), longs("-h", "--host"), longs("-d", "--dbname"),
             longs("-U", "--username", "-p", "--port", "-f", "--file", "-v", "--set", "--variable", "-o",
                    "--output", "-P", "--pset", "-F", "-R", "-T", "-L", "--log-file")),
    "mysql": (longs("-e", "--execute"), longs("-h", "--host"), longs("-D", "--database"),
              longs("-u", "--user", "-P", "--port", "-S", "--socket", "--defaults-file", "--login-path",
                     "--default-character-set")),
    "sqlite3": (longs("-cmd"), longs(), longs(), longs("-separator", "-nullvalue", "-init", "-newline")),
    "clickhouse-client": (longs("-q", "--query"), longs("-h", "--host"), longs("-d", "--database"),
                          longs("-u", "--user", "--port", "--password", "-f", "--format")),
    "cockroach": (longs("-e", "--execute"), longs("--host"), longs("-d", "--database"),
                  longs("-u", "--user", "--url", "--certs-dir", "--format")),
    "sqlcmd": (longs("-Q", "-q"), longs("-S"), longs("-d"), longs("-U", "-P", "-i", "-o")),
    "snowsql": (longs("-q", "--query"), longs("-a", "--accountname"), longs("-d", "--dbname"),
                longs("-u", "--username", "-r", "--rolename", "-w", "--warehouse", "-s", "--schemaname",
                       "-f")),
    "cqlsh": (longs("-e", "--execute"), longs(), longs("-k", "--keyspace"),
              longs("-u", "--username", "-p", "--password", "-f", "--file", "--cqlversion")),
    "mongosh": (longs("--eval"), longs("--host"), longs(),
                longs("-u", "--username", "-p", "--password", "--port", "--authenticationDatabase", "-f",
                       "--file")),
    "redis-cli": (longs(), longs("-h"), longs("-n"),
                  longs("-p", "-a", "--user", "--pass", "-s", "-u", "-r", "-i", "--tls", "--cacert",
                         "--cert",
                         "--key", "--pattern", "-d")),
}  # fmt: skip
_DATABASE_ALIASES = {
    "mariadb": "mysql", "mycli": "mysql", "pgcli": "psql", "usql": "psql", "sqlite": "sqlite3",
    "duckdb": "sqlite3", "litecli": "sqlite3", "mongo": "mongosh", "valkey-cli": "redis-cli",
    "keydb-cli": "redis-cli",
}  # fmt: skip
_DATABASE_URL = lazy_compile(r"^(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?"
    r"|redis|rediss|cockroachdb|clickhouse)://(?:[^@/]*@)?([^/:?,]*)[^/]*(?:/([^?]*))?")


def database_invocation(argv: list[str]) -> tuple[DatabaseClient, list[str], bool]:
    """Read a database client's argv: who it talks to, the statements it was given, and whether
    it reads statements from stdin (none given and no script file)."""
    program = argv[0]
    family = _DATABASE_ALIASES.get(program, program)
    dialect = "redis" if family == "redis-cli" else "mongo" if family == "mongosh" else "sql"
    statement_options, host_options, database_options, value_options = _DATABASE_OPTIONS[family]
    texts: list[str] = []
    host = database = ""
    operands: list[str] = []
    script_file = False
    i = 1
    if family == "cockroach" and argv[1:2] == ["sql"]:
        i = 2
    while i < len(argv):
        arg = argv[i]
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and family != "sqlite3":
            every = statement_options | host_options | database_options | value_options
            if arg[:2] not in every and arg[2].isalpha():
                # a cluster of switches (`psql -Atc SQL`, `mysql -Ne SQL`): the first letter takes
                # no value, so the next letters are switches too, the last one perhaps with a value
                cluster = arg[2:]
                while len(cluster) > 1 and f"-{cluster[0]}" not in every and cluster[1].isalpha():
                    cluster = cluster[1:]
                argv = [*argv[:i], f"-{cluster}", *argv[i + 1 :]]
                continue
            name, attached, eq = arg[:2], arg[2:], "attached"
        value_given = bool(eq) or name in statement_options | host_options | database_options | value_options
        value = attached if eq else (argv[i + 1] if i + 1 < len(argv) else "")
        if arg == "--":
            operands.extend(argv[i + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            i += 1
            if family == "redis-cli":  # the rest is the command
                operands.extend(argv[i:])
                break
            continue
        if name in statement_options:
            texts.append(value)
        elif name in host_options:
            host = value
        elif name in database_options:
            database = value
        elif name in ("-f", "--file", "-i", "-init") and family != "redis-cli":
            script_file = True
        elif name == "--url":
            url = _DATABASE_URL.match(value)
            if url is not None:
                host, database = url.group(1), url.group(2) or database
        i += 2 if value_given and not eq else 1
    for operand in list(operands):
        url = _DATABASE_URL.match(operand)
        if url is not None:
            host, database = host or url.group(1), database or url.group(2) or ""
            operands.remove(operand)
    if family == "redis-cli":
        client = DatabaseClient(program, dialect, host, database)
        if operands:
            texts.append(" ".join(shlex.quote(o) for o in operands))
        return client, texts, not operands and not script_file
    if family == "sqlite3":
        database = operands[0] if operands else ""
        texts.extend(operands[1:])
    elif family in ("psql", "mysql") and operands and not database:
        database = operands[0] if family == "psql" else operands[-1]
    elif family == "mongosh" and operands:
        database = database or operands[0]
    client = DatabaseClient(program, dialect, host, database)
    return client, texts, not texts and not script_file


def is_sql_client(program: str) -> bool:
    """Whether ``program`` (a base name) is one of the SQL clients read here."""
    family = _DATABASE_ALIASES.get(program, program)
    return family in _DATABASE_OPTIONS and family not in ("mongosh", "redis-cli")
