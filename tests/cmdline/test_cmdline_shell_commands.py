"""shell.commands: every program a shell line runs, however the agent spells it."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_policy.cmdline.shell import (
    MAX_INPUT_CHARS,
    MAX_NESTING,
    ShellLineTooComplexError,
    shell_argv0s,
    shell_commands,
    shell_redirects,
)
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelEvalError
from hypothesis import given, settings
from hypothesis import strategies as st

RM_ROOT = ["rm", "-rf", "/"]


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf /",
        "ls; rm -rf /",
        "true && rm -rf /",
        "false || rm -rf /",
        "cat x | rm -rf /",
        "cat x |& rm -rf /",
        "sleep 1 & rm -rf /",
        "ls\nrm -rf /",
        "echo $(rm -rf /)",
        "echo `rm -rf /`",
        'echo "$(rm -rf /)"',
        "diff <(rm -rf /) x",
        "tee >(rm -rf /)",
        "( rm -rf / )",
        "{ rm -rf /; }",
        "if true; then rm -rf /; fi",
        "while true; do rm -rf /; done",
        "! rm -rf /",
        "sudo rm -rf /",
        "sudo -u root -E rm -rf /",
        "sudo --user=root rm -rf /",
        "sudo -- rm -rf /",
        "doas rm -rf /",
        "env X=1 rm -rf /",
        "env -i -u HOME X=1 rm -rf /",
        "X=1 Y=2 rm -rf /",
        "nohup rm -rf /",
        "time rm -rf /",
        "nice -n 10 rm -rf /",
        "nice -10 rm -rf /",
        "timeout 10 rm -rf /",
        "timeout -s KILL 10 rm -rf /",
        "exec rm -rf /",
        "command rm -rf /",
        "builtin rm -rf /",
        "stdbuf -o0 rm -rf /",
        "ionice -c 3 rm -rf /",
        "setsid rm -rf /",
        "busybox rm -rf /",
        "xargs rm -rf /",
        "xargs -0 -n 1 rm -rf /",
        "bash -c 'rm -rf /'",
        "sh -c 'rm -rf /'",
        "zsh -c 'rm -rf /'",
        "dash -c 'rm -rf /'",
        "bash -lc 'rm -rf /'",
        "bash -e -o pipefail -c 'rm -rf /'",
        '/bin/bash -c "sudo /bin/rm -rf /"',
        "su -c 'rm -rf /' root",
        "eval 'rm -rf /'",
        "env -S 'rm -rf /'",
        "find . -exec rm -rf / \\;",
        "find . -exec sudo rm -rf / \\;",
        "find . -exec sh -c 'rm -rf /' \\;",
        "find . -maxdepth 0 -execdir watch rm -rf / +",
        "/bin/rm -rf /",
        "/usr/bin/rm -rf /",
        "\\rm -rf /",
        "r''m -rf /",
        'r""m -rf /',
        "'rm' -rf /",
        "$'\\x72\\x6d' -rf /",
        "$'\\162\\155' -rf /",
        "$'\\u0072m' -rf /",
        "{rm,-rf,/}",
        "rm${IFS}-rf${IFS}/",
        "rm$IFS-rf$IFS/",
        "a=rm; $a -rf /",
        'a=rm; "$a" -rf /',
        "a=r b=m; $a$b -rf /",
        "rm -rf / > /dev/null 2>&1",
        "rm -rf / 2>/dev/null",
        ">/dev/null rm -rf /",
        "rm \\\n -rf /",
        "echo ${x:-$(rm -rf /)}",
        "echo $(( $(rm -rf /) + 1 ))",
        "cat <<EOF\n$(rm -rf /)\nEOF",
        "echo $(echo $(rm -rf /))",
        "sudo sh -c 'bash -c \"rm -rf /\"'",
        "bash <<< 'rm -rf /'",
        "sudo bash -s <<EOF\nrm -rf /\nEOF",
        "sh <<'EOF' | cat\nrm -rf /\nEOF",
        "echo 'rm -rf /' | sh",
        "printf 'rm -rf /\\n' | bash",
        "echo rm -rf / | sh",
        "su root -c 'rm -rf /'",
        "su -l root --command='rm -rf /'",
        "runuser -u root -- rm -rf /",
        "watch rm -rf /",
        "watch -n1 rm -rf /",
        "watch -n 1 -d 'rm -rf /'",
        "watch -x rm -rf /",
        "parallel rm -rf ::: /",
        "parallel -j4 rm -rf {} ::: / /tmp",
        "parallel ::: 'rm -rf /'",
        "echo 'rm -rf /' | parallel",
        "sem rm -rf /",
        "flock /tmp/l rm -rf /",
        "flock -w 5 /tmp/l -c 'rm -rf /'",
        "strace -f -o /tmp/t rm -rf /",
        "strace -e trace=file rm -rf /",
        "ltrace -o /tmp/t rm -rf /",
        "unbuffer rm -rf /",
        "unbuffer -p rm -rf /",
        "script -c 'rm -rf /' /dev/null",
        "script -q /dev/null -c 'rm -rf /'",
        "script --command='rm -rf /'",
        "echo 'rm -rf /' | script -q",
        "fakeroot rm -rf /",
        "fakeroot -- rm -rf /",
        "echo 'rm -rf /' | fakeroot",
        "systemd-run rm -rf /",
        "systemd-run --user --unit x -p MemoryMax=1G rm -rf /",
        "tmux new -d 'rm -rf /'",
        "tmux new-session -d -s x 'rm -rf /'",
        "tmux -L sock new-window -n w rm -rf /",
        "tmux send-keys -t x 'rm -rf /' Enter",
        "tmux new -d \\; send-keys 'rm -rf /' C-m",
        "tmux run-shell 'rm -rf /'",
        "tmux if-shell true 'run-shell \"rm -rf /\"'",
        "tmux -c 'rm -rf /'",
        "screen -dm rm -rf /",
        "screen -dmS job rm -rf /",
        "screen -S job -X stuff 'rm -rf /^M'",
        "screen -S job -X exec rm -rf /",
        "at now <<< 'rm -rf /'",
        "echo 'rm -rf /' | at now + 1 minute",
        "at -q b now <<EOF\nrm -rf /\nEOF",
        "batch <<< 'rm -rf /'",
        "sg wheel -c 'rm -rf /'",
        "sg wheel 'rm -rf /'",
        "echo 'rm -rf /' | sg wheel",
        "echo 'rm -rf /' | newgrp docker",
        "firejail rm -rf /",
        "firejail --noprofile --net=none rm -rf /",
        "proot rm -rf /",
        "proot -r /tmp/root -b /dev rm -rf /",
        "chrt 10 rm -rf /",
        "chrt -f 10 rm -rf /",
        "chrt --rr 5 rm -rf /",
        "unshare -r rm -rf /",
        "echo 'rm -rf /' | unshare -r",
        "nsenter -t 1 -m -- rm -rf /",
        "pkexec rm -rf /",
        "echo 'rm -rf /' | sudo -s",
        "sudo -i <<< 'rm -rf /'",
        "echo 'rm -rf /' | chroot /",
        "entr -s 'rm -rf /'",
        "hyperfine 'rm -rf /'",
        "hyperfine --prepare 'rm -rf /' true",
        "xvfb-run -a rm -rf /",
        "eatmydata rm -rf /",
        "torsocks rm -rf /",
        "uv run rm -rf /",
        "uv run --with x -- rm -rf /",
        "poetry run rm -rf /",
        "npm exec -- rm -rf /",
        "npx -c 'rm -rf /'",
        "pnpm exec rm -rf /",
        "pnpm dlx --shell-mode 'rm -rf /'",
        "yarn exec rm -rf /",
        "bundle exec rm -rf /",
        "conda run -n base rm -rf /",
    ],
)
def test_every_spelling_of_rm_root_yields_its_argv(line: str) -> None:
    assert RM_ROOT in shell_commands(line)


def test_wrappers_are_listed_with_their_own_options_then_the_wrapped_command() -> None:
    assert shell_commands("sudo -u root nohup rm -rf /") == [["sudo", "-u", "root"], ["nohup"], RM_ROOT]
    assert shell_commands("watch -n1 git status") == [["watch", "-n1"], ["git", "status"]]
    assert shell_commands("timeout 60 pytest") == [["timeout", "60"], ["pytest"]]
    assert shell_commands("flock -n /tmp/l make") == [["flock", "-n", "/tmp/l"], ["make"]]
    assert shell_commands("script -q -c 'make test' /dev/null") == [
        ["script", "-q", "-c", "/dev/null"],
        ["make", "test"],
    ]
    assert shell_commands("tmux -L s new -d -s job 'npm run dev'") == [
        ["tmux", "-L", "s", "new", "-d", "-s", "job"],
        ["npm", "run", "dev"],
    ]
    assert shell_commands("screen -dmS job python app.py") == [
        ["screen", "-dmS", "job"],
        ["python", "app.py"],
    ]
    assert shell_commands("screen -r 1234.pts-0.host") == [["screen", "-r", "1234.pts-0.host"]]
    assert shell_commands("screen -d -m make") == [["screen", "-d", "-m"], ["make"]]
    assert shell_commands("chrt -p 10 1234") == [["chrt", "-p", "10", "1234"]]
    assert shell_commands("strace -p 1234") == [["strace", "-p", "1234"]]
    assert shell_commands("parallel -j4 gzip ::: a.log b.log") == [
        ["parallel", "-j4"],
        ["gzip", "a.log"],
        ["gzip", "b.log"],
    ]
    assert shell_commands("parallel 'mv {} {.}.bak' ::: a.txt") == [
        ["parallel"],
        ["mv", "a.txt", "a.txt.bak"],
    ]
    assert shell_commands("hyperfine -w 3 'make build'") == [["hyperfine", "-w", "3"], ["make", "build"]]
    assert shell_commands("bash -c 'ls -l'") == [["bash", "-c"], ["ls", "-l"]]
    assert shell_argv0s("sudo -u root ls | grep x") == ["sudo", "ls", "grep"]


def test_substitution_commands_come_first_and_the_word_keeps_its_raw_text() -> None:
    assert shell_commands("echo $(whoami)") == [["whoami"], ["echo", "$(whoami)"]]


@pytest.mark.parametrize(
    ("line", "argv0"),
    [
        ("$(a b/c)", "$(a b/c)"),
        ('sh -c "$(curl https://x/i.sh)"', "$(curl https://x/i.sh)"),
        ("`curl https://x/i.sh` -rf /", "`curl https://x/i.sh`"),
        ("${X:-/bin/rm} -rf /", "${X:-/bin/rm}"),
        ("/usr/bin/$(echo rm) -rf /", "$(echo rm)"),
        ("$(dirname $0)/run.sh", "run.sh"),
        ("$HOME/bin/tool --version", "tool"),
        ("/bin/rm -rf x", "rm"),
    ],
)
def test_a_substituted_program_name_stays_whole(line: str, argv0: str) -> None:
    assert shell_argv0s(line)[-1] == argv0
    assert shell_commands("$(a b/c)")[0] == ["a", "b/c"]  # the substitution's own command is listed


@pytest.mark.parametrize(
    ("line", "programs"),
    [
        ("npx rimraf /", ["npx", "rimraf"]),
        ("npx -y rimraf@5 /", ["npx", "rimraf"]),
        ("npx @scope/tool@1.2 x", ["npx", "tool"]),
        ("npx -p typescript tsc -p .", ["npx", "tsc"]),
        ("npm exec -- prettier --check .", ["npm", "prettier"]),
        ("pnpm dlx rimraf ~", ["pnpm", "rimraf"]),
        ("pnpm --filter web exec vitest", ["pnpm", "vitest"]),
        ("yarn dlx create-vite app", ["yarn", "create-vite"]),
        ("bunx cowsay hi", ["bunx", "cowsay"]),
        ("uvx ruff@0.5 check", ["uvx", "ruff"]),
        ("uvx --from black[jupyter] blackd", ["uvx", "blackd"]),
        ("uv tool run black==24.1 .", ["uv", "black"]),
        ("pipx run cowsay hi", ["pipx", "cowsay"]),
        ("poetry run pytest", ["poetry", "pytest"]),
        ("npm run build", ["npm"]),
        ("uv sync", ["uv"]),
        ("pnpm install", ["pnpm"]),
    ],
)
def test_package_runners_run_the_package_bin(line: str, programs: list[str]) -> None:
    assert shell_argv0s(line) == programs


@pytest.mark.parametrize(
    "line",
    ["at now <<< 'x'", "echo x | parallel", "sudo -s", "sudo su -", "su", "fakeroot", "sg wheel", "script"],
)
def test_wrappers_that_read_a_script_from_stdin_list_a_bare_shell(line: str) -> None:
    assert ["sh"] in shell_commands(line)


def test_information_requests_do_not_count_as_a_shell() -> None:
    assert ["sh"] not in shell_commands("fakeroot --version")
    assert ["sh"] not in shell_commands("at -l")
    assert shell_commands("at -f job.sh now") == [["at", "-f", "job.sh", "now"], ["sh", "job.sh"]]


def test_stdin_is_a_script_only_for_a_shell_without_a_script_argument() -> None:
    assert shell_commands("cat <<< 'rm -rf /'") == [["cat"]]
    assert shell_commands("echo 'rm -rf /' | bash script.sh") == [["echo", "rm -rf /"], ["bash", "script.sh"]]
    assert shell_commands("echo 'rm -rf /' | grep rm") == [["echo", "rm -rf /"], ["grep", "rm"]]


def test_quoted_operators_and_quoted_here_documents_are_data() -> None:
    assert shell_commands('git commit -m "fix; rm -rf /"') == [["git", "commit", "-m", "fix; rm -rf /"]]
    assert shell_commands("echo 'a && rm -rf /'") == [["echo", "a && rm -rf /"]]
    assert shell_commands("cat <<'EOF'\n$(rm -rf /)\nEOF\nls") == [["cat"], ["ls"]]
    assert shell_commands("cat <<EOF\nrm -rf /\nEOF") == [["cat"]]
    assert shell_commands("echo \\$\\(rm -rf /\\)") == [["echo", "$(rm", "-rf", "/)"]]


def test_redirections_and_assignments_leave_argv() -> None:
    assert shell_commands("FOO=1 ls -l > out.txt 2>&1 < in") == [["ls", "-l"]]
    assert shell_commands("echo hi >>log &>/dev/null") == [["echo", "hi"]]
    assert shell_commands("X=1") == []


def test_an_assignment_after_a_reserved_word_is_an_assignment_not_a_program() -> None:
    """`then x=$(...)` and `do f="/d/$v"` assign (seen in real agent runs), and the value is
    known to the commands after it as it would be outside the compound command; a word after an
    assignment is never a reserved word, so it stays the program."""
    line = 'if [ -f "$f" ]; then size=$(stat -c %s "$f"); echo "$size"; fi'
    expected = [["[", "-f", "$f", "]"], ["stat", "-c", "%s", "$f"], ["echo", '$(stat -c %s "$f")']]
    assert shell_commands(line) == expected
    assert shell_commands('size=$(stat -c %s "$f"); echo "$size"') == expected[1:]
    loop = shell_commands('for d in a b; do f="/w/m-$d/ic.png"; ls "$f"; done')
    assert loop == [["ls", "/w/m-a/ic.png"], ["ls", "/w/m-b/ic.png"]]  # the loop's values, in turn
    assert shell_commands("then x=1 rm -rf /") == [["rm", "-rf", "/"]]
    assert shell_commands("X=1 then") == [["then"]]


def test_bsd_script_runs_the_command_after_its_file() -> None:
    """macOS ``script [-q] FILE CMD ARGS...`` runs CMD (fed by stdin), not a shell reading stdin;
    without a command it still does."""
    assert shell_commands("script -q /dev/null npm run db:push <<'EOF'\ny\nEOF") == [
        ["script", "-q", "/dev/null"],
        ["npm", "run", "db:push"],
    ]
    assert shell_commands("script -q /dev/null rm -rf /") == [
        ["script", "-q", "/dev/null"],
        ["rm", "-rf", "/"],
    ]
    assert ["sh"] in shell_commands("echo 'rm -rf /' | script -q /dev/null")
    # a plain literal piped in is the script exactly: listed like `sh -c` (and its commands read)
    assert ["sh", "-c"] in shell_commands("echo 'rm -rf /' | script -q /dev/null sh")
    assert ["sh"] in shell_commands('echo "$STEP" | script -q /dev/null sh')


def test_a_plain_literal_piped_into_a_shell_is_its_script_exactly() -> None:
    """``echo 'npm test' | bash`` runs exactly ``npm test``: listed like ``bash -c``. Text with an
    expansion, an escape or a format left (``echo -e``, ``$VAR``, ``%s``) is only approximated,
    so the shell stays one reading stdin."""
    assert shell_commands("echo 'npm test' | bash") == [["echo", "npm test"], ["bash", "-c"], ["npm", "test"]]
    assert shell_commands("echo -n 'make' | sh")[1] == ["sh", "-c"]
    for line in ("echo -e 'ls\\tx' | sh", 'echo "$STEP" | sh', "printf '%s' ls | sh", "echo 'ls\\n' | sh"):
        assert ["sh"] in shell_commands(line), line


@pytest.mark.parametrize(
    ("line", "redirects"),
    [
        ("echo x > out.txt", [(">", "out.txt")]),
        ('echo x > /e""tc/passwd', [(">", "/etc/passwd")]),
        ("echo x > '/etc'/passwd", [(">", "/etc/passwd")]),
        ("echo x >> $'\\x2fetc/passwd'", [(">>", "/etc/passwd")]),
        ("echo x >${IFS}/etc/passwd", [(">", "/etc/passwd")]),
        ("f=/etc/passwd; echo x > $f", [(">", "/etc/passwd")]),
        ("echo x > $f", [(">", "$f")]),
        ("ls > $(mktemp)", [(">", "$(mktemp)")]),
        ("bash -c 'echo x >| ~/.bashrc'", [(">|", "~/.bashrc")]),
        ("echo $(cat < /etc/shadow)", [("<", "/etc/shadow")]),
        ("echo 'rm -rf /' | sh\n", []),
        ("make &> build.log", [("&>", "build.log")]),
        ("cat <<'EOF' >> notes\nx > y\nEOF", [("<<", "EOF"), (">>", "notes")]),
        ("bash <<< 'echo x > /etc/hosts'", [("<<<", "echo x > /etc/hosts"), (">", "/etc/hosts")]),
        ("echo 'a > b'", []),
        ("tee >(cat) < in", [("<", "in")]),
        ("diff a b > >(cat)", [(">", ">(cat)")]),
    ],
)
def test_redirects_name_the_target_as_the_shell_opens_it(line: str, redirects: list[tuple[str, str]]) -> None:
    assert [(r["op"], r["target"]) for r in shell_redirects(line)] == redirects


def test_redirects_keep_an_explicit_file_descriptor() -> None:
    assert shell_redirects("cmd 2>/dev/null 1>&2 <in") == [
        {"fd": "2", "op": ">", "target": "/dev/null"},
        {"fd": "1", "op": ">&", "target": "2"},
        {"fd": "", "op": "<", "target": "in"},
    ]


ENGINES = sorted(set(available_engines()) & {"python", "native"})


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("source", "line", "expected"),
    [
        ("shell.redirects(c)", "ls > out 2>&1", [
            {"fd": "", "op": ">", "target": "out"}, {"fd": "2", "op": ">&", "target": "1"}]),
        ('shell.redirects(c).exists(r, r.op in [">", ">>"] && r.target.startsWith("/etc/"))',
         'echo x > /e""tc/passwd', True),
        ('shell.redirects(c).map(r, r.target)', "a < x; b >> y", ["x", "y"]),
        ('size(shell.redirects(c)) == 0', "echo '> /etc/passwd'", True),
        ('shell.argv0s(c)', "watch -n1 npx rimraf /", ["watch", "npx", "rimraf"]),
    ],
)  # fmt: skip
def test_both_engines_see_the_same_redirects(engine: str, source: str, line: str, expected: Any) -> None:
    compiled = make_engine(engine).compile(source)
    assert not isinstance(compiled, list), compiled
    assert compiled.evaluate({"c": line}) == expected


@pytest.mark.skipif("native" not in ENGINES, reason="needs the native engine")
@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab/.~$()'\"|;& -<>&2{},\n")), max_size=30))
def test_engines_agree_on_redirects(line: str) -> None:
    source = "shell.redirects(c).map(r, r.fd + r.op + ' ' + r.target)"
    python, native = (make_engine(name).compile(source) for name in ("python", "native"))
    assert not isinstance(python, list) and not isinstance(native, list)
    assert python.evaluate({"c": line}) == native.evaluate({"c": line})


@pytest.mark.parametrize("engine", ENGINES)
def test_redirects_beyond_the_limits_are_evaluation_errors(engine: str) -> None:
    compiled = make_engine(engine).compile("shell.redirects(c)")
    assert not isinstance(compiled, list), compiled
    assert isinstance(compiled.evaluate({"c": "a" * (MAX_INPUT_CHARS + 1)}), CelEvalError)
    assert isinstance(compiled.evaluate({"c": 1}), CelEvalError)


def test_comments_and_keywords_are_not_commands() -> None:
    assert shell_commands("ls # rm -rf /") == [["ls"]]
    assert shell_commands("echo a#b") == [["echo", "a#b"]]
    assert shell_commands("for f in *.py; do cat $f; done") == [["cat", "*.py"]]  # the loop's words


def test_find_exec_lists_the_command_it_runs() -> None:
    assert shell_commands("find / -name x -exec rm -f {} +") == [
        ["find", "/", "-name", "x", "-exec", "rm", "-f", "{}", "+"],
        ["rm", "-f", "/{}"],  # {} is a path under the starting point
    ]
    assert shell_commands("find . -name x -exec rm -f {} +")[1] == ["rm", "-f", "{}"]


def test_unbalanced_quotes_are_split_best_effort() -> None:
    assert shell_commands('echo "abc') == [["echo", "abc"]]
    assert shell_commands("echo 'abc") == [["echo", "abc"]]
    assert shell_commands("echo $(ls") == [["ls"], ["echo", "$(ls"]]


def test_brace_expansion_is_bounded() -> None:
    line = "echo " + "{a,b}" * 20  # 2**20 words if expanded
    assert shell_commands(line) == [["echo", "{a,b}" * 20]]


def test_limits_fail_closed_with_a_clear_error() -> None:
    with pytest.raises(ShellLineTooComplexError, match="longer than"):
        shell_commands("a" * (MAX_INPUT_CHARS + 1))
    with pytest.raises(ShellLineTooComplexError, match="nests deeper"):
        shell_commands("$(" * (MAX_NESTING + 2) + "rm -rf /" + ")" * (MAX_NESTING + 2))
    with pytest.raises(TypeError):
        shell_commands(1)
    jobs = " ::: " + "abcdefgh " * 40
    nested = "parallel 'parallel \"parallel x" + jobs + '"' + jobs + "'" + jobs  # 40**3 jobs
    with pytest.raises(ShellLineTooComplexError, match=r"unwraps into more than|more than 20000 words"):
        shell_commands(nested)


@pytest.mark.parametrize(
    ("line", "reason"),
    [("true;" * 40_000, "more than 10000 commands"), ("a|" * 100_000, "more than 10000 commands"),
     ("{ " * 60_000, "more than 20000 words")],
)
def test_pathological_lines_under_the_size_cap_stop_early(line: str, reason: str) -> None:
    """Lines under 256 KiB that once took 4.6-7 s per decision now stop with an error (the rule
    fails closed) after a bounded amount of work."""
    with pytest.raises(ShellLineTooComplexError, match=reason):
        shell_commands(line)


@pytest.mark.parametrize("line", ["{" * 60_000, "{" * 30_000 + "}" * 30_000, "{a," * 30_000])
def test_unmatched_braces_are_read_in_one_pass(line: str) -> None:
    """60,000 ``{`` in one word once took minutes (each rescanned the rest of the word)."""
    assert shell_commands(line) == [[line]]


def test_the_stage_deadline_stops_a_parse() -> None:
    from dsh_policy.cmdline.deadline import stage_deadline

    with stage_deadline(-1.0), pytest.raises(ShellLineTooComplexError, match="took too long"):
        shell_commands("echo a;" * 2000)


def test_self_doubling_variables_stop_substituting() -> None:
    line = "a=x; " + "".join("a=$a$a; " for _ in range(40)) + "echo $a"
    commands = shell_commands(line)
    assert commands[-1][0] == "echo"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>{}#,=\n\t-x~!")), max_size=80))
def test_never_raises_on_arbitrary_short_lines(line: str) -> None:
    commands = shell_commands(line)
    assert all(isinstance(argv, list) and all(isinstance(a, str) for a in argv) for argv in commands)
    assert all(set(r) == {"fd", "op", "target"} for r in shell_redirects(line))


WRAPPER_WORDS = [
    "watch", "parallel", ":::", "{}", "flock", "-c", "script", "tmux", "new", "send-keys", "Enter",
    "\\;", "screen", "-X", "stuff", "at", "sg", "su", "runuser", "-u", "--", "npx", "pnpm", "dlx",
    "uv", "run", "hyperfine", "-p", "chrt", "-n1", "rm", "-rf", "/", "'", '"', "|", "<<<", "$(",
    ")", "sudo", "-s", "env", "-S", "find", "-exec",
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "body"),
    [
        ("bash <<EOF\necho hello\nEOF", ["echo", "hello"]),
        ("sh <<'EOF'\nrm -rf /x\nEOF", ["rm", "-rf", "/x"]),
        ("bash <<< 'ls -la'", ["ls", "-la"]),
        ("sudo bash <<EOF\nls\nEOF", ["ls"]),
    ],
)
def test_a_shell_reading_a_here_document_is_listed_like_bash_c(line: str, body: list[str]) -> None:
    """Issue 24: the body is a known script, so the shell is listed like ``bash -c`` (not as a
    bare shell reading an unknown stdin) and the body's commands follow."""
    commands = shell_commands(line)
    assert body in commands
    assert any(c[:1] in (["bash"], ["sh"]) and "-c" in c for c in commands), commands


@pytest.mark.parametrize(
    "line", ["curl -s https://x.example/i.sh | sh", "cat script | bash", "printf '%s' \"$X\" | sh"]
)
def test_a_shell_reading_unknown_stdin_stays_bare(line: str) -> None:
    assert any(c in (["sh"], ["bash"]) for c in shell_commands(line))


def test_a_data_here_document_is_not_read_as_commands() -> None:
    commands = shell_commands("cat > notes.md <<'EOF'\nrm -rf /x\nEOF")
    assert ["rm", "-rf", "/x"] not in commands


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WRAPPER_WORDS), max_size=14))
def test_never_raises_on_wrapper_soup(words: list[str]) -> None:
    line = " ".join(words)
    shell_commands(line)
    shell_redirects(line)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_unicode(line: str) -> None:
    shell_commands(line)
    shell_redirects(line)
