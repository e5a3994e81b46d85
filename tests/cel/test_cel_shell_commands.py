"""shell.commands: every program a shell line runs, however the agent spells it."""

from __future__ import annotations

import pytest
from dsh_policy.policy.cel.shell import (
    MAX_INPUT_CHARS,
    MAX_NESTING,
    ShellLineTooComplexError,
    shell_argv0s,
    shell_commands,
)
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
    ],
)
def test_every_spelling_of_rm_root_yields_its_argv(line: str) -> None:
    assert RM_ROOT in shell_commands(line)


def test_wrappers_are_listed_with_their_own_options_then_the_wrapped_command() -> None:
    assert shell_commands("sudo -u root nohup rm -rf /") == [["sudo", "-u", "root"], ["nohup"], RM_ROOT]
    assert shell_commands("bash -c 'ls -l'") == [["bash", "-c"], ["ls", "-l"]]
    assert shell_argv0s("sudo -u root ls | grep x") == ["sudo", "ls", "grep"]


def test_substitution_commands_come_first_and_the_word_keeps_its_raw_text() -> None:
    assert shell_commands("echo $(whoami)") == [["whoami"], ["echo", "$(whoami)"]]


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


def test_comments_and_keywords_are_not_commands() -> None:
    assert shell_commands("ls # rm -rf /") == [["ls"]]
    assert shell_commands("echo a#b") == [["echo", "a#b"]]
    assert shell_commands("for f in *.py; do cat $f; done") == [["cat", "$f"]]


def test_find_exec_lists_the_command_it_runs() -> None:
    assert shell_commands("find / -name x -exec rm -f {} +") == [
        ["find", "/", "-name", "x", "-exec", "rm", "-f", "{}", "+"],
        ["rm", "-f", "{}"],
    ]


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


def test_self_doubling_variables_stop_substituting() -> None:
    line = "a=x; " + "".join("a=$a$a; " for _ in range(40)) + "echo $a"
    commands = shell_commands(line)
    assert commands[-1][0] == "echo"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>{}#,=\n\t-x~!")), max_size=80))
def test_never_raises_on_arbitrary_short_lines(line: str) -> None:
    commands = shell_commands(line)
    assert all(isinstance(argv, list) and all(isinstance(a, str) for a in argv) for argv in commands)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_unicode(line: str) -> None:
    shell_commands(line)
