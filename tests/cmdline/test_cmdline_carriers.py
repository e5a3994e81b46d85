"""A command means the same inside a carrier as on its own: ``bash -c``/``sh -c``/``eval`` strings,
``{ ...; }`` groups and ``if``/``while`` bodies. The word-searching readers (package runners,
exported switches) read every shell text the line carries (``shell.scripts``), and a reserved word
in a command's first place opens no command, so assignments and pipes behind it are read as such."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.acts import shell_acts
from dsh_policy.cmdline.shell import shell_commands, shell_scripts


def _kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


def test_scripts_are_the_line_and_every_shell_text_it_carries() -> None:
    line = "bash -c 'cd /srv && make' && echo \"$(git rev-parse HEAD)\""
    assert shell_scripts(line) == [line, "cd /srv && make", "git rev-parse HEAD"]
    assert shell_scripts("ls -la") == ["ls -la"]


@pytest.mark.parametrize(
    ("plain", "kind"),
    [
        ("YARN_ENABLE_STRICT_SSL=false yarn install", "tls-off"),
        ("UV_INDEX_URL=http://192.0.2.7/simple uv pip install requests", "registry"),
        ("npx event-stream@3.3.6", "malicious-package"),
    ],
)
@pytest.mark.parametrize(
    "carrier",
    [
        "bash -c {q}",
        "sh -lc {q}",
        "eval {q}",
        "sudo -u builder sh -c {q}",
        "docker run --rm node:22 sh -c {q}",
    ],
)
def test_a_word_read_effect_survives_every_carrier(plain: str, kind: str, carrier: str) -> None:
    assert kind in _kinds(plain)
    quoted = "'" + plain + "'"
    assert kind in _kinds(carrier.format(q=quoted))


def test_an_effect_found_in_the_line_and_its_carried_text_is_reported_once() -> None:
    effects = shell_acts("bash -c 'GIT_SSL_NO_VERIFY=1 git fetch'")
    assert [e["kind"] for e in effects].count("tls-off") == 1


@pytest.mark.parametrize(
    "line",
    [
        "{ d=/var/lib; rm -rf $d; }",
        "if true; then d=/var/lib; rm -rf $d; fi",
        "while true; do d=/var/lib; rm -rf $d; break; done",
    ],
)
def test_an_assignment_inside_a_compound_command_reaches_the_commands_after_it(line: str) -> None:
    assert ["rm", "-rf", "/var/lib"] in shell_commands(line)


@pytest.mark.parametrize(
    "line",
    [
        "{ echo 'os.system(\"id\")' | python3; }",
        "if true; then printf 'import os\\nos.system(\"id\")' | python3; fi",
    ],
)
def test_text_piped_into_an_interpreter_inside_a_group_is_read_as_its_code(line: str) -> None:
    assert ["id"] in shell_commands(line)


def test_reserved_words_after_a_program_are_its_arguments() -> None:
    assert shell_commands("echo if then fi") == [["echo", "if", "then", "fi"]]
    assert shell_commands("x=1 echo {") == [["echo", "{"]]


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("ln /opt/tool/bin/x /usr/local/bin/git -sf", ["ln", "-sf", "/opt/tool/bin/x", "/usr/local/bin/git"]),
        ("install ./x /usr/local/bin/x -m 0755", ["install", "-m", "0755", "./x", "/usr/local/bin/x"]),
        ("rm node_modules -rf", ["rm", "-rf", "node_modules"]),
        ("mv a.txt -t archive b.txt", ["mv", "-t", "archive", "a.txt", "b.txt"]),
    ],
)
def test_options_after_operands_are_read_as_gnu_getopt_reads_them(line: str, argv: list[str]) -> None:
    """GNU tools permute: an option written after the operands is still an option, so the last
    operand is the destination the tool writes (`ln SRC DEST -sf` replaces DEST)."""
    assert shell_commands(line) == [argv]


def test_words_after_a_double_dash_stay_operands() -> None:
    assert shell_commands("rm -- -rf notes.txt") == [["rm", "--", "-rf", "notes.txt"]]
    assert shell_commands("cp -r src dst") == [["cp", "-r", "src", "dst"]]
